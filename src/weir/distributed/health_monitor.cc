#include "weir/distributed/health_monitor.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
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
    grpc::CompletionQueue queue;
    std::vector<std::unique_ptr<Call>> calls;
    wire::GetStatusRequest request;
    for (const std::string& handle : options.renew_sessions) {
      request.add_renew_session_handle(handle);
    }
    auto deadline = std::chrono::system_clock::now() + options.timeout;
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto call = std::make_unique<Call>();
      call->context.set_deadline(deadline);
      call->reader = tasks[i].stub->AsyncGetStatus(&call->context, request, &queue);
      call->reader->Finish(&call->response, &call->status, reinterpret_cast<void*>(i));
      calls.push_back(std::move(call));
    }
    size_t pending = calls.size();
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
        for (auto& call : calls) call->context.TryCancel();
        cancelled = true;
      }
    }
    queue.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (queue.Next(&tag, &ok)) {
    }
    if (cancelled) return Status::OK();
    for (size_t i = 0; i < calls.size(); ++i) {
      const grpc::Status& status = calls[i]->status;
      if (status.ok()) {
        const wire::GetStatusResponse& response = calls[i]->response;
        if (response.lost_session_handle_size() == 0) continue;
        if (failed != nullptr) *failed = FailedTask{tasks[i].name, tasks[i].address};
        return errors::Aborted("task ", tasks[i].name, " at ", tasks[i].address,
                               " no longer holds worker session '",
                               response.lost_session_handle(0).substr(0, 256),
                               "' (its lease expired, or the task restarted)");
      }
      if (failed != nullptr) *failed = FailedTask{tasks[i].name, tasks[i].address};
      Status cause = FromGrpcCallStatus(status, "GetStatus", options.channel);
      std::string why =
          status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
              ? StrCat("no answer within ", options.timeout.count(), " ms (", cause.ToString(), ")")
              : cause.ToString();
      return errors::Unavailable("task ", tasks[i].name, " at ", tasks[i].address,
                                 " failed its health check: ", why);
    }
    return Status::OK();
  }
};

HealthMonitor::HealthMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HealthMonitor::~HealthMonitor() { Stop(); }

StatusOr<std::unique_ptr<HealthMonitor>> HealthMonitor::Create(
    const ClusterSpec& cluster, const HealthMonitorOptions& options) {
  if (cluster.empty()) return errors::InvalidArgument("health monitor: the cluster has no tasks");
  if (options.interval.count() < 0 || options.timeout.count() <= 0) {
    return errors::InvalidArgument("health monitor: interval ", options.interval.count(),
                                   " ms must be >= 0 and timeout ", options.timeout.count(),
                                   " ms > 0");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  for (const auto& [job, tasks] : cluster.jobs()) {
    for (const auto& [index, address] : tasks) {
      StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(address, options.channel);
      if (!channel.ok()) {
        return Status(channel.status().code(),
                      StrCat("health monitor of ", address, ": ", channel.status().message()));
      }
      impl->tasks.push_back(
          Task{ClusterSpec::TaskName(job, index), address, wire::WorkerService::NewStub(*channel)});
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

}  // namespace weir
