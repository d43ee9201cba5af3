#include "weir/framework/tensor_shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace weir {
namespace {

std::vector<int64_t> Dims(const TensorShape& shape) {
  return {shape.dim_sizes().begin(), shape.dim_sizes().end()};
}

TEST(TensorShapeTest, ScalarByDefault) {
  TensorShape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.dims(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_EQ(s.DebugString(), "[]");
}

TEST(TensorShapeTest, NumElements) {
  EXPECT_EQ(TensorShape({2, 3, 4}).num_elements(), 24);
  EXPECT_EQ(TensorShape({5}).num_elements(), 5);
  EXPECT_EQ(TensorShape({3, 0, 7}).num_elements(), 0);
  EXPECT_EQ(TensorShape({1, 1, 1, 1, 1, 1, 1, 1, 9}).num_elements(), 9);
  TensorShape s({2, 3});
  EXPECT_EQ(s.dim_size(0), 2);
  EXPECT_EQ(s.dim_size(1), 3);
  EXPECT_EQ(s.DebugString(), "[2,3]");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "[2,3]");
}

TEST(TensorShapeTest, AddInsertRemoveInline) {
  TensorShape s;
  s.AddDim(4);
  s.AddDim(5);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(s.num_elements(), 20);
  s.InsertDim(0, 3);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{3, 4, 5}));
  s.InsertDim(2, 2);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{3, 4, 2, 5}));
  EXPECT_EQ(s.num_elements(), 120);
  s.RemoveDim(1);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{3, 2, 5}));
  EXPECT_EQ(s.num_elements(), 30);
  s.set_dim(2, 0);
  EXPECT_EQ(s.num_elements(), 0);
  s.set_dim(2, 7);
  EXPECT_EQ(s.num_elements(), 42);
}

TEST(TensorShapeTest, HighRankUsesHeapPathCorrectly) {
  TensorShape s({1, 2, 3, 1, 2, 3});  // rank 6: inline
  s.AddDim(2);                         // rank 7: heap
  EXPECT_EQ(s.rank(), 7);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{1, 2, 3, 1, 2, 3, 2}));
  EXPECT_EQ(s.num_elements(), 72);
  s.InsertDim(3, 5);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{1, 2, 3, 5, 1, 2, 3, 2}));
  EXPECT_EQ(s.num_elements(), 360);
  s.set_dim(7, 1);
  EXPECT_EQ(s.num_elements(), 180);
  EXPECT_EQ(s.DebugString(), "[1,2,3,5,1,2,3,1]");

  TensorShape copy = s;  // copies are independent
  copy.set_dim(0, 10);
  EXPECT_EQ(s.dim_size(0), 1);
  EXPECT_EQ(copy.num_elements(), 1800);

  s.RemoveDim(3);  // rank 7
  s.RemoveDim(6);  // rank 6: back to inline
  EXPECT_EQ(s.rank(), 6);
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(s.num_elements(), 36);
  EXPECT_EQ(s, TensorShape({1, 2, 3, 1, 2, 3}));

  // Assignment across the inline/heap boundary in both directions.
  TensorShape big({2, 2, 2, 2, 2, 2, 2, 2, 2, 2});
  TensorShape small({3});
  small = big;
  EXPECT_EQ(small.num_elements(), 1024);
  EXPECT_EQ(small, big);
  big = TensorShape({4, 4});
  EXPECT_EQ(Dims(big), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(big.num_elements(), 16);
}

TEST(TensorShapeTest, MovesKeepValueAndLeaveAValidSource) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{2, 3},
                                    std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}}) {
    TensorShape source(dims);
    TensorShape moved(std::move(source));
    EXPECT_EQ(Dims(moved), dims);
    // A moved-from shape must still be a consistent shape that can be read
    // and reused (the rank must agree with the storage that holds the dims).
    EXPECT_EQ(static_cast<size_t>(source.rank()), source.dim_sizes().size());
    int64_t product = 1;
    for (int64_t d : source.dim_sizes()) product *= d;
    EXPECT_EQ(source.num_elements(), product) << source.DebugString();
    source.AddDim(5);
    EXPECT_EQ(source.dim_size(source.rank() - 1), 5);

    TensorShape target({9});
    TensorShape again(dims);
    target = std::move(again);
    EXPECT_EQ(Dims(target), dims);
    EXPECT_EQ(static_cast<size_t>(again.rank()), again.dim_sizes().size());
    again = TensorShape({4});
    EXPECT_EQ(again.num_elements(), 4);
  }
}

TEST(TensorShapeTest, Equality) {
  EXPECT_EQ(TensorShape({2, 3}), TensorShape({2, 3}));
  EXPECT_NE(TensorShape({2, 3}), TensorShape({3, 2}));
  EXPECT_NE(TensorShape({6}), TensorShape({2, 3}));
  EXPECT_NE(TensorShape({}), TensorShape({1}));
  EXPECT_NE(TensorShape({1, 1, 1, 1, 1, 1, 1}), TensorShape({1, 1, 1, 1, 1, 1, 2}));
}

TEST(TensorShapeTest, FromDimsAcceptsValidShapes) {
  std::vector<int64_t> dims = {4, 0, 3};
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, TensorShape({4, 0, 3}));
  std::vector<int64_t> big = {int64_t{1} << 31, int64_t{1} << 31};
  s = TensorShape::FromDims(big);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->num_elements(), int64_t{1} << 62);
  std::vector<int64_t> max = {std::numeric_limits<int64_t>::max()};
  EXPECT_TRUE(TensorShape::FromDims(max).ok());
  std::vector<int64_t> zero_first = {0, std::numeric_limits<int64_t>::max(), 5};
  s = TensorShape::FromDims(zero_first);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->num_elements(), 0);
}

TEST(TensorShapeTest, FromDimsRejectsNegativeDims) {
  std::vector<int64_t> dims = {2, -1, 3};
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("[2,-1,3]"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("negative"), std::string::npos) << s.status();
}

TEST(TensorShapeTest, FromDimsRejectsOverflow) {
  std::vector<int64_t> dims = {int64_t{1} << 32, int64_t{1} << 31};  // 2^63
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("elements"), std::string::npos) << s.status();

  std::vector<int64_t> three = {3037000500, 3037000500};  // just over sqrt(2^63)
  EXPECT_FALSE(TensorShape::FromDims(three).ok());
  std::vector<int64_t> fits = {3037000499, 3037000499};
  EXPECT_TRUE(TensorShape::FromDims(fits).ok());
}

TEST(TensorShapeTest, FromDimsRejectsTooHighRank) {
  std::vector<int64_t> ok_dims(TensorShape::kMaxRank, 1);
  StatusOr<TensorShape> s = TensorShape::FromDims(ok_dims);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rank(), TensorShape::kMaxRank);
  std::vector<int64_t> too_many(TensorShape::kMaxRank + 1, 1);
  s = TensorShape::FromDims(too_many);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
}

// Before, the unchecked constructor multiplied without a check: [2^32, 2^32]
// had num_elements() 0, so a buffer of 0 bytes stood for 2^64 elements.
TEST(TensorShapeDeathTest, UncheckedFormsNeverWrap) {
  const int64_t big = int64_t{1} << 32;
  EXPECT_DEATH(TensorShape({big, big}), "2\\^63");
  EXPECT_DEATH(TensorShape({2, -3}), "negative");
  TensorShape s({big});
  EXPECT_DEATH(s.AddDim(big), "2\\^63");
  EXPECT_DEATH(s.InsertDim(0, big), "2\\^63");
  TensorShape t({2, 3});
  EXPECT_DEATH(t.set_dim(1, std::numeric_limits<int64_t>::max()), "2\\^63");
  EXPECT_DEATH(t.set_dim(1, -1), "");
}

TEST(TensorShapeTest, FromDimsRejectsAProductThatWrapsToZero) {
  const int64_t big = int64_t{1} << 32;
  std::vector<int64_t> dims = {big, big};  // 2^64 wraps to exactly 0
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("[4294967296,4294967296]"), std::string::npos)
      << s.status();
  // A zero after the overflow does not excuse it; one before it does.
  std::vector<int64_t> zero_after = {big, big, 0};
  EXPECT_FALSE(TensorShape::FromDims(zero_after).ok());
  std::vector<int64_t> zero_before = {0, big, big};
  EXPECT_TRUE(TensorShape::FromDims(zero_before).ok());
}

TEST(TensorShapeTest, WithStatusMutatorsRefuseAndLeaveTheShape) {
  const int64_t big = int64_t{1} << 32;
  TensorShape s({big});
  Status status = s.AddDimWithStatus(big);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("elements"), std::string::npos) << status;
  EXPECT_EQ(s, TensorShape({big}));
  EXPECT_EQ(s.AddDimWithStatus(-1).code(), Code::kInvalidArgument);
  EXPECT_EQ(s.InsertDimWithStatus(2, 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(s.InsertDimWithStatus(0, big).code(), Code::kInvalidArgument);
  EXPECT_EQ(s.SetDimWithStatus(1, 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(s.SetDimWithStatus(0, -5).code(), Code::kInvalidArgument);
  EXPECT_EQ(s, TensorShape({big}));

  ASSERT_TRUE(s.AddDimWithStatus(3).ok());
  ASSERT_TRUE(s.InsertDimWithStatus(0, 2).ok());
  EXPECT_EQ(s, TensorShape({2, big, 3}));
  EXPECT_EQ(s.num_elements(), 6 * big);
  ASSERT_TRUE(s.SetDimWithStatus(1, 0).ok());
  EXPECT_EQ(s.num_elements(), 0);

  TensorShape high(std::vector<int64_t>(TensorShape::kMaxRank, 1));
  EXPECT_EQ(high.AddDimWithStatus(1).code(), Code::kInvalidArgument);
  EXPECT_EQ(high.rank(), TensorShape::kMaxRank);
}

TEST(PartialShapeTest, FromDimsAndValidate) {
  const int64_t big = int64_t{1} << 40;
  StatusOr<PartialShape> s = PartialShape::FromDims({big, big});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("2^63 - 1"), std::string::npos) << s.status();
  s = PartialShape::FromDims({3, -2});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("[3,-2]"), std::string::npos) << s.status();
  EXPECT_FALSE(PartialShape::FromDims(std::vector<int64_t>(TensorShape::kMaxRank + 1, 1)).ok());

  // An unknown dim may be 0, which makes what follows it not count
  // ([?, 2^62, 2^62] is an empty slice's shape); what precedes it counts.
  EXPECT_TRUE(PartialShape::FromDims({big, -1, 1 << 20}).ok());
  EXPECT_TRUE(PartialShape::FromDims({big, -1, big}).ok());
  EXPECT_TRUE(PartialShape::FromDims({-1, big, big}).ok());
  EXPECT_FALSE(PartialShape::FromDims({big, big, -1}).ok());
  EXPECT_TRUE(PartialShape().Validate().ok());
  EXPECT_FALSE(PartialShape({big, big}).Validate().ok());
  // num_elements() of a shape too large is -1, never a wrapped count.
  EXPECT_EQ(PartialShape({int64_t{1} << 32, int64_t{1} << 32}).num_elements(), -1);
}

TEST(PartialShapeTest, DebugString) {
  EXPECT_EQ(PartialShape().DebugString(), "<unknown>");
  EXPECT_EQ(PartialShape::UnknownRank().DebugString(), "<unknown>");
  EXPECT_EQ(PartialShape({-1, 3}).DebugString(), "[?,3]");
  EXPECT_EQ(PartialShape::UnknownDims(2).DebugString(), "[?,?]");
  EXPECT_EQ(PartialShape(std::vector<int64_t>{}).DebugString(), "[]");
  EXPECT_EQ(PartialShape(TensorShape({2, 784})).DebugString(), "[2,784]");
  std::ostringstream os;
  os << PartialShape({5, -1});
  EXPECT_EQ(os.str(), "[5,?]");
}

TEST(PartialShapeTest, RankAndDefinedness) {
  PartialShape unknown;
  EXPECT_FALSE(unknown.known_rank());
  EXPECT_EQ(unknown.rank(), -1);
  EXPECT_FALSE(unknown.IsFullyDefined());
  EXPECT_EQ(unknown.num_elements(), -1);

  PartialShape partial({-1, 3});
  EXPECT_TRUE(partial.known_rank());
  EXPECT_EQ(partial.rank(), 2);
  EXPECT_EQ(partial.dim(0), PartialShape::kUnknown);
  EXPECT_FALSE(partial.IsFullyDefined());
  EXPECT_EQ(partial.num_elements(), -1);

  PartialShape full({4, 3});
  EXPECT_TRUE(full.IsFullyDefined());
  EXPECT_EQ(full.num_elements(), 12);
  EXPECT_EQ(full.ToTensorShape(), TensorShape({4, 3}));
  PartialShape scalar(TensorShape{});
  EXPECT_TRUE(scalar.IsFullyDefined());
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.num_elements(), 1);
}

TEST(PartialShapeTest, Compatibility) {
  PartialShape unknown;
  PartialShape q3({-1, 3});
  EXPECT_TRUE(unknown.IsCompatibleWith(q3));
  EXPECT_TRUE(q3.IsCompatibleWith(unknown));
  EXPECT_TRUE(q3.IsCompatibleWith(PartialShape({7, 3})));
  EXPECT_TRUE(q3.IsCompatibleWith(PartialShape({7, -1})));
  EXPECT_FALSE(q3.IsCompatibleWith(PartialShape({7, 4})));
  EXPECT_FALSE(q3.IsCompatibleWith(PartialShape({3})));  // rank differs
  EXPECT_FALSE(q3.IsCompatibleWith(PartialShape({-1, 3, 1})));
  EXPECT_TRUE(q3.IsCompatibleWith(TensorShape({100, 3})));
  EXPECT_FALSE(q3.IsCompatibleWith(TensorShape({100, 2})));
  EXPECT_FALSE(PartialShape(std::vector<int64_t>{}).IsCompatibleWith(TensorShape({1})));
  EXPECT_TRUE(unknown.IsCompatibleWith(TensorShape({})));
}

TEST(PartialShapeTest, Merge) {
  StatusOr<PartialShape> m = PartialShape({-1, 3}).Merge(PartialShape({2, -1}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, PartialShape({2, 3}));

  m = PartialShape().Merge(PartialShape({-1, 5}));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, PartialShape({-1, 5}));
  m = PartialShape({-1, 5}).Merge(PartialShape());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, PartialShape({-1, 5}));
  m = PartialShape().Merge(PartialShape());
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->known_rank());

  m = PartialShape({-1, 3}).Merge(PartialShape({2, 4}));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_NE(m.status().message().find("[?,3]"), std::string::npos) << m.status();
  EXPECT_NE(m.status().message().find("[2,4]"), std::string::npos) << m.status();
  EXPECT_FALSE(PartialShape({1}).Merge(PartialShape({1, 1})).ok());
}

TEST(PartialShapeTest, Equality) {
  EXPECT_EQ(PartialShape(), PartialShape::UnknownRank());
  EXPECT_EQ(PartialShape({-1, 2}), PartialShape({-1, 2}));
  EXPECT_FALSE(PartialShape({-1, 2}) == PartialShape({1, 2}));
  // Unknown rank is not the same as rank 0.
  EXPECT_FALSE(PartialShape() == PartialShape(std::vector<int64_t>{}));
}

}  // namespace
}  // namespace weir
