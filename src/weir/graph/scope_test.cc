// Literal inputs of the graph builder: integer values stay exact (they never
// pass through double), and converting a literal to a dtype that cannot hold
// it is an error rather than a wrapped value.
#include "weir/graph/scope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <Eigen/Core>

#include "weir/ops/all_ops.h"
#include "weir/ops/const_op.h"

namespace weir {
namespace {

constexpr int64_t kTwoTo53PlusOne = 9007199254740993;  // the first integer double cannot hold
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

class ScopeLiteralTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }
};

const Tensor& ConstValue(const Output& constant) {
  return constant.node()->def().attrs.at("value").tensor();
}

TEST_F(ScopeLiteralTest, Int64ScalarAbove2To53IsExact) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, int64_t{kTwoTo53PlusOne});
  ASSERT_TRUE(root.ok()) << root.status();
  const Tensor& value = ConstValue(c);
  ASSERT_EQ(value.dtype(), DT_INT64);
  ASSERT_EQ(value.shape(), TensorShape({}));
  EXPECT_EQ(value.data<int64_t>()[0], kTwoTo53PlusOne);
}

TEST_F(ScopeLiteralTest, Int64ListKeepsExtremesExactly) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, {kInt64Min, kTwoTo53PlusOne, kInt64Max, int64_t{-1}});
  ASSERT_TRUE(root.ok()) << root.status();
  const Tensor& value = ConstValue(c);
  ASSERT_EQ(value.dtype(), DT_INT64);
  ASSERT_EQ(value.shape(), TensorShape({4}));
  const int64_t* v = value.data<int64_t>();
  EXPECT_EQ(v[0], kInt64Min);
  EXPECT_EQ(v[1], kTwoTo53PlusOne);
  EXPECT_EQ(v[2], kInt64Max);
  EXPECT_EQ(v[3], -1);
}

TEST_F(ScopeLiteralTest, Int32ListIsInt32) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, {1, 2, std::numeric_limits<int32_t>::max()});
  ASSERT_TRUE(root.ok()) << root.status();
  const Tensor& value = ConstValue(c);
  ASSERT_EQ(value.dtype(), DT_INT32);
  ASSERT_EQ(value.shape(), TensorShape({3}));
  EXPECT_EQ(value.data<int32_t>()[0], 1);
  EXPECT_EQ(value.data<int32_t>()[1], 2);
  EXPECT_EQ(value.data<int32_t>()[2], std::numeric_limits<int32_t>::max());
}

TEST_F(ScopeLiteralTest, IntegerLiteralsConvertExactly) {
  // INT64_MAX as uint64: through double it would round to 2^63.
  StatusOr<Tensor> as_uint64 = Input(kInt64Max).TensorAs(DT_UINT64);
  ASSERT_TRUE(as_uint64.ok()) << as_uint64.status();
  EXPECT_EQ(as_uint64->data<uint64_t>()[0], static_cast<uint64_t>(kInt64Max));

  StatusOr<Tensor> as_int64 = Input({7, -8}).TensorAs(DT_INT64);
  ASSERT_TRUE(as_int64.ok()) << as_int64.status();
  EXPECT_EQ(as_int64->shape(), TensorShape({2}));
  EXPECT_EQ(as_int64->data<int64_t>()[1], -8);

  StatusOr<Tensor> as_float = Input(3).TensorAs(DT_FLOAT);
  ASSERT_TRUE(as_float.ok()) << as_float.status();
  EXPECT_EQ(as_float->data<float>()[0], 3.0f);
}

TEST_F(ScopeLiteralTest, LiteralsConvertToSixteenBitFloatsRoundingToNearest) {
  // What gradient code builds for half graphs (1.0, 0.5, 2.0 scalars).
  StatusOr<Tensor> half = Input({1.0, 1.0 / 3, 70000.0}).TensorAs(DT_HALF);
  ASSERT_TRUE(half.ok()) << half.status();
  ASSERT_EQ(half->dtype(), DT_HALF);
  EXPECT_EQ(half->data<Eigen::half>()[0], Eigen::half(1.0f));
  EXPECT_EQ(static_cast<float>(half->data<Eigen::half>()[1]), 0.333251953125f);  // nearest half
  EXPECT_TRUE(std::isinf(static_cast<float>(half->data<Eigen::half>()[2])));  // > 65504
  StatusOr<Tensor> bf16 = Input(2).TensorAs(DT_BFLOAT16);
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(static_cast<float>(bf16->data<Eigen::bfloat16>()[0]), 2.0f);
}

TEST_F(ScopeLiteralTest, LiteralThatDoesNotFitIsAnError) {
  StatusOr<Tensor> too_big = Input(int64_t{1} << 40).TensorAs(DT_INT32);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), Code::kInvalidArgument);
  EXPECT_NE(too_big.status().message().find("1099511627776 does not fit"), std::string::npos)
      << too_big.status().message();

  EXPECT_FALSE(Input(-1).TensorAs(DT_UINT8).ok());
  EXPECT_FALSE(Input(256.0).TensorAs(DT_UINT8).ok());
  EXPECT_FALSE(Input(std::numeric_limits<double>::quiet_NaN()).TensorAs(DT_INT32).ok());
  EXPECT_TRUE(Input(255.0).TensorAs(DT_UINT8).ok());
  // -2^63 is the one int64 whose double is exact at the boundary.
  EXPECT_TRUE(Input(-9223372036854775808.0).TensorAs(DT_INT64).ok());
  EXPECT_FALSE(Input(9223372036854775808.0).TensorAs(DT_INT64).ok());
}

TEST_F(ScopeLiteralTest, OpInputLiteralThatDoesNotFitNamesTheInput) {
  Scope root = Scope::NewRootScope();
  Output x = AddOp(root, "Placeholder", {}, {{"dtype", DT_INT32}}).output(0);
  Output y = AddOp(root, "Add", {x, Input(int64_t{kTwoTo53PlusOne})}).output(0);
  EXPECT_FALSE(y.valid());
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("of op Add"), std::string::npos)
      << root.status().message();
  EXPECT_NE(root.status().message().find("9007199254740993 does not fit in int32"),
            std::string::npos)
      << root.status().message();
}

TEST_F(ScopeLiteralTest, Int64LiteralInputOfAnInt64OpIsExact) {
  Scope root = Scope::NewRootScope();
  Output x = AddOp(root, "Placeholder", {}, {{"dtype", DT_INT64}}).output(0);
  Output y = AddOp(root, "Add", {x, Input(int64_t{kTwoTo53PlusOne})}).output(0);
  ASSERT_TRUE(root.ok()) << root.status();
  const Node* literal = y.node()->data_inputs()[1]->src();
  ASSERT_EQ(literal->type_string(), "Const");
  EXPECT_EQ(literal->def().attrs.at("value").tensor().data<int64_t>()[0], kTwoTo53PlusOne);
}

}  // namespace
}  // namespace weir
