// NCHW convolution, pooling and bias kernels against the NHWC kernels on
// the same data transposed: every op, output and gradient, in float and
// double, with strides, dilations and explicit padding in the NCHW attrs'
// order.
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

// Transposes a rank-4 tensor by `perm` with the Transpose kernel.
Tensor Permute(const Tensor& t, std::vector<int32_t> perm) {
  auto out = RunKernel("Transpose", {{"T", t.dtype()}, {"Tperm", DT_INT32}}, {t, Int32Vector(perm)});
  EXPECT_TRUE(out.ok()) << out.status();
  return (*out)[0];
}
Tensor ToNchw(const Tensor& t) { return Permute(t, {0, 3, 1, 2}); }
Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v;
  for (int i = 0; i < s.rank(); ++i) v.push_back(static_cast<int32_t>(s.dim_size(i)));
  return Int32Vector(v);
}

// NHWC attrs -> the same configuration for NCHW.
AttrMap ToNchwAttrs(AttrMap attrs) {
  for (const char* name : {"strides", "dilations", "ksize"}) {
    auto it = attrs.find(name);
    if (it == attrs.end()) continue;
    std::vector<int64_t> v;
    EXPECT_TRUE(GetAttr(attrs, name, &v).ok());
    attrs[name] = std::vector<int64_t>{v[0], v[3], v[1], v[2]};
  }
  if (attrs.count("explicit_paddings")) {
    std::vector<int64_t> p;
    EXPECT_TRUE(GetAttr(attrs, "explicit_paddings", &p).ok());
    attrs["explicit_paddings"] = std::vector<int64_t>{p[0], p[1], p[6], p[7], p[2], p[3], p[4], p[5]};
  }
  attrs["data_format"] = std::string("NCHW");
  return attrs;
}

// Runs `op` on NHWC inputs and on NCHW ones (inputs listed in `images`
// transposed), and expects the NCHW output to be the transposed NHWC one
// (or equal, when `image_output` is false).
void ExpectLayoutsAgree(const std::string& op, const AttrMap& attrs, std::vector<Tensor> inputs,
                        const std::vector<int>& images, bool image_output,
                        const std::vector<int>& sizes = {}) {
  SCOPED_TRACE(op);
  auto nhwc = RunKernel(op, attrs, inputs);
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  for (int i : images) inputs[i] = ToNchw(inputs[i]);
  for (int i : sizes) {
    std::vector<double> v = ToDoubles(inputs[i]);
    inputs[i] = Int32Vector({static_cast<int32_t>(v[0]), static_cast<int32_t>(v[3]),
                             static_cast<int32_t>(v[1]), static_cast<int32_t>(v[2])});
  }
  auto nchw = RunKernel(op, ToNchwAttrs(attrs), inputs);
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  const Tensor want = image_output ? ToNchw((*nhwc)[0]) : (*nhwc)[0];
  ASSERT_EQ((*nchw)[0].shape(), want.shape());
  const double tol = want.dtype() == DT_DOUBLE ? 1e-12 : 1e-5;
  ExpectAllNear((*nchw)[0], ToDoubles(want), tol, op);
}

TEST(NchwTest, ConvolutionsMatchNhwc) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    const Tensor x = RandomTensor(dtype, TensorShape({2, 7, 6, 3}), 1);
    const Tensor f = RandomTensor(dtype, TensorShape({3, 2, 3, 4}), 2);
    std::vector<AttrMap> configs = {
        {{"T", dtype}, {"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}},
        {{"T", dtype},
         {"strides", std::vector<int64_t>{1, 2, 1, 1}},
         {"dilations", std::vector<int64_t>{1, 1, 2, 1}},
         {"padding", "VALID"}},
        {{"T", dtype},
         {"strides", std::vector<int64_t>{1, 1, 2, 1}},
         {"padding", "EXPLICIT"},
         {"explicit_paddings", std::vector<int64_t>{0, 0, 2, 1, 0, 3, 0, 0}}},
    };
    for (const AttrMap& attrs : configs) {
      auto y = RunKernel("Conv2D", attrs, {x, f});
      ASSERT_TRUE(y.ok()) << y.status();
      const Tensor g = RandomTensor(dtype, (*y)[0].shape(), 3);
      ExpectLayoutsAgree("Conv2D", attrs, {x, f}, {0}, true);
      ExpectLayoutsAgree("Conv2DBackpropInput", attrs, {Sizes(x.shape()), f, g}, {2}, true, {0});
      ExpectLayoutsAgree("Conv2DBackpropFilter", attrs, {x, Sizes(f.shape()), g}, {0, 2}, false);
      AttrMap depthwise = attrs;
      const Tensor df = RandomTensor(dtype, TensorShape({3, 2, 3, 2}), 4);
      auto dy = RunKernel("DepthwiseConv2dNative", depthwise, {x, df});
      ASSERT_TRUE(dy.ok()) << dy.status();
      const Tensor dg = RandomTensor(dtype, (*dy)[0].shape(), 5);
      ExpectLayoutsAgree("DepthwiseConv2dNative", depthwise, {x, df}, {0}, true);
      ExpectLayoutsAgree("DepthwiseConv2dNativeBackpropInput", depthwise,
                         {Sizes(x.shape()), df, dg}, {2}, true, {0});
      ExpectLayoutsAgree("DepthwiseConv2dNativeBackpropFilter", depthwise,
                         {x, Sizes(df.shape()), dg}, {0, 2}, false);
    }
  }
}

TEST(NchwTest, PoolingAndBiasMatchNhwc) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    const Tensor x = RandomTensor(dtype, TensorShape({2, 7, 6, 3}), 1);
    for (const char* padding : {"SAME", "VALID"}) {
      const AttrMap attrs = {{"T", dtype},
                             {"ksize", std::vector<int64_t>{1, 3, 2, 1}},
                             {"strides", std::vector<int64_t>{1, 2, 1, 1}},
                             {"padding", padding}};
      auto y = RunKernel("MaxPool", attrs, {x});
      ASSERT_TRUE(y.ok()) << y.status();
      const Tensor g = RandomTensor(dtype, (*y)[0].shape(), 3);
      ExpectLayoutsAgree("MaxPool", attrs, {x}, {0}, true);
      ExpectLayoutsAgree("AvgPool", attrs, {x}, {0}, true);
      ExpectLayoutsAgree("MaxPoolGrad", attrs, {x, (*y)[0], g}, {0, 1, 2}, true);
      ExpectLayoutsAgree("AvgPoolGrad", attrs, {Sizes(x.shape()), g}, {1}, true, {0});
    }
    const Tensor bias = RandomTensor(dtype, TensorShape({3}), 4);
    ExpectLayoutsAgree("BiasAdd", {{"T", dtype}}, {x, bias}, {0}, true);
    ExpectLayoutsAgree("BiasAddGrad", {{"T", dtype}}, {x}, {0}, false);
  }
  // Rank 2 and 3 NCHW bias: channels are dim 1.
  auto out = RunKernel("BiasAdd", {{"T", DT_DOUBLE}, {"data_format", "NCHW"}},
                       {MakeTensor(DT_DOUBLE, TensorShape({2, 2, 2}), {1, 2, 3, 4, 5, 6, 7, 8}),
                        MakeTensor(DT_DOUBLE, TensorShape({2}), {10, 20})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear((*out)[0], {11, 12, 23, 24, 15, 16, 27, 28}, 0, "BiasAdd rank 3");
  out = RunKernel("BiasAddGrad", {{"T", DT_DOUBLE}, {"data_format", "NCHW"}},
                  {MakeTensor(DT_DOUBLE, TensorShape({2, 2, 2}), {1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear((*out)[0], {14, 22}, 0, "BiasAddGrad rank 3");
}

TEST(NchwTest, BatchNormMatchesNhwc) {
  const Tensor x = RandomTensor(DT_FLOAT, TensorShape({2, 5, 4, 3}), 1);
  const Tensor scale = RandomTensor(DT_FLOAT, TensorShape({3}), 2);
  const Tensor offset = RandomTensor(DT_FLOAT, TensorShape({3}), 3);
  const Tensor mean = RandomTensor(DT_FLOAT, TensorShape({3}), 4, -0.5, 0.5);
  const Tensor variance = RandomTensor(DT_FLOAT, TensorShape({3}), 5, 0.5, 2);
  for (bool training : {true, false}) {
    const AttrMap attrs = {{"T", DT_FLOAT}, {"U", DT_FLOAT}, {"is_training", training}};
    ExpectLayoutsAgree("FusedBatchNormV3", attrs, {x, scale, offset, mean, variance}, {0}, true);
    auto forward = RunKernel("FusedBatchNormV3", attrs, {x, scale, offset, mean, variance});
    ASSERT_TRUE(forward.ok()) << forward.status();
    const Tensor dy = RandomTensor(DT_FLOAT, x.shape(), 6);
    ExpectLayoutsAgree("FusedBatchNormGradV3", attrs,
                       {dy, x, scale, (*forward)[3], (*forward)[4], (*forward)[5]}, {0, 1}, true);
  }
}

TEST(NchwTest, BadNchwInputsAreInvalidArguments) {
  const AttrMap attrs = {{"T", DT_FLOAT},
                         {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                         {"padding", "SAME"},
                         {"data_format", "NCHW"}};
  auto out = RunKernel("Conv2D", attrs,
                       {RandomTensor(DT_FLOAT, TensorShape({1, 4, 5}), 1),
                        RandomTensor(DT_FLOAT, TensorShape({3, 3, 4, 2}), 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("NCHW"), std::string::npos) << out.status();
  // NCHW channels are dim 1: 4 here, the filter wants 5.
  out = RunKernel("Conv2D", attrs,
                  {RandomTensor(DT_FLOAT, TensorShape({1, 4, 5, 5}), 1),
                   RandomTensor(DT_FLOAT, TensorShape({3, 3, 5, 2}), 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("[1,4,5,5]"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace weir
