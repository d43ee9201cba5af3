// WorkerClient: calls one task's worker service. Every call has a deadline;
// an unreachable or dead task is Unavailable (or DeadlineExceeded) naming
// its address, never a hang.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/distributed/server.h"

namespace weir {

class WorkerClient {
 public:
  // A client of the task at `address` ("host:port"). Connects lazily: this
  // never fails for an unreachable address; the first call does.
  static StatusOr<std::unique_ptr<WorkerClient>> Create(const std::string& address);
  ~WorkerClient();

  // The task's devices. `timeout` bounds the whole call, connecting included.
  StatusOr<std::vector<DeviceAttributes>> GetStatus(std::chrono::milliseconds timeout);

  const std::string& address() const { return address_; }

 private:
  struct Impl;
  explicit WorkerClient(std::string address);

  std::string address_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir
