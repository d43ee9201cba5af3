// HealthMonitor: watches every task of a cluster with GetStatus calls, each
// with a deadline, and reports the first task that fails one as Unavailable
// naming its job, task and address. A dead process (connection refused) is
// seen at the next round; a host cut off the network at the deadline of the
// call in flight, so a failure is reported within about interval + timeout.
//
//   WEIR_ASSIGN_OR_RETURN(auto monitor, HealthMonitor::Create(cluster, options));
//   WEIR_RETURN_IF_ERROR(monitor->CheckNow());            // one round, now
//   monitor->Start([](const Status& failure) { ... });    // or in the background
//   ... monitor->status() ...                             // OK or the first failure
//   monitor->Stop();                                      // prompt; the destructor does it
//
// Thread-safe: CheckNow, status and Stop may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/credentials.h"

namespace weir {

struct HealthMonitorOptions {
  // The pause between the end of one round of checks and the next.
  std::chrono::milliseconds interval{500};
  // The deadline of each GetStatus call (connecting included).
  std::chrono::milliseconds timeout{1500};
  // TLS, token and limits of the calls (a task's PeerChannelOptions).
  ChannelOptions channel;
  // Worker sessions every check renews the lease of (a master's): each task
  // must hold all of them. A task that answers it no longer holds one (its
  // lease expired, or it restarted) fails the check with Aborted.
  std::vector<std::string> renew_sessions;
};

// The task a failed check names (empty while every check passed).
struct FailedTask {
  std::string name;     // "/job:ps/replica:0/task:0"
  std::string address;  // "10.0.0.3:2222"
};

class HealthMonitor {
 public:
  // A monitor of every task of `cluster` (an empty cluster is an error).
  // Connects lazily; nothing runs until CheckNow or Start.
  static StatusOr<std::unique_ptr<HealthMonitor>> Create(const ClusterSpec& cluster,
                                                         const HealthMonitorOptions& options);
  ~HealthMonitor();

  // One round: GetStatus to every task at once, each with the deadline.
  // OK if all answered; else Unavailable naming the first failed task (in
  // job and task order): "task /job:ps/replica:0/task:0 at 10.0.0.3:2222
  // failed its health check: ...". Takes at most about `timeout`. A task
  // that lost a session of `renew_sessions` is Aborted: "task ... at ...
  // no longer holds worker session '...' ...". The failed task goes to
  // `failed` (if not null).
  Status CheckNow(FailedTask* failed = nullptr);

  // Runs rounds in a background thread until Stop or the first failure,
  // which is kept (status(), failed_task()) and passed once to
  // `on_failure` (may be null) on that thread, after both are set.
  // FailedPrecondition if started before.
  Status Start(std::function<void(const Status&)> on_failure);
  // Ends the background thread (waits at most for the round in flight) and
  // joins it. Idempotent.
  void Stop();

  // OK, or the first failure the background rounds saw (it stays).
  Status status() const;
  // The task of status()'s failure.
  FailedTask failed_task() const;

 private:
  struct Impl;
  explicit HealthMonitor(std::unique_ptr<Impl> impl);
  void Loop(std::function<void(const Status&)> on_failure);

  std::unique_ptr<Impl> impl_;
};

// One background thread that checks the tasks of many sessions (a master's
// sessions share one): each session adds a watch of its tasks and the
// handle whose lease the checks renew. Every round sends one GetStatus per
// task, renewing the handles of every watch that has it. A watch fails at
// its first failed task (in job and task order): Unavailable if the task
// failed the check, Aborted if it lost that watch's session; its callback
// runs once, on the monitor's thread, and the watch goes. Other watches go
// on.
//
// Thread-safe. `options.renew_sessions` is unused (each watch has its own).
class SharedHealthMonitor {
 public:
  using Callback = std::function<void(const Status&, const FailedTask&)>;

  // InvalidArgument for a negative interval or a timeout <= 0.
  static StatusOr<std::shared_ptr<SharedHealthMonitor>> Create(const HealthMonitorOptions& options);
  // Stops the thread (prompt: it cancels the round in flight).
  ~SharedHealthMonitor();

  // Watches the tasks of `cluster` (not empty), renewing `handle` on each
  // (empty: none), until Remove or its first failure. Starts the thread on
  // first use. The watch's id.
  StatusOr<int64_t> Add(const ClusterSpec& cluster, const std::string& handle, Callback on_failure);
  // Ends the watch; its callback does not run after Remove returns (waits
  // for one running). REQUIRES: not called from a callback.
  void Remove(int64_t id);
  // One round over the watch's tasks now (its callback is not called; the
  // failed task goes to `failed`). OK if the watch has failed or gone.
  Status CheckNow(int64_t id, FailedTask* failed);
  // Live watches (for tests).
  int num_watches() const;

 private:
  struct Impl;
  explicit SharedHealthMonitor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir
