// QueueBase through QueueInterface, as the readers use it (no session):
// cancellation through the step's CancellationManager, callbacks released
// (never leaked) when an attempt ends, elements a cancelled DequeueMany took
// returned in order, callbacks run outside the lock, and a queue destroyed
// under a waiter.
#include <gtest/gtest.h>

#include <memory>

#include "weir/base/cancellation.h"
#include "weir/framework/op_kernel.h"
#include "weir/kernels/fifo_queue.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

// One kernel invocation's context in a step with its own cancellation.
struct FakeStep {
  CancellationManager cancellation;
  StepContext step;
  OpKernelContext::Params params;
  std::unique_ptr<OpKernelContext> context;

  FakeStep() {
    step.cancellation = &cancellation;
    params.device = TestCpuDevice();
    params.step = &step;
    context = std::make_unique<OpKernelContext>(&params);
  }
};

std::shared_ptr<FIFOQueue> MakeQueue(int64_t capacity = -1) {
  QueueOptions options;
  options.op = "FIFOQueueV2";
  options.name = "q";
  options.component_types = {DT_INT64};
  options.shapes = {PartialShape(std::vector<int64_t>{})};
  options.capacity = capacity;
  StatusOr<std::shared_ptr<FIFOQueue>> queue = FIFOQueue::Create(options);
  EXPECT_TRUE(queue.ok()) << queue.status();
  return std::move(queue).value();
}

QueueInterface::Tuple Element(int64_t v) { return {Tensor::Scalar<int64_t>(v)}; }

void Put(QueueInterface* queue, int64_t v) {
  FakeStep step;
  bool done = false;
  queue->TryEnqueue(Element(v), step.context.get(), [&] { done = true; });
  ASSERT_TRUE(done);
  ASSERT_TRUE(step.context->status().ok()) << step.context->status();
}

TEST(QueueBaseTest, CancellingTheStepEndsAWaitingDequeueAndReleasesItsCallback) {
  auto queue = MakeQueue();
  FakeStep step;
  auto sentinel = std::make_shared<int>(0);
  int calls = 0;
  QueueInterface::Tuple got = Element(-1);
  queue->TryDequeue(step.context.get(), [&, sentinel](QueueInterface::Tuple tuple) {
    ++calls;
    got = std::move(tuple);
  });
  EXPECT_EQ(calls, 0);  // waiting
  EXPECT_EQ(sentinel.use_count(), 2);
  step.cancellation.StartCancel();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(got.empty());  // a failed dequeue gives an empty tuple
  EXPECT_EQ(step.context->status().code(), Code::kCancelled) << step.context->status();
  EXPECT_NE(step.context->status().message().find("FIFOQueue 'q'"), std::string::npos);
  EXPECT_EQ(sentinel.use_count(), 1);  // the attempt and its callback are gone
  Put(queue.get(), 5);                 // and the queue works on
  EXPECT_EQ(queue->size(), 1);
}

TEST(QueueBaseTest, AnAlreadyCancelledStepFailsAtOnce) {
  auto queue = MakeQueue(1);
  Put(queue.get(), 1);
  FakeStep step;
  step.cancellation.StartCancel();
  bool done = false;
  queue->TryEnqueue(Element(2), step.context.get(), [&] { done = true; });
  EXPECT_TRUE(done);
  EXPECT_EQ(step.context->status().code(), Code::kCancelled) << step.context->status();
  EXPECT_EQ(queue->size(), 1);
}

// A step that ends normally deregisters: a later StartCancel of its
// manager finds nothing to cancel.
TEST(QueueBaseTest, ACompletedWaitDeregisters) {
  auto queue = MakeQueue();
  FakeStep step;
  int calls = 0;
  queue->TryDequeue(step.context.get(), [&](QueueInterface::Tuple tuple) {
    ++calls;
    ASSERT_EQ(tuple.size(), 1u);
    EXPECT_EQ(tuple[0].scalar<int64_t>(), 9);
  });
  Put(queue.get(), 9);
  EXPECT_EQ(calls, 1);
  step.cancellation.StartCancel();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(step.context->status().ok()) << step.context->status();
}

TEST(QueueBaseTest, ACancelledDequeueManyReturnsWhatItTookInOrder) {
  auto queue = MakeQueue();
  Put(queue.get(), 1);
  Put(queue.get(), 2);
  FakeStep step;
  bool done = false;
  queue->TryDequeueMany(3, step.context.get(), false, [&](QueueInterface::Tuple) { done = true; });
  EXPECT_FALSE(done);
  EXPECT_EQ(queue->size(), 0);  // it holds the two it took
  step.cancellation.StartCancel();
  EXPECT_TRUE(done);
  EXPECT_EQ(queue->size(), 2);
  for (int64_t want : {1, 2}) {
    FakeStep take;
    int64_t got = -1;
    queue->TryDequeue(take.context.get(),
                      [&](QueueInterface::Tuple t) { got = t[0].scalar<int64_t>(); });
    EXPECT_EQ(got, want);
  }
}

// Callbacks run outside the queue's lock: one may use the queue again.
TEST(QueueBaseTest, ACallbackMayUseTheQueue) {
  auto queue = MakeQueue();
  FakeStep step;
  int64_t size_seen = -1;
  queue->TryDequeue(step.context.get(), [&](QueueInterface::Tuple) {
    Put(queue.get(), 20);
    size_seen = queue->size();
  });
  Put(queue.get(), 10);
  EXPECT_EQ(size_seen, 1);
  EXPECT_EQ(queue->size(), 1);
}

TEST(QueueBaseTest, DestroyingAQueueEndsItsWaiters) {
  auto queue = MakeQueue();
  FakeStep step;
  bool done = false;
  queue->TryDequeue(step.context.get(), [&](QueueInterface::Tuple tuple) {
    done = true;
    EXPECT_TRUE(tuple.empty());
  });
  queue.reset();  // the caller let go while waiting (kernels never do)
  EXPECT_TRUE(done);
  EXPECT_EQ(step.context->status().code(), Code::kCancelled) << step.context->status();
  step.cancellation.StartCancel();  // its callback is gone too: nothing runs
}

TEST(QueueBaseTest, CloseWithCancelPendingEnqueuesKeepsWhatIsIn) {
  auto queue = MakeQueue(2);
  Put(queue.get(), 1);
  FakeStep enqueue;
  bool enqueued = false;
  QueueInterface::Tuple batch = {Tensor::FromVector<int64_t>({2, 3, 4})};
  queue->TryEnqueueMany(std::move(batch), enqueue.context.get(), [&] { enqueued = true; });
  EXPECT_FALSE(enqueued);  // 2 went in, 3 and 4 wait for room
  EXPECT_EQ(queue->size(), 2);
  FakeStep close;
  bool closed = false;
  queue->Close(close.context.get(), true, [&] { closed = true; });
  EXPECT_TRUE(closed);
  EXPECT_TRUE(enqueued);
  EXPECT_EQ(enqueue.context->status().code(), Code::kCancelled) << enqueue.context->status();
  EXPECT_TRUE(queue->is_closed());
  EXPECT_EQ(queue->size(), 2);
}

}  // namespace
}  // namespace weir
