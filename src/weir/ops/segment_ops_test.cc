// Shape functions of the segment reductions, scans, TopKV2, InvertPermutation
// and ConcatOffset: known, partial and unknown shapes, constant inputs, and
// graph-time errors that name the node.
#include <gtest/gtest.h>

#include "weir/framework/tensor.h"
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

const AttrMap kSegmentAttrs = {{"T", DT_FLOAT}, {"Tindices", DT_INT32}};

TEST(SegmentShapeTest, Unsorted) {
  const Tensor five = Tensor::Scalar<int32_t>(5);
  EXPECT_EQ(Shape1("UnsortedSegmentSum", kSegmentAttrs, {{4, 3, 2}, {4, 3}, kScalar},
                   {nullptr, nullptr, &five}),
            PartialShape({5, 2}));
  EXPECT_EQ(Shape1("UnsortedSegmentMax", kSegmentAttrs, {{4, 3, 2}, {4}, kScalar}),
            PartialShape({kUnknown, 3, 2}));
  EXPECT_EQ(Shape1("UnsortedSegmentProd", kSegmentAttrs, {{kUnknown, 7}, {4}, kScalar}),
            PartialShape({kUnknown, 7}));
  EXPECT_EQ(Shape1("UnsortedSegmentMin", kSegmentAttrs, {PartialShape(), {4}, kScalar}),
            PartialShape());
  ExpectShapeError("UnsortedSegmentSum", kSegmentAttrs, {{4, 3}, {3}, kScalar},
                   {"does not start with segment_ids shape [3]"});
  ExpectShapeError("UnsortedSegmentSum", kSegmentAttrs, {{4}, {4, 1}, kScalar}, {"[4,1]"});
  ExpectShapeError("UnsortedSegmentSum", kSegmentAttrs, {{4}, {4}, {1}}, {"must be a scalar"});
  const Tensor negative = Tensor::Scalar<int64_t>(-2);
  ExpectShapeError("UnsortedSegmentSum",
                   {{"T", DT_FLOAT}, {"Tindices", DT_INT32}, {"Tnumsegments", DT_INT64}},
                   {{4}, {4}, kScalar}, {"-2 must not be negative"}, {nullptr, nullptr, &negative});
}

TEST(SegmentShapeTest, Sorted) {
  EXPECT_EQ(Shape1("SegmentSum", kSegmentAttrs, {{4, 3}, {4}}), PartialShape({kUnknown, 3}));
  const Tensor ids = Tensor::FromVector<int32_t>({0, 0, 1, 6});
  EXPECT_EQ(Shape1("SegmentSum", kSegmentAttrs, {{4, 3}, {4}}, {nullptr, &ids}),
            PartialShape({7, 3}));
  ExpectShapeError("SegmentSum", kSegmentAttrs, {{4, 3}, {5}}, {"dim 0 of data shape [4,3]"});
  ExpectShapeError("SegmentSum", kSegmentAttrs, {{4, 3}, {4, 1}}, {"rank"});
  ExpectShapeError("SegmentSum", kSegmentAttrs, {kScalar, {1}}, {"rank"});
}

TEST(ScanShapeTest, SameShapeAndAxisChecked) {
  for (const char* op : {"Cumsum", "Cumprod"}) {
    EXPECT_EQ(Shape1(op, {{"T", DT_FLOAT}}, {{2, kUnknown}, kScalar}), PartialShape({2, kUnknown}));
    const Tensor axis = Tensor::Scalar<int32_t>(-3);
    ExpectShapeError(op, {{"T", DT_FLOAT}}, {{2, 3}, kScalar}, {"axis -3 is not in [-2, 2)"},
                     {nullptr, &axis});
    ExpectShapeError(op, {{"T", DT_FLOAT}}, {{2, 3}, {1}}, {"axis must be a scalar"});
  }
}

TEST(TopKShapeTest, LastDimBecomesK) {
  const Tensor k = Tensor::Scalar<int32_t>(3);
  std::vector<PartialShape> out =
      Shapes("TopKV2", {{"T", DT_FLOAT}}, {{2, 5, 7}, kScalar}, {nullptr, &k});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], PartialShape({2, 5, 3}));
  EXPECT_EQ(out[1], PartialShape({2, 5, 3}));
  EXPECT_EQ(Shape1("TopKV2", {{"T", DT_FLOAT}}, {{kUnknown, 7}, kScalar}),
            PartialShape({kUnknown, kUnknown}));
  const Tensor big = Tensor::Scalar<int32_t>(8);
  ExpectShapeError("TopKV2", {{"T", DT_FLOAT}}, {{2, 7}, kScalar}, {"at least k = 8"},
                   {nullptr, &big});
  ExpectShapeError("TopKV2", {{"T", DT_FLOAT}}, {kScalar, kScalar}, {"rank"});
  ExpectShapeError("TopKV2", {{"T", DT_FLOAT}}, {{3}, {1}}, {"rank"});
}

TEST(PermutationShapeTest, InvertPermutationAndConcatOffset) {
  EXPECT_EQ(Shape1("InvertPermutation", {}, {{kUnknown}}), PartialShape({kUnknown}));
  ExpectShapeError("InvertPermutation", {}, {{2, 2}}, {"rank"});
  std::vector<PartialShape> out =
      Shapes("ConcatOffset", {{"N", 3}}, {kScalar, {4}, {4}, {kUnknown}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], PartialShape({4}));
  EXPECT_EQ(out[2], PartialShape({kUnknown}));
  ExpectShapeError("ConcatOffset", {{"N", 2}}, {{1}, {4}, {4}}, {"rank"});
}

}  // namespace
}  // namespace weir
