#include "weir/distributed/master.h"

#include <algorithm>
#include <condition_variable>
#include <new>
#include <random>
#include <set>
#include <shared_mutex>

#include "proto/worker_service.pb.h"
#include "weir/base/logging.h"
#include "weir/base/notification.h"
#include "weir/distributed/health_monitor.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/distributed/worker.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/device_name.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/graph_compiler.h"
#include "weir/runtime/run_signature.h"

namespace weir {
namespace {

// Control calls (registration, session setup); steps take the step's own.
constexpr std::chrono::milliseconds kControlTimeout = std::chrono::seconds(60);
// The deadline of a step without RunOptions.timeout_ms.
constexpr std::chrono::milliseconds kUntimedStepLimit = std::chrono::hours(24);
// Collected session handles remembered for their error (Master::Find).
constexpr size_t kMaxRememberedExpiries = 4096;
// Slack between a step's own time limit and its RPCs' deadline, so a timed
// out step reports the worker's DeadlineExceeded rather than gRPC's: half
// the client's (grpc_session.cc), so the master's error reaches the client
// before the client's own deadline.
std::chrono::milliseconds DeadlineSlack(std::chrono::milliseconds timeout) {
  return std::max<std::chrono::milliseconds>(std::chrono::milliseconds(500), timeout / 20);
}

uint64_t RandomUint64() {
  static std::mutex mu;
  static std::mt19937_64 generator([] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }());
  std::lock_guard<std::mutex> lock(mu);
  return generator();
}

std::string TaskOfDevice(const std::string& device) {
  return device.substr(0, device.find("/device:"));
}


bool IsEcho(const Status& s) { return errors::IsCancelled(s) || errors::IsAborted(s); }

class MasterSession final : public Session {
 public:
  MasterSession(Worker* worker, const SessionOptions& options, const MasterOptions& master_options,
                std::shared_ptr<SharedHealthMonitor> monitor)
      : worker_(worker),
        options_(options),
        master_options_(master_options),
        monitor_(std::move(monitor)) {
    options_.compile.cost_model_placement = false;
    handle_ = StrCat("master_", std::hex, RandomUint64());
    default_container_ = "localhost";  // shared by the cluster's sessions (worker.cc)
    next_step_id_ = static_cast<int64_t>(RandomUint64() >> 2);
  }
  ~MasterSession() override { Close().ok(); }

  Status Connect(std::chrono::milliseconds timeout);

  Status Create(const GraphDef& graph) override {
    {
      std::shared_lock<std::shared_mutex> lock(graph_mu_);
      if (graph_created_) {
        return errors::FailedPrecondition(
            "Session::Create called twice; use Extend to add nodes to the graph");
      }
    }
    return Extend(graph);
  }
  Status Extend(const GraphDef& graph) override {
    std::unique_lock<std::shared_mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    WEIR_RETURN_IF_ERROR(ImportGraphDef(graph, &graph_));
    graph_created_ = true;
    return Status::OK();
  }
  Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs, const RunOptions& options = {},
             RunMetadata* metadata = nullptr) override;
  StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) override {
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step,
                          GetOrCompile({options.feeds, options.fetches, options.targets}));
    std::unique_lock<std::shared_mutex> lock(graph_mu_);
    CallableHandle handle = next_callable_++;
    callables_[handle] = step;
    return handle;
  }
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, const RunOptions& options = {},
                     RunMetadata* metadata = nullptr) override {
    std::shared_ptr<const CompiledStep> step;
    {
      std::shared_lock<std::shared_mutex> lock(graph_mu_);
      auto it = callables_.find(handle);
      if (it == callables_.end())
        return errors::InvalidArgument("no callable with handle ", handle);
      step = it->second;
    }
    return RunCompiled(*step, feeds, fetches, options, metadata);
  }
  Status ReleaseCallable(CallableHandle handle) override {
    std::unique_lock<std::shared_mutex> lock(graph_mu_);
    if (callables_.erase(handle) == 0) {
      return errors::InvalidArgument("no callable with handle ", handle);
    }
    return Status::OK();
  }
  Status Close() override;
  Status Reset(const std::vector<std::string>& containers) override;
  const std::string& default_container() const override { return default_container_; }
  std::vector<DeviceInfo> ListDevices() const override { return devices_; }
  int graph_growth_warnings() const override { return 0; }
  int num_cached_signatures() const override {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    return static_cast<int>(signatures_.size());
  }

 private:
  struct Task {
    std::string name;  // "/job:ps/replica:0/task:0"
    std::string job;
    int index = 0;
    WorkerClient* client = nullptr;
  };
  // One task's part of a compiled step.
  struct TaskPart {
    int task = 0;  // index into tasks_
    std::string graph_handle;
    std::vector<int> feeds;    // feed indexes its _Args read
    std::vector<int> fetches;  // fetch indexes its _Retvals write
    // A _Send to another task: its step state waits for CleanupGraph
    // (otherwise the worker drops it when RunGraph ends).
    bool sends_to_other_tasks = false;
  };
  struct CompiledStep {
    std::vector<FeedSpec> feeds;
    std::vector<std::string> fetches;
    std::vector<TaskPart> parts;
  };

  StatusOr<std::shared_ptr<const CompiledStep>> GetOrCompile(const StepSignature& signature);
  StatusOr<std::shared_ptr<const CompiledStep>> Compile(const StepSignature& signature);
  // With options.trace, every task's step statistics go to `metadata`.
  Status RunCompiled(const CompiledStep& step, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, const RunOptions& options,
                     RunMetadata* metadata);
  // CleanupGraph(step_id) on these tasks, without waiting.
  void CleanupAsync(int64_t step_id, const std::vector<int>& tasks);
  // Watches the other tasks of the session (StartMonitor); the first
  // failure (OnTaskFailure) aborts the running steps and every later one.
  Status StartMonitor();
  void OnTaskFailure(const Status& failure, const FailedTask& task);
  // The status of a step started after a task failed.
  Status FailedSession() const;
  // Whether a task's failed RunGraph answer says that it holds no worker
  // session with this session's handle: structurally, by the response's
  // lost_session_handle (worker.cc sets it; over gRPC it rides in the
  // error's details), never by the error's text.
  bool LostSession(const Status& s, const wire::RunGraphResponse& response) const {
    return !s.ok() && !response.lost_session_handle().empty() &&
           response.lost_session_handle() == handle_;
  }

  Worker* const worker_;
  SessionOptions options_;
  const MasterOptions master_options_;
  std::string handle_;
  std::string default_container_;
  std::vector<Task> tasks_;
  std::map<std::string, int> task_index_;
  std::vector<DeviceInfo> devices_;
  std::map<std::string, uint64_t> incarnations_;
  // Tasks that did not answer when the session was created ("task X: why");
  // the session runs without their devices.
  std::vector<std::string> unreachable_;
  // Tasks (a prefix of tasks_) that created the worker session; Close
  // deletes it there, also after a Connect that failed part way.
  size_t sessions_created_ = 0;

  // Shared with the master's other sessions (or the session's own).
  std::shared_ptr<SharedHealthMonitor> monitor_;
  int64_t watch_ = 0;  // this session's watch in monitor_; 0: none
  mutable std::mutex health_mu_;
  Status task_failure_;  // the monitor's first failure; guarded by health_mu_
  std::string failed_task_;  // the task it names; guarded by health_mu_
  // Aborts each running step with a task's failure; guarded by health_mu_,
  // which a step holds to unregister, so an abort never outlives its step.
  std::map<int64_t, std::function<void(const Status&)>> running_;

  mutable std::shared_mutex graph_mu_;  // guards the graph and the caches
  Graph graph_;
  bool graph_created_ = false;
  bool closed_ = false;
  std::unordered_map<std::string, std::shared_ptr<const CompiledStep>> signatures_;
  std::map<CallableHandle, std::shared_ptr<const CompiledStep>> callables_;
  CallableHandle next_callable_ = 0;
  std::mutex compile_mu_;
  // Where earlier signatures placed the stateful nodes (kept by later ones).
  StatefulPlacements stateful_placements_;
  std::atomic<int64_t> next_step_id_{1};
};

Status MasterSession::Connect(std::chrono::milliseconds timeout) {
  const ClusterConfig& config = worker_->config();
  // The master's own task first: its first device is the default one.
  std::vector<std::pair<std::string, int>> order;
  order.push_back({config.job, config.task});
  for (const auto& [job, tasks] : config.cluster.jobs()) {
    for (const auto& [index, address] : tasks) {
      if (job == config.job && index == config.task) continue;
      order.push_back({job, index});
    }
  }
  for (const auto& [job, index] : order) {
    Task task;
    task.name = ClusterSpec::TaskName(job, index);
    task.job = job;
    task.index = index;
    StatusOr<WorkerClient*> client = worker_->ClientForTask(job, index);
    if (!client.ok()) {
      // Another task that cannot be called (port 0 in the spec) is left
      // out as a task that is down: graphs placed there fail naming it.
      if (tasks_.empty()) return client.status();
      unreachable_.push_back(client.status().message());
      continue;
    }
    task.client = *client;
    StatusOr<std::vector<DeviceAttributes>> devices = task.client->GetStatus(timeout);
    if (!devices.ok()) {
      Status named = devices.status().WithContext(StrCat("task ", task.name));
      // Another task that is down (dead, or cut off) leaves the session
      // without its devices: graphs that do not use it still run.
      const bool own_task = tasks_.empty();
      if (own_task || !(errors::IsUnavailable(named) || errors::IsDeadlineExceeded(named))) {
        return named;
      }
      unreachable_.push_back(named.message());
      continue;
    }
    for (const DeviceAttributes& device : *devices) {
      if (TaskOfDevice(device.name) != task.name) {
        return errors::FailedPrecondition("task ", task.name, " at ", task.client->address(),
                                          " reports device ", device.name,
                                          ": the cluster spec and the servers disagree");
      }
      DeviceInfo info;
      info.name = device.name;
      info.type = device.device_type;
      devices_.push_back(info);
      incarnations_[device.name] = device.incarnation;
    }
    task_index_[task.name] = static_cast<int>(tasks_.size());
    tasks_.push_back(task);
  }
  // Leases start when each task creates the session and are first renewed
  // by the monitor's first round: creating them all must leave that round
  // time to arrive (half the lease; MasterOptions::Validate keeps the
  // round's timeout under the other half).
  const std::chrono::milliseconds lease = master_options_.session_lease;
  const std::chrono::milliseconds create_limit =
      lease.count() > 0 ? std::min(timeout, lease / 2) : timeout;
  const auto create_deadline = std::chrono::steady_clock::now() + create_limit;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    Task& task = tasks_[t];
    wire::CreateWorkerSessionRequest request;
    request.set_session_handle(handle_);
    request.set_master_task(worker_->task_name());
    // The master's own task shares its process: no lease there.
    if (t > 0) request.set_lease_ms(lease.count());
    wire::CreateWorkerSessionResponse response;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        create_deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return errors::DeadlineExceeded("creating the session on every task took longer than ",
                                      create_limit.count(), " ms; task ", task.name,
                                      " not reached");
    }
    WEIR_RETURN_IF_ERROR(task.client->CreateWorkerSession(request, &response, left)
                             .WithContext(StrCat("task ", task.name)));
    sessions_created_ = t + 1;
  }
  return StartMonitor();
}

Status MasterSession::StartMonitor() {
  // The master's own task (index 0) needs no check: its failure is ours.
  std::map<std::string, ClusterSpec::Tasks> jobs;
  for (size_t t = 1; t < tasks_.size(); ++t) {
    jobs[tasks_[t].job][tasks_[t].index] = tasks_[t].client->address();
  }
  if (jobs.empty()) return Status::OK();
  WEIR_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromJobs(std::move(jobs)));
  if (monitor_ == nullptr) {
    WEIR_ASSIGN_OR_RETURN(monitor_, NewMasterHealthMonitor(worker_, master_options_));
  }
  const std::string renew = master_options_.session_lease.count() > 0 ? handle_ : "";
  WEIR_ASSIGN_OR_RETURN(
      watch_, monitor_->Add(cluster, renew, [this](const Status& failure, const FailedTask& task) {
        OnTaskFailure(failure, task);
      }));
  return Status::OK();
}

void MasterSession::OnTaskFailure(const Status& failure, const FailedTask& task) {
  std::lock_guard<std::mutex> lock(health_mu_);
  if (!task_failure_.ok()) return;  // the first failure stays
  task_failure_ = failure;
  failed_task_ = task.name;
  for (auto& [step_id, abort] : running_) abort(failure);
}

Status MasterSession::FailedSession() const {
  std::lock_guard<std::mutex> lock(health_mu_);
  if (task_failure_.ok()) return Status::OK();
  return Status(task_failure_.code(),
                StrCat(task_failure_.message(),
                       " (earlier; this session runs no more steps: create a new one)"));
}

Status MasterSession::Close() {
  {
    std::unique_lock<std::shared_mutex> lock(graph_mu_);
    if (closed_) return Status::OK();
    closed_ = true;
  }
  if (watch_ != 0) monitor_->Remove(watch_);
  if (sessions_created_ == 0) return Status::OK();
  std::string failed;  // the task the monitor saw fail
  {
    std::lock_guard<std::mutex> lock(health_mu_);
    failed = failed_task_;
    // Steps still running (blocked in a queue op, say, for a client that
    // went away) end on every task now rather than hold their state.
    for (auto& [step_id, abort] : running_) {
      abort(errors::Cancelled("session ", handle_, " was closed while step ", step_id, " ran"));
    }
  }
  // Every task at once: a hung or cut-off one holds Close for one control
  // timeout, not one per task before the rest.
  wire::DeleteWorkerSessionRequest request;
  request.set_session_handle(handle_);
  std::vector<wire::DeleteWorkerSessionResponse> responses(sessions_created_);
  std::vector<Status> statuses(sessions_created_);
  std::mutex mu;
  std::condition_variable all_done;
  size_t pending = 0;
  for (size_t t = 0; t < sessions_created_; ++t) {
    // A task the monitor saw fail would hold Close for the whole timeout.
    if (tasks_[t].name == failed) continue;
    {
      std::lock_guard<std::mutex> lock(mu);
      ++pending;
    }
    tasks_[t].client->DeleteWorkerSessionAsync(&request, &responses[t], kControlTimeout,
                                               [&, t](Status status) {
                                                 std::lock_guard<std::mutex> lock(mu);
                                                 statuses[t] = std::move(status);
                                                 if (--pending == 0) all_done.notify_all();
                                               });
  }
  std::unique_lock<std::mutex> lock(mu);
  all_done.wait(lock, [&] { return pending == 0; });
  Status status;
  for (size_t t = 0; t < sessions_created_; ++t) {
    status.Update(statuses[t].WithContext(StrCat("task ", tasks_[t].name)));
  }
  return status;
}

Status MasterSession::Reset(const std::vector<std::string>& containers) {
  wire::CleanupAllRequest request;
  for (const std::string& container : containers) request.add_container(container);
  Status status;
  for (Task& task : tasks_) {
    wire::CleanupAllResponse response;
    status.Update(task.client->CleanupAll(request, &response, kControlTimeout)
                      .WithContext(StrCat("task ", task.name)));
  }
  return status;
}

StatusOr<std::shared_ptr<const MasterSession::CompiledStep>> MasterSession::GetOrCompile(
    const StepSignature& signature) {
  const std::string key = SignatureKey(signature);
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    auto it = signatures_.find(key);
    if (it != signatures_.end()) return it->second;
  }
  std::lock_guard<std::mutex> compile_lock(compile_mu_);
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    auto it = signatures_.find(key);
    if (it != signatures_.end()) return it->second;
  }
  StatusOr<std::shared_ptr<const CompiledStep>> compiled = errors::Internal("not compiled");
  try {
    compiled = Compile(signature);
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("out of memory compiling the step with fetches [",
                                     StrJoin(signature.fetches, ", "), "]");
  }
  WEIR_RETURN_IF_ERROR(compiled.status());
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  signatures_[key] = *compiled;
  return *compiled;
}

StatusOr<std::shared_ptr<const MasterSession::CompiledStep>> MasterSession::Compile(
    const StepSignature& signature) {
  CompileEnv env;
  env.devices = devices_;
  env.kernels = KernelRegistry::Global();
  env.host_device = worker_->devices()->devices().front().get();
  env.incarnation = [this](const std::string& device) {
    auto it = incarnations_.find(device);
    return it == incarnations_.end() ? uint64_t{0} : it->second;
  };
  env.stateful_placements = &stateful_placements_;
  StatusOr<CompiledGraph> compiled = errors::Internal("not compiled");
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (!graph_created_) {
      return errors::FailedPrecondition(
          "Session::Run called before Create: the session has no graph");
    }
    compiled = CompileGraph(graph_, signature, env, options_.compile);
  }
  if (!compiled.ok() && !unreachable_.empty()) {
    return Status(
        compiled.status().code(),
        StrCat(compiled.status().message(), " (the session has no devices of tasks ",
               "it could not reach when it was created: ", StrJoin(unreachable_, "; "), ")"));
  }
  WEIR_RETURN_IF_ERROR(compiled.status());
  auto step = std::make_shared<CompiledStep>();
  step->feeds = std::move(compiled->feeds);
  step->fetches = std::move(compiled->fetches);
  // Every partition of a task in one GraphDef; each node's device says
  // which partition it belongs to.
  std::map<int, GraphDef> per_task;
  for (CompiledPartition& partition : compiled->partitions) {
    GraphDef def =
        partition.graph != nullptr ? partition.graph->ToGraphDef() : std::move(partition.def);
    auto task = task_index_.find(TaskOfDevice(partition.device));
    if (task == task_index_.end()) {
      return errors::Internal("partition for ", partition.device, " is on no task of the cluster");
    }
    GraphDef& merged = per_task[task->second];
    if (merged.nodes.empty()) {
      merged.library = def.library;
      merged.producer = def.producer;
      merged.min_consumer = def.min_consumer;
      merged.bad_consumers = def.bad_consumers;
    }
    for (NodeDef& node : def.nodes) {
      node.device = partition.device;
      merged.nodes.push_back(std::move(node));
    }
  }
  for (auto& [task, def] : per_task) {
    TaskPart part;
    part.task = task;
    for (const NodeDef& node : def.nodes) {
      if (node.op == "_Send") {
        std::string recv_device;
        WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, "recv_device", &recv_device));
        if (TaskOfDevice(recv_device) != tasks_[task].name) part.sends_to_other_tasks = true;
      }
      if (node.op != "_Arg" && node.op != "_Retval") continue;
      int64_t index = 0;
      WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, "index", &index).WithContext(node.name));
      (node.op == "_Arg" ? part.feeds : part.fetches).push_back(static_cast<int>(index));
    }
    wire::RegisterGraphRequest request;
    request.set_session_handle(handle_);
    GraphDefToProto(def, request.mutable_graph_def());
    for (const FeedSpec& feed : step->feeds) request.add_feed_names(feed.name);
    for (const std::string& fetch : step->fetches) request.add_fetch_names(fetch);
    wire::RegisterGraphResponse response;
    WEIR_RETURN_IF_ERROR(tasks_[task]
                             .client->RegisterGraph(request, &response, kControlTimeout)
                             .WithContext(StrCat("task ", tasks_[task].name)));
    part.graph_handle = response.graph_handle();
    step->parts.push_back(std::move(part));
  }
  return std::shared_ptr<const CompiledStep>(std::move(step));
}

Status MasterSession::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                          const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  for (const auto& feed : feeds) feed_names.push_back(feed.first);
  CanonicalRun run = CanonicalizeRun(feed_names, fetches, targets);
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step, GetOrCompile(run.signature));
  std::vector<Tensor> args;
  for (int i : run.feed_order) args.push_back(feeds[i].second);
  std::vector<Tensor> results;
  WEIR_RETURN_IF_ERROR(RunCompiled(*step, args, &results, options, metadata));
  outputs->resize(fetches.size());
  for (size_t k = 0; k < run.fetch_order.size(); ++k) {
    (*outputs)[run.fetch_order[k]] = std::move(results[k]);
  }
  return Status::OK();
}

void MasterSession::CleanupAsync(int64_t step_id, const std::vector<int>& tasks) {
  for (int task : tasks) {
    if (task == 0) {  // the master's own task
      wire::CleanupGraphRequest request;
      request.set_step_id(step_id);
      worker_->CleanupGraph(request).ok();
      continue;
    }
    struct Call {
      wire::CleanupGraphRequest request;
      wire::CleanupGraphResponse response;
    };
    auto call = std::make_shared<Call>();
    call->request.set_step_id(step_id);
    tasks_[task].client->CleanupGraphAsync(&call->request, &call->response, kControlTimeout,
                                           [call](Status) {});
  }
}

Status MasterSession::RunCompiled(const CompiledStep& step, const std::vector<Tensor>& feeds,
                                  std::vector<Tensor>* fetches, const RunOptions& options,
                                  RunMetadata* metadata) {
  if (feeds.size() != step.feeds.size()) {
    return errors::InvalidArgument("expected ", step.feeds.size(), " feeds, got ", feeds.size());
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    const FeedSpec& spec = step.feeds[i];
    if (!feeds[i].IsInitialized()) {
      return errors::InvalidArgument("feed '", spec.name, "' is an empty (uninitialized) tensor");
    }
    if (feeds[i].dtype() != spec.dtype) {
      return errors::InvalidArgument("feed '", spec.name, "' is a ", feeds[i].dtype(),
                                     " tensor but the graph expects ", spec.dtype);
    }
    if (!spec.shape.IsCompatibleWith(feeds[i].shape())) {
      return errors::InvalidArgument("feed '", spec.name, "' has shape ", feeds[i].shape(),
                                     " but the graph expects shape ", spec.shape);
    }
  }
  if (options.timeout_ms < 0) {
    return errors::InvalidArgument("RunOptions.timeout_ms is negative: ", options.timeout_ms);
  }
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
  }
  WEIR_RETURN_IF_ERROR(FailedSession());
  const int64_t step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  const std::chrono::milliseconds deadline =
      options.timeout_ms > 0 ? std::chrono::milliseconds(options.timeout_ms) +
                                   DeadlineSlack(std::chrono::milliseconds(options.timeout_ms))
                             : kUntimedStepLimit;
  struct Call {
    wire::RunGraphRequest request;
    wire::RunGraphResponse response;
    Status status;
  };
  const size_t n = step.parts.size();
  std::vector<Call> calls(n);
  std::vector<int> tasks;           // every task of the step, for aborting it
  std::vector<int> tasks_to_clean;  // those that keep the step's state
  for (size_t p = 0; p < n; ++p) {
    const TaskPart& part = step.parts[p];
    tasks.push_back(part.task);
    if (part.sends_to_other_tasks) tasks_to_clean.push_back(part.task);
    wire::RunGraphRequest& request = calls[p].request;
    request.set_session_handle(handle_);
    request.set_graph_handle(part.graph_handle);
    request.set_step_id(step_id);
    request.set_timeout_ms(options.timeout_ms);
    if (options.trace) request.mutable_exec_opts()->set_record_timeline(true);
    for (int feed : part.feeds) {
      wire::NamedTensorProto* send = request.add_send();
      send->set_name(step.feeds[feed].name);
      WEIR_RETURN_IF_ERROR(TensorToProto(feeds[feed], send->mutable_tensor()));
    }
    for (int fetch : part.fetches) request.add_recv_key(step.fetches[fetch]);
  }
  std::mutex mu;
  bool aborted = false;  // guarded by mu
  // The other tasks' RunGraphs, all in flight at once on one completion
  // queue that this thread drains (it outlives the registration below).
  RunGraphGroup remote_calls;
  // A task's failure seen by the health monitor: cancel the RunGraphs in
  // flight (a task that hangs never answers) and end the step everywhere.
  Status task_failure;  // guarded by mu
  auto abort_on_failure = [&](const Status& failure) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!task_failure.ok()) return;
      task_failure = failure;
      aborted = true;
    }
    remote_calls.CancelAll();
    CleanupAsync(step_id, tasks);
  };
  {
    std::lock_guard<std::mutex> lock(health_mu_);
    if (!task_failure_.ok()) return FailedSession();
    running_[step_id] = abort_on_failure;
  }
  // Unregisters the step before the state above goes (every return below).
  struct Unregister {
    MasterSession* session;
    int64_t step_id;
    ~Unregister() {
      std::lock_guard<std::mutex> lock(session->health_mu_);
      session->running_.erase(step_id);
    }
  } unregister{this, step_id};
  auto finish = [&](size_t p, const Status& status) {
    if (!status.ok()) {
      bool first = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        calls[p].status = status;
        first = !aborted && !IsEcho(status);
        if (first) aborted = true;
      }
      // The root cause: end the step everywhere else now.
      if (first) CleanupAsync(step_id, tasks);
    }
  };
  // The master's own task (index 0) runs its part in this thread, without
  // an RPC to itself, after the other tasks' RunGraphs are on their way.
  int local = -1;
  for (size_t p = 0; p < n; ++p) {
    if (step.parts[p].task == 0) {
      local = static_cast<int>(p);
      continue;
    }
    remote_calls.Start(tasks_[step.parts[p].task].client, &calls[p].request, &calls[p].response,
                       deadline, static_cast<int>(p));
  }
  if (local >= 0) finish(local, worker_->RunGraph(calls[local].request, &calls[local].response));
  int p = 0;
  Status remote_status;
  while (remote_calls.Next(&p, &remote_status)) finish(p, remote_status);
  bool step_aborted = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    step_aborted = aborted;
  }
  CleanupAsync(step_id, step_aborted ? tasks : tasks_to_clean);
  Status status;
  for (size_t p = 0; p < n; ++p) {
    const Status& s = calls[p].status;
    if (s.ok()) continue;
    // gRPC-level failures (a dead task) name the address; name the task too.
    Status named = s.message().find(tasks_[step.parts[p].task].name) == std::string::npos
                       ? s.WithContext(StrCat("task ", tasks_[step.parts[p].task].name))
                       : s;
    if (!IsEcho(named)) {
      status = named;
      break;
    }
    status.Update(named);
  }
  // A task that no longer holds the session (its lease ran out there, or it
  // restarted) answers NotFound or Aborted saying so: that will not change,
  // so the session fails now as for a dead task (this step with a clear
  // error, every later one at once), not at the monitor's next round.
  for (size_t p = 0; p < n && !status.ok(); ++p) {
    const Task& task = tasks_[step.parts[p].task];
    if (LostSession(calls[p].status, calls[p].response)) {
      Status lost = errors::Aborted(
          "task ", task.name, " at ", task.client->address(), " no longer holds worker session '",
          handle_, "' (its lease expired, or the task restarted): ", calls[p].status.message());
      OnTaskFailure(lost, FailedTask{task.name, task.client->address()});
      return lost;
    }
  }
  if (errors::IsUnavailable(status) && watch_ != 0) {
    // A task that went away (a dead process refuses connections at once):
    // check now rather than at the monitor's next round, so that the
    // session fails as a whole, and this step with the monitor's status.
    FailedTask failed;
    Status health = monitor_->CheckNow(watch_, &failed);
    if (!health.ok()) OnTaskFailure(health, failed);
  }
  if (!status.ok()) {
    // A task the monitor saw fail is the root cause of the others' errors.
    std::lock_guard<std::mutex> lock(mu);
    if (!task_failure.ok()) return task_failure;
  }
  WEIR_RETURN_IF_ERROR(status);
  fetches->assign(step.fetches.size(), Tensor());
  for (size_t p = 0; p < n; ++p) {
    const std::vector<int>& indexes = step.parts[p].fetches;
    const wire::RunGraphResponse& response = calls[p].response;
    if (response.recv_size() != static_cast<int>(indexes.size())) {
      return errors::Internal("task ", tasks_[step.parts[p].task].name, " returned ",
                              response.recv_size(), " fetches for ", indexes.size());
    }
    for (size_t k = 0; k < indexes.size(); ++k) {
      WEIR_RETURN_IF_ERROR(TensorFromWire(response.recv(k).tensor(),
                                          StrCat("fetch '", step.fetches[indexes[k]],
                                                 "' from task ", tasks_[step.parts[p].task].name),
                                          &(*fetches)[indexes[k]]));
    }
  }
  if (options.trace && metadata != nullptr) {
    // Every task's nodes in one StepStats (the master's own part included:
    // it ran through the same RunGraph). Each task stamps its nodes with its
    // own wall clock, in microseconds since the epoch.
    StepStats merged;
    for (size_t p = 0; p < n; ++p) {
      WEIR_RETURN_IF_ERROR(StepStatsFromWire(calls[p].response.step_stats(),
                                             StrCat("task ", tasks_[step.parts[p].task].name),
                                             &merged));
    }
    metadata->step_stats = std::move(merged);
  }
  return Status::OK();
}

}  // namespace

Status MasterOptions::Validate() const {
  if (health_interval.count() < 0 || health_timeout.count() <= 0) {
    return errors::InvalidArgument("master: health check interval ", health_interval.count(),
                                   " ms must be >= 0 and timeout ", health_timeout.count(),
                                   " ms > 0");
  }
  if (session_lease.count() < 0 ||
      (session_lease.count() > 0 && session_lease < 2 * (health_interval + health_timeout))) {
    return errors::InvalidArgument(
        "master: a session lease of ", session_lease.count(), " ms must be 0 (none) or at least ",
        (2 * (health_interval + health_timeout)).count(),
        " ms (twice the health check interval plus timeout, which renew it)");
  }
  if (client_session_lease.count() < 0 ||
      (client_session_lease.count() > 0 && client_session_lease < kMinClientSessionLease)) {
    return errors::InvalidArgument(
        "master: a client session lease of ", client_session_lease.count(),
        " ms must be 0 (none) or at least ", kMinClientSessionLease.count(), " ms");
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<Session>> NewMasterSession(Worker* worker, const SessionOptions& options,
                                                    std::chrono::milliseconds connect_timeout,
                                                    const MasterOptions& master_options,
                                                    std::shared_ptr<SharedHealthMonitor> monitor) {
  WEIR_RETURN_IF_ERROR(master_options.Validate());
  auto session =
      std::make_unique<MasterSession>(worker, options, master_options, std::move(monitor));
  WEIR_RETURN_IF_ERROR(session->Connect(connect_timeout));
  return std::unique_ptr<Session>(std::move(session));
}

StatusOr<std::shared_ptr<SharedHealthMonitor>> NewMasterHealthMonitor(
    Worker* worker, const MasterOptions& master_options) {
  HealthMonitorOptions options;
  options.channel = worker->peer_options();
  options.interval = master_options.health_interval;
  options.timeout = master_options.health_timeout;
  return SharedHealthMonitor::Create(options);
}

Master::Master(Worker* worker, MasterOptions options) : worker_(worker), options_(options) {
  if (options_.client_session_lease.count() > 0) {
    collector_ = std::thread([this] { CollectExpiredSessions(); });
  }
}

Master::~Master() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  collector_wake_.notify_all();
  if (collector_.joinable()) collector_.join();
  // The collector is gone, so closers_ no longer grows.
  closer_wake_.notify_all();
  for (std::thread& closer : closers_) closer.join();
}

void Master::CollectExpiredSessions() {
  const std::chrono::milliseconds lease = options_.client_session_lease;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    // Renewals only move deadlines later and a new session's is the latest,
    // so sleeping until the earliest one misses nothing.
    const auto now = std::chrono::steady_clock::now();
    auto next = now + lease;
    size_t num_expired_now = 0;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const auto deadline = it->second.last_call + lease;
      if (deadline > now) {
        next = std::min(next, deadline);
        ++it;
        continue;
      }
      const auto idle =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.last_call);
      std::string why = StrCat("session '", it->first, "' on the master of task ",
                               worker_->task_name(), " expired after ", idle.count(),
                               " ms without a call from its client (client session lease ",
                               lease.count(), " ms: the client died, hung or was cut off)");
      if (expired_.emplace(it->first, why).second) {  // (a copy: logged below)
        expired_order_.push_back(it->first);
        if (expired_order_.size() > kMaxRememberedExpiries) {
          expired_.erase(expired_order_.front());
          expired_order_.pop_front();
        }
      }
      ++num_expired_;
      ++num_expired_now;
      to_close_.push_back({std::move(it->second.session), std::move(why)});
      it = sessions_.erase(it);
    }
    if (num_expired_now > 0) {
      // Closing calls every task, a hung one for up to its control timeout:
      // closers do it, several at once, never under this lock (which every
      // call of the service takes) and never on this thread (which must go
      // on collecting).
      while (closers_.size() < kMaxConcurrentCloses &&
             to_close_.size() + closing_ > closers_.size()) {
        closers_.emplace_back([this] { CloseExpiredSessions(); });
      }
      closer_wake_.notify_all();
    }
    collector_wake_.wait_until(lock, next, [&] { return stopping_; });
  }
}

void Master::CloseExpiredSessions() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    closer_wake_.wait(lock, [&] { return stopping_ || !to_close_.empty(); });
    if (to_close_.empty()) return;  // stopping, and nothing left to close
    Expired gone = std::move(to_close_.front());
    to_close_.pop_front();
    ++closing_;
    lock.unlock();
    Status closed = gone.session->Close();
    WEIR_LOG(Warning) << "closed " << gone.why << "; its steps aborted and its state on every "
                      << "task dropped" << (closed.ok() ? "" : StrCat(": ", closed.ToString()));
    gone.session.reset();
    lock.lock();
    --closing_;
  }
}

StatusOr<std::string> Master::CreateSession(const SessionOptions& options) {
  std::shared_ptr<SharedHealthMonitor> monitor;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (monitor_ == nullptr) {
      WEIR_ASSIGN_OR_RETURN(monitor_, NewMasterHealthMonitor(worker_, options_));
    }
    monitor = monitor_;
  }
  WEIR_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> session,
      NewMasterSession(worker_, options, std::chrono::seconds(10), options_, std::move(monitor)));
  std::string handle = StrCat("session_", std::hex, RandomUint64());
  std::lock_guard<std::mutex> lock(mu_);
  sessions_[handle] = Entry{std::move(session), std::chrono::steady_clock::now()};
  return handle;
}

StatusOr<std::shared_ptr<Session>> Master::Find(const std::string& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    auto expired = expired_.find(handle);
    if (expired != expired_.end()) {
      return errors::Aborted(expired->second, "; create a new session");
    }
    return errors::NotFound("the master of task ", worker_->task_name(), " has no session '",
                            handle.substr(0, 256), "' (closed, or the task restarted)");
  }
  it->second.last_call = std::chrono::steady_clock::now();
  return it->second.session;
}

Status Master::CloseSession(const std::string& handle) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(handle);
    if (it == sessions_.end()) {
      if (expired_.count(handle)) return Status::OK();  // the collector closed it
      return errors::NotFound("the master of task ", worker_->task_name(), " has no session '",
                              handle.substr(0, 256), "'");
    }
    session = std::move(it->second.session);
    sessions_.erase(it);
  }
  return session->Close();
}

int Master::num_sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(sessions_.size());
}

int64_t Master::num_expired_sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_expired_;
}

}  // namespace weir
