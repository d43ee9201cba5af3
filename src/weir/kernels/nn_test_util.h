// Test helpers for the nn kernels: random tensors, comparison with values
// computed in double, and central finite differences.
//
// Test-only: builds into the kernels test binary, never the library.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "weir/framework/tensor.h"

namespace weir {

class OpKernel;

// Runs an existing kernel (from CreateTestKernel) on TestCpuDevice(), as
// the executor would; may be called concurrently.
StatusOr<std::vector<Tensor>> RunCreatedKernel(OpKernel* kernel, std::vector<Tensor> inputs);

// Uniform values in [lo, hi), the same for the same seed and size.
std::vector<double> RandomValues(int64_t count, int seed, double lo = -1, double hi = 1);

// A tensor of `dtype` (float, double or bfloat16) holding `values`, each
// rounded to the nearest value of `dtype`.
Tensor MakeTensor(DType dtype, const TensorShape& shape, const std::vector<double>& values);
// `values` rounded as MakeTensor rounds them: what a kernel reads.
std::vector<double> RoundTo(DType dtype, const std::vector<double>& values);
inline Tensor RandomTensor(DType dtype, const TensorShape& shape, int seed, double lo = -1,
                           double hi = 1) {
  return MakeTensor(dtype, shape, RandomValues(shape.num_elements(), seed, lo, hi));
}
Tensor Int32Vector(const std::vector<int32_t>& values);

// Checks every element: |actual - expected| <= tolerance * (scale[i] + 1),
// scale defaulting to |expected|. Reports the first few failures with
// their index and `what`.
void ExpectAllNear(const Tensor& actual, const std::vector<double>& expected, double tolerance,
                   const std::string& what, const std::vector<double>& scale = {});

// The gradient of f at x by central differences with step h.
std::vector<double> NumericGradient(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> x, double h);

// sum(a * b) over the elements of a tensor and a vector of the same size.
double Dot(const Tensor& a, const std::vector<double>& b);

}  // namespace weir
