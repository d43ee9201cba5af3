// LocalRendezvous: the in-process Rendezvous, one per step. A table from key
// to either a sent value waiting for its Recv or a Recv waiting for its
// value. Waiting costs no thread: the waiter is a callback.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "weir/framework/rendezvous.h"

namespace weir {

class LocalRendezvous final : public Rendezvous {
 public:
  LocalRendezvous() = default;
  ~LocalRendezvous() override;

  Status Send(const ParsedKey& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const ParsedKey& key, CancellationManager* cancellation,
                 DoneCallback done) override;
  void StartAbort(const Status& status) override;

 private:
  struct Item {
    bool has_value = false;
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;
    CancellationManager* cancellation = nullptr;
    int64_t token = -1;
  };

  std::mutex mu_;
  std::unordered_map<std::string, Item> table_;
  Status status_;  // non-OK once aborted
};

}  // namespace weir
