// RemoteRendezvous: one step's Rendezvous on one task of a cluster. A _Send
// always lands in the task's own table (a LocalRendezvous); a _Recv whose
// _Send is on this task waits there, and one whose _Send is on another task
// fetches the value with RecvTensor from that task, which answers from its
// own table. So a value crosses the network once, pulled by its receiver,
// and a task never needs to know where its sends go.
//
// Aborting (an error on this task, CleanupGraph from the master) fails every
// waiting Recv, local or remote: the RecvTensor calls in flight are
// cancelled. A remote failure reaches the Recv as Aborted naming the peer
// task, so that the master can tell the root cause from its echoes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "weir/framework/rendezvous.h"
#include "weir/runtime/local_rendezvous.h"

namespace weir {

class Allocator;
class WorkerClient;

class RemoteRendezvous final : public Rendezvous {
 public:
  // The client of the task that owns `device` (a full device name), or an
  // error naming the device.
  using ClientForDevice = std::function<StatusOr<WorkerClient*>(const std::string& device)>;

  // The allocator of this task's device `device` (a full name), for the
  // values received from other tasks; null: DefaultCpuAllocator.
  using AllocatorForDevice = std::function<Allocator*(const std::string& device)>;

  // `task` is this task's name ("/job:worker/replica:0/task:0"); devices
  // whose name starts with it are local. `recv_timeout` bounds each
  // RecvTensor call. A value received from another task is allocated by
  // `allocators(key.dst_device)` (no function: DefaultCpuAllocator); the
  // allocators must outlive the rendezvous.
  RemoteRendezvous(int64_t step_id, std::string task, ClientForDevice clients,
                   std::chrono::milliseconds recv_timeout, AllocatorForDevice allocators = nullptr);
  ~RemoteRendezvous() override;

  Status Send(const ParsedKey& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const ParsedKey& key, CancellationManager* cancellation,
                 DoneCallback done) override;
  void StartAbort(const Status& status) override;

  // The RecvTensor service's side: waits in this task's table for a value
  // sent here.
  void RecvLocalAsync(const ParsedKey& key, DoneCallback done);

  bool IsLocal(const std::string& device) const;

 private:
  struct CancelSlot;
  void FinishRemote(int64_t id);

  const int64_t step_id_;
  const std::string task_;
  const ClientForDevice clients_;
  const AllocatorForDevice allocators_;
  const std::chrono::milliseconds recv_timeout_;
  LocalRendezvous local_;

  std::mutex mu_;
  Status status_;  // non-OK once aborted
  int64_t next_call_ = 0;
  std::map<int64_t, std::shared_ptr<CancelSlot>> cancels_;  // remote calls in flight
  std::condition_variable calls_done_;                // signalled when cancels_ empties
};

}  // namespace weir
