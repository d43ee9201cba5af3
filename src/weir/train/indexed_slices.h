// The gradient as the autodiff driver hands it out: dense, or sparse rows
// (IndexedSlices, declared with the gradient functions that produce it).
#pragma once

#include "weir/graph/scope.h"
#include "weir/ops/gradients/gradient_registry.h"

namespace weir {

// `dense` when dense (the common case); otherwise `sparse` is set and
// `dense` is invalid.
struct Gradient {
  Output dense;
  bool is_sparse = false;
  IndexedSlices sparse;

  static Gradient Dense(Output g) { return Gradient{g, false, {}}; }
  static Gradient Sparse(IndexedSlices s) { return Gradient{Output(), true, s}; }
  bool valid() const { return is_sparse ? sparse.values.valid() : dense.valid(); }
};

}  // namespace weir
