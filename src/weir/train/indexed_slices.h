// A gradient that touches only some rows of a tensor, as the gradient of a
// gather produces it: row `indices[i]` of a tensor shaped `dense_shape` gets
// `values[i]` (repeated indices add). Optimizers apply it with sparse
// (scatter) updates, so an embedding's gradient is never densified unless a
// consumer needs the dense tensor.
#pragma once

#include "weir/graph/scope.h"

namespace weir {

struct IndexedSlices {
  Output values;       // [n, rest of dense_shape...]
  Output indices;      // [n], int32 or int64
  Output dense_shape;  // int32 or int64 vector; the shape of the dense gradient
};

// A gradient as the autodiff driver hands it out: `dense` when dense (the
// common case); otherwise `sparse` is set and `dense` is invalid.
struct Gradient {
  Output dense;
  bool is_sparse = false;
  IndexedSlices sparse;

  static Gradient Dense(Output g) { return Gradient{g, false, {}}; }
  static Gradient Sparse(IndexedSlices s) { return Gradient{Output(), true, s}; }
  bool valid() const { return is_sparse ? sparse.values.valid() : dense.valid(); }
};

}  // namespace weir
