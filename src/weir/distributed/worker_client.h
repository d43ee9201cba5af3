// WorkerClient: calls one task's worker service. Every call has a deadline;
// an unreachable or dead task is Unavailable (or DeadlineExceeded) naming
// its address, never a hang.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/distributed/credentials.h"
#include "weir/distributed/server.h"
#include "weir/framework/tensor.h"

namespace weir {

namespace wire {
class CreateWorkerSessionRequest;
class CreateWorkerSessionResponse;
class DeleteWorkerSessionRequest;
class DeleteWorkerSessionResponse;
class RegisterGraphRequest;
class RegisterGraphResponse;
class DeregisterGraphRequest;
class DeregisterGraphResponse;
class RunGraphRequest;
class RunGraphResponse;
class CleanupGraphRequest;
class CleanupGraphResponse;
class CleanupAllRequest;
class CleanupAllResponse;
class RecvTensorRequest;
}  // namespace wire

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

  // The rest of the worker service (proto/worker_service.proto). Errors
  // name the call and the address. `timeout` bounds each call.
  Status CreateWorkerSession(const wire::CreateWorkerSessionRequest& request,
                             wire::CreateWorkerSessionResponse* response,
                             std::chrono::milliseconds timeout);
  Status DeleteWorkerSession(const wire::DeleteWorkerSessionRequest& request,
                             wire::DeleteWorkerSessionResponse* response,
                             std::chrono::milliseconds timeout);
  Status RegisterGraph(const wire::RegisterGraphRequest& request,
                       wire::RegisterGraphResponse* response, std::chrono::milliseconds timeout);
  Status DeregisterGraph(const wire::DeregisterGraphRequest& request,
                         wire::DeregisterGraphResponse* response,
                         std::chrono::milliseconds timeout);
  Status RunGraph(const wire::RunGraphRequest& request, wire::RunGraphResponse* response,
                  std::chrono::milliseconds timeout);
  Status CleanupGraph(const wire::CleanupGraphRequest& request,
                      wire::CleanupGraphResponse* response, std::chrono::milliseconds timeout);
  Status CleanupAll(const wire::CleanupAllRequest& request, wire::CleanupAllResponse* response,
                    std::chrono::milliseconds timeout);

  // Asynchronous calls: `done` runs once, on a gRPC thread, when the call
  // ends. `request` and `response` must stay valid until then. The returned
  // function cancels the call (done then gets Cancelled); it may be called
  // any number of times, also after done.
  using Cancel = std::function<void()>;
  Cancel RunGraphAsync(const wire::RunGraphRequest* request, wire::RunGraphResponse* response,
                       std::chrono::milliseconds timeout, std::function<void(Status)> done);
  Cancel CleanupGraphAsync(const wire::CleanupGraphRequest* request,
                           wire::CleanupGraphResponse* response, std::chrono::milliseconds timeout,
                           std::function<void(Status)> done);
  Cancel DeleteWorkerSessionAsync(const wire::DeleteWorkerSessionRequest* request,
                                  wire::DeleteWorkerSessionResponse* response,
                                  std::chrono::milliseconds timeout,
                                  std::function<void(Status)> done);
  // The value's bytes are copied once, from gRPC's buffers into the new
  // tensor's (wire_tensor.h); a value larger than the message limit comes
  // in several messages. With ChannelOptions::bulk_min_bytes on a plaintext
  // channel, a large numeric value may instead be read over the sender's
  // bulk channel straight into the tensor (bulk_transfer.h), within the same
  // `timeout`, on a thread of its own while it reads. `request` need not
  // outlive the call.
  struct RecvTensorResult {
    Status status;           // the call's, or the decoder's
    bool malformed = false;  // the answer failed the decoder's checks (InvalidArgument)
    // The value's read over the bulk channel failed (bulk_transfer.h):
    // Unavailable, DeadlineExceeded, Cancelled or DataLoss naming the address.
    bool bulk_failed = false;
    Tensor value;
    bool is_dead = false;
  };
  using RecvTensorDone = std::function<void(RecvTensorResult)>;
  // A numeric value's buffer comes from `allocator` (the receiving device's;
  // null: DefaultCpuAllocator), which must outlive the call.
  Cancel RecvTensorAsync(const wire::RecvTensorRequest& request, std::chrono::milliseconds timeout,
                         RecvTensorDone done, Allocator* allocator = nullptr);

  const std::string& address() const { return address_; }

 private:
  friend class RunGraphGroup;
  struct Impl;
  WorkerClient(std::string address, ChannelOptions options);

  std::string address_;
  ChannelOptions options_;
  std::unique_ptr<Impl> impl_;
};

// RunGraph to several tasks at once, all on one completion queue that the
// calling thread drains with Next: each call's completion is handled on
// that thread, with no hand-off to and from gRPC's callback threads (a
// step's fan-out costs one wake-up, not one per task).
//
// Start and Next are called from one thread; CancelAll from any thread
// while the group lives. The destructor cancels the calls still in flight
// and waits for them.
class RunGraphGroup {
 public:
  RunGraphGroup();
  ~RunGraphGroup();
  RunGraphGroup(const RunGraphGroup&) = delete;
  RunGraphGroup& operator=(const RunGraphGroup&) = delete;

  // Sends `request` to `client`'s task; `tag` names the call in Next.
  // `request` and `response` must stay valid until Next returned the call.
  // After CancelAll, the call is not sent and ends Cancelled.
  void Start(WorkerClient* client, const wire::RunGraphRequest* request,
             wire::RunGraphResponse* response, std::chrono::milliseconds timeout, int tag);
  // Waits for the next call to end and gives its tag and status (errors
  // name the call and the address, as WorkerClient's). False when no call
  // is in flight.
  bool Next(int* tag, Status* status);
  // Cancels every call in flight and every later one (each ends
  // Cancelled, unless it ended first).
  void CancelAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir
