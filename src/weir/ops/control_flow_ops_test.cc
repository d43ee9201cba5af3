// Declarations and shape functions of the control-flow primitives: the
// attrs and defaults TensorFlow's exported graphs carry, Merge's relaxing of
// shapes that differ (a loop's back edge), and scalar predicates.
#include <gtest/gtest.h>

#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

std::vector<PartialShape> Shapes(const std::string& op, AttrMap attrs,
                                 std::vector<PartialShape> inputs) {
  StatusOr<std::vector<PartialShape>> out = InferShapes(op, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<PartialShape>();
}

TEST(ControlFlowOpsTest, SwitchGivesBothOutputsTheDataShape) {
  std::vector<PartialShape> out = Shapes("Switch", {{"T", DT_FLOAT}}, {{2, kUnknown}, kScalar});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], PartialShape({2, kUnknown}));
  EXPECT_EQ(out[1], PartialShape({2, kUnknown}));
}

TEST(ControlFlowOpsTest, SwitchPredicateMustBeAScalar) {
  StatusOr<std::vector<PartialShape>> out = InferShapes("Switch", {{"T", DT_FLOAT}}, {{3}, {2}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("test_node"), std::string::npos) << out.status();
}

TEST(ControlFlowOpsTest, MergeKeepsWhatItsInputsAgreeOn) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"N", int64_t{2}}};
  std::vector<PartialShape> same = Shapes("Merge", attrs, {{2, 3}, {2, 3}});
  ASSERT_EQ(same.size(), 2u);
  EXPECT_EQ(same[0], PartialShape({2, 3}));
  EXPECT_EQ(same[1], kScalar);
  EXPECT_EQ(Shapes("Merge", attrs, {{2, 3}, {2, 4}})[0], PartialShape({2, kUnknown}));
  EXPECT_FALSE(Shapes("Merge", attrs, {{2, 3}, {2}})[0].known_rank());
  // A back edge whose shape is not known yet.
  EXPECT_FALSE(Shapes("Merge", attrs, {{2, 3}, PartialShape()})[0].known_rank());
}

TEST(ControlFlowOpsTest, EnterHasTensorFlowsDefaults) {
  StatusOr<NodeDef> node = MakeTestNode("Enter", {{"T", DT_INT32}, {"frame_name", "loop"}}, 1);
  ASSERT_TRUE(node.ok()) << node.status();
  bool is_constant = true;
  int64_t parallel_iterations = 0;
  ASSERT_TRUE(GetAttr(node->attrs, "is_constant", &is_constant).ok());
  ASSERT_TRUE(GetAttr(node->attrs, "parallel_iterations", &parallel_iterations).ok());
  EXPECT_FALSE(is_constant);
  EXPECT_EQ(parallel_iterations, 10);
  EXPECT_EQ(Shapes("Enter", {{"T", DT_INT32}, {"frame_name", "loop"}}, {{4}})[0], PartialShape({4}));
}

TEST(ControlFlowOpsTest, LoopCondTakesAScalar) {
  EXPECT_EQ(Shapes("LoopCond", {}, {kScalar})[0], kScalar);
  EXPECT_FALSE(InferShapes("LoopCond", {}, {{2}}).ok());
  // As TensorFlow: a scalar whatever is known of the input (a fed [6] is
  // refused when the step runs).
  EXPECT_EQ(Shapes("LoopCond", {}, {PartialShape::UnknownRank()})[0], kScalar);
}

TEST(ControlFlowOpsTest, ExitNextIterationAndControlTriggerAreDeclared) {
  EXPECT_EQ(Shapes("Exit", {{"T", DT_FLOAT}}, {{5}})[0], PartialShape({5}));
  EXPECT_EQ(Shapes("NextIteration", {{"T", DT_FLOAT}}, {{5}})[0], PartialShape({5}));
  RegisterAllOps();
  StatusOr<const OpDef*> trigger = OpRegistry::Global()->LookUp("ControlTrigger");
  ASSERT_TRUE(trigger.ok()) << trigger.status();
  EXPECT_TRUE((*trigger)->inputs.empty());
  EXPECT_TRUE((*trigger)->outputs.empty());
}

}  // namespace
}  // namespace weir
