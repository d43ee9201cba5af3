#include "weir/kernels/nn_test_util.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {

StatusOr<std::vector<Tensor>> RunCreatedKernel(OpKernel* kernel, std::vector<Tensor> inputs) {
  StepContext step;
  std::vector<Tensor> outputs(kernel->num_outputs());
  OpKernelContext::Params params;
  params.device = TestCpuDevice();
  params.kernel = kernel;
  params.step = &step;
  params.inputs = std::span<Tensor>(inputs);
  params.outputs = std::span<Tensor>(outputs);
  OpKernelContext context(&params);
  kernel->Compute(&context);
  WEIR_RETURN_IF_ERROR(context.status());
  return outputs;
}

std::vector<double> RandomValues(int64_t count, int seed, double lo, double hi) {
  std::vector<double> values(count);
  uint64_t state = 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(seed) + 1);
  for (double& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = lo + (hi - lo) * (static_cast<double>(state >> 11) / 9007199254740992.0);
  }
  return values;
}

Tensor MakeTensor(DType dtype, const TensorShape& shape, const std::vector<double>& values) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.num_elements());
  Tensor t(dtype, shape);
  if (dtype == DT_FLOAT) {
    std::copy(values.begin(), values.end(), t.data<float>());
  } else if (dtype == DT_BFLOAT16) {
    std::transform(values.begin(), values.end(), t.data<Eigen::bfloat16>(),
                   [](double v) { return Eigen::bfloat16(static_cast<float>(v)); });
  } else {
    CHECK(dtype == DT_DOUBLE) << dtype;
    std::copy(values.begin(), values.end(), t.data<double>());
  }
  return t;
}

std::vector<double> RoundTo(DType dtype, const std::vector<double>& values) {
  return ToDoubles(
      MakeTensor(dtype, TensorShape({static_cast<int64_t>(values.size())}), values));
}

Tensor Int32Vector(const std::vector<int32_t>& values) { return Tensor::FromVector(values); }

void ExpectAllNear(const Tensor& actual, const std::vector<double>& expected, double tolerance,
                   const std::string& what, const std::vector<double>& scale) {
  const std::vector<double> got = ToDoubles(actual);
  ASSERT_EQ(got.size(), expected.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i) {
    const double s = scale.empty() ? std::abs(expected[i]) : scale[i];
    const bool both_nan = std::isnan(got[i]) && std::isnan(expected[i]);
    if (!both_nan && !(std::abs(got[i] - expected[i]) <= tolerance * (s + 1))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << expected[i]
                    << " (tolerance " << tolerance << " * " << s + 1 << ")";
      ++failures;
    }
  }
}

std::vector<double> NumericGradient(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> x, double h) {
  std::vector<double> gradient(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = f(x);
    x[i] = saved - h;
    const double down = f(x);
    x[i] = saved;
    gradient[i] = (up - down) / (2 * h);
  }
  return gradient;
}

double Dot(const Tensor& a, const std::vector<double>& b) {
  const std::vector<double> values = ToDoubles(a);
  CHECK_EQ(values.size(), b.size());
  double sum = 0;
  for (size_t i = 0; i < b.size(); ++i) sum += values[i] * b[i];
  return sum;
}

}  // namespace weir
