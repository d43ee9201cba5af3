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

// The gradient of an activation is its backward op on g (ReluGrad, not a
// Select, so that it is differentiable again). Softplus's backward op takes
// (gradients, features).
Status ActivationOfFeaturesGrad(const std::string& backward, const Scope& scope,
                                const Operation& op, const std::vector<Output>& g,
                                std::vector<Output>* grads) {
  *grads = {AddOp(scope, backward, {g[0], ForwardInput(op, 0)}).output(0)};
  return scope.status();
}

// Relu, Relu6, Elu and Selu: the backward op takes the forward outputs.
Status ActivationOfOutputsGrad(const std::string& backward, const Scope& scope,
                               const Operation& op, const std::vector<Output>& g,
                               std::vector<Output>* grads) {
  *grads = {AddOp(scope, backward, {g[0], op.output(0)}).output(0)};
  return scope.status();
}

// Gradient of ReluGrad / Relu6Grad (gradients, features).
Status PiecewiseLinearBackwardGrad(const Scope& scope, const Operation& op,
                                   const std::vector<Output>& g, std::vector<Output>* grads) {
  Output features = ForwardInput(op, 1);
  *grads = {AddOp(scope, op.node()->type_string(), {g[0], features}).output(0),
            ops::ZerosLike(scope, features)};
  return scope.status();
}

// Gradient of EluGrad / SeluGrad (gradients, outputs): below zero the
// result is gradients * (outputs + c), so d/d outputs = g * gradients
// there and 0 elsewhere.
Status ExponentialBackwardGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& g, std::vector<Output>* grads) {
  Output gradients = ForwardInput(op, 0), outputs = ForwardInput(op, 1);
  Output negative = ops::Less(scope, outputs, ops::ZerosLike(scope, outputs));
  *grads = {AddOp(scope, op.node()->type_string(), {g[0], outputs}).output(0),
            ops::SelectV2(scope, negative, ops::Mul(scope, g[0], gradients),
                          ops::ZerosLike(scope, outputs))};
  return scope.status();
}

// LeakyRelu: LeakyReluGrad at the forward's input, with its alpha.
Status LeakyReluGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                     std::vector<Output>* grads) {
  *grads = {AddOp(scope, "LeakyReluGrad", {g[0], ForwardInput(op, 0)}, ForwardAttrs(op, {"alpha"}))
                .output(0)};
  return scope.status();
}

// LeakyReluGrad is linear in its gradients and piecewise constant in its
// features.
Status LeakyReluGradGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                         std::vector<Output>* grads) {
  Output features = ForwardInput(op, 1);
  *grads = {AddOp(scope, "LeakyReluGrad", {g[0], features}, ForwardAttrs(op, {"alpha"})).output(0),
            ops::ZerosLike(scope, features)};
  return scope.status();
}

// Gradient of SoftplusGrad = gradients * sigmoid(features).
Status SoftplusBackwardGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                            std::vector<Output>* grads) {
  Output gradients = ForwardInput(op, 0), features = ForwardInput(op, 1);
  *grads = {ops::SoftplusGrad(scope, g[0], features),
            ops::SigmoidGrad(scope, ops::Sigmoid(scope, features), ops::Mul(scope, g[0], gradients))};
  return scope.status();
}

// Gradient of SoftsignGrad = gradients / (1 + |features|)^2: in gradients
// that factor again, in features -2 sign(features) gradients / (1 + |f|)^3.
Status SoftsignBackwardGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                            std::vector<Output>* grads) {
  Output gradients = ForwardInput(op, 0), features = ForwardInput(op, 1);
  Output denominator = ops::AddV2(scope, ops::Abs(scope, features), ops::OnesLike(scope, features));
  Output cube = ops::Mul(scope, denominator, ops::Square(scope, denominator));
  Output slope = ops::RealDiv(scope, ops::Mul(scope, ops::Sign(scope, features), gradients), cube);
  *grads = {ops::SoftsignGrad(scope, g[0], features),
            ops::Mul(scope, ops::Mul(scope, g[0], slope), -2.0)};
  return scope.status();
}

Status BiasAddGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  *grads = {g[0], ops::BiasAddGrad(scope, g[0], ForwardAttrs(op, {"data_format"}))};
  return scope.status();
}

// BiasAddGrad sums over all but the channel dim: its gradient copies g
// back along them.
Status BiasAddGradGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                       std::vector<Output>* grads) {
  Output out_backprop = ForwardInput(op, 0);
  std::string format = "NHWC";
  (void)GetAttr(op.node()->def().attrs, "data_format", &format);
  Output channels = g[0];
  if (format == "NCHW") {
    // [C] -> [C, 1, ..., 1] so it broadcasts along dim 1.
    const int rank = out_backprop.shape().rank();
    if (rank < 0) {
      return errors::Unimplemented("the gradient of an NCHW BiasAddGrad needs out_backprop's rank");
    }
    std::vector<int64_t> dims(rank - 1, 1);
    dims[0] = -1;
    channels = ops::Reshape(scope, channels, IntVector(scope, dims));
  }
  *grads = {ops::BroadcastTo(scope, channels, ShapeOf(scope, out_backprop))};
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

// The backprops are linear in each operand, so their gradients are again
// convolutions with the same attrs (what makes gradient penalties on conv
// nets work).
Status Conv2DBackpropInputGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"strides", "padding", "explicit_paddings", "data_format",
                                    "dilations", "use_cudnn_on_gpu"});
  Output filter = ForwardInput(op, 1), out_backprop = ForwardInput(op, 2);
  *grads = {Output(),
            AddOp(scope, "Conv2DBackpropFilter", {g[0], ShapeOf(scope, filter), out_backprop},
                  attrs).output(0),
            AddOp(scope, "Conv2D", {g[0], filter}, attrs).output(0)};
  return scope.status();
}

Status Conv2DBackpropFilterGrad(const Scope& scope, const Operation& op,
                                const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"strides", "padding", "explicit_paddings", "data_format",
                                    "dilations", "use_cudnn_on_gpu"});
  Output input = ForwardInput(op, 0), out_backprop = ForwardInput(op, 2);
  *grads = {AddOp(scope, "Conv2DBackpropInput", {ShapeOf(scope, input), g[0], out_backprop},
                  attrs).output(0),
            Output(),
            AddOp(scope, "Conv2D", {input, g[0]}, attrs).output(0)};
  return scope.status();
}

// The depthwise convolution and its backprops, as the dense ones above.
AttrMap DepthwiseAttrs(const Operation& op) {
  return ForwardAttrs(op, {"strides", "padding", "explicit_paddings", "data_format", "dilations"});
}

Status DepthwiseConv2dNativeGrad(const Scope& scope, const Operation& op,
                                 const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = DepthwiseAttrs(op);
  Output input = ForwardInput(op, 0), filter = ForwardInput(op, 1);
  *grads = {AddOp(scope, "DepthwiseConv2dNativeBackpropInput",
                  {ShapeOf(scope, input), filter, g[0]}, attrs)
                .output(0),
            AddOp(scope, "DepthwiseConv2dNativeBackpropFilter",
                  {input, ShapeOf(scope, filter), g[0]}, attrs)
                .output(0)};
  return scope.status();
}

Status DepthwiseConv2dNativeBackpropInputGrad(const Scope& scope, const Operation& op,
                                              const std::vector<Output>& g,
                                              std::vector<Output>* grads) {
  AttrMap attrs = DepthwiseAttrs(op);
  Output filter = ForwardInput(op, 1), out_backprop = ForwardInput(op, 2);
  *grads = {Output(),
            AddOp(scope, "DepthwiseConv2dNativeBackpropFilter",
                  {g[0], ShapeOf(scope, filter), out_backprop}, attrs)
                .output(0),
            AddOp(scope, "DepthwiseConv2dNative", {g[0], filter}, attrs).output(0)};
  return scope.status();
}

Status DepthwiseConv2dNativeBackpropFilterGrad(const Scope& scope, const Operation& op,
                                               const std::vector<Output>& g,
                                               std::vector<Output>* grads) {
  AttrMap attrs = DepthwiseAttrs(op);
  Output input = ForwardInput(op, 0), out_backprop = ForwardInput(op, 2);
  *grads = {AddOp(scope, "DepthwiseConv2dNativeBackpropInput",
                  {ShapeOf(scope, input), g[0], out_backprop}, attrs)
                .output(0),
            Output(), AddOp(scope, "DepthwiseConv2dNative", {input, g[0]}, attrs).output(0)};
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

// AvgPoolGrad is linear in grad: its gradient is the average pool of g.
Status AvgPoolGradGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                       std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"ksize", "strides", "padding", "data_format"});
  *grads = {Output(), AddOp(scope, "AvgPool", {g[0]}, attrs).output(0)};
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

// Each value of a TopKV2 row came from input[row, indices[row, j]]: the
// gradient scatters back to those positions (flattened, int64), and the
// other entries get zeros. The indices output has no gradient.
Status TopKGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  *grads = {Output(), Output()};
  if (!g[0].valid()) return Status::OK();
  Output input = ForwardInput(op, 0);
  Output indices = ops::Cast(scope, op.output(1), DT_INT64);
  Output in_shape = ops::Cast(scope, ops::Shape(scope, input), DT_INT64);
  Output row_length = ops::Reshape(
      scope,
      ops::Slice(scope, in_shape,
                 ops::Reshape(scope, ops::Sub(scope, ops::Rank(scope, input), 1), {1}), {1}),
      {-1});
  Output k = ops::Cast(scope, ForwardInput(op, 1), DT_INT64);
  Output rows_by_k = ops::Reshape(
      scope, indices,
      ops::ConcatV2(scope, {Input(std::initializer_list<int64_t>{-1}), ops::Reshape(scope, k, {1})},
                    0));
  Output rows = ops::Reshape(
      scope, ops::Slice(scope, ops::Shape(scope, rows_by_k, {{"out_type", DT_INT64}}), {0}, {1}),
      IntVector(scope, {}));
  Output row_starts = ops::Mul(scope, ops::Range(scope, int64_t{0}, rows, int64_t{1}),
                               ops::Reshape(scope, row_length, IntVector(scope, {})));
  Output flat = ops::Reshape(
      scope, ops::AddV2(scope, rows_by_k, ops::ExpandDims(scope, row_starts, -1)), {-1, 1});
  Output size = ops::Reshape(scope, ops::Size(scope, input, {{"out_type", DT_INT64}}), {1});
  Output scattered = ops::ScatterNd(scope, flat, ops::Reshape(scope, g[0], {-1}), size);
  (*grads)[0] = ops::Reshape(scope, scattered, in_shape);
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

Status FusedBatchNormGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                          std::vector<Output>* grads) {
  // Only y is differentiated: batch_mean and batch_variance feed moving
  // averages, not losses; refuse a gradient through them rather than drop it.
  for (int i = 1; i < static_cast<int>(g.size()); ++i) {
    if (!IsZeroGradient(g[i])) {
      return errors::Unimplemented("the gradient of ", op.node()->type_string(), "'s output ", i,
                                   " (batch statistics) is not supported; only y's is");
    }
  }
  grads->assign(5, Output());
  if (!g[0].valid()) return Status::OK();
  // The reserve spaces hold the batch's mean and inverse deviation in
  // training and the given running statistics in inference, what the
  // backward kernel expects in each mode. In inference the running mean and
  // variance are inputs of y too, but (as in TensorFlow) get no gradient.
  AttrMap attrs = ForwardAttrs(op, {"epsilon", "data_format", "is_training"});
  // FusedBatchNorm and V2 have no reserve_space_3, which the backward
  // kernel does not read: an empty vector stands in.
  Output reserve_3 = op.num_outputs() > 5
                         ? op.output(5)
                         : ops::Const(scope, Tensor(op.output(4).dtype(), TensorShape({0})));
  Operation backward =
      AddOp(scope, "FusedBatchNormGradV3",
            {g[0], ForwardInput(op, 0), ForwardInput(op, 1), op.output(3), op.output(4), reserve_3},
            attrs);
  for (int i = 0; i < 3; ++i) (*grads)[i] = backward.output(i);
  return scope.status();
}

}  // namespace

void RegisterNnGradients(GradientRegistry* registry) {
  registry->Register("Softplus", [](const Scope& scope, const Operation& op,
                                    const std::vector<Output>& g, std::vector<Output>* grads) {
    return ActivationOfFeaturesGrad("SoftplusGrad", scope, op, g, grads);
  });
  // ReluGrad and Relu6Grad take the forward's outputs as their features, as
  // TensorFlow's gradients do: the outputs are positive (and below 6) just
  // where the inputs are, NaN included, and with the inputs no longer held
  // Relu can overwrite its input (usually BiasAdd's fresh output) in place
  // instead of allocating and faulting in a new buffer.
  for (const char* name : {"Relu", "Relu6", "Elu", "Selu"}) {
    std::string backward = StrCat(name, "Grad");
    registry->Register(name, [backward](const Scope& scope, const Operation& op,
                                        const std::vector<Output>& g, std::vector<Output>* grads) {
      return ActivationOfOutputsGrad(backward, scope, op, g, grads);
    });
  }
  registry->Register("ReluGrad", PiecewiseLinearBackwardGrad);
  registry->Register("LeakyRelu", LeakyReluGrad);
  registry->Register("LeakyReluGrad", LeakyReluGradGrad);
  registry->Register("Relu6Grad", PiecewiseLinearBackwardGrad);
  registry->Register("EluGrad", ExponentialBackwardGrad);
  registry->Register("SeluGrad", ExponentialBackwardGrad);
  registry->Register("SoftplusGrad", SoftplusBackwardGrad);
  registry->Register("Softsign", [](const Scope& scope, const Operation& op,
                                    const std::vector<Output>& g, std::vector<Output>* grads) {
    return ActivationOfFeaturesGrad("SoftsignGrad", scope, op, g, grads);
  });
  registry->Register("SoftsignGrad", SoftsignBackwardGrad);
  registry->Register("BiasAddGrad", BiasAddGradGrad);
  registry->Register("Conv2DBackpropInput", Conv2DBackpropInputGrad);
  registry->Register("Conv2DBackpropFilter", Conv2DBackpropFilterGrad);
  registry->Register("AvgPoolGrad", AvgPoolGradGrad);
  registry->Register("BiasAdd", BiasAddGrad);
  registry->Register("Conv2D", Conv2DGrad);
  registry->Register("DepthwiseConv2dNative", DepthwiseConv2dNativeGrad);
  registry->Register("DepthwiseConv2dNativeBackpropInput", DepthwiseConv2dNativeBackpropInputGrad);
  registry->Register("DepthwiseConv2dNativeBackpropFilter",
                     DepthwiseConv2dNativeBackpropFilterGrad);
  registry->Register("MaxPool", MaxPoolGrad);
  registry->Register("AvgPool", AvgPoolGrad);
  registry->Register("Softmax", SoftmaxGrad);
  registry->Register("LogSoftmax", LogSoftmaxGrad);
  registry->Register("L2Loss", L2LossGrad);
  registry->Register("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyGrad);
  registry->Register("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxCrossEntropyGrad);
  registry->Register("FusedBatchNormV3", FusedBatchNormGrad);
  registry->Register("FusedBatchNormV2", FusedBatchNormGrad);
  registry->Register("FusedBatchNorm", FusedBatchNormGrad);
  registry->RegisterNoGradient("InTopKV2");
  registry->Register("TopKV2", TopKGrad);
  // Made by the runtime's fusion pass after gradients are built: a graph
  // being differentiated holds Conv2D, BiasAdd and Relu instead.
  registry->RegisterNoGradient("_FusedConv2D");
  registry->RegisterNoGradient("_FusedMaxPoolGrad");
  // Differentiable in principle, but with no backward op to express their
  // gradients yet (TensorFlow uses MaxPoolGradGrad and a batch-norm
  // double-backward kernel): an error that says so, not a silent zero.
  for (const char* name : {"MaxPoolGrad", "FusedBatchNormGradV3"}) {
    std::string op = name;
    registry->Register(op, [op](const Scope&, const Operation&, const std::vector<Output>&,
                                std::vector<Output>*) {
      return errors::Unimplemented("the gradient of ", op, " (a second derivative) is not supported");
    });
  }
}

}  // namespace weir
