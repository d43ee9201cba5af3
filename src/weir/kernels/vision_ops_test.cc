// Conv3D, the 3-D pools and ExtractImagePatches on small cases worked out by
// hand (values against TensorFlow and gradients are in
// python/tests/test_vision_ops.py), and their errors for hostile shapes.
#include <gtest/gtest.h>

#include <vector>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

AttrMap Conv3DAttrs(const std::string& padding) {
  return {{"T", DT_FLOAT}, {"strides", std::vector<int64_t>{1, 1, 1, 1, 1}}, {"padding", padding}};
}

AttrMap Pool3DAttrs(std::vector<int64_t> ksize, const std::string& padding) {
  return {{"T", DT_FLOAT},
          {"ksize", ksize},
          {"strides", std::vector<int64_t>{1, 1, 1, 1, 1}},
          {"padding", padding}};
}

TEST(Conv3D, OnesFilterSumsWindows) {
  // A 2x2x2 ones filter over a 2x2x2 iota volume (one channel): VALID sums
  // everything (0 + ... + 7 = 28); SAME pads after.
  Tensor input = Iota(TensorShape({1, 2, 2, 2, 1}));
  Tensor filter(DT_FLOAT, TensorShape({2, 2, 2, 1, 1}));
  for (int i = 0; i < 8; ++i) filter.data<float>()[i] = 1;
  auto valid = RunKernel("Conv3D", Conv3DAttrs("VALID"), {input, filter});
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(ToDoubles((*valid)[0]), (std::vector<double>{28}));
  auto same = RunKernel("Conv3D", Conv3DAttrs("SAME"), {input, filter});
  ASSERT_TRUE(same.ok()) << same.status();
  // Output (d, h, w) sums input over [d, 1] x [h, 1] x [w, 1].
  EXPECT_EQ(ToDoubles((*same)[0]), (std::vector<double>{28, 16, 18, 10, 22, 12, 13, 7}));
}

TEST(Conv3D, HostileShapesAreErrors) {
  Tensor input = Iota(TensorShape({1, 2, 2, 2, 2}));
  Tensor filter(DT_FLOAT, TensorShape({2, 2, 2, 3, 1}));
  auto mismatch = RunKernel("Conv3D", Conv3DAttrs("SAME"), {input, filter});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().ToString().find("channels"), std::string::npos);
  AttrMap bad = Conv3DAttrs("SAME");
  bad["strides"] = std::vector<int64_t>{1, 0, 1, 1, 1};
  EXPECT_FALSE(
      RunKernel("Conv3D", bad, {input, Tensor(DT_FLOAT, TensorShape({1, 1, 1, 2, 1}))}).ok());
  auto sizes = RunKernel("Conv3DBackpropInputV2", Conv3DAttrs("SAME"),
                         {Tensor::FromVector<int32_t>({1, 2, -2, 2, 2}, TensorShape({5})),
                          Tensor(DT_FLOAT, TensorShape({1, 1, 1, 2, 1})),
                          Tensor(DT_FLOAT, TensorShape({1, 2, 2, 2, 1}))});
  EXPECT_FALSE(sizes.ok());
  AttrMap ncdhw = Conv3DAttrs("SAME");
  ncdhw["data_format"] = std::string("NCDHW");
  auto channels_first =
      RunKernel("Conv3D", ncdhw, {input, Tensor(DT_FLOAT, TensorShape({1, 1, 1, 2, 1}))});
  ASSERT_FALSE(channels_first.ok());
  EXPECT_TRUE(errors::IsUnimplemented(channels_first.status())) << channels_first.status();
}

TEST(Pool3D, MaxAverageAndGradients) {
  Tensor input = Iota(TensorShape({1, 2, 2, 2, 1}));
  auto max = RunKernel("MaxPool3D", Pool3DAttrs({1, 2, 2, 2, 1}, "SAME"), {input});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(ToDoubles((*max)[0]), (std::vector<double>{7, 7, 7, 7, 7, 7, 7, 7}));
  auto avg = RunKernel("AvgPool3D", Pool3DAttrs({1, 2, 2, 2, 1}, "SAME"), {input});
  ASSERT_TRUE(avg.ok()) << avg.status();
  // Means over the in-image part of each window only.
  EXPECT_EQ(ToDoubles((*avg)[0]), (std::vector<double>{3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7}));
  // Every window's maximum is element 7: all gradient goes there.
  Tensor ones(DT_FLOAT, TensorShape({1, 2, 2, 2, 1}));
  for (int i = 0; i < 8; ++i) ones.data<float>()[i] = 1;
  auto max_grad =
      RunKernel("MaxPool3DGrad", Pool3DAttrs({1, 2, 2, 2, 1}, "SAME"), {input, (*max)[0], ones});
  ASSERT_TRUE(max_grad.ok()) << max_grad.status();
  EXPECT_EQ(ToDoubles((*max_grad)[0]), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 8}));
  auto avg_grad = RunKernel("AvgPool3DGrad", Pool3DAttrs({1, 2, 2, 2, 1}, "VALID"),
                            {Tensor::FromVector<int32_t>({1, 2, 2, 2, 1}, TensorShape({5})),
                             Tensor::FromVector<float>({8}, TensorShape({1, 1, 1, 1, 1}))});
  ASSERT_TRUE(avg_grad.ok()) << avg_grad.status();
  EXPECT_EQ(ToDoubles((*avg_grad)[0]), (std::vector<double>(8, 1)));
  // MaxPool3DGradGrad picks grad at each window's maximum (element 7).
  Tensor grad = Iota(TensorShape({1, 2, 2, 2, 1}));
  AttrMap gg_attrs = Pool3DAttrs({1, 2, 2, 2, 1}, "SAME");
  auto grad_grad = RunKernel("MaxPool3DGradGrad", gg_attrs, {input, (*max)[0], grad});
  ASSERT_TRUE(grad_grad.ok()) << grad_grad.status();
  EXPECT_EQ(ToDoubles((*grad_grad)[0]), (std::vector<double>(8, 7)));
  EXPECT_FALSE(RunKernel("MaxPool3DGradGrad", gg_attrs,
                         {input, (*max)[0], Tensor(DT_FLOAT, TensorShape({1, 1, 1, 1, 1}))})
                   .ok());
  EXPECT_FALSE(RunKernel("MaxPool3D", Pool3DAttrs({1, 3, 1, 1, 1}, "VALID"), {input}).ok());
  EXPECT_FALSE(RunKernel("MaxPool3D", Pool3DAttrs({2, 1, 1, 1, 1}, "VALID"), {input}).ok());
  EXPECT_FALSE(RunKernel("AvgPool3DGrad", Pool3DAttrs({1, 2, 2, 2, 1}, "VALID"),
                         {Tensor::FromVector<int32_t>({1, 2, 2, 2}, TensorShape({4})), ones})
                   .ok());
}

TEST(ExtractImagePatches, TwoByTwoPatchesAndPadding) {
  Tensor image = Iota(TensorShape({1, 3, 3, 1}));
  AttrMap attrs = {{"T", DT_FLOAT},
                   {"ksizes", std::vector<int64_t>{1, 2, 2, 1}},
                   {"strides", std::vector<int64_t>{1, 2, 2, 1}},
                   {"rates", std::vector<int64_t>{1, 1, 1, 1}},
                   {"padding", std::string("SAME")}};
  auto out = RunKernel("ExtractImagePatches", attrs, {image});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 2, 2, 4}));
  // SAME on 3 with a window of 2, stride 2: no padding before, one after.
  EXPECT_EQ(ToDoubles((*out)[0]),
            (std::vector<double>{0, 1, 3, 4, 2, 0, 5, 0, 6, 7, 0, 0, 8, 0, 0, 0}));
  attrs["ksizes"] = std::vector<int64_t>{1, 0, 2, 1};
  EXPECT_FALSE(RunKernel("ExtractImagePatches", attrs, {image}).ok());
  attrs["ksizes"] = std::vector<int64_t>{2, 2, 2, 1};
  EXPECT_FALSE(RunKernel("ExtractImagePatches", attrs, {image}).ok());
}

}  // namespace
}  // namespace weir
