// Gradients of the image family: the resizes go through their dedicated
// backward kernels with the forward op's sampling attrs; `size` gets none.
// The backward ops are linear in their gradient input, and their own
// gradient is the forward resize back to that input's rows and cols.
#include <utility>

#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// The rows and cols of the image tensor `images`, as an int32 [2].
Output ImageSize(const Scope& scope, const Output& images) {
  const PartialShape& shape = images.shape();
  if (shape.known_rank() && shape.rank() == 4 && shape.dim(1) >= 0 && shape.dim(2) >= 0) {
    return IntVector(scope, {shape.dim(1), shape.dim(2)});
  }
  return ops::Slice(scope, ops::Shape(scope, images), IntVector(scope, {1}), IntVector(scope, {2}));
}

// ResizeBilinear and ResizeBicubic: their backward op spreads g over the
// input pixels each output pixel was blended from.
template <const char* kBackward>
Status ResizeInterpolatingGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"align_corners", "half_pixel_centers"});
  Output images = ForwardInput(op, 0);
  *grads = {AddOp(scope, kBackward, {g[0], images}, attrs).output(0), Output()};
  return scope.status();
}
constexpr char kResizeBilinearGrad[] = "ResizeBilinearGrad";
constexpr char kResizeBicubicGrad[] = "ResizeBicubicGrad";

Status ResizeNearestNeighborGrad(const Scope& scope, const Operation& op,
                                 const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"align_corners", "half_pixel_centers"});
  Output images = ForwardInput(op, 0);
  *grads = {AddOp(scope, "ResizeNearestNeighborGrad", {g[0], ImageSize(scope, images)}, attrs)
                .output(0),
            Output()};
  return scope.status();
}

// ResizeBilinearGrad(grads, original_image): d/d grads is the bilinear
// resize of g (original_image's shape) to grads' size; original_image only
// gives the shape. The same for ResizeBicubicGrad.
template <const char* kForward>
Status ResizeInterpolatingGradGrad(const Scope& scope, const Operation& op,
                                   const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"align_corners", "half_pixel_centers"});
  Output resized = ForwardInput(op, 0);
  *grads = {AddOp(scope, kForward, {g[0], ImageSize(scope, resized)}, attrs).output(0), Output()};
  return scope.status();
}
constexpr char kResizeBilinear[] = "ResizeBilinear";
constexpr char kResizeBicubic[] = "ResizeBicubic";

Status ResizeNearestNeighborGradGrad(const Scope& scope, const Operation& op,
                                     const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"align_corners", "half_pixel_centers"});
  Output resized = ForwardInput(op, 0);
  *grads = {
      AddOp(scope, "ResizeNearestNeighbor", {g[0], ImageSize(scope, resized)}, attrs).output(0),
      Output()};
  return scope.status();
}

// CropAndResize: the image gets CropAndResizeGradImage (float images only,
// as in TensorFlow), the boxes CropAndResizeGradBoxes (bilinear only: nearest
// is piecewise constant in the boxes, so their gradient is zero); box_ind
// and crop_size none.
Status CropAndResizeGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                         std::vector<Output>* grads) {
  Output image = ForwardInput(op, 0), boxes = ForwardInput(op, 1), box_ind = ForwardInput(op, 2);
  std::string method = "bilinear";
  (void)GetAttr(op.node()->def().attrs, "method", &method);
  grads->assign(4, Output());
  const DType dtype = image.dtype();
  if (dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_HALF) {
    AttrMap attrs{{"T", dtype}, {"method", method}};
    (*grads)[0] = AddOp(scope, "CropAndResizeGradImage",
                        {g[0], boxes, box_ind, ops::Shape(scope, image)}, attrs)
                      .output(0);
  }
  (*grads)[1] =
      method == "bilinear"
          ? AddOp(scope, "CropAndResizeGradBoxes", {g[0], image, boxes, box_ind}).output(0)
          : ops::ZerosLike(scope, boxes);
  return scope.status();
}

}  // namespace

void RegisterVisionGradients(GradientRegistry* registry);  // vision_grad.cc

void RegisterImageGradients(GradientRegistry* registry) {
  RegisterVisionGradients(registry);
  registry->Register("CropAndResize", CropAndResizeGrad);
  registry->RegisterNoGradient("CropAndResizeGradImage");
  registry->RegisterNoGradient("CropAndResizeGradBoxes");
  // Codecs, colour adjustments and non-max suppression: no gradient, as in
  // TensorFlow (RGBToHSV's is in vision_grad.cc).
  for (const char* op :
       {"DecodeJpeg", "DecodeAndCropJpeg", "DecodePng", "DecodeImage", "EncodeJpeg", "EncodePng",
        "ExtractJpegShape", "DecodeBmp", "ResizeArea", "HSVToRGB", "AdjustContrastv2", "AdjustHue",
        "AdjustSaturation", "NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3",
        "NonMaxSuppressionV4", "NonMaxSuppressionV5"}) {
    registry->RegisterNoGradient(op);
  }
  registry->Register("ResizeBilinear", ResizeInterpolatingGrad<kResizeBilinearGrad>);
  registry->Register("ResizeBicubic", ResizeInterpolatingGrad<kResizeBicubicGrad>);
  registry->Register("ResizeBicubicGrad", ResizeInterpolatingGradGrad<kResizeBicubic>);
  registry->Register("ResizeNearestNeighbor", ResizeNearestNeighborGrad);
  registry->Register("ResizeBilinearGrad", ResizeInterpolatingGradGrad<kResizeBilinear>);
  registry->Register("ResizeNearestNeighborGrad", ResizeNearestNeighborGradGrad);
  // SpaceToDepth and DepthToSpace only move elements, each the other's inverse.
  for (auto [forward, inverse] :
       {std::pair{"SpaceToDepth", "DepthToSpace"}, std::pair{"DepthToSpace", "SpaceToDepth"}}) {
    registry->Register(forward, [inverse](const Scope& scope, const Operation& op,
                                          const std::vector<Output>& g,
                                          std::vector<Output>* grads) {
      *grads = {
          AddOp(scope, inverse, {g[0]}, ForwardAttrs(op, {"block_size", "data_format"})).output(0)};
      return scope.status();
    });
  }
}

}  // namespace weir
