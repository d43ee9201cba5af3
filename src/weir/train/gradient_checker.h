// Numerical gradient checking: compares the symbolic gradient of a scalar
// projection of y with central finite differences, by running the graph.
#pragma once

#include <vector>

#include "weir/graph/scope.h"

namespace weir {

// The largest absolute difference between d(sum(w * y))/dx computed by
// AddSymbolicGradients and by central differences with step `delta`, where
// x are Placeholders fed `x_values` and w is a fixed pseudo-random weight
// tensor (so the whole Jacobian is exercised, not only its column sums).
// REQUIRES: xs are Placeholders of DT_DOUBLE or DT_FLOAT; y is floating.
StatusOr<double> MaxGradientError(const Scope& scope, const std::vector<Output>& xs,
                                  const std::vector<Tensor>& x_values, const Output& y,
                                  double delta = 1e-3);

}  // namespace weir
