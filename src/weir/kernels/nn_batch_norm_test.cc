// FusedBatchNormV3 and FusedBatchNormGradV3 against formulas in double
// written here, and the gradient against central differences of the
// forward kernel in both modes. Tolerances: 1e-5 relative for float (the
// normalized values are O(1)), 1e-12 for double; finite differences 1e-7
// with step 1e-4.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

// The attr is a float; the reference uses the same value.
constexpr double kEpsilon = 0.001f;

struct Statistics {
  std::vector<double> mean, variance;  // biased variance
};

Statistics BatchStatistics(const std::vector<double>& x, int64_t depth) {
  const int64_t rows = x.size() / depth;
  Statistics s{std::vector<double>(depth, 0), std::vector<double>(depth, 0)};
  for (size_t i = 0; i < x.size(); ++i) s.mean[i % depth] += x[i] / rows;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - s.mean[i % depth];
    s.variance[i % depth] += d * d / rows;
  }
  return s;
}

std::vector<double> Normalize(const std::vector<double>& x, const Statistics& s,
                              const std::vector<double>& scale, const std::vector<double>& offset) {
  const int64_t depth = scale.size();
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = i % depth;
    y[i] = (x[i] - s.mean[c]) / std::sqrt(s.variance[c] + kEpsilon) * scale[c] + offset[c];
  }
  return y;
}

AttrMap Attrs(DType dtype, bool training, float factor = 1) {
  return {{"T", dtype},
          {"U", dtype},
          {"epsilon", static_cast<float>(kEpsilon)},
          {"is_training", training},
          {"exponential_avg_factor", factor}};
}
AttrMap GradAttrs(DType dtype, bool training) {
  return {{"T", dtype},
          {"U", dtype},
          {"epsilon", static_cast<float>(kEpsilon)},
          {"is_training", training}};
}

struct Inputs {
  TensorShape shape;
  int64_t depth;
  std::vector<double> x, scale, offset, mean, variance;

  Inputs(TensorShape s, int seed) : shape(s), depth(s.dim_size(s.rank() - 1)) {
    x = RandomValues(shape.num_elements(), seed, -2, 3);
    scale = RandomValues(depth, seed + 1, 0.5, 2);
    offset = RandomValues(depth, seed + 2, -1, 1);
    mean = RandomValues(depth, seed + 3, -1, 1);
    variance = RandomValues(depth, seed + 4, 0.5, 2);
  }
  std::vector<Tensor> Tensors(DType dtype) const {
    const TensorShape vector({depth});
    return {MakeTensor(dtype, shape, x), MakeTensor(dtype, vector, scale),
            MakeTensor(dtype, vector, offset), MakeTensor(dtype, vector, mean),
            MakeTensor(dtype, vector, variance)};
  }
};

TEST(FusedBatchNormTest, TrainingMatchesFormulas) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    const double tolerance = dtype == DT_FLOAT ? 1e-5 : 1e-12;
    for (const TensorShape& shape : {TensorShape({2, 3, 3, 4}), TensorShape({100, 14, 14, 32}),
                                     TensorShape({1, 1, 1, 3}), TensorShape({2, 2, 3, 2, 5})}) {
      for (float factor : {1.0f, 0.3f}) {
        SCOPED_TRACE(StrCat(shape, " ", dtype, " factor ", factor));
        const Inputs in(shape, 1);
        AttrMap attrs = Attrs(dtype, true, factor);
        if (shape.rank() == 5) attrs["data_format"] = std::string("NDHWC");
        auto out = RunKernel("FusedBatchNormV3", attrs, in.Tensors(dtype));
        ASSERT_TRUE(out.ok()) << out.status();
        const Statistics s = BatchStatistics(ToDoubles(MakeTensor(dtype, shape, in.x)), in.depth);
        ExpectAllNear((*out)[0], Normalize(in.x, s, in.scale, in.offset), tolerance, "y");
        const int64_t rows = shape.num_elements() / in.depth;
        std::vector<double> running_mean(in.depth), running_variance(in.depth);
        for (int64_t c = 0; c < in.depth; ++c) {
          const double unbiased = s.variance[c] * rows / std::max<int64_t>(rows - 1, 1);
          running_mean[c] = (1 - factor) * in.mean[c] + factor * s.mean[c];
          running_variance[c] = (1 - factor) * in.variance[c] + factor * unbiased;
        }
        ExpectAllNear((*out)[1], running_mean, tolerance, "batch_mean");
        ExpectAllNear((*out)[2], running_variance, tolerance, "batch_variance");
        ExpectAllNear((*out)[3], s.mean, tolerance, "reserve_space_1");
        ExpectAllNear((*out)[4], s.variance, tolerance, "reserve_space_2");
        EXPECT_EQ((*out)[5].NumElements(), 0);
      }
    }
  }
}

TEST(FusedBatchNormTest, InferenceUsesTheGivenStatistics) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    const Inputs in(TensorShape({3, 4, 5, 6}), 2);
    auto out = RunKernel("FusedBatchNormV3", Attrs(dtype, false), in.Tensors(dtype));
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectAllNear((*out)[0], Normalize(in.x, {in.mean, in.variance}, in.scale, in.offset),
                  dtype == DT_FLOAT ? 1e-5 : 1e-12, "y");
    ExpectAllNear((*out)[1], ToDoubles(MakeTensor(dtype, TensorShape({6}), in.mean)), 0,
                  "batch_mean");
    ExpectAllNear((*out)[2], ToDoubles(MakeTensor(dtype, TensorShape({6}), in.variance)), 0,
                  "batch_variance");
  }
}

TEST(FusedBatchNormTest, EmptyRunningStatisticsAndEmptyBatch) {
  const Inputs in(TensorShape({2, 2, 2, 3}), 3);
  std::vector<Tensor> tensors = in.Tensors(DT_FLOAT);
  tensors[3] = Tensor(DT_FLOAT, TensorShape({0}));
  tensors[4] = Tensor(DT_FLOAT, TensorShape({0}));
  auto out = RunKernel("FusedBatchNormV3", Attrs(DT_FLOAT, true), tensors);
  ASSERT_TRUE(out.ok()) << out.status();
  // ...but the running statistics are needed when blending or inferring.
  EXPECT_TRUE(errors::IsInvalidArgument(
      RunKernel("FusedBatchNormV3", Attrs(DT_FLOAT, true, 0.5f), tensors).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(
      RunKernel("FusedBatchNormV3", Attrs(DT_FLOAT, false), tensors).status()));

  const Inputs empty(TensorShape({0, 4, 4, 3}), 4);
  out = RunKernel("FusedBatchNormV3", Attrs(DT_FLOAT, true), empty.Tensors(DT_FLOAT));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 4, 4, 3}));
  for (double v : ToDoubles((*out)[1])) EXPECT_TRUE(std::isnan(v));
}

// x_backprop, scale_backprop and offset_backprop by the formulas.
void ReferenceGrad(const Inputs& in, const std::vector<double>& dy, const Statistics& s,
                   bool training, std::vector<double>* dx, std::vector<double>* dscale,
                   std::vector<double>* doffset) {
  const int64_t depth = in.depth, rows = in.x.size() / depth;
  std::vector<double> sum_dy(depth, 0), sum_dy_xhat(depth, 0);
  for (size_t i = 0; i < dy.size(); ++i) {
    const int64_t c = i % depth;
    const double xhat = (in.x[i] - s.mean[c]) / std::sqrt(s.variance[c] + kEpsilon);
    sum_dy[c] += dy[i];
    sum_dy_xhat[c] += dy[i] * xhat;
  }
  *doffset = sum_dy;
  *dscale = sum_dy_xhat;
  dx->resize(dy.size());
  for (size_t i = 0; i < dy.size(); ++i) {
    const int64_t c = i % depth;
    const double inv = 1 / std::sqrt(s.variance[c] + kEpsilon);
    const double xhat = (in.x[i] - s.mean[c]) * inv;
    (*dx)[i] = training
                   ? in.scale[c] * inv * (dy[i] - sum_dy[c] / rows - xhat * sum_dy_xhat[c] / rows)
                   : in.scale[c] * inv * dy[i];
  }
}

TEST(FusedBatchNormGradTest, MatchesFormulasAndFiniteDifferences) {
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "inference");
    const Inputs in(TensorShape({2, 3, 2, 3}), 5);
    const std::vector<double> dy = RandomValues(in.x.size(), 9);
    const Statistics s =
        training ? BatchStatistics(in.x, in.depth) : Statistics{in.mean, in.variance};
    std::vector<double> dx, dscale, doffset;
    ReferenceGrad(in, dy, s, training, &dx, &dscale, &doffset);

    // The forward pass's reserve spaces feed the gradient.
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      const double tolerance = dtype == DT_FLOAT ? 1e-5 : 1e-12;
      auto forward = RunKernel("FusedBatchNormV3", Attrs(dtype, training), in.Tensors(dtype));
      ASSERT_TRUE(forward.ok()) << forward.status();
      auto grad = RunKernel("FusedBatchNormGradV3", GradAttrs(dtype, training),
                            {MakeTensor(dtype, in.shape, dy), in.Tensors(dtype)[0],
                             in.Tensors(dtype)[1], (*forward)[3], (*forward)[4], (*forward)[5]});
      ASSERT_TRUE(grad.ok()) << grad.status();
      ExpectAllNear((*grad)[0], dx, tolerance, "x_backprop", std::vector<double>(dx.size(), 10));
      ExpectAllNear((*grad)[1], dscale, tolerance, "scale_backprop",
                    std::vector<double>(dscale.size(), 10));
      ExpectAllNear((*grad)[2], doffset, tolerance, "offset_backprop",
                    std::vector<double>(doffset.size(), 10));
      EXPECT_EQ((*grad)[3].NumElements(), 0);
    }

    // d sum(y * dy) / d (x, scale, offset) through the forward kernel.
    auto loss = [&](const std::vector<double>& x, const std::vector<double>& scale,
                    const std::vector<double>& offset) {
      Inputs changed = in;
      changed.x = x, changed.scale = scale, changed.offset = offset;
      auto out =
          RunKernel("FusedBatchNormV3", Attrs(DT_DOUBLE, training), changed.Tensors(DT_DOUBLE));
      CHECK(out.ok()) << out.status();
      return Dot((*out)[0], dy);
    };
    const TensorShape vector({in.depth});
    auto grad =
        RunKernel("FusedBatchNormGradV3", GradAttrs(DT_DOUBLE, training),
                  {MakeTensor(DT_DOUBLE, in.shape, dy), MakeTensor(DT_DOUBLE, in.shape, in.x),
                   MakeTensor(DT_DOUBLE, vector, in.scale), MakeTensor(DT_DOUBLE, vector, s.mean),
                   MakeTensor(DT_DOUBLE, vector, s.variance), Tensor(DT_DOUBLE, TensorShape({0}))});
    ASSERT_TRUE(grad.ok()) << grad.status();
    ExpectAllNear(
        (*grad)[0],
        NumericGradient([&](const std::vector<double>& v) { return loss(v, in.scale, in.offset); },
                        in.x, 1e-4),
        1e-7, "x_backprop vs finite differences");
    ExpectAllNear(
        (*grad)[1],
        NumericGradient([&](const std::vector<double>& v) { return loss(in.x, v, in.offset); },
                        in.scale, 1e-4),
        1e-7, "scale_backprop vs finite differences");
    ExpectAllNear(
        (*grad)[2],
        NumericGradient([&](const std::vector<double>& v) { return loss(in.x, in.scale, v); },
                        in.offset, 1e-4),
        1e-7, "offset_backprop vs finite differences");
  }
}

TEST(FusedBatchNormTest, Errors) {
  const Inputs in(TensorShape({2, 2, 2, 3}), 6);
  std::vector<Tensor> tensors = in.Tensors(DT_FLOAT);
  tensors[1] = Tensor(DT_FLOAT, TensorShape({4}));
  auto out = RunKernel("FusedBatchNormV3", Attrs(DT_FLOAT, true), tensors);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  for (const char* part : {"FusedBatchNormV3", "scale", "[4]", "[2,2,2,3]"}) {
    EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
  }
  tensors = in.Tensors(DT_FLOAT);
  tensors[0] = Tensor(DT_FLOAT, TensorShape({4, 3}));
  out = RunKernel("FusedBatchNormV3", Attrs(DT_FLOAT, true), tensors);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  AttrMap nchw = Attrs(DT_FLOAT, true);
  nchw["data_format"] = std::string("NCHW");
  nchw["data_format"] = std::string("NCDHW");
  out = RunKernel("FusedBatchNormV3", nchw, in.Tensors(DT_FLOAT));
  EXPECT_TRUE(errors::IsUnimplemented(out.status())) << out.status();
  out = RunKernel("FusedBatchNormGradV3", GradAttrs(DT_FLOAT, true),
                  {Tensor(DT_FLOAT, TensorShape({2, 2, 2, 4})), in.Tensors(DT_FLOAT)[0],
                   in.Tensors(DT_FLOAT)[1], in.Tensors(DT_FLOAT)[3], in.Tensors(DT_FLOAT)[4],
                   Tensor(DT_FLOAT, TensorShape({0}))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("y_backprop"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace weir
