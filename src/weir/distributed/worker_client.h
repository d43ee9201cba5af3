// WorkerClient: calls one task's worker service. Every call has a deadline;
// an unreachable or dead task is Unavailable (or DeadlineExceeded) naming
// its address, never a hang.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/distributed/credentials.h"
#include "weir/distributed/server.h"

namespace weir {

class WorkerClient {
 public:
  // A client of the task at `address` ("host:port"), plaintext or with the
  // TLS, token and limits of `options`. Connects lazily: this never fails
  // for an unreachable address; the first call does. InvalidArgument for
  // bad options or an unreadable CA file.
  static StatusOr<std::unique_ptr<WorkerClient>> Create(
      const std::string& address, const ChannelOptions& options = ChannelOptions());
  ~WorkerClient();

  // The task's devices. `timeout` bounds the whole call, connecting included.
  StatusOr<std::vector<DeviceAttributes>> GetStatus(std::chrono::milliseconds timeout);

  const std::string& address() const { return address_; }

 private:
  struct Impl;
  WorkerClient(std::string address, ChannelOptions options);

  std::string address_;
  ChannelOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir
