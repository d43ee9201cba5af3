// Helpers for the gradient tests: every gradient function is checked the
// same way, against central finite differences (gradient_checker.h).
#pragma once

#include <functional>
#include <vector>

#include "weir/framework/tensor.h"
#include "weir/graph/scope.h"

namespace weir {

inline Tensor Values(std::vector<double> v, TensorShape shape) {
  return Tensor::FromVector<double>(v, shape);
}

// `count` distinct doubles, spread over roughly [-2, 2] in a scrambled
// order (no ties: max-pooling and max-reductions are not differentiable at
// ties, and finite differences would straddle them).
Tensor DistinctValues(TensorShape shape);

// The same values as float.
Tensor ToFloat(const Tensor& t);

using GraphBuilder = std::function<Output(const Scope&, const std::vector<Output>&)>;

// Builds y = build(placeholders shaped and typed like `inputs`) and expects
// MaxGradientError below `tolerance`. Doubles with a small step give
// central differences accurate to about delta^2 * f''' (1e-9 by default).
void ExpectGradientsMatch(const std::vector<Tensor>& inputs, const GraphBuilder& build,
                          double tolerance = 1e-6, double delta = 1e-5);

// Float: rounding makes the error about eps * |f| / delta, so a larger
// step and a looser tolerance.
void ExpectFloatGradientsMatch(const std::vector<Tensor>& inputs, const GraphBuilder& build,
                               double tolerance = 2e-2);

}  // namespace weir
