// The master: a Session whose devices are those of every task of a cluster.
//
// MasterSession drives the graph compiler's pipeline unchanged (prune,
// optimize, place, partition) over the devices every task reports with
// GetStatus ("/job:ps/replica:0/task:0/device:CPU:0"), so placement honours
// job and task constraints. Nodes without a device go to the first device
// of the master's own task (cost-model placement is off: it would move
// unconstrained nodes across the network). Each signature's partitions are
// grouped per task and registered with that task's worker once (cached,
// like the local session's executors); a step is then one RunGraph per
// task, with a step id unique across the cluster, followed by CleanupGraph
// on each of those tasks (sent without waiting). The first error on any
// task aborts the step on every other task at once (CleanupGraph cancels
// its executors and its remote Recvs); the client gets that original
// error, which names the task and the node.
//
// Leases: the master creates its session on every other task under a lease
// (MasterOptions::session_lease) and renews it with each of the session's
// health checks; a task whose lease runs out (this process died or was cut
// off) drops the session and aborts its steps (worker.h). A task that no
// longer holds the session fails it like a dead task (Aborted, naming it).
//
// Master keeps the sessions of the master service (proto/master_service.
// proto) by handle.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "weir/distributed/cluster_spec.h"
#include "weir/runtime/session.h"

namespace weir {

class Device;
class SharedHealthMonitor;
class Worker;

struct MasterOptions {
  // How long another task keeps this master's session without hearing from
  // it (every health check renews it); 0: no lease (kept until Close).
  std::chrono::milliseconds session_lease{10000};
  // The health checks of each session's other tasks (health_monitor.h).
  std::chrono::milliseconds health_interval{500};
  std::chrono::milliseconds health_timeout{1500};

  // InvalidArgument unless interval >= 0, timeout > 0 and the lease is 0 or
  // at least 2 * (interval + timeout): the longest gap between two renewals
  // that a healthy master leaves is about interval + 2 * timeout.
  Status Validate() const;
};

// A session on the cluster `worker` belongs to, mastered from `worker`'s
// task (its first CPU device runs constant folding and holds unplaced
// nodes). Contacts every task of the cluster (GetStatus, then
// CreateWorkerSession) before returning; Unavailable naming the task if one
// does not answer within `connect_timeout`. `worker` is borrowed and must
// outlive the session.
// The session's health checks run on `monitor` (shared with other sessions
// of the same master) or, if null, on a monitor of its own.
StatusOr<std::unique_ptr<Session>> NewMasterSession(
    Worker* worker, const SessionOptions& options,
    std::chrono::milliseconds connect_timeout = std::chrono::seconds(10),
    const MasterOptions& master_options = MasterOptions(),
    std::shared_ptr<SharedHealthMonitor> monitor = nullptr);

// A health monitor for the sessions of a master on `worker`'s task.
StatusOr<std::shared_ptr<SharedHealthMonitor>> NewMasterHealthMonitor(
    Worker* worker, const MasterOptions& master_options);

class Master {
 public:
  // REQUIRES: options.Validate() is OK. The sessions share one health
  // monitor thread (made with the first session).
  explicit Master(Worker* worker, MasterOptions options = MasterOptions());
  ~Master();

  // A new session and its handle.
  StatusOr<std::string> CreateSession(const SessionOptions& options);
  // The session with this handle, or NotFound.
  StatusOr<std::shared_ptr<Session>> Find(const std::string& handle) const;
  // Closes the session and forgets it (its state on the workers goes).
  Status CloseSession(const std::string& handle);
  int num_sessions() const;
  // The monitor the sessions share (null before the first session).
  std::shared_ptr<SharedHealthMonitor> health_monitor() const {
    std::lock_guard<std::mutex> lock(mu_);
    return monitor_;
  }

 private:
  Worker* const worker_;
  const MasterOptions options_;
  mutable std::mutex mu_;
  std::shared_ptr<SharedHealthMonitor> monitor_;  // sessions hold it too
  std::map<std::string, std::shared_ptr<Session>> sessions_;
};

}  // namespace weir
