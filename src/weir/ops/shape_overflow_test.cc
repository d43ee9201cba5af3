// Hostile numbers in shape functions (issue 10): every input here crashed,
// wrapped or silently gave a wrong shape before the dim arithmetic was
// checked. Each must now give InvalidArgument naming the node and the
// values, or the shape TensorFlow gives.
#include <gtest/gtest.h>

#include <limits>

#include "weir/framework/tensor.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2p32 = int64_t{1} << 32;
constexpr int64_t k2p40 = int64_t{1} << 40;
constexpr int64_t k2p62 = int64_t{1} << 62;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

PartialShape Shape1(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                    std::vector<const Tensor*> values = {}) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() && !out->empty() ? (*out)[0] : PartialShape();
}

void ExpectError(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                 std::vector<const Tensor*> values, std::initializer_list<std::string> parts) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  ASSERT_FALSE(out.ok()) << op << " should fail but gave " << StrJoin(*out, ", ");
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("'test_node' (" + op + ")"), std::string::npos)
      << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

Tensor I64(std::vector<int64_t> v) { return Tensor::FromVector(v); }
Tensor I64Scalar(int64_t v) { return Tensor::Scalar<int64_t>(v); }

AttrMap ConvAttrs(std::vector<int64_t> strides, const char* padding) {
  return {{"T", DT_FLOAT}, {"strides", strides}, {"padding", padding}};
}

// ---- Conv2D and the pools

TEST(ShapeOverflowTest, Conv2DStridesNear2To63) {
  // SAME: ceil(5 / (2^63 - 1)) is 1; `input + stride - 1` wrapped to an
  // empty output before.
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, kMax, kMax, 1}, "SAME"), {{1, 5, 5, 2}, {3, 3, 2, 4}}),
            PartialShape({1, 1, 1, 4}));
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, kMax, kMax, 1}, "VALID"), {{1, 5, 5, 2}, {3, 3, 2, 4}}),
            PartialShape({1, 1, 1, 4}));
  // With an unknown filter size too.
  EXPECT_EQ(Shape1("Conv2D", ConvAttrs({1, kMax, kMax, 1}, "SAME"),
                   {{1, 5, 5, 2}, {kUnknown, kUnknown, 2, 4}}),
            PartialShape({1, 1, 1, 4}));
}

TEST(ShapeOverflowTest, DepthwiseAndResizeWhoseCountOverflows) {
  // in_channels * multiplier fits, the equivalent dense filter does not.
  ExpectError("DepthwiseConv2dNative", ConvAttrs({1, 1, 1, 1}, "SAME"),
              {{1, 1, 1, k2p32}, {1, 1, k2p32, int64_t{1} << 30}}, {}, {});
  Tensor size = Tensor::FromVector<int32_t>({2147483647, 2147483647});
  AttrMap resize{{"T", DT_FLOAT}, {"align_corners", false}, {"half_pixel_centers", false}};
  ExpectError("ResizeBilinear", resize, {{4, 1, 1, 1}, {2}}, {nullptr, &size}, {});
}

TEST(ShapeOverflowTest, Conv2DHugeDilations) {
  AttrMap attrs = ConvAttrs({1, 1, 1, 1}, "VALID");
  attrs["dilations"] = std::vector<int64_t>{1, k2p62, k2p62, 1};  // (3 - 1) * 2^62 + 1 wraps
  ExpectError("Conv2D", attrs, {{1, 5, 5, 2}, {3, 3, 2, 4}}, {}, {"dilation 4611686018427387904"});
  attrs["padding"] = "SAME";
  ExpectError("Conv2D", attrs, {{1, 5, 5, 2}, {3, 3, 2, 4}}, {}, {"overflows"});
  // Within int64 but wider than the input: the VALID message.
  attrs["padding"] = "VALID";
  attrs["dilations"] = std::vector<int64_t>{1, k2p40, 1, 1};
  ExpectError("Conv2D", attrs, {{1, 5, 5, 2}, {3, 3, 2, 4}}, {}, {"larger"});
}

TEST(ShapeOverflowTest, Conv2DExplicitPaddingsNear2To63) {
  AttrMap attrs = ConvAttrs({1, 1, 1, 1}, "EXPLICIT");
  attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, kMax, kMax, 0, 0, 0, 0};
  ExpectError("Conv2D", attrs, {{1, 5, 5, 2}, {3, 3, 2, 4}}, {}, {"9223372036854775807"});
  // Each dim fits but the output's element count does not.
  attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, k2p40, 0, k2p40, 0, 0, 0};
  ExpectError("Conv2D", attrs, {{1, 5, 5, 2}, {3, 3, 2, 4}}, {}, {"2^63 - 1"});
}

TEST(ShapeOverflowTest, PoolsWithStridesNear2To63) {
  AttrMap attrs = {{"T", DT_FLOAT},
                   {"ksize", std::vector<int64_t>{1, 2, 2, 1}},
                   {"strides", std::vector<int64_t>{1, kMax, kMax, 1}},
                   {"padding", "SAME"}};
  EXPECT_EQ(Shape1("MaxPool", attrs, {{1, 5, 5, 3}}), PartialShape({1, 1, 1, 3}));
  EXPECT_EQ(Shape1("AvgPool", attrs, {{1, 5, 5, 3}}), PartialShape({1, 1, 1, 3}));
  // SAME with a window near 2^63: the padding it needs overflowed.
  attrs["ksize"] = std::vector<int64_t>{1, kMax, 1, 1};
  attrs["strides"] = std::vector<int64_t>{1, 1, 1, 1};
  ExpectError("MaxPool", attrs, {{1, 5, 5, 3}}, {}, {"overflows"});
}

// ---- Pad, Tile, ConcatV2, Split

TEST(ShapeOverflowTest, PadPaddingsNear2To63) {
  Tensor paddings = I64({kMax, 1});
  ExpectError("Pad", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}}, {{3}, {1, 2}},
              {nullptr, &paddings}, {"9223372036854775807", "overflows"});
  Tensor wide = I64({k2p40, 0, k2p40, 0});
  ExpectError("Pad", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}}, {{1, 1}, {2, 2}},
              {nullptr, &wide}, {"2^63 - 1"});
  Tensor fine = I64({1, 2});
  EXPECT_EQ(Shape1("Pad", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}}, {{kUnknown}, {1, 2}},
                   {nullptr, &fine}),
            PartialShape({kUnknown}));
}

TEST(ShapeOverflowTest, TileMultiplesThatWrap) {
  // 2^32 * 2^32 wrapped to exactly 0 elements before: the kernel then
  // allocated nothing and wrote past it.
  Tensor multiples = I64({k2p32});
  ExpectError("Tile", {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}}, {{k2p32}, {1}},
              {nullptr, &multiples}, {"4294967296", "overflows"});
  Tensor two = I64({1, k2p32});
  ExpectError("Tile", {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}}, {{k2p32, 1}, {2}},
              {nullptr, &two}, {"2^63 - 1"});
  // A multiples vector of 2^40 entries gave a rank cast to int.
  ExpectError("Tile", {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}},
              {PartialShape(), {k2p40}}, {}, {"multiples", "1099511627776"});
}

TEST(ShapeOverflowTest, ConcatOfDimsNear2To62) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"N", 2}};
  Tensor axis = I64Scalar(0);
  attrs["Tidx"] = DT_INT64;
  ExpectError("ConcatV2", attrs, {{3 * (k2p62 / 2)}, {k2p62}, kScalar},
              {nullptr, nullptr, &axis}, {"overflows"});
  attrs["N"] = 3;
  ExpectError("ConcatV2", attrs, {{k2p62, 1}, {k2p62, 1}, {k2p62, 1}, kScalar},
              {nullptr, nullptr, nullptr, &axis}, {"overflows"});
  // The sum fits; the element count does not.
  ExpectError("ConcatV2", attrs, {{k2p40, k2p40 / 4}, {k2p40, k2p40 / 4}, {k2p40, k2p40 / 4},
                                  kScalar},
              {nullptr, nullptr, nullptr, &axis}, {"2^63 - 1"});
  // An unknown size does not hide the overflow of the known ones, in any
  // order; without one the sum is unknown.
  ExpectError("ConcatV2", attrs, {{kUnknown}, {k2p62}, {k2p62}, kScalar},
              {nullptr, nullptr, nullptr, &axis}, {"overflows"});
  EXPECT_EQ(Shape1("ConcatV2", attrs, {{k2p62}, {k2p62 - 1}, {kUnknown}, kScalar},
                   {nullptr, nullptr, nullptr, &axis}),
            PartialShape({kUnknown}));
}

TEST(ShapeOverflowTest, SplitVSizesThatWrap) {
  // kMax + kMax wrapped to -2, so the -1 became 12 and the "split" passed.
  Tensor sizes = I64({kMax, kMax, -1});
  Tensor axis = I64Scalar(0);
  ExpectError("SplitV", {{"T", DT_FLOAT}, {"Tlen", DT_INT64}, {"num_split", 3}},
              {{10}, {3}, kScalar}, {nullptr, &sizes, &axis}, {"size_splits", "2^63 - 1"});
}

TEST(ShapeOverflowTest, PackAndMatMulWhoseCountOverflows) {
  ExpectError("Pack", {{"T", DT_FLOAT}, {"N", 4}}, {{k2p62}, {k2p62}, {k2p62}, {k2p62}}, {},
              {"2^63 - 1"});
  ExpectError("MatMul", {{"T", DT_FLOAT}}, {{k2p40, 3}, {3, k2p40}}, {}, {"output 0", "2^63 - 1"});
}

// ---- Strided slice

TEST(ShapeOverflowTest, StridedSliceStridesNear2To63) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"Index", DT_INT64}};
  Tensor begin = I64({0}), end = I64({10}), strides = I64({kMax});
  // x[0:10:2^63-1] takes one element; `last - first + stride - 1` wrapped.
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{10}, {1}, {1}, {1}}, {nullptr, &begin, &end, &strides}),
            PartialShape({1}));
  // x[9::-2^63] takes one element too; negating INT64_MIN was undefined.
  Tensor down_begin = I64({9}), down_end = I64({0}), min_stride = I64({kMin});
  attrs["end_mask"] = 1;
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{10}, {1}, {1}, {1}},
                   {nullptr, &down_begin, &down_end, &min_stride}),
            PartialShape({1}));
  Tensor far_end = I64({kMin});
  attrs["end_mask"] = 0;
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{10}, {1}, {1}, {1}},
                   {nullptr, &down_begin, &far_end, &min_stride}),
            PartialShape({1}));
  Tensor minus_max = I64({-kMax});
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{10}, {1}, {1}, {1}},
                   {nullptr, &down_begin, &far_end, &minus_max}),
            PartialShape({1}));
  // Begin and end near the limits are clamped, not wrapped.
  Tensor huge_begin = I64({kMin}), huge_end = I64({kMax}), one = I64({1});
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{10}, {1}, {1}, {1}},
                   {nullptr, &huge_begin, &huge_end, &one}),
            PartialShape({10}));
}

TEST(ShapeOverflowTest, StridedSliceWithTooManyEntries) {
  // begin/end/strides of 2^40 entries each: the loop over entries hung.
  ExpectError("StridedSlice", {{"T", DT_FLOAT}, {"Index", DT_INT64}},
              {{10}, {k2p40}, {k2p40}, {k2p40}}, {}, {"1099511627776 entries"});
}

// ---- Range

TEST(ShapeOverflowTest, RangeSizes) {
  // [INT64_MIN, INT64_MAX) by 1 has 2^64 - 1 elements: it wrapped to -1,
  // an "unknown" size.
  Tensor start = I64Scalar(kMin), limit = I64Scalar(kMax), delta = I64Scalar(1);
  ExpectError("Range", {{"Tidx", DT_INT64}}, {kScalar, kScalar, kScalar},
              {&start, &limit, &delta}, {"18446744073709551615 elements"});
  // Huge deltas and spans are exact.
  Tensor big_delta = I64Scalar(kMax);
  EXPECT_EQ(Shape1("Range", {{"Tidx", DT_INT64}}, {kScalar, kScalar, kScalar},
                   {&start, &limit, &big_delta}),
            PartialShape({3}));
  Tensor min_delta = I64Scalar(kMin);
  EXPECT_EQ(Shape1("Range", {{"Tidx", DT_INT64}}, {kScalar, kScalar, kScalar},
                   {&limit, &start, &min_delta}),
            PartialShape({2}));
  Tensor zero = I64Scalar(0);
  ExpectError("Range", {{"Tidx", DT_INT64}}, {kScalar, kScalar, kScalar}, {&start, &limit, &zero},
              {"delta must not be 0"});

  Tensor f0 = Tensor::Scalar<float>(0), f_big = Tensor::Scalar<float>(1e30f),
         f_tiny = Tensor::Scalar<float>(1e-30f), f_nan = Tensor::Scalar<float>(NAN),
         f_inf = Tensor::Scalar<float>(INFINITY), f_one = Tensor::Scalar<float>(1);
  ExpectError("Range", {{"Tidx", DT_FLOAT}}, {kScalar, kScalar, kScalar}, {&f0, &f_big, &f_tiny},
              {"too many elements"});
  ExpectError("Range", {{"Tidx", DT_FLOAT}}, {kScalar, kScalar, kScalar}, {&f0, &f_nan, &f_one},
              {"finite"});
  ExpectError("Range", {{"Tidx", DT_FLOAT}}, {kScalar, kScalar, kScalar}, {&f0, &f_inf, &f_one},
              {"finite"});
  ExpectError("Range", {{"Tidx", DT_FLOAT}}, {kScalar, kScalar, kScalar}, {&f0, &f_one, &f_nan},
              {"finite"});
}

// ---- Shapes from values and vector lengths

TEST(ShapeOverflowTest, ShapesFromValuesTooLarge) {
  Tensor dims = I64({k2p40, k2p40});
  ExpectError("Fill", {{"T", DT_FLOAT}, {"index_type", DT_INT64}}, {{2}, kScalar}, {&dims},
              {"[1099511627776,1099511627776]", "2^63 - 1"});
  ExpectError("BroadcastTo", {{"T", DT_FLOAT}, {"Tidx", DT_INT64}}, {{1}, {2}}, {nullptr, &dims},
              {"2^63 - 1"});
  ExpectError("RandomUniform", {{"T", DT_INT64}, {"dtype", DT_FLOAT}}, {{2}}, {&dims},
              {"2^63 - 1"});
  ExpectError("Reshape", {{"T", DT_FLOAT}, {"Tshape", DT_INT64}}, {PartialShape(), {2}},
              {nullptr, &dims}, {"2^63"});
  // A shape vector of 2^40 entries: its length was cast to int (here 0,
  // a scalar).
  ExpectError("Reshape", {{"T", DT_FLOAT}, {"Tshape", DT_INT64}}, {PartialShape(), {k2p40}}, {},
              {"1099511627776"});
  ExpectError("Fill", {{"T", DT_FLOAT}, {"index_type", DT_INT64}}, {{k2p40}, kScalar}, {},
              {"1099511627776"});
  ExpectError("Pad", {{"T", DT_FLOAT}}, {PartialShape(), {k2p40 + 7, 2}}, {}, {"1099511627783"});
  ExpectError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT64}}, {PartialShape(), {k2p40}, {k2p40}},
              {}, {"1099511627776"});
  ExpectError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT64}}, {{2, 1}, {2}, {k2p40}}, {},
              {"1099511627776"});
}

TEST(ShapeOverflowTest, GatherOneHotAndBroadcastCounts) {
  Tensor axis0 = I64Scalar(0);
  ExpectError("GatherV2", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT64}, {"Taxis", DT_INT64}},
              {{1, k2p40}, {k2p40}, kScalar}, {nullptr, nullptr, &axis0}, {"2^63 - 1"});
  // batch_dims far out of range with an unknown axis sized a vector by it.
  ExpectError("GatherV2",
              {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT64}, {"Taxis", DT_INT64},
               {"batch_dims", -k2p40}},
              {{3, 4}, {5}, kScalar}, {}, {"batch_dims"});
  Tensor depth = Tensor::Scalar<int32_t>(1 << 30);
  ExpectError("OneHot", {{"T", DT_FLOAT}, {"TI", DT_INT64}},
              {{k2p40}, kScalar, kScalar, kScalar}, {nullptr, &depth},
              {"2^63 - 1"});
  ExpectError("Add", {{"T", DT_FLOAT}}, {{k2p32, 1}, {1, k2p32}}, {}, {"2^63 - 1"});
}

// ---- Count attrs and shape attrs

TEST(ShapeOverflowTest, CountAttrsAreBoundedBeforeUse) {
  // Each was expanded into a vector first: std::bad_alloc.
  struct Case {
    const char* op;
    AttrMap attrs;
    int num_inputs;
  };
  const int64_t huge = k2p40;
  const Case cases[] = {
      {"AddN", {{"T", DT_FLOAT}, {"N", huge}}, 2},
      {"ConcatV2", {{"T", DT_FLOAT}, {"N", huge}}, 3},
      {"Pack", {{"T", DT_FLOAT}, {"N", huge}}, 2},
      {"Unpack", {{"T", DT_FLOAT}, {"num", huge}}, 1},
      {"Split", {{"T", DT_FLOAT}, {"num_split", huge}}, 2},
      {"SplitV", {{"T", DT_FLOAT}, {"num_split", huge}}, 3},
      {"DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", huge}}, 2},
      {"DynamicStitch", {{"T", DT_FLOAT}, {"N", huge}}, 4},
  };
  for (const Case& c : cases) {
    StatusOr<NodeDef> node = MakeTestNode(c.op, c.attrs, c.num_inputs);
    ASSERT_FALSE(node.ok()) << c.op;
    EXPECT_TRUE(errors::IsInvalidArgument(node.status())) << node.status();
    EXPECT_NE(node.status().message().find(StrCat("(", c.op, ")")), std::string::npos)
        << node.status();
    EXPECT_NE(node.status().message().find("1099511627776"), std::string::npos) << node.status();
  }
  // Below the maximum but above the inputs present.
  StatusOr<NodeDef> node = MakeTestNode("AddN", {{"T", DT_FLOAT}, {"N", 1000}}, 2);
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.status().message().find("'N' = 1000"), std::string::npos) << node.status();
}

TEST(ShapeOverflowTest, ShapeAttrsTooLarge) {
  ExpectError("Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({k2p40, k2p40})}}, {},
              {}, {"[1099511627776,1099511627776]", "2^63 - 1"});
  EXPECT_EQ(Shape1("Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({k2p40, -1})}}, {}),
            PartialShape({k2p40, kUnknown}));
  // ExpandDims past the maximum rank.
  Tensor dim = I64Scalar(0);
  ExpectError("ExpandDims", {{"T", DT_FLOAT}, {"Tdim", DT_INT64}},
              {PartialShape(std::vector<int64_t>(TensorShape::kMaxRank, 1)), kScalar},
              {nullptr, &dim}, {"rank"});
}

}  // namespace
}  // namespace weir
