#include "weir/distributed/remote_rendezvous.h"

#include <vector>

#include "proto/worker_service.pb.h"
#include "weir/base/cancellation.h"
#include "weir/distributed/worker_client.h"

namespace weir {

// A remote call's cancel function, which exists only once the call has
// started; a cancel that comes first is applied then.
struct RemoteRendezvous::CancelSlot {
  void Set(WorkerClient::Cancel function) {
    bool cancel_now;
    {
      std::lock_guard<std::mutex> lock(mu);
      cancel = std::move(function);
      cancel_now = cancelled;
    }
    if (cancel_now) cancel();
  }
  void Cancel() {
    WorkerClient::Cancel function;
    {
      std::lock_guard<std::mutex> lock(mu);
      cancelled = true;
      function = cancel;
    }
    if (function) function();
  }

  std::mutex mu;
  WorkerClient::Cancel cancel;
  bool cancelled = false;
};

RemoteRendezvous::RemoteRendezvous(int64_t step_id, std::string task, ClientForDevice clients,
                                   std::chrono::milliseconds recv_timeout,
                                   AllocatorForDevice allocators)
    : step_id_(step_id),
      task_(std::move(task)),
      clients_(std::move(clients)),
      allocators_(std::move(allocators)),
      recv_timeout_(recv_timeout) {}

RemoteRendezvous::~RemoteRendezvous() {
  StartAbort(errors::Cancelled("the step's state was dropped while a Recv was waiting"));
  // The completions of cancelled calls still use this object.
  std::unique_lock<std::mutex> lock(mu_);
  calls_done_.wait(lock, [this] { return cancels_.empty(); });
}

bool RemoteRendezvous::IsLocal(const std::string& device) const {
  return device.size() > task_.size() && device.compare(0, task_.size(), task_) == 0 &&
         device[task_.size()] == '/';
}

Status RemoteRendezvous::Send(const ParsedKey& key, const Tensor& value, bool is_dead) {
  return local_.Send(key, value, is_dead);
}

void RemoteRendezvous::RecvLocalAsync(const ParsedKey& key, DoneCallback done) {
  local_.RecvAsync(key, nullptr, std::move(done));
}

void RemoteRendezvous::RecvAsync(const ParsedKey& key, CancellationManager* cancellation,
                                 DoneCallback done) {
  if (IsLocal(key.src_device)) {
    local_.RecvAsync(key, cancellation, std::move(done));
    return;
  }
  StatusOr<WorkerClient*> client = clients_(key.src_device);
  if (!client.ok()) {
    done(client.status().WithContext(StrCat("receiving '", key.edge_name, "'")), Tensor(), false);
    return;
  }
  wire::RecvTensorRequest request;
  request.set_step_id(step_id_);
  request.set_rendezvous_key(key.full_key);
  auto slot = std::make_shared<CancelSlot>();
  int64_t id = 0;
  Status aborted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted = status_;
    if (aborted.ok()) {
      id = next_call_++;
      cancels_[id] = slot;
    }
  }
  if (!aborted.ok()) {  // `done` may run more of the step: not under mu_
    done(aborted, Tensor(), false);
    return;
  }
  // Registered before the call starts: once it has started, it may finish,
  // end the step and free `cancellation` (and this rendezvous) at any time,
  // so nothing but `slot` is touched after the start.
  if (cancellation != nullptr) {
    int64_t token = cancellation->GetToken();
    if (!cancellation->RegisterCallback(token, [slot] { slot->Cancel(); })) slot->Cancel();
  }
  std::string edge = key.edge_name;
  std::string peer = key.src_device.substr(0, key.src_device.find("/device:"));
  Allocator* allocator = allocators_ ? allocators_(key.dst_device) : nullptr;
  WorkerClient::Cancel cancel = (*client)->RecvTensorAsync(
      request, recv_timeout_,
      [this, id, edge, peer,
       done = std::move(done)](WorkerClient::RecvTensorResult result) mutable {
        FinishRemote(id);  // the last use of `this`
        Status status = std::move(result.status);
        if (result.malformed || result.bulk_failed) {
          // The bulk channel's own failure (the sender died mid-transfer,
          // the deadline, a cancel) keeps its code.
          status = status.WithContext(StrCat("RecvTensor of '", edge, "' from ", peer));
        } else if (!status.ok() && !errors::IsCancelled(status) &&
                   !errors::IsDeadlineExceeded(status)) {
          // The sender's failure reached this Recv: an echo of the root
          // cause, which the sender reports itself.
          status = errors::Aborted("receiving '", edge, "' from ", peer, ": ", status.message());
        }
        done(status, result.value, result.is_dead);
      },
      allocator);
  slot->Set(std::move(cancel));
}

void RemoteRendezvous::FinishRemote(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  cancels_.erase(id);
  if (cancels_.empty()) calls_done_.notify_all();
}

void RemoteRendezvous::StartAbort(const Status& status) {
  std::vector<std::shared_ptr<CancelSlot>> slots;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = status;
    for (auto& [id, slot] : cancels_) slots.push_back(slot);
  }
  for (auto& slot : slots) slot->Cancel();
  local_.StartAbort(status);
}

}  // namespace weir
