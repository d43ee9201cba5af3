// The neural-network family: bias, convolution, pooling, softmax and
// losses, batch normalization. Names, attrs and type sets follow
// TensorFlow's declarations so imported graphs validate (and get shapes for
// either data_format); which of those have CPU kernels is up to kernels/.
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/nn_shape_fns.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;

// The channel dim of `shape` (rank >= 2) for the node's data_format.
int ChannelDim(InferenceContext* c, const PartialShape& shape) {
  std::string format = "NHWC";
  (void)c->GetAttr("data_format", &format);
  const bool channels_first = format.size() > 1 && format[1] == 'C';
  return channels_first ? 1 : shape.rank() - 1;
}

Status BiasAddShape(InferenceContext* c) {
  PartialShape value, bias;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &value));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &bias));
  if (!value.known_rank()) {
    c->set_output(0, value);
    return Status::OK();
  }
  const int channel = ChannelDim(c, value);
  int64_t depth;
  if (!InferenceContext::MergeDim(value.dim(channel), bias.dim(0), &depth).ok()) {
    return errors::InvalidArgument("bias ", bias, " must have one entry per channel of value ",
                                   value, " (", value.dim(channel), ")");
  }
  std::vector<int64_t> dims = value.dim_sizes();
  dims[channel] = depth;
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

Status BiasAddGradShape(InferenceContext* c) {
  PartialShape grad;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &grad));
  c->set_output(0, grad.known_rank() ? PartialShape({grad.dim(ChannelDim(c, grad))})
                                     : PartialShape({kUnknown}));
  return Status::OK();
}

Status AvgPoolGradShape(InferenceContext* c) {
  PartialShape grad;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &grad));
  return ShapeFromSizesInput(c, 0, 4, "orig_input_shape");
}

Status MaxPoolGradShape(InferenceContext* c) {
  PartialShape orig_input, orig_output, grad;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &orig_input));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &orig_output));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 4, &grad));
  if (!orig_output.Merge(grad).ok()) {
    return errors::InvalidArgument("grad ", grad, " must have the shape of orig_output ",
                                   orig_output);
  }
  c->set_output(0, orig_input);
  return Status::OK();
}

Status SoftmaxShape(InferenceContext* c) {
  PartialShape logits;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &logits));
  c->set_output(0, logits);
  return Status::OK();
}

// Features and labels: [batch, classes] each, either dim of one of them 1
// to broadcast. Outputs loss [batch] and backprop [batch, classes].
Status SoftmaxCrossEntropyShape(InferenceContext* c) {
  PartialShape features, labels;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &features));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 2, &labels));
  WEIR_ASSIGN_OR_RETURN(PartialShape both, BroadcastShapes(features, labels));
  c->set_output(0, PartialShape({both.dim(0)}));
  c->set_output(1, both);
  return Status::OK();
}

Status SparseSoftmaxCrossEntropyShape(InferenceContext* c) {
  PartialShape features, labels;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &features));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &labels));
  int64_t batch;
  if (!InferenceContext::MergeDim(features.dim(0), labels.dim(0), &batch).ok()) {
    return errors::InvalidArgument("labels ", labels, " must have one entry per row of ",
                                   "features ", features);
  }
  c->set_output(0, PartialShape({batch}));
  c->set_output(1, PartialShape({batch, features.dim(1)}));
  return Status::OK();
}

Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status InTopKShape(InferenceContext* c) {
  PartialShape predictions, targets, k;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &predictions));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &targets));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 0, &k));
  int64_t batch;
  if (!InferenceContext::MergeDim(predictions.dim(0), targets.dim(0), &batch).ok()) {
    return errors::InvalidArgument("targets ", targets, " must have one entry per row of ",
                                   "predictions ", predictions);
  }
  c->set_output(0, PartialShape({batch}));
  return Status::OK();
}

// input [..., n] and scalar k give [..., k] twice (values and indices).
Status TopKShape(InferenceContext* c) {
  PartialShape input, k_shape;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 0, &k_shape));
  int64_t k = -1;
  if (const Tensor* t = c->input_tensor(1)) {
    if (t->dtype() == DT_INT16) {
      k = t->data<int16_t>()[0];
    } else {
      WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*t, "k"));
      k = values.at(0);
    }
    if (k < 0) return errors::InvalidArgument("k = ", k, " must not be negative");
  }
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    c->set_output(1, PartialShape::UnknownRank());
    return Status::OK();
  }
  std::vector<int64_t> dims = input.dim_sizes();
  const int64_t last = dims.back();
  if (k >= 0 && last >= 0 && last < k) {
    return errors::InvalidArgument("input ", input, " must have at least k = ", k,
                                   " entries in its last dim");
  }
  dims.back() = k;
  c->set_output(0, PartialShape(dims));
  c->set_output(1, PartialShape(std::move(dims)));
  return Status::OK();
}

// x's rank for the data_format: 4, or 5 for NDHWC / NCDHW.
Status BatchNormInput(InferenceContext* c, int input, PartialShape* x) {
  std::string format;
  WEIR_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  return c->WithRank(input, static_cast<int>(format.size()), x);
}

// Merges *depth with the length of each per-channel vector input listed.
// With `allow_empty`, empty vectors are skipped: the running statistics
// are unused in training when exponential_avg_factor is 1.
Status MergeBatchNormDepth(InferenceContext* c, const PartialShape& x,
                           std::initializer_list<int> vectors, bool allow_empty, int64_t* depth) {
  for (int i : vectors) {
    PartialShape v;
    WEIR_RETURN_IF_ERROR(c->WithRank(i, 1, &v));
    if (allow_empty && v.dim(0) == 0) continue;
    if (!InferenceContext::MergeDim(*depth, v.dim(0), depth).ok()) {
      return errors::InvalidArgument("input ", i, " ", v, " must have one entry per channel of ",
                                     "x ", x);
    }
  }
  return Status::OK();
}

Status FusedBatchNormShape(InferenceContext* c) {
  PartialShape x;
  WEIR_RETURN_IF_ERROR(BatchNormInput(c, 0, &x));
  bool is_training = true;
  float factor = 1;
  WEIR_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  WEIR_RETURN_IF_ERROR(c->GetAttr("exponential_avg_factor", &factor));
  int64_t depth = x.dim(ChannelDim(c, x));
  WEIR_RETURN_IF_ERROR(MergeBatchNormDepth(c, x, {1, 2}, false, &depth));
  WEIR_RETURN_IF_ERROR(MergeBatchNormDepth(c, x, {3, 4}, is_training && factor == 1, &depth));
  std::vector<int64_t> dims = x.dim_sizes();
  dims[ChannelDim(c, x)] = depth;
  c->set_output(0, PartialShape(std::move(dims)));
  for (int i = 1; i <= 4; ++i) c->set_output(i, PartialShape({depth}));
  // reserve_space_3 (V3 only) is device-specific.
  if (c->num_outputs() > 5) c->set_output(5, PartialShape({kUnknown}));
  return Status::OK();
}

Status FusedBatchNormGradShape(InferenceContext* c) {
  PartialShape y_backprop, x;
  WEIR_RETURN_IF_ERROR(BatchNormInput(c, 0, &y_backprop));
  WEIR_RETURN_IF_ERROR(BatchNormInput(c, 1, &x));
  StatusOr<PartialShape> shape = y_backprop.Merge(x);
  if (!shape.ok()) {
    return errors::InvalidArgument("y_backprop ", y_backprop, " and x ", x,
                                   " must have the same shape");
  }
  int64_t depth = shape->dim(ChannelDim(c, *shape));
  WEIR_RETURN_IF_ERROR(MergeBatchNormDepth(c, *shape, {2, 3, 4}, false, &depth));
  c->set_output(0, *shape);
  c->set_output(1, PartialShape({depth}));
  c->set_output(2, PartialShape({depth}));
  c->set_output(3, PartialShape({kUnknown}));  // device-specific
  c->set_output(4, PartialShape({kUnknown}));
  return Status::OK();
}

constexpr char kFloatTypes[] = "T: {half, bfloat16, float, double}";

OpDefBuilder AddConv2DAttrs(OpDefBuilder builder) {
  builder.Attr("strides: list(int)")
      .Attr("use_cudnn_on_gpu: bool = true")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
  return builder;
}

OpDefBuilder AddDepthwiseConv2DAttrs(OpDefBuilder builder) {
  builder.Attr("T: {half, bfloat16, float, double}")
      .Attr("strides: list(int)")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
  return builder;
}

// MaxPoolGrad's inputs, output and attrs, shared with _FusedMaxPoolGrad.
OpDefBuilder MaxPoolGradSignature(OpDefBuilder builder) {
  builder.Input("orig_input: T")
      .Input("orig_output: T")
      .Input("grad: T")
      .Output("output: T")
      .Attr("ksize: list(int) >= 4")
      .Attr("strides: list(int) >= 4")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("T: realnumbertype = DT_FLOAT");
  return builder;
}

void RegisterPoolOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("MaxPool")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, "
                               "int8, uint16} = DT_FLOAT")
                         .Attr("ksize: list(int) >= 4")
                         .Attr("strides: list(int) >= 4")
                         .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
                         .Attr("explicit_paddings: list(int) = []")
                         .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
                         .SetShapeFn(Pool2DShape)
                         .Doc("The maximum of each ksize window of `input`, windows stepping "
                              "by strides; padding never wins and NaN propagates."));
  registry->Register(OpDefBuilder("AvgPool")
                         .Input("value: T")
                         .Output("output: T")
                         .Attr("ksize: list(int) >= 4")
                         .Attr("strides: list(int) >= 4")
                         .Attr("padding: {'SAME', 'VALID'}")
                         .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                         .Attr(kFloatTypes)
                         .SetShapeFn(Pool2DShape)
                         .Doc("The mean of each ksize window of `value`, over the window's "
                              "elements inside the input (padding is not counted)."));
  registry->Register(MaxPoolGradSignature(OpDefBuilder("MaxPoolGrad"))
                         .SetShapeFn(MaxPoolGradShape)
                         .Doc("The gradient of MaxPool: each window's `grad` goes to the "
                              "window's first maximal element of `orig_input`."));
  // MaxPoolGrad whose result goes straight into ReluGrad(·, orig_input):
  // the runtime's fusion pass (graph/fuse_ops.h) makes it; the gradient is
  // kept only where orig_input > 0, in the same pass.
  registry->Register(MaxPoolGradSignature(OpDefBuilder("_FusedMaxPoolGrad"))
                         .Attr("fused_ops: list(string) = []")
                         .SetShapeFn(MaxPoolGradShape)
                         .Doc("MaxPoolGrad followed by `fused_ops`: [\"ReluGrad\"] keeps the "
                              "gradient where orig_input > 0 (ReluGrad with orig_input as the "
                              "Relu's output)."));
  registry->Register(OpDefBuilder("AvgPoolGrad")
                         .Input("orig_input_shape: int32")
                         .Input("grad: T")
                         .Output("output: T")
                         .Attr("ksize: list(int) >= 4")
                         .Attr("strides: list(int) >= 4")
                         .Attr("padding: {'SAME', 'VALID'}")
                         .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                         .Attr(kFloatTypes)
                         .SetShapeFn(AvgPoolGradShape)
                         .Doc("The gradient of AvgPool: each window's `grad`, divided by the "
                              "window's element count, goes to each of its elements."));
}

void RegisterConvOps(OpRegistry* registry) {
  registry->Register(AddConv2DAttrs(OpDefBuilder("Conv2D")
                                        .Input("input: T")
                                        .Input("filter: T")
                                        .Output("output: T")
                                        .Attr("T: {half, bfloat16, float, double, int32}"))
                         .SetShapeFn(Conv2DShape)
                         .Doc("2-D convolution (cross-correlation) of `input` [batch, rows, "
                              "cols, in_channels] with `filter` [rows, cols, in_channels, "
                              "out_channels]."));
  registry->Register(AddConv2DAttrs(OpDefBuilder("Conv2DBackpropInput")
                                        .Input("input_sizes: int32")
                                        .Input("filter: T")
                                        .Input("out_backprop: T")
                                        .Output("output: T")
                                        .Attr("T: {half, bfloat16, float, double, int32}"))
                         .SetShapeFn(Conv2DBackpropInputShape)
                         .Doc("The gradient of Conv2D with respect to its input, whose shape "
                              "is `input_sizes`."));
  registry->Register(AddConv2DAttrs(OpDefBuilder("Conv2DBackpropFilter")
                                        .Input("input: T")
                                        .Input("filter_sizes: int32")
                                        .Input("out_backprop: T")
                                        .Output("output: T")
                                        .Attr(kFloatTypes))
                         .SetShapeFn(Conv2DBackpropFilterShape)
                         .Doc("The gradient of Conv2D with respect to its filter, whose shape "
                              "is `filter_sizes`."));
  // TensorFlow's name, Weir's own signature (no TArgs or host args): only
  // the runtime's fusion pass creates it (graph/fuse_ops.h); TensorFlow's
  // optimizers never export theirs in a GraphDef.
  registry->Register(AddConv2DAttrs(OpDefBuilder("_FusedConv2D")
                                        .Input("input: T")
                                        .Input("filter: T")
                                        .Input("args: num_args * T")
                                        .Output("output: T")
                                        .Attr("T: {bfloat16, float, double}")
                                        .Attr("num_args: int >= 0")
                                        .Attr("fused_ops: list(string) = []")
                                        .Attr("epsilon: float = 0.0001")
                                        .Attr("leakyrelu_alpha: float = 0.2"))
                         .SetShapeFn(FusedConv2DShape)
                         .Doc("Conv2D followed by `fused_ops` in one kernel: [\"BiasAdd\"] adds "
                              "args[0] ([out_channels]), [\"BiasAdd\", \"Relu\"] then applies "
                              "Relu."));
}

void RegisterDepthwiseConvOps(OpRegistry* registry) {
  registry->Register(AddDepthwiseConv2DAttrs(OpDefBuilder("DepthwiseConv2dNative")
                                                 .Input("input: T")
                                                 .Input("filter: T")
                                                 .Output("output: T"))
                         .SetShapeFn(DepthwiseConv2DShape)
                         .Doc("Depthwise 2-D convolution: each input channel c is convolved "
                              "with its own filters [rows, cols, c, :] (channel_multiplier of "
                              "them), giving output channels c * channel_multiplier + m."));
  registry->Register(AddDepthwiseConv2DAttrs(OpDefBuilder("DepthwiseConv2dNativeBackpropInput")
                                                 .Input("input_sizes: int32")
                                                 .Input("filter: T")
                                                 .Input("out_backprop: T")
                                                 .Output("output: T"))
                         .SetShapeFn(DepthwiseConv2DBackpropInputShape)
                         .Doc("The gradient of DepthwiseConv2dNative with respect to its "
                              "input, whose shape is `input_sizes`."));
  registry->Register(AddDepthwiseConv2DAttrs(OpDefBuilder("DepthwiseConv2dNativeBackpropFilter")
                                                 .Input("input: T")
                                                 .Input("filter_sizes: int32")
                                                 .Input("out_backprop: T")
                                                 .Output("output: T"))
                         .SetShapeFn(DepthwiseConv2DBackpropFilterShape)
                         .Doc("The gradient of DepthwiseConv2dNative with respect to its "
                              "filter, whose shape is `filter_sizes`."));
}

void RegisterSoftmaxAndLossOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("Softmax")
                         .Input("logits: T")
                         .Output("softmax: T")
                         .Attr(kFloatTypes)
                         .SetShapeFn(SoftmaxShape)
                         .Doc("exp(logits) / sum(exp(logits)) along the last axis."));
  registry->Register(OpDefBuilder("LogSoftmax")
                         .Input("logits: T")
                         .Output("logsoftmax: T")
                         .Attr(kFloatTypes)
                         .SetShapeFn(SoftmaxShape)
                         .Doc("logits - log(sum(exp(logits))) along the last axis."));
  registry->Register(OpDefBuilder("SoftmaxCrossEntropyWithLogits")
                         .Input("features: T")
                         .Input("labels: T")
                         .Output("loss: T")
                         .Output("backprop: T")
                         .Attr(kFloatTypes)
                         .SetShapeFn(SoftmaxCrossEntropyShape)
                         .Doc("Per row of [batch, classes] logits `features` and label "
                              "distributions `labels` (broadcast): loss = -sum(labels * "
                              "log_softmax(features)) and backprop = softmax(features) - "
                              "labels."));
  registry->Register(OpDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                         .Input("features: T")
                         .Input("labels: Tlabels")
                         .Output("loss: T")
                         .Output("backprop: T")
                         .Attr(kFloatTypes)
                         .Attr("Tlabels: {int32, int64} = DT_INT64")
                         .SetShapeFn(SparseSoftmaxCrossEntropyShape)
                         .Doc("SoftmaxCrossEntropyWithLogits with labels given as class "
                              "indices in [0, classes); others are an error."));
  registry->Register(OpDefBuilder("L2Loss")
                         .Input("t: T")
                         .Output("output: T")
                         .Attr(kFloatTypes)
                         .SetShapeFn(ScalarShape)
                         .Doc("sum(t * t) / 2."));
  registry->Register(OpDefBuilder("InTopKV2")
                         .Input("predictions: float")
                         .Input("targets: T")
                         .Input("k: T")
                         .Output("precision: bool")
                         .Attr("T: {int32, int64} = DT_INT32")
                         .SetShapeFn(InTopKShape)
                         .Doc("Per row: whether fewer than k predictions are greater than "
                              "the target's (ties count as in). False for an out-of-range "
                              "target or a non-finite prediction."));
  registry->Register(OpDefBuilder("TopKV2")
                         .Input("input: T")
                         .Input("k: Tk")
                         .Output("values: T")
                         .Output("indices: index_type")
                         .Attr("sorted: bool = true")
                         .Attr("T: realnumbertype")
                         .Attr("Tk: {int16, int32, int64} = int32")
                         .Attr("index_type: {int16, int32, int64} = int32")
                         .SetShapeFn(TopKShape)
                         .Doc("The k largest entries of each row (last dim) of `input` and "
                              "their indices, largest first; equal values keep index order "
                              "and NaN counts as the largest. `sorted` = false allows any "
                              "order (Weir sorts anyway)."));
}

void RegisterBatchNormOps(OpRegistry* registry) {
  // TensorFlow allows T in {half, bfloat16, float} and U in {bfloat16, float}
  // (float only for the gradient); double for both is Weir's addition, for
  // gradient checks in double (tests/tf_compat/op_def_differences.txt).
  registry->Register(OpDefBuilder("FusedBatchNormV3")
                         .Input("x: T")
                         .Input("scale: U")
                         .Input("offset: U")
                         .Input("mean: U")
                         .Input("variance: U")
                         .Output("y: T")
                         .Output("batch_mean: U")
                         .Output("batch_variance: U")
                         .Output("reserve_space_1: U")
                         .Output("reserve_space_2: U")
                         .Output("reserve_space_3: U")
                         .Attr("T: {half, bfloat16, float, double}")
                         .Attr("U: {bfloat16, float, double}")
                         .Attr("epsilon: float = 0.0001")
                         .Attr("exponential_avg_factor: float = 1.0")
                         .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
                         .Attr("is_training: bool = true")
                         .SetShapeFn(FusedBatchNormShape)
                         .Doc("Batch normalization per channel: y = (x - mean) / sqrt(var + "
                              "epsilon) * scale + offset, with the batch's statistics in "
                              "training (running ones blended in by exponential_avg_factor, "
                              "variance unbiased) or the given ones in inference."));
  // The older forms TensorFlow 1 graphs hold: V3 without reserve_space_3
  // (FusedBatchNorm: all float; V2: scale and statistics float).
  for (const char* name : {"FusedBatchNorm", "FusedBatchNormV2"}) {
    const bool v1 = std::string(name) == "FusedBatchNorm";
    const char* u = v1 ? "T" : "U";
    OpDefBuilder builder(name);
    builder.Input("x: T")
        .Input(StrCat("scale: ", u))
        .Input(StrCat("offset: ", u))
        .Input(StrCat("mean: ", u))
        .Input(StrCat("variance: ", u))
        .Output("y: T")
        .Output(StrCat("batch_mean: ", u))
        .Output(StrCat("batch_variance: ", u))
        .Output(StrCat("reserve_space_1: ", u))
        .Output(StrCat("reserve_space_2: ", u))
        .Attr(v1 ? "T: {float}" : "T: {half, bfloat16, float}");
    if (!v1) builder.Attr("U: {float}");
    registry->Register(builder.Attr("epsilon: float = 0.0001")
                           .Attr("exponential_avg_factor: float = 1.0")
                           .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                           .Attr("is_training: bool = true")
                           .SetShapeFn(FusedBatchNormShape)
                           .Doc("FusedBatchNormV3 without its reserve_space_3 output (the form "
                                "of older graphs)."));
  }
  registry->Register(OpDefBuilder("FusedBatchNormGradV3")
                         .Input("y_backprop: T")
                         .Input("x: T")
                         .Input("scale: U")
                         .Input("reserve_space_1: U")
                         .Input("reserve_space_2: U")
                         .Input("reserve_space_3: U")
                         .Output("x_backprop: T")
                         .Output("scale_backprop: U")
                         .Output("offset_backprop: U")
                         .Output("reserve_space_4: U")
                         .Output("reserve_space_5: U")
                         .Attr("T: {half, bfloat16, float, double}")
                         .Attr("U: {float, double}")
                         .Attr("epsilon: float = 0.0001")
                         .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
                         .Attr("is_training: bool = true")
                         .SetShapeFn(FusedBatchNormGradShape)
                         .Doc("The gradients of FusedBatchNormV3 with respect to x, scale and "
                              "offset, from its reserve_space outputs."));
}

}  // namespace

void RegisterNnOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("BiasAdd")
                         .Input("value: T")
                         .Input("bias: T")
                         .Output("output: T")
                         .Attr("T: numbertype")
                         .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                         .SetShapeFn(BiasAddShape)
                         .Doc("value + bias, bias a vector added along the channel dim (the "
                              "last for NHWC, dim 1 for NCHW)."));
  registry->Register(OpDefBuilder("BiasAddGrad")
                         .Input("out_backprop: T")
                         .Output("output: T")
                         .Attr("T: numbertype")
                         .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                         .SetShapeFn(BiasAddGradShape)
                         .Doc("The gradient of BiasAdd for bias: out_backprop summed over "
                              "every dim but the channel dim."));
  RegisterConvOps(registry);
  RegisterDepthwiseConvOps(registry);
  RegisterPoolOps(registry);
  RegisterSoftmaxAndLossOps(registry);
  RegisterBatchNormOps(registry);
}

}  // namespace weir
