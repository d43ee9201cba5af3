#include "weir/distributed/worker.h"

#include <atomic>
#include <new>
#include <optional>

#include "proto/worker_service.pb.h"
#include "weir/base/cancellation.h"
#include "weir/base/logging.h"
#include "weir/base/notification.h"
#include "weir/distributed/remote_rendezvous.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/device_name.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/resource_mgr.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/executor.h"

namespace weir {
namespace {

// Bounds on what a master (or a hostile peer) can make a worker keep.
constexpr size_t kMaxSessions = 4096;
constexpr size_t kMaxGraphsPerSession = 1 << 16;
constexpr size_t kMaxSteps = 1 << 16;
constexpr size_t kMaxRememberedCleanups = 1 << 14;
constexpr size_t kMaxHandleBytes = 256;
constexpr size_t kMaxRememberedExpiries = 1 << 12;
// The longest lease a master may ask for.
constexpr int64_t kMaxLeaseMs = int64_t{24} * 3600 * 1000;
// Resources created with an empty container by any session of the cluster
// live here, as in TensorFlow's servers: variables on a ps outlive the
// session that made them and are shared by every client (between-graph
// replication). Reset({"localhost"}) drops them.
constexpr char kSharedContainer[] = "localhost";
// A RecvTensor in a step without a time limit: long enough for any step
// that makes progress (a blocked queue op included), short of forever.
constexpr std::chrono::milliseconds kDefaultRecvTimeout = std::chrono::hours(24);

// Prefers the root cause over the Cancelled / Aborted errors it caused.
Status CombineStatuses(const std::vector<Status>& statuses) {
  Status first;
  for (const Status& s : statuses) {
    if (s.ok()) continue;
    if (!errors::IsCancelled(s) && !errors::IsAborted(s)) return s;
    first.Update(s);
  }
  return first;
}

}  // namespace

struct Worker::RegisteredGraph {
  struct Part {
    Device* device = nullptr;
    std::unique_ptr<Graph> graph;
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts;
  std::map<std::string, int> feed_index;
  std::map<std::string, int> fetch_index;
  int num_feeds = 0;
  int num_fetches = 0;
  // No _Send of these partitions goes to another task: no RecvTensor will
  // ever ask for this graph's values, so a step's state can go as soon as
  // RunGraph is done (the master sends no CleanupGraph then).
  bool sends_to_other_tasks = false;
};

struct Worker::Session {
  std::string handle;
  std::string container;  // resources created with an empty container
  std::string master_task;  // who created it, named when its lease expires
  std::chrono::milliseconds lease{0};  // 0: none
  std::chrono::steady_clock::time_point expiry;  // with a lease; guarded by Worker::mu_
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const RegisteredGraph>> graphs;
};

struct Worker::Step {
  int64_t step_id = 0;
  // Before the rendezvous: its waiters' registrations must go first.
  CancellationManager cancellation;
  std::shared_ptr<RemoteRendezvous> rendezvous;
  std::mutex mu;
  Status aborted;  // why AbortStep ended the step, if it did
  std::atomic<bool> ran{false};  // a RunGraph named it
  std::string session;  // the session of its RunGraphs; guarded by Worker::mu_
};

Worker::Worker(ClusterConfig config, DeviceMgr* devices, int inter_op_threads,
               ChannelOptions peer_options)
    : config_(std::move(config)),
      task_name_(ClusterSpec::TaskName(config_.job, config_.task)),
      devices_(devices),
      peer_options_(std::move(peer_options)) {
  int threads = inter_op_threads > 0 ? inter_op_threads : NumSchedulableCpus();
  inter_op_pool_ = std::make_unique<ThreadPool>("worker_inter_op", threads);
  runner_ = [pool = inter_op_pool_.get()](std::function<void()> fn) {
    pool->Schedule(std::move(fn));
  };
  lease_thread_ = std::thread([this] { ExpireLeases(); });
}

Worker::~Worker() {
  std::unordered_map<int64_t, std::shared_ptr<Step>> steps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  lease_wake_.notify_all();
  lease_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    steps.swap(steps_);
  }
  for (auto& [id, step] : steps) {
    step->cancellation.StartCancel();
    step->rendezvous->StartAbort(errors::Cancelled("worker ", task_name_, " shut down"));
  }
}

void Worker::ForgetOrphanStep(int64_t step_id) {
  std::shared_ptr<Step> step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = steps_.find(step_id);
    if (it == steps_.end() || it->second->ran.load()) return;
    step = std::move(it->second);
    steps_.erase(it);
  }
  step->rendezvous->StartAbort(errors::Cancelled("RecvTensor caller gave up on step ", step_id,
                                                 " before it ran on task ", task_name_));
}

void Worker::AbortAllSteps(const Status& status) {
  std::vector<int64_t> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, step] : steps_) ids.push_back(id);
  }
  for (int64_t id : ids) AbortStep(id, status);
}

void Worker::SetStepEndObserver(std::function<void(int64_t step_id)> observer) {
  std::lock_guard<std::mutex> lock(mu_);
  step_end_observer_ = std::move(observer);
}

void Worker::AbortStep(int64_t step_id, const Status& status) {
  std::shared_ptr<Step> step;
  std::function<void(int64_t)> observer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    observer = step_end_observer_;
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      step = std::move(it->second);
      steps_.erase(it);
    }
    if (cleaned_steps_.insert(step_id).second) {
      cleaned_order_.push_back(step_id);
      if (cleaned_order_.size() > kMaxRememberedCleanups) {
        cleaned_steps_.erase(cleaned_order_.front());
        cleaned_order_.pop_front();
      }
    }
  }
  if (observer) observer(step_id);
  if (step == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(step->mu);
    if (step->aborted.ok()) step->aborted = status;
  }
  // The rendezvous first, so that peers' RecvTensors get `status` rather
  // than the Cancelled of the ops the cancellation ends.
  step->rendezvous->StartAbort(status);
  step->cancellation.StartCancel();
}

int Worker::num_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(steps_.size());
}

int Worker::num_sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(sessions_.size());
}

std::vector<std::string> Worker::session_handles() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> handles;
  for (const auto& [handle, session] : sessions_) handles.push_back(handle);
  return handles;
}

void Worker::ExpireLeases() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<Session>> expired;
    std::optional<std::chrono::steady_clock::time_point> next;
    for (const auto& [handle, session] : sessions_) {
      if (session->lease.count() == 0) continue;
      if (session->expiry <= now) {
        expired.push_back(session);
      } else if (!next || session->expiry < *next) {
        next = session->expiry;
      }
    }
    if (!expired.empty()) {
      lock.unlock();
      for (const auto& session : expired) DropExpiredSession(session);
      lock.lock();
      continue;
    }
    // Renewals only move deadlines later: waking at the earliest one (or
    // at a new session's, which notifies) is never late.
    if (next) {
      lease_wake_.wait_until(lock, *next);
    } else {
      lease_wake_.wait(lock);
    }
  }
}

void Worker::DropExpiredSession(const std::shared_ptr<Session>& session) {
  const std::string why =
      StrCat("worker session '", session->handle, "' on task ", task_name_,
             " expired: its master (", session->master_task, ") did not renew its lease of ",
             session->lease.count(), " ms (the master died, hung or was cut off)");
  std::vector<int64_t> steps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session->handle);
    // Renewed or deleted since the lease thread looked.
    if (it == sessions_.end() || it->second != session ||
        session->expiry > std::chrono::steady_clock::now()) {
      return;
    }
    sessions_.erase(it);
    if (expired_sessions_.emplace(session->handle, why).second) {
      expired_order_.push_back(session->handle);
      if (expired_order_.size() > kMaxRememberedExpiries) {
        expired_sessions_.erase(expired_order_.front());
        expired_order_.pop_front();
      }
    }
    for (const auto& [id, step] : steps_) {
      if (step->session == session->handle) steps.push_back(id);
    }
  }
  size_t graphs = 0;
  {
    std::lock_guard<std::mutex> lock(session->mu);
    graphs = session->graphs.size();
    session->graphs.clear();  // steps still running hold theirs
  }
  WEIR_LOG(Warning) << "dropped " << why << "; aborted " << steps.size()
                    << " running step(s), dropped " << graphs << " graph(s)";
  for (int64_t id : steps) AbortStep(id, errors::Aborted(why));
}

Status Worker::RenewLeases(const wire::GetStatusRequest& request,
                           wire::GetStatusResponse* response) {
  if (static_cast<size_t>(request.renew_session_handle_size()) > kMaxSessions) {
    return errors::InvalidArgument("task ", task_name_, ": GetStatus renews ",
                                   request.renew_session_handle_size(), " sessions, more than the ",
                                   kMaxSessions, " a task keeps");
  }
  for (const std::string& handle : request.renew_session_handle()) {
    if (handle.empty() || handle.size() > kMaxHandleBytes) {
      return errors::InvalidArgument("task ", task_name_, ": GetStatus renews a session handle of ",
                                     handle.size(), " bytes (1..", kMaxHandleBytes, ")");
    }
  }
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& handle : request.renew_session_handle()) {
    auto it = sessions_.find(handle);
    if (it == sessions_.end()) {
      response->add_lost_session_handle(handle);
      continue;
    }
    Session& session = *it->second;
    if (session.lease.count() > 0) session.expiry = now + session.lease;
  }
  return Status::OK();
}

void Worker::SetOwnAddress(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  own_address_ = address;
  clients_.erase(task_name_);
}

StatusOr<WorkerClient*> Worker::ClientForTask(const std::string& job, int task) {
  std::string name = ClusterSpec::TaskName(job, task);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clients_.find(name);
  if (it != clients_.end()) return it->second.get();
  WEIR_ASSIGN_OR_RETURN(std::string address, config_.cluster.task_address(job, task));
  if (name == task_name_ && !own_address_.empty()) {
    address = own_address_;
  } else if (address.size() >= 2 && address.compare(address.size() - 2, 2, ":0") == 0) {
    // Port 0 binds a free port that only that task's own server knows.
    return errors::FailedPrecondition(
        "task ", name, " (job '", job, "', task ", task, ") has port 0 in the cluster spec ('",
        address, "') of task ", task_name_,
        ": only its own server knows the port it bound; give it its real port");
  }
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<WorkerClient> client, WorkerClient::Create(address, peer_options_));
  WorkerClient* out = client.get();
  clients_[name] = std::move(client);
  return out;
}

StatusOr<WorkerClient*> Worker::ClientForDevice(const std::string& device) {
  WEIR_ASSIGN_OR_RETURN(DeviceName name, DeviceName::Parse(device));
  if (!name.has_job || !name.has_task) {
    return errors::InvalidArgument("device '", device, "' names no job and task");
  }
  return ClientForTask(name.job, name.task);
}

StatusOr<std::shared_ptr<Worker::Session>> Worker::FindSession(const std::string& handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    auto expired = expired_sessions_.find(handle);
    if (expired != expired_sessions_.end()) {
      return errors::Aborted(expired->second, "; create a new session");
    }
    return errors::NotFound("task ", task_name_, " has no worker session '",
                            handle.substr(0, kMaxHandleBytes),
                            "' (never created, deleted, or the "
                            "task restarted)");
  }
  return it->second;
}

Status Worker::CreateWorkerSession(const wire::CreateWorkerSessionRequest& request) {
  const std::string& handle = request.session_handle();
  if (handle.empty() || handle.size() > kMaxHandleBytes) {
    return errors::InvalidArgument("task ", task_name_, ": a session handle must have 1..",
                                   kMaxHandleBytes, " bytes, got ", handle.size());
  }
  if (request.lease_ms() < 0 || request.lease_ms() > kMaxLeaseMs) {
    return errors::InvalidArgument("task ", task_name_, ": the lease of worker session '", handle,
                                   "' is ", request.lease_ms(), " ms, not in 0..", kMaxLeaseMs);
  }
  if (request.master_task().size() > kMaxHandleBytes) {
    return errors::InvalidArgument("task ", task_name_, ": the master task of worker session '",
                                   handle, "' has ", request.master_task().size(),
                                   " bytes, more than ", kMaxHandleBytes);
  }
  auto session = std::make_shared<Session>();
  session->handle = handle;
  session->container = kSharedContainer;
  session->master_task = request.master_task().empty() ? "an unnamed task" : request.master_task();
  session->lease = std::chrono::milliseconds(request.lease_ms());
  session->expiry = std::chrono::steady_clock::now() + session->lease;
  std::lock_guard<std::mutex> lock(mu_);
  if (sessions_.count(handle)) {
    return errors::AlreadyExists("task ", task_name_, " already has worker session '", handle, "'");
  }
  if (sessions_.size() >= kMaxSessions) {
    return errors::ResourceExhausted("task ", task_name_, " has ", sessions_.size(),
                                     " worker sessions, the most it keeps");
  }
  const bool leased = session->lease.count() > 0;
  sessions_[handle] = std::move(session);
  // A handle used again after it expired names the new session.
  expired_sessions_.erase(handle);
  if (leased) lease_wake_.notify_all();
  return Status::OK();
}

Status Worker::DeleteWorkerSession(const wire::DeleteWorkerSessionRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) {
      if (expired_sessions_.count(request.session_handle())) return Status::OK();
      return errors::NotFound("task ", task_name_, " has no worker session '",
                              request.session_handle().substr(0, kMaxHandleBytes), "'");
    }
    sessions_.erase(it);
  }
  return Status::OK();
}

Status Worker::RegisterGraph(const wire::RegisterGraphRequest& request,
                             wire::RegisterGraphResponse* response) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<Session> session, FindSession(request.session_handle()));
  const std::string context = StrCat("RegisterGraph on task ", task_name_);
  GraphDef def;
  WEIR_RETURN_IF_ERROR(GraphDefFromProto(request.graph_def(), &def).WithContext(context));
  // One partition per device named by the nodes.
  std::map<std::string, GraphDef> partitions;
  bool sends_to_other_tasks = false;
  for (NodeDef& node : def.nodes) {
    if (node.op == "_Send") {
      std::string recv_device;
      if (!GetAttr(node.attrs, "recv_device", &recv_device).ok() ||
          !(recv_device.size() > task_name_.size() &&
            recv_device.compare(0, task_name_.size(), task_name_) == 0 &&
            recv_device[task_name_.size()] == '/')) {
        sends_to_other_tasks = true;
      }
    }
    if (partitions.count(node.device) == 0) {
      GraphDef& partition = partitions[node.device];
      partition.library = def.library;
      partition.producer = def.producer;
      partition.min_consumer = def.min_consumer;
      partition.bad_consumers = def.bad_consumers;
    }
    partitions[node.device].nodes.push_back(std::move(node));
  }
  auto graph = std::make_shared<RegisteredGraph>();
  graph->sends_to_other_tasks = sends_to_other_tasks;
  graph->num_feeds = request.feed_names_size();
  graph->num_fetches = request.fetch_names_size();
  for (int i = 0; i < request.feed_names_size(); ++i) {
    graph->feed_index[request.feed_names(i)] = i;
  }
  for (int i = 0; i < request.fetch_names_size(); ++i) {
    graph->fetch_index[request.fetch_names(i)] = i;
  }
  try {
    for (auto& [device_name, partition] : partitions) {
      RegisteredGraph::Part part;
      StatusOr<Device*> device = devices_->Find(device_name);
      if (!device.ok()) {
        return errors::InvalidArgument(context, ": a node is placed on device '", device_name,
                                       "', which is not a device of this task");
      }
      part.device = *device;
      part.graph = std::make_unique<Graph>();
      ImportGraphDefOptions import_options;
      import_options.allow_internal_ops = true;
      WEIR_RETURN_IF_ERROR(ImportGraphDef(partition, part.graph.get(), import_options)
                               .WithContext(StrCat(context, ", partition for ", device_name)));
      WEIR_ASSIGN_OR_RETURN(part.executor,
                            Executor::Create(*part.graph, part.device, *KernelRegistry::Global()));
      graph->parts.push_back(std::move(part));
    }
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted(context, ": out of memory building the graph");
  }
  if (graph->parts.empty()) {
    return errors::InvalidArgument(context, ": the graph has no nodes");
  }
  std::lock_guard<std::mutex> lock(session->mu);
  if (session->graphs.size() >= kMaxGraphsPerSession) {
    return errors::ResourceExhausted(context, ": the session already has ", session->graphs.size(),
                                     " graphs");
  }
  std::string handle;
  {
    std::lock_guard<std::mutex> worker_lock(mu_);
    handle = StrCat("graph_", next_graph_++);
  }
  session->graphs[handle] = std::move(graph);
  response->set_graph_handle(handle);
  return Status::OK();
}

Status Worker::DeregisterGraph(const wire::DeregisterGraphRequest& request) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<Session> session, FindSession(request.session_handle()));
  std::lock_guard<std::mutex> lock(session->mu);
  if (session->graphs.erase(request.graph_handle()) == 0) {
    return errors::NotFound("task ", task_name_, " has no graph '",
                            request.graph_handle().substr(0, kMaxHandleBytes), "' in session '",
                            session->handle, "'");
  }
  return Status::OK();
}

StatusOr<std::shared_ptr<Worker::Step>> Worker::GetOrCreateStep(int64_t step_id,
                                                                int64_t timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = steps_.find(step_id);
  if (it != steps_.end()) return it->second;
  if (cleaned_steps_.count(step_id)) {
    return errors::Aborted("step ", step_id, " on task ", task_name_,
                           " was already cleaned up (aborted or finished)");
  }
  if (steps_.size() >= kMaxSteps) {
    return errors::ResourceExhausted("task ", task_name_, " has ", steps_.size(),
                                     " steps in flight, the most it keeps");
  }
  auto step = std::make_shared<Step>();
  step->step_id = step_id;
  std::chrono::milliseconds recv_timeout =
      timeout_ms > 0 ? std::chrono::milliseconds(timeout_ms) : kDefaultRecvTimeout;
  step->rendezvous = std::make_shared<RemoteRendezvous>(
      step_id, task_name_, [this](const std::string& device) { return ClientForDevice(device); },
      recv_timeout,
      [this](const std::string& device) -> Allocator* {
        StatusOr<Device*> found = devices_->Find(device);
        return found.ok() ? (*found)->allocator() : nullptr;
      });
  steps_[step_id] = step;
  return step;
}

Status Worker::AttachStep(const std::shared_ptr<Step>& step,
                          const std::shared_ptr<Session>& session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session->handle);
    if (it != sessions_.end() && it->second == session) {
      step->session = session->handle;
      return Status::OK();
    }
  }
  // The session expired (or was deleted) since RunGraph found it.
  Status gone = FindSession(session->handle).status();
  if (gone.ok()) gone = errors::Aborted("worker session '", session->handle, "' was replaced");
  AbortStep(step->step_id, gone);
  return gone;
}

Status Worker::RunGraph(const wire::RunGraphRequest& request, wire::RunGraphResponse* response) {
  StatusOr<std::shared_ptr<Session>> found = FindSession(request.session_handle());
  if (!found.ok()) {
    // Other tasks' Recvs of this step's values would wait for Sends that
    // never run: they get this error instead (and later ones at once).
    AbortStep(request.step_id(), found.status());
    // (At most kMaxHandleBytes: it travels in gRPC's trailers; a master's
    // handles are far shorter.)
    response->set_lost_session_handle(request.session_handle().substr(0, kMaxHandleBytes));
    return found.status();
  }
  std::shared_ptr<Session> session = std::move(*found);
  std::shared_ptr<const RegisteredGraph> graph;
  {
    std::lock_guard<std::mutex> lock(session->mu);
    auto it = session->graphs.find(request.graph_handle());
    if (it == session->graphs.end()) {
      return errors::NotFound("task ", task_name_, " has no graph '",
                              request.graph_handle().substr(0, kMaxHandleBytes), "' in session '",
                              session->handle, "'");
    }
    graph = it->second;
  }
  const std::string context = StrCat("task ", task_name_);
  std::vector<Tensor> args(graph->num_feeds);
  for (const wire::NamedTensorProto& send : request.send()) {
    auto it = graph->feed_index.find(send.name());
    if (it == graph->feed_index.end()) {
      return errors::InvalidArgument(context, ": RunGraph feeds '",
                                     send.name().substr(0, kMaxHandleBytes),
                                     "', which the graph does not take");
    }
    WEIR_RETURN_IF_ERROR(TensorFromWire(
        send.tensor(), StrCat(context, ", feed '", send.name(), "'"), &args[it->second]));
  }
  std::vector<int> recv_indexes;
  for (const std::string& key : request.recv_key()) {
    auto it = graph->fetch_index.find(key);
    if (it == graph->fetch_index.end()) {
      return errors::InvalidArgument(context, ": RunGraph fetches '",
                                     key.substr(0, kMaxHandleBytes),
                                     "', which the graph does not return");
    }
    recv_indexes.push_back(it->second);
  }
  if (request.timeout_ms() < 0) {
    return errors::InvalidArgument(context, ": negative timeout ", request.timeout_ms());
  }
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<Step> step,
                        GetOrCreateStep(request.step_id(), request.timeout_ms()));
  step->ran.store(true);
  if (Status attached = AttachStep(step, session); !attached.ok()) {
    // Expired meanwhile.
    response->set_lost_session_handle(request.session_handle().substr(0, kMaxHandleBytes));
    return attached;
  }

  CallFrame frame(std::move(args), graph->num_fetches);
  // Collected as the local session does; the devices' names are full
  // (/job:worker/replica:0/task:1/device:CPU:0), so the master can merge
  // every task's nodes into one StepStats.
  std::unique_ptr<StepStatsCollector> stats;
  if (request.exec_opts().record_timeline()) stats = std::make_unique<StepStatsCollector>();
  Executor::Args exec_args;
  exec_args.step_id = request.step_id();
  exec_args.rendezvous = step->rendezvous.get();
  exec_args.cancellation = &step->cancellation;
  exec_args.call_frame = &frame;
  exec_args.runner = &runner_;
  exec_args.default_container = session->container;
  exec_args.stats = stats.get();

  std::vector<Status> statuses(graph->parts.size());
  std::atomic<int> remaining(static_cast<int>(graph->parts.size()));
  Notification all_done;
  for (size_t p = 0; p < graph->parts.size(); ++p) {
    auto start = [&, p] {
      graph->parts[p].executor->RunAsync(exec_args, [&, p](const Status& status) {
        statuses[p] = status;
        if (!status.ok()) {
          step->cancellation.StartCancel();
          step->rendezvous->StartAbort(status);
        }
        if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done.Notify();
      });
    };
    // An executor runs cheap nodes on the thread that starts it; with a
    // time limit, or several partitions, this (gRPC) thread must stay free
    // to keep the time or start the others.
    if (request.timeout_ms() > 0 || p + 1 < graph->parts.size()) {
      runner_(start);
    } else {
      start();
    }
  }
  Status timeout;
  if (request.timeout_ms() > 0 &&
      !all_done.WaitFor(std::chrono::milliseconds(request.timeout_ms()))) {
    timeout = errors::DeadlineExceeded("step timed out after ", request.timeout_ms(),
                                       " ms (RunOptions.timeout_ms) on task ", task_name_);
    step->cancellation.StartCancel();
    step->rendezvous->StartAbort(timeout);
  }
  all_done.Wait();
  if (!graph->sends_to_other_tasks) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = steps_.find(request.step_id());
    if (it != steps_.end() && it->second == step) steps_.erase(it);
  }
  if (!timeout.ok()) return timeout;
  Status status = CombineStatuses(statuses);
  if (!status.ok() && (errors::IsCancelled(status) || errors::IsAborted(status))) {
    std::lock_guard<std::mutex> lock(step->mu);
    if (!step->aborted.ok()) status = step->aborted;  // the reason, not its echo
  }
  if (request.timeout_ms() > 0 && errors::IsDeadlineExceeded(status) &&
      status.message().find("RunOptions.timeout_ms") == std::string::npos) {
    // A RecvTensor's deadline (the step's time limit too) can end the step
    // just before the timer above: say it is the step's limit.
    return errors::DeadlineExceeded("step timed out after ", request.timeout_ms(),
                                    " ms (RunOptions.timeout_ms) on task ", task_name_, ": ",
                                    status.message());
  }
  if (!status.ok()) {
    // Name the task; keep the node the executor named.
    return status.message().find(task_name_) == std::string::npos ? status.WithContext(context)
                                                                  : status;
  }
  std::vector<Tensor>& values = frame.retvals();
  for (size_t k = 0; k < recv_indexes.size(); ++k) {
    const Tensor& value = values[recv_indexes[k]];
    if (!value.IsInitialized()) {
      return errors::Internal(context, ": fetch '", request.recv_key(k),
                              "' was not produced (a dead branch?)");
    }
    wire::NamedTensorProto* out = response->add_recv();
    out->set_name(request.recv_key(k));
    WEIR_RETURN_IF_ERROR(TensorToProto(value, out->mutable_tensor()).WithContext(context));
  }
  if (stats) StepStatsToProto(stats->Finalize(), response->mutable_step_stats());
  return Status::OK();
}

Status Worker::CleanupGraph(const wire::CleanupGraphRequest& request) {
  AbortStep(request.step_id(),
            errors::Aborted("step ", request.step_id(), " was aborted on task ", task_name_,
                            " (another task failed, or the master ended it)"));
  return Status::OK();
}

Status Worker::CleanupAll(const wire::CleanupAllRequest& request) {
  for (const auto& device : devices_->devices()) {
    for (const std::string& container : request.container()) {
      device->resource_manager()->Cleanup(container);
    }
  }
  return Status::OK();
}

void Worker::RecvTensorAsync(const wire::RecvTensorRequest& request, RecvTensorDone done) {
  StatusOr<Rendezvous::ParsedKey> key = Rendezvous::ParseKey(request.rendezvous_key());
  if (!key.ok()) {
    done(key.status().WithContext(StrCat("RecvTensor on task ", task_name_)), Tensor(), false);
    return;
  }
  StatusOr<std::shared_ptr<Step>> step = GetOrCreateStep(request.step_id(), 0);
  if (!step.ok()) {
    done(step.status(), Tensor(), false);
    return;
  }
  if (!(*step)->rendezvous->IsLocal(key->src_device)) {
    done(errors::InvalidArgument("RecvTensor on task ", task_name_, " for '", key->edge_name,
                                 "', sent from ", key->src_device, ", not a device of this task"),
         Tensor(), false);
    return;
  }
  (*step)->rendezvous->RecvLocalAsync(*key, std::move(done));
}

}  // namespace weir
