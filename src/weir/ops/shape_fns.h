// Shape functions shared by several ops. Each reads the node's input shapes
// (and constant inputs where known) from the InferenceContext and sets the
// output shapes; unknown dims and ranks stay unknown rather than guessed.
// Messages say what is wrong; the caller adds the node, op and input shapes.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

class InferenceContext;
class Tensor;

// Each of the listed inputs must be a scalar.
Status ScalarInputs(InferenceContext* c, std::initializer_list<int> inputs);

// Output 0 has the shape of input 0, and its handle data (a list or
// resource handle passes through Identity and the like).
Status UnchangedShape(InferenceContext* c);

// Output 0 is NumPy broadcasting of inputs 0 and 1. Where the op has an
// `incompatible_shape_error` attr (Equal, NotEqual) set to false, shapes
// that do not broadcast give an unknown shape instead of an error (the
// kernel then outputs a scalar).
Status BroadcastBinaryOpShape(InferenceContext* c);

// Output 0 is NumPy broadcasting of all inputs (SelectV2).
Status BroadcastAllInputsShape(InferenceContext* c);

// All inputs have one shape, which output 0 has too (AddN, the gradient
// ops of activations).
Status MergeAllInputsShape(InferenceContext* c);

// Select's inputs (condition, t, e): t and e have one shape, the output's;
// the condition is a scalar, that shape, or a vector over its first dim.
Status SelectShape(InferenceContext* c);

// [m, k] x [k, n] -> [m, n], with the transpose_a / transpose_b attrs.
Status MatMulShape(InferenceContext* c);

// Input 0 reduced over the axes in input 1 (scalar or vector, negative axes
// count from the end), with the keep_dims attr. Uses input 1's value when it
// is a known constant.
Status ReductionShape(InferenceContext* c);

// Input 0 reshaped to the dims in input 1 (one of them may be -1). Uses
// input 1's value when it is a known constant.
Status ReshapeShape(InferenceContext* c);

// The dims given by input `input`, a shape vector (Reshape's shape,
// RandomUniform's shape): checks it is a vector, and returns its values
// when it is a known constant. When it is not, sets output 0 to what is
// known (its length as the rank, or unknown rank) and returns nullopt.
StatusOr<std::optional<std::vector<int64_t>>> ShapeVectorInput(InferenceContext* c, int input);

}  // namespace weir
