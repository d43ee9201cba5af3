// Coordinator: stops a group of threads together and hands their first error
// to the caller (tf.train.Coordinator).
//
//   Coordinator coordinator;
//   WEIR_RETURN_IF_ERROR(runner.Start(session, &coordinator));
//   while (!coordinator.ShouldStop()) { ...train; on OutOfRange RequestStop()... }
//   coordinator.RequestStop();
//   WEIR_RETURN_IF_ERROR(coordinator.Join());
//
// Thread-safe. A thread that does not end within Join's grace is named in
// Join's DeadlineExceeded and left running (a later Join may still join it;
// the destructor detaches it). It shares only a reference-counted state with
// the coordinator, so the coordinator may be destroyed and the process may
// exit while it runs (exit ends it). What its function captured must
// outlive it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "weir/base/status.h"

namespace weir {

class Coordinator {
 public:
  Coordinator();
  // Requests stop and joins the threads, waiting at most the last Join's
  // grace (120 s if none); threads still running are detached, logged.
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Wakes every WaitForStop and runs the stop callbacks. Idempotent.
  void RequestStop();
  bool ShouldStop() const;

  // Records the first error that is not OutOfRange (a clean end of input)
  // or a Cancelled arriving once stop was requested (the stop's own
  // effect), and requests stop. OK statuses are ignored.
  void ReportError(const Status& status);
  // The recorded error (OK if none).
  Status error() const;

  // Blocks until stop is requested or `timeout` passes; returns ShouldStop().
  bool WaitForStop(std::chrono::milliseconds timeout);

  // Runs `callback` (on the requesting thread, outside the lock) when stop
  // is requested; at once if it already was.
  void CallOnStop(std::function<void()> callback);

  // Starts a thread running fn(); Join waits for it.
  void StartThread(std::string name, std::function<void()> fn);

  // Waits for every thread: after stop was requested, at most `grace` more;
  // DeadlineExceeded naming the threads still running if they do not end in
  // time; otherwise the first reported error (OK if none).
  Status Join(std::chrono::milliseconds grace = std::chrono::seconds(120));

  // Threads started and not yet joined (running, or ended and not joined).
  int num_unjoined_threads() const;

 private:
  struct State;
  // Shared with every thread started, so a detached thread never outlives it.
  std::shared_ptr<State> state_;
};

}  // namespace weir
