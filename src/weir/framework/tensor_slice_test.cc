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

}  // namespace
}  // namespace weir
