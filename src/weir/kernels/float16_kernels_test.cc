// float16 and bfloat16 kernels (float16_kernels.cc): each op's 16-bit result
// is its float kernel's result on the widened inputs, rounded once (checked
// bit for bit against the float kernel and Cast); reductions and products
// accumulate in float (sums a 16-bit accumulator could not reach); float
// scale/mean stay float in FusedBatchNormV3; errors name the node and the
// 16-bit dtype and the shapes.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

// Random values of `dtype` (DT_HALF or DT_BFLOAT16) in [lo, hi).
Tensor Random(DType dtype, const TensorShape& shape, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (dtype == DT_HALF) t.data<Eigen::half>()[i] = Eigen::half(dist(rng));
    else t.data<Eigen::bfloat16>()[i] = Eigen::bfloat16(dist(rng));
  }
  return t;
}

Tensor Filled(DType dtype, const TensorShape& shape, float value) {
  return Random(dtype, shape, value, value, 0);
}

Tensor Cast(const Tensor& x, DType dst) {
  StatusOr<std::vector<Tensor>> out =
      RunKernel("Cast", {{"SrcT", x.dtype()}, {"DstT", dst}, {"Truncate", false}}, {x});
  CHECK(out.ok()) << out.status();
  return (*out)[0];
}

// The op run on 16-bit inputs must give the float kernel's outputs on the
// widened inputs, rounded to 16 bits: the same bits (NaNs compared as NaN).
void ExpectComputedInFloat(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs,
                           DType dtype, const std::vector<std::string>& narrow_attrs = {"T"}) {
  AttrMap narrow = attrs, wide = attrs;
  for (const std::string& attr : narrow_attrs) {
    narrow[attr] = dtype;
    wide[attr] = DT_FLOAT;
  }
  std::vector<Tensor> widened;
  for (const Tensor& in : inputs) widened.push_back(in.dtype() == dtype ? Cast(in, DT_FLOAT) : in);
  StatusOr<std::vector<Tensor>> got = RunKernel(op, narrow, inputs);
  ASSERT_TRUE(got.ok()) << op << " " << dtype << ": " << got.status();
  StatusOr<std::vector<Tensor>> want = RunKernel(op, wide, widened);
  ASSERT_TRUE(want.ok()) << op << ": " << want.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    Tensor expected = (*want)[i].dtype() == DT_FLOAT && (*got)[i].dtype() == dtype
                          ? Cast((*want)[i], dtype)
                          : (*want)[i];
    ASSERT_EQ((*got)[i].dtype(), expected.dtype()) << op << " output " << i;
    ASSERT_EQ((*got)[i].shape(), expected.shape()) << op << " output " << i;
    std::vector<double> a = ToDoubles((*got)[i]), b = ToDoubles(expected);
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isnan(a[k]) && std::isnan(b[k])) continue;
      ASSERT_EQ(a[k], b[k]) << op << " " << dtype << " output " << i << " element " << k;
    }
  }
}

constexpr DType kNarrowTypes[] = {DT_HALF, DT_BFLOAT16};

TEST(Float16KernelsTest, ElementwiseBinaryWithBroadcasting) {
  for (DType dtype : kNarrowTypes) {
    const Tensor x = Random(dtype, TensorShape({4, 5}), -3, 3, 1);
    const Tensor y = Random(dtype, TensorShape({5}), 0.5, 4, 2);
    const Tensor s = Random(dtype, TensorShape({}), 1, 2, 3);
    for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod",
                           "Maximum", "Minimum", "Pow", "SquaredDifference", "Less", "LessEqual",
                           "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
      ExpectComputedInFloat(op, {}, {x, y}, dtype);
      ExpectComputedInFloat(op, {}, {s, x}, dtype);
      ExpectComputedInFloat(op, {}, {x, x}, dtype);
    }
  }
}

TEST(Float16KernelsTest, ElementwiseUnaryAndActivationGradients) {
  for (DType dtype : kNarrowTypes) {
    const Tensor x = Random(dtype, TensorShape({3, 7}), -4, 4, 4);
    const Tensor positive = Random(dtype, TensorShape({3, 7}), 0.1, 4, 5);
    const Tensor g = Random(dtype, TensorShape({3, 7}), -1, 1, 6);
    for (const char* op :
         {"Neg",   "Abs",      "Sign",  "Square", "Relu",  "Relu6",   "Exp",     "Expm1",
          "Floor", "Ceil",     "Round", "Sin",    "Cos",   "Tanh",    "Sigmoid", "Elu",
          "Selu",  "Softplus", "Erf",   "IsNan",  "IsInf", "IsFinite"}) {
      ExpectComputedInFloat(op, {}, {x}, dtype);
    }
    for (const char* op : {"Log", "Log1p", "Sqrt", "Rsqrt", "Reciprocal"}) {
      ExpectComputedInFloat(op, {}, {positive}, dtype);
    }
    for (const char* op : {"ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad",
                           "SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad"}) {
      ExpectComputedInFloat(op, {}, {g, positive}, dtype);
    }
  }
}

TEST(Float16KernelsTest, LargeElementwiseOpsComputedInChunksGiveTheSameBits) {
  // Above 8192 elements of one shape the kernels convert and compute in
  // cache-sized chunks on the pool; a ragged last chunk too.
  for (DType dtype : kNarrowTypes) {
    const TensorShape shape({3, 8192 + 7});
    const Tensor x = Random(dtype, shape, -4, 4, 30);
    const Tensor y = Random(dtype, shape, 0.5, 4, 31);
    for (const char* op : {"AddV2", "Mul", "RealDiv", "Maximum", "SquaredDifference", "Less",
                           "Equal", "ReluGrad", "TanhGrad"}) {
      ExpectComputedInFloat(op, {}, {x, y}, dtype);
    }
    for (const char* op : {"Relu", "Exp", "Tanh", "Sigmoid", "IsFinite", "Round"}) {
      ExpectComputedInFloat(op, {}, {x}, dtype);
    }
    ExpectComputedInFloat("AddN", {{"N", 3}}, {x, y, x}, dtype);
    // Broadcasting takes the whole-tensor path.
    ExpectComputedInFloat("AddV2", {}, {x, Random(dtype, TensorShape({8192 + 7}), -1, 1, 32)},
                          dtype);
  }
}

TEST(Float16KernelsTest, LargeRowwiseOpsComputedInChunksGiveTheSameBits) {
  // Softmax-like and pooling ops split by rows of dim 0 above 8192
  // elements: one row per chunk, several rows per chunk, a ragged last.
  for (DType dtype : kNarrowTypes) {
    for (const TensorShape& shape : {TensorShape({5, 9000}), TensorShape({37, 1000})}) {
      const Tensor logits = Random(dtype, shape, -5, 5, 40);
      const Tensor labels = Random(dtype, shape, 0, 1, 41);
      ExpectComputedInFloat("Softmax", {}, {logits}, dtype);
      ExpectComputedInFloat("LogSoftmax", {}, {logits}, dtype);
      ExpectComputedInFloat("SoftmaxCrossEntropyWithLogits", {}, {logits, labels}, dtype);
    }
    const AttrMap pool = {{"ksize", std::vector<int64_t>{1, 3, 3, 1}},
                          {"strides", std::vector<int64_t>{1, 2, 2, 1}},
                          {"padding", "SAME"},
                          {"data_format", "NHWC"}};
    const Tensor images = Random(dtype, TensorShape({9, 20, 20, 8}), -1, 1, 42);
    ExpectComputedInFloat("MaxPool", pool, {images}, dtype);
    ExpectComputedInFloat("AvgPool", pool, {images}, dtype);
  }
}

TEST(Float16KernelsTest, HalfOverflowsToInfinityAsIeeeSays) {
  // 300 * 300 = 90000 is above half's largest finite value 65504.
  StatusOr<std::vector<Tensor>> out =
      RunKernel("Mul", {{"T", DT_HALF}},
                {Filled(DT_HALF, TensorShape({2}), 300), Filled(DT_HALF, TensorShape({2}), 300)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isinf(ToDoubles((*out)[0])[0]));
  out = RunKernel("IsFinite", {{"T", DT_HALF}}, {(*out)[0]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{0, 0}));
}

TEST(Float16KernelsTest, CastKeepsHalfSubnormalsUnderFlushedDenormals) {
  // Cast flushes float denormals; half subnormals are normal floats and
  // must survive both directions (the vector conversions run there too).
  Tensor tiny(DT_HALF, TensorShape({20}));
  for (int i = 0; i < 20; ++i) {
    tiny.data<Eigen::half>()[i] = std::bit_cast<Eigen::half>(static_cast<uint16_t>(i + 1));
  }
  const Tensor wide = Cast(tiny, DT_FLOAT);
  EXPECT_EQ(wide.data<float>()[0], std::ldexp(1.0f, -24));
  EXPECT_EQ(wide.data<float>()[19], 20 * std::ldexp(1.0f, -24));
  const Tensor back = Cast(wide, DT_HALF);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(std::bit_cast<uint16_t>(back.data<Eigen::half>()[i]), i + 1) << i;
  }
}

TEST(Float16KernelsTest, ReductionsAccumulateInFloat) {
  // A half accumulator stops at 2048 (2048 + 1 rounds back to 2048).
  const Tensor ones = Filled(DT_HALF, TensorShape({2, 3000}), 1);
  Tensor axis(DT_INT32, TensorShape({}));
  axis.data<int32_t>()[0] = 1;
  StatusOr<std::vector<Tensor>> sum =
      RunKernel("Sum", {{"T", DT_HALF}, {"Tidx", DT_INT32}, {"keep_dims", false}}, {ones, axis});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ((*sum)[0].dtype(), DT_HALF);
  EXPECT_EQ(ToDoubles((*sum)[0]), (std::vector<double>{3000, 3000}));
  StatusOr<std::vector<Tensor>> mean =
      RunKernel("Mean", {{"T", DT_HALF}, {"Tidx", DT_INT32}, {"keep_dims", true}}, {ones, axis});
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ((*mean)[0].shape(), TensorShape({2, 1}));
  EXPECT_EQ(ToDoubles((*mean)[0]), (std::vector<double>{1, 1}));

  for (DType dtype : kNarrowTypes) {
    const Tensor x = Random(dtype, TensorShape({6, 9}), -2, 2, 7);
    for (const char* op : {"Sum", "Mean", "Prod", "Max", "Min"}) {
      ExpectComputedInFloat(op, {{"Tidx", DT_INT32}, {"keep_dims", false}}, {x, axis}, dtype);
    }
    for (const char* op : {"ArgMax", "ArgMin"}) {
      ExpectComputedInFloat(op, {{"Tidx", DT_INT32}, {"output_type", DT_INT64}}, {x, axis}, dtype);
    }
    std::vector<Tensor> addends = {x, Random(dtype, TensorShape({6, 9}), -2, 2, 8),
                                   Random(dtype, TensorShape({6, 9}), -2, 2, 9)};
    ExpectComputedInFloat("AddN", {{"N", 3}}, addends, dtype);
    ExpectComputedInFloat("L2Loss", {}, {x}, dtype);
  }
}

TEST(Float16KernelsTest, MatMulAccumulatesInFloat) {
  StatusOr<std::vector<Tensor>> out = RunKernel(
      "MatMul", {{"T", DT_HALF}, {"transpose_a", false}, {"transpose_b", false}},
      {Filled(DT_HALF, TensorShape({2, 3000}), 1), Filled(DT_HALF, TensorShape({3000, 2}), 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{3000, 3000, 3000, 3000}));

  const Tensor a = Random(DT_HALF, TensorShape({5, 8}), -1, 1, 10);
  const Tensor b = Random(DT_HALF, TensorShape({5, 8}), -1, 1, 11);
  ExpectComputedInFloat("MatMul", {{"transpose_a", false}, {"transpose_b", true}}, {a, b}, DT_HALF);
  ExpectComputedInFloat("BatchMatMulV2", {{"adj_x", true}, {"adj_y", false}},
                        {Random(DT_HALF, TensorShape({2, 3, 4}), -1, 1, 12),
                         Random(DT_HALF, TensorShape({3, 5}), -1, 1, 13)},
                        DT_HALF);
  // bfloat16 MatMul keeps its oneDNN kernel (not computed through this
  // file's kernels), so it is checked by matmul_op_test.
}

TEST(Float16KernelsTest, DenseAndConvolutionLayers) {
  for (DType dtype : kNarrowTypes) {
    const Tensor logits = Random(dtype, TensorShape({4, 6}), -3, 3, 14);
    const Tensor bias = Random(dtype, TensorShape({6}), -1, 1, 15);
    const Tensor labels = Random(dtype, TensorShape({4, 6}), 0, 1, 16);
    ExpectComputedInFloat("BiasAdd", {{"data_format", "NHWC"}}, {logits, bias}, dtype);
    ExpectComputedInFloat("BiasAddGrad", {{"data_format", "NHWC"}}, {logits}, dtype);
    ExpectComputedInFloat("Softmax", {}, {logits}, dtype);
    ExpectComputedInFloat("LogSoftmax", {}, {logits}, dtype);
    ExpectComputedInFloat("SoftmaxCrossEntropyWithLogits", {}, {logits, labels}, dtype);
    Tensor sparse(DT_INT64, TensorShape({4}));
    for (int i = 0; i < 4; ++i) sparse.data<int64_t>()[i] = i + 1;
    ExpectComputedInFloat("SparseSoftmaxCrossEntropyWithLogits", {{"Tlabels", DT_INT64}},
                          {logits, sparse}, dtype);

    const Tensor image = Random(dtype, TensorShape({2, 6, 6, 3}), -1, 1, 17);
    const AttrMap pool = {{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
                          {"strides", std::vector<int64_t>{1, 2, 2, 1}},
                          {"padding", "VALID"},
                          {"data_format", "NHWC"}};
    ExpectComputedInFloat("MaxPool", pool, {image}, dtype);
    ExpectComputedInFloat("AvgPool", pool, {image}, dtype);
    const Tensor pooled_grad = Random(dtype, TensorShape({2, 3, 3, 3}), -1, 1, 18);
    StatusOr<std::vector<Tensor>> max_pooled = RunKernel("MaxPool",
                                                         [&] {
                                                           AttrMap attrs = pool;
                                                           attrs["T"] = dtype;
                                                           return attrs;
                                                         }(),
                                                         {image});
    ASSERT_TRUE(max_pooled.ok()) << max_pooled.status();
    ExpectComputedInFloat("MaxPoolGrad", pool, {image, (*max_pooled)[0], pooled_grad}, dtype);
    Tensor input_shape(DT_INT32, TensorShape({4}));
    for (int i = 0; i < 4; ++i)
      input_shape.data<int32_t>()[i] = static_cast<int32_t>(image.dim_size(i));
    ExpectComputedInFloat("AvgPoolGrad", pool, {input_shape, pooled_grad}, dtype);

    if (dtype == DT_BFLOAT16) continue;  // Conv2D has a native bfloat16 kernel
    const Tensor filter = Random(dtype, TensorShape({3, 3, 3, 4}), -1, 1, 19);
    const AttrMap conv = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                          {"padding", "SAME"},
                          {"data_format", "NHWC"}};
    ExpectComputedInFloat("Conv2D", conv, {image, filter}, dtype);
    const Tensor conv_grad = Random(dtype, TensorShape({2, 6, 6, 4}), -1, 1, 20);
    Tensor filter_shape(DT_INT32, TensorShape({4}));
    for (int i = 0; i < 4; ++i)
      filter_shape.data<int32_t>()[i] = static_cast<int32_t>(filter.dim_size(i));
    ExpectComputedInFloat("Conv2DBackpropInput", conv, {input_shape, filter, conv_grad}, dtype);
    ExpectComputedInFloat("Conv2DBackpropFilter", conv, {image, filter_shape, conv_grad}, dtype);
  }
}

TEST(Float16KernelsTest, FusedBatchNormKeepsFloatStatistics) {
  const Tensor x = Random(DT_HALF, TensorShape({2, 3, 3, 4}), -2, 2, 21);
  Tensor scale(DT_FLOAT, TensorShape({4})), offset(DT_FLOAT, TensorShape({4}));
  for (int i = 0; i < 4; ++i) {
    scale.data<float>()[i] = 0.5f + i;
    offset.data<float>()[i] = 0.25f * i;
  }
  const Tensor empty(DT_FLOAT, TensorShape({0}));
  const AttrMap attrs = {{"U", DT_FLOAT},
                         {"epsilon", 0.001f},
                         {"is_training", true},
                         {"exponential_avg_factor", 1.0f},
                         {"data_format", "NHWC"}};
  StatusOr<std::vector<Tensor>> out = RunKernel("FusedBatchNormV3",
                                                [&] {
                                                  AttrMap a = attrs;
                                                  a["T"] = DT_HALF;
                                                  return a;
                                                }(),
                                                {x, scale, offset, empty, empty});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DT_HALF);
  for (size_t i = 1; i < out->size(); ++i) EXPECT_EQ((*out)[i].dtype(), DT_FLOAT) << i;
  ExpectComputedInFloat("FusedBatchNormV3", attrs, {x, scale, offset, empty, empty}, DT_HALF);

  const Tensor dy = Random(DT_HALF, TensorShape({2, 3, 3, 4}), -1, 1, 22);
  ExpectComputedInFloat(
      "FusedBatchNormGradV3",
      {{"U", DT_FLOAT}, {"epsilon", 0.001f}, {"is_training", true}, {"data_format", "NHWC"}},
      {dy, x, scale, (*out)[3], (*out)[4], (*out)[5]}, DT_HALF);
}

TEST(Float16KernelsTest, RandomNormalsAreRoundedFloatNormalsAndUniformsStayBelowOne) {
  Tensor shape(DT_INT32, TensorShape({1}));
  shape.data<int32_t>()[0] = 5000;
  for (DType dtype : kNarrowTypes) {
    for (const char* op : {"RandomStandardNormal", "TruncatedNormal"}) {
      ExpectComputedInFloat(op, {{"T", DT_INT32}, {"seed", 7}, {"seed2", 3}}, {shape}, dtype,
                            {"dtype"});
    }
    StatusOr<std::vector<Tensor>> out = RunKernel(
        "RandomUniform", {{"dtype", dtype}, {"T", DT_INT32}, {"seed", 7}, {"seed2", 3}}, {shape});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dtype(), dtype);
    const std::vector<double> values = ToDoubles((*out)[0]);
    const double step = dtype == DT_HALF ? 1.0 / 1024 : 1.0 / 128;
    double sum = 0;
    for (double v : values) {
      ASSERT_GE(v, 0);
      ASSERT_LT(v, 1);
      ASSERT_EQ(std::fmod(v, step), 0) << v;  // an exact multiple of the format's step
      sum += v;
    }
    EXPECT_NEAR(sum / values.size(), 0.5 - step / 2, 0.02);  // 4+ standard errors
  }
}

// (The executor adds the node's name to a kernel's error.)
TEST(Float16KernelsTest, ErrorsNameTheSixteenBitTypeAndShapes) {
  StatusOr<std::vector<Tensor>> out = RunKernel(
      "AddV2", {{"T", DT_HALF}},
      {Filled(DT_HALF, TensorShape({2}), 1), Filled(DT_HALF, TensorShape({3}), 1)}, "my_add");
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("half"), std::string::npos) << out.status();
  EXPECT_EQ(out.status().message().find("dtype float"), std::string::npos) << out.status();

  out =
      RunKernel("MatMul", {{"T", DT_HALF}, {"transpose_a", false}, {"transpose_b", false}},
                {Filled(DT_HALF, TensorShape({2, 3}), 1), Filled(DT_HALF, TensorShape({4, 2}), 1)},
                "my_matmul");
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("[4,2]"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace weir
