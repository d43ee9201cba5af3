// Shutting an input pipeline down mid-epoch, with producers blocked on a
// full queue and a consumer (and producers) blocked on an empty one: a stop,
// Session::Close or a failing enqueue op ends every thread, and Join gives
// OK or the right error. Here rather than in train/ so it runs under TSan
// and ASan with the runtime (the test binary compiles train/'s Coordinator
// and QueueRunner, which need only the session).
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/coordinator.h"
#include "weir/train/queue_runner.h"

namespace weir {
namespace {

const PartialShape kScalar(std::vector<int64_t>{});

struct Queue {
  Output handle;
  std::string close, cancel, is_closed, size;
};

Queue MakeQueue(const Scope& root, const std::string& name, int capacity) {
  Queue q;
  q.handle =
      ops::FIFOQueueV2(root.WithOpName(name), {DT_FLOAT},
                       {{"shapes", std::vector<PartialShape>{kScalar}}, {"capacity", capacity}});
  q.close = ops::QueueCloseV2(root.WithOpName(name + "/close"), q.handle).name();
  q.cancel = ops::QueueCloseV2(root.WithOpName(name + "/cancel"), q.handle,
                               {{"cancel_pending_enqueues", true}})
                 .name();
  q.is_closed = ops::QueueIsClosedV2(root.WithOpName(name + "/is_closed"), q.handle).node()->name();
  q.size = ops::QueueSizeV2(root.WithOpName(name + "/size"), q.handle).node()->name();
  return q;
}

// "full": three producers of a constant into a queue of two, soon blocked.
// "empty" and "gate": each fed from the other, so both stay empty and their
// producers block in dequeues; the consumer waits on "empty".
struct Pipeline {
  Scope root = Scope::NewRootScope();
  Queue full, empty, gate;
  std::string consume;
  std::vector<QueueRunner> runners;
  std::unique_ptr<Session> session;

  explicit Pipeline(bool with_failing_runner = false) {
    full = MakeQueue(root, "full", 2);
    empty = MakeQueue(root, "empty", 2);
    gate = MakeQueue(root, "gate", 2);
    std::string fill =
        ops::QueueEnqueueV2(root.WithOpName("fill"), full.handle, {ops::Const(root, 1.f)}).name();
    Output from_gate =
        ops::QueueDequeueV2(root.WithOpName("from_gate"), gate.handle, {DT_FLOAT}).output(0);
    std::string pass =
        ops::QueueEnqueueV2(root.WithOpName("pass"), empty.handle, {from_gate}).name();
    Output from_empty =
        ops::QueueDequeueV2(root.WithOpName("from_empty"), empty.handle, {DT_FLOAT}).output(0);
    std::string back =
        ops::QueueEnqueueV2(root.WithOpName("back"), gate.handle, {from_empty}).name();
    consume = ops::QueueDequeueV2(root.WithOpName("consume"), empty.handle, {DT_FLOAT}).name();
    runners.emplace_back("full", std::vector<std::string>(3, fill), full.close, full.cancel,
                         full.is_closed);
    runners.emplace_back("empty", std::vector<std::string>(2, pass), empty.close, empty.cancel,
                         empty.is_closed);
    runners.emplace_back("gate", std::vector<std::string>{back}, gate.close, gate.cancel,
                         gate.is_closed);
    if (with_failing_runner) {
      Queue other = MakeQueue(root, "other", 2);
      Output never_set = ops::VarHandleOp(root.WithOpName("never_set"), DT_FLOAT, kScalar);
      Output value = ops::ReadVariableOp(root, never_set, DT_FLOAT);
      std::string failing =
          ops::QueueEnqueueV2(root.WithOpName("failing"), other.handle, {value}).name();
      runners.emplace_back("other", std::vector<std::string>{failing}, other.close, other.cancel);
    }
    EXPECT_TRUE(root.ok()) << root.status();
    auto made = Session::New(SessionOptions());
    EXPECT_TRUE(made.ok());
    session = std::move(made).value();
    EXPECT_TRUE(session->Create(root.ToGraphDef()).ok());
  }

  // Starts the consumer and every runner; with `wait_until_blocked`,
  // returns once "full" is full (its producers then block on it).
  void Start(Coordinator* coordinator, Status* consumer_end, bool wait_until_blocked) {
    coordinator->StartThread("consumer", [this, consumer_end] {
      std::vector<Tensor> out;
      while ((*consumer_end = session->Run({}, {consume}, {}, &out)).ok()) {
      }
    });
    for (QueueRunner& runner : runners) ASSERT_TRUE(runner.Start(session.get(), coordinator).ok());
    if (!wait_until_blocked) return;
    std::vector<Tensor> out;
    do {
      ASSERT_TRUE(session->Run({}, {full.size}, {}, &out).ok());
    } while (out[0].scalar<int32_t>() < 2);
  }

  bool IsClosed(const Queue& q) {
    std::vector<Tensor> out;
    EXPECT_TRUE(session->Run({}, {q.is_closed}, {}, &out).ok());
    return !out.empty() && out[0].scalar<bool>();
  }
};

TEST(QueueRunnerShutdownTest, StopMidEpochEndsEveryThread) {
  Pipeline pipeline;
  Coordinator coordinator;
  Status consumer_end;
  pipeline.Start(&coordinator, &consumer_end, /*wait_until_blocked=*/true);
  EXPECT_EQ(coordinator.num_unjoined_threads(), 1 + (3 + 1) + (2 + 1) + (1 + 1));
  coordinator.RequestStop();
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  EXPECT_EQ(consumer_end.code(), Code::kOutOfRange) << consumer_end;
  EXPECT_TRUE(pipeline.IsClosed(pipeline.full));
  EXPECT_TRUE(pipeline.IsClosed(pipeline.empty));
  EXPECT_TRUE(pipeline.IsClosed(pipeline.gate));
}

TEST(QueueRunnerShutdownTest, SessionCloseMidEpochEndsEveryThreadWithCancelled) {
  Pipeline pipeline;
  Coordinator coordinator;
  Status consumer_end;
  pipeline.Start(&coordinator, &consumer_end, /*wait_until_blocked=*/true);
  ASSERT_TRUE(pipeline.session->Close().ok());
  Status joined = coordinator.Join();
  EXPECT_EQ(joined.code(), Code::kCancelled) << joined;
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  EXPECT_EQ(consumer_end.code(), Code::kCancelled) << consumer_end;
}

TEST(QueueRunnerShutdownTest, AFailingEnqueueOpMidEpochEndsEveryThreadWithItsError) {
  Pipeline pipeline(/*with_failing_runner=*/true);
  Coordinator coordinator;
  Status consumer_end;
  pipeline.Start(&coordinator, &consumer_end, /*wait_until_blocked=*/false);
  Status joined = coordinator.Join();  // no stop requested: the error stops everything
  EXPECT_EQ(joined.code(), Code::kFailedPrecondition) << joined;
  EXPECT_NE(joined.message().find("'never_set'"), std::string::npos) << joined;
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  EXPECT_EQ(consumer_end.code(), Code::kOutOfRange) << consumer_end;
}

// A stop at once after starting, before or while the threads reach their
// queues: every order of events ends.
TEST(QueueRunnerShutdownTest, StopRightAfterStartEndsEveryThread) {
  for (int round = 0; round < 20; ++round) {
    Pipeline pipeline;
    Coordinator coordinator;
    Status consumer_end;
    pipeline.Start(&coordinator, &consumer_end, /*wait_until_blocked=*/false);
    coordinator.RequestStop();
    ASSERT_TRUE(coordinator.Join().ok()) << "round " << round;
    EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
    EXPECT_EQ(consumer_end.code(), Code::kOutOfRange) << consumer_end;
  }
}

}  // namespace
}  // namespace weir
