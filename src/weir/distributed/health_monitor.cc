#include "weir/distributed/health_monitor.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "proto/worker_service.grpc.pb.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_util.h"

namespace weir {
namespace {

struct Task {
  std::string name;     // "/job:ps/replica:0/task:0"
  std::string address;  // "10.0.0.3:2222"
  std::unique_ptr<wire::WorkerService::Stub> stub;
};

// One GetStatus in flight.
struct Call {
  grpc::ClientContext context;
  wire::GetStatusResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<wire::GetStatusResponse>> reader;
};

}  // namespace

namespace {

// GetStatus to every task with its request, all at once, each with
// `timeout`; fills `calls` (one per task). With `stop`, cancels the calls
// once it is set and returns false.
bool CheckTasks(const std::vector<const Task*>& tasks,
                const std::vector<wire::GetStatusRequest>& requests,
                std::chrono::milliseconds timeout, const std::atomic<bool>* stop,
                std::vector<std::unique_ptr<Call>>* calls) {
  grpc::CompletionQueue queue;
  auto deadline = std::chrono::system_clock::now() + timeout;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto call = std::make_unique<Call>();
    call->context.set_deadline(deadline);
    call->reader = tasks[i]->stub->AsyncGetStatus(&call->context, requests[i], &queue);
    call->reader->Finish(&call->response, &call->status, reinterpret_cast<void*>(i));
    calls->push_back(std::move(call));
  }
  size_t pending = calls->size();
  bool cancelled = false;
  while (pending > 0) {
    void* tag = nullptr;
    bool ok = false;
    auto poll = std::chrono::system_clock::now() + std::chrono::milliseconds(50);
    grpc::CompletionQueue::NextStatus next = queue.AsyncNext(&tag, &ok, poll);
    if (next == grpc::CompletionQueue::GOT_EVENT) {
      --pending;
    } else if (next == grpc::CompletionQueue::SHUTDOWN) {
      break;
    }
    if (stop != nullptr && stop->load() && !cancelled) {
      for (auto& call : *calls) call->context.TryCancel();
      cancelled = true;
    }
  }
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }
  return !cancelled;
}

// What `call` to `task` says of it for a session renewing `handle` (null:
// any handle the call renewed): Unavailable if the call failed, Aborted if
// the task lost the session, else OK.
Status TaskFailure(const Task& task, const Call& call, const std::string* handle,
                   const HealthMonitorOptions& options) {
  const grpc::Status& status = call.status;
  if (status.ok()) {
    for (const std::string& lost : call.response.lost_session_handle()) {
      if (handle == nullptr || lost == *handle) {
        return errors::Aborted("task ", task.name, " at ", task.address,
                               " no longer holds worker session '", lost.substr(0, 256),
                               "' (its lease expired, or the task restarted)");
      }
    }
    return Status::OK();
  }
  Status cause = FromGrpcCallStatus(status, "GetStatus", options.channel);
  std::string why =
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
          ? StrCat("no answer within ", options.timeout.count(), " ms (", cause.ToString(), ")")
          : cause.ToString();
  return errors::Unavailable("task ", task.name, " at ", task.address,
                             " failed its health check: ", why);
}

Status ValidateOptions(const HealthMonitorOptions& options) {
  if (options.interval.count() < 0 || options.timeout.count() <= 0) {
    return errors::InvalidArgument("health monitor: interval ", options.interval.count(),
                                   " ms must be >= 0 and timeout ", options.timeout.count(),
                                   " ms > 0");
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<wire::WorkerService::Stub>> MakeStub(const std::string& address,
                                                              const ChannelOptions& options) {
  StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(address, options);
  if (!channel.ok()) {
    return Status(channel.status().code(),
                  StrCat("health monitor of ", address, ": ", channel.status().message()));
  }
  return wire::WorkerService::NewStub(*channel);
}

}  // namespace

struct HealthMonitor::Impl {
  HealthMonitorOptions options;
  std::vector<Task> tasks;

  mutable std::mutex mu;
  std::condition_variable wake;
  bool started = false;
  std::atomic<bool> stopping{false};
  Status failure;
  FailedTask failed_task;
  std::thread thread;

  // One round of checks. With `stop`, returns early (OK) once it is set,
  // cancelling the calls in flight.
  Status Round(const std::atomic<bool>* stop, FailedTask* failed) {
    wire::GetStatusRequest request;
    for (const std::string& handle : options.renew_sessions) {
      request.add_renew_session_handle(handle);
    }
    std::vector<const Task*> targets;
    for (const Task& task : tasks) targets.push_back(&task);
    std::vector<wire::GetStatusRequest> requests(tasks.size(), request);
    std::vector<std::unique_ptr<Call>> calls;
    if (!CheckTasks(targets, requests, options.timeout, stop, &calls)) return Status::OK();
    for (size_t i = 0; i < calls.size(); ++i) {
      Status status = TaskFailure(tasks[i], *calls[i], nullptr, options);
      if (status.ok()) continue;
      if (failed != nullptr) *failed = FailedTask{tasks[i].name, tasks[i].address};
      return status;
    }
    return Status::OK();
  }
};

HealthMonitor::HealthMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HealthMonitor::~HealthMonitor() { Stop(); }

StatusOr<std::unique_ptr<HealthMonitor>> HealthMonitor::Create(
    const ClusterSpec& cluster, const HealthMonitorOptions& options) {
  if (cluster.empty()) return errors::InvalidArgument("health monitor: the cluster has no tasks");
  WEIR_RETURN_IF_ERROR(ValidateOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  for (const auto& [job, tasks] : cluster.jobs()) {
    for (const auto& [index, address] : tasks) {
      WEIR_ASSIGN_OR_RETURN(auto stub, MakeStub(address, options.channel));
      impl->tasks.push_back(Task{ClusterSpec::TaskName(job, index), address, std::move(stub)});
    }
  }
  return std::unique_ptr<HealthMonitor>(new HealthMonitor(std::move(impl)));
}

Status HealthMonitor::CheckNow(FailedTask* failed) { return impl_->Round(nullptr, failed); }

Status HealthMonitor::Start(std::function<void(const Status&)> on_failure) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->started) return errors::FailedPrecondition("health monitor already started");
  impl_->started = true;
  impl_->thread = std::thread(
      [this, on_failure = std::move(on_failure)]() mutable { Loop(std::move(on_failure)); });
  return Status::OK();
}

void HealthMonitor::Loop(std::function<void(const Status&)> on_failure) {
  while (!impl_->stopping.load()) {
    FailedTask failed;
    Status status = impl_->Round(&impl_->stopping, &failed);
    if (!status.ok()) {
      {
        std::lock_guard<std::mutex> lock(impl_->mu);
        impl_->failure = status;
        impl_->failed_task = failed;
      }
      if (on_failure) on_failure(status);
      return;
    }
    std::unique_lock<std::mutex> lock(impl_->mu);
    impl_->wake.wait_for(lock, impl_->options.interval, [&] { return impl_->stopping.load(); });
  }
}

void HealthMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable() && impl_->thread.get_id() != std::this_thread::get_id()) {
    impl_->thread.join();
  }
}

Status HealthMonitor::status() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->failure;
}

FailedTask HealthMonitor::failed_task() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->failed_task;
}

// ---- SharedHealthMonitor ---------------------------------------------------

struct SharedHealthMonitor::Impl {
  struct Watch {
    std::vector<std::shared_ptr<Task>> tasks;  // in job and task order
    std::string handle;                        // renewed; empty: none
    Callback on_failure;
  };

  HealthMonitorOptions options;
  std::mutex callback_mu;  // held while a callback runs; Remove waits on it
  std::mutex mu;           // guards what follows
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<bool> stop_flag{false};
  std::map<std::string, std::shared_ptr<Task>> tasks;  // by address
  std::map<int64_t, Watch> watches;
  int64_t next_id = 1;
  std::thread thread;

  // The checks of `watches` (id -> its tasks and handle): one GetStatus per
  // task, renewing the handles of every watch that has it; the failures
  // (id, status, task) in id order. Empty if stopped meanwhile.
  std::vector<std::tuple<int64_t, Status, FailedTask>> Round(const std::map<int64_t, Watch>& of,
                                                             const std::atomic<bool>* stop) {
    std::map<const Task*, size_t> index;
    std::vector<const Task*> targets;
    std::vector<wire::GetStatusRequest> requests;
    for (const auto& [id, watch] : of) {
      for (const auto& task : watch.tasks) {
        auto [it, added] = index.emplace(task.get(), targets.size());
        if (added) {
          targets.push_back(task.get());
          requests.emplace_back();
        }
        if (!watch.handle.empty()) requests[it->second].add_renew_session_handle(watch.handle);
      }
    }
    std::vector<std::tuple<int64_t, Status, FailedTask>> failures;
    std::vector<std::unique_ptr<Call>> calls;
    if (!CheckTasks(targets, requests, options.timeout, stop, &calls)) return failures;
    for (const auto& [id, watch] : of) {
      for (const auto& task : watch.tasks) {
        Status status = TaskFailure(*task, *calls[index[task.get()]], &watch.handle, options);
        if (status.ok()) continue;
        failures.emplace_back(id, status, FailedTask{task->name, task->address});
        break;
      }
    }
    return failures;
  }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      if (watches.empty()) {
        wake.wait(lock, [&] { return stopping || !watches.empty(); });
        continue;
      }
      std::map<int64_t, Watch> of = watches;
      lock.unlock();
      auto failures = Round(of, &stop_flag);
      for (auto& [id, status, task] : failures) {
        // Each failed watch is reported once, unless removed meanwhile.
        std::lock_guard<std::mutex> callback_lock(callback_mu);
        Callback on_failure;
        {
          std::lock_guard<std::mutex> watches_lock(mu);
          auto it = watches.find(id);
          if (it == watches.end()) continue;
          on_failure = std::move(it->second.on_failure);
          watches.erase(it);
        }
        if (on_failure) on_failure(status, task);
      }
      lock.lock();
      wake.wait_for(lock, options.interval, [&] { return stopping; });
    }
  }
};

SharedHealthMonitor::SharedHealthMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SharedHealthMonitor::~SharedHealthMonitor() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->stop_flag = true;
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

StatusOr<std::shared_ptr<SharedHealthMonitor>> SharedHealthMonitor::Create(
    const HealthMonitorOptions& options) {
  WEIR_RETURN_IF_ERROR(ValidateOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  return std::shared_ptr<SharedHealthMonitor>(new SharedHealthMonitor(std::move(impl)));
}

StatusOr<int64_t> SharedHealthMonitor::Add(const ClusterSpec& cluster, const std::string& handle,
                                           Callback on_failure) {
  if (cluster.empty()) return errors::InvalidArgument("health monitor: the cluster has no tasks");
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Watch watch;
  watch.handle = handle;
  watch.on_failure = std::move(on_failure);
  for (const auto& [job, tasks] : cluster.jobs()) {
    for (const auto& [index, address] : tasks) {
      std::string name = ClusterSpec::TaskName(job, index);
      std::shared_ptr<Task>& task = impl_->tasks[name + "@" + address];
      if (task == nullptr) {
        StatusOr<std::unique_ptr<wire::WorkerService::Stub>> stub =
            MakeStub(address, impl_->options.channel);
        if (!stub.ok()) {
          impl_->tasks.erase(name + "@" + address);
          return stub.status();
        }
        task = std::make_shared<Task>(Task{name, address, std::move(*stub)});
      }
      watch.tasks.push_back(task);
    }
  }
  const int64_t id = impl_->next_id++;
  impl_->watches[id] = std::move(watch);
  if (!impl_->thread.joinable())
    impl_->thread = std::thread([impl = impl_.get()] { impl->Loop(); });
  impl_->wake.notify_all();
  return id;
}

void SharedHealthMonitor::Remove(int64_t id) {
  std::lock_guard<std::mutex> callback_lock(impl_->callback_mu);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->watches.erase(id);
}

Status SharedHealthMonitor::CheckNow(int64_t id, FailedTask* failed) {
  std::map<int64_t, Impl::Watch> of;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->watches.find(id);
    if (it == impl_->watches.end()) return Status::OK();  // failed or removed: reported once
    Impl::Watch& watch = of[id];
    watch.tasks = it->second.tasks;
    watch.handle = it->second.handle;
  }
  auto failures = impl_->Round(of, nullptr);
  if (failures.empty()) return Status::OK();
  if (failed != nullptr) *failed = std::get<2>(failures[0]);
  return std::get<1>(failures[0]);
}

int SharedHealthMonitor::num_watches() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return static_cast<int>(impl_->watches.size());
}

}  // namespace weir
