// Vision ops of exported models: Conv3D and its backprops, MaxPool3D,
// AvgPool3D and their gradients, ExtractImagePatches, with TensorFlow's
// OpDefs. The window rules are window3d_shape.h's, shared with the kernels.
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/window3d_shape.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;

Status SetOutput(InferenceContext* c, const StatusOr<Window3DDims>& dims, bool channels_first) {
  WEIR_RETURN_IF_ERROR(dims.status());
  c->set_output(0, PartialShape(dims->OutputDims(channels_first)));
  return Status::OK();
}

Status Conv3DShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window3DAttrs attrs, GetConv3DAttrs(c->attrs()));
  PartialShape input, filter;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 5, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 5, &filter));
  if (input.IsFullyDefined() && filter.IsFullyDefined()) {
    return SetOutput(c, ComputeConv3DDims(attrs, input.ToTensorShape(), filter.ToTensorShape()),
                     attrs.channels_first);
  }
  std::vector<int64_t> out(5, kUnknown);
  out[0] = input.dim(0);
  out[attrs.channels_first ? 1 : 4] = filter.dim(4);
  c->set_output(0, PartialShape(out));
  return Status::OK();
}

Status Pool3DShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(Window3DAttrs attrs, GetPool3DAttrs(c->attrs()));
  PartialShape input;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 5, &input));
  if (input.IsFullyDefined()) {
    return SetOutput(c, ComputePool3DDims(attrs, input.ToTensorShape()), attrs.channels_first);
  }
  std::vector<int64_t> out(5, kUnknown);
  out[0] = input.dim(0);
  const int channels = attrs.channels_first ? 1 : 4;
  out[channels] = input.dim(channels);
  c->set_output(0, PartialShape(out));
  return Status::OK();
}

// The output is shaped by the int vector at `sizes` (rank 5) when it is
// known, else like the input at `like` (-1: unknown).
Status ShapeFromSizes(InferenceContext* c, int sizes, int like) {
  PartialShape size_vector;
  WEIR_RETURN_IF_ERROR(c->WithRank(sizes, 1, &size_vector));
  if (const Tensor* t = c->input_tensor(sizes)) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(*t, "sizes"));
    if (dims.size() != 5) {
      return errors::InvalidArgument("the shape input must hold 5 values, got ", dims.size());
    }
    WEIR_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(dims));
    c->set_output(0, std::move(out));
    return Status::OK();
  }
  c->set_output(0, like >= 0 ? c->input(like) : PartialShape::UnknownDims(5));
  return Status::OK();
}

OpDefBuilder AddConv3DAttrs(OpDefBuilder builder) {
  builder.Attr("strides: list(int) >= 5")
      .Attr("padding: {'SAME', 'VALID'}")
      .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1, 1]");
  return builder;
}

OpDefBuilder AddPool3DAttrs(OpDefBuilder builder) {
  builder.Attr("ksize: list(int) >= 5")
      .Attr("strides: list(int) >= 5")
      .Attr("padding: {'SAME', 'VALID'}")
      .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'");
  return builder;
}

}  // namespace

void RegisterVisionOps(OpRegistry* registry) {
  registry->Register(AddConv3DAttrs(OpDefBuilder("Conv3D")
                                        .Input("input: T")
                                        .Input("filter: T")
                                        .Output("output: T")
                                        .Attr("T: {half, bfloat16, float, double}"))
                         .SetShapeFn(Conv3DShape)
                         .Doc("3-D convolution of NDHWC input with a [planes, rows, cols, "
                              "in_channels, out_channels] filter."));
  registry->Register(AddConv3DAttrs(OpDefBuilder("Conv3DBackpropInputV2")
                                        .Input("input_sizes: Tshape")
                                        .Input("filter: T")
                                        .Input("out_backprop: T")
                                        .Output("output: T")
                                        .Attr("T: {half, bfloat16, float, double}"))
                         .Attr("Tshape: {int32, int64} = int32")
                         .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 0, -1); })
                         .Doc("Conv3D's gradient for its input (shape input_sizes)."));
  registry->Register(AddConv3DAttrs(OpDefBuilder("Conv3DBackpropFilterV2")
                                        .Input("input: T")
                                        .Input("filter_sizes: int32")
                                        .Input("out_backprop: T")
                                        .Output("output: T")
                                        .Attr("T: {half, bfloat16, float, double}"))
                         .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 1, -1); })
                         .Doc("Conv3D's gradient for its filter (shape filter_sizes)."));
  registry->Register(AddPool3DAttrs(OpDefBuilder("MaxPool3D").Input("input: T").Output("output: T"))
                         .Attr("T: {half, bfloat16, float}")
                         .SetShapeFn(Pool3DShape)
                         .Doc("The maximum of each 3-D window (padding left out)."));
  registry->Register(AddPool3DAttrs(OpDefBuilder("AvgPool3D").Input("input: T").Output("output: T"))
                         .Attr("T: {half, bfloat16, float, double}")
                         .SetShapeFn(Pool3DShape)
                         .Doc("The mean of each 3-D window over its elements inside the input."));
  registry->Register(AddPool3DAttrs(OpDefBuilder("MaxPool3DGrad")
                                        .Input("orig_input: TInput")
                                        .Input("orig_output: TInput")
                                        .Input("grad: T")
                                        .Output("output: T"))
                         .Attr("T: {half, bfloat16, float} = float")
                         .Attr("TInput: {half, bfloat16, float} = float")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape input;
                           WEIR_RETURN_IF_ERROR(c->WithRank(0, 5, &input));
                           c->set_output(0, input);
                           return Status::OK();
                         })
                         .Doc("MaxPool3D's gradient: each window's gradient goes to the input "
                              "elements within 1e-5 of its maximum (as TensorFlow's CPU "
                              "kernel)."));
  registry->Register(AddPool3DAttrs(OpDefBuilder("MaxPool3DGradGrad")
                                        .Input("orig_input: T")
                                        .Input("orig_output: T")
                                        .Input("grad: T")
                                        .Output("output: T"))
                         .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, "
                               "uint16, half, uint32, uint64}")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape output;
                           WEIR_RETURN_IF_ERROR(c->WithRank(1, 5, &output));
                           c->set_output(0, output);
                           return Status::OK();
                         })
                         .Doc("MaxPool3DGrad's gradient: for each window, grad (shaped like "
                              "orig_input) at the window's maximum, shaped like orig_output."));
  registry->Register(AddPool3DAttrs(OpDefBuilder("AvgPool3DGrad")
                                        .Input("orig_input_shape: int32")
                                        .Input("grad: T")
                                        .Output("output: T"))
                         .Attr("T: {half, bfloat16, float, double}")
                         .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 0, -1); })
                         .Doc("AvgPool3D's gradient, shaped orig_input_shape."));
  registry->Register(
      OpDefBuilder("ExtractImagePatches")
          .Input("images: T")
          .Output("patches: T")
          .Attr("ksizes: list(int) >= 4")
          .Attr("strides: list(int) >= 4")
          .Attr("rates: list(int) >= 4")
          .Attr("T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, "
                "uint32, uint64, complex64, complex128, bool}")
          .Attr("padding: {'SAME', 'VALID'}")
          .SetShapeFn([](InferenceContext* c) {
            PartialShape images;
            WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &images));
            if (images.IsFullyDefined()) {
              WEIR_ASSIGN_OR_RETURN(Window3DDims dims,
                                    ComputePatchDims(c->attrs(), images.ToTensorShape()));
              c->set_output(0, PartialShape({dims.batch, dims.spatial[1].output,
                                             dims.spatial[2].output, dims.out_channels}));
              return Status::OK();
            }
            c->set_output(0, PartialShape({images.dim(0), kUnknown, kUnknown, kUnknown}));
            return Status::OK();
          })
          .Doc("The ksizes patches of NHWC images (rates apart within a patch, strides "
               "between patches) flattened into the depth: [batch, out_rows, out_cols, "
               "ksize_rows * ksize_cols * channels]."));
}

}  // namespace weir
