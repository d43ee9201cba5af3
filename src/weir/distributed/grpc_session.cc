#include "weir/distributed/grpc_session.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "proto/master_service.grpc.pb.h"
#include "weir/distributed/credentials.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"

namespace weir {
namespace {

constexpr std::chrono::milliseconds kControlTimeout = std::chrono::seconds(60);
constexpr std::chrono::milliseconds kUntimedStepLimit = std::chrono::hours(24);
// A timed step's RPC deadline is its timeout plus this slack, so that a
// step that times out reports the master's error (which names the node and
// task) rather than gRPC's; the master's own RPCs to its workers use half
// of it (master.cc), so the errors nest: worker, then master, then client.
// The slack only has to cover the answer's trip back, so it is small: a
// master that hangs (or whose host is cut off) fails a 1 s step within 2 s.
std::chrono::milliseconds DeadlineSlack(std::chrono::milliseconds timeout) {
  return std::max<std::chrono::milliseconds>(std::chrono::seconds(1), timeout / 10);
}
// A master that does not answer a ping within this long, after this long
// without a frame, fails the calls waiting on it (ChannelOptions).
constexpr std::chrono::milliseconds kKeepalive = std::chrono::seconds(5);

// Retries while the master is not listening yet: at first quickly (a
// cluster that starts together is up in well under a second), then at
// most once a second.
constexpr std::chrono::milliseconds kFirstRetryDelay = std::chrono::milliseconds(50);
constexpr std::chrono::milliseconds kMaxRetryDelay = std::chrono::seconds(1);

// A master that answers but refuses the connection (a TLS mismatch, a
// plaintext client of a TLS server) will not change its mind: waiting only
// hides the cause. Nor does a master that answered with an error of its
// own (Unavailable included: a task it needs is down; the channel is
// connected then). Anything else Unavailable (connection refused, a name
// that does not resolve yet) may be a server still starting.
bool MayBeStarting(const grpc::Status& status, grpc::Channel* channel) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return false;
  if (channel->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY) return false;
  const std::string& message = status.error_message();
  for (std::string_view refusal : {"andshake", "Socket closed", "SSL", "ssl", "ertificate"}) {
    if (message.find(refusal) != std::string::npos) return false;
  }
  return true;
}

// Keepalive pings bound an untimed step whose master's host is cut off (a
// dead master refuses at once).
ChannelOptions WithKeepalive(ChannelOptions options) {
  options.keepalive = kKeepalive;
  return options;
}

class GrpcSession final : public Session {
 public:
  GrpcSession(std::string address, ChannelOptions channel)
      : address_(std::move(address)), channel_options_(WithKeepalive(std::move(channel))) {}
  ~GrpcSession() override { Close().ok(); }

  // Creates the session on the master, retrying for `wait` while the master
  // is not listening yet (a fresh channel per try: a channel refused once
  // backs off for a second or more before it tries again).
  Status Connect(std::chrono::milliseconds wait) {
    const auto give_up = std::chrono::steady_clock::now() + wait;
    std::chrono::milliseconds delay = kFirstRetryDelay;
    int tries = 0;
    wire::CreateSessionResponse response;
    for (;;) {
      WEIR_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                            MakeChannel(address_, channel_options_));
      stub_ = wire::MasterService::NewStub(channel);
      wire::CreateSessionRequest request;
      grpc::Status status =
          RawCall(&wire::MasterService::Stub::CreateSession, request, &response, kControlTimeout);
      ++tries;
      if (status.ok()) break;
      const auto now = std::chrono::steady_clock::now();
      const bool may_be_starting = MayBeStarting(status, channel.get());
      if (!may_be_starting || now >= give_up) {
        // A refusal is the master's answer, however late it came.
        Status out = ToStatus(status, "CreateSession");
        if (tries == 1 || !may_be_starting) return out;
        return errors::Unavailable("the master at ", address_, " did not answer in ", wait.count(),
                                   " ms (SessionOptions.remote.connect_timeout_ms; ", tries,
                                   " tries); the last: ", out.message());
      }
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(delay, give_up - now));
      delay = std::min(delay * 2, kMaxRetryDelay);
    }
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
    if (response.client_lease_ms() > 0) {
      // Four renewals per lease: one lost or late call is not the end.
      const std::chrono::milliseconds period(std::max<int64_t>(response.client_lease_ms() / 4, 1));
      keepalive_ = std::thread([this, period] { KeepAlive(period); });
    }
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
             RunMetadata* metadata = nullptr) override {
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
    SetOptions(options, request.mutable_options());
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
    return ReadMetadata(response.metadata(), options, metadata);
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
                     RunMetadata* metadata = nullptr) override {
    wire::RunCallableRequest request;
    request.set_session_handle(handle_);
    request.set_handle(handle);
    for (size_t i = 0; i < feeds.size(); ++i) {
      if (!feeds[i].IsInitialized()) {
        return errors::InvalidArgument("callable feed ", i, " is an empty (uninitialized) tensor");
      }
      WEIR_RETURN_IF_ERROR(TensorToProto(feeds[i], request.add_feed()));
    }
    SetOptions(options, request.mutable_options());
    wire::RunCallableResponse response;
    WEIR_RETURN_IF_ERROR(Call(&wire::MasterService::Stub::RunCallable, "RunCallable", request,
                              &response, StepLimit(options)));
    fetches->assign(response.fetch_size(), Tensor());
    for (int i = 0; i < response.fetch_size(); ++i) {
      WEIR_RETURN_IF_ERROR(
          TensorFromWire(response.fetch(i), StrCat("callable fetch ", i), &(*fetches)[i]));
    }
    return ReadMetadata(response.metadata(), options, metadata);
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
      if (keepalive_call_ != nullptr) keepalive_call_->TryCancel();
    }
    keepalive_wake_.notify_all();
    if (keepalive_.joinable()) keepalive_.join();
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
    if (options.timeout_ms <= 0) return kUntimedStepLimit;
    const std::chrono::milliseconds timeout(options.timeout_ms);
    return timeout + DeadlineSlack(timeout);
  }

  // Renews the session's client lease on the master every `period` while
  // the session is open, so a client that is idle (or in a long step) but
  // alive keeps it; a master that lost the session (it collected it, or
  // restarted) makes it stop: the next call says why.
  void KeepAlive(std::chrono::milliseconds period) {
    wire::KeepAliveRequest request;
    request.set_session_handle(handle_);
    std::unique_lock<std::mutex> lock(mu_);
    while (!keepalive_wake_.wait_for(lock, period, [&] { return closed_; })) {
      grpc::ClientContext context;  // Close cancels it: a hung master does not hold Close
      context.set_deadline(std::chrono::system_clock::now() + period);
      keepalive_call_ = &context;
      lock.unlock();
      wire::KeepAliveResponse response;
      grpc::Status status = stub_->KeepAlive(&context, request, &response);
      lock.lock();
      keepalive_call_ = nullptr;
      // Unreachable or slow: try again next period (the lease has room).
      if (!status.ok() && status.error_code() != grpc::StatusCode::UNAVAILABLE &&
          status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
        return;
      }
    }
  }

  static void SetOptions(const RunOptions& options, wire::RunStepOptions* out) {
    out->set_timeout_in_ms(options.timeout_ms);
    if (options.trace) out->set_trace_level(wire::RunStepOptions::FULL_TRACE);
  }

  // The master's merged step statistics (every task's nodes, full device
  // names) into `metadata`, as the local session fills it.
  Status ReadMetadata(const wire::RunMetadataProto& proto, const RunOptions& options,
                      RunMetadata* metadata) const {
    if (!options.trace || metadata == nullptr) return Status::OK();
    StepStats stats;
    WEIR_RETURN_IF_ERROR(
        StepStatsFromWire(proto.step_stats(), StrCat("the master at ", address_), &stats));
    metadata->step_stats = std::move(stats);
    return Status::OK();
  }

  template <typename Method, typename Request, typename Response>
  grpc::Status RawCall(Method method, const Request& request, Response* response,
                       std::chrono::milliseconds timeout) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    return (stub_.get()->*method)(&context, request, response);
  }

  // The master's errors are the step's own (they name node and task); a
  // transport failure (unreachable, timed out, refused credentials) names
  // the master.
  Status ToStatus(const grpc::Status& status, const char* name) const {
    if (status.ok()) return Status::OK();
    const bool over_limit = status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
                            status.error_message().find("larger than max") != std::string::npos;
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
        status.error_code() == grpc::StatusCode::UNAUTHENTICATED || over_limit) {
      return FromGrpcCallStatus(status, StrCat(name, " to the master at ", address_),
                                channel_options_);
    }
    return Status(FromGrpcStatus(status, name).code(), status.error_message());
  }

  template <typename Method, typename Request, typename Response>
  Status Call(Method method, const char* name, const Request& request, Response* response,
              std::chrono::milliseconds timeout) {
    return ToStatus(RawCall(method, request, response, timeout), name);
  }

  const std::string address_;
  const ChannelOptions channel_options_;
  std::unique_ptr<wire::MasterService::Stub> stub_;
  std::string handle_;
  std::string default_container_;
  std::vector<DeviceInfo> devices_;
  std::mutex mu_;
  bool created_ = false;
  bool closed_ = false;  // guarded by mu_
  std::condition_variable keepalive_wake_;
  std::thread keepalive_;  // with a client lease only
  grpc::ClientContext* keepalive_call_ = nullptr;  // in flight; guarded by mu_
};

}  // namespace

StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options) {
  constexpr std::string_view kScheme = "grpc://";
  if (options.target.compare(0, kScheme.size(), kScheme) != 0 ||
      options.target.size() == kScheme.size() ||
      options.target.find(':', kScheme.size()) == std::string::npos) {
    return errors::InvalidArgument("session target '", options.target, "' is not grpc://host:port");
  }
  const RemoteSessionOptions& remote = options.remote;
  if (remote.connect_timeout_ms < 0) {
    return errors::InvalidArgument("SessionOptions.remote.connect_timeout_ms is negative: ",
                                   remote.connect_timeout_ms);
  }
  ChannelOptions channel;
  channel.tls_ca_file = remote.tls_ca_file;
  channel.tls_server_name = remote.tls_server_name;
  if (!remote.auth_token_file.empty()) {
    WEIR_ASSIGN_OR_RETURN(channel.auth_token, ReadAuthTokenFile(remote.auth_token_file));
  }
  if (remote.max_message_bytes != 0) channel.max_message_bytes = remote.max_message_bytes;
  const std::string where = StrCat("session target '", options.target, "'");
  WEIR_RETURN_IF_ERROR(channel.Validate().WithContext(where));
  auto session =
      std::make_unique<GrpcSession>(options.target.substr(kScheme.size()), std::move(channel));
  WEIR_RETURN_IF_ERROR(session->Connect(std::chrono::milliseconds(remote.connect_timeout_ms)));
  return std::unique_ptr<Session>(std::move(session));
}

void RegisterGrpcSessionFactory() { RegisterSessionFactory("grpc", NewGrpcSession); }

}  // namespace weir
