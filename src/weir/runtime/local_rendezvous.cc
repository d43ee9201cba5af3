#include "weir/runtime/local_rendezvous.h"

#include <vector>

#include "weir/base/cancellation.h"

namespace weir {

LocalRendezvous::~LocalRendezvous() {
  StartAbort(errors::Cancelled("rendezvous destroyed while a Recv was waiting"));
}

Status LocalRendezvous::Send(const ParsedKey& key, const Tensor& value, bool is_dead) {
  DoneCallback waiter;
  CancellationManager* cancellation = nullptr;
  int64_t token = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    Item& item = table_[key.full_key];
    if (item.has_value) {
      return errors::Internal("tensor '", key.edge_name, "' sent twice in one step (key ",
                              key.full_key, ")");
    }
    if (!item.waiter) {
      item.has_value = true;
      item.value = value;
      item.is_dead = is_dead;
      return Status::OK();
    }
    waiter = std::move(item.waiter);
    cancellation = item.cancellation;
    token = item.token;
    table_.erase(key.full_key);
  }
  // Whoever takes the waiter out of the table under the lock (this Send, the
  // cancellation callback or StartAbort) is the one that calls it.
  if (cancellation != nullptr) cancellation->DeregisterCallback(token);
  waiter(Status::OK(), value, is_dead);
  return Status::OK();
}

void LocalRendezvous::RecvAsync(const ParsedKey& key, CancellationManager* cancellation,
                                DoneCallback done) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!status_.ok()) {
    Status status = status_;
    lock.unlock();
    done(status, Tensor(), false);
    return;
  }
  auto it = table_.find(key.full_key);
  if (it != table_.end() && it->second.has_value) {
    Tensor value = std::move(it->second.value);
    bool is_dead = it->second.is_dead;
    table_.erase(it);
    lock.unlock();
    done(Status::OK(), value, is_dead);
    return;
  }
  if (it != table_.end() && it->second.waiter) {
    lock.unlock();
    done(errors::Internal("two Recvs wait for tensor '", key.edge_name, "'"), Tensor(), false);
    return;
  }
  Item& item = table_[key.full_key];
  item.cancellation = cancellation;
  if (cancellation != nullptr) {
    item.token = cancellation->GetToken();
    std::string full_key = key.full_key;
    std::string edge = key.edge_name;
    bool registered = cancellation->RegisterCallback(item.token, [this, full_key, edge] {
      DoneCallback waiter;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto found = table_.find(full_key);
        if (found == table_.end() || !found->second.waiter) return;
        waiter = std::move(found->second.waiter);
        table_.erase(found);
      }
      waiter(errors::Cancelled("step cancelled while receiving tensor '", edge, "'"), Tensor(),
             false);
    });
    if (!registered) {
      table_.erase(key.full_key);
      lock.unlock();
      done(errors::Cancelled("step cancelled before receiving tensor '", key.edge_name, "'"),
           Tensor(), false);
      return;
    }
  }
  item.waiter = std::move(done);
}

void LocalRendezvous::StartAbort(const Status& status) {
  std::vector<std::pair<DoneCallback, std::pair<CancellationManager*, int64_t>>> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = status;
    for (auto& [key, item] : table_) {
      if (item.waiter) {
        waiters.push_back({std::move(item.waiter), {item.cancellation, item.token}});
      }
    }
    table_.clear();
  }
  for (auto& [waiter, registration] : waiters) {
    auto [cancellation, token] = registration;
    if (cancellation != nullptr) cancellation->DeregisterCallback(token);
    waiter(status, Tensor(), false);
  }
}

}  // namespace weir
