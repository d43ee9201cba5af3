// Gradients of the image family: the resizes go through their dedicated
// backward kernels with the forward op's sampling attrs; `size` gets none.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

Status ResizeBilinearGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                          std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"align_corners", "half_pixel_centers"});
  Output images = ForwardInput(op, 0);
  *grads = {AddOp(scope, "ResizeBilinearGrad", {g[0], images}, attrs).output(0), Output()};
  return scope.status();
}

Status ResizeNearestNeighborGrad(const Scope& scope, const Operation& op,
                                 const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"align_corners", "half_pixel_centers"});
  Output images = ForwardInput(op, 0);
  // The images' rows and cols.
  const PartialShape& shape = images.shape();
  Output size = shape.known_rank() && shape.rank() == 4 && shape.dim(1) >= 0 && shape.dim(2) >= 0
                    ? IntVector(scope, {shape.dim(1), shape.dim(2)})
                    : ops::Slice(scope, ops::Shape(scope, images), IntVector(scope, {1}),
                                 IntVector(scope, {2}));
  *grads = {AddOp(scope, "ResizeNearestNeighborGrad", {g[0], size}, attrs).output(0), Output()};
  return scope.status();
}

}  // namespace

void RegisterImageGradients(GradientRegistry* registry) {
  registry->Register("ResizeBilinear", ResizeBilinearGrad);
  registry->Register("ResizeNearestNeighbor", ResizeNearestNeighborGrad);
}

}  // namespace weir
