#include "weir/train/gradients_test_util.h"

#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/train/gradient_checker.h"

namespace weir {

Tensor DistinctValues(TensorShape shape) {
  Tensor t(DT_DOUBLE, shape);
  const int64_t n = t.NumElements();
  // i -> (i * 7919) mod p is a permutation of [0, p) for prime p > n.
  int64_t p = 1009;
  while (p <= n) p = p * 2 + 1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rank = (i * 7919 + 13) % p;
    t.data<double>()[i] = -2.0 + 4.0 * static_cast<double>(rank) / static_cast<double>(p);
  }
  return t;
}

Tensor ToFloat(const Tensor& t) {
  Tensor f(DT_FLOAT, t.shape());
  for (int64_t i = 0; i < t.NumElements(); ++i) f.data<float>()[i] = static_cast<float>(t.data<double>()[i]);
  return f;
}

namespace {

void Check(const std::vector<Tensor>& inputs, const GraphBuilder& build, double tolerance,
           double delta) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> xs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    xs.push_back(ops::Placeholder(root.WithOpName(StrCat("x", i)), inputs[i].dtype(),
                                  {{"shape", PartialShape(inputs[i].shape())}}));
  }
  Output y = build(root, xs);
  ASSERT_TRUE(root.ok()) << root.status();
  StatusOr<double> error = MaxGradientError(root, xs, inputs, y, delta);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, tolerance);
}

}  // namespace

void ExpectGradientsMatch(const std::vector<Tensor>& inputs, const GraphBuilder& build,
                          double tolerance, double delta) {
  Check(inputs, build, tolerance, delta);
}

void ExpectFloatGradientsMatch(const std::vector<Tensor>& inputs, const GraphBuilder& build,
                               double tolerance) {
  std::vector<Tensor> floats;
  for (const Tensor& t : inputs) floats.push_back(t.dtype() == DT_DOUBLE ? ToFloat(t) : t);
  Check(floats, build, tolerance, /*delta=*/1e-2);
}

}  // namespace weir
