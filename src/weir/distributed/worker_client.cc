#include "weir/distributed/worker_client.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "proto/worker_service.grpc.pb.h"
#include "weir/distributed/bulk_transfer.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/wire_tensor.h"

namespace weir {

namespace {

// One asynchronous call's context.
struct AsyncCall {
  int64_t id = 0;
  grpc::ClientContext context;
  // RecvTensor's read over the bulk channel, after the call's answer.
  std::shared_ptr<BulkCancel> bulk_cancel = std::make_shared<BulkCancel>();
};

// Threads for bulk reads (blocking, each as long as its read): kept idle
// for a while after a read so that the next one needs no new thread; as
// many as there are reads at once, never fewer. Process-wide, never
// destroyed (a detached thread may still be finishing at exit).
class BulkReadThreads {
 public:
  static BulkReadThreads* Get() {
    static auto* threads = new BulkReadThreads;
    return threads;
  }
  void Run(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (idle_ > static_cast<int>(jobs_.size())) {
        jobs_.push_back(std::move(job));
        wake_.notify_one();
        return;
      }
    }
    std::thread([this, job = std::move(job)]() mutable { Loop(std::move(job)); }).detach();
  }

 private:
  static constexpr auto kIdleTime = std::chrono::seconds(10);
  void Loop(std::function<void()> job) {
    for (;;) {
      job();
      job = nullptr;
      std::unique_lock<std::mutex> lock(mu_);
      ++idle_;
      wake_.wait_for(lock, kIdleTime, [this] { return !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // idle for kIdleTime
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
  }
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  int idle_ = 0;
};

}  // namespace

// The asynchronous calls in flight are owned here, not by their completion
// callbacks: a ClientContext holds the channel, and the channel's last
// reference must never drop on the channel's own callback thread (its
// completion queue would be shut down from inside itself). Finished calls
// are freed by the next call or by the destructor, on the caller's thread.
struct WorkerClient::Impl {
  std::unique_ptr<wire::WorkerService::Stub> stub;
  // RecvTensor reads raw messages (wire_tensor.h), through the generic stub.
  std::unique_ptr<grpc::GenericStub> generic;
  // Connections to the task's bulk listener; null: the stream only.
  std::unique_ptr<BulkConnectionPool> bulk;
  std::mutex mu;
  std::condition_variable idle;  // signalled when in_flight empties
  int64_t next_id = 0;
  std::map<int64_t, std::shared_ptr<AsyncCall>> in_flight;
  std::vector<std::shared_ptr<AsyncCall>> finished;

  std::shared_ptr<AsyncCall> Begin(std::chrono::milliseconds timeout) {
    auto call = std::make_shared<AsyncCall>();
    call->context.set_deadline(std::chrono::system_clock::now() +
                               std::max(timeout, std::chrono::milliseconds(1)));
    std::vector<std::shared_ptr<AsyncCall>> release;
    {
      std::lock_guard<std::mutex> lock(mu);
      call->id = next_id++;
      in_flight[call->id] = call;
      release.swap(finished);
    }
    return call;  // `release` drops the finished calls here, off the callback thread
  }
  void End(int64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = in_flight.find(id);
    finished.push_back(std::move(it->second));
    in_flight.erase(it);
    if (in_flight.empty()) idle.notify_all();
  }
};

WorkerClient::WorkerClient(std::string address, ChannelOptions options)
    : address_(std::move(address)), options_(std::move(options)) {}

WorkerClient::~WorkerClient() {
  if (!impl_) return;
  std::unique_lock<std::mutex> lock(impl_->mu);
  for (auto& [id, call] : impl_->in_flight) {
    call->context.TryCancel();
    call->bulk_cancel->Cancel();
  }
  impl_->idle.wait(lock, [this] { return impl_->in_flight.empty(); });
  impl_->finished.clear();
}

StatusOr<std::unique_ptr<WorkerClient>> WorkerClient::Create(const std::string& address,
                                                             const ChannelOptions& options) {
  if (address.empty() || address.find(':') == std::string::npos) {
    return errors::InvalidArgument("worker address '", address, "' is not host:port");
  }
  StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(address, options);
  if (!channel.ok()) {
    return Status(channel.status().code(),
                  StrCat("client of ", address, ": ", channel.status().message()));
  }
  std::unique_ptr<WorkerClient> client(new WorkerClient(address, options));
  client->impl_ = std::make_unique<Impl>();
  // Calls fail fast on a refused connection rather than waiting for the
  // deadline (the default for calls without wait_for_ready).
  client->impl_->stub = wire::WorkerService::NewStub(*channel);
  client->impl_->generic = std::make_unique<grpc::GenericStub>(*channel);
  if (options.bulk_min_bytes > 0 && !options.tls()) {
    client->impl_->bulk =
        std::make_unique<BulkConnectionPool>(address.substr(0, address.rfind(':')), address);
  }
  return client;
}

StatusOr<std::vector<DeviceAttributes>> WorkerClient::GetStatus(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) {
    return errors::InvalidArgument("GetStatus to ", address_, ": timeout must be positive");
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  wire::GetStatusRequest request;
  wire::GetStatusResponse response;
  grpc::Status status = impl_->stub->GetStatus(&context, request, &response);
  WEIR_RETURN_IF_ERROR(FromGrpcCallStatus(status, StrCat("GetStatus to ", address_), options_));
  std::vector<DeviceAttributes> devices;
  for (const wire::DeviceAttributes& in : response.device_attributes()) {
    DeviceAttributes device;
    device.name = in.name();
    device.device_type = in.device_type();
    device.memory_limit = in.memory_limit();
    device.incarnation = in.incarnation();
    device.physical_device_desc = in.physical_device_desc();
    devices.push_back(std::move(device));
  }
  return devices;
}

namespace {

bool ValidTimeout(std::chrono::milliseconds timeout) { return timeout.count() > 0; }

}  // namespace

// An error answer's details (grpc::Status::error_details) carry what
// gRPC does not send with an error: for RunGraph, lost_session_handle
// (worker_service.cc). Other calls carry none.
template <typename Response>
void ReadErrorDetails(const grpc::Status&, Response*) {}

void ReadErrorDetails(const grpc::Status& status, wire::RunGraphResponse* response) {
  if (status.ok() || status.error_details().empty()) return;
  wire::RunGraphResponse details;
  // A peer's bytes: details that do not parse are ignored (the error stands).
  if (details.ParseFromString(status.error_details())) {
    response->set_lost_session_handle(details.lost_session_handle());
  }
}

#define WEIR_WORKER_CALL(Method)                                                              \
  Status WorkerClient::Method(const wire::Method##Request& request,                           \
                              wire::Method##Response* response,                               \
                              std::chrono::milliseconds timeout) {                            \
    if (!ValidTimeout(timeout)) {                                                             \
      return errors::InvalidArgument(#Method " to ", address_, ": timeout must be positive"); \
    }                                                                                         \
    grpc::ClientContext context;                                                              \
    context.set_deadline(std::chrono::system_clock::now() + timeout);                         \
    grpc::Status status = impl_->stub->Method(&context, request, response);                   \
    ReadErrorDetails(status, response);                                                       \
    return FromGrpcStatus(status, StrCat(#Method " to ", address_));                          \
  }

WEIR_WORKER_CALL(CreateWorkerSession)
WEIR_WORKER_CALL(DeleteWorkerSession)
WEIR_WORKER_CALL(RegisterGraph)
WEIR_WORKER_CALL(DeregisterGraph)
WEIR_WORKER_CALL(RunGraph)
WEIR_WORKER_CALL(CleanupGraph)
WEIR_WORKER_CALL(CleanupAll)
#undef WEIR_WORKER_CALL

#define WEIR_WORKER_ASYNC_CALL(Method)                                                       \
  WorkerClient::Cancel WorkerClient::Method##Async(                                          \
      const wire::Method##Request* request, wire::Method##Response* response,                \
      std::chrono::milliseconds timeout, std::function<void(Status)> done) {                 \
    std::shared_ptr<AsyncCall> call = impl_->Begin(timeout);                                 \
    std::string what = StrCat(#Method " to ", address_);                                     \
    impl_->stub->async()->Method(&call->context, request, response,                          \
                                 [impl = impl_.get(), id = call->id, what = std::move(what), \
                                  response, done = std::move(done)](grpc::Status status) {   \
                                   ReadErrorDetails(status, response);                       \
                                   done(FromGrpcStatus(status, what));                       \
                                   impl->End(id);                                            \
                                 });                                                         \
    std::weak_ptr<AsyncCall> weak = call;                                                    \
    return [weak] {                                                                          \
      if (std::shared_ptr<AsyncCall> live = weak.lock()) live->context.TryCancel();          \
    };                                                                                       \
  }

WEIR_WORKER_ASYNC_CALL(RunGraph)
WEIR_WORKER_ASYNC_CALL(CleanupGraph)
WEIR_WORKER_ASYNC_CALL(DeleteWorkerSession)
#undef WEIR_WORKER_ASYNC_CALL

namespace {

// One RecvTensor call: the request, then the response stream's messages,
// each handed to the decoder as it arrives (so the copy of one overlaps the
// transfer of the next). Deletes itself in OnDone.
class RecvTensorCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  RecvTensorCall(std::string what, Allocator* allocator, WorkerClient::RecvTensorDone done,
                 std::function<void()> end, BulkConnectionPool* bulk,
                 std::shared_ptr<BulkCancel> bulk_cancel,
                 std::chrono::steady_clock::time_point deadline)
      : what_(std::move(what)),
        decoder_(what_, allocator),
        done_(std::move(done)),
        end_(std::move(end)),
        bulk_(bulk),
        bulk_cancel_(std::move(bulk_cancel)),
        deadline_(deadline) {}

  void Start(grpc::GenericStub* stub, grpc::ClientContext* context,
             const wire::RecvTensorRequest& request) {
    bool own_buffer;
    // A message of two small fields: serializing it cannot fail.
    grpc::Status serialized =
        grpc::GenericSerialize<grpc::ProtoBufferWriter, wire::RecvTensorRequest>(request, &request_,
                                                                                 &own_buffer);
    DCHECK(serialized.ok());
    context_ = context;
    stub->PrepareBidiStreamingCall(context, "/weir.wire.WorkerService/RecvTensor",
                                   grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&message_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended: OnDone has the status
    if (decoded_.ok()) decoded_ = decoder_.Add(message_);
    message_.Clear();
    if (!decoded_.ok()) {
      context_->TryCancel();
      return;
    }
    StartRead(&message_);
  }

  void OnDone(const grpc::Status& status) override {
    WorkerClient::RecvTensorResult result;
    result.malformed = !decoded_.ok();
    result.status = decoded_.ok() ? FromGrpcStatus(status, what_) : decoded_;
    if (result.status.ok()) {
      result.status = decoder_.Finish(&result.value, &result.is_dead);
      result.malformed = !result.status.ok();
      if (result.status.ok() && decoder_.bulk() && bulk_ == nullptr) {
        result.status = errors::InvalidArgument(what_, ": a bulk-transfer answer nobody asked for");
        result.malformed = true;
      }
    }
    if (result.status.ok() && decoder_.bulk()) {
      // The bytes come over the bulk channel: a blocking read, on a thread
      // of its own for as long as it lasts (gRPC's threads never block).
      BulkReadThreads::Get()->Run([bulk = bulk_, cancel = std::move(bulk_cancel_),
                                   deadline = deadline_, port = decoder_.bulk_port(),
                                   ticket = decoder_.bulk_ticket(), result = std::move(result),
                                   done = std::move(done_), end = std::move(end_)]() mutable {
        ReadBulk(bulk, std::move(cancel), deadline, port, std::move(ticket), std::move(result),
                 std::move(done), std::move(end));
      });
      delete this;
      return;
    }
    done_(std::move(result));
    std::function<void()> end = std::move(end_);
    std::unique_ptr<RecvTensorCall> release(this);
    release.reset();
    end();
  }

 private:
  // Reads the value's bytes into result.value (allocated by the decoder),
  // then ends the call as OnDone does. The call stays in flight meanwhile,
  // so the client (and `bulk`) outlive it.
  static void ReadBulk(BulkConnectionPool* bulk, std::shared_ptr<BulkCancel> cancel,
                       std::chrono::steady_clock::time_point deadline, int port, std::string ticket,
                       WorkerClient::RecvTensorResult result, WorkerClient::RecvTensorDone done,
                       std::function<void()> end) {
    Status read = bulk->Read(port, ticket, static_cast<int64_t>(result.value.TotalBytes()),
                             static_cast<char*>(result.value.raw_data()), deadline, cancel.get());
    if (read.ok()) {
      RecvTensorDecoder::FinishBulk(&result.value);
    } else {
      result.status = std::move(read);
      result.value = Tensor();
      result.bulk_failed = true;
    }
    done(std::move(result));
    done = nullptr;
    end();
  }

  std::string what_;
  RecvTensorDecoder decoder_;
  WorkerClient::RecvTensorDone done_;
  std::function<void()> end_;
  BulkConnectionPool* bulk_;
  std::shared_ptr<BulkCancel> bulk_cancel_;
  std::chrono::steady_clock::time_point deadline_;
  grpc::ClientContext* context_ = nullptr;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  Status decoded_;
};

}  // namespace

WorkerClient::Cancel WorkerClient::RecvTensorAsync(const wire::RecvTensorRequest& request,
                                                   std::chrono::milliseconds timeout,
                                                   RecvTensorDone done, Allocator* allocator) {
  std::shared_ptr<AsyncCall> call = impl_->Begin(timeout);
  wire::RecvTensorRequest sized = request;
  sized.set_max_message_bytes(options_.max_message_bytes);
  if (impl_->bulk) sized.set_bulk_min_bytes(options_.bulk_min_bytes);
  auto reactor = std::make_unique<RecvTensorCall>(
      StrCat("RecvTensor to ", address_), allocator, std::move(done),
      [impl = impl_.get(), id = call->id] { impl->End(id); }, impl_->bulk.get(), call->bulk_cancel,
      std::chrono::steady_clock::now() + std::max(timeout, std::chrono::milliseconds(1)));
  reactor.release()->Start(impl_->generic.get(), &call->context, sized);
  std::weak_ptr<AsyncCall> weak = call;
  return [weak] {
    if (std::shared_ptr<AsyncCall> live = weak.lock()) {
      live->context.TryCancel();
      live->bulk_cancel->Cancel();
    }
  };
}

struct RunGraphGroup::Impl {
  struct Call {
    int tag = 0;
    const WorkerClient* client = nullptr;
    grpc::ClientContext context;
    grpc::Status status;
    wire::RunGraphResponse* response = nullptr;
    std::unique_ptr<grpc::ClientAsyncResponseReader<wire::RunGraphResponse>> reader;
  };
  grpc::CompletionQueue cq;
  int in_flight = 0;  // only the draining thread touches it (and ready)
  std::vector<Call*> ready;  // ended without an RPC (started after CancelAll)
  std::mutex mu;      // guards calls' contexts against CancelAll, and cancelled
  bool cancelled = false;
  std::vector<std::unique_ptr<Call>> calls;
};

RunGraphGroup::RunGraphGroup() : impl_(std::make_unique<Impl>()) {}

RunGraphGroup::~RunGraphGroup() {
  if (impl_->in_flight > 0) {
    CancelAll();
    int tag;
    Status status;
    while (Next(&tag, &status)) {
    }
  }
  impl_->cq.Shutdown();
  void* got;
  bool ok;
  while (impl_->cq.Next(&got, &ok)) {
  }
}

void RunGraphGroup::Start(WorkerClient* client, const wire::RunGraphRequest* request,
                          wire::RunGraphResponse* response, std::chrono::milliseconds timeout,
                          int tag) {
  auto call = std::make_unique<Impl::Call>();
  call->tag = tag;
  call->client = client;
  call->response = response;
  call->context.set_deadline(std::chrono::system_clock::now() +
                             std::max(timeout, std::chrono::milliseconds(1)));
  Impl::Call* raw = call.get();
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->calls.push_back(std::move(call));
    cancelled = impl_->cancelled;
  }
  ++impl_->in_flight;
  if (cancelled) {  // not sent at all: a cancelled call may still succeed
    raw->status = grpc::Status(grpc::StatusCode::CANCELLED, "cancelled before it was sent");
    impl_->ready.push_back(raw);
    return;
  }
  raw->reader = client->impl_->stub->AsyncRunGraph(&raw->context, *request, &impl_->cq);
  raw->reader->Finish(response, &raw->status, raw);
}

bool RunGraphGroup::Next(int* tag, Status* status) {
  if (impl_->in_flight == 0) return false;
  Impl::Call* call = nullptr;
  if (!impl_->ready.empty()) {
    call = impl_->ready.back();
    impl_->ready.pop_back();
  } else {
    void* got = nullptr;
    bool ok = false;
    if (!impl_->cq.Next(&got, &ok)) return false;  // not reached: only the destructor shuts down
    call = static_cast<Impl::Call*>(got);
  }
  --impl_->in_flight;
  *tag = call->tag;
  ReadErrorDetails(call->status, call->response);
  *status = call->status.ok()
                ? Status::OK()
                : FromGrpcStatus(call->status, StrCat("RunGraph to ", call->client->address()));
  return true;
}

void RunGraphGroup::CancelAll() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->cancelled = true;
  for (const auto& call : impl_->calls) call->context.TryCancel();
}

}  // namespace weir
