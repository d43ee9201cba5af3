#include "weir/ops/gradients/gradient_util.h"

#include <algorithm>

#include "weir/framework/int_tensor_values.h"
#include "weir/ops/standard_ops.h"

namespace weir {

Output ForwardInput(const Operation& op, int i) {
  const Edge* e = op.node()->data_inputs()[i];
  return Output(e->src(), e->src_output());
}

AttrMap ForwardAttrs(const Operation& op, std::initializer_list<const char*> names) {
  AttrMap attrs;
  const AttrMap& forward = op.node()->def().attrs;
  for (const char* name : names) {
    auto it = forward.find(name);
    if (it != forward.end()) attrs.emplace(name, it->second);
  }
  return attrs;
}

std::vector<Output> ReduceForBroadcast(const Scope& scope, const Output& x, const Output& y,
                                       const Output& gx_full, const Output& gy_full) {
  PartialShape xs = x.shape(), ys = y.shape();
  if (xs.IsFullyDefined() && xs == ys) return {gx_full, gy_full};
  // One BroadcastGradientArgs serves both sides.
  Operation axes = ops::BroadcastGradientArgs(scope, ops::Shape(scope, x), ops::Shape(scope, y));
  auto reduce = [&](const Output& g, const Output& input, const Output& r) {
    return ops::Reshape(scope, ops::Sum(scope, g, r), ops::Shape(scope, input));
  };
  return {gx_full.valid() ? reduce(gx_full, x, axes.output(0)) : Output(),
          gy_full.valid() ? reduce(gy_full, y, axes.output(1)) : Output()};
}

Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x) {
  if (x.shape().IsFullyDefined() && x.shape() == grad.shape()) return grad;
  Operation axes = ops::BroadcastGradientArgs(scope, ops::Shape(scope, x), ops::Shape(scope, grad));
  return ops::Reshape(scope, ops::Sum(scope, grad, axes.output(0)), ShapeOf(scope, x));
}

std::optional<std::vector<int64_t>> ConstantInts(const Output& t) {
  if (!t.valid() || t.node()->type_string() != "Const") return std::nullopt;
  auto it = t.node()->def().attrs.find("value");
  if (it == t.node()->def().attrs.end() || !it->second.is_tensor()) return std::nullopt;
  StatusOr<std::vector<int64_t>> values = IntTensorValues(it->second.tensor(), "constant");
  if (!values.ok()) return std::nullopt;
  return *values;
}

Output IntVector(const Scope& scope, const std::vector<int64_t>& values) {
  std::vector<int32_t> narrow(values.begin(), values.end());
  return ops::Const(scope, Tensor::FromVector<int32_t>(narrow));
}

Output ShapeOf(const Scope& scope, const Output& x) {
  PartialShape shape = x.shape();
  if (shape.IsFullyDefined()) return IntVector(scope, shape.dim_sizes());
  return ops::Shape(scope, x);
}

IndexedSlices GatheredRows(const Scope& scope, const Output& g, const Output& indices,
                           const Output& shape) {
  Output row_shape;
  if (std::optional<std::vector<int64_t>> dims = ConstantInts(shape)) {
    std::vector<int64_t> values = *dims;
    values[0] = -1;
    row_shape = IntVector(scope, values);
  } else {
    row_shape =
        ops::ConcatV2(scope, {ops::Const(scope, {-1}), ops::Slice(scope, shape, {1}, {-1})}, 0);
  }
  return {ops::Reshape(scope, g, row_shape), ops::Reshape(scope, indices, {-1}), shape};
}

bool IsZeroGradient(const Output& g) {
  if (!g.valid()) return true;
  const std::string& type = g.node()->type_string();
  if (type == "ZerosLike") return true;
  if (type != "Const") return false;
  auto it = g.node()->def().attrs.find("value");
  if (it == g.node()->def().attrs.end() || !it->second.is_tensor()) return false;
  const Tensor& t = it->second.tensor();
  if (!IsFloatingDType(t.dtype()) && !IsComplexDType(t.dtype())) return false;
  const char* bytes = static_cast<const char*>(t.raw_data());
  return std::all_of(bytes, bytes + t.TotalBytes(), [](char b) { return b == 0; });
}

}  // namespace weir
