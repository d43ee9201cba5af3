// The image family: resizing by bilinear and bicubic interpolation and by
// nearest neighbour, and their gradients, and SpaceToDepth/DepthToSpace, with
// TensorFlow's names, attrs and type sets. Images are NHWC [batch, rows,
// cols, channels] (SpaceToDepth/DepthToSpace take NCHW too).
#include "weir/framework/image_resize_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/space_batch_shape.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;

Status ResizeAttrs(InferenceContext* c) {
  bool align_corners = false, half_pixel_centers = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("align_corners", &align_corners));
  WEIR_RETURN_IF_ERROR(c->GetAttr("half_pixel_centers", &half_pixel_centers));
  return CheckResizeAttrs(align_corners, half_pixel_centers);
}

// [batch, size[0], size[1], channels] of the image input at `image`, from
// the size vector at `size_input`.
Status ResizedShape(InferenceContext* c, int image, int size_input, const char* what) {
  WEIR_RETURN_IF_ERROR(ResizeAttrs(c));
  PartialShape images, size;
  WEIR_RETURN_IF_ERROR(c->WithRank(image, 4, &images));
  WEIR_RETURN_IF_ERROR(c->WithRank(size_input, 1, &size));
  if (size.dim(0) >= 0 && size.dim(0) != 2) {
    return errors::InvalidArgument("size ", size, " must be a vector of 2 values (rows, cols)");
  }
  if (images.IsFullyDefined()) {
    WEIR_RETURN_IF_ERROR(CheckResizeImages(images.ToTensorShape(), what));
  }
  int64_t rows = kUnknown, cols = kUnknown;
  if (const Tensor* t = c->input_tensor(size_input)) {
    WEIR_ASSIGN_OR_RETURN(auto values, ResizeSizeValues(*t, "size"));
    rows = values[0];
    cols = values[1];
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape out,
                        PartialShape::FromDims({images.dim(0), rows, cols, images.dim(3)}));
  c->set_output(0, std::move(out));
  return Status::OK();
}

Status ResizeShape(InferenceContext* c) { return ResizedShape(c, 0, 1, "images"); }

Status ResizeNearestNeighborGradShape(InferenceContext* c) {
  return ResizedShape(c, 0, 1, "grads");
}

// The gradient has original_image's shape; grads must be an image batch
// with the same batch and channels.
Status ResizeBilinearGradShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ResizeAttrs(c));
  PartialShape grads, original;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &grads));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &original));
  for (int dim : {0, 3}) {
    int64_t merged;
    if (!InferenceContext::MergeDim(grads.dim(dim), original.dim(dim), &merged).ok()) {
      return errors::InvalidArgument("grads ", grads, " and original_image ", original,
                                     " must have the same batch and channels");
    }
  }
  c->set_output(0, original);
  return Status::OK();
}

OpDefBuilder AddResizeAttrs(OpDefBuilder builder) {
  builder.Attr("align_corners: bool = false").Attr("half_pixel_centers: bool = false");
  return builder;
}

// SpaceToDepth and DepthToSpace: rank 4 in, rank 4 out.
Status DepthSpaceShape(InferenceContext* c, bool to_depth) {
  int64_t block = 0;
  std::string format;
  WEIR_RETURN_IF_ERROR(c->GetAttr("block_size", &block));
  WEIR_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (format == "NCHW_VECT_C") {
    return errors::Unimplemented(
        "data_format NCHW_VECT_C (quantized int8 images) is not supported");
  }
  PartialShape input;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                        DepthSpaceDims(input.dim_sizes(), block, format == "NCHW", to_depth));
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// CropAndResize's boxes [num_boxes, 4] and box_ind [num_boxes]: num_boxes,
// or unknown.
StatusOr<int64_t> CropBoxes(InferenceContext* c, int boxes_input) {
  PartialShape boxes, box_ind;
  WEIR_RETURN_IF_ERROR(c->WithRank(boxes_input, 2, &boxes));
  WEIR_RETURN_IF_ERROR(c->WithRank(boxes_input + 1, 1, &box_ind));
  if (boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
    return errors::InvalidArgument("boxes ", boxes, " must have shape [num_boxes, 4]");
  }
  int64_t n;
  if (!InferenceContext::MergeDim(boxes.dim(0), box_ind.dim(0), &n).ok()) {
    return errors::InvalidArgument("boxes ", boxes, " and box_ind ", box_ind,
                                   " must have one entry per box");
  }
  return n;
}

// [num_boxes, crop_size[0], crop_size[1], depth].
Status CropAndResizeShape(InferenceContext* c) {
  PartialShape image, crop_size;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &image));
  WEIR_ASSIGN_OR_RETURN(int64_t boxes, CropBoxes(c, 1));
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 1, &crop_size));
  int64_t rows = kUnknown, cols = kUnknown;
  if (const Tensor* t = c->input_tensor(3)) {
    WEIR_ASSIGN_OR_RETURN(auto values, ResizeSizeValues(*t, "crop_size"));
    rows = values[0];
    cols = values[1];
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape out,
                        PartialShape::FromDims({boxes, rows, cols, image.dim(3)}));
  c->set_output(0, std::move(out));
  return Status::OK();
}

}  // namespace

void RegisterImageOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("CropAndResize")
          .Input("image: T")
          .Input("boxes: float")
          .Input("box_ind: int32")
          .Input("crop_size: int32")
          .Output("crops: float")
          .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
          .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
          .Attr("extrapolation_value: float = 0")
          .SetShapeFn(CropAndResizeShape)
          .Doc("For each box b (normalized [y1, x1, y2, x2] in image box_ind[b]), the box "
               "resampled to crop_size (rows, cols) by bilinear interpolation or nearest "
               "pixel; samples outside the image are extrapolation_value."));
  registry->Register(
      OpDefBuilder("CropAndResizeGradImage")
          .Input("grads: float")
          .Input("boxes: float")
          .Input("box_ind: int32")
          .Input("image_size: int32")
          .Output("output: T")
          .Attr("T: {float, half, double}")
          .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
          .SetShapeFn([](InferenceContext* c) {
            PartialShape grads, size;
            WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &grads));
            WEIR_RETURN_IF_ERROR(CropBoxes(c, 1).status());
            WEIR_RETURN_IF_ERROR(c->WithRank(3, 1, &size));
            std::vector<int64_t> dims(4, kUnknown);
            if (const Tensor* t = c->input_tensor(3)) {
              WEIR_ASSIGN_OR_RETURN(dims, IntTensorValues(*t, "image_size"));
              if (dims.size() != 4) {
                return errors::InvalidArgument("image_size must hold 4 values");
              }
            }
            WEIR_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(dims));
            c->set_output(0, std::move(out));
            return Status::OK();
          })
          .Doc("CropAndResize's gradient for its image (shape image_size): each crop "
               "pixel's gradient added to the image pixels it was sampled from."));
  registry->Register(
      OpDefBuilder("CropAndResizeGradBoxes")
          .Input("grads: float")
          .Input("image: T")
          .Input("boxes: float")
          .Input("box_ind: int32")
          .Output("output: float")
          .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
          .Attr("method: {'bilinear'} = 'bilinear'")
          .SetShapeFn([](InferenceContext* c) {
            PartialShape grads, image;
            WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &grads));
            WEIR_RETURN_IF_ERROR(c->WithRank(1, 4, &image));
            WEIR_ASSIGN_OR_RETURN(int64_t boxes, CropBoxes(c, 2));
            c->set_output(0, PartialShape({boxes, 4}));
            return Status::OK();
          })
          .Doc("CropAndResize's (bilinear) gradient for its boxes, [num_boxes, 4]."));
  registry->Register(OpDefBuilder("SpaceToDepth")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("block_size: int >= 2")
                         .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
                         .SetShapeFn([](InferenceContext* c) { return DepthSpaceShape(c, true); })
                         .Doc("Moves each block_size x block_size block of rows and cols into "
                              "the channels (row-major over the block, then the input channel): "
                              "NHWC [n, h, w, c] -> [n, h / b, w / b, c * b * b] (NCHW alike)."));
  registry->Register(OpDefBuilder("DepthToSpace")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("block_size: int >= 2")
                         .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
                         .SetShapeFn([](InferenceContext* c) { return DepthSpaceShape(c, false); })
                         .Doc("SpaceToDepth's inverse: NHWC [n, h, w, c] -> [n, h * b, w * b, "
                              "c / (b * b)] (NCHW alike)."));
  registry->Register(
      AddResizeAttrs(OpDefBuilder("ResizeBilinear")
                      .Input("images: T")
                      .Input("size: int32")
                      .Output("resized_images: float")
                      .Attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, "
                            "float, double}"))
          .SetShapeFn(ResizeShape)
          .Doc("Resizes each image to `size` (rows, cols), each output pixel interpolated "
               "linearly between the four input pixels around its center; align_corners maps "
               "corner pixels onto corner pixels, half_pixel_centers samples at pixel centers."));
  registry->Register(
      AddResizeAttrs(OpDefBuilder("ResizeNearestNeighbor")
                      .Input("images: T")
                      .Input("size: int32")
                      .Output("resized_images: T")
                      .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, double, "
                            "bfloat16}"))
          .SetShapeFn(ResizeShape)
          .Doc("Resizes each image to `size` (rows, cols), each output pixel copying the input "
               "pixel nearest to it."));
  registry->Register(
      AddResizeAttrs(OpDefBuilder("ResizeBicubic")
                         .Input("images: T")
                         .Input("size: int32")
                         .Output("resized_images: float")
                         .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, double, "
                               "bfloat16}"))
          .SetShapeFn(ResizeShape)
          .Doc("Resizes each image to `size` (rows, cols) by Keys' cubic convolution over the "
               "4 x 4 input pixels around each sample (a = -0.75; with half_pixel_centers "
               "a = -0.5 and pixels outside the image left out), as TensorFlow computes it."));
  registry->Register(OpDefBuilder("ResizeArea")
                         .Input("images: T")
                         .Input("size: int32")
                         .Output("resized_images: float")
                         .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, "
                               "double, bfloat16}")
                         .Attr("align_corners: bool = false")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape images, size;
                           WEIR_RETURN_IF_ERROR(c->WithRank(0, 4, &images));
                           WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &size));
                           int64_t rows = kUnknown, cols = kUnknown;
                           if (const Tensor* t = c->input_tensor(1)) {
                             WEIR_ASSIGN_OR_RETURN(auto values, ResizeSizeValues(*t, "size"));
                             rows = values[0];
                             cols = values[1];
                           }
                           WEIR_ASSIGN_OR_RETURN(
                               PartialShape out,
                               PartialShape::FromDims({images.dim(0), rows, cols, images.dim(3)}));
                           c->set_output(0, std::move(out));
                           return Status::OK();
                         })
                         .Doc("Resizes each image to `size` (rows, cols), each output pixel the "
                              "mean of the input area it covers, input pixels weighted by their "
                              "overlap."));
  registry->Register(AddResizeAttrs(OpDefBuilder("ResizeBicubicGrad")
                                        .Input("grads: float")
                                        .Input("original_image: T")
                                        .Output("output: T")
                                        .Attr("T: {float, double}"))
                         .SetShapeFn(ResizeBilinearGradShape)
                         .Doc("The gradient of ResizeBicubic with respect to its images, "
                              "shaped like original_image."));
  registry->Register(AddResizeAttrs(OpDefBuilder("ResizeBilinearGrad")
                                     .Input("grads: float")
                                     .Input("original_image: T")
                                     .Output("output: T")
                                     .Attr("T: {float, bfloat16, half, double}"))
                         .SetShapeFn(ResizeBilinearGradShape)
                         .Doc("The gradient of ResizeBilinear with respect to its images, "
                              "shaped like original_image."));
  registry->Register(AddResizeAttrs(OpDefBuilder("ResizeNearestNeighborGrad")
                                     .Input("grads: T")
                                     .Input("size: int32")
                                     .Output("output: T")
                                     .Attr("T: {uint8, int8, int32, half, float, double, "
                                           "bfloat16}"))
                         .SetShapeFn(ResizeNearestNeighborGradShape)
                         .Doc("The gradient of ResizeNearestNeighbor: each pixel of `grads` "
                              "added to the pixel of the `size` image it was copied from."));
}

}  // namespace weir
