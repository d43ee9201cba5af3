// StringInputProducer and Batch on a session: each name exactly num_epochs
// times, each epoch a permutation (the same for the same seed), then
// OutOfRange; shuffled batches that are a permutation of the epoch; build
// errors that name the pipeline.
#include "weir/train/input.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

const std::vector<std::string> kNames = {"a", "b", "c", "d", "e", "f", "g"};

Tensor StringVector(const std::vector<std::string>& values) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<std::string>()[i] = values[i];
  return t;
}

std::unique_ptr<Session> NewSession(const Scope& root) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  return std::move(session).value();
}

// Runs the pipeline's runners in a fresh session and fetches `fetch` until
// OutOfRange; returns the strings fetched, batch after batch.
std::vector<std::string> RunToTheEnd(const Scope& root, const Operation& local_init,
                                     const std::vector<QueueRunner*>& runners,
                                     const Output& fetch) {
  auto session = NewSession(root);
  std::vector<Tensor> out;
  EXPECT_TRUE(session->Run({}, {}, {local_init.name()}, &out).ok());
  Coordinator coordinator;
  for (QueueRunner* runner : runners) EXPECT_TRUE(runner->Start(session.get(), &coordinator).ok());
  std::vector<std::string> values;
  Status status;
  while ((status = session->Run({}, {fetch.name()}, {}, &out)).ok()) {
    for (int64_t i = 0; i < out[0].NumElements(); ++i)
      values.push_back(out[0].data<std::string>()[i]);
  }
  EXPECT_EQ(status.code(), Code::kOutOfRange) << status;
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  return values;
}

std::vector<std::string> Sorted(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  return values;
}

struct Producer {
  Scope root = Scope::NewRootScope();
  InputProducer producer;
  Output dequeue;
};

Producer MakeProducer(const StringInputProducerOptions& options) {
  Producer p;
  auto made = StringInputProducer(p.root, ops::Const(p.root, StringVector(kNames)), options);
  EXPECT_TRUE(made.ok()) << made.status();
  p.producer = *made;
  p.dequeue =
      ops::QueueDequeueV2(p.root.WithOpName("dequeue"), p.producer.queue, {DT_STRING}).output(0);
  return p;
}

TEST(StringInputProducerTest, UnshuffledGivesTheNamesInOrderEachEpoch) {
  Producer p = MakeProducer({.num_epochs = 3, .shuffle = false, .capacity = 4});
  std::vector<std::string> values =
      RunToTheEnd(p.root, p.producer.local_init, {&p.producer.runner}, p.dequeue);
  std::vector<std::string> expected;
  for (int epoch = 0; epoch < 3; ++epoch)
    expected.insert(expected.end(), kNames.begin(), kNames.end());
  EXPECT_EQ(values, expected);
}

TEST(StringInputProducerTest, ShuffledEpochsArePermutationsTheSameForTheSameSeed) {
  Producer p = MakeProducer({.num_epochs = 4, .shuffle = true, .seed = 7});
  std::vector<std::string> first =
      RunToTheEnd(p.root, p.producer.local_init, {&p.producer.runner}, p.dequeue);
  ASSERT_EQ(first.size(), 4 * kNames.size());
  bool some_epoch_reordered = false;
  for (size_t epoch = 0; epoch < 4; ++epoch) {
    std::vector<std::string> names(first.begin() + epoch * kNames.size(),
                                   first.begin() + (epoch + 1) * kNames.size());
    EXPECT_EQ(Sorted(names), kNames) << "epoch " << epoch;
    some_epoch_reordered |= names != kNames;
  }
  EXPECT_TRUE(some_epoch_reordered);
  // A new session on the same graph reruns local_init: the same sequence.
  EXPECT_EQ(RunToTheEnd(p.root, p.producer.local_init, {&p.producer.runner}, p.dequeue), first);

  Producer other = MakeProducer({.num_epochs = 4, .shuffle = true, .seed = 8});
  EXPECT_NE(
      RunToTheEnd(other.root, other.producer.local_init, {&other.producer.runner}, other.dequeue),
      first);
}

TEST(StringInputProducerTest, WithoutAnEpochLimitItKeepsProducing) {
  Producer p = MakeProducer({.shuffle = false, .capacity = 2});
  auto session = NewSession(p.root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {p.producer.local_init.name()}, &out).ok());  // a NoOp
  Coordinator coordinator;
  ASSERT_TRUE(p.producer.runner.Start(session.get(), &coordinator).ok());
  for (size_t i = 0; i < 5 * kNames.size(); ++i) {
    ASSERT_TRUE(session->Run({}, {p.dequeue.name()}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<std::string>(), kNames[i % kNames.size()]);
  }
  coordinator.RequestStop();
  EXPECT_TRUE(coordinator.Join().ok());
}

// A list whose size is known only when it runs (as MatchingFiles') and
// turns out empty is an error reaching Join, and the queue is closed for
// its readers: not an endless loop of empty enqueues.
TEST(StringInputProducerTest, AnEmptyListAtRunTimeIsAnErrorNotAHang) {
  Scope root = Scope::NewRootScope();
  Output names = ops::MatchingFiles(root, ops::Const(root, Tensor::Scalar<std::string>(
                                                               "/nonexistent-weir-dir/*.none")));
  auto made = StringInputProducer(root, names, {.shuffle = false});
  ASSERT_TRUE(made.ok()) << made.status();
  Output dequeue = ops::QueueDequeueV2(root.WithOpName("dequeue"), made->queue, {DT_STRING})
                       .output(0);
  auto session = NewSession(root);
  Coordinator coordinator;
  ASSERT_TRUE(made->runner.Start(session.get(), &coordinator).ok());
  Status joined = coordinator.Join();
  EXPECT_EQ(joined.code(), Code::kInvalidArgument) << joined;
  EXPECT_NE(joined.message().find("the string list is empty"), std::string::npos) << joined;
  std::vector<Tensor> out;
  Status read = session->Run({}, {dequeue.name()}, {}, &out);
  EXPECT_EQ(read.code(), Code::kOutOfRange) << read;
}

TEST(StringInputProducerTest, BadInputsAreErrorsNamingTheProducer) {
  Scope root = Scope::NewRootScope();
  Output names = ops::Const(root, StringVector(kNames));
  auto negative = StringInputProducer(root, names, {.num_epochs = -1});
  EXPECT_EQ(negative.status().code(), Code::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("StringInputProducer 'input_producer'"),
            std::string::npos)
      << negative.status();
  EXPECT_FALSE(root.ok());  // kept in the scope

  Scope other = Scope::NewRootScope();
  auto floats = StringInputProducer(other, ops::Const(other, {1.f, 2.f}), {.name = "files"});
  EXPECT_NE(floats.status().message().find("'files'"), std::string::npos) << floats.status();
  Scope matrix = Scope::NewRootScope();
  Tensor names_2d(DT_STRING, TensorShape({1, 1}));
  EXPECT_EQ(StringInputProducer(matrix, ops::Const(matrix, names_2d)).status().code(),
            Code::kInvalidArgument);
  Scope empty = Scope::NewRootScope();
  auto none = StringInputProducer(empty, ops::Const(empty, StringVector({})));
  EXPECT_NE(none.status().message().find("at least one"), std::string::npos) << none.status();
}

// Names "0" .. "N-1" through an unshuffled producer (one epoch) into a
// shuffle batch: every batch full but maybe the last, and all of them
// together a permutation of the epoch.
TEST(BatchTest, ShuffleBatchesArePermutationsOfTheEpoch) {
  constexpr int kCount = 60;
  std::vector<std::string> numbers;
  for (int i = 0; i < kCount; ++i) numbers.push_back(std::to_string(i));
  Scope root = Scope::NewRootScope();
  auto producer = StringInputProducer(root, ops::Const(root, StringVector(numbers)),
                                      {.num_epochs = 1, .shuffle = false, .capacity = 8});
  ASSERT_TRUE(producer.ok()) << producer.status();
  Output name = ops::QueueDequeueV2(root, producer->queue, {DT_STRING}).output(0);
  auto batch = Batch(root, {name},
                     {.batch_size = 8,
                      .capacity = 20,
                      .min_after_dequeue = 10,
                      .num_threads = 2,
                      .seed = 3,
                      .allow_smaller_final_batch = true,
                      .name = "shuffle_batch",
                      .shapes = {PartialShape(std::vector<int64_t>{})}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->batch.size(), 1u);
  EXPECT_EQ(batch->batch[0].shape(), PartialShape({-1}));

  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {producer->local_init.name()}, &out).ok());
  Coordinator coordinator;
  ASSERT_TRUE(producer->runner.Start(session.get(), &coordinator).ok());
  ASSERT_TRUE(batch->runner.Start(session.get(), &coordinator).ok());
  std::vector<std::string> all;
  std::vector<int64_t> sizes;
  Status status;
  while ((status = session->Run({}, {batch->batch[0].name()}, {}, &out)).ok()) {
    sizes.push_back(out[0].dim_size(0));
    for (int64_t i = 0; i < out[0].NumElements(); ++i) all.push_back(out[0].data<std::string>()[i]);
  }
  EXPECT_EQ(status.code(), Code::kOutOfRange) << status;
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(Sorted(all), Sorted(numbers));
  EXPECT_NE(all, numbers);  // shuffled
  ASSERT_EQ(sizes.size(), 8u);  // 7 full batches and the 4 left
  for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_EQ(sizes[i], 8);
  EXPECT_EQ(sizes.back(), 4);
}

TEST(BatchTest, FifoBatchKeepsTheOrderOfOneThread) {
  Scope root = Scope::NewRootScope();
  auto producer = StringInputProducer(root, ops::Const(root, StringVector(kNames)),
                                      {.num_epochs = 2, .shuffle = false});
  ASSERT_TRUE(producer.ok());
  Output name = ops::QueueDequeueV2(root, producer->queue, {DT_STRING}).output(0);
  auto batch =
      Batch(root, {name},
            {.batch_size = 2, .capacity = 4, .shapes = {PartialShape(std::vector<int64_t>{})}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->batch[0].shape(), PartialShape({2}));
  // 14 names in batches of 2; DequeueMany gives no smaller final batch.
  std::vector<std::string> values =
      RunToTheEnd(root, producer->local_init, {&producer->runner, &batch->runner}, batch->batch[0]);
  std::vector<std::string> expected(kNames);
  expected.insert(expected.end(), kNames.begin(), kNames.end());
  EXPECT_EQ(values, expected);
}

TEST(BatchTest, BadOptionsAreErrorsNamingTheBatch) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(Batch(root, {}, {}).status().code(), Code::kInvalidArgument);
  Scope s1 = Scope::NewRootScope();
  Output p = ops::Placeholder(s1, DT_FLOAT);
  Status unknown_shape = Batch(s1, {p}, {.name = "images"}).status();
  EXPECT_NE(unknown_shape.message().find("Batch 'images'"), std::string::npos) << unknown_shape;
  EXPECT_NE(unknown_shape.message().find("fully defined"), std::string::npos) << unknown_shape;
  Scope s2 = Scope::NewRootScope();
  Status small =
      Batch(s2, {ops::Const(s2, 1.f)}, {.capacity = 10, .min_after_dequeue = 10}).status();
  EXPECT_NE(small.message().find("min_after_dequeue"), std::string::npos) << small;
  Scope s3 = Scope::NewRootScope();
  EXPECT_EQ(Batch(s3, {ops::Const(s3, 1.f)}, {.batch_size = 0}).status().code(),
            Code::kInvalidArgument);
  Scope s4 = Scope::NewRootScope();
  EXPECT_EQ(Batch(s4, {ops::Const(s4, 1.f)}, {.num_threads = 0}).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace weir
