// The queue ops one by one through a session: values, order, padding,
// priorities, sharing, and each bad input's error (naming the component,
// the queue or the node).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

std::unique_ptr<Session> NewSession(const Scope& root) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE(session.ok());
  Status created = (*session)->Create(root.ToGraphDef());
  EXPECT_TRUE(created.ok()) << created;
  return std::move(session).value();
}

Status RunTargets(Session* session, const std::vector<std::string>& targets) {
  std::vector<Tensor> out;
  return session->Run({}, {}, targets, &out);
}

StatusOr<std::vector<Tensor>> Fetch(Session* session, const std::vector<std::string>& fetches) {
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, fetches, {}, &out));
  return out;
}

AttrMap Shapes(std::vector<PartialShape> shapes, int64_t capacity = -1) {
  return {{"shapes", AttrValue(std::move(shapes))}, {"capacity", AttrValue(capacity)}};
}

void ExpectError(const Status& s, Code code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(s.code(), code) << s;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(s.message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << s;
  }
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return {t.flat<T>().begin(), t.flat<T>().end()};
}

TEST(QueueOpsTest, TwoComponentsThroughEnqueueManyAndDequeueMany) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64, DT_FLOAT},
                              Shapes({PartialShape({}), PartialShape({2})}));
  ops::QueueEnqueueManyV2(
      root.WithOpName("put"), q,
      {Input({int64_t{1}, int64_t{2}, int64_t{3}}), Input({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})});
  ops::QueueDequeueManyV2(root.WithOpName("take2"), q, 2, {DT_INT64, DT_FLOAT});
  ops::QueueDequeueV2(root.WithOpName("take1"), q, {DT_INT64, DT_FLOAT});
  ops::QueueDequeueManyV2(root.WithOpName("take0"), q, 0, {DT_INT64, DT_FLOAT});
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put"}).ok());
  auto two = Fetch(session.get(), {"take2:0", "take2:1"});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ((*two)[0].shape(), TensorShape({2}));
  EXPECT_EQ(Values<int64_t>((*two)[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*two)[1].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<float>((*two)[1]), (std::vector<float>{1, 2, 3, 4}));
  auto one = Fetch(session.get(), {"take1:0", "take1:1"});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)[0].shape(), TensorShape({}));
  EXPECT_EQ((*one)[0].scalar<int64_t>(), 3);
  EXPECT_EQ(Values<float>((*one)[1]), (std::vector<float>{5, 6}));
  // n = 0: an empty batch at once (TensorFlow allows it).
  auto none = Fetch(session.get(), {"take0:0", "take0:1"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ((*none)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*none)[1].shape(), TensorShape({0, 2}));
}

TEST(QueueOpsTest, StringsAndSizes) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_STRING}, Shapes({PartialShape({})}));
  Tensor words(DT_STRING, TensorShape({3}));
  words.data<std::string>()[0] = "alpha";
  words.data<std::string>()[1] = "";
  words.data<std::string>()[2] = std::string(1000, 'z');
  ops::QueueEnqueueManyV2(root.WithOpName("put"), q, {Input(words)});
  ops::QueueDequeueManyV2(root.WithOpName("take"), q, 3, {DT_STRING});
  ops::QueueSizeV2(root.WithOpName("size"), q);
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put"}).ok());
  EXPECT_EQ((*Fetch(session.get(), {"size"}))[0].scalar<int32_t>(), 3);
  auto got = Fetch(session.get(), {"take"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values<std::string>((*got)[0]),
            (std::vector<std::string>{"alpha", "", std::string(1000, 'z')}));
  EXPECT_EQ((*Fetch(session.get(), {"size"}))[0].scalar<int32_t>(), 0);
}

TEST(QueueOpsTest, BadElementsNameTheComponent) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64, DT_FLOAT},
                              Shapes({PartialShape({}), PartialShape({2})}));
  ops::QueueEnqueueV2(root.WithOpName("wrong_shape"), q,
                      {Input(int64_t{1}), Input({1.f, 2.f, 3.f})});
  ops::QueueEnqueueV2(root.WithOpName("wrong_dtype"), q, {Input(int64_t{1}), Input({1, 2})});
  ops::QueueEnqueueV2(root.WithOpName("wrong_count"), q, {Input(int64_t{1})});
  ops::QueueEnqueueManyV2(root.WithOpName("ragged_batch"), q,
                          {Input({int64_t{1}, int64_t{2}}), Input({{1.f, 2.f}})});
  ops::QueueEnqueueManyV2(root.WithOpName("scalar_batch"), q,
                          {Input(int64_t{1}), Input({1.f, 2.f})});
  ops::QueueEnqueueManyV2(root.WithOpName("wrong_element"), q,
                          {Input({int64_t{1}}), Input({{1.f, 2.f, 3.f}})});
  ops::QueueDequeueV2(root.WithOpName("wrong_types"), q, {DT_INT64});
  ops::QueueSizeV2(root.WithOpName("size"), q);
  auto session = NewSession(root);
  ExpectError(RunTargets(session.get(), {"wrong_shape"}), Code::kInvalidArgument,
              {"FIFOQueue '_q'", "component 1", "[3]", "expected [2]"});
  ExpectError(RunTargets(session.get(), {"wrong_dtype"}), Code::kInvalidArgument,
              {"component 1", "int32", "float"});
  ExpectError(RunTargets(session.get(), {"wrong_count"}), Code::kInvalidArgument,
              {"2 components", "has 1"});
  ExpectError(RunTargets(session.get(), {"ragged_batch"}), Code::kInvalidArgument,
              {"component 1 has 1 elements", "component 0 has 2"});
  ExpectError(RunTargets(session.get(), {"scalar_batch"}), Code::kInvalidArgument,
              {"component 0", "scalar", "batch"});
  ExpectError(RunTargets(session.get(), {"wrong_element"}), Code::kInvalidArgument,
              {"component 1", "[3]", "expected [2]"});
  ExpectError(Fetch(session.get(), {"wrong_types"}).status(), Code::kInvalidArgument,
              {"QueueDequeueV2", "[int64]", "[int64,float]"});
  // Nothing half-enqueued.
  EXPECT_EQ((*Fetch(session.get(), {"size"}))[0].scalar<int32_t>(), 0);
}

TEST(QueueOpsTest, NegativeAndConstantN) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64}, Shapes({PartialShape({})}));
  Output n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  ops::QueueDequeueManyV2(root.WithOpName("take"), q, n, {DT_INT64});
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ExpectError(session->Run({{"n", Tensor::Scalar<int32_t>(-1)}}, {"take"}, {}, &out),
              Code::kInvalidArgument, {"requested -1 < 0 elements"});
  // A constant negative n is refused when the graph is built.
  Scope bad = Scope::NewRootScope();
  Output bq = ops::FIFOQueueV2(bad.WithOpName("q"), {DT_INT64}, Shapes({PartialShape({})}));
  ops::QueueDequeueManyV2(bad.WithOpName("take"), bq, -3, {DT_INT64});
  EXPECT_FALSE(bad.ok());
  ExpectError(bad.status(), Code::kInvalidArgument, {"must be >= 0", "-3"});
}

TEST(QueueOpsTest, DequeueManyNeedsShapes) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64});
  ops::QueueEnqueueV2(root.WithOpName("put"), q, {Input({int64_t{1}, int64_t{2}})});
  ops::QueueDequeueManyV2(root.WithOpName("take"), q, 1, {DT_INT64});
  ops::QueueDequeueV2(root.WithOpName("take1"), q, {DT_INT64});
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put"}).ok());  // any shape goes in
  ExpectError(Fetch(session.get(), {"take"}).status(), Code::kInvalidArgument,
              {"FIFOQueue '_q'", "fully defined"});
  auto one = Fetch(session.get(), {"take1"});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(Values<int64_t>((*one)[0]), (std::vector<int64_t>{1, 2}));
}

TEST(QueueOpsTest, ClosedQueue) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64}, Shapes({PartialShape({})}));
  ops::QueueEnqueueManyV2(root.WithOpName("put3"), q,
                          {Input({int64_t{1}, int64_t{2}, int64_t{3}})});
  ops::QueueEnqueueManyV2(root.WithOpName("put0"), q,
                          {Input(Tensor(DT_INT64, TensorShape({0})))});
  ops::QueueCloseV2(root.WithOpName("close"), q);
  ops::QueueCloseV2(root.WithOpName("cancel_close"), q,
                    {{"cancel_pending_enqueues", AttrValue(true)}});
  ops::QueueDequeueManyV2(root.WithOpName("take5"), q, 5, {DT_INT64});
  ops::QueueDequeueUpToV2(root.WithOpName("upto2"), q, 2, {DT_INT64});
  ops::QueueSizeV2(root.WithOpName("size"), q);
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put3"}).ok());
  ASSERT_TRUE(RunTargets(session.get(), {"close"}).ok());
  ExpectError(RunTargets(session.get(), {"put3"}), Code::kCancelled, {"FIFOQueue '_q' is closed"});
  EXPECT_TRUE(RunTargets(session.get(), {"put0"}).ok());  // no elements: done at once, as TF
  ExpectError(RunTargets(session.get(), {"close"}), Code::kCancelled, {"already closed"});  // as TF
  EXPECT_TRUE(RunTargets(session.get(), {"cancel_close"}).ok());
  // Too few for DequeueMany: OutOfRange, and the elements stay.
  ExpectError(Fetch(session.get(), {"take5"}).status(), Code::kOutOfRange,
              {"FIFOQueue '_q' is closed and has insufficient elements (requested 5, current "
               "size 3)"});
  EXPECT_EQ((*Fetch(session.get(), {"size"}))[0].scalar<int32_t>(), 3);
  // DequeueUpTo: full batches, then the smaller rest, then OutOfRange.
  EXPECT_EQ(Values<int64_t>((*Fetch(session.get(), {"upto2"}))[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Values<int64_t>((*Fetch(session.get(), {"upto2"}))[0]), (std::vector<int64_t>{3}));
  ExpectError(Fetch(session.get(), {"upto2"}).status(), Code::kOutOfRange,
              {"requested 2, current size 0"});
}

TEST(QueueOpsTest, PaddingQueuePadsWithZerosAndEmptyStrings) {
  Scope root = Scope::NewRootScope();
  Output q = ops::PaddingFIFOQueueV2(root.WithOpName("q"), {DT_INT32, DT_STRING},
                                     Shapes({PartialShape({-1}), PartialShape({2, -1})}));
  auto put = [&](const std::string& name, Input ints, Input strings) {
    ops::QueueEnqueueV2(root.WithOpName(name), q, {ints, strings});
  };
  Tensor s1(DT_STRING, TensorShape({2, 1}));
  s1.data<std::string>()[0] = "a";
  s1.data<std::string>()[1] = "b";
  Tensor s2(DT_STRING, TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i)
    s2.data<std::string>()[i] = std::string(1, static_cast<char>('c' + i));
  put("put1", Input({1, 2, 3}), Input(s1));
  put("put2", Input({4}), Input(s2));
  put("bad_rank", Input(Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 2}))), Input(s1));
  ops::QueueDequeueManyV2(root.WithOpName("take"), q, 2, {DT_INT32, DT_STRING});
  ops::QueueDequeueManyV2(root.WithOpName("take0"), q, 0, {DT_INT32, DT_STRING});
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put1"}).ok());
  ASSERT_TRUE(RunTargets(session.get(), {"put2"}).ok());
  ExpectError(RunTargets(session.get(), {"bad_rank"}), Code::kInvalidArgument,
              {"PaddingFIFOQueue '_q'", "component 0", "[1,2]", "expected [?]"});
  auto got = Fetch(session.get(), {"take:0", "take:1"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<int32_t>((*got)[0]), (std::vector<int32_t>{1, 2, 3, 4, 0, 0}));
  EXPECT_EQ((*got)[1].shape(), TensorShape({2, 2, 3}));
  EXPECT_EQ(Values<std::string>((*got)[1]),
            (std::vector<std::string>{"a", "", "", "b", "", "", "c", "d", "e", "f", "g", "h"}));
  auto none = Fetch(session.get(), {"take0:0", "take0:1"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ((*none)[0].shape(), TensorShape({0, 0}));
  EXPECT_EQ((*none)[1].shape(), TensorShape({0, 2, 0}));
}

TEST(QueueOpsTest, PriorityQueueGivesLowestFirst) {
  Scope root = Scope::NewRootScope();
  Output q = ops::PriorityQueueV2(root.WithOpName("q"), {PartialShape({})},
                                  {{"component_types", AttrValue(std::vector<DType>{DT_STRING})}});
  Tensor names(DT_STRING, TensorShape({4}));
  const char* kNames[] = {"five", "one", "three", "one again"};
  for (int i = 0; i < 4; ++i) names.data<std::string>()[i] = kNames[i];
  ops::QueueEnqueueManyV2(root.WithOpName("put"), q,
                          {Input({int64_t{5}, int64_t{1}, int64_t{3}, int64_t{1}}), Input(names)});
  ops::QueueEnqueueV2(root.WithOpName("put_zero"), q, {Input(int64_t{0}), Input(names)});
  ops::QueueEnqueueV2(root.WithOpName("int32_priority"), q, {Input(2), Input(names)});
  ops::QueueDequeueV2(root.WithOpName("take"), q, {DT_INT64, DT_STRING});
  ops::QueueDequeueManyV2(root.WithOpName("take3"), q, 3, {DT_INT64, DT_STRING});
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put"}).ok());
  ExpectError(RunTargets(session.get(), {"int32_priority"}), Code::kInvalidArgument,
              {"PriorityQueue '_q'", "priority", "int64", "int32"});
  ExpectError(RunTargets(session.get(), {"put_zero"}), Code::kInvalidArgument,
              {"component 1", "[4]", "expected []"});
  auto first = Fetch(session.get(), {"take:0", "take:1"});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[0].scalar<int64_t>(), 1);
  EXPECT_EQ((*first)[1].scalar<std::string>(), "one");  // equal priorities: first in first out
  auto rest = Fetch(session.get(), {"take3:0", "take3:1"});
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(Values<int64_t>((*rest)[0]), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(Values<std::string>((*rest)[1]),
            (std::vector<std::string>{"one again", "three", "five"}));
}

TEST(QueueOpsTest, BadQueueAttrsAreErrors) {
  struct Case {
    const char* what;
    std::function<void(const Scope&)> build;
    std::vector<std::string> fragments;
  };
  std::vector<Case> cases = {
      {"partial FIFO shape",
       [](const Scope& s) {
         ops::FIFOQueueV2(s.WithOpName("q"), {DT_INT64}, Shapes({PartialShape({-1})}));
       },
       {"FIFOQueue '_q'", "not fully defined"}},
      {"shapes count",
       [](const Scope& s) {
         ops::FIFOQueueV2(s.WithOpName("q"), {DT_INT64, DT_FLOAT}, Shapes({PartialShape({})}));
       },
       {"`shapes` has 1 entries", "2 components"}},
      {"padding without shapes",
       [](const Scope& s) { ops::PaddingFIFOQueueV2(s.WithOpName("q"), {DT_INT64}); },
       {"PaddingFIFOQueue '_q'", "needs a shape"}},
      {"min_after_dequeue >= capacity",
       [](const Scope& s) {
         ops::RandomShuffleQueueV2(
             s.WithOpName("q"), {DT_INT64},
             {{"capacity", AttrValue(int64_t{4})}, {"min_after_dequeue", AttrValue(int64_t{4})}});
       },
       {"min_after_dequeue 4 must be less than capacity 4"}},
  };
  for (const Case& c : cases) {
    Scope root = Scope::NewRootScope();
    c.build(root);
    auto session = NewSession(root);
    std::vector<Tensor> out;
    Status s = session->Run({}, {"q"}, {}, &out);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.what << ": " << s;
    for (const std::string& f : c.fragments) {
      EXPECT_NE(s.message().find(f), std::string::npos) << c.what << ": '" << f << "' in " << s;
    }
  }
}

// shared_name: nodes naming it share one queue, whose attrs they must
// match; empty: each node has its own.
TEST(QueueOpsTest, SharedAndPrivateQueues) {
  Scope root = Scope::NewRootScope();
  AttrMap shared = Shapes({PartialShape({})}, 10);
  shared["shared_name"] = AttrValue(std::string("common"));
  Output a = ops::FIFOQueueV2(root.WithOpName("a"), {DT_INT64}, shared);
  Output b = ops::FIFOQueueV2(root.WithOpName("b"), {DT_INT64}, shared);
  AttrMap other_capacity = shared;
  other_capacity["capacity"] = AttrValue(int64_t{11});
  Output c = ops::FIFOQueueV2(root.WithOpName("c"), {DT_INT64}, other_capacity);
  AttrMap other_kind = shared;
  Output d = ops::PaddingFIFOQueueV2(root.WithOpName("d"), {DT_INT64}, other_kind);
  Output p1 = ops::FIFOQueueV2(root.WithOpName("p1"), {DT_INT64}, Shapes({PartialShape({})}));
  Output p2 = ops::FIFOQueueV2(root.WithOpName("p2"), {DT_INT64}, Shapes({PartialShape({})}));
  ops::QueueEnqueueV2(root.WithOpName("put_a"), a, {Input(int64_t{42})});
  ops::QueueEnqueueV2(root.WithOpName("put_p1"), p1, {Input(int64_t{7})});
  ops::QueueSizeV2(root.WithOpName("size_b"), b);
  ops::QueueSizeV2(root.WithOpName("size_c"), c);
  ops::QueueSizeV2(root.WithOpName("size_d"), d);
  ops::QueueSizeV2(root.WithOpName("size_p1"), p1);
  ops::QueueSizeV2(root.WithOpName("size_p2"), p2);
  auto session = NewSession(root);
  ASSERT_TRUE(RunTargets(session.get(), {"put_a", "put_p1"}).ok());
  EXPECT_EQ((*Fetch(session.get(), {"size_b"}))[0].scalar<int32_t>(), 1);
  EXPECT_EQ((*Fetch(session.get(), {"size_p1"}))[0].scalar<int32_t>(), 1);
  EXPECT_EQ((*Fetch(session.get(), {"size_p2"}))[0].scalar<int32_t>(), 0);
  ExpectError(Fetch(session.get(), {"size_c"}).status(), Code::kInvalidArgument,
              {"shared queue 'common'", "capacity 10", "node 'c'", "11"});
  ExpectError(Fetch(session.get(), {"size_d"}).status(), Code::kInvalidArgument,
              {"shared queue 'common'", "FIFOQueueV2", "PaddingFIFOQueueV2"});
}

// A named container is shared by sessions and outlives a step; Reset drops
// it, and the handle then names a queue that is gone.
TEST(QueueOpsTest, NamedContainerAcrossSessionsAndReset) {
  Scope root = Scope::NewRootScope();
  AttrMap attrs = Shapes({PartialShape({})});
  attrs["container"] = AttrValue(std::string("queue_ops_test"));
  attrs["shared_name"] = AttrValue(std::string("q"));
  Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64}, attrs);
  ops::QueueEnqueueV2(root.WithOpName("put"), q, {Input(int64_t{3})});
  ops::QueueSizeV2(root.WithOpName("size"), q);
  auto first = NewSession(root);
  auto second = NewSession(root);
  ASSERT_TRUE(RunTargets(first.get(), {"put"}).ok());
  EXPECT_EQ((*Fetch(second.get(), {"size"}))[0].scalar<int32_t>(), 1);
  ASSERT_TRUE(first->Reset({"queue_ops_test"}).ok());
  EXPECT_EQ((*Fetch(second.get(), {"size"}))[0].scalar<int32_t>(), 0);  // a new, empty queue
  ASSERT_TRUE(first->Reset({"queue_ops_test"}).ok());
}

TEST(QueueOpsTest, AVariableHandleIsNotAQueue) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialShape({}));
  ops::QueueSizeV2(root.WithOpName("size"), v);
  auto session = NewSession(root);
  ExpectError(Fetch(session.get(), {"size"}).status(), Code::kInvalidArgument,
              {"is a Var", "expected a Queue"});
}

}  // namespace
}  // namespace weir
