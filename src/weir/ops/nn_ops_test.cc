// Shape functions of the nn family: known, partial and unknown shapes, both
// data formats, constant size inputs, and graph-time errors that name the
// node, the shapes and the attr at fault.
#include <gtest/gtest.h>

#include "weir/framework/tensor.h"
#include "weir/framework/window_shape.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

std::vector<PartialShape> Shapes(const std::string& op, AttrMap attrs,
                                 std::vector<PartialShape> inputs,
                                 std::vector<const Tensor*> values = {}) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<PartialShape>();
}

PartialShape Shape1(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                    std::vector<const Tensor*> values = {}) {
  std::vector<PartialShape> out =
      Shapes(op, std::move(attrs), std::move(inputs), std::move(values));
  return out.empty() ? PartialShape() : out[0];
}

// The shape error, which must name the node and contain each of `parts`.
void ExpectShapeError(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                      const std::vector<std::string>& parts,
                      std::vector<const Tensor*> values = {}) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  ASSERT_FALSE(out.ok()) << op;
  const std::string& message = out.status().message();
  EXPECT_NE(message.find(StrCat("'test_node' (", op, ")")), std::string::npos) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in " << message;
  }
}

AttrMap ConvAttrs(std::vector<int64_t> strides, const char* padding,
                  const char* data_format = "NHWC") {
  return {
      {"T", DT_FLOAT}, {"strides", strides}, {"padding", padding}, {"data_format", data_format}};
}

TEST(ComputeWindowDimTest, TensorFlowRules) {
  auto dim = [](int64_t in, int64_t k, int64_t s, int64_t d, Padding p, int64_t b = 0,
                int64_t a = 0) { return *ComputeWindowDim("rows", in, k, s, d, p, b, a); };
  WindowDim w = dim(7, 3, 2, 1, Padding::kSame);
  EXPECT_EQ(w.output, 4);
  EXPECT_EQ(w.pad_before, 1);
  EXPECT_EQ(w.pad_after, 1);
  w = dim(6, 3, 2, 1, Padding::kSame);  // the odd padding element goes after
  EXPECT_EQ(w.output, 3);
  EXPECT_EQ(w.pad_before, 0);
  EXPECT_EQ(w.pad_after, 1);
  EXPECT_EQ(dim(7, 3, 2, 1, Padding::kValid).output, 3);
  EXPECT_EQ(dim(7, 3, 1, 2, Padding::kValid).output, 3);  // effective size 5
  EXPECT_EQ(dim(2, 5, 1, 1, Padding::kSame).output, 2);
  w = dim(4, 3, 1, 1, Padding::kExplicit, 2, 1);
  EXPECT_EQ(w.output, 5);
  EXPECT_EQ(w.pad_before, 2);
  EXPECT_FALSE(ComputeWindowDim("rows", 2, 3, 1, 1, Padding::kValid).ok());
  EXPECT_FALSE(ComputeWindowDim("rows", 5, 3, 1, 3, Padding::kValid).ok());
  EXPECT_FALSE(ComputeWindowDim("rows", 5, 0, 1, 1, Padding::kSame).ok());
}

TEST(NnShapeTest, Conv2D) {
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, 1, 1, 1}, "SAME"), {{8, 28, 28, 1}, {5, 5, 1, 32}}),
            PartialShape({8, 28, 28, 32}));
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, 2, 2, 1}, "VALID"), {{kUnknown, 9, 8, 3}, {3, 3, 3, 4}}),
            PartialShape({kUnknown, 4, 3, 4}));
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, 1, 2, 2}, "SAME", "NCHW"), {{2, 3, 9, 8}, {3, 3, 3, 4}}),
            PartialShape({2, 4, 5, 4}));
  AttrMap dilated = ConvAttrs({1, 1, 1, 1}, "VALID");
  dilated["dilations"] = std::vector<int64_t>{1, 2, 2, 1};
  EXPECT_EQ(Shape1("Conv2D", dilated, {{1, 7, 7, 2}, {3, 3, 2, 2}}), PartialShape({1, 3, 3, 2}));
  AttrMap explicit_pads = ConvAttrs({1, 1, 1, 1}, "EXPLICIT");
  explicit_pads["explicit_paddings"] = std::vector<int64_t>{0, 0, 1, 2, 3, 0, 0, 0};
  EXPECT_EQ(Shape1("Conv2D", explicit_pads, {{1, 5, 5, 2}, {3, 3, 2, 6}}),
            PartialShape({1, 6, 6, 6}));
  // Unknown dims stay unknown.
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, 1, 1, 1}, "SAME"),
                   {{2, kUnknown, 5, kUnknown}, {3, kUnknown, 4, kUnknown}}),
            PartialShape({2, kUnknown, 5, kUnknown}));
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, 1, 1, 1}, "SAME"), {PartialShape(), PartialShape()}),
            PartialShape::UnknownDims(4));
}

TEST(NnShapeTest, Conv2DErrors) {
  const AttrMap attrs = ConvAttrs({1, 1, 1, 1}, "SAME");
  ExpectShapeError("Conv2D", attrs, {{1, 5, 5}, {3, 3, 3, 4}}, {"[1,5,5]", "rank 4"});
  ExpectShapeError("Conv2D", attrs, {{1, 5, 5, 3}, {3, 3, 2, 4}}, {"[1,5,5,3]", "[3,3,2,4]"});
  ExpectShapeError("Conv2D", ConvAttrs({1, 1, 1}, "SAME"), {{1, 5, 5, 3}, {3, 3, 3, 4}},
                   {"strides [1,1,1]"});
  ExpectShapeError("Conv2D", ConvAttrs({2, 1, 1, 1}, "SAME"), {{1, 5, 5, 3}, {3, 3, 3, 4}},
                   {"strides [2,1,1,1]", "batch"});
  ExpectShapeError("Conv2D", ConvAttrs({1, 1, 1, 1}, "VALID"), {{1, 2, 5, 3}, {3, 3, 3, 4}},
                   {"VALID", "larger"});
  AttrMap explicit_pads = ConvAttrs({1, 1, 1, 1}, "EXPLICIT");
  explicit_pads["explicit_paddings"] = std::vector<int64_t>{0, 0, 1, 1};
  ExpectShapeError("Conv2D", explicit_pads, {{1, 5, 5, 3}, {3, 3, 3, 4}},
                   {"explicit_paddings [0,0,1,1]"});
}

TEST(NnShapeTest, Conv2DBackprops) {
  const AttrMap attrs = ConvAttrs({1, 2, 2, 1}, "SAME");
  const Tensor sizes = Tensor::FromVector<int32_t>({4, 9, 9, 3});
  EXPECT_EQ(Shape1("Conv2DBackpropInput", attrs, {{4}, {3, 3, 3, 8}, {4, 5, 5, 8}},
                   {&sizes, nullptr, nullptr}),
            PartialShape({4, 9, 9, 3}));
  EXPECT_EQ(Shape1("Conv2DBackpropInput", attrs, {{4}, {3, 3, 3, 8}, {4, 5, 5, 8}}),
            PartialShape::UnknownDims(4));
  const Tensor spatial = Tensor::FromVector<int32_t>({9, 9});
  EXPECT_EQ(Shape1("Conv2DBackpropInput", attrs, {{2}, {3, 3, 3, 8}, {4, 5, 5, 8}},
                   {&spatial, nullptr, nullptr}),
            PartialShape({4, 9, 9, 3}));
  ExpectShapeError("Conv2DBackpropInput", attrs, {{4}, {3, 3, 3, 8}, {4, 4, 5, 8}},
                   {"out_backprop [4,4,5,8]", "[4,5,5,8]"}, {&sizes, nullptr, nullptr});

  const Tensor filter_sizes = Tensor::FromVector<int32_t>({3, 3, 3, 8});
  EXPECT_EQ(Shape1("Conv2DBackpropFilter", attrs, {{4, 9, 9, 3}, {4}, {4, 5, 5, 8}},
                   {nullptr, &filter_sizes, nullptr}),
            PartialShape({3, 3, 3, 8}));
  EXPECT_EQ(Shape1("Conv2DBackpropFilter", attrs, {{4, 9, 9, 3}, {4}, {4, 5, 5, 8}}),
            PartialShape({kUnknown, kUnknown, 3, 8}));
  const Tensor bad_sizes = Tensor::FromVector<int32_t>({3, 3, 3});
  ExpectShapeError("Conv2DBackpropFilter", attrs, {{4, 9, 9, 3}, {3}, {4, 5, 5, 8}},
                   {"filter_sizes"}, {nullptr, &bad_sizes, nullptr});
}

AttrMap PoolAttrs(std::vector<int64_t> ksize, std::vector<int64_t> strides, const char* padding) {
  return {{"T", DT_FLOAT}, {"ksize", ksize}, {"strides", strides}, {"padding", padding}};
}

TEST(NnShapeTest, Pooling) {
  for (const char* op : {"MaxPool", "AvgPool"}) {
    EXPECT_EQ(Shape1(op, PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"), {{100, 28, 28, 32}}),
              PartialShape({100, 14, 14, 32}));
    EXPECT_EQ(
        Shape1(op, PoolAttrs({1, 3, 3, 1}, {1, 2, 2, 1}, "VALID"), {{kUnknown, 7, kUnknown, 5}}),
        PartialShape({kUnknown, 3, kUnknown, 5}));
    ExpectShapeError(op, PoolAttrs({1, 2, 2}, {1, 2, 2, 1}, "SAME"), {{1, 4, 4, 1}}, {"ksize"});
    ExpectShapeError(op, PoolAttrs({1, 2, 2, 2}, {1, 2, 2, 1}, "SAME"), {{1, 4, 4, 1}},
                     {"ksize [1,2,2,2]", "channel"});
    ExpectShapeError(op, PoolAttrs({1, 5, 5, 1}, {1, 1, 1, 1}, "VALID"), {{1, 4, 4, 1}}, {"VALID"});
  }
  const Tensor sizes = Tensor::FromVector<int32_t>({2, 8, 8, 3});
  EXPECT_EQ(Shape1("AvgPoolGrad", PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"),
                   {{4}, {2, 4, 4, 3}}, {&sizes, nullptr}),
            PartialShape({2, 8, 8, 3}));
  EXPECT_EQ(Shape1("MaxPoolGrad", PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"),
                   {{2, 8, 8, 3}, {2, 4, 4, 3}, {2, 4, 4, 3}}),
            PartialShape({2, 8, 8, 3}));
  ExpectShapeError("MaxPoolGrad", PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"),
                   {{2, 8, 8, 3}, {2, 4, 4, 3}, {2, 4, 5, 3}}, {"grad [2,4,5,3]"});
}

TEST(NnShapeTest, BiasSoftmaxAndLosses) {
  EXPECT_EQ(Shape1("BiasAdd", {{"T", DT_FLOAT}}, {{kUnknown, 10}, {10}}),
            PartialShape({kUnknown, 10}));
  EXPECT_EQ(Shape1("BiasAdd", {{"T", DT_FLOAT}}, {{2, 3, kUnknown}, {7}}), PartialShape({2, 3, 7}));
  EXPECT_EQ(Shape1("BiasAdd", {{"T", DT_FLOAT}, {"data_format", "NCHW"}}, {{2, 3, 4, 4}, {3}}),
            PartialShape({2, 3, 4, 4}));
  ExpectShapeError("BiasAdd", {{"T", DT_FLOAT}}, {{2, 3}, {4}}, {"bias [4]", "[2,3]"});
  ExpectShapeError("BiasAdd", {{"T", DT_FLOAT}}, {{3}, {3}}, {"rank at least 2"});
  EXPECT_EQ(Shape1("BiasAddGrad", {{"T", DT_FLOAT}}, {{5, 4, 4, 8}}), PartialShape({8}));
  EXPECT_EQ(Shape1("BiasAddGrad", {{"T", DT_FLOAT}, {"data_format", "NCHW"}}, {{5, 8, 4, 4}}),
            PartialShape({8}));

  EXPECT_EQ(Shape1("Softmax", {{"T", DT_FLOAT}}, {{kUnknown, 10}}), PartialShape({kUnknown, 10}));
  EXPECT_EQ(Shape1("LogSoftmax", {{"T", DT_DOUBLE}}, {{4}}), PartialShape({4}));
  ExpectShapeError("Softmax", {{"T", DT_FLOAT}}, {kScalar}, {"rank at least 1"});

  std::vector<PartialShape> out =
      Shapes("SoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}}, {{kUnknown, 10}, {1, 10}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], PartialShape({kUnknown}));
  EXPECT_EQ(out[1], PartialShape({kUnknown, 10}));
  ExpectShapeError("SoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}}, {{4, 10}, {4, 9}},
                   {"[4,10]", "[4,9]"});
  out = Shapes("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}}, {{kUnknown, 10}, {32}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], PartialShape({32}));
  EXPECT_EQ(out[1], PartialShape({32, 10}));
  ExpectShapeError("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}}, {{8, 10}, {7}},
                   {"labels [7]", "[8,10]"});

  EXPECT_EQ(Shape1("L2Loss", {{"T", DT_FLOAT}}, {{3, 4}}), kScalar);
  EXPECT_EQ(Shape1("InTopKV2", {}, {{kUnknown, 10}, {16}, kScalar}), PartialShape({16}));
  ExpectShapeError("InTopKV2", {}, {{16, 10}, {16}, {1}}, {"rank 0"});
}

TEST(NnShapeTest, FusedBatchNorm) {
  const AttrMap attrs = {{"T", DT_FLOAT}, {"U", DT_FLOAT}};
  std::vector<PartialShape> out =
      Shapes("FusedBatchNormV3", attrs, {{kUnknown, 7, 7, kUnknown}, {16}, {16}, {0}, {0}});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0], PartialShape({kUnknown, 7, 7, 16}));
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(out[i], PartialShape({16})) << i;
  AttrMap inference = attrs;
  inference["is_training"] = false;
  ExpectShapeError("FusedBatchNormV3", inference, {{2, 7, 7, 16}, {16}, {16}, {0}, {0}},
                   {"input 3 [0]"});
  ExpectShapeError("FusedBatchNormV3", attrs, {{2, 7, 7, 16}, {8}, {16}, {16}, {16}},
                   {"input 1 [8]"});
  AttrMap nchw = attrs;
  nchw["data_format"] = std::string("NCHW");
  out = Shapes("FusedBatchNormV3", nchw, {{2, 16, 7, 7}, {16}, {16}, {16}, {16}});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[1], PartialShape({16}));
  ExpectShapeError("FusedBatchNormV3", attrs, {{2, 7, 16}, {16}, {16}, {16}, {16}}, {"rank 4"});

  out = Shapes("FusedBatchNormGradV3", attrs,
               {{2, 7, 7, 16}, {kUnknown, 7, 7, 16}, {16}, {16}, {16}, {0}});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], PartialShape({2, 7, 7, 16}));
  EXPECT_EQ(out[1], PartialShape({16}));
  EXPECT_EQ(out[2], PartialShape({16}));
}

}  // namespace
}  // namespace weir
