// The random family, on Philox4x32-10 (philox.h).
//
// Every kernel instance has a key, from its (seed, seed2) attrs or drawn at
// random when both are 0, and an atomic count of the stream positions it has
// used. Each Compute reserves fresh positions, so successive runs continue
// the sequence, and each output value is a function of (key, position) and
// its place in the output only: values are computed in units of a fixed
// number of consecutive outputs, unit u reading stream `first + u`, so the
// intra-op pool may split the work in any way and the numbers stay the same.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>

#include "weir/base/str_util.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/philox.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {

// A bijective 64-bit mixer (the finalizer of Steele, Lea and Flood's
// SplitMix64), so nearby seeds give unrelated keys.
static uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

PhiloxKey KeyFromSeeds(int64_t seed, int64_t seed2) {
  uint64_t key;
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    key = uint64_t{device()} << 32 | device();
  } else {
    key = Mix(Mix(static_cast<uint64_t>(seed)) ^ static_cast<uint64_t>(seed2));
  }
  return {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
}

namespace {

// Outputs per unit (one stream) for most distributions: one batch of words
// of the stream for 32-bit values.
constexpr int64_t kUnit = PhiloxStream::kBatchWords;

// The base of the random kernels: the key and the positions used so far.
class RandomKernel : public OpKernel {
 public:
  explicit RandomKernel(OpKernelConstruction* context) : OpKernel(context) {
    int64_t seed = 0, seed2 = 0;
    Status status = context->GetAttr("seed", &seed);
    status.Update(context->GetAttr("seed2", &seed2));
    context->SetStatus(status);
    key_ = KeyFromSeeds(seed, seed2);
  }

 protected:
  PhiloxKey key() const { return key_; }
  // The first of `count` positions that no other Compute of this kernel
  // uses; concurrent steps may call it.
  uint64_t ReservePositions(uint64_t count) {
    return next_position_.fetch_add(count, std::memory_order_relaxed);
  }

 private:
  PhiloxKey key_;
  std::atomic<uint64_t> next_position_{0};
};

// The dims held by `shape`, an int32 or int64 vector.
StatusOr<TensorShape> ShapeFromTensor(const std::string& op, const Tensor& shape) {
  if (shape.dims() != 1) {
    return errors::InvalidArgument(op, ": shape must be a vector but has shape ",
                                   shape.shape());
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(shape, op + ": shape"));
  for (int64_t dim : dims) {
    if (dim < 0) {
      return errors::InvalidArgument(op, ": shape [", StrJoin(dims, ","),
                                     "] has a negative dimension");
    }
  }
  StatusOr<TensorShape> result = TensorShape::FromDims(dims);
  if (!result.ok()) return result.status().WithContext(op);
  return result;
}

// 32-bit words per value: one for float, two for double.
template <typename T>
constexpr int kWords = sizeof(T) / 4;

// A value in [0, 1) from kWords<T> random words: the mantissa's worth of
// bits under the exponent of [1, 2), minus 1.
template <typename T>
T UnitInterval(const uint32_t* words) {
  if constexpr (std::is_same_v<T, float>) {
    const uint32_t bits = (words[0] >> 9) | 0x3F800000u;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value - 1.0f;
  } else {
    const uint64_t random = uint64_t{words[0]} | uint64_t{words[1]} << 32;
    const uint64_t bits = (random >> 12) | 0x3FF0000000000000ull;
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value - 1.0;
  }
}

// A unit type has kSize (values per unit), kCycles (the cost of one unit)
// and operator()(stream, T values[kSize]).
template <typename Unit>
int64_t UnitsFor(int64_t n) {
  return (n + Unit::kSize - 1) / Unit::kSize;
}

// Fills out[0, n): values [kSize * u, kSize * (u + 1)) come from stream
// first_position + u. Every unit is computed whole, the same way wherever
// the pool's split falls.
template <typename T, typename Unit>
void FillUnits(OpKernelContext* context, PhiloxKey key, uint64_t first_position, int64_t n,
               const Unit& unit, T* out) {
  constexpr int64_t kSize = Unit::kSize;
  context->device()->intra_op_pool()->ParallelFor(
      UnitsFor<Unit>(n), Unit::kCycles, [&](int64_t first, int64_t last) {
        T scratch[kSize];
        for (int64_t u = first; u < last; ++u) {
          PhiloxStream stream(key, first_position + static_cast<uint64_t>(u));
          const int64_t begin = u * kSize;
          const int64_t count = std::min(kSize, n - begin);
          if (count == kSize) {
            unit(stream, out + begin);
          } else {
            unit(stream, scratch);
            std::copy_n(scratch, count, out + begin);
          }
        }
      });
}

template <typename T>
struct UniformUnit {
  static constexpr int64_t kSize = kUnit;
  static constexpr int64_t kCycles = 4 * kSize;
  void operator()(PhiloxStream& stream, T* out) const {
    constexpr int kPerBatch = PhiloxStream::kBatchWords / kWords<T>;
    for (int batch = 0; batch < kWords<T>; ++batch) {
      const uint32_t* words = stream.NextBatch();
      for (int i = 0; i < kPerBatch; ++i) {
        out[batch * kPerBatch + i] = UnitInterval<T>(words + i * kWords<T>);
      }
    }
  }
};

// Uniform 16-bit floats in [0, 1), one word each: the format's mantissa
// bits (10 for half, 7 for bfloat16) under the exponent of [1, 2), minus 1
// (exact). Rounding a float uniform instead could give 1.
template <typename T>
struct NarrowUniformUnit {
  static constexpr int64_t kSize = kUnit;
  static constexpr int64_t kCycles = 4 * kSize;
  static constexpr int kMantissaBits = std::is_same_v<T, Eigen::half> ? 10 : 7;
  static constexpr uint16_t kOne = std::is_same_v<T, Eigen::half> ? 0x3C00 : 0x3F80;
  void operator()(PhiloxStream& stream, T* out) const {
    const uint32_t* words = stream.NextBatch();
    for (int64_t i = 0; i < kSize; ++i) {
      const auto bits = static_cast<uint16_t>((words[i] >> (32 - kMantissaBits)) | kOne);
      out[i] = T(static_cast<float>(std::bit_cast<T>(bits)) - 1.0f);
    }
  }
};

// Standard normals from one batch of the stream by the Box-Muller transform:
// each pair of uniforms gives a pair of normals. Eigen's fixed-size arrays
// compute the logs and sines in SIMD with no scalar remainder.
template <typename T>
constexpr int kNormalsPerBatch = PhiloxStream::kBatchWords / kWords<T>;

template <typename T>
void NormalBatch(PhiloxStream& stream, T* out) {
  constexpr int kPairs = kNormalsPerBatch<T> / 2;
  using Array = Eigen::Array<T, kPairs, 1>;
  const uint32_t* words = stream.NextBatch();
  Array u1, u2;
  for (int i = 0; i < kPairs; ++i) {
    u1[i] = T(1) - UnitInterval<T>(words + 2 * i * kWords<T>);  // (0, 1]: log is finite
    u2[i] = UnitInterval<T>(words + (2 * i + 1) * kWords<T>);
  }
  const Array radius = (T(-2) * u1.log()).sqrt();
  const Array angle = T(2 * M_PI) * u2;
  const Array x = radius * angle.cos();
  const Array y = radius * angle.sin();
  for (int i = 0; i < kPairs; ++i) {
    out[2 * i] = x[i];
    out[2 * i + 1] = y[i];
  }
}

template <typename T>
struct NormalUnit {
  static constexpr int64_t kSize = kUnit;
  static constexpr int64_t kCycles = 20 * kSize;
  void operator()(PhiloxStream& stream, T* out) const {
    for (int64_t i = 0; i < kSize; i += kNormalsPerBatch<T>) NormalBatch(stream, out + i);
  }
};

// Normals with magnitude under 2, by redrawing the others (about 4.6%).
// Units are larger than a batch so that the batch drawn for the last few
// values is a small part of the work.
template <typename T>
struct TruncatedNormalUnit {
  static constexpr int64_t kSize = 4 * kUnit;
  static constexpr int64_t kCycles = 22 * kSize;
  void operator()(PhiloxStream& stream, T* out) const {
    T batch[kNormalsPerBatch<T>];
    int64_t filled = 0;
    while (filled < kSize) {
      NormalBatch(stream, batch);
      for (int i = 0; i < kNormalsPerBatch<T> && filled < kSize; ++i) {
        if (std::abs(batch[i]) < T(2)) out[filled++] = batch[i];
      }
    }
  }
};

// Integers in [minval, minval + range), unbiased: Lemire's multiply-shift,
// redrawing the rare products that fall in the uneven remainder.
template <typename T>
struct UniformIntUnit {
  static constexpr int64_t kSize = kUnit;
  static constexpr int64_t kCycles = 8 * kSize;
  using Bits = std::make_unsigned_t<T>;
  using Wide = std::conditional_t<sizeof(T) == 4, uint64_t, unsigned __int128>;

  UniformIntUnit(T minval, T maxval)
      : low(static_cast<Bits>(minval)),
        range(static_cast<Bits>(maxval) - static_cast<Bits>(minval)),
        threshold(static_cast<Bits>(-range) % range) {}

  void operator()(PhiloxStream& stream, T* out) const {
    for (int64_t i = 0; i < kSize; ++i) {
      Wide product;
      do {
        Bits random;
        if constexpr (sizeof(T) == 4) {
          random = stream.NextUint32();
        } else {
          random = stream.NextUint64();
        }
        product = static_cast<Wide>(random) * range;
      } while (static_cast<Bits>(product) < threshold);
      out[i] = static_cast<T>(low + static_cast<Bits>(product >> (8 * sizeof(T))));
    }
  }

  Bits low, range, threshold;
};

// RandomUniform, RandomStandardNormal and TruncatedNormal.
template <typename T, typename Unit>
class ShapedRandomOp : public RandomKernel {
 public:
  using RandomKernel::RandomKernel;

  void Compute(OpKernelContext* context) override {
    StatusOr<TensorShape> shape = ShapeFromTensor(type_string(), context->input(0));
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    const uint64_t first = ReservePositions(UnitsFor<Unit>(n));
    FillUnits(context, key(), first, n, Unit(), out->data<T>());
  }
};

template <typename T>
class RandomUniformIntOp : public RandomKernel {
 public:
  using RandomKernel::RandomKernel;

  void Compute(OpKernelContext* context) override {
    const std::string& op = type_string();
    StatusOr<TensorShape> shape = ShapeFromTensor(op, context->input(0));
    OP_REQUIRES_OK(context, shape.status());
    const Tensor& minval = context->input(1);
    const Tensor& maxval = context->input(2);
    OP_REQUIRES(context, minval.dims() == 0 && maxval.dims() == 0,
                errors::InvalidArgument(op, ": minval and maxval must be scalars but have "
                                        "shapes ", minval.shape(), " and ", maxval.shape()));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    const T low = minval.scalar<T>(), high = maxval.scalar<T>();
    OP_REQUIRES(context, low < high,
                errors::InvalidArgument(op, ": need minval < maxval but got minval ", low,
                                        " and maxval ", high));
    const uint64_t first = ReservePositions(UnitsFor<UniformIntUnit<T>>(n));
    FillUnits(context, key(), first, n, UniformIntUnit<T>(low, high), out->data<T>());
  }
};

// An integer in [0, bound), unbiased (Lemire). REQUIRES: bound > 0.
uint64_t UniformBelow(PhiloxStream& stream, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  unsigned __int128 product;
  do {
    product = static_cast<unsigned __int128>(stream.NextUint64()) * bound;
  } while (static_cast<uint64_t>(product) < threshold);
  return static_cast<uint64_t>(product >> 64);
}

// A Fisher-Yates permutation of the rows (one stream per Compute, drawn in
// order), then a gather of the rows over the pool.
class RandomShuffleOp : public RandomKernel {
 public:
  using RandomKernel::RandomKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    if (input.dims() == 0 || input.dim_size(0) <= 1) {
      context->set_output(0, input);
      return;
    }
    const int64_t rows = input.dim_size(0);
    std::vector<int64_t> order(rows);
    std::iota(order.begin(), order.end(), int64_t{0});
    PhiloxStream stream(key(), ReservePositions(1));
    for (int64_t i = rows - 1; i > 0; --i) {
      std::swap(order[i], order[UniformBelow(stream, static_cast<uint64_t>(i) + 1)]);
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &out));
    const int64_t row_size = input.NumElements() / rows;
    if (row_size == 0) return;
    auto gather = [&]<typename E>(const E* src, E* dst) {
      context->device()->intra_op_pool()->ParallelFor(
          rows, row_size * static_cast<int64_t>(sizeof(E)), [&](int64_t first, int64_t last) {
            for (int64_t i = first; i < last; ++i) {
              std::copy_n(src + order[i] * row_size, row_size, dst + i * row_size);
            }
          });
    };
    switch (input.dtype()) {
      case DT_STRING:
        gather(input.data<std::string>(), out->data<std::string>());
        break;
      case DT_RESOURCE:
        gather(input.data<ResourceHandle>(), out->data<ResourceHandle>());
        break;
      case DT_VARIANT:
        gather(input.data<Variant>(), out->data<Variant>());
        break;
      default: {
        // Plain data: rows of bytes.
        const int64_t row_bytes = row_size * static_cast<int64_t>(DTypeSize(input.dtype()));
        const auto* src = static_cast<const char*>(input.raw_data());
        auto* dst = static_cast<char*>(out->raw_data());
        context->device()->intra_op_pool()->ParallelFor(
            rows, row_bytes, [&](int64_t first, int64_t last) {
              for (int64_t i = first; i < last; ++i) {
                std::memcpy(dst + i * row_bytes, src + order[i] * row_bytes, row_bytes);
              }
            });
      }
    }
  }
};

// Each row of logits is one stream; sample s of a row uses its s-th 64-bit
// draw, turned into a double u in [0, 1) and looked up in the row's
// cumulative distribution (exp(logit - max), in double).
template <typename T, typename Out>
class MultinomialOp : public RandomKernel {
 public:
  using RandomKernel::RandomKernel;

  void Compute(OpKernelContext* context) override {
    const std::string& op = type_string();
    const Tensor& logits = context->input(0);
    const Tensor& samples_tensor = context->input(1);
    OP_REQUIRES(context, logits.dims() == 2,
                errors::InvalidArgument(op, ": logits must be a matrix [batch, classes] but "
                                        "has shape ", logits.shape()));
    OP_REQUIRES(context, samples_tensor.dims() == 0,
                errors::InvalidArgument(op, ": num_samples must be a scalar but has shape ",
                                        samples_tensor.shape()));
    const int64_t num_samples = samples_tensor.scalar<int32_t>();
    OP_REQUIRES(context, num_samples >= 0,
                errors::InvalidArgument(op, ": num_samples must be non-negative but is ",
                                        num_samples));
    const int64_t batch = logits.dim_size(0), classes = logits.dim_size(1);
    OP_REQUIRES(context, classes > 0 && classes - 1 <= std::numeric_limits<Out>::max(),
                errors::InvalidArgument(op, ": logits of shape ", logits.shape(),
                                        " must have between 1 and ",
                                        std::numeric_limits<Out>::max(), " classes"));
    StatusOr<TensorShape> out_shape = CheckedShape(std::array<int64_t, 2>{batch, num_samples}, op);
    OP_REQUIRES_OK(context, out_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    if (out->NumElements() == 0) return;

    const uint64_t first = ReservePositions(batch);
    const T* all_logits = logits.data<T>();
    Out* samples = out->data<Out>();
    std::atomic<int64_t> bad_row{-1};
    const int64_t cost = 30 * classes + num_samples * (20 + 2 * std::bit_width(
                                                                 static_cast<uint64_t>(classes)));
    context->device()->intra_op_pool()->ParallelFor(
        batch, cost, [&](int64_t first_row, int64_t last_row) {
          std::vector<double> cdf(classes);
          for (int64_t b = first_row; b < last_row; ++b) {
            const T* row = all_logits + b * classes;
            double max = -std::numeric_limits<double>::infinity();
            for (int64_t j = 0; j < classes; ++j) {
              if (std::isfinite(static_cast<double>(row[j]))) {
                max = std::max(max, static_cast<double>(row[j]));
              }
            }
            if (max == -std::numeric_limits<double>::infinity()) {
              bad_row.store(b, std::memory_order_relaxed);
              continue;
            }
            // Classes with non-finite logits get no probability.
            double total = 0;
            int64_t last_drawable = 0;
            for (int64_t j = 0; j < classes; ++j) {
              const double logit = static_cast<double>(row[j]);
              if (std::isfinite(logit)) {
                const double p = std::exp(logit - max);
                if (p > 0) last_drawable = j;
                total += p;
              }
              cdf[j] = total;
            }
            PhiloxStream stream(key(), first + static_cast<uint64_t>(b));
            for (int64_t s = 0; s < num_samples; ++s) {
              uint32_t words[2] = {stream.NextUint32(), stream.NextUint32()};
              const double target = UnitInterval<double>(words) * total;
              int64_t j = std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin();
              // Rounding can make target reach the total: the last class.
              samples[b * num_samples + s] = static_cast<Out>(std::min(j, last_drawable));
            }
          }
        });
    const int64_t bad = bad_row.load();
    OP_REQUIRES(context, bad < 0,
                errors::InvalidArgument(op, ": row ", bad, " of logits of shape ",
                                        logits.shape(), " has no finite value"));
  }
};

}  // namespace

void RegisterRandomKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    auto shaped = [&](const char* op, KernelFactory factory) {
      registry->Register(KernelBuilder(op)
                             .TypeConstraint("dtype", kDTypeOf<T>)
                             .TypeConstraint("T", DT_INT32)
                             .TypeConstraint("T", DT_INT64),
                         std::move(factory));
    };
    shaped("RandomUniform", MakeKernel<ShapedRandomOp<T, UniformUnit<T>>>);
    shaped("RandomStandardNormal", MakeKernel<ShapedRandomOp<T, NormalUnit<T>>>);
    shaped("TruncatedNormal", MakeKernel<ShapedRandomOp<T, TruncatedNormalUnit<T>>>);
    ForEachType<int32_t, int64_t>([&]<typename Out>() {
      registry->Register(KernelBuilder("Multinomial")
                             .TypeConstraint("T", kDTypeOf<T>)
                             .TypeConstraint("output_dtype", kDTypeOf<Out>),
                         MakeKernel<MultinomialOp<T, Out>>);
    });
  });
  // 16-bit normals are float normals rounded (float16_kernels.cc), as
  // TensorFlow computes them; uniforms are drawn in the format itself.
  ForEachType<Eigen::half, Eigen::bfloat16>([&]<typename T>() {
    registry->Register(KernelBuilder("RandomUniform")
                           .TypeConstraint("dtype", kDTypeOf<T>)
                           .TypeConstraint("T", DT_INT32)
                           .TypeConstraint("T", DT_INT64),
                       MakeKernel<ShapedRandomOp<T, NarrowUniformUnit<T>>>);
  });
  ForEachType<int32_t, int64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("RandomUniformInt")
                           .TypeConstraint("Tout", kDTypeOf<T>)
                           .TypeConstraint("T", DT_INT32)
                           .TypeConstraint("T", DT_INT64),
                       MakeKernel<RandomUniformIntOp<T>>);
  });
  // Any dtype: the shuffle moves rows without reading them.
  registry->Register(KernelBuilder("RandomShuffle"), MakeKernel<RandomShuffleOp>);
}

}  // namespace weir
