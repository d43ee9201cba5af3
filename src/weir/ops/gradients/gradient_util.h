// Helpers shared by the gradient functions of every family (internal to
// ops/gradients/): reading the forward op, undoing broadcasts, recognizing
// gradients that are known to be zero.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/ops/gradients/gradient_registry.h"

namespace weir {

// Input i of the forward op.
Output ForwardInput(const Operation& op, int i);

// The forward op's attrs named in `names` that it has, to build an op of the
// same configuration (a convolution's backprop takes the convolution's
// strides, padding, ...). Type attrs are left out: AddOp infers them.
AttrMap ForwardAttrs(const Operation& op, std::initializer_list<const char*> names);

// Gradients for z = f(x, y) under NumPy broadcasting: `gx_full` and
// `gy_full` are shaped like z, and each is summed over the axes that
// broadcasting stretched, then reshaped to its input's shape. An invalid
// full gradient stays invalid.
std::vector<Output> ReduceForBroadcast(const Scope& scope, const Output& x, const Output& y,
                                       const Output& gx_full, const Output& gy_full);

// `grad`, shaped like a broadcast that `x` took part in, summed back to x's
// shape (itself when the shapes are statically equal).
Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x);

// The values of `t` when it is a Const int32/int64 scalar or vector (axes,
// shapes); nullopt when only known at run time.
std::optional<std::vector<int64_t>> ConstantInts(const Output& t);

// An int32 vector constant.
Output IntVector(const Scope& scope, const std::vector<int64_t>& values);

// The shape of `x` as an int32 vector: a constant when statically known
// (so shape inference sees it and no Shape node runs), else Shape(x).
Output ShapeOf(const Scope& scope, const Output& x);

// The gradient of gathering rows `indices` (any shape) of a tensor shaped
// `shape` (an int32 vector), given the gather's output gradient `g`: g's
// rows, one per index.
IndexedSlices GatheredRows(const Scope& scope, const Output& g, const Output& indices,
                         const Output& shape);

// Whether `g` is absent or built as zeros (ZerosLike, or a Const of zeros):
// lets a gradient function refuse only the gradients it cannot give.
bool IsZeroGradient(const Output& g);

}  // namespace weir
