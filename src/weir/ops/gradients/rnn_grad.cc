// Gradients of the recurrent family. LSTMBlockCell's is TensorFlow's: the
// LSTMBlockCellGrad kernel gives cs_prev's gradient, the peephole weights'
// and dicfo (the gradient of the gates' pre-activations, [batch, 4 * cell]);
// the products that take dicfo back through [x, h_prev] * w + b are graph
// code, so they run on the MatMul and BiasAddGrad kernels.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// The int32 vector {first, second} where one entry may be x's column count
// (kInputWidth): constants when x's shape is known, else taken from it.
constexpr int64_t kInputWidth = -2;
Output VectorWithInputWidth(const Scope& scope, const Output& x, int64_t first, int64_t second) {
  const PartialShape shape = x.shape();
  if (shape.known_rank() && shape.rank() == 2 && shape.dim(1) != PartialShape::kUnknown) {
    return IntVector(scope, {first == kInputWidth ? shape.dim(1) : first,
                             second == kInputWidth ? shape.dim(1) : second});
  }
  const Output width = ops::Slice(scope, ops::Shape(scope, x), {1}, {1});
  return ops::ConcatV2(scope,
                       {first == kInputWidth ? width : IntVector(scope, {first}),
                        second == kInputWidth ? width : IntVector(scope, {second})},
                       0);
}

Status LSTMBlockCellGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                         std::vector<Output>* grads) {
  // Like TensorFlow, only cs and h carry gradients back: the gate outputs
  // are exposed for the gradient kernel, not to be trained through.
  for (int k : {0, 2, 3, 4, 5}) {
    if (!IsZeroGradient(g[k])) {
      return errors::Unimplemented("the gradient of LSTMBlockCell ", op.name(),
                                   " flows only from its cs and h outputs, but output ", k,
                                   " (i, f, o, ci or co) has one");
    }
  }
  std::vector<OpArg> inputs;
  for (int k = 0; k < 8; ++k) inputs.push_back(ForwardInput(op, k));
  for (int k = 0; k < 6; ++k) inputs.push_back(op.output(k));
  inputs.push_back(g[1].valid() ? g[1] : ops::ZerosLike(scope, op.output(1)));
  inputs.push_back(g[6].valid() ? g[6] : ops::ZerosLike(scope, op.output(6)));
  Operation cell_grad =
      AddOp(scope, "LSTMBlockCellGrad", inputs, ForwardAttrs(op, {"use_peephole"}));
  const Output x = ForwardInput(op, 0), h_prev = ForwardInput(op, 2), w = ForwardInput(op, 3);
  const Output dicfo = cell_grad.output(1);
  // x's and h_prev's gradients are dicfo times the transpose of their own
  // rows of w: slices of the first dim share w's buffer, and the two
  // products cost what one over all of w did, less x's when nobody needs it
  // (a model's input rows). Measured on the Fashion-MNIST LSTM's shapes (one
  // thread, oneDNN sgemm): [100, 512] x [512, 128] takes 141 us against 207
  // for [100, 512] x [512, 156] (docs/performance.md, LSTM).
  Output w_x = ops::Slice(scope, w, IntVector(scope, {0, 0}),
                          VectorWithInputWidth(scope, x, kInputWidth, -1));
  Output w_h = ops::Slice(scope, w, VectorWithInputWidth(scope, x, kInputWidth, 0),
                          IntVector(scope, {-1, -1}));
  Output x_grad = ops::MatMul(scope, dicfo, w_x, {{"transpose_b", true}});
  Output h_prev_grad = ops::MatMul(scope, dicfo, w_h, {{"transpose_b", true}});
  Output xh = ops::ConcatV2(scope, {x, h_prev}, 1);
  Output w_grad = ops::MatMul(scope, xh, dicfo, {{"transpose_a", true}});
  Output b_grad = ops::BiasAddGrad(scope, dicfo);
  *grads = {x_grad,
            cell_grad.output(0),
            h_prev_grad,
            w_grad,
            cell_grad.output(2),
            cell_grad.output(3),
            cell_grad.output(4),
            b_grad};
  return scope.status();
}

}  // namespace

void RegisterRnnGradients(GradientRegistry* registry) {
  registry->Register("LSTMBlockCell", LSTMBlockCellGrad);
  registry->RegisterNoGradient("LSTMBlockCellGrad");
}

}  // namespace weir
