// Gradients of the nn family: activations that train networks, bias,
// convolution, pooling, softmax and the losses. Where a dedicated backward
// kernel exists (BiasAddGrad, Conv2DBackprop*, MaxPoolGrad, ...) the
// gradient uses it, with the forward op's configuration attrs, rather than
// composing the math from primitives: one fused pass, and the same numerics
// as the kernel tests check.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// a + b where either may be absent (invalid): gradients that some terms do
// not contribute to.
Output AddIfBoth(const Scope& scope, const Output& a, const Output& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return ops::AddV2(scope, a, b);
}

// `t` broadcast to the shape of `like` unless it statically has it already.
Output BroadcastLike(const Scope& scope, const Output& t, const Output& like) {
  if (like.shape().IsFullyDefined() && t.shape() == like.shape()) return t;
  return ops::BroadcastTo(scope, t, ops::Shape(scope, like));
}

// J^T g for p = softmax(logits) along the last axis, J = diag(p) - p p^T:
// (g - sum(g * p)) * p, row by row.
Output SoftmaxBackward(const Scope& scope, const Output& g, const Output& p) {
  Output dot = ops::Sum(scope, ops::Mul(scope, g, p), -1, {{"keep_dims", true}});
  return ops::Mul(scope, ops::Sub(scope, g, dot), p);
}

Status ReluGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  // ReluGrad, not Select: it has a gradient of its own, so second
  // derivatives pass through.
  *grads = {ops::ReluGrad(scope, g[0], ForwardInput(op, 0))};
  return scope.status();
}

Status BiasAddGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  *grads = {g[0], ops::BiasAddGrad(scope, g[0], ForwardAttrs(op, {"data_format"}))};
  return scope.status();
}

Status Conv2DGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  // Both backprops take every attr of the forward convolution, so strides,
  // explicit padding, dilations and the data format carry over unchanged.
  AttrMap attrs = ForwardAttrs(op, {"strides", "padding", "explicit_paddings", "data_format",
                                    "dilations", "use_cudnn_on_gpu"});
  Output input = ForwardInput(op, 0), filter = ForwardInput(op, 1);
  *grads = {
      AddOp(scope, "Conv2DBackpropInput", {ShapeOf(scope, input), filter, g[0]}, attrs).output(0),
      AddOp(scope, "Conv2DBackpropFilter", {input, ShapeOf(scope, filter), g[0]}, attrs).output(0)};
  return scope.status();
}

Status MaxPoolGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  AttrMap attrs =
      ForwardAttrs(op, {"ksize", "strides", "padding", "explicit_paddings", "data_format"});
  *grads = {AddOp(scope, "MaxPoolGrad", {ForwardInput(op, 0), op.output(0), g[0]}, attrs).output(0)};
  return scope.status();
}

Status AvgPoolGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"ksize", "strides", "padding", "data_format"});
  Output shape = ShapeOf(scope, ForwardInput(op, 0));
  *grads = {AddOp(scope, "AvgPoolGrad", {shape, g[0]}, attrs).output(0)};
  return scope.status();
}

Status SoftmaxGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  *grads = {SoftmaxBackward(scope, g[0], op.output(0))};
  return scope.status();
}

Status LogSoftmaxGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                      std::vector<Output>* grads) {
  // y = x - logsumexp(x): dx = g - sum(g) * softmax(x), softmax = exp(y).
  Output sum = ops::Sum(scope, g[0], -1, {{"keep_dims", true}});
  *grads = {ops::Sub(scope, g[0], ops::Mul(scope, sum, ops::Exp(scope, op.output(0))))};
  return scope.status();
}

Status L2LossGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  *grads = {ops::Mul(scope, ForwardInput(op, 0), g[0])};
  return scope.status();
}

// The loss's gradient per row times the kernel's backprop output, which is
// d loss / d features already: softmax - labels, where each row of labels
// is a distribution (sums to 1), as the op requires. (For other labels the
// true derivative is sum(labels) * softmax - labels; like TensorFlow, the
// fused output is used.)
Output LossTimesBackprop(const Scope& scope, const Operation& op, const Output& grad_loss) {
  if (!grad_loss.valid()) return Output();
  return ops::Mul(scope, ops::ExpandDims(scope, grad_loss, -1), op.output(1));
}

Status SparseSoftmaxCrossEntropyGrad(const Scope& scope, const Operation& op,
                                     const std::vector<Output>& g, std::vector<Output>* grads) {
  // The fused kernel gives no way to differentiate its backprop output
  // (that would be a second derivative of the loss); as TensorFlow, refuse
  // rather than return a silently wrong zero.
  if (!IsZeroGradient(g[1])) {
    return errors::Unimplemented(
        "the gradient of SparseSoftmaxCrossEntropyWithLogits' backprop output (a second "
        "derivative of the loss) is not supported; use SoftmaxCrossEntropyWithLogits with "
        "one-hot labels for that");
  }
  *grads = {LossTimesBackprop(scope, op, g[0]), Output()};  // no gradient for class indices
  return scope.status();
}

Status SoftmaxCrossEntropyGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& g, std::vector<Output>* grads) {
  Output features = ForwardInput(op, 0), labels = ForwardInput(op, 1);
  // Full gradients are shaped like backprop (features and labels broadcast
  // together); ReduceForBroadcast sums each back to its input's shape.
  Output g_features = LossTimesBackprop(scope, op, g[0]);
  Output g_labels;
  if (g[0].valid()) {
    // loss = -sum(labels * log_softmax(features)).
    Output neg_log_p = ops::Neg(scope, ops::LogSoftmax(scope, features));
    g_labels = BroadcastLike(scope, ops::Mul(scope, ops::ExpandDims(scope, g[0], -1), neg_log_p),
                             op.output(1));
  }
  if (!IsZeroGradient(g[1])) {
    // backprop = softmax(features) - labels: through the softmax's Jacobian
    // to features, negated to labels. This makes the loss twice
    // differentiable.
    Output p = ops::Softmax(scope, features);
    g_features = AddIfBoth(scope, g_features, SoftmaxBackward(scope, g[1], p));
    g_labels = AddIfBoth(scope, g_labels, ops::Neg(scope, g[1]));
  }
  *grads = ReduceForBroadcast(scope, features, labels, g_features, g_labels);
  return scope.status();
}

}  // namespace

void RegisterNnGradients(GradientRegistry* registry) {
  registry->Register("Relu", ReluGrad);
  registry->Register("BiasAdd", BiasAddGrad);
  registry->Register("Conv2D", Conv2DGrad);
  registry->Register("MaxPool", MaxPoolGrad);
  registry->Register("AvgPool", AvgPoolGrad);
  registry->Register("Softmax", SoftmaxGrad);
  registry->Register("LogSoftmax", LogSoftmaxGrad);
  registry->Register("L2Loss", L2LossGrad);
  registry->Register("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyGrad);
  registry->Register("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxCrossEntropyGrad);
  registry->RegisterNoGradient("InTopKV2");
}

}  // namespace weir
