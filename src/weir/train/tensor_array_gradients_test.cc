// Gradients through TensorArrays (ops/gradients/data_flow_grad.cc): values
// go into an array, come out, are computed on, and the gradient with
// respect to what went in is checked against finite differences; outside
// loops, and in a dynamic_rnn-style WhileLoop. Also: an array's errors
// name the node through a Session.
#include <gtest/gtest.h>

#include <set>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

struct Array {
  Output handle;
  Output flow;
};

Array NewArray(const Scope& s, int size, AttrMap attrs = {}) {
  Operation ta = ops::TensorArrayV3(s, ops::Const(s, Tensor::Scalar<int32_t>(size)), DT_DOUBLE,
                                    std::move(attrs));
  return {ta.output(0), ta.output(1)};
}

Output Ints(const Scope& s, std::vector<int32_t> v) {
  return ops::Const(s, Tensor::FromVector<int32_t>(v));
}
Output Index(const Scope& s, int32_t i) { return ops::Const(s, Tensor::Scalar<int32_t>(i)); }

// An array's reads have shapes known only at run time; the checker needs
// y's rank.
Output Flat(const Scope& s, const Output& y) { return ops::Reshape(s, y, {-1}); }

Output Read(const Scope& s, const Array& a, int index) {
  return ops::TensorArrayReadV3(s, a.handle, Index(s, index), a.flow, DT_DOUBLE);
}

TEST(TensorArrayGradientsTest, ScatterThenRead) {
  // Rows 0 and 2 are never read: their gradient is the zeros the gradient
  // array gives for unwritten indices.
  ExpectGradientsMatch({DistinctValues({4, 3})}, [](const Scope& s, const std::vector<Output>& x) {
    Array a = NewArray(s, 4);
    a.flow = ops::TensorArrayScatterV3(s, a.handle, Ints(s, {2, 1, 3, 0}), x[0], a.flow);
    return Flat(
        s, ops::Add(s, ops::Mul(s, Read(s, a, 1), Read(s, a, 3)), ops::Square(s, Read(s, a, 0))));
  });
}

TEST(TensorArrayGradientsTest, WritesThenGather) {
  ExpectGradientsMatch(
      {DistinctValues({2, 2}), DistinctValues({2, 2})},
      [](const Scope& s, const std::vector<Output>& x) {
        Array a = NewArray(s, 3, {{"element_shape", PartialShape({2, 2})}});
        a.flow = ops::TensorArrayWriteV3(s, a.handle, Index(s, 2), x[0], a.flow);
        a.flow = ops::TensorArrayWriteV3(s, a.handle, Index(s, 0), x[1], a.flow);
        Output g = ops::TensorArrayGatherV3(s, a.handle, Ints(s, {0, 1, 2}), a.flow, DT_DOUBLE);
        return Flat(s, ops::Tanh(s, ops::Mul(s, g, g)));
      });
}

TEST(TensorArrayGradientsTest, SplitThenConcatAndRead) {
  ExpectGradientsMatch({DistinctValues({5, 2})}, [](const Scope& s, const std::vector<Output>& x) {
    Array a = NewArray(s, 3, {{"clear_after_read", false}});
    a.flow = ops::TensorArraySplitV3(s, a.handle, x[0],
                                     ops::Const(s, Tensor::FromVector<int64_t>({2, 0, 3})), a.flow);
    Output all = ops::TensorArrayConcatV3(s, a.handle, a.flow, DT_DOUBLE).output(0);
    Output last = Read(s, a, 2);  // rows 2..4 again: their gradients add up
    return Flat(
        s, ops::Add(s, ops::Sum(s, ops::Square(s, all), 0), ops::Sum(s, ops::Exp(s, last), 0)));
  });
}

TEST(TensorArrayGradientsTest, ReadsOfScatterAndGatherOfWrites) {
  // Two arrays in a row: x scattered into one, its rows read and written
  // into another in reverse, which is gathered.
  ExpectGradientsMatch({DistinctValues({3, 2})}, [](const Scope& s, const std::vector<Output>& x) {
    Array in = NewArray(s, 3);
    in.flow = ops::TensorArrayScatterV3(s, in.handle, Ints(s, {0, 1, 2}), x[0], in.flow);
    Array out = NewArray(s, 3);
    for (int i = 0; i < 3; ++i) {
      Output row = ops::Sin(s, Read(s, in, i));
      out.flow = ops::TensorArrayWriteV3(s, out.handle, Index(s, 2 - i), row, out.flow);
    }
    Output g = ops::TensorArrayGatherV3(s, out.handle, Ints(s, {0, 1, 2}), out.flow, DT_DOUBLE);
    return Flat(
        s, ops::Mul(s, g, ops::Const(s, Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, {3, 2}))));
  });
}

// As dynamic_rnn builds it: inputs scattered into an array, one row read
// per iteration of a WhileLoop, h = tanh(row * w + h) written per
// iteration, the outputs gathered; differentiated with respect to the
// inputs and the captured w (the loop's gradient is train/while_gradients).
// (i, h, flow): a read's shape is known only at run time, so h's is too.
ops::WhileLoopOptions LoopShapes() {
  ops::WhileLoopOptions options;
  const PartialShape scalar(std::vector<int64_t>{});
  options.shape_invariants = {scalar, PartialShape::UnknownRank(), scalar};
  return options;
}

TEST(TensorArrayGradientsTest, ThroughAWhileLoop) {
  ExpectGradientsMatch(
      {DistinctValues({4, 3}), DistinctValues({3})},
      [](const Scope& s, const std::vector<Output>& x) {
        Output steps = ops::Range(s, Index(s, 0), Index(s, 4), Index(s, 1));
        Array in = NewArray(s, 4);
        in.flow = ops::TensorArrayScatterV3(s, in.handle, steps, x[0], in.flow);
        Array out = NewArray(s, 4);
        Output h0 = ops::Const(s, Tensor::FromVector<double>({0.1, -0.2, 0.3}));
        std::vector<Output> results;
        Status built = ops::WhileLoop(
            s, {Index(s, 0), h0, out.flow},
            [](const Scope& c, const std::vector<Output>& vars, Output* pred) {
              *pred = ops::Less(c, vars[0], 4);
              return c.status();
            },
            [&](const Scope& b, const std::vector<Output>& vars, std::vector<Output>* next) {
              Output row = ops::TensorArrayReadV3(b, in.handle, vars[0], in.flow, DT_DOUBLE);
              Output h = ops::Tanh(b, ops::Add(b, ops::Mul(b, row, x[1]), vars[1]));
              *next = {ops::Add(b, vars[0], 1), h,
                       ops::TensorArrayWriteV3(b, out.handle, vars[0], h, vars[2])};
              return b.status();
            },
            &results, LoopShapes());
        EXPECT_TRUE(built.ok()) << built;
        return Flat(s, ops::TensorArrayGatherV3(s, out.handle, steps, results[2], DT_DOUBLE));
      });
}

TEST(TensorArrayGradientsTest, OneGradientComputationUsesOneSource) {
  // Every gradient function of one AddSymbolicGradients call must meet the
  // same gradient array, though the driver gives each its own sub-scope.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  Array a = NewArray(root, 2);
  a.flow = ops::TensorArrayScatterV3(root, a.handle, Ints(root, {0, 1}), x, a.flow);
  Output y = ops::Mul(root, Read(root, a, 0), Read(root, a, 1));
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  std::set<std::string> sources;
  for (Node* node : root.graph()->nodes()) {
    if (node->type_string() != "TensorArrayGradV3") continue;
    std::string source;
    ASSERT_TRUE(GetAttr(node->def().attrs, "source", &source).ok());
    sources.insert(source);
  }
  EXPECT_EQ(sources, (std::set<std::string>{"gradients"}));
}

TEST(TensorArrayGradientsTest, ErrorsNameTheNodeIndexAndSize) {
  Scope root = Scope::NewRootScope();
  Array a = NewArray(root, 2);
  auto value = ops::Const(root, Tensor::FromVector<double>({1, 2}));
  auto late = ops::TensorArrayWriteV3(root.WithOpName("late_write"), a.handle, Index(root, 5),
                                      value, a.flow);
  auto write =
      ops::TensorArrayWriteV3(root.WithOpName("write"), a.handle, Index(root, 1), value, a.flow);
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> outputs;
  Status status = (*session)->Run({}, {late.name()}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  for (const char* part : {"late_write", "index 5", "size is 2"}) {
    EXPECT_NE(status.message().find(part), std::string::npos) << status << " lacks " << part;
  }
  // The array lives for one step: each step has a new one, so the same
  // write works every time.
  for (int step = 0; step < 2; ++step) {
    Status ran = (*session)->Run({}, {write.name()}, {}, &outputs);
    EXPECT_TRUE(ran.ok()) << ran;
  }
}

}  // namespace
}  // namespace weir
