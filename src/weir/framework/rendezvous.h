// Rendezvous: where a _Send and its _Recv meet. A key names the source
// device, the destination device, the edge and the loop iteration; whichever
// side arrives first waits (without a thread) for the other. The runtime
// implements it in process (runtime/local_rendezvous); the distributed
// runtime across tasks.
#pragma once

#include <functional>
#include <string>

#include "weir/base/status.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/tensor.h"

namespace weir {

class CancellationManager;

class Rendezvous {
 public:
  struct ParsedKey {
    std::string src_device;
    uint64_t src_incarnation = 0;
    std::string dst_device;
    std::string edge_name;
    FrameAndIter frame_iter;
    std::string full_key;  // the string the fields were parsed from
  };

  // "src;incarnation;dst;edge;frame:iter".
  static std::string CreateKey(const std::string& src_device, uint64_t src_incarnation,
                               const std::string& dst_device, const std::string& edge_name,
                               const FrameAndIter& frame_iter);
  static StatusOr<ParsedKey> ParseKey(const std::string& key);

  // Called with the value (or the error that ended the wait).
  using DoneCallback = std::function<void(const Status& status, const Tensor& value,
                                          bool is_dead)>;

  virtual ~Rendezvous() = default;
  // Error if the rendezvous was aborted or the key was already sent.
  virtual Status Send(const ParsedKey& key, const Tensor& value, bool is_dead) = 0;
  // `done` runs once, when the value arrives, the rendezvous is aborted, or
  // `cancellation` (may be null) is cancelled.
  virtual void RecvAsync(const ParsedKey& key, CancellationManager* cancellation,
                         DoneCallback done) = 0;
  // Fails every pending and future Send/Recv with `status`.
  virtual void StartAbort(const Status& status) = 0;
};

}  // namespace weir
