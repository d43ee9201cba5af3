// The stateless random ops (ops/stateless_random_ops.cc) with TensorFlow's
// exact streams: the seed's key and counter come from one Philox block of
// the seed under a fixed key; output element i is drawn from block
// counter + i / k (k = values per block: 4 for 32-bit and smaller values,
// 2 for 64-bit ones, and for normals the Box-Muller pairs of those), with
// TensorFlow's conversions of random bits to values. Only Philox (alg 1)
// is implemented.
#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <numbers>

#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/philox.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

constexpr int kPhilox = 1;

// counter + n, as a 128-bit number over the four words (low word first).
PhiloxCounter Advance(PhiloxCounter c, uint64_t n) {
  const uint64_t low = (uint64_t{c[1]} << 32 | c[0]);
  const uint64_t sum = low + n;
  uint64_t high = (uint64_t{c[3]} << 32 | c[2]) + (sum < low ? 1 : 0);
  return {static_cast<uint32_t>(sum), static_cast<uint32_t>(sum >> 32), static_cast<uint32_t>(high),
          static_cast<uint32_t>(high >> 32)};
}

// Random bits to [0, 1): the bits fill the mantissa of a value in [1, 2).
float BitsToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}
double BitsToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{x0 & 0xfffffu} << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}
Eigen::half BitsToHalf(uint32_t x) {
  return Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>((15u << 10) | (x & 0x3ffu))) -
         Eigen::half(1.0f);
}
Eigen::bfloat16 BitsToBfloat16(uint32_t x) {
  return Eigen::numext::bit_cast<Eigen::bfloat16>(
             static_cast<uint16_t>((127u << 7) | (x & 0x7fu))) -
         Eigen::bfloat16(1.0f);
}

// The key and counter the seed stands for.
void KeyCounterFromSeed(uint64_t seed0, uint64_t seed1, uint64_t* key, uint64_t counter[2]) {
  const PhiloxCounter mix =
      PhiloxBlock({static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                   static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)},
                  {0x3ec8f720u, 0x02461e29u});
  *key = uint64_t{mix[1]} << 32 | mix[0];
  counter[0] = 0;
  counter[1] = uint64_t{mix[3]} << 32 | mix[2];
}

class GetKeyCounterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& seed = context->input(0);
    OP_REQUIRES(context, seed.dims() == 1 && seed.NumElements() == 2,
                errors::InvalidArgument(type_string(), " (node ", name(),
                                        "): seed must have shape [2], not ", seed.shape()));
    StatusOr<std::vector<int64_t>> values = IntTensorValues(seed, "seed");
    OP_REQUIRES_OK(context, values.status());
    Tensor *key, *counter;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({1}), &key));
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({2}), &counter));
    KeyCounterFromSeed(static_cast<uint64_t>((*values)[0]), static_cast<uint64_t>((*values)[1]),
                       key->data<uint64_t>(), counter->data<uint64_t>());
    if (context->num_outputs() > 2) {
      Tensor* alg;
      OP_REQUIRES_OK(context, context->allocate_output(2, TensorShape(), &alg));
      alg->scalar<int32_t>() = kPhilox;
    }
  }
};

class GetAlgOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    Tensor* alg;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &alg));
    alg->scalar<int32_t>() = kPhilox;
  }
};

enum class Distribution { kUniform, kNormal, kUniformInt, kFullInt };

// Values per Philox block (kPerBlock) and the conversion of one block to
// them.
template <typename T, Distribution kDist>
struct Sampler {
  static constexpr int kPerBlock = sizeof(T) == 8 ? 2 : 4;
  // For kUniformInt: lo and range (> 0) as unsigned.
  uint64_t lo = 0, range = 0;

  void operator()(const PhiloxCounter& b, T* out) const {
    if constexpr (kDist == Distribution::kUniform) {
      if constexpr (std::is_same_v<T, double>) {
        out[0] = BitsToDouble(b[0], b[1]), out[1] = BitsToDouble(b[2], b[3]);
      } else {
        for (int i = 0; i < 4; ++i) {
          if constexpr (std::is_same_v<T, float>) out[i] = BitsToFloat(b[i]);
          if constexpr (std::is_same_v<T, Eigen::half>) out[i] = BitsToHalf(b[i]);
          if constexpr (std::is_same_v<T, Eigen::bfloat16>) out[i] = BitsToBfloat16(b[i]);
        }
      }
    } else if constexpr (kDist == Distribution::kNormal) {
      // Box-Muller, as TensorFlow: u1 kept above 1e-7 so log(u1) is finite.
      if constexpr (std::is_same_v<T, double>) {
        double u1 = BitsToDouble(b[0], b[1]);
        if (u1 < 1e-7) u1 = 1e-7;
        const double v1 = 2.0 * std::numbers::pi * BitsToDouble(b[2], b[3]);
        const double u2 = std::sqrt(-2.0 * std::log(u1));
        out[0] = std::sin(v1) * u2, out[1] = std::cos(v1) * u2;
      } else {
        for (int i = 0; i < 4; i += 2) {
          float u1 = BitsToFloat(b[i]);
          if (u1 < 1e-7f) u1 = 1e-7f;
          // 2 pi u in double, rounded once to float (TensorFlow's rounding).
          const float v1 = static_cast<float>(2.0 * std::numbers::pi * BitsToFloat(b[i + 1]));
          const float u2 = std::sqrt(-2.0f * std::log(u1));
          out[i] = T(std::sin(v1) * u2), out[i + 1] = T(std::cos(v1) * u2);
        }
      }
    } else {
      uint64_t words[4];
      for (int i = 0; i < kPerBlock; ++i) {
        words[i] = sizeof(T) == 8 ? (uint64_t{b[2 * i + 1]} << 32 | b[2 * i]) : b[i];
      }
      for (int i = 0; i < kPerBlock; ++i) {
        if constexpr (kDist == Distribution::kUniformInt) {
          out[i] = static_cast<T>(lo + words[i] % range);  // wraps as TensorFlow's
        } else {
          out[i] = static_cast<T>(words[i]);
        }
      }
    }
  }
};

template <typename T, Distribution kDist>
class StatelessV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const std::string where =
        StrCat(type_string(), " (node ", name(), ", dtype ", kDTypeOf<T>, ")");
    const Tensor& shape_t = context->input(0);
    const Tensor& key = context->input(1);
    const Tensor& counter = context->input(2);
    const Tensor& alg = context->input(3);
    OP_REQUIRES(context, shape_t.dims() == 1,
                errors::InvalidArgument(where, ": shape must be a vector, not ", shape_t.shape()));
    StatusOr<std::vector<int64_t>> dims = IntTensorValues(shape_t, "shape");
    OP_REQUIRES_OK(context, dims.status());
    StatusOr<TensorShape> shape = CheckedShape(*dims, where);
    OP_REQUIRES_OK(context, shape.status());
    OP_REQUIRES(context, key.NumElements() == 1 && counter.NumElements() >= 2 && alg.dims() == 0,
                errors::InvalidArgument(where,
                                        ": key must have 1 element, counter 2 and alg "
                                        "be a scalar, not ",
                                        key.shape(), ", ", counter.shape(), ", ", alg.shape()));
    // 3 is TensorFlow's RNG_ALG_AUTO_SELECT, which is Philox on CPU.
    OP_REQUIRES(context, alg.scalar<int32_t>() == kPhilox || alg.scalar<int32_t>() == 3,
                errors::InvalidArgument(where, ": algorithm ", alg.scalar<int32_t>(),
                                        " is not supported (only 1, Philox, and 3, auto "
                                        "select)"));
    Sampler<T, kDist> sampler;
    if constexpr (kDist == Distribution::kUniformInt) {
      const Tensor& minval = context->input(4);
      const Tensor& maxval = context->input(5);
      OP_REQUIRES(context, minval.dims() == 0 && maxval.dims() == 0,
                  errors::InvalidArgument(where, ": minval and maxval must be scalars, not ",
                                          minval.shape(), " and ", maxval.shape()));
      const T lo = minval.scalar<T>(), hi = maxval.scalar<T>();
      OP_REQUIRES(context, lo < hi,
                  errors::InvalidArgument(where, ": need minval < maxval, got ", lo, " >= ", hi));
      using U = std::make_unsigned_t<T>;
      sampler.lo = static_cast<uint64_t>(static_cast<U>(lo));
      sampler.range =
          static_cast<uint64_t>(static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo)));
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    const uint64_t k = key.data<uint64_t>()[0];
    const uint64_t c0 = counter.data<uint64_t>()[0], c1 = counter.data<uint64_t>()[1];
    const PhiloxCounter start = {static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                                 static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)};
    const PhiloxKey philox_key = {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)};
    constexpr int kPer = Sampler<T, kDist>::kPerBlock;
    const int64_t blocks = (n + kPer - 1) / kPer;
    T* dst = out->data<T>();
    context->device()->intra_op_pool()->ParallelFor(blocks, 200, [&](int64_t first, int64_t last) {
      T values[4];
      for (int64_t b = first; b < last; ++b) {
        sampler(PhiloxBlock(Advance(start, static_cast<uint64_t>(b)), philox_key), values);
        const int64_t base = b * kPer;
        for (int i = 0; i < kPer && base + i < n; ++i) dst[base + i] = values[i];
      }
    });
  }
};

}  // namespace

void RegisterStatelessRandomKernels(KernelRegistry* registry) {
  for (const char* op : {"StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"}) {
    registry->Register(KernelBuilder(op), MakeKernel<GetKeyCounterOp>);
  }
  registry->Register(KernelBuilder("StatelessRandomGetAlg"), MakeKernel<GetAlgOp>);
  ForEachType<float, double, Eigen::half, Eigen::bfloat16>([&]<typename T>() {
    registry->Register(
        KernelBuilder("StatelessRandomUniformV2").TypeConstraint("dtype", kDTypeOf<T>),
        MakeKernel<StatelessV2Op<T, Distribution::kUniform>>);
    registry->Register(
        KernelBuilder("StatelessRandomNormalV2").TypeConstraint("dtype", kDTypeOf<T>),
        MakeKernel<StatelessV2Op<T, Distribution::kNormal>>);
  });
  ForEachType<int32_t, int64_t, uint32_t, uint64_t>([&]<typename T>() {
    registry->Register(
        KernelBuilder("StatelessRandomUniformIntV2").TypeConstraint("dtype", kDTypeOf<T>),
        MakeKernel<StatelessV2Op<T, Distribution::kUniformInt>>);
    registry->Register(
        KernelBuilder("StatelessRandomUniformFullIntV2").TypeConstraint("dtype", kDTypeOf<T>),
        MakeKernel<StatelessV2Op<T, Distribution::kFullInt>>);
  });
}

}  // namespace weir
