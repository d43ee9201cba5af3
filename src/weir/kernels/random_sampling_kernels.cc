// RandomGamma, RandomPoisson[V2] and RandomGammaGrad
// (ops/random_sampling_ops.cc). Each output element draws from its own
// Philox stream (the kernel's key, a position reserved per element), so
// the values do not depend on how the work is split over threads; the
// streams are Weir's, not TensorFlow's (only the distributions match).
// Gamma: Marsaglia and Tsang's squeeze method ("A Simple Method for
// Generating Gamma Variables", 2000), boosted by U^(1/alpha) below 1.
// Poisson: multiplication of uniforms below rate 10, Hormann's transformed
// rejection PTRS ("The transformed rejection method for generating Poisson
// random variables", 1993) above.
#include <Eigen/Core>
#include <atomic>
#include <cmath>
#include <limits>
#include <numbers>

#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/philox.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// The words of stream `position`: blocks {sub, position} for sub = 0, 1...
class Stream {
 public:
  Stream(PhiloxKey key, uint64_t position) : key_(key), position_(position) {}

  uint32_t Next() {
    if (used_ == 4) {
      block_ =
          PhiloxBlock({static_cast<uint32_t>(sub_), static_cast<uint32_t>(sub_ >> 32),
                       static_cast<uint32_t>(position_), static_cast<uint32_t>(position_ >> 32)},
                      key_);
      ++sub_;
      used_ = 0;
    }
    return block_[used_++];
  }
  // Uniform in (0, 1], 53 random bits.
  double Uniform() {
    const uint64_t bits = (uint64_t{Next()} << 32 | Next()) >> 11;
    return (static_cast<double>(bits) + 1.0) * 0x1.0p-53;
  }
  double Normal() {
    return std::sqrt(-2.0 * std::log(Uniform())) * std::cos(2.0 * std::numbers::pi * Uniform());
  }

 private:
  PhiloxKey key_;
  uint64_t position_;
  uint64_t sub_ = 0;
  PhiloxCounter block_{};
  int used_ = 4;
};

double SampleGamma(double alpha, Stream& s) {
  if (!(alpha > 0)) return std::numeric_limits<double>::quiet_NaN();
  double boost = 1.0;
  if (alpha < 1.0) {
    boost = std::pow(s.Uniform(), 1.0 / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = s.Normal();
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = s.Uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * boost;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * boost;
  }
}

double SamplePoisson(double rate, Stream& s) {
  if (!(rate >= 0)) return std::numeric_limits<double>::quiet_NaN();
  if (rate == 0) return 0;
  if (std::isinf(rate)) return rate;
  if (rate < 10) {
    const double limit = std::exp(-rate);
    double product = s.Uniform();
    double k = 0;
    while (product > limit) {
      product *= s.Uniform();
      ++k;
    }
    return k;
  }
  const double root = std::sqrt(rate), log_rate = std::log(rate);
  const double b = 0.931 + 2.53 * root;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = s.Uniform() - 0.5;
    const double v = s.Uniform();
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -rate + k * log_rate - std::lgamma(k + 1)) {
      return k;
    }
  }
}

// output[i, j] = a sample for parameter j; output dims = shape + parameter.
template <typename P, typename T, bool kGamma>
class SampleOp : public OpKernel {
 public:
  explicit SampleOp(OpKernelConstruction* context) : OpKernel(context) {
    int64_t seed = 0, seed2 = 0;
    Status status = context->GetAttr("seed", &seed);
    status.Update(context->GetAttr("seed2", &seed2));
    context->SetStatus(status);
    key_ = KeyFromSeeds(seed, seed2);
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& shape_t = context->input(0);
    const Tensor& parameter = context->input(1);
    const std::string where = StrCat(type_string(), " (node ", name(), ", parameter ",
                                     parameter.shape(), " of ", parameter.dtype(), ")");
    OP_REQUIRES(context, shape_t.dims() == 1,
                errors::InvalidArgument(where, ": shape must be a vector, not ", shape_t.shape()));
    StatusOr<std::vector<int64_t>> dims = IntTensorValues(shape_t, "shape");
    OP_REQUIRES_OK(context, dims.status());
    const int64_t samples_rank = static_cast<int64_t>(dims->size());
    dims->insert(dims->end(), parameter.shape().dim_sizes().begin(),
                 parameter.shape().dim_sizes().end());
    StatusOr<TensorShape> shape = CheckedShape(*dims, where);
    OP_REQUIRES_OK(context, shape.status());
    const P* params = parameter.data<P>();
    const int64_t count = parameter.NumElements();
    if constexpr (std::is_integral_v<T>) {
      // Integer outputs cannot hold NaN or infinity: such rates are errors.
      constexpr double kLimit = static_cast<double>(std::numeric_limits<T>::max()) / 2;
      for (int64_t j = 0; j < count; ++j) {
        const double rate = static_cast<double>(params[j]);
        OP_REQUIRES(context, rate >= 0 && rate <= kLimit,
                    errors::InvalidArgument(where, ": rate[", j, "] = ", rate,
                                            " gives no samples of ", kDTypeOf<T>));
      }
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    (void)samples_rank;
    const uint64_t base = next_position_.fetch_add(static_cast<uint64_t>(n));
    T* dst = out->data<T>();
    context->device()->intra_op_pool()->ParallelFor(n, 2000, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        Stream stream(key_, base + static_cast<uint64_t>(i));
        const double p = static_cast<double>(params[i % count]);
        dst[i] = static_cast<T>(kGamma ? SampleGamma(p, stream) : SamplePoisson(p, stream));
      }
    });
  }

 private:
  PhiloxKey key_;
  std::atomic<uint64_t> next_position_{0};
};

template <typename T>
struct GammaSampleDerAlpha : functor::BinaryBase<T> {
  T operator()(const T& alpha, const T& sample) const {
    return Eigen::numext::gamma_sample_der_alpha(alpha, sample);
  }
};

}  // namespace

void RegisterRandomSamplingKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::half>([&]<typename T>() {
    registry->Register(KernelBuilder("RandomGamma").TypeConstraint("T", kDTypeOf<T>),
                       MakeKernel<SampleOp<T, T, true>>);
    registry->Register(KernelBuilder("RandomPoisson").TypeConstraint("dtype", kDTypeOf<T>),
                       MakeKernel<SampleOp<T, T, false>>);
  });
  ForEachType<float, double, Eigen::half, int32_t, int64_t>([&]<typename R>() {
    ForEachType<float, double, Eigen::half, int32_t, int64_t>([&]<typename T>() {
      registry->Register(KernelBuilder("RandomPoissonV2")
                             .TypeConstraint("R", kDTypeOf<R>)
                             .TypeConstraint("dtype", kDTypeOf<T>),
                         MakeKernel<SampleOp<R, T, false>>);
    });
  });
  RegisterBinary<GammaSampleDerAlpha, float, double>(registry, "RandomGammaGrad");
}

}  // namespace weir
