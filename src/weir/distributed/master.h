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
// proto) by handle, each under a client lease: a session that no call of
// its client touched for MasterOptions::client_session_lease (the client
// died, hung or was cut off; a living one renews it with KeepAlive) is
// closed by the master's collector thread, which drops its state on every
// task; later calls naming it are Aborted saying so.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
  // How long the master keeps a session that no call of its client touched
  // (remote clients renew it with KeepAlive every quarter of it); 0: no
  // lease (kept until CloseSession or the server stops).
  std::chrono::milliseconds client_session_lease{60000};

  // InvalidArgument unless interval >= 0, timeout > 0 and the lease is 0 or
  // at least 2 * (interval + timeout): the longest gap between two renewals
  // that a healthy master leaves is about interval + 2 * timeout; and the
  // client lease is 0 or at least kMinClientSessionLease.
  Status Validate() const;
  // Renewed every quarter lease, a client lease under this would be renewed
  // more often than a busy link delivers a small RPC reliably.
  static constexpr std::chrono::milliseconds kMinClientSessionLease{400};
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
  // monitor thread (made with the first session) and, with a client lease,
  // one collector thread.
  explicit Master(Worker* worker, MasterOptions options = MasterOptions());
  ~Master();

  // A new session and its handle.
  StatusOr<std::string> CreateSession(const SessionOptions& options);
  // The session with this handle, renewing its client lease (every call of
  // the master service finds its session here). NotFound for a handle never
  // made or closed; Aborted for one the collector closed ("expired after N
  // ms without a call from its client").
  StatusOr<std::shared_ptr<Session>> Find(const std::string& handle);
  // Closes the session and forgets it (its state on the workers goes, its
  // running steps are aborted). Closing a collected session is OK.
  Status CloseSession(const std::string& handle);
  int num_sessions() const;
  // Sessions the collector closed since the master started.
  int64_t num_expired_sessions() const;
  const MasterOptions& options() const { return options_; }
  // The monitor the sessions share (null before the first session).
  std::shared_ptr<SharedHealthMonitor> health_monitor() const {
    std::lock_guard<std::mutex> lock(mu_);
    return monitor_;
  }

 private:
  Worker* const worker_;
  const MasterOptions options_;
  mutable std::mutex mu_;
  struct Entry {
    std::shared_ptr<Session> session;
    std::chrono::steady_clock::time_point last_call;  // of its client
  };
  // A session the collector took out of sessions_, and why.
  struct Expired {
    std::shared_ptr<Session> session;
    std::string why;
  };
  // Closes the sessions whose client lease ran out, until the destructor:
  // hands them to closer threads (CloseExpiredSessions), at most
  // kMaxConcurrentCloses, started on demand, so that one Close that waits
  // on a hung task (up to the control timeout, 60 s) delays no other.
  void CollectExpiredSessions();
  // One closer thread: closes to_close_'s sessions until the destructor
  // (which lets it finish the queue).
  void CloseExpiredSessions();
  static constexpr size_t kMaxConcurrentCloses = 8;

  std::shared_ptr<SharedHealthMonitor> monitor_;  // sessions hold it too
  std::map<std::string, Entry> sessions_;
  // Why each recently collected handle went (the last kMaxRememberedExpiries).
  std::map<std::string, std::string> expired_;
  std::deque<std::string> expired_order_;
  int64_t num_expired_ = 0;
  std::condition_variable collector_wake_;
  bool stopping_ = false;
  std::thread collector_;  // runs with a client lease only
  // Collected sessions waiting for a closer, and the closers (they stay,
  // idle, until the destructor); closing_: those closing one now.
  std::deque<Expired> to_close_;
  std::vector<std::thread> closers_;
  size_t closing_ = 0;
  std::condition_variable closer_wake_;
};

}  // namespace weir
