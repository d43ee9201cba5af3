// Gradients through a v1 while loop that carries a TensorList (DT_VARIANT)
// as a loop variable: each iteration pushes a value computed from x, the
// list is stacked after the loop. Against central finite differences.
#include <gtest/gtest.h>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/gradient_checker.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

// list = []; for i in 0..n-1: list.push(x * x * (i + 1)); y = stack(list).
// With `carry`, a float loop variable rides along (acc = acc * 0.5 + x).
Output ListLoop(const Scope& root, const Output& x, int n, bool carry) {
  Output shape = ops::Const(root, Tensor::FromVector<int32_t>({2}));
  Output empty = ops::EmptyTensorList(root, shape, ops::Const(root, -1), DT_DOUBLE);
  std::vector<Output> init = {ops::Const(root, 0), empty};
  if (carry) init.push_back(ops::ZerosLike(root, x));
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, init,
      [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(sc, v[0], n);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& v, std::vector<Output>* next) {
        Output scale = ops::Cast(sc, ops::Add(sc, v[0], 1), DT_DOUBLE);
        Output value = ops::Mul(sc, ops::Mul(sc, x, x), scale);
        *next = {ops::Add(sc, v[0], 1), ops::TensorListPushBack(sc, v[1], value)};
        if (carry) next->push_back(ops::Add(sc, ops::Mul(sc, v[2], 0.5), x));
        return Status::OK();
      },
      &out);
  EXPECT_TRUE(s.ok()) << s;
  Output stacked = ops::TensorListStack(root, out[1], shape, DT_DOUBLE);
  Output y = ops::Sum(root, stacked, ops::Const(root, Tensor::FromVector<int32_t>({0})));
  return carry ? ops::Add(root, y, out[2]) : y;
}

class WhileListGradientsTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }
};

TEST_F(WhileListGradientsTest, ListLoopVariableMatchesFiniteDifferences) {
  for (bool carry : {false, true}) {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE,
                              {{"shape", PartialShape(std::vector<int64_t>{2})}});
    Output y = ListLoop(root, x, 3, carry);
    StatusOr<double> error =
        MaxGradientError(root, {x}, {Tensor::FromVector<double>({0.7, -1.3})}, y, 1e-6);
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_LT(*error, 1e-6) << "carry " << carry;
  }
}

TEST_F(WhileListGradientsTest, ListReadByIndexInTheLoopMatchesFiniteDifferences) {
  // rows = list of x's rows (a loop variable passed on unchanged);
  // acc = sum over i of rows[i] * rows[i] * (i + 1), as dynamic_rnn reads
  // its input TensorArray.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE,
                            {{"shape", PartialShape(std::vector<int64_t>{3, 2})}});
  Output shape = ops::Const(root, Tensor::FromVector<int32_t>({2}));
  Output rows = ops::TensorListFromTensor(root, x, shape);
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, {ops::Const(root, 0), rows, ops::Const(root, Tensor::FromVector<double>({0, 0}))},
      [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(sc, v[0], 3);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& v, std::vector<Output>* next) {
        Output row = ops::TensorListGetItem(sc, v[1], v[0], shape, DT_DOUBLE);
        Output scale = ops::Cast(sc, ops::Add(sc, v[0], 1), DT_DOUBLE);
        *next = {ops::Add(sc, v[0], 1), v[1],
                 ops::Add(sc, v[2], ops::Mul(sc, ops::Mul(sc, row, row), scale))};
        return Status::OK();
      },
      &out);
  ASSERT_TRUE(s.ok()) << s;
  StatusOr<double> error = MaxGradientError(
      root, {x},
      {Tensor::FromVector<double>({0.7, -1.3, 0.4, 2.0, -0.5, 1.1}, TensorShape({3, 2}))}, out[2],
      1e-6);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-6);
}

TEST_F(WhileListGradientsTest, CapturedListReadInTheLoopMatchesFiniteDifferences) {
  // The same read of a list the body captures from outside the loop.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE,
                            {{"shape", PartialShape(std::vector<int64_t>{3, 2})}});
  Output shape = ops::Const(root, Tensor::FromVector<int32_t>({2}));
  Output rows = ops::TensorListFromTensor(root, x, shape);
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, Tensor::FromVector<double>({0, 0}))},
      [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(sc, v[0], 3);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& v, std::vector<Output>* next) {
        Output row = ops::TensorListGetItem(sc, rows, v[0], shape, DT_DOUBLE);
        Output scale = ops::Cast(sc, ops::Add(sc, v[0], 1), DT_DOUBLE);
        *next = {ops::Add(sc, v[0], 1),
                 ops::Add(sc, v[1], ops::Mul(sc, ops::Mul(sc, row, row), scale))};
        return Status::OK();
      },
      &out);
  ASSERT_TRUE(s.ok()) << s;
  StatusOr<double> error = MaxGradientError(
      root, {x},
      {Tensor::FromVector<double>({0.7, -1.3, 0.4, 2.0, -0.5, 1.1}, TensorShape({3, 2}))}, out[1],
      1e-6);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-6);
}

}  // namespace
}  // namespace weir
