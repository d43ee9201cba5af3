// QueueRunner end to end on a session: a finite producer's elements arrive
// once each and the queue closes after them; an enqueue op's error reaches
// Join and wakes the consumer; a queue closed by its user ends the threads
// quietly.
#include "weir/train/queue_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "weir/ops/standard_ops.h"
#include "weir/train/variables.h"

namespace weir {
namespace {

// A FIFO queue of int64 scalars named "q", with its close ops.
struct TestQueue {
  Output queue;
  Operation close, cancel;
  Output is_closed, dequeue, size;
};

TestQueue MakeQueue(const Scope& root, int capacity) {
  TestQueue q;
  q.queue =
      ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64},
                       {{"shapes", std::vector<PartialShape>{PartialShape(std::vector<int64_t>{})}},
                        {"capacity", capacity}});
  q.close = ops::QueueCloseV2(root.WithOpName("q/close"), q.queue);
  q.cancel =
      ops::QueueCloseV2(root.WithOpName("q/cancel"), q.queue, {{"cancel_pending_enqueues", true}});
  q.is_closed = ops::QueueIsClosedV2(root.WithOpName("q/is_closed"), q.queue);
  q.dequeue = ops::QueueDequeueV2(root.WithOpName("q/dequeue"), q.queue, {DT_INT64}).output(0);
  q.size = ops::QueueSizeV2(root.WithOpName("q/size"), q.queue);
  return q;
}

std::unique_ptr<Session> NewSession(const Scope& root) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  return std::move(session).value();
}

// Dequeues until the queue reports its end; returns the values and the
// status that ended it.
std::vector<int64_t> DrainQueue(Session* session, const Output& dequeue, Status* end) {
  std::vector<int64_t> values;
  std::vector<Tensor> out;
  while ((*end = session->Run({}, {dequeue.name()}, {}, &out)).ok())
    values.push_back(out[0].scalar<int64_t>());
  return values;
}

TEST(QueueRunnerTest, EveryElementOfAFiniteProducerArrivesOnce) {
  constexpr int kElements = 200;
  Scope root = Scope::NewRootScope();
  TestQueue q = MakeQueue(root, 3);  // small: producers block on it
  auto counter = Variable::Create(root, "counter", ops::Const(root, int64_t{0}));
  ASSERT_TRUE(counter.ok());
  // Each run takes the next value; past kElements, OutOfRange ends the thread.
  Output next = ops::ResourceCountUpTo(root, counter->handle, kElements, DT_INT64);
  Operation enqueue = ops::QueueEnqueueV2(root.WithOpName("q/enqueue"), q.queue, {next});
  auto session = NewSession(root);
  std::vector<Tensor> unused;
  ASSERT_TRUE(session->Run({}, {}, {counter->initializer.name()}, &unused).ok());

  Coordinator coordinator;
  QueueRunner runner("q", std::vector<std::string>(4, enqueue.name()), q.close.name(),
                     q.cancel.name());
  ASSERT_TRUE(runner.Start(session.get(), &coordinator).ok());
  Status end;
  std::vector<int64_t> values = DrainQueue(session.get(), q.dequeue, &end);
  EXPECT_EQ(end.code(), Code::kOutOfRange) << end;
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  EXPECT_FALSE(coordinator.ShouldStop());  // ended by the input, not a stop

  std::sort(values.begin(), values.end());
  std::vector<int64_t> expected(kElements);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(values, expected);
}

TEST(QueueRunnerTest, AnEnqueueOpsErrorReachesJoinAndWakesTheConsumer) {
  Scope root = Scope::NewRootScope();
  TestQueue q = MakeQueue(root, 3);
  // Never initialized: every run fails with FailedPrecondition.
  Output var = ops::VarHandleOp(root.WithOpName("uninitialized"), DT_INT64,
                                PartialShape(std::vector<int64_t>{}));
  Output value = ops::ReadVariableOp(root, var, DT_INT64);
  Operation enqueue = ops::QueueEnqueueV2(root.WithOpName("q/enqueue"), q.queue, {value});
  auto session = NewSession(root);

  Coordinator coordinator;
  Status consumer_end;
  // The consumer waits on the empty queue until the runner's cancel op closes it.
  coordinator.StartThread("consumer", [&] { DrainQueue(session.get(), q.dequeue, &consumer_end); });
  QueueRunner runner("q", {enqueue.name(), enqueue.name()}, q.close.name(), q.cancel.name());
  ASSERT_TRUE(runner.Start(session.get(), &coordinator).ok());
  Status joined = coordinator.Join();
  EXPECT_EQ(joined.code(), Code::kFailedPrecondition) << joined;
  EXPECT_NE(joined.message().find("QueueRunner for queue 'q'"), std::string::npos) << joined;
  EXPECT_NE(joined.message().find("uninitialized"), std::string::npos) << joined;
  EXPECT_EQ(consumer_end.code(), Code::kOutOfRange) << consumer_end;
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
}

TEST(QueueRunnerTest, AQueueClosedByItsUserEndsTheThreadsQuietly) {
  Scope root = Scope::NewRootScope();
  TestQueue q = MakeQueue(root, 2);
  Operation enqueue =
      ops::QueueEnqueueV2(root.WithOpName("q/enqueue"), q.queue, {ops::Const(root, int64_t{7})});
  auto session = NewSession(root);

  Coordinator coordinator;
  QueueRunner runner("q", {enqueue.name(), enqueue.name()}, q.close.name(), q.cancel.name(),
                     q.is_closed.node()->name());
  ASSERT_TRUE(runner.Start(session.get(), &coordinator).ok());
  std::vector<Tensor> out;
  // Wait until the producers fill the queue and block on it, then close it
  // under them: their pending enqueues are cancelled.
  do {
    ASSERT_TRUE(session->Run({}, {q.size.name()}, {}, &out).ok());
  } while (out[0].scalar<int32_t>() < 2);
  ASSERT_TRUE(session->Run({}, {}, {q.cancel.name()}, &out).ok());
  EXPECT_TRUE(coordinator.Join().ok());  // no stop needed, and no error
  EXPECT_FALSE(coordinator.ShouldStop());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  Status end;
  EXPECT_EQ(DrainQueue(session.get(), q.dequeue, &end), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(end.code(), Code::kOutOfRange);
}

TEST(QueueRunnerTest, StartRefusesBadOps) {
  Scope root = Scope::NewRootScope();
  TestQueue q = MakeQueue(root, 2);
  auto session = NewSession(root);
  Coordinator coordinator;
  Status no_ops =
      QueueRunner("q", {}, q.close.name(), q.cancel.name()).Start(session.get(), &coordinator);
  EXPECT_EQ(no_ops.code(), Code::kInvalidArgument) << no_ops;
  Status unknown = QueueRunner("q", {"no_such_op"}, q.close.name(), q.cancel.name())
                       .Start(session.get(), &coordinator);
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("no_such_op"), std::string::npos) << unknown;
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  EXPECT_TRUE(coordinator.Join().ok());
}

TEST(QueueRunnerTest, RunnerMayBeDestroyedOnceStarted) {
  Scope root = Scope::NewRootScope();
  TestQueue q = MakeQueue(root, 4);
  Operation enqueue =
      ops::QueueEnqueueV2(root.WithOpName("q/enqueue"), q.queue, {ops::Const(root, int64_t{3})});
  auto session = NewSession(root);
  Coordinator coordinator;
  {
    QueueRunner runner("q", {enqueue.name()}, q.close.name(), q.cancel.name());
    ASSERT_TRUE(runner.Start(session.get(), &coordinator).ok());
  }
  std::vector<Tensor> out;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(session->Run({}, {q.dequeue.name()}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int64_t>(), 3);
  }
  coordinator.RequestStop();
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
}

}  // namespace
}  // namespace weir
