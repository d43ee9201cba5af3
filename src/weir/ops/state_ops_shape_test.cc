// A resource variable's handle carries its declared shape and dtype
// (InferenceContext handle data) to ReadVariableOp, also through Identity
// and Switch (as TensorFlow's "handle shapes and types"; checked against
// TensorFlow 2.21 by hand: read through Identity or Switch is [2,3], through
// Merge unknown, a read of another dtype refused).
#include <gtest/gtest.h>

#include "weir/ops/all_ops.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

class StateOpsShapeTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }
  static PartialShape ShapeOf(const Output& out) { return out.node()->output_shape(out.index()); }
};

TEST_F(StateOpsShapeTest, ReadsHaveTheVariablesDeclaredShape) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root, DT_FLOAT, PartialShape({2, 3}));
  auto pred = ops::Placeholder(root, DT_BOOL, {{"shape", PartialShape(std::vector<int64_t>{})}});
  auto direct = ops::ReadVariableOp(root, v, DT_FLOAT);
  auto through_identity = ops::ReadVariableOp(root, ops::Identity(root, v), DT_FLOAT);
  auto through_switch = ops::ReadVariableOp(root, ops::Switch(root, v, pred).output(1), DT_FLOAT);
  auto through_merge = ops::ReadVariableOp(root, ops::Merge(root, {v, v}).output(0), DT_FLOAT);
  auto unknown = ops::ReadVariableOp(
      root, ops::VarHandleOp(root, DT_FLOAT, PartialShape::UnknownRank()), DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(ShapeOf(direct), PartialShape({2, 3}));
  EXPECT_EQ(ShapeOf(through_identity), PartialShape({2, 3}));
  EXPECT_EQ(ShapeOf(through_switch), PartialShape({2, 3}));
  EXPECT_FALSE(ShapeOf(through_merge).known_rank());
  EXPECT_FALSE(ShapeOf(unknown).known_rank());
}

TEST_F(StateOpsShapeTest, ReadOfAnotherDTypeIsRefusedNamingTheNode) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root, DT_FLOAT, PartialShape({2}));
  ops::ReadVariableOp(root.WithOpName("wrong_read"), v, DT_INT32);
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("wrong_read"), std::string::npos) << root.status();
  EXPECT_NE(root.status().message().find("int32"), std::string::npos) << root.status();
}

}  // namespace
}  // namespace weir
