// Gradients of the vision ops (vision_ops.cc): Conv3D through its two
// backprops (and those, being linear in each operand, through convolutions
// again), the 3-D pools through their gradient ops, and ExtractImagePatches
// by scattering each patch element's gradient back to the pixel it was
// taken from (the pixels numbered by extracting patches of an index image).
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

AttrMap Conv3DAttrs(const Operation& op) {
  return ForwardAttrs(op, {"strides", "padding", "data_format", "dilations"});
}

AttrMap Pool3DAttrs(const Operation& op) {
  return ForwardAttrs(op, {"ksize", "strides", "padding", "data_format"});
}

Status Conv3DGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  AttrMap attrs = Conv3DAttrs(op);
  Output input = ForwardInput(op, 0), filter = ForwardInput(op, 1);
  *grads = {
      AddOp(scope, "Conv3DBackpropInputV2", {ShapeOf(scope, input), filter, g[0]}, attrs).output(0),
      AddOp(scope, "Conv3DBackpropFilterV2", {input, ShapeOf(scope, filter), g[0]}, attrs)
          .output(0)};
  return scope.status();
}

Status Conv3DBackpropInputGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = Conv3DAttrs(op);
  Output filter = ForwardInput(op, 1), out_backprop = ForwardInput(op, 2);
  *grads = {
      Output(),
      AddOp(scope, "Conv3DBackpropFilterV2", {g[0], ShapeOf(scope, filter), out_backprop}, attrs)
          .output(0),
      AddOp(scope, "Conv3D", {g[0], filter}, attrs).output(0)};
  return scope.status();
}

Status Conv3DBackpropFilterGrad(const Scope& scope, const Operation& op,
                                const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = Conv3DAttrs(op);
  Output input = ForwardInput(op, 0), out_backprop = ForwardInput(op, 2);
  *grads = {
      AddOp(scope, "Conv3DBackpropInputV2", {ShapeOf(scope, input), g[0], out_backprop}, attrs)
          .output(0),
      Output(), AddOp(scope, "Conv3D", {input, g[0]}, attrs).output(0)};
  return scope.status();
}

Status MaxPool3DGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                     std::vector<Output>* grads) {
  *grads = {
      AddOp(scope, "MaxPool3DGrad", {ForwardInput(op, 0), op.output(0), g[0]}, Pool3DAttrs(op))
          .output(0)};
  return scope.status();
}

// MaxPool3DGrad is linear in grad and routes it by the pooling's maxima:
// its gradient is grad's counterpart MaxPool3DGradGrad, and that one's is
// MaxPool3DGrad again; orig_input and orig_output get zeros.
Status MaxPool3DGradGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                         std::vector<Output>* grads) {
  Output input = ForwardInput(op, 0), output = ForwardInput(op, 1);
  *grads = {ops::ZerosLike(scope, input), ops::ZerosLike(scope, output),
            AddOp(scope, "MaxPool3DGradGrad", {input, output, g[0]}, Pool3DAttrs(op)).output(0)};
  return scope.status();
}

Status MaxPool3DGradGradGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                             std::vector<Output>* grads) {
  Output input = ForwardInput(op, 0), output = ForwardInput(op, 1);
  *grads = {ops::ZerosLike(scope, input), ops::ZerosLike(scope, output),
            AddOp(scope, "MaxPool3DGrad", {input, output, g[0]}, Pool3DAttrs(op)).output(0)};
  return scope.status();
}

Status AvgPool3DGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                     std::vector<Output>* grads) {
  *grads = {
      AddOp(scope, "AvgPool3DGrad", {ShapeOf(scope, ForwardInput(op, 0)), g[0]}, Pool3DAttrs(op))
          .output(0)};
  return scope.status();
}

// AvgPool3DGrad is linear in grad: its gradient is the average pool of g.
Status AvgPool3DGradGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                         std::vector<Output>* grads) {
  *grads = {Output(), AddOp(scope, "AvgPool3D", {g[0]}, Pool3DAttrs(op)).output(0)};
  return scope.status();
}

// images [n, h, w, c], g [n, oh, ow, kh * kw * c]. Pixel p (1-based, 0 for
// padding) of an index image [1, h, w, 1] goes through the same patch
// extraction, which says where each patch element came from; the gradient
// elements are then summed per source pixel.
Status ExtractImagePatchesGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& g, std::vector<Output>* grads) {
  AttrMap attrs = ForwardAttrs(op, {"ksizes", "strides", "rates", "padding"});
  Output images = ForwardInput(op, 0);
  Output shape = ops::Shape(scope, images);  // int32 [n, h, w, c]
  Output batch = ops::Slice(scope, shape, {0}, {1}), hw = ops::Slice(scope, shape, {1}, {2});
  Output channels = ops::Slice(scope, shape, {3}, {1});
  Output pixels = ops::Prod(scope, hw, 0);
  Output ids = ops::Cast(scope, ops::Range(scope, 1, ops::Add(scope, pixels, 1), 1), DT_INT64);
  ids = ops::Reshape(scope, ids,
                     ops::ConcatV2(scope, {IntVector(scope, {1}), hw, IntVector(scope, {1})}, 0));
  Output sources = AddOp(scope, "ExtractImagePatches", {ids}, attrs).output(0);
  Output g_shape = ops::Shape(scope, g[0]);
  Output g5 = ops::Reshape(
      scope, g[0],
      ops::ConcatV2(scope, {ops::Slice(scope, g_shape, {0}, {3}), IntVector(scope, {-1}), channels},
                    0));
  Output rows = ops::Reshape(
      scope, ops::Transpose(scope, g5, IntVector(scope, {1, 2, 3, 0, 4})),
      ops::ConcatV2(scope, {IntVector(scope, {-1}), ops::Mul(scope, batch, channels)}, 0));
  Output summed = ops::UnsortedSegmentSum(scope, rows, ops::Reshape(scope, sources, {-1}),
                                          ops::Add(scope, pixels, 1));
  Output dx = ops::Reshape(scope, ops::Slice(scope, summed, {1, 0}, {-1, -1}),
                           ops::ConcatV2(scope, {hw, batch, channels}, 0));
  *grads = {ops::Transpose(scope, dx, IntVector(scope, {2, 0, 1, 3}))};
  return scope.status();
}

// RGBToHSV: with V = max, m = min, C = V - m of each pixel's (r, g, b),
// S = C / V and H = num / (6 C) (+ a constant), num the difference of the
// two channels other than the maximum (g - b, b - r or r - g). The maximum
// and minimum are one-hot masks (r before g before b on ties, as the
// forward chooses), so dV/dc and dC/dc are masks; S and H are constant where
// V or C is 0 (DivNoNan gives their zero derivatives).
Status RGBToHSVGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    std::vector<Output>* grads) {
  Output images = ForwardInput(op, 0);
  const DType dtype = images.dtype();
  auto constant = [&](float v) { return ops::Cast(scope, ops::Const(scope, v), dtype); };
  auto mask = [&](const Output& a, const Output& b) {
    return ops::Cast(scope, ops::Equal(scope, a, b), dtype);
  };
  Operation rgb = ops::Split(scope, -1, images, 3);
  Output r = rgb.output(0), gr = rgb.output(1), b = rgb.output(2);
  Operation hsv_grads = ops::Split(scope, -1, g[0], 3);
  Output g_h = hsv_grads.output(0), g_s = hsv_grads.output(1), g_v = hsv_grads.output(2);
  Output one = constant(1), six = constant(6);
  Output v = ops::Maximum(scope, r, ops::Maximum(scope, gr, b));
  Output m = ops::Minimum(scope, r, ops::Minimum(scope, gr, b));
  Output c = ops::Sub(scope, v, m);
  Output r_max = mask(r, v);
  Output g_max = ops::Mul(scope, mask(gr, v), ops::Sub(scope, one, r_max));
  Output b_max = ops::Sub(scope, ops::Sub(scope, one, r_max), g_max);
  Output r_min = mask(r, m);
  Output g_min = ops::Mul(scope, mask(gr, m), ops::Sub(scope, one, r_min));
  Output b_min = ops::Sub(scope, ops::Sub(scope, one, r_min), g_min);
  Output num = ops::Add(scope,
                        ops::Add(scope, ops::Mul(scope, r_max, ops::Sub(scope, gr, b)),
                                 ops::Mul(scope, g_max, ops::Sub(scope, b, r))),
                        ops::Mul(scope, b_max, ops::Sub(scope, r, gr)));
  Output six_c = ops::Mul(scope, six, c);
  Output h_over_c = ops::DivNoNan(scope, num, ops::Mul(scope, six_c, c));  // num / (6 C^2)
  Output c_over_v2 = ops::DivNoNan(scope, c, ops::Mul(scope, v, v));
  // d num / d(r, g, b) per the maximum's channel.
  const Output dnum[3] = {ops::Sub(scope, b_max, g_max), ops::Sub(scope, r_max, b_max),
                          ops::Sub(scope, g_max, r_max)};
  const Output dv[3] = {r_max, g_max, b_max};
  const Output dm[3] = {r_min, g_min, b_min};
  std::vector<Output> channels;
  for (int i = 0; i < 3; ++i) {
    Output dc = ops::Sub(scope, dv[i], dm[i]);
    Output dh =
        ops::Sub(scope, ops::DivNoNan(scope, dnum[i], six_c), ops::Mul(scope, h_over_c, dc));
    Output ds = ops::Sub(scope, ops::DivNoNan(scope, dc, v), ops::Mul(scope, c_over_v2, dv[i]));
    channels.push_back(ops::Add(scope,
                                ops::Add(scope, ops::Mul(scope, g_h, dh), ops::Mul(scope, g_s, ds)),
                                ops::Mul(scope, g_v, dv[i])));
  }
  *grads = {ops::ConcatV2(scope, {channels[0], channels[1], channels[2]}, -1)};
  return scope.status();
}

}  // namespace

void RegisterVisionGradients(GradientRegistry* registry) {
  registry->Register("RGBToHSV", RGBToHSVGrad);
  registry->Register("Conv3D", Conv3DGrad);
  registry->Register("Conv3DBackpropInputV2", Conv3DBackpropInputGrad);
  registry->Register("Conv3DBackpropFilterV2", Conv3DBackpropFilterGrad);
  registry->Register("MaxPool3D", MaxPool3DGrad);
  registry->Register("AvgPool3D", AvgPool3DGrad);
  registry->Register("AvgPool3DGrad", AvgPool3DGradGrad);
  registry->Register("MaxPool3DGrad", MaxPool3DGradGrad);
  registry->Register("MaxPool3DGradGrad", MaxPool3DGradGradGrad);
  registry->Register("ExtractImagePatches", ExtractImagePatchesGrad);
}

}  // namespace weir
