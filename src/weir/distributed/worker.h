// Worker: the in-process logic of the worker service (one task's side of a
// distributed step); distributed/worker_service.cc is its gRPC face.
//
// A master creates a worker session, registers each partition of a step
// signature that runs on this task once (RegisterGraph: imported and built
// into one executor per device, kept under a graph handle), then runs it
// once per step (RunGraph: feeds in, fetches out, by name). The step's
// values cross tasks through a RemoteRendezvous per step id, created by the
// first RunGraph or RecvTensor that names the step and dropped by
// CleanupGraph, which also aborts the step if it still runs.
//
// Leases: a master may create a session under a lease (CreateWorkerSession's
// lease_ms) that it renews with its health checks (RenewLeases, behind
// GetStatus). When a lease runs out (the master died, hung or was cut off)
// the worker drops the session as if the master had deleted it and aborts
// its running steps (their Recvs and blocked queue ops are cancelled), and
// logs one line naming the session and the master's task. Resources are not
// the session's (they live in the task's shared "localhost" container) and
// stay. Later calls naming the session are Aborted saying the lease expired.
//
// Thread-safe: every method may be called concurrently (gRPC's threads).
// Errors name this task; a malformed request (unknown handle, a graph that
// fails import, a tensor whose declared size it does not carry) is an error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "weir/base/status.h"
#include "weir/base/threadpool.h"
#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/credentials.h"
#include "weir/framework/tensor.h"

namespace weir {

class DeviceMgr;
class RemoteRendezvous;
class WorkerClient;

namespace wire {
class CreateWorkerSessionRequest;
class DeleteWorkerSessionRequest;
class GetStatusRequest;
class GetStatusResponse;
class RegisterGraphRequest;
class RegisterGraphResponse;
class DeregisterGraphRequest;
class RunGraphRequest;
class RunGraphResponse;
class CleanupGraphRequest;
class CleanupAllRequest;
class RecvTensorRequest;
}  // namespace wire

class Worker {
 public:
  // Serves task `config.task` of `config.job` with `devices` (borrowed; must
  // outlive the worker). Clients of the other tasks are made on first use,
  // with `peer_options` (the task's CA, token and message limit).
  Worker(ClusterConfig config, DeviceMgr* devices, int inter_op_threads,
         ChannelOptions peer_options = ChannelOptions());
  ~Worker();

  // A new session, under a lease if request.lease_ms() > 0 (at most 24 h).
  Status CreateWorkerSession(const wire::CreateWorkerSessionRequest& request);
  // Drops the session's graphs. Resources stay: sessions share each task's
  // default container ("localhost"), as TensorFlow's servers do. Deleting a
  // session whose lease expired is OK (it is gone already).
  Status DeleteWorkerSession(const wire::DeleteWorkerSessionRequest& request);
  // Renews the lease of every session request.renew_session_handle()
  // names; those this task does not hold go to response's
  // lost_session_handle. InvalidArgument (nothing renewed) for more than
  // 4096 handles or a handle over 256 bytes.
  Status RenewLeases(const wire::GetStatusRequest& request, wire::GetStatusResponse* response);
  Status RegisterGraph(const wire::RegisterGraphRequest& request,
                       wire::RegisterGraphResponse* response);
  Status DeregisterGraph(const wire::DeregisterGraphRequest& request);
  // Runs the registered graph for one step and waits for it. An error
  // because this task does not hold the request's session (never created,
  // deleted, expired) also sets response->lost_session_handle() (the
  // handle's first 256 bytes), which masters read instead of the text.
  Status RunGraph(const wire::RunGraphRequest& request, wire::RunGraphResponse* response);
  Status CleanupGraph(const wire::CleanupGraphRequest& request);
  Status CleanupAll(const wire::CleanupAllRequest& request);
  // Answers when the value is sent on this task (or the step is aborted):
  // `done` gets the value itself (shared, not copied), which the service
  // writes to the wire (wire_tensor.h).
  using RecvTensorDone = std::function<void(const Status&, const Tensor& value, bool is_dead)>;
  void RecvTensorAsync(const wire::RecvTensorRequest& request, RecvTensorDone done);

  // Drops the state of a step that only RecvTensor calls created (no
  // RunGraph of it came): what a RecvTensor whose caller gave up calls, so
  // that requests for steps that never run (a hostile or confused peer)
  // leave nothing behind.
  void ForgetOrphanStep(int64_t step_id);

  // Aborts every step with state on this task with `status` (steps blocked
  // in a queue op or a Recv included), so that a stopping server's calls in
  // flight return.
  void AbortAllSteps(const Status& status);

  // Called with a step's id once the step is aborted or cleaned up on this
  // task (outside the worker's lock): the bulk-transfer sender drops the
  // step's tickets (bulk_transfer.h). Set before serving; null: none.
  void SetStepEndObserver(std::function<void(int64_t step_id)> observer);

  // The client of the task that owns `device` ("/job:ps/replica:0/task:0/
  // device:CPU:0"), or of task `task` of `job`.
  StatusOr<WorkerClient*> ClientForDevice(const std::string& device);
  // A task whose port in the cluster spec is 0 is FailedPrecondition naming
  // it, unless it is this task and SetOwnAddress gave its real address.
  StatusOr<WorkerClient*> ClientForTask(const std::string& job, int task);
  // The address this task's server bound, for a cluster spec that gives
  // this task port 0 ("localhost:0": any free port): calls to this task
  // (its master's to its own worker) use it. Called by Server::Start.
  void SetOwnAddress(const std::string& address);

  const std::string& task_name() const { return task_name_; }
  const ClusterConfig& config() const { return config_; }
  // The TLS, token and limits this task calls its peers with.
  const ChannelOptions& peer_options() const { return peer_options_; }
  DeviceMgr* devices() const { return devices_; }
  // Steps with state on this task, and live sessions (for tests).
  int num_steps() const;
  int num_sessions() const;
  std::vector<std::string> session_handles() const;

  struct Session;
  struct RegisteredGraph;
  struct Step;

 private:
  StatusOr<std::shared_ptr<Session>> FindSession(const std::string& handle) const;
  // Drops the step's state (remembering its id) and aborts it with
  // `status` if it still runs.
  void AbortStep(int64_t step_id, const Status& status);
  // The step's state, created if new; Aborted if the step was cleaned up.
  StatusOr<std::shared_ptr<Step>> GetOrCreateStep(int64_t step_id, int64_t timeout_ms);
  // Marks `step` as `session`'s (so that the session's expiry aborts it);
  // the expiry's error if the session went meanwhile.
  Status AttachStep(const std::shared_ptr<Step>& step, const std::shared_ptr<Session>& session);
  // Drops sessions whose lease ran out, until the destructor: a thread
  // that sleeps until the earliest lease deadline.
  void ExpireLeases();
  // Drops `session` (expired) and aborts its steps. REQUIRES: not holding mu_.
  void DropExpiredSession(const std::shared_ptr<Session>& session);

  const ClusterConfig config_;
  const std::string task_name_;
  DeviceMgr* const devices_;
  std::unique_ptr<ThreadPool> inter_op_pool_;
  std::function<void(std::function<void()>)> runner_;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  // Sessions dropped when their lease expired: handle -> why (bounded).
  std::map<std::string, std::string> expired_sessions_;
  std::deque<std::string> expired_order_;  // their age, oldest first
  std::condition_variable lease_wake_;     // a new lease, or the destructor
  bool stopping_ = false;
  std::thread lease_thread_;
  std::unordered_map<int64_t, std::shared_ptr<Step>> steps_;
  std::set<int64_t> cleaned_steps_;     // recently cleaned, refused if named again
  std::deque<int64_t> cleaned_order_;   // their age, oldest first
  int64_t next_graph_ = 0;
  std::function<void(int64_t)> step_end_observer_;  // guarded by mu_
  const ChannelOptions peer_options_;
  std::map<std::string, std::unique_ptr<WorkerClient>> clients_;  // by task name
  std::string own_address_;  // SetOwnAddress's; empty: the cluster spec's
};

}  // namespace weir
