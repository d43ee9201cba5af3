// TensorArrays and stacks inside WhileLoops, run by a Session: a
// dynamic_rnn-style loop (inputs scattered into one array, read per
// iteration, results written to a growing array, gathered after), and a
// stack filled by one loop and emptied by another, as a loop's gradient
// uses it. Values against plain C++.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/kernels/kernel_test_util.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

constexpr int kRows = 5;
constexpr int kCols = 3;

Tensor Inputs() {
  std::vector<float> v(kRows * kCols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i) - 1.5f;
  return Tensor::FromVector<float>(v, {kRows, kCols});
}

Output Scalar(const Scope& s, int32_t v) { return ops::Const(s, Tensor::Scalar<int32_t>(v)); }

TEST(TensorArrayLoopTest, ReadsAndWritesOneIndexPerIteration) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  Operation in = ops::TensorArrayV3(root, Scalar(root, kRows), DT_FLOAT);
  Output in_flow = ops::TensorArrayScatterV3(
      root, in.output(0), ops::Range(root, Scalar(root, 0), Scalar(root, kRows), Scalar(root, 1)),
      x, in.output(1));
  Operation out = ops::TensorArrayV3(root, Scalar(root, 0), DT_FLOAT, {{"dynamic_size", true}});
  std::vector<Output> results;
  Status built = ops::WhileLoop(
      root, {Scalar(root, 0), out.output(1)},
      [&](const Scope& s, const std::vector<Output>& vars, Output* pred) {
        *pred = ops::Less(s, vars[0], n);
        return s.status();
      },
      [&](const Scope& s, const std::vector<Output>& vars, std::vector<Output>* next) {
        Output row = ops::TensorArrayReadV3(s, in.output(0), vars[0], in_flow, DT_FLOAT);
        Output flow = ops::TensorArrayWriteV3(s, out.output(0), vars[0],
                                              ops::Mul(s, ops::Tanh(s, row), 2.0f), vars[1]);
        *next = {ops::Add(s, vars[0], 1), flow};
        return s.status();
      },
      &results);
  ASSERT_TRUE(built.ok()) << built;
  Output size = ops::TensorArraySizeV3(root.WithOpName("size"), out.output(0), results[1]);
  ops::TensorArrayGatherV3(root.WithOpName("y"), out.output(0),
                           ops::Range(root, Scalar(root, 0), size, Scalar(root, 1)), results[1],
                           DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();

  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  const Tensor inputs = Inputs();
  for (int trips : {kRows, 2, 0}) {
    std::vector<Tensor> fetched;
    Status ran = (*session)->Run({{"x", inputs}, {"n", Tensor::Scalar<int32_t>(trips)}},
                                 {"size", "y"}, {}, &fetched);
    if (trips == 0) {
      // Gathering nothing from an array of unknown element shape.
      EXPECT_EQ(ran.code(), Code::kInvalidArgument) << ran;
      continue;
    }
    ASSERT_TRUE(ran.ok()) << ran;
    EXPECT_EQ(fetched[0].scalar<int32_t>(), trips);
    ASSERT_EQ(fetched[1].shape(), TensorShape({trips, kCols}));
    for (int i = 0; i < trips * kCols; ++i) {
      EXPECT_NEAR(fetched[1].data<float>()[i], 2 * std::tanh(inputs.data<float>()[i]), 1e-6) << i;
    }
  }
}

TEST(TensorArrayLoopTest, StackFilledByOneLoopEmptiedByAnother) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output stack = ops::StackV2(root, Scalar(root, -1), DT_FLOAT);
  Output rows = ops::Range(root, Scalar(root, 0), Scalar(root, kRows), Scalar(root, 1));
  auto loop = [&](const Scope& scope, const Output& start, const ops::LoopBodyFn& body,
                  std::vector<Output>* outs) {
    return ops::WhileLoop(
        scope, {start},
        [&](const Scope& s, const std::vector<Output>& vars, Output* pred) {
          *pred = ops::Less(s, vars[0], kRows);
          return s.status();
        },
        body, outs);
  };
  std::vector<Output> pushed;
  ASSERT_TRUE(loop(
                  root.NewSubScope("push"), Scalar(root, 0),
                  [&](const Scope& s, const std::vector<Output>& vars, std::vector<Output>* next) {
                    Output row = ops::GatherV2(s, x, vars[0], 0);
                    Output push = ops::StackPushV2(s, stack, row);
                     // The next push waits for this one.
                    *next = {
                        ops::Add(s.WithControlDependencies({Operation(push.node())}), vars[0], 1)};
                    return s.status();
                  },
                  &pushed)
                  .ok());
  // The popping loop starts once the pushing one is done; its i-th pop
  // goes to row i of an array.
  Operation out = ops::TensorArrayV3(root, Scalar(root, kRows), DT_FLOAT);
  Output start =
      ops::Identity(root.WithControlDependencies({Operation(pushed[0].node())}), Scalar(root, 0));
  std::vector<Output> popped;
  Status built = ops::WhileLoop(
      root.NewSubScope("pop"), {start, out.output(1)},
      [&](const Scope& s, const std::vector<Output>& vars, Output* pred) {
        *pred = ops::Less(s, vars[0], kRows);
        return s.status();
      },
      [&](const Scope& s, const std::vector<Output>& vars, std::vector<Output>* next) {
        Output top = ops::StackPopV2(s, stack, DT_FLOAT);
        // The next pop waits for this one.
        *next = {ops::Add(s.WithControlDependencies({Operation(top.node())}), vars[0], 1),
                 ops::TensorArrayWriteV3(s, out.output(0), vars[0], top, vars[1])};
        return s.status();
      },
      &popped, {.parallel_iterations = 1});
  ASSERT_TRUE(built.ok()) << built;
  Output y =
      ops::TensorArrayGatherV3(root.WithOpName("y"), out.output(0), rows, popped[1], DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();

  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  const Tensor inputs = Inputs();
  std::vector<Tensor> fetched;
  Status ran = (*session)->Run({{"x", inputs}}, {"y"}, {}, &fetched);
  ASSERT_TRUE(ran.ok()) << ran;
  // Row i of y is row kRows - 1 - i of x.
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) {
      EXPECT_EQ(fetched[0].data<float>()[i * kCols + j],
                inputs.data<float>()[(kRows - 1 - i) * kCols + j])
          << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace weir
