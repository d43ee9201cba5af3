// The stack kernels, run as nodes of one step (step_test_util.h).
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/step_test_util.h"
#include "weir/ops/op_test_util.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

Tensor MaxSize(int32_t n) { return Tensor::Scalar<int32_t>(n); }

void ExpectError(const Status& status, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << status << " lacks '" << part << "'";
  }
}

class StackTest : public ::testing::Test {
 protected:
  Tensor Create(int32_t max_size, DType dtype = DT_FLOAT) {
    return step_.RunOrDie("StackV2", {{"elem_type", dtype}, {"stack_name", "s"}},
                          {MaxSize(max_size)});
  }
  Status Push(const Tensor& stack, Tensor value) {
    DType dtype = value.dtype();
    StatusOr<std::vector<Tensor>> out = step_.Run("StackPushV2", {{"T", dtype}}, {stack, value});
    if (out.ok()) {
      EXPECT_TRUE((*out)[0].ContentEquals(value));  // outputs what it pushed
    }
    return out.status();
  }
  StatusOr<Tensor> Pop(const Tensor& stack, DType dtype = DT_FLOAT) {
    WEIR_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                          step_.Run("StackPopV2", {{"elem_type", dtype}}, {stack}));
    return out[0];
  }

  TestStep step_;
};

TEST_F(StackTest, PopsInReverseOrder) {
  Tensor stack = Create(-1);
  for (float v : {1.0f, 2.0f, 3.0f}) {
    ASSERT_TRUE(Push(stack, Tensor::FromVector<float>({v, 10 * v})).ok());
  }
  for (float v : {3.0f, 2.0f, 1.0f}) {
    StatusOr<Tensor> top = Pop(stack);
    ASSERT_TRUE(top.ok()) << top.status();
    EXPECT_EQ(ToDoubles(*top), (std::vector<double>{v, 10 * v}));
  }
  ExpectError(Pop(stack).status(), {"Stack[s_", "is empty"});
}

TEST_F(StackTest, MaxSizeIsEnforced) {
  Tensor stack = Create(2);
  ASSERT_TRUE(Push(stack, Tensor::Scalar<float>(1)).ok());
  ASSERT_TRUE(Push(stack, Tensor::Scalar<float>(2)).ok());
  ExpectError(Push(stack, Tensor::Scalar<float>(3)), {"overflowed its max_size (2)"});
  ASSERT_TRUE(Pop(stack).ok());
  EXPECT_TRUE(Push(stack, Tensor::Scalar<float>(3)).ok());
}

TEST_F(StackTest, EachRunMakesANewStack) {
  Tensor a = Create(-1);
  Tensor b = Create(-1);
  ASSERT_TRUE(Push(a, Tensor::Scalar<float>(1)).ok());
  ExpectError(Pop(b).status(), {"is empty"});
  EXPECT_TRUE(Pop(a).ok());
}

TEST_F(StackTest, ChecksDTypes) {
  Tensor stack = Create(-1, DT_INT32);
  ExpectError(Push(stack, Tensor::Scalar<float>(1)), {"int32", "float"});
  ASSERT_TRUE(Push(stack, Tensor::Scalar<int32_t>(1)).ok());
  ExpectError(Pop(stack, DT_FLOAT).status(), {"int32", "float"});
}

TEST_F(StackTest, ClosedStackRefusesUse) {
  Tensor stack = Create(-1);
  ASSERT_TRUE(Push(stack, Tensor::Scalar<float>(1)).ok());
  ASSERT_TRUE(step_.Run("StackCloseV2", {}, {stack}).ok());
  ExpectError(Pop(stack).status(), {"already been closed"});
  ExpectError(Push(stack, Tensor::Scalar<float>(1)), {"already been closed"});
}

// Through a Session: a stack lives for one step, in the executor's per-step
// resources, and its errors name the node.
TEST(StackSessionTest, LivesForOneStep) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto stack = ops::StackV2(root, ops::Const(root, Tensor::Scalar<int32_t>(-1)), DT_FLOAT);
  auto push = ops::StackPushV2(root, stack, x);
  auto pop = ops::StackPopV2(
      root.WithOpName("pop").WithControlDependencies({Operation(push.node())}), stack, DT_FLOAT);
  auto lonely_pop = ops::StackPopV2(root.WithOpName("lonely_pop"), stack, DT_FLOAT);
  (void)pop;  // both are run by name
  (void)lonely_pop;
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  for (float v : {1.0f, 2.0f}) {
    Status status = (*session)->Run({{"x", Tensor::FromVector<float>({v, -v})}}, {"pop"}, {}, &out);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(ToDoubles(out[0]), (std::vector<double>{v, -v}));
  }
  // The pushes of earlier steps are gone.
  Status status = (*session)->Run({}, {"lonely_pop"}, {}, &out);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("lonely_pop"), std::string::npos) << status;
  EXPECT_NE(status.message().find("is empty"), std::string::npos) << status;
}

TEST(StackShapeTest, ShapeFunctions) {
  const PartialShape s = PartialShape(std::vector<int64_t>{});
  auto push = InferShapes("StackPushV2", {{"T", DT_FLOAT}}, {s, PartialShape({2, -1})});
  ASSERT_TRUE(push.ok()) << push.status();
  EXPECT_EQ((*push)[0], PartialShape({2, -1}));
  EXPECT_FALSE(InferShapes("StackV2", {{"elem_type", DT_FLOAT}}, {PartialShape({1})}).ok());
  EXPECT_FALSE(InferShapes("StackPopV2", {{"elem_type", DT_FLOAT}}, {PartialShape({2})}).ok());
}

}  // namespace
}  // namespace weir
