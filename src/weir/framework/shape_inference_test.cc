#include "weir/framework/shape_inference.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "weir/framework/node_def.h"
#include "weir/framework/op_def.h"

namespace weir {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(InferenceContextTest, DimArithmeticIsCheckedAndKeepsUnknowns) {
  int64_t out = 0;
  ASSERT_TRUE(InferenceContext::AddDims(2, 3, "sum", &out).ok());
  EXPECT_EQ(out, 5);
  ASSERT_TRUE(InferenceContext::AddDims(-1, 3, "sum", &out).ok());
  EXPECT_EQ(out, PartialShape::kUnknown);
  ASSERT_TRUE(InferenceContext::MultiplyDims(4, -1, "product", &out).ok());
  EXPECT_EQ(out, PartialShape::kUnknown);
  ASSERT_TRUE(InferenceContext::MultiplyDims(int64_t{1} << 31, int64_t{1} << 31, "p", &out).ok());
  EXPECT_EQ(out, int64_t{1} << 62);

  Status s = InferenceContext::AddDims(kMax, 1, "Pad output dim", &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), "Pad output dim")) << s;
  EXPECT_TRUE(Contains(s.message(), "9223372036854775807")) << s;
  s = InferenceContext::MultiplyDims(int64_t{1} << 32, int64_t{1} << 32, "Tile dim", &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), "4294967296")) << s;
}

TEST(InferenceContextTest, RankFromLengthIsBounded) {
  StatusOr<int> rank = InferenceContext::RankFromLength(-1, "multiples");
  ASSERT_TRUE(rank.ok());
  EXPECT_EQ(*rank, -1);
  rank = InferenceContext::RankFromLength(TensorShape::kMaxRank, "multiples");
  ASSERT_TRUE(rank.ok());
  EXPECT_EQ(*rank, TensorShape::kMaxRank);
  // Before, a shape input of shape [2^40] was cast to int and sized a vector.
  rank = InferenceContext::RankFromLength(int64_t{1} << 40, "multiples");
  ASSERT_FALSE(rank.ok());
  EXPECT_TRUE(Contains(rank.status().message(), "multiples")) << rank.status();
  EXPECT_TRUE(Contains(rank.status().message(), "1099511627776")) << rank.status();
}

// The registry's wrapper checks every shape function's outputs, so one
// that forgets a check cannot hand the graph a shape too large.
TEST(InferenceContextTest, RegisteredShapeFnsHaveTheirOutputsChecked) {
  StatusOr<OpDef> op = OpDefBuilder("Sloppy")
                           .Output("a: float")
                           .Output("b: float")
                           .SetShapeFn([](InferenceContext* c) {
                             c->set_output(0, PartialShape({2, 3}));
                             c->set_output(1, PartialShape({int64_t{1} << 40, int64_t{1} << 40}));
                             return Status::OK();
                           })
                           .Build();
  ASSERT_TRUE(op.ok()) << op.status();
  NodeDef node;
  node.name = "n";
  node.op = "Sloppy";
  InferenceContext context(&node, {}, {}, 2);
  Status s = op->shape_fn(&context);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), "output 1")) << s;
  EXPECT_TRUE(Contains(s.message(), "2^63 - 1")) << s;

  InferenceContext negative(&node, {}, {}, 2);
  negative.set_output(0, PartialShape({-7}));
  EXPECT_EQ(negative.CheckOutputs().code(), Code::kInvalidArgument);
  InferenceContext fine(&node, {}, {}, 2);
  fine.set_output(0, PartialShape({-1, int64_t{1} << 40}));
  EXPECT_TRUE(fine.CheckOutputs().ok());
}

}  // namespace
}  // namespace weir
