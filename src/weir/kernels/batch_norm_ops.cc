// FusedBatchNormV3 and FusedBatchNormGradV3 on channels-last data (NHWC,
// NDHWC), viewed as [rows, channels]; NCHW nodes transpose their images
// around that (image_layout.h). Per-channel statistics are sums over
// fixed row blocks accumulated in double (channel_sums.h): deterministic,
// and the variance is a second pass over x - mean rather than
// E[x^2] - E[x]^2, which loses everything when the mean is large.
//
// The reserve spaces follow TensorFlow's CPU kernels: reserve_space_1 and
// _2 hold the mean and (biased) variance that normalized x, which the
// gradient reads back; reserve_space_3, _4 and _5 are empty.
#include <cmath>
#include <limits>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/channel_sums.h"
#include "weir/kernels/image_layout.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

class BatchNormBase : public OpKernel {
 public:
  explicit BatchNormBase(OpKernelConstruction* context) : OpKernel(context) {
    float epsilon = 0;
    Status status = context->GetAttr("epsilon", &epsilon);
    status.Update(context->GetAttr("is_training", &is_training_));
    status.Update(context->GetAttr("data_format", &data_format_));
    if (data_format_ == "NCHW") {
      nchw_ = true;
      data_format_ = "NHWC";  // what the loops see
    }
    if (status.ok() && data_format_ != "NHWC" && data_format_ != "NDHWC") {
      status = errors::Unimplemented(context->node().op, ": data_format ", data_format_,
                                     " is not supported on CPU; use NHWC, NCHW or NDHWC");
    }
    epsilon_ = epsilon;
    context->SetStatus(status);
  }

 protected:
  // x must have rank 4 (NHWC) or 5 (NDHWC); returns its channel count.
  Status CheckInput(const char* name, const Tensor& x) const {
    const int rank = static_cast<int>(data_format_.size());
    if (x.dims() != rank) {
      return errors::InvalidArgument(type_string(), ": ", name, " ", x.shape(), " must have rank ",
                                     rank, " for data_format ", data_format_, " (dtype ", x.dtype(),
                                     ")");
    }
    return Status::OK();
  }

  // `v` must be a vector of `depth` entries.
  Status CheckVector(const char* name, const Tensor& v, const Tensor& x) const {
    const int64_t depth = x.dim_size(x.dims() - 1);
    if (v.dims() != 1 || v.dim_size(0) != depth) {
      return errors::InvalidArgument(type_string(), ": ", name, " ", v.shape(),
                                     " must be a vector with one entry per channel of x ",
                                     x.shape(), " (", depth, ")");
    }
    return Status::OK();
  }

  // Image input `index` in NHWC (a copy for NCHW nodes).
  StatusOr<Tensor> ImageIn(OpKernelContext* context, int index) const {
    StatusOr<Tensor> nhwc = ImageAsNhwc(context, nchw_, context->input(index));
    if (!nhwc.ok()) return nhwc.status().WithContext(StrCat(type_string(), " (data_format NCHW)"));
    return nhwc;
  }

  double epsilon_ = 0;
  bool is_training_ = true;
  bool nchw_ = false;  // the node's images are NCHW
  std::string data_format_;
};

template <typename T, typename U>
class FusedBatchNormOp : public BatchNormBase {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* context) : BatchNormBase(context) {
    float factor = 1;
    context->SetStatus(context->GetAttr("exponential_avg_factor", &factor));
    factor_ = factor;
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<Tensor> x_nhwc = ImageIn(context, 0);
    OP_REQUIRES_OK(context, x_nhwc.status());
    const Tensor& x = *x_nhwc;
    OP_REQUIRES_OK(context, CheckInput("x", x));
    OP_REQUIRES_OK(context, CheckVector("scale", context->input(1), x));
    OP_REQUIRES_OK(context, CheckVector("offset", context->input(2), x));
    // In training with factor 1 the running statistics are unused and may
    // be empty.
    const bool use_running = !is_training_ || factor_ != 1;
    for (int i : {3, 4}) {
      if (!use_running && context->input(i).NumElements() == 0) continue;
      OP_REQUIRES_OK(context, CheckVector(i == 3 ? "mean" : "variance", context->input(i), x));
    }
    const int64_t depth = x.dim_size(x.dims() - 1);
    const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
    Tensor* y;
    NhwcImageOutput y_out(nchw_, 0);
    OP_REQUIRES_OK(context, y_out.Allocate(context, x.dtype(), x.shape(), &y));
    Tensor* stats[4];
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(context, context->allocate_output(i + 1, TensorShape({depth}), &stats[i]));
    }
    if (num_outputs() > 5) {  // FusedBatchNormV3's reserve_space_3
      Tensor* reserve_3;
      OP_REQUIRES_OK(context, context->allocate_output(5, TensorShape({0}), &reserve_3));
    }

    ThreadPool* pool = context->device()->intra_op_pool();
    const T* in = x.data<T>();
    const U* scale = context->input(1).data<U>();
    const U* offset = context->input(2).data<U>();
    // The mean and biased variance that normalize x.
    std::vector<double> mean(depth), variance(depth);
    if (!is_training_) {
      std::copy_n(context->input(3).data<U>(), depth, mean.begin());
      std::copy_n(context->input(4).data<U>(), depth, variance.begin());
    } else if (rows == 0) {
      // No batch, no statistics (TensorFlow's answer too).
      std::fill(mean.begin(), mean.end(), std::numeric_limits<double>::quiet_NaN());
      std::fill(variance.begin(), variance.end(), std::numeric_limits<double>::quiet_NaN());
    } else {
      SumRowBlocks<double>(
          pool, rows, depth, 1,
          [&](int64_t begin, int64_t end, double* sum) {
            for (int64_t r = begin; r < end; ++r) {
              const T* v = in + r * depth;
              for (int64_t c = 0; c < depth; ++c) sum[c] += v[c];
            }
          },
          mean.data());
      for (double& m : mean) m /= rows;
      SumRowBlocks<double>(
          pool, rows, depth, 1,
          [&](int64_t begin, int64_t end, double* sum) {
            for (int64_t r = begin; r < end; ++r) {
              const T* v = in + r * depth;
              for (int64_t c = 0; c < depth; ++c) {
                const double centered = v[c] - mean[c];
                sum[c] += centered * centered;
              }
            }
          },
          variance.data());
      for (double& v : variance) v /= rows;
    }

    // y = (x - mean) * a + offset per channel, centering first so a large
    // mean costs no precision.
    std::vector<T> center(depth), a(depth), b(depth);
    for (int64_t c = 0; c < depth; ++c) {
      center[c] = static_cast<T>(mean[c]);
      a[c] = static_cast<T>(scale[c] / std::sqrt(variance[c] + epsilon_));
      b[c] = static_cast<T>(offset[c]);
    }
    T* out = y->data<T>();
    pool->ParallelFor(rows, depth * 2, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const T* v = in + r * depth;
        T* o = out + r * depth;
        for (int64_t c = 0; c < depth; ++c) o[c] = (v[c] - center[c]) * a[c] + b[c];
      }
    });

    U* batch_mean = stats[0]->data<U>();
    U* batch_variance = stats[1]->data<U>();
    for (int64_t c = 0; c < depth; ++c) {
      double m = mean[c], v = variance[c];
      if (is_training_) {
        // The running variance is the unbiased estimate.
        v *= static_cast<double>(rows) / std::max<int64_t>(rows - 1, 1);
        if (factor_ != 1) {
          m = (1 - factor_) * context->input(3).data<U>()[c] + factor_ * m;
          v = (1 - factor_) * context->input(4).data<U>()[c] + factor_ * v;
        }
      }
      batch_mean[c] = static_cast<U>(m);
      batch_variance[c] = static_cast<U>(v);
      stats[2]->data<U>()[c] = static_cast<U>(mean[c]);
      stats[3]->data<U>()[c] = static_cast<U>(variance[c]);
    }
    OP_REQUIRES_OK(context, y_out.Finish(context));
  }

 private:
  double factor_ = 1;
};

template <typename T, typename U>
class FusedBatchNormGradOp : public BatchNormBase {
 public:
  using BatchNormBase::BatchNormBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    OP_REQUIRES(context, context->input(0).shape() == context->input(1).shape(),
                errors::InvalidArgument(type_string(), ": y_backprop ", context->input(0).shape(),
                                        " and x ", context->input(1).shape(),
                                        " must have the same shape"));
    StatusOr<Tensor> dy_nhwc = ImageIn(context, 0);
    OP_REQUIRES_OK(context, dy_nhwc.status());
    StatusOr<Tensor> x_nhwc = ImageIn(context, 1);
    OP_REQUIRES_OK(context, x_nhwc.status());
    const Tensor& dy = *dy_nhwc;
    const Tensor& x = *x_nhwc;
    OP_REQUIRES_OK(context, CheckInput("x", x));
    OP_REQUIRES(context, dy.shape() == x.shape(),
                errors::InvalidArgument(type_string(), ": y_backprop ", dy.shape(), " and x ",
                                        x.shape(), " must have the same shape"));
    OP_REQUIRES_OK(context, CheckVector("scale", context->input(2), x));
    OP_REQUIRES_OK(context, CheckVector("reserve_space_1", context->input(3), x));
    OP_REQUIRES_OK(context, CheckVector("reserve_space_2", context->input(4), x));
    const int64_t depth = x.dim_size(x.dims() - 1);
    const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
    Tensor *dx, *dscale, *doffset, *reserve_4, *reserve_5;
    NhwcImageOutput dx_out(nchw_, 0);
    OP_REQUIRES_OK(context, dx_out.Allocate(context, x.dtype(), x.shape(), &dx));
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({depth}), &dscale));
    OP_REQUIRES_OK(context, context->allocate_output(2, TensorShape({depth}), &doffset));
    OP_REQUIRES_OK(context, context->allocate_output(3, TensorShape({0}), &reserve_4));
    OP_REQUIRES_OK(context, context->allocate_output(4, TensorShape({0}), &reserve_5));

    ThreadPool* pool = context->device()->intra_op_pool();
    const T* g = dy.data<T>();
    const T* in = x.data<T>();
    const U* scale = context->input(2).data<U>();
    const U* mean = context->input(3).data<U>();
    const U* variance = context->input(4).data<U>();
    // sums[c] = sum(dy), sums[depth + c] = sum(dy * (x - mean)).
    std::vector<double> sums(2 * depth);
    SumRowBlocks<double>(
        pool, rows, depth, 2,
        [&](int64_t begin, int64_t end, double* acc) {
          for (int64_t r = begin; r < end; ++r) {
            const T* gr = g + r * depth;
            const T* xr = in + r * depth;
            for (int64_t c = 0; c < depth; ++c) {
              acc[c] += gr[c];
              acc[depth + c] += static_cast<double>(gr[c]) * (xr[c] - mean[c]);
            }
          }
        },
        sums.data());

    // dx = a * dy + b * (x - mean) + k per channel. In training the mean and
    // variance depend on x too: dx = scale * inv * (dy - mean(dy) -
    // (x - mean) * inv^2 * mean(dy * (x - mean))), inv = 1 / sqrt(var + eps).
    std::vector<T> a(depth), b(depth), k(depth), center(depth);
    for (int64_t c = 0; c < depth; ++c) {
      const double inv = 1 / std::sqrt(static_cast<double>(variance[c]) + epsilon_);
      dscale->data<U>()[c] = static_cast<U>(sums[depth + c] * inv);
      doffset->data<U>()[c] = static_cast<U>(sums[c]);
      center[c] = static_cast<T>(mean[c]);
      a[c] = static_cast<T>(scale[c] * inv);
      const bool batch_statistics = is_training_ && rows > 0;
      b[c] = batch_statistics ? static_cast<T>(-scale[c] * inv * inv * inv * sums[depth + c] / rows)
                              : T(0);
      k[c] = batch_statistics ? static_cast<T>(-scale[c] * inv * sums[c] / rows) : T(0);
    }
    T* out = dx->data<T>();
    pool->ParallelFor(rows, depth * 3, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const T* gr = g + r * depth;
        const T* xr = in + r * depth;
        T* o = out + r * depth;
        for (int64_t c = 0; c < depth; ++c) {
          o[c] = a[c] * gr[c] + b[c] * (xr[c] - center[c]) + k[c];
        }
      }
    });
    OP_REQUIRES_OK(context, dx_out.Finish(context));
  }
};

}  // namespace

void RegisterBatchNormKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("FusedBatchNormV3")
                           .TypeConstraint("T", kDTypeOf<T>)
                           .TypeConstraint("U", kDTypeOf<T>),
                       MakeKernel<FusedBatchNormOp<T, T>>);
    if constexpr (std::is_same_v<T, float>) {
      // The older forms (FusedBatchNorm: T only; V2: T and U), float only.
      registry->Register(KernelBuilder("FusedBatchNorm").TypeConstraint("T", DT_FLOAT),
                         MakeKernel<FusedBatchNormOp<float, float>>);
      registry->Register(KernelBuilder("FusedBatchNormV2")
                             .TypeConstraint("T", DT_FLOAT)
                             .TypeConstraint("U", DT_FLOAT),
                         MakeKernel<FusedBatchNormOp<float, float>>);
    }
    registry->Register(KernelBuilder("FusedBatchNormGradV3")
                           .TypeConstraint("T", kDTypeOf<T>)
                           .TypeConstraint("U", kDTypeOf<T>),
                       MakeKernel<FusedBatchNormGradOp<T, T>>);
  });
}

}  // namespace weir
