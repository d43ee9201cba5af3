// The conditional-accumulator ops through a session: mean and sum against
// hand-computed values, stale gradients dropped, a blocking take released by
// enough applies, cancellation of a blocked take (timeout and Close), and
// each bad input's error (naming the accumulator, dtype and shapes).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
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

void ExpectError(const Status& s, Code code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(s.code(), code) << s;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(s.message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << s;
  }
}

Tensor Floats(std::vector<float> values) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(values.size())}));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

Tensor Int64(int64_t v) {
  Tensor t(DT_INT64, TensorShape());
  t.scalar<int64_t>() = v;
  return t;
}

Tensor Int32(int32_t v) {
  Tensor t(DT_INT32, TensorShape());
  t.scalar<int32_t>() = v;
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return {t.flat<float>().begin(), t.flat<float>().end()};
}

// One accumulator of float [2] (or `shape`) and the ops on it, fed by
// placeholders: "apply" (step, grad), "take" (n), "num", "set" (new_step).
struct Graph {
  explicit Graph(bool resource, std::string reduction = "MEAN",
                 PartialShape shape = PartialShape({2})) {
    Scope root = Scope::NewRootScope();
    AttrMap attrs = {{"reduction_type", AttrValue(reduction)}};
    Output acc =
        resource
            ? ops::ResourceConditionalAccumulator(root.WithOpName("acc"), DT_FLOAT, shape, attrs)
            : ops::ConditionalAccumulator(root.WithOpName("acc"), DT_FLOAT, shape, attrs);
    Output step = ops::Placeholder(root.WithOpName("step"), DT_INT64);
    Output grad = ops::Placeholder(root.WithOpName("grad"), DT_FLOAT);
    Output n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
    Output new_step = ops::Placeholder(root.WithOpName("new_step"), DT_INT64);
    if (resource) {
      ops::ResourceAccumulatorApplyGradient(root.WithOpName("apply"), acc, step, grad);
      ops::ResourceAccumulatorTakeGradient(root.WithOpName("take"), acc, n, DT_FLOAT);
      ops::ResourceAccumulatorNumAccumulated(root.WithOpName("num"), acc);
      ops::ResourceAccumulatorSetGlobalStep(root.WithOpName("set"), acc, new_step);
    } else {
      ops::AccumulatorApplyGradient(root.WithOpName("apply"), acc, step, grad);
      ops::AccumulatorTakeGradient(root.WithOpName("take"), acc, n, DT_FLOAT);
      ops::AccumulatorNumAccumulated(root.WithOpName("num"), acc);
      ops::AccumulatorSetGlobalStep(root.WithOpName("set"), acc, new_step);
    }
    session = NewSession(root);
  }

  Status Apply(int64_t step, Tensor grad) {
    std::vector<Tensor> out;
    return session->Run({{"step", Int64(step)}, {"grad", std::move(grad)}}, {}, {"apply"}, &out);
  }
  StatusOr<Tensor> Take(int32_t n, int64_t timeout_ms = 0) {
    std::vector<Tensor> out;
    RunOptions options;
    options.timeout_ms = timeout_ms;
    WEIR_RETURN_IF_ERROR(session->Run({{"n", Int32(n)}}, {"take"}, {}, &out, options));
    return out[0];
  }
  int32_t Num() {
    std::vector<Tensor> out;
    Status s = session->Run({}, {"num"}, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    return s.ok() ? out[0].scalar<int32_t>() : -1;
  }
  Status Set(int64_t step) {
    std::vector<Tensor> out;
    return session->Run({{"new_step", Int64(step)}}, {}, {"set"}, &out);
  }

  std::unique_ptr<Session> session;
};

class AccumulatorTest : public ::testing::TestWithParam<bool> {};  // resource handle or string

TEST_P(AccumulatorTest, MeanOfAppliedGradients) {
  Graph g(GetParam());
  ASSERT_TRUE(g.Apply(0, Floats({1, 2})).ok());
  ASSERT_TRUE(g.Apply(0, Floats({3, 5})).ok());
  ASSERT_TRUE(g.Apply(0, Floats({-1, 2})).ok());
  EXPECT_EQ(g.Num(), 3);
  auto mean = g.Take(2);  // more than required are in: the mean of all three
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(mean->shape(), TensorShape({2}));
  EXPECT_EQ(Values(*mean), (std::vector<float>{1, 3}));
  EXPECT_EQ(g.Num(), 0);
}

TEST_P(AccumulatorTest, SumReduction) {
  Graph g(GetParam(), "SUM");
  ASSERT_TRUE(g.Apply(0, Floats({1, 2})).ok());
  ASSERT_TRUE(g.Apply(0, Floats({3, 5})).ok());
  auto sum = g.Take(2);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(Values(*sum), (std::vector<float>{4, 7}));
}

TEST_P(AccumulatorTest, StaleGradientsAreDropped) {
  Graph g(GetParam());
  ASSERT_TRUE(g.Set(5).ok());
  ASSERT_TRUE(g.Apply(4, Floats({100, 100})).ok());  // stale: not an error, dropped
  EXPECT_EQ(g.Num(), 0);
  ASSERT_TRUE(g.Apply(5, Floats({1, 1})).ok());
  ASSERT_TRUE(g.Apply(7, Floats({3, 3})).ok());  // newer than the step: counted
  EXPECT_EQ(g.Num(), 2);
  auto mean = g.Take(2);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(Values(*mean), (std::vector<float>{2, 2}));
  // The take advanced the step to 6: a late gradient of step 5 is dropped.
  ASSERT_TRUE(g.Apply(5, Floats({9, 9})).ok());
  EXPECT_EQ(g.Num(), 0);
  ASSERT_TRUE(g.Apply(6, Floats({9, 9})).ok());
  EXPECT_EQ(g.Num(), 1);
  // Setting the step back is allowed (as TensorFlow).
  ASSERT_TRUE(g.Set(0).ok());
  ASSERT_TRUE(g.Apply(0, Floats({1, 1})).ok());
  EXPECT_EQ(g.Num(), 2);
}

TEST_P(AccumulatorTest, BlockedTakeIsReleasedByEnoughApplies) {
  Graph g(GetParam());
  auto taken = std::async(std::launch::async, [&] { return g.Take(3, 20000); });
  ASSERT_TRUE(g.Apply(0, Floats({1, 0})).ok());
  ASSERT_TRUE(g.Apply(0, Floats({2, 0})).ok());
  // Two of three: still waiting.
  EXPECT_EQ(taken.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  ASSERT_TRUE(g.Apply(0, Floats({6, 3})).ok());
  ASSERT_EQ(taken.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto mean = taken.get();
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(Values(*mean), (std::vector<float>{3, 1}));
}

TEST_P(AccumulatorTest, BlockedTakeIsCancelledByTimeoutAndLeavesTheGradientsIn) {
  Graph g(GetParam());
  ASSERT_TRUE(g.Apply(0, Floats({1, 1})).ok());
  auto start = std::chrono::steady_clock::now();
  auto timed_out = g.Take(2, 200);
  EXPECT_FALSE(timed_out.ok());
  EXPECT_TRUE(timed_out.status().code() == Code::kDeadlineExceeded ||
              timed_out.status().code() == Code::kCancelled)
      << timed_out.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(g.Num(), 1);  // the cancelled take took nothing
  ASSERT_TRUE(g.Apply(0, Floats({3, 3})).ok());
  auto mean = g.Take(2, 20000);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(Values(*mean), (std::vector<float>{2, 2}));
}

TEST_P(AccumulatorTest, BlockedTakeIsCancelledBySessionClose) {
  Graph g(GetParam());
  auto taken = std::async(std::launch::async, [&] { return g.Take(1); });  // no timeout
  EXPECT_EQ(taken.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  ASSERT_TRUE(g.session->Close().ok());
  ASSERT_EQ(taken.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "Close left the take hanging";
  EXPECT_EQ(taken.get().status().code(), Code::kCancelled);
}

TEST_P(AccumulatorTest, ShapeErrorsNameTheAccumulatorDtypeAndShapes) {
  Graph g(GetParam());
  ExpectError(
      g.Apply(0, Floats({1, 2, 3})), Code::kInvalidArgument,
      {"'apply'", "Shape mismatch", "ConditionalAccumulator '_acc'", "float", "[2]", "[3]"});
  Tensor scalar(DT_FLOAT, TensorShape());
  scalar.scalar<float>() = 1;
  ExpectError(g.Apply(0, scalar), Code::kInvalidArgument, {"Shape mismatch", "[]"});
  EXPECT_EQ(g.Num(), 0);
}

TEST_P(AccumulatorTest, PartiallyKnownShapeFixesTheShapeForTheStep) {
  Graph g(GetParam(), "MEAN", PartialShape({-1}));
  ASSERT_TRUE(g.Apply(0, Floats({1, 2})).ok());
  ExpectError(g.Apply(0, Floats({1, 2, 3})), Code::kInvalidArgument,
              {"accumulated gradients of shape [2]", "got [3]"});
  auto mean = g.Take(1);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(Values(*mean), (std::vector<float>{1, 2}));
  ASSERT_TRUE(g.Apply(1, Floats({1, 2, 3})).ok());  // a new step may have another size
  EXPECT_EQ(g.Num(), 1);
}

TEST_P(AccumulatorTest, HostileNumRequiredAndStepsAreErrors) {
  Graph g(GetParam());
  for (int32_t n : {0, -1, std::numeric_limits<int32_t>::min()}) {
    ExpectError(g.Take(n).status(), Code::kInvalidArgument,
                {"num_required must be positive", StrCat(n)});
  }
  std::vector<Tensor> out;
  Tensor vector_n(DT_INT32, TensorShape({2}));
  ExpectError(g.session->Run({{"n", vector_n}}, {"take"}, {}, &out), Code::kInvalidArgument,
              {"num_required must be a scalar"});
  Tensor vector_step(DT_INT64, TensorShape({0}));
  ExpectError(
      g.session->Run({{"step", vector_step}, {"grad", Floats({1, 2})}}, {}, {"apply"}, &out),
      Code::kInvalidArgument, {"local_step must be a scalar"});
  // Extreme steps are just steps.
  ASSERT_TRUE(g.Set(std::numeric_limits<int64_t>::max()).ok());
  ASSERT_TRUE(g.Apply(std::numeric_limits<int64_t>::min(), Floats({1, 2})).ok());
  EXPECT_EQ(g.Num(), 0);
}

INSTANTIATE_TEST_SUITE_P(Handles, AccumulatorTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Resource" : "String"; });

TEST(AccumulatorErrorsTest, DtypeMismatchesAndMissingAccumulators) {
  Scope root = Scope::NewRootScope();
  Output acc =
      ops::ResourceConditionalAccumulator(root.WithOpName("acc"), DT_FLOAT, PartialShape({2}));
  ops::ResourceAccumulatorApplyGradient(root.WithOpName("apply_double"), acc, int64_t{0},
                                        Input({1.0, 2.0}));
  ops::ResourceAccumulatorTakeGradient(root.WithOpName("take_double"), acc, 1, DT_DOUBLE);
  Tensor one_string(DT_STRING, TensorShape({1}));
  one_string.data<std::string>()[0] = "c";
  Output bad_handle = ops::Const(root.WithOpName("bad_handle"), Input(one_string));
  ops::AccumulatorNumAccumulated(root.WithOpName("num_bad"), bad_handle);
  Tensor two_strings(DT_STRING, TensorShape({2}));
  two_strings.data<std::string>()[0] = "localhost";
  two_strings.data<std::string>()[1] = "nobody";
  Output missing = ops::Const(root.WithOpName("missing"), Input(two_strings));
  ops::AccumulatorNumAccumulated(root.WithOpName("num_missing"), missing);
  ops::ResourceConditionalAccumulator(root.WithOpName("ints"), DT_INT32, PartialShape({2}));
  // A second node sharing "shared" with another shape.
  ops::ResourceConditionalAccumulator(root.WithOpName("s1"), DT_FLOAT, PartialShape({2}),
                                      {{"shared_name", AttrValue(std::string("shared"))}});
  ops::ResourceConditionalAccumulator(root.WithOpName("s2"), DT_FLOAT, PartialShape({3}),
                                      {{"shared_name", AttrValue(std::string("shared"))}});
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ExpectError(session->Run({}, {}, {"apply_double"}, &out), Code::kInvalidArgument,
              {"'apply_double'", "dtype double", "ConditionalAccumulator '_acc' holds float"});
  ExpectError(session->Run({}, {"take_double"}, {}, &out), Code::kInvalidArgument,
              {"dtype double", "holds float"});
  ExpectError(session->Run({}, {"num_bad"}, {}, &out), Code::kInvalidArgument,
              {"[2] string vector", "[1]"});
  ExpectError(session->Run({}, {"num_missing"}, {}, &out), Code::kNotFound,
              {"accumulator 'nobody'", "container 'localhost'"});
  ExpectError(session->Run({}, {"ints"}, {}, &out), Code::kUnimplemented, {"int32"});
  ASSERT_TRUE(session->Run({}, {"s1"}, {}, &out).ok());
  ExpectError(session->Run({}, {"s2"}, {}, &out), Code::kInvalidArgument,
              {"shared ConditionalAccumulator 'shared' has shape [2]", "'s2'", "[3]"});
}

// A sparse accumulator of float [4, 2] (or `shape`) fed by placeholders:
// "apply" (step, indices, values), "apply_shaped" (the same with
// gradient_shape "dense"), "take" (n), "num".
struct SparseGraph {
  explicit SparseGraph(std::string reduction = "MEAN", PartialShape shape = PartialShape({4, 2})) {
    Scope root = Scope::NewRootScope();
    Output acc = ops::SparseConditionalAccumulator(root.WithOpName("acc"), DT_FLOAT, shape,
                                                   {{"reduction_type", AttrValue(reduction)}});
    Output step = ops::Placeholder(root.WithOpName("step"), DT_INT64);
    Output indices = ops::Placeholder(root.WithOpName("indices"), DT_INT64);
    Output values = ops::Placeholder(root.WithOpName("values"), DT_FLOAT);
    Output dense = ops::Placeholder(root.WithOpName("dense"), DT_INT64);
    Output n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
    Output unused_shape = ops::Const(root.WithOpName("unused_shape"), Input({int64_t{0}}));
    ops::SparseAccumulatorApplyGradient(root.WithOpName("apply"), acc, step, indices, values,
                                        unused_shape, false);
    ops::SparseAccumulatorApplyGradient(root.WithOpName("apply_shaped"), acc, step, indices, values,
                                        dense, true);
    ops::SparseAccumulatorTakeGradient(root.WithOpName("take"), acc, n, DT_FLOAT);
    ops::AccumulatorNumAccumulated(root.WithOpName("num"), acc);
    ops::AccumulatorApplyGradient(root.WithOpName("apply_dense"), acc, step, values);
    ops::AccumulatorTakeGradient(root.WithOpName("take_dense"), acc, n, DT_FLOAT);
    session = NewSession(root);
  }

  static Tensor Indices(std::vector<int64_t> v) {
    Tensor t(DT_INT64, TensorShape({static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  }
  static Tensor Rows(std::vector<std::vector<float>> rows, int64_t width = 2) {
    Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(rows.size()), width}));
    float* out = t.data<float>();
    for (const auto& row : rows) out = std::copy(row.begin(), row.end(), out);
    return t;
  }

  Status Apply(int64_t step, std::vector<int64_t> indices, Tensor values) {
    std::vector<Tensor> out;
    return session->Run(
        {{"step", Int64(step)}, {"indices", Indices(std::move(indices))}, {"values", values}}, {},
        {"apply"}, &out);
  }
  Status ApplyShaped(int64_t step, std::vector<int64_t> indices, Tensor values,
                     std::vector<int64_t> dense) {
    std::vector<Tensor> out;
    return session->Run({{"step", Int64(step)},
                         {"indices", Indices(std::move(indices))},
                         {"values", values},
                         {"dense", Indices(std::move(dense))}},
                        {}, {"apply_shaped"}, &out);
  }
  StatusOr<std::vector<Tensor>> Take(int32_t n) {
    std::vector<Tensor> out;
    RunOptions options;
    options.timeout_ms = 20000;
    WEIR_RETURN_IF_ERROR(
        session->Run({{"n", Int32(n)}}, {"take:0", "take:1", "take:2"}, {}, &out, options));
    return out;
  }
  int32_t Num() {
    std::vector<Tensor> out;
    Status s = session->Run({}, {"num"}, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    return s.ok() ? out[0].scalar<int32_t>() : -1;
  }

  std::unique_ptr<Session> session;
};

std::vector<int64_t> Ints(const Tensor& t) {
  return {t.flat<int64_t>().begin(), t.flat<int64_t>().end()};
}

TEST(SparseAccumulatorTest, MeanPerRowOverTheGradientsThatTouchedIt) {
  SparseGraph g;
  ASSERT_TRUE(g.Apply(0, {1, 3}, SparseGraph::Rows({{1, 2}, {3, 4}})).ok());
  ASSERT_TRUE(g.Apply(0, {0, 1}, SparseGraph::Rows({{10, 20}, {30, 40}})).ok());
  auto took = g.Take(2);
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_EQ(Ints((*took)[0]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ((*took)[1].shape(), TensorShape({3, 2}));
  // Row 1 had two gradients: (1 + 30) / 2, (2 + 40) / 2 (TensorFlow's values).
  EXPECT_EQ(Values((*took)[1]), (std::vector<float>{10, 20, 15.5, 21, 3, 4}));
  EXPECT_EQ(Ints((*took)[2]), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(g.Num(), 0);
}

TEST(SparseAccumulatorTest, SumWithUnknownShapeAndUnsortedRepeatedIndices) {
  SparseGraph g("SUM", PartialShape::UnknownRank());
  // Index 3 twice in one gradient: summed, and that gradient touched it once.
  ASSERT_TRUE(g.Apply(0, {3, 1, 3}, SparseGraph::Rows({{1, 1}, {2, 2}, {3, 3}})).ok());
  ASSERT_TRUE(g.ApplyShaped(0, {3}, SparseGraph::Rows({{2, 2}}), {9, 2}).ok());
  auto took = g.Take(2);
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_EQ(Ints((*took)[0]), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Values((*took)[1]), (std::vector<float>{2, 2, 6, 6}));
  EXPECT_EQ(Ints((*took)[2]), (std::vector<int64_t>{-1, 2}));
}

TEST(SparseAccumulatorTest, RepeatedIndexCountsOncePerGradientForTheMean) {
  SparseGraph g;
  ASSERT_TRUE(g.Apply(0, {3, 3}, SparseGraph::Rows({{1, 1}, {3, 3}})).ok());
  ASSERT_TRUE(g.Apply(0, {3}, SparseGraph::Rows({{2, 2}})).ok());
  auto took = g.Take(2);
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_EQ(Values((*took)[1]), (std::vector<float>{3, 3}));  // (1 + 3 + 2) / 2 gradients
}

TEST(SparseAccumulatorTest, StaleDroppedAndEmptyGradientsCount) {
  SparseGraph g;
  ASSERT_TRUE(g.Apply(0, {}, SparseGraph::Rows({})).ok());
  ASSERT_TRUE(g.Apply(0, {2}, SparseGraph::Rows({{4, 6}})).ok());
  auto took = g.Take(2);
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_EQ(Ints((*took)[0]), (std::vector<int64_t>{2}));
  EXPECT_EQ(Values((*took)[1]), (std::vector<float>{4, 6}));  // one gradient touched row 2
  ASSERT_TRUE(g.Apply(0, {1}, SparseGraph::Rows({{1, 1}})).ok());  // stale: step is 1
  EXPECT_EQ(g.Num(), 0);
}

TEST(SparseAccumulatorTest, BadGradientsNameTheShapes) {
  SparseGraph g;
  ExpectError(
      g.Apply(0, {4}, SparseGraph::Rows({{1, 2}})), Code::kInvalidArgument,
      {"'apply'", "SparseConditionalAccumulator '_acc'", "index 0", "is 4", "outside [0, 4)"});
  ExpectError(g.Apply(0, {-1}, SparseGraph::Rows({{1, 2}})), Code::kInvalidArgument, {"is -1"});
  ExpectError(g.Apply(0, {1}, SparseGraph::Rows({{1, 2, 3}}, 3)), Code::kInvalidArgument,
              {"Shape mismatch", "expected values dim 1 to be 2, got 3"});
  ExpectError(g.Apply(0, {1, 2}, SparseGraph::Rows({{1, 2}})), Code::kInvalidArgument,
              {"one row of gradient_values per index", "[2]", "[1,2]"});
  ExpectError(g.ApplyShaped(0, {1}, SparseGraph::Rows({{1, 2}}), {5, 2}), Code::kInvalidArgument,
              {"gradient_shape [5,2]"});
  ExpectError(g.ApplyShaped(0, {1}, SparseGraph::Rows({{1, 2}}), {4}), Code::kInvalidArgument,
              {"gradient_shape [1]"});
  std::vector<Tensor> out;
  ExpectError(
      g.session->Run({{"step", Int64(0)}, {"values", Floats({1, 2})}}, {}, {"apply_dense"}, &out),
      Code::kInvalidArgument, {"takes IndexedSlices"});
  ExpectError(g.session->Run({{"n", Int32(1)}}, {"take_dense"}, {}, &out), Code::kInvalidArgument,
              {"AccumulatorTakeGradient cannot act on", "(sparse)"});
  EXPECT_EQ(g.Num(), 0);
}

TEST(SparseAccumulatorTest, HostileShapesAreErrorsNotCrashes) {
  const int64_t huge = int64_t{1} << 40;
  SparseGraph g("MEAN", PartialShape({4, huge, huge}));
  // No rows, but rows of 2^80 elements: the element count overflows.
  auto empty = TensorShape::FromDims(std::vector<int64_t>{0, huge, huge});
  ASSERT_TRUE(empty.ok()) << empty.status();
  ExpectError(g.Apply(0, {}, Tensor(DT_FLOAT, *empty)), Code::kInvalidArgument, {"a gradient row"});
  EXPECT_EQ(g.Num(), 0);
  // A gradient_shape of negative or mismatched dims.
  SparseGraph h;
  ExpectError(h.ApplyShaped(0, {1}, SparseGraph::Rows({{1, 2}}), {-4, 2}), Code::kInvalidArgument,
              {"gradient_shape [-4,2]"});
  ExpectError(h.ApplyShaped(0, {1}, SparseGraph::Rows({{1, 2}}), {4, 2, 1}), Code::kInvalidArgument,
              {"must list the 2 dims"});
}

TEST(AccumulatorErrorsTest, HostileShapeAttrsNeverAllocate) {
  // A dense accumulator whose declared shape is far too large: only real
  // gradients are ever stored, so a small one is just a mismatch.
  const int64_t huge = int64_t{1} << 40;
  Graph g(/*resource=*/true, "MEAN", PartialShape({huge, huge}));
  ExpectError(g.Apply(0, Floats({1, 2})), Code::kInvalidArgument, {"Shape mismatch"});
  EXPECT_EQ(g.Num(), 0);
}

}  // namespace
}  // namespace weir
