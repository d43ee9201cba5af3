#include "weir/distributed/server.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "proto/server.pb.h"
#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/distributed/bulk_transfer.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_services.h"
#include "weir/distributed/grpc_shutdown.h"
#include "weir/distributed/grpc_util.h"
#include "weir/distributed/master.h"
#include "weir/distributed/worker.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

// More CPU devices than this in one task is a typo, not a configuration.
constexpr int kMaxCpuDevices = 1024;
// How long Stop lets calls in flight finish before cancelling them; idle
// connections do not hold it up (grpc_shutdown.h).
constexpr auto kShutdownGrace = std::chrono::milliseconds(1000);

// Physical memory, the CPU devices' memory limit (0 when unknown).
int64_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return MultiplyWithoutOverflow(pages, page_size).value_or(0);
}

// The port of "host:port" or "[v6]:port" (already validated by ClusterSpec).
int PortOf(const std::string& address) {
  int64_t port = 0;
  ParseInt64(std::string_view(address).substr(address.rfind(':') + 1), &port);
  return static_cast<int>(port);
}

std::string JoinHostPort(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return v6 ? StrCat("[", host, "]:", port) : StrCat(host, ":", port);
}

}  // namespace

struct Server::Impl {
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Master> master;
  // Made by Start when enabled; shared with the worker's step-end observer.
  std::shared_ptr<BulkSender> bulk;
  std::unique_ptr<grpc::Service> worker_service;
  std::unique_ptr<grpc::Service> master_service;
  std::shared_ptr<grpc::ServerCredentials> credentials;
  InflightCalls inflight;  // outlives grpc_server (declared before it)
  std::unique_ptr<grpc::Server> grpc_server;
  std::mutex mu;
  std::condition_variable stopped_cv;
  bool started = false;
  bool stopping = false;  // Stop was called
  bool stopped = false;   // and the gRPC server has shut down
  std::string bound_address;
};

Server::Server(ClusterConfig config, ServerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {}

StatusOr<std::unique_ptr<Server>> Server::Create(const ClusterConfig& config,
                                                 const ServerOptions& options) {
  WEIR_RETURN_IF_ERROR(config.Validate());
  if (options.num_cpu_devices < 1 || options.num_cpu_devices > kMaxCpuDevices) {
    return errors::InvalidArgument("the number of CPU devices is ", options.num_cpu_devices,
                                   "; it must be in 1..", kMaxCpuDevices);
  }
  if (options.intra_op_threads < 0) {
    return errors::InvalidArgument("intra-op threads ", options.intra_op_threads, " is negative");
  }
  if (options.host.empty()) return errors::InvalidArgument("the host to listen on is empty");
  if (options.bulk_transfer_min_bytes < 1) {
    return errors::InvalidArgument("the bulk-transfer threshold is ",
                                   options.bulk_transfer_min_bytes,
                                   " bytes; it must be at least 1");
  }
  MasterOptions master_options;
  master_options.session_lease = std::chrono::milliseconds(options.session_lease_ms);
  master_options.client_session_lease = std::chrono::milliseconds(options.client_session_lease_ms);
  WEIR_RETURN_IF_ERROR(master_options.Validate());
  // Reads the TLS files now, so a bad one fails here with its name.
  StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.security);
  if (!credentials.ok()) {
    return Status(credentials.status().code(),
                  StrCat("server of ", ClusterSpec::TaskName(config.job, config.task), ": ",
                         credentials.status().message()));
  }
  std::unique_ptr<Server> server(new Server(config, options));
  server->devices_ = DeviceMgr::NewCpuDevices(options.num_cpu_devices, options.intra_op_threads,
                                              config.job, config.task);
  // Workers import partitions; masters compile graphs.
  RegisterStandardOpsAndKernels();
  server->impl_ = std::make_unique<Impl>();
  Impl& impl = *server->impl_;
  impl.credentials = std::move(*credentials);
  ChannelOptions peer_options = PeerChannelOptions(options.security);
  if (server->bulk_enabled()) peer_options.bulk_min_bytes = options.bulk_transfer_min_bytes;
  impl.worker = std::make_unique<Worker>(config, server->devices_.get(), options.inter_op_threads,
                                         peer_options);
  impl.master = std::make_unique<Master>(impl.worker.get(), master_options);
  impl.master_service = NewGrpcMasterService(impl.master.get());
  return server;
}

StatusOr<std::unique_ptr<Server>> Server::Create(const wire::ServerDef& server_def,
                                                 const ServerOptions& options) {
  WEIR_ASSIGN_OR_RETURN(ClusterConfig config, ClusterConfigFromServerDef(server_def));
  if (server_def.port() < 0 || server_def.port() > 65535) {
    return errors::InvalidArgument("ServerDef port ", server_def.port(), " is not in 0..65535");
  }
  if (server_def.port() != 0) {
    // The task's own address takes the ServerDef's port.
    WEIR_ASSIGN_OR_RETURN(const ClusterSpec::Tasks* tasks, config.cluster.job_tasks(config.job));
    std::map<std::string, ClusterSpec::Tasks> jobs = config.cluster.jobs();
    std::string address = tasks->at(config.task);
    address = StrCat(address.substr(0, address.rfind(':')), ":", server_def.port());
    jobs[config.job][config.task] = address;
    WEIR_ASSIGN_OR_RETURN(config.cluster, ClusterSpec::FromJobs(std::move(jobs)));
  }
  return Create(config, options);
}

Server::~Server() {
  Stop();
  if (impl_ && impl_->grpc_server) impl_->grpc_server->Wait();
  // The master's sessions go before the worker (closing one tells the other
  // tasks' workers to drop it).
  if (impl_) impl_->master.reset();
}

Worker* Server::worker() const { return impl_->worker.get(); }
BulkSender* Server::bulk_sender() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->bulk.get();
}
Master* Server::master() const { return impl_->master.get(); }

Status Server::Start() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string task = ClusterSpec::TaskName(config_.job, config_.task);
  if (impl_->started || impl_->stopping) {
    return errors::FailedPrecondition("server of ", task, " was already started or stopped");
  }
  WEIR_ASSIGN_OR_RETURN(std::string address,
                        config_.cluster.task_address(config_.job, config_.task));
  std::string listen = JoinHostPort(options_.host, PortOf(address));
  if (bulk_enabled()) {
    StatusOr<std::unique_ptr<BulkSender>> bulk = BulkSender::Create(options_.host, task);
    if (!bulk.ok()) return bulk.status();
    impl_->bulk = std::move(*bulk);
    // A step aborted or cleaned up here releases the values it offered.
    impl_->worker->SetStepEndObserver(
        [bulk = impl_->bulk](int64_t step_id) { bulk->DropStep(step_id); });
  }
  impl_->worker_service = NewGrpcWorkerService(
      impl_->worker.get(), [this] { return device_attributes(); },
      options_.security.max_message_bytes, impl_->bulk.get(), options_.bulk_transfer_min_bytes);
  int selected_port = 0;
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which would let a second server bind
  // a port in use and share its calls; a busy port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(listen, impl_->credentials, &selected_port);
  ApplyServerLimits(options_.security, &builder);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(impl_->inflight.MakeFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(impl_->worker_service.get());
  builder.RegisterService(impl_->master_service.get());
  impl_->grpc_server = builder.BuildAndStart();
  if (impl_->grpc_server == nullptr || selected_port == 0) {
    impl_->grpc_server.reset();
    impl_->worker->SetStepEndObserver(nullptr);
    impl_->bulk.reset();
    return errors::Unavailable(
        "server of ", task, " cannot listen on ", listen,
        " (the port is in use, or the host is not an address of this "
        "machine",
        options_.security.tls() ? ", or gRPC rejected the TLS key/certificate" : "", ")");
  }
  impl_->bound_address = JoinHostPort(options_.host, selected_port);
  if (PortOf(address) == 0) {
    // The spec's port 0 meant "any free one": this task's own calls to
    // itself (its master's) go to the port it got. Other tasks cannot know
    // it; their specs need the real port (Worker::ClientForTask says so).
    const std::string resolved = StrCat(address.substr(0, address.rfind(':')), ":", selected_port);
    std::map<std::string, ClusterSpec::Tasks> jobs = config_.cluster.jobs();
    jobs[config_.job][config_.task] = resolved;
    StatusOr<ClusterSpec> cluster = ClusterSpec::FromJobs(std::move(jobs));
    if (cluster.ok()) config_.cluster = std::move(*cluster);  // it was valid with port 0
    impl_->worker->SetOwnAddress(resolved);
  }
  impl_->started = true;
  return Status::OK();
}

void Server::Stop() {
  if (!impl_) return;
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (impl_->stopping) return;
  impl_->stopping = true;
  // Steps blocked in a queue op or a Recv would keep their RunGraph (and
  // so gRPC's Shutdown) waiting.
  impl_->worker->AbortAllSteps(
      errors::Unavailable("task ", ClusterSpec::TaskName(config_.job, config_.task),
                          " is shutting down"));
  if (impl_->grpc_server) {
    lock.unlock();  // Shutdown waits for calls in flight, which take no lock
    ShutdownPromptly(impl_->grpc_server.get(), &impl_->inflight, kShutdownGrace);
    lock.lock();
  }
  // After the calls: no new ticket; writes in flight end now.
  if (impl_->bulk) impl_->bulk->Stop();
  impl_->stopped = true;
  impl_->stopped_cv.notify_all();
}

void Server::Join() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (!impl_->started) return;
  impl_->stopped_cv.wait(lock, [&] { return impl_->stopped; });
}

std::string Server::bound_address() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->bound_address;
}

std::vector<DeviceAttributes> Server::device_attributes() const {
  std::vector<DeviceAttributes> out;
  int64_t memory = PhysicalMemoryBytes();
  for (const auto& device : devices_->devices()) {
    DeviceAttributes attributes;
    attributes.name = device->name();
    attributes.device_type = device->device_type();
    attributes.memory_limit = memory;
    attributes.incarnation = devices_->Incarnation(device->name());
    attributes.physical_device_desc = "device: host CPU";
    out.push_back(std::move(attributes));
  }
  return out;
}

}  // namespace weir
