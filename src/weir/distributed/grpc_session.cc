#include "weir/distributed/grpc_session.h"

#include <grpcpp/grpcpp.h>

#include <mutex>

#include "proto/master_service.grpc.pb.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"

namespace weir {
namespace {

constexpr std::chrono::milliseconds kControlTimeout = std::chrono::seconds(60);
constexpr std::chrono::milliseconds kUntimedStepLimit = std::chrono::hours(24);
constexpr std::chrono::milliseconds kDeadlineSlack = std::chrono::seconds(10);
// A master that does not answer a ping within this long, after this long
// without a frame, fails the calls waiting on it (ChannelOptions).
constexpr std::chrono::milliseconds kKeepalive = std::chrono::seconds(5);

class GrpcSession final : public Session {
 public:
  explicit GrpcSession(std::string address) : address_(std::move(address)) {}
  ~GrpcSession() override { Close().ok(); }

  Status Connect() {
    // Plaintext with the default (2 GiB) message limit: SessionOptions has
    // no TLS or token fields yet, so a grpc:// session cannot reach a
    // server that requires them. Keepalive pings bound an untimed step
    // whose master's host is cut off (a dead master refuses at once).
    ChannelOptions channel_options;
    channel_options.keepalive = kKeepalive;
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                          MakeChannel(address_, channel_options));
    stub_ = wire::MasterService::NewStub(std::move(channel));
    wire::CreateSessionRequest request;
    wire::CreateSessionResponse response;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::CreateSession, "CreateSession", request,
                              &response, kControlTimeout));
    handle_ = response.session_handle();
    wire::ListDevicesRequest list;
    list.set_session_handle(handle_);
    wire::ListDevicesResponse devices;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::ListDevices, "ListDevices", list,
                              &devices, kControlTimeout));
    for (const wire::DeviceAttributes& device : devices.remote_device()) {
      DeviceInfo info;
      info.name = device.name();
      info.type = device.device_type();
      devices_.push_back(info);
    }
    default_container_ = "localhost";  // shared by the cluster's sessions (worker.cc)
    return Status::OK();
  }

  Status Create(const GraphDef& graph) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (created_) {
        return errors::FailedPrecondition(
            "Session::Create called twice; use Extend to add nodes to the graph");
      }
    }
    WEIR_RETURN_IF_ERROR(Extend(graph));
    return Status::OK();
  }
  Status Extend(const GraphDef& graph) override {
    wire::ExtendSessionRequest request;
    request.set_session_handle(handle_);
    GraphDefToProto(graph, request.mutable_graph_def());
    wire::ExtendSessionResponse response;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::ExtendSession, "ExtendSession", request,
                              &response, kControlTimeout));
    std::lock_guard<std::mutex> lock(mu_);
    created_ = true;
    return Status::OK();
  }

  Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs, const RunOptions& options = {},
             RunMetadata* = nullptr) override {
    wire::RunStepRequest request;
    request.set_session_handle(handle_);
    for (const auto& [name, value] : feeds) {
      if (!value.IsInitialized()) {
        return errors::InvalidArgument("feed '", name, "' is an empty (uninitialized) tensor");
      }
      wire::NamedTensorProto* feed = request.add_feed();
      feed->set_name(name);
      WEIR_RETURN_IF_ERROR(TensorToProto(value, feed->mutable_tensor()));
    }
    for (const std::string& fetch : fetches) request.add_fetch(fetch);
    for (const std::string& target : targets) request.add_target(target);
    request.mutable_options()->set_timeout_in_ms(options.timeout_ms);
    wire::RunStepResponse response;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::RunStep, "RunStep", request, &response,
                              StepLimit(options)));
    if (response.tensor_size() != static_cast<int>(fetches.size())) {
      return errors::Internal("RunStep to ", address_, " returned ", response.tensor_size(),
                              " tensors for ", fetches.size(), " fetches");
    }
    outputs->assign(fetches.size(), Tensor());
    for (int i = 0; i < response.tensor_size(); ++i) {
      WEIR_RETURN_IF_ERROR(TensorFromWire(response.tensor(i).tensor(),
                                          StrCat("fetch '", fetches[i], "'"), &(*outputs)[i]));
    }
    return Status::OK();
  }

  StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) override {
    wire::MakeCallableRequest request;
    request.set_session_handle(handle_);
    for (const std::string& feed : options.feeds) request.mutable_options()->add_feed(feed);
    for (const std::string& fetch : options.fetches) request.mutable_options()->add_fetch(fetch);
    for (const std::string& target : options.targets) {
      request.mutable_options()->add_target(target);
    }
    wire::MakeCallableResponse response;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::MakeCallable, "MakeCallable", request,
                              &response, kControlTimeout));
    return response.handle();
  }
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, const RunOptions& options = {},
                     RunMetadata* = nullptr) override {
    wire::RunCallableRequest request;
    request.set_session_handle(handle_);
    request.set_handle(handle);
    for (size_t i = 0; i < feeds.size(); ++i) {
      if (!feeds[i].IsInitialized()) {
        return errors::InvalidArgument("callable feed ", i, " is an empty (uninitialized) tensor");
      }
      WEIR_RETURN_IF_ERROR(TensorToProto(feeds[i], request.add_feed()));
    }
    request.mutable_options()->set_timeout_in_ms(options.timeout_ms);
    wire::RunCallableResponse response;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::RunCallable, "RunCallable", request,
                              &response, StepLimit(options)));
    fetches->assign(response.fetch_size(), Tensor());
    for (int i = 0; i < response.fetch_size(); ++i) {
      WEIR_RETURN_IF_ERROR(
          TensorFromWire(response.fetch(i), StrCat("callable fetch ", i), &(*fetches)[i]));
    }
    return Status::OK();
  }
  Status ReleaseCallable(CallableHandle handle) override {
    wire::ReleaseCallableRequest request;
    request.set_session_handle(handle_);
    request.set_handle(handle);
    wire::ReleaseCallableResponse response;
    return Call(&wire::MasterService::Stub::ReleaseCallable, "ReleaseCallable", request, &response,
                kControlTimeout);
  }

  Status Close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ || handle_.empty()) return Status::OK();
      closed_ = true;
    }
    wire::CloseSessionRequest request;
    request.set_session_handle(handle_);
    wire::CloseSessionResponse response;
    return Call(&wire::MasterService::Stub::CloseSession, "CloseSession", request, &response,
                kControlTimeout);
  }
  Status Reset(const std::vector<std::string>& containers) override {
    wire::ResetRequest request;
    request.set_session_handle(handle_);
    for (const std::string& container : containers) request.add_container(container);
    wire::ResetResponse response;
    return Call(&wire::MasterService::Stub::Reset, "Reset", request, &response, kControlTimeout);
  }
  const std::string& default_container() const override { return default_container_; }
  std::vector<DeviceInfo> ListDevices() const override { return devices_; }
  int graph_growth_warnings() const override { return 0; }
  int num_cached_signatures() const override { return 0; }

 private:
  static std::chrono::milliseconds StepLimit(const RunOptions& options) {
    return options.timeout_ms > 0 ? std::chrono::milliseconds(options.timeout_ms) + kDeadlineSlack
                                  : kUntimedStepLimit;
  }

  template <typename Method, typename Request, typename Response>
  Status Call(Method method, const char* name, const Request& request, Response* response,
              std::chrono::milliseconds timeout) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    grpc::Status status = (stub_.get()->*method)(&context, request, response);
    // The master's errors are the step's own (they name node and task); a
    // transport failure names the master.
    if (status.ok()) return Status::OK();
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return FromGrpcStatus(status, StrCat(name, " to the master at ", address_));
    }
    return Status(FromGrpcStatus(status, name).code(), status.error_message());
  }

  const std::string address_;
  std::unique_ptr<wire::MasterService::Stub> stub_;
  std::string handle_;
  std::string default_container_;
  std::vector<DeviceInfo> devices_;
  std::mutex mu_;
  bool created_ = false;
  bool closed_ = false;
};

}  // namespace

StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options) {
  constexpr std::string_view kScheme = "grpc://";
  if (options.target.compare(0, kScheme.size(), kScheme) != 0 ||
      options.target.size() == kScheme.size() ||
      options.target.find(':', kScheme.size()) == std::string::npos) {
    return errors::InvalidArgument("session target '", options.target, "' is not grpc://host:port");
  }
  auto session = std::make_unique<GrpcSession>(options.target.substr(kScheme.size()));
  WEIR_RETURN_IF_ERROR(session->Connect());
  return std::unique_ptr<Session>(std::move(session));
}

void RegisterGrpcSessionFactory() { RegisterSessionFactory("grpc", NewGrpcSession); }

}  // namespace weir
