#include "weir/train/queue_runner.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

#include "weir/base/logging.h"

namespace weir {
namespace {

// What the threads of one Start share.
struct RunState {
  std::mutex mu;
  std::condition_variable cv;  // stop requested, or an enqueue thread ended
  int live = 0;                // enqueue threads still running
  bool stop = false;
};

bool QueueIsClosed(Session* session, const std::string& is_closed_op) {
  if (is_closed_op.empty()) return false;
  std::vector<Tensor> outputs;
  Status status = session->Run({}, {is_closed_op}, {}, &outputs);
  return status.ok() && outputs.size() == 1 && outputs[0].dtype() == DT_BOOL &&
         outputs[0].NumElements() == 1 && outputs[0].data<bool>()[0];
}

// Runs an op for its effect, logging a failure nobody else will see. A
// closed session (Cancelled) has nothing left to close or wake.
void RunQuietly(Session* session, const std::string& op, const std::string& queue) {
  std::vector<Tensor> unused;
  Status status = session->Run({}, {}, {op}, &unused);
  if (!status.ok() && !errors::IsCancelled(status)) {
    LOG(Warning) << "QueueRunner for queue '" << queue << "': running '" << op
                 << "' failed: " << status;
  }
}

}  // namespace

QueueRunner::QueueRunner(std::string queue_name, std::vector<std::string> enqueue_ops,
                         std::string close_op, std::string cancel_op, std::string is_closed_op)
    : queue_name_(std::move(queue_name)),
      enqueue_ops_(std::move(enqueue_ops)),
      close_op_(std::move(close_op)),
      cancel_op_(std::move(cancel_op)),
      is_closed_op_(std::move(is_closed_op)) {}

Status QueueRunner::Start(Session* session, Coordinator* coordinator) {
  if (enqueue_ops_.empty()) {
    return errors::InvalidArgument("QueueRunner for queue '", queue_name_, "' has no enqueue ops");
  }
  // Compiled up front, so a broken op fails Start rather than a thread.
  std::vector<CallableHandle> callables;
  for (const std::string& op : enqueue_ops_) {
    StatusOr<CallableHandle> handle = session->MakeCallable(CallableOptions{{}, {}, {op}});
    if (!handle.ok()) {
      for (CallableHandle made : callables) (void)session->ReleaseCallable(made);
      return handle.status().WithContext("QueueRunner for queue '" + queue_name_ +
                                         "', enqueue op '" + op + "'");
    }
    callables.push_back(*handle);
  }

  auto state = std::make_shared<RunState>();
  state->live = static_cast<int>(enqueue_ops_.size());
  coordinator->CallOnStop([state] {
    std::lock_guard<std::mutex> lock(state->mu);
    state->stop = true;
    state->cv.notify_all();
  });

  for (size_t i = 0; i < enqueue_ops_.size(); ++i) {
    coordinator->StartThread(
        "QueueRunner '" + queue_name_ + "': " + enqueue_ops_[i],
        [session, coordinator, state, callable = callables[i], op = enqueue_ops_[i],
         queue = queue_name_, close_op = close_op_, is_closed_op = is_closed_op_] {
          Status status;
          std::vector<Tensor> unused;
          while (status.ok() && !coordinator->ShouldStop()) {
            status = session->RunCallable(callable, {}, &unused);
          }
          (void)session->ReleaseCallable(callable);
          const bool quiet = status.ok() || errors::IsOutOfRange(status) ||
                             (errors::IsCancelled(status) &&
                              (coordinator->ShouldStop() || QueueIsClosed(session, is_closed_op)));
          // Reported before this thread counts as ended, so the watcher
          // sees the stop and runs the cancel op.
          if (!quiet) {
            coordinator->ReportError(status.WithContext("QueueRunner for queue '" + queue +
                                                        "', enqueue op '" + op + "'"));
          }
          bool last;
          {
            std::lock_guard<std::mutex> lock(state->mu);
            last = --state->live == 0;
          }
          if (last && errors::IsOutOfRange(status) && !close_op.empty()) {
            RunQuietly(session, close_op, queue);
          }
          std::lock_guard<std::mutex> lock(state->mu);
          state->cv.notify_all();
        });
  }

  // Ends without running anything once every enqueue thread ended with no
  // stop requested: the queue was closed then, nothing waits on it. The
  // coordinator is asked too: a thread may end on a stop whose callback
  // (state->stop) has not run yet.
  coordinator->StartThread(
      "QueueRunner '" + queue_name_ + "': cancel on stop",
      [session, coordinator, state, queue = queue_name_, cancel_op = cancel_op_] {
        {
          std::unique_lock<std::mutex> lock(state->mu);
          state->cv.wait(lock, [&] { return state->stop || state->live == 0; });
        }
        if (coordinator->ShouldStop() && !cancel_op.empty()) RunQuietly(session, cancel_op, queue);
      });
  return Status::OK();
}

}  // namespace weir
