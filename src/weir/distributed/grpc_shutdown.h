// A prompt, graceful stop of a gRPC server. gRPC's Shutdown(deadline) waits
// until the deadline whenever a client keeps a connection open, even with no
// call in flight; so the server counts its calls in flight (an interceptor
// sees each from arrival to completion), waits for them to finish (at most
// a grace period), and then shuts down at once, cancelling what is left and
// dropping idle connections. Internal to the distributed layer's .cc files
// that speak gRPC.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace weir {

class InflightCalls {
 public:
  // An interceptor factory for ServerBuilder::experimental().
  // SetInterceptorCreators that counts this server's calls. REQUIRES: this
  // object outlives the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeFactory();

  // Waits until no call is in flight or `grace` has passed; true if none is.
  bool WaitForNone(std::chrono::milliseconds grace);
  int count() const;

  void Add();
  void Remove();

 private:
  mutable std::mutex mu_;
  std::condition_variable none_;
  int count_ = 0;
};

// Lets calls in flight finish (at most `grace`), then shuts `server` down
// at once. Returns after the server has shut down.
void ShutdownPromptly(grpc::Server* server, InflightCalls* calls, std::chrono::milliseconds grace);

}  // namespace weir
