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

// x's column count as an int32 vector of one element: a constant when known.
Output InputWidth(const Scope& scope, const Output& x) {
  const PartialShape shape = x.shape();
  if (shape.known_rank() && shape.rank() == 2 && shape.dim(1) != PartialShape::kUnknown) {
    return IntVector(scope, {shape.dim(1)});
  }
  return ops::Slice(scope, ops::Shape(scope, x), {1}, {1});
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
  // [x, h_prev]' gradient is dicfo * w^T, split back by columns.
  Output xh_grad = ops::MatMul(scope, dicfo, w, {{"transpose_b", true}});
  Output width = InputWidth(scope, x);
  Output x_grad = ops::Slice(scope, xh_grad, IntVector(scope, {0, 0}),
                             ops::ConcatV2(scope, {IntVector(scope, {-1}), width}, 0));
  Output h_prev_grad =
      ops::Slice(scope, xh_grad, ops::ConcatV2(scope, {IntVector(scope, {0}), width}, 0),
                 IntVector(scope, {-1, -1}));
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
