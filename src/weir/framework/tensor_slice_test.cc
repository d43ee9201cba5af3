#include "weir/framework/tensor_slice.h"

#include <gtest/gtest.h>

#include <numeric>

namespace weir {
namespace {

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(ShapeAndSliceTest, ParsesTensorFlowSpecs) {
  StatusOr<ShapeAndSlice> s = ParseShapeAndSlice("4 5 0,2:-");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->full_shape, TensorShape({4, 5}));
  EXPECT_EQ(s->starts, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(s->lengths, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(s->slice_shape(), TensorShape({2, 5}));

  s = ParseShapeAndSlice("10 3,7");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->slice_shape(), TensorShape({7}));
  EXPECT_EQ(s->starts, (std::vector<int64_t>{3}));

  s = ParseShapeAndSlice("2 3 4 -:1,2:4,0");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->slice_shape(), TensorShape({2, 2, 0}));
}

TEST(ShapeAndSliceTest, MalformedSpecsAreInvalidArgumentQuotingTheSpec) {
  for (const char* spec : {"", "4", "4 5", "4 5 0,2", "4 5 0,2:-:-", "4 x 0,2:-", "4 5 0:-",
                           "4 5 0,5:-", "4 5 -1,2:-", "4 5 1,a:-", "-4 5 -:-", "4 5 0,2,1:-"}) {
    StatusOr<ShapeAndSlice> s = ParseShapeAndSlice(spec);
    ASSERT_FALSE(s.ok()) << spec;
    EXPECT_TRUE(errors::IsInvalidArgument(s.status())) << s.status();
    EXPECT_TRUE(Mentions(s.status(), StrCat("'", spec, "'"))) << s.status();
  }
}

TEST(ExtractSliceTest, TakesTheSelectedBlock) {
  std::vector<int32_t> values(4 * 5 * 3);
  std::iota(values.begin(), values.end(), 0);
  Tensor t = Tensor::FromVector(values, TensorShape({4, 5, 3}));
  StatusOr<Tensor> got = ExtractSlice(t, *ParseShapeAndSlice("4 5 3 1,2:-:2,1"));
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<int32_t> expected;
  for (int i = 1; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) expected.push_back(i * 15 + j * 3 + 2);
  }
  EXPECT_TRUE(got->ContentEquals(Tensor::FromVector(expected, TensorShape({2, 5, 1}))))
      << got->DebugString();

  got = ExtractSlice(t, *ParseShapeAndSlice("4 5 3 -:-:-"));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->ContentEquals(t));
  EXPECT_FALSE(got->SharesBufferWith(t));

  got = ExtractSlice(t, *ParseShapeAndSlice("4 5 3 0,0:-:-"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->shape(), TensorShape({0, 5, 3}));
}

TEST(ExtractSliceTest, StringsAndShapeMismatch) {
  Tensor t = Tensor::FromVector<std::string>({"a", "b", "c", "d"}, TensorShape({2, 2}));
  StatusOr<Tensor> got = ExtractSlice(t, *ParseShapeAndSlice("2 2 -:1,1"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->ContentEquals(Tensor::FromVector<std::string>({"b", "d"}, TensorShape({2, 1}))));

  got = ExtractSlice(t, *ParseShapeAndSlice("2 3 -:-"));
  EXPECT_TRUE(errors::IsInvalidArgument(got.status())) << got.status();
  EXPECT_TRUE(Mentions(got.status(), "[2,3]")) << got.status();
  EXPECT_TRUE(Mentions(got.status(), "[2,2]")) << got.status();

  got = ExtractSlice(Tensor(DT_RESOURCE, TensorShape({2})), *ParseShapeAndSlice("2 -"));
  EXPECT_TRUE(errors::IsInvalidArgument(got.status())) << got.status();
}


// Keys as TensorFlow 2.21 wrote them into checkpoints of partitioned
// variables and of SaveV2 with slice specs (read from their .index files).
TEST(TensorSliceKeyTest, MatchesTensorFlowsKeys) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(TensorSliceKey("emb", V{0, 0}, V{24, 3}),
            std::string("\x00" "emb\x00\x01\x01\x02\x80\x98\x80\x83", 12));
  EXPECT_EQ(TensorSliceKey("emb", V{47, 0}, V{23, 3}),
            std::string("\x00" "emb\x00\x01\x01\x02\xaf\x97\x80\x83", 12));
  EXPECT_EQ(TensorSliceKey("big", V{100, 0}, V{100, 2}),
            std::string("\x00" "big\x00\x01\x01\x02\xc0\x64\xc0\x64\x80\x82", 14));
  // A whole extent ("-") has length -1.
  EXPECT_EQ(TensorSliceKey("t", V{2, 0}, V{2, -1}),
            std::string("\x00t\x00\x01\x01\x02\x82\x82\x80\x7f", 10));
  EXPECT_EQ(TensorSliceKey("u", V{200000, 0}, V{3, -1}),
            std::string("\x00u\x00\x01\x01\x02\xe3\x0d\x40\x83\x80\x7f", 12));
}

// The encoding preserves order, so keys sort like (name, starts, lengths):
// checked across every byte width the signed numbers take.
TEST(TensorSliceKeyTest, KeysSortLikeTheirExtents) {
  std::vector<int64_t> values = {-(int64_t{1} << 54), -70000, -8193, -65, -64, -1, 0, 1, 63, 64,
                                 8191, 8192, (1 << 20) - 1, 1 << 20, int64_t{1} << 40,
                                 (int64_t{1} << 55) - 1};
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    EXPECT_LT(TensorSliceKey("v", {values[i]}, {1}), TensorSliceKey("v", {values[i + 1]}, {1}))
        << values[i] << " vs " << values[i + 1];
  }
  // Names with the escaped bytes still sort first by name.
  EXPECT_LT(TensorSliceKey(std::string("a\x00", 2), {5}, {1}), TensorSliceKey("a\x01", {0}, {1}));
  EXPECT_LT(TensorSliceKey("a", {99}, {1}), TensorSliceKey("a\xff", {0}, {1}));
}

TEST(CopyBoxTest, CopiesBetweenPiecesOfOneTensor) {
  // A 4x5 tensor 0..19; a piece holding rows 1..2; copy its box rows 1..2,
  // cols 2..4 into a 3x4 box tensor whose origin is (0, 1).
  Tensor full(DT_INT32, TensorShape({4, 5}));
  std::iota(full.data<int32_t>(), full.data<int32_t>() + 20, 0);
  StatusOr<ShapeAndSlice> rows = ParseShapeAndSlice("4 5 1,2:-");
  ASSERT_TRUE(rows.ok());
  StatusOr<Tensor> piece = ExtractSlice(full, *rows);
  ASSERT_TRUE(piece.ok());
  Tensor box(DT_INT32, TensorShape({3, 4}));
  std::fill(box.data<int32_t>(), box.data<int32_t>() + 12, -1);
  CopyBox(*piece, {1, 0}, &box, {0, 1}, {1, 2}, {2, 3});
  std::vector<int32_t> got(box.data<int32_t>(), box.data<int32_t>() + 12);
  EXPECT_EQ(got, (std::vector<int32_t>{-1, -1, -1, -1, -1, 7, 8, 9, -1, 12, 13, 14}));
}

}  // namespace
}  // namespace weir
