// QueueRunner: the threads that keep a queue filled (tf.train.QueueRunner).
//
// Start runs one thread per enqueue op, each running its op as a target
// again and again until the coordinator stops or the op fails:
// - OutOfRange (the op's input is exhausted): the thread ends; when every
//   thread has ended so, the close op runs, so consumers drain the queue
//   and then get OutOfRange themselves.
// - Cancelled once stop was requested, or once the queue is closed (asked
//   through the is_closed op, if given): the thread ends quietly.
// - any other error goes to Coordinator::ReportError, which stops the rest.
// A further thread waits for the stop and then runs the cancel op (a
// QueueCloseV2 with cancel_pending_enqueues) so enqueues blocked on a full
// queue and dequeues blocked on an empty one wake up.
//
// The runner holds only node names: it may be copied, and destroyed once
// started; the session and coordinator must outlive the threads (Join).
#pragma once

#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/runtime/session.h"
#include "weir/train/coordinator.h"

namespace weir {

class QueueRunner {
 public:
  QueueRunner() = default;
  // `is_closed_op`: optional, a QueueIsClosedV2 node of the queue.
  QueueRunner(std::string queue_name, std::vector<std::string> enqueue_ops, std::string close_op,
              std::string cancel_op, std::string is_closed_op = "");

  // Starts the threads on `coordinator`. InvalidArgument without enqueue
  // ops; the session's error if an enqueue op cannot be compiled.
  Status Start(Session* session, Coordinator* coordinator);

  const std::string& queue_name() const { return queue_name_; }
  const std::vector<std::string>& enqueue_ops() const { return enqueue_ops_; }
  const std::string& close_op() const { return close_op_; }
  const std::string& cancel_op() const { return cancel_op_; }

 private:
  std::string queue_name_;
  std::vector<std::string> enqueue_ops_;
  std::string close_op_;
  std::string cancel_op_;
  std::string is_closed_op_;
};

}  // namespace weir
