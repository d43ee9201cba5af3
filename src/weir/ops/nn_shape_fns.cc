#include "weir/ops/nn_shape_fns.h"

#include <vector>

#include "weir/base/checked_math.h"
#include "weir/framework/depthwise_conv_dims.h"
#include "weir/framework/node_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/framework/window_shape.h"

namespace weir {
Status Conv2DShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetConv2DAttrs(c->attrs()));
  PartialShape input, filter;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  const ImageLayout& layout = attrs.layout;
  const int64_t in_depth = input.dim(layout.channels()), filter_in = filter.dim(2);
  // Conv2D is grouped (TF 2.x's Keras Conv2D(groups=g)) when the input depth
  // is g > 1 times the filter's in_channels and out_channels divide by g.
  const int64_t out_depth = filter.dim(3);
  const bool grouped = c->node().op == "Conv2D" && filter_in > 0 && in_depth > filter_in &&
                       in_depth % filter_in == 0 &&
                       (out_depth < 0 || out_depth % (in_depth / filter_in) == 0);
  if (in_depth >= 0 && filter_in >= 0 && in_depth != filter_in && !grouped) {
    // The kernel's message, with both shapes.
    if (input.IsFullyDefined() && filter.IsFullyDefined()) {
      return ComputeConv2DDims(attrs, input.ToTensorShape(), filter.ToTensorShape()).status();
    }
    return errors::InvalidArgument("input ", input, " has depth ", in_depth, " but filter ", filter,
                                   " has in_channels ", filter_in);
  }
  WEIR_ASSIGN_OR_RETURN(auto spatial,
                        PartialSpatialOutput(attrs, input, {filter.dim(0), filter.dim(1)}));
  c->set_output(
      0, ImageShape(layout, input.dim(layout.batch()), spatial[0], spatial[1], filter.dim(3)));
  return Status::OK();
}

Status FusedConv2DShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(Conv2DShape(c));
  std::vector<std::string> fused_ops;
  WEIR_RETURN_IF_ERROR(c->GetAttr("fused_ops", &fused_ops));
  if (fused_ops.empty() || fused_ops[0] != "BiasAdd") return Status::OK();  // the kernel says
  PartialShape filter, bias;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  if (c->num_inputs() < 3) {
    return errors::InvalidArgument("_FusedConv2D with BiasAdd needs a bias argument");
  }
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 1, &bias));
  if (bias.dim(0) >= 0 && filter.dim(3) >= 0 && bias.dim(0) != filter.dim(3)) {
    return errors::InvalidArgument("bias ", bias, " must have the filter's ", filter.dim(3),
                                   " out_channels (filter ", filter, ")");
  }
  return Status::OK();
}

Status Conv2DBackpropInputShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetConv2DAttrs(c->attrs()));
  PartialShape filter, out_backprop;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 4, &out_backprop));
  const Tensor* sizes = c->input_tensor(0);
  if (sizes == nullptr || !filter.IsFullyDefined() || !out_backprop.IsFullyDefined()) {
    if (sizes != nullptr && sizes->NumElements() == 4) {
      WEIR_ASSIGN_OR_RETURN(TensorShape shape, ShapeFromSizes(*sizes, 4, "input_sizes"));
      c->set_output(0, shape);
    } else {
      c->set_output(0, PartialShape::UnknownDims(4));
    }
    return Status::OK();
  }
  const TensorShape filter_shape = filter.ToTensorShape();
  const TensorShape grad_shape = out_backprop.ToTensorShape();
  WEIR_ASSIGN_OR_RETURN(TensorShape input,
                        BackpropInputShape(*sizes, attrs.layout, filter_shape, grad_shape));
  WEIR_ASSIGN_OR_RETURN(Window2DDims dims, ComputeConv2DDims(attrs, input, filter_shape));
  if (dims.output_shape() != grad_shape) {
    return errors::InvalidArgument("out_backprop ", grad_shape, " must have shape ",
                                   dims.output_shape(), ", the output of convolving input ", input,
                                   " with filter ", filter_shape);
  }
  c->set_output(0, input);
  return Status::OK();
}

Status Conv2DBackpropFilterShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetConv2DAttrs(c->attrs()));
  PartialShape input, out_backprop;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 4, &out_backprop));
  const Tensor* sizes = c->input_tensor(1);
  if (sizes == nullptr) {
    c->set_output(0, PartialShape({PartialShape::kUnknown, PartialShape::kUnknown,
                                   input.dim(attrs.layout.channels()),
                                   out_backprop.dim(attrs.layout.channels())}));
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(TensorShape filter, ShapeFromSizes(*sizes, 4, "filter_sizes"));
  if (input.IsFullyDefined() && out_backprop.IsFullyDefined()) {
    WEIR_ASSIGN_OR_RETURN(Window2DDims dims,
                          ComputeConv2DDims(attrs, input.ToTensorShape(), filter));
    if (dims.output_shape() != out_backprop.ToTensorShape()) {
      return errors::InvalidArgument("out_backprop ", out_backprop, " must have shape ",
                                     dims.output_shape(), ", the output of convolving input ",
                                     input, " with filter ", filter);
    }
  }
  c->set_output(0, filter);
  return Status::OK();
}

Status Pool2DShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetPool2DAttrs(c->attrs()));
  PartialShape input;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  WEIR_ASSIGN_OR_RETURN(auto spatial, PartialSpatialOutput(attrs, input, attrs.window));
  const ImageLayout& layout = attrs.layout;
  c->set_output(0, ImageShape(layout, input.dim(layout.batch()), spatial[0], spatial[1],
                              input.dim(layout.channels())));
  return Status::OK();
}

Status DepthwiseConv2DShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetConv2DAttrs(c->attrs()));
  PartialShape input, filter;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  const ImageLayout& layout = attrs.layout;
  if (input.IsFullyDefined() && filter.IsFullyDefined()) {
    WEIR_ASSIGN_OR_RETURN(DepthwiseConv2DDims d, ComputeDepthwiseConv2DDims(
                                                     attrs, input.ToTensorShape(),
                                                     filter.ToTensorShape()));
    c->set_output(0, d.dims.output_shape());
    return Status::OK();
  }
  const int64_t in_depth = input.dim(layout.channels());
  if (in_depth >= 0 && filter.dim(2) >= 0 && in_depth != filter.dim(2)) {
    return errors::InvalidArgument("input ", input, " has depth ", in_depth, " but filter ", filter,
                                   " has in_channels ", filter.dim(2));
  }
  const int64_t depth = in_depth >= 0 ? in_depth : filter.dim(2);
  int64_t out_depth = PartialShape::kUnknown;
  if (depth >= 0 && filter.dim(3) >= 0) {
    WEIR_RETURN_IF_ERROR(CheckedMultiply(depth, filter.dim(3), &out_depth,
                                         "in_channels * channel_multiplier"));
  }
  WEIR_ASSIGN_OR_RETURN(auto spatial,
                        PartialSpatialOutput(attrs, input, {filter.dim(0), filter.dim(1)}));
  c->set_output(0, ImageShape(layout, input.dim(layout.batch()), spatial[0], spatial[1], out_depth));
  return Status::OK();
}

Status DepthwiseConv2DBackpropInputShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetConv2DAttrs(c->attrs()));
  PartialShape filter, out_backprop;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 4, &out_backprop));
  WEIR_RETURN_IF_ERROR(ShapeFromSizesInput(c, 0, 4, "input_sizes"));
  const Tensor* sizes = c->input_tensor(0);
  if (sizes == nullptr || !filter.IsFullyDefined() || !out_backprop.IsFullyDefined()) {
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(TensorShape input, ShapeFromSizes(*sizes, 4, "input_sizes"));
  WEIR_ASSIGN_OR_RETURN(DepthwiseConv2DDims d,
                        ComputeDepthwiseConv2DDims(attrs, input, filter.ToTensorShape()));
  if (d.dims.output_shape() != out_backprop.ToTensorShape()) {
    return errors::InvalidArgument("out_backprop ", out_backprop, " must have shape ",
                                   d.dims.output_shape(), ", the output of convolving input ",
                                   input, " with filter ", filter);
  }
  return Status::OK();
}

Status DepthwiseConv2DBackpropFilterShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window2DAttrs attrs, GetConv2DAttrs(c->attrs()));
  PartialShape input, out_backprop;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 4, &out_backprop));
  const Tensor* sizes = c->input_tensor(1);
  if (sizes == nullptr) {
    WEIR_RETURN_IF_ERROR(ShapeFromSizesInput(c, 1, 4, "filter_sizes"));
    c->set_output(0, PartialShape({PartialShape::kUnknown, PartialShape::kUnknown,
                                   input.dim(attrs.layout.channels()), PartialShape::kUnknown}));
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(TensorShape filter, ShapeFromSizes(*sizes, 4, "filter_sizes"));
  if (input.IsFullyDefined() && out_backprop.IsFullyDefined()) {
    WEIR_ASSIGN_OR_RETURN(DepthwiseConv2DDims d,
                          ComputeDepthwiseConv2DDims(attrs, input.ToTensorShape(), filter));
    if (d.dims.output_shape() != out_backprop.ToTensorShape()) {
      return errors::InvalidArgument("out_backprop ", out_backprop, " must have shape ",
                                     d.dims.output_shape(), ", the output of convolving input ",
                                     input, " with filter ", filter);
    }
  }
  c->set_output(0, filter);
  return Status::OK();
}

Status ShapeFromSizesInput(InferenceContext* c, int input, int rank, const char* what) {
  const PartialShape& sizes_shape = c->input(input);
  if (sizes_shape.known_rank() &&
      (sizes_shape.rank() != 1 || (sizes_shape.dim(0) >= 0 && sizes_shape.dim(0) != rank))) {
    return errors::InvalidArgument(what, " must be a vector of ", rank, " sizes but has shape ",
                                   sizes_shape);
  }
  const Tensor* sizes = c->input_tensor(input);
  if (sizes == nullptr) {
    c->set_output(0, PartialShape::UnknownDims(rank));
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(TensorShape shape, ShapeFromSizes(*sizes, rank, what));
  c->set_output(0, shape);
  return Status::OK();
}

}  // namespace weir
