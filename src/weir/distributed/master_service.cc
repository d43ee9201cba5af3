// The master service's gRPC side: converts the wire messages and hands them
// to the Master's sessions. Handlers run on gRPC's threads; RunStep blocks
// its thread for the step.
#include <grpcpp/grpcpp.h>

#include "proto/master_service.grpc.pb.h"
#include "weir/distributed/grpc_services.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/master.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"

namespace weir {
namespace {

// Looks up the request's session into `var`, or returns its NotFound.
#define WEIR_GRPC_SESSION(var, handle)                                 \
  StatusOr<std::shared_ptr<Session>> var##_or = master_->Find(handle); \
  if (!var##_or.ok()) return ToGrpcStatus(var##_or.status());          \
  std::shared_ptr<Session> var = std::move(*var##_or)

RunOptions FromWire(const wire::RunStepOptions& options) {
  RunOptions out;
  out.timeout_ms = options.timeout_in_ms();
  out.trace = options.trace_level() != wire::RunStepOptions::NO_TRACE;
  return out;
}

class GrpcMasterService final : public wire::MasterService::Service {
 public:
  explicit GrpcMasterService(Master* master) : master_(master) {}

  grpc::Status CreateSession(grpc::ServerContext*, const wire::CreateSessionRequest* request,
                             wire::CreateSessionResponse* response) override {
    GraphDef graph;
    Status status = GraphDefFromProto(request->graph_def(), &graph);
    if (!status.ok()) return ToGrpcStatus(status);
    StatusOr<std::string> handle = master_->CreateSession(SessionOptions());
    if (!handle.ok()) return ToGrpcStatus(handle.status());
    if (!graph.nodes.empty()) {
      StatusOr<std::shared_ptr<Session>> session = master_->Find(*handle);
      status = session.ok() ? (*session)->Create(graph) : session.status();
      if (!status.ok()) {
        master_->CloseSession(*handle).ok();
        return ToGrpcStatus(status);
      }
    }
    response->set_session_handle(*handle);
    response->set_client_lease_ms(master_->options().client_session_lease.count());
    return grpc::Status::OK;
  }

  grpc::Status ExtendSession(grpc::ServerContext*, const wire::ExtendSessionRequest* request,
                             wire::ExtendSessionResponse*) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    GraphDef graph;
    Status status = GraphDefFromProto(request->graph_def(), &graph);
    if (status.ok()) status = session->Extend(graph);
    return ToGrpcStatus(status);
  }

  grpc::Status RunStep(grpc::ServerContext*, const wire::RunStepRequest* request,
                       wire::RunStepResponse* response) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const wire::NamedTensorProto& feed : request->feed()) {
      Tensor value;
      Status status = TensorFromWire(feed.tensor(), StrCat("feed '", feed.name(), "'"), &value);
      if (!status.ok()) return ToGrpcStatus(status);
      feeds.push_back({feed.name(), std::move(value)});
    }
    std::vector<std::string> fetches(request->fetch().begin(), request->fetch().end());
    std::vector<std::string> targets(request->target().begin(), request->target().end());
    std::vector<Tensor> outputs;
    RunMetadata metadata;
    Status status =
        session->Run(feeds, fetches, targets, &outputs, FromWire(request->options()), &metadata);
    if (!status.ok()) return ToGrpcStatus(status);
    if (!metadata.step_stats.nodes.empty()) {  // untraced steps send no metadata
      StepStatsToProto(metadata.step_stats, response->mutable_metadata()->mutable_step_stats());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      wire::NamedTensorProto* out = response->add_tensor();
      out->set_name(fetches[i]);
      status = TensorToProto(outputs[i], out->mutable_tensor());
      if (!status.ok()) return ToGrpcStatus(status);
    }
    return grpc::Status::OK;
  }

  grpc::Status CloseSession(grpc::ServerContext*, const wire::CloseSessionRequest* request,
                            wire::CloseSessionResponse*) override {
    return ToGrpcStatus(master_->CloseSession(request->session_handle()));
  }

  grpc::Status ListDevices(grpc::ServerContext*, const wire::ListDevicesRequest* request,
                           wire::ListDevicesResponse* response) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    for (const DeviceInfo& device : session->ListDevices()) {
      wire::DeviceAttributes* out = response->add_remote_device();
      out->set_name(device.name);
      out->set_device_type(device.type);
    }
    return grpc::Status::OK;
  }

  grpc::Status Reset(grpc::ServerContext*, const wire::ResetRequest* request,
                     wire::ResetResponse*) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    std::vector<std::string> containers(request->container().begin(), request->container().end());
    return ToGrpcStatus(session->Reset(containers));
  }

  grpc::Status MakeCallable(grpc::ServerContext*, const wire::MakeCallableRequest* request,
                            wire::MakeCallableResponse* response) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    CallableOptions options;
    options.feeds.assign(request->options().feed().begin(), request->options().feed().end());
    options.fetches.assign(request->options().fetch().begin(), request->options().fetch().end());
    options.targets.assign(request->options().target().begin(), request->options().target().end());
    StatusOr<CallableHandle> handle = session->MakeCallable(options);
    if (!handle.ok()) return ToGrpcStatus(handle.status());
    response->set_handle(*handle);
    return grpc::Status::OK;
  }

  grpc::Status RunCallable(grpc::ServerContext*, const wire::RunCallableRequest* request,
                           wire::RunCallableResponse* response) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    std::vector<Tensor> feeds(request->feed_size());
    for (int i = 0; i < request->feed_size(); ++i) {
      Status status = TensorFromWire(request->feed(i), StrCat("callable feed ", i), &feeds[i]);
      if (!status.ok()) return ToGrpcStatus(status);
    }
    std::vector<Tensor> fetches;
    RunMetadata metadata;
    Status status = session->RunCallable(request->handle(), feeds, &fetches,
                                         FromWire(request->options()), &metadata);
    if (!status.ok()) return ToGrpcStatus(status);
    if (!metadata.step_stats.nodes.empty()) {  // untraced steps send no metadata
      StepStatsToProto(metadata.step_stats, response->mutable_metadata()->mutable_step_stats());
    }
    for (const Tensor& fetch : fetches) {
      status = TensorToProto(fetch, response->add_fetch());
      if (!status.ok()) return ToGrpcStatus(status);
    }
    return grpc::Status::OK;
  }

  // Finding the session renews its client lease; nothing else to do.
  grpc::Status KeepAlive(grpc::ServerContext*, const wire::KeepAliveRequest* request,
                         wire::KeepAliveResponse*) override {
    return ToGrpcStatus(master_->Find(request->session_handle()).status());
  }

  grpc::Status ReleaseCallable(grpc::ServerContext*, const wire::ReleaseCallableRequest* request,
                               wire::ReleaseCallableResponse*) override {
    WEIR_GRPC_SESSION(session, request->session_handle());
    return ToGrpcStatus(session->ReleaseCallable(request->handle()));
  }

 private:
  Master* master_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master) {
  return std::make_unique<GrpcMasterService>(master);
}

}  // namespace weir
