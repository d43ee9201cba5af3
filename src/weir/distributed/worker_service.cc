// The worker service's gRPC side: each method converts nothing itself and
// hands the messages to the Worker. Handlers run on gRPC's threads; RunGraph
// blocks its thread until the step is done. RecvTensor holds no thread
// while it waits for the value: it is a callback method whose reactor the
// rendezvous completes, and it writes the value's bytes without copying
// them (wire_tensor.h), in as many messages as the limits ask.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "proto/worker_service.grpc.pb.h"
#include "weir/distributed/bulk_transfer.h"
#include "weir/distributed/grpc_services.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/distributed/worker.h"
#include "weir/framework/rendezvous.h"

namespace weir {
namespace {

// RecvTensor's messages are at most this large even under a larger limit:
// the receiver copies one message while the next is on the wire.
constexpr int64_t kMaxRecvTensorMessageBytes = int64_t{4} << 20;

// One RecvTensor call: waits for the value (no thread held), then writes
// its messages one after another. It owns itself until gRPC's OnDone; the
// rendezvous' callback holds it too, since the value may come after the
// caller gave up (its deadline, a cancel, server shutdown).
class RecvTensorReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  RecvTensorReactor(Worker* worker, int64_t max_message_bytes)
      : worker_(worker), max_message_bytes_(max_message_bytes) {}

  // `bulk` (may be null): the bulk channel for values of at least
  // `bulk_min_bytes`, when the caller accepts it.
  static RecvTensorReactor* Start(Worker* worker, int64_t server_limit,
                                  const grpc::ByteBuffer& request_bytes, BulkSender* bulk,
                                  int64_t bulk_min_bytes,
                                  std::chrono::system_clock::time_point deadline) {
    auto reactor = std::make_shared<RecvTensorReactor>(worker, server_limit);
    reactor->self_ = reactor;
    // The call's deadline for the bulk write, on the steady clock (at most
    // a day: callers without a deadline send none).
    const auto left = std::clamp<std::chrono::system_clock::duration>(
        deadline - std::chrono::system_clock::now(), std::chrono::system_clock::duration::zero(),
        std::chrono::hours(24));
    reactor->deadline_ = std::chrono::steady_clock::now() + left;
    wire::RecvTensorRequest request;
    grpc::ByteBuffer bytes(request_bytes);  // shares the slices; parsing consumes it
    grpc::Status parsed =
        grpc::GenericDeserialize<grpc::ProtoBufferReader, wire::RecvTensorRequest>(&bytes,
                                                                                   &request);
    if (!parsed.ok()) {
      reactor->FinishOnce(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                       "RecvTensor: the request is not a RecvTensorRequest"));
      return reactor.get();
    }
    reactor->step_id_ = request.step_id();
    reactor->parsed_ = true;
    if (bulk != nullptr && request.bulk_min_bytes() > 0) {
      reactor->bulk_ = bulk;
      reactor->bulk_min_bytes_ = std::max(bulk_min_bytes, request.bulk_min_bytes());
    }
    if (request.max_message_bytes() > 0) {
      reactor->max_message_bytes_ =
          std::min(reactor->max_message_bytes_, request.max_message_bytes());
    }
    StatusOr<Rendezvous::ParsedKey> key = Rendezvous::ParseKey(request.rendezvous_key());
    if (key.ok()) reactor->edge_ = key->edge_name;
    worker->RecvTensorAsync(request,
                            [reactor](const Status& status, const Tensor& value, bool is_dead) {
                              reactor->OnValue(status, value, is_dead);
                            });
    return reactor.get();
  }

  // Each reaction decides under mu_ and calls gRPC outside it (a reaction
  // may run inline from a gRPC call): one write in flight at a time, and
  // Finish exactly once.
  void OnCancel() override {
    if (parsed_) worker_->ForgetOrphanStep(step_id_);
    bool finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      // A write in flight ends and finishes the call from OnWriteDone.
      finish = !writing_ && !finished_;
      finished_ = finished_ || finish;
    }
    if (finish) Finish(Cancelled());
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock<std::mutex> lock(mu_);
    writing_ = false;
    messages_[next_ - 1].Clear();  // gRPC keeps what it still needs
    if (ok && !cancelled_ && next_ < messages_.size()) {
      WriteNext(lock);
      return;
    }
    finished_ = true;
    lock.unlock();
    Finish(ok && !cancelled_ ? grpc::Status::OK : Cancelled());
  }

  void OnDone() override { self_.reset(); }  // may delete this

 private:
  static grpc::Status Cancelled() {
    return grpc::Status(grpc::StatusCode::CANCELLED, "RecvTensor cancelled by its caller");
  }

  void OnValue(const Status& status, const Tensor& value, bool is_dead) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_) return;  // the caller went away first
    }
    Status result = status;
    StatusOr<std::vector<grpc::ByteBuffer>> messages = std::vector<grpc::ByteBuffer>();
    if (result.ok() && bulk_ != nullptr && !is_dead && !IsNonPodDType(value.dtype()) &&
        static_cast<int64_t>(value.TotalBytes()) >= bulk_min_bytes_) {
      // The value goes over the bulk channel; the stream carries the ticket.
      // Should the sender be stopping, the stream carries the value.
      StatusOr<std::string> ticket = bulk_->Offer(value, step_id_, deadline_);
      if (ticket.ok()) {
        messages->push_back(EncodeBulkRecvTensorResponse(value, *ticket, bulk_->port()));
      }
    }
    if (result.ok() && messages->empty()) {
      messages = EncodeRecvTensorResponse(value, is_dead, max_message_bytes_);
      if (!messages.ok()) {
        result = messages.status().WithContext(
            StrCat("RecvTensor of '", edge_, "' on task ", worker_->task_name()));
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (finished_) return;  // and here, while encoding
    if (result.ok()) {
      messages_ = std::move(*messages);
      WriteNext(lock);
      return;
    }
    finished_ = true;
    lock.unlock();
    Finish(ToGrpcStatus(result));
  }

  // Starts the next write; unlocks `lock`.
  void WriteNext(std::unique_lock<std::mutex>& lock) {
    writing_ = true;
    grpc::ByteBuffer* message = &messages_[next_++];
    lock.unlock();
    StartWrite(message);
  }

  void FinishOnce(const grpc::Status& status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_) return;
      finished_ = true;
    }
    Finish(status);
  }

  Worker* const worker_;
  int64_t max_message_bytes_;
  int64_t step_id_ = 0;
  bool parsed_ = false;  // the request was a RecvTensorRequest
  std::string edge_;
  BulkSender* bulk_ = nullptr;  // null: the stream only
  int64_t bulk_min_bytes_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  std::shared_ptr<RecvTensorReactor> self_;  // until OnDone

  std::mutex mu_;
  std::vector<grpc::ByteBuffer> messages_;
  size_t next_ = 0;
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
};

using ServiceBase =
    wire::WorkerService::WithRawCallbackMethod_RecvTensor<wire::WorkerService::Service>;

class GrpcWorkerService final : public ServiceBase {
 public:
  GrpcWorkerService(Worker* worker, std::function<std::vector<DeviceAttributes>()> devices,
                    int64_t max_message_bytes, BulkSender* bulk, int64_t bulk_min_bytes)
      : worker_(worker),
        devices_(std::move(devices)),
        max_message_bytes_(std::min(max_message_bytes, kMaxRecvTensorMessageBytes)),
        bulk_(bulk),
        bulk_min_bytes_(std::max<int64_t>(bulk_min_bytes, 1)) {}

  grpc::Status GetStatus(grpc::ServerContext*, const wire::GetStatusRequest* request,
                         wire::GetStatusResponse* response) override {
    // The master's health check carries the renewals of its sessions' leases.
    Status renewed = worker_->RenewLeases(*request, response);
    if (!renewed.ok()) return ToGrpcStatus(renewed);
    for (const DeviceAttributes& device : devices_()) {
      wire::DeviceAttributes* out = response->add_device_attributes();
      out->set_name(device.name);
      out->set_device_type(device.device_type);
      out->set_memory_limit(device.memory_limit);
      out->set_incarnation(device.incarnation);
      out->set_physical_device_desc(device.physical_device_desc);
    }
    return grpc::Status::OK;
  }
  grpc::Status CreateWorkerSession(grpc::ServerContext*,
                                   const wire::CreateWorkerSessionRequest* request,
                                   wire::CreateWorkerSessionResponse*) override {
    return ToGrpcStatus(worker_->CreateWorkerSession(*request));
  }
  grpc::Status DeleteWorkerSession(grpc::ServerContext*,
                                   const wire::DeleteWorkerSessionRequest* request,
                                   wire::DeleteWorkerSessionResponse*) override {
    return ToGrpcStatus(worker_->DeleteWorkerSession(*request));
  }
  grpc::Status RegisterGraph(grpc::ServerContext*, const wire::RegisterGraphRequest* request,
                             wire::RegisterGraphResponse* response) override {
    return ToGrpcStatus(worker_->RegisterGraph(*request, response));
  }
  grpc::Status DeregisterGraph(grpc::ServerContext*, const wire::DeregisterGraphRequest* request,
                               wire::DeregisterGraphResponse*) override {
    return ToGrpcStatus(worker_->DeregisterGraph(*request));
  }
  grpc::Status RunGraph(grpc::ServerContext*, const wire::RunGraphRequest* request,
                        wire::RunGraphResponse* response) override {
    Status status = worker_->RunGraph(*request, response);
    if (status.ok() || response->lost_session_handle().empty()) return ToGrpcStatus(status);
    // gRPC sends no response with an error: the lost session goes in the
    // error's details, for the master (worker_client.cc reads them back).
    wire::RunGraphResponse details;
    details.set_lost_session_handle(response->lost_session_handle());
    return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message(),
                        details.SerializeAsString());
  }
  grpc::Status CleanupGraph(grpc::ServerContext*, const wire::CleanupGraphRequest* request,
                            wire::CleanupGraphResponse*) override {
    return ToGrpcStatus(worker_->CleanupGraph(*request));
  }
  grpc::Status CleanupAll(grpc::ServerContext*, const wire::CleanupAllRequest* request,
                          wire::CleanupAllResponse*) override {
    return ToGrpcStatus(worker_->CleanupAll(*request));
  }
  grpc::ServerWriteReactor<grpc::ByteBuffer>* RecvTensor(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* request) override {
    return RecvTensorReactor::Start(worker_, max_message_bytes_, *request, bulk_, bulk_min_bytes_,
                                    context->deadline());
  }

 private:
  Worker* worker_;
  std::function<std::vector<DeviceAttributes>()> devices_;
  const int64_t max_message_bytes_;
  BulkSender* const bulk_;
  const int64_t bulk_min_bytes_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcWorkerService(
    Worker* worker, std::function<std::vector<DeviceAttributes>()> devices,
    int64_t max_message_bytes, BulkSender* bulk, int64_t bulk_min_bytes) {
  return std::make_unique<GrpcWorkerService>(worker, std::move(devices), max_message_bytes, bulk,
                                             bulk_min_bytes);
}

}  // namespace weir
