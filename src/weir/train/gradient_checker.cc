#include "weir/train/gradient_checker.h"

#include <cmath>
#include <cstring>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

double Get(const Tensor& t, int64_t i) {
  return t.dtype() == DT_DOUBLE ? t.data<double>()[i] : t.data<float>()[i];
}
void Set(Tensor* t, int64_t i, double v) {
  if (t->dtype() == DT_DOUBLE) t->data<double>()[i] = v;
  else t->data<float>()[i] = static_cast<float>(v);
}

Tensor DeepCopy(const Tensor& t) {
  Tensor copy(t.dtype(), t.shape());
  if (t.TotalBytes() > 0) std::memcpy(copy.raw_data(), t.raw_data(), t.TotalBytes());
  return copy;
}

}  // namespace

StatusOr<double> MaxGradientError(const Scope& scope, const std::vector<Output>& xs,
                                  const std::vector<Tensor>& x_values, const Output& y,
                                  double delta) {
  if (xs.size() != x_values.size()) {
    return errors::InvalidArgument("MaxGradientError: ", xs.size(), " xs but ", x_values.size(), " values");
  }
  // The projection weights must have y's shape, which is known only by
  // running y once.
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < xs.size(); ++i) feeds.emplace_back(xs[i].name(), x_values[i]);
  Scope check = scope.NewSubScope("gradient_check");
  auto w = ops::Placeholder(check.WithOpName("w"), y.dtype());
  if (!y.shape().known_rank()) {
    return errors::InvalidArgument("MaxGradientError: y '", y.name(), "' must have a known rank");
  }
  std::vector<int32_t> all_axes(y.shape().rank());
  for (int i = 0; i < y.shape().rank(); ++i) all_axes[i] = i;
  Output projected = ops::Sum(check, ops::Mul(check, y, w), Tensor::FromVector<int32_t>(all_axes));
  std::vector<Output> grads;
  // AddSymbolicGradients may replace y's node (a call it expands): y is
  // used by name and dtype from here on.
  const std::string y_name = y.name();
  const DType y_dtype = y.dtype();
  // d(sum(w * y))/dx = J^T w: seed y's gradient with w.
  WEIR_RETURN_IF_ERROR(AddSymbolicGradients(check, {y}, xs, {w}, &grads));
  WEIR_RETURN_IF_ERROR(scope.status());

  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(scope.ToGraphDef()));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run(feeds, {y_name}, {}, &out));
  Tensor weights(y_dtype, out[0].shape());
  for (int64_t i = 0; i < weights.NumElements(); ++i) Set(&weights, i, 0.5 + 0.37 * ((i * 7) % 11) / 11.0);
  feeds.emplace_back(w.name(), weights);

  std::vector<std::string> grad_names;
  for (const Output& g : grads) grad_names.push_back(g.name());
  std::vector<Tensor> symbolic;
  WEIR_RETURN_IF_ERROR(session->Run(feeds, grad_names, {}, &symbolic));

  double max_error = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    if (symbolic[k].shape() != x_values[k].shape()) {
      return errors::Internal("gradient of '", xs[k].name(), "' has shape ", symbolic[k].shape(),
                              " but x has shape ", x_values[k].shape());
    }
    for (int64_t i = 0; i < x_values[k].NumElements(); ++i) {
      double f[2];
      for (int side = 0; side < 2; ++side) {
        Tensor moved = DeepCopy(x_values[k]);
        Set(&moved, i, Get(x_values[k], i) + (side ? -delta : delta));
        auto moved_feeds = feeds;
        moved_feeds[k].second = moved;
        WEIR_RETURN_IF_ERROR(session->Run(moved_feeds, {projected.name()}, {}, &out));
        f[side] = Get(out[0], 0);
      }
      double numeric = (f[0] - f[1]) / (2 * delta);
      max_error = std::max(max_error, std::abs(numeric - Get(symbolic[k], i)));
    }
  }
  return max_error;
}

}  // namespace weir
