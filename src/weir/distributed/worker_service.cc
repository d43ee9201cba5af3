// The worker service's gRPC side: each method converts nothing itself and
// hands the messages to the Worker. Handlers run on gRPC's threads; RunGraph
// and RecvTensor block theirs until the step or the value is ready.
#include <grpcpp/grpcpp.h>

#include "proto/worker_service.grpc.pb.h"
#include "weir/base/notification.h"
#include "weir/distributed/grpc_services.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/worker.h"

namespace weir {
namespace {

class GrpcWorkerService final : public wire::WorkerService::Service {
 public:
  GrpcWorkerService(Worker* worker, std::function<std::vector<DeviceAttributes>()> devices)
      : worker_(worker), devices_(std::move(devices)) {}

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
    return ToGrpcStatus(worker_->RunGraph(*request, response));
  }
  grpc::Status CleanupGraph(grpc::ServerContext*, const wire::CleanupGraphRequest* request,
                            wire::CleanupGraphResponse*) override {
    return ToGrpcStatus(worker_->CleanupGraph(*request));
  }
  grpc::Status CleanupAll(grpc::ServerContext*, const wire::CleanupAllRequest* request,
                          wire::CleanupAllResponse*) override {
    return ToGrpcStatus(worker_->CleanupAll(*request));
  }
  grpc::Status RecvTensor(grpc::ServerContext* context, const wire::RecvTensorRequest* request,
                          wire::RecvTensorResponse* response) override {
    // The value may come after the caller gave up (its deadline, a
    // cancel, server shutdown): the callback then writes into state of its
    // own, never into the response gRPC has freed.
    struct Pending {
      Notification done;
      Status status;
      wire::RecvTensorResponse response;
    };
    auto pending = std::make_shared<Pending>();
    worker_->RecvTensorAsync(*request, &pending->response, [pending](Status status) {
      pending->status = std::move(status);
      pending->done.Notify();
    });
    while (!pending->done.WaitFor(std::chrono::milliseconds(50))) {
      if (context->IsCancelled()) {
        worker_->ForgetOrphanStep(request->step_id());
        return grpc::Status(grpc::StatusCode::CANCELLED, "RecvTensor cancelled by its caller");
      }
    }
    if (pending->status.ok()) response->Swap(&pending->response);
    return ToGrpcStatus(pending->status);
  }

 private:
  Worker* worker_;
  std::function<std::vector<DeviceAttributes>()> devices_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcWorkerService(
    Worker* worker, std::function<std::vector<DeviceAttributes>()> devices) {
  return std::make_unique<GrpcWorkerService>(worker, std::move(devices));
}

}  // namespace weir
