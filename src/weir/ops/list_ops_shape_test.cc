// The TensorList shape functions with the list's handle data
// (InferenceContext::input_handle_data): a list made with a known element
// shape reads back with it through the ops that pass the list on, and a
// reader that disagrees with the list is refused at graph construction.
// python/tests/test_tensor_list_shapes.py checks many more cases against
// TensorFlow itself.
#include <gtest/gtest.h>

#include "weir/ops/all_ops.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

class ListOpsShapeTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }
  static PartialShape ShapeOf(const Output& out) { return out.node()->output_shape(out.index()); }
  static Output Ints(const Scope& scope, std::vector<int32_t> values) {
    const int64_t n = static_cast<int64_t>(values.size());
    return ops::Const(scope, Tensor::FromVector<int32_t>(values, TensorShape({n})));
  }
};

TEST_F(ListOpsShapeTest, ReadersGetTheElementShapeTheListWasMadeWith) {
  Scope root = Scope::NewRootScope();
  auto unknown = ops::Const(root, -1);
  auto list = ops::TensorListReserve(root, Ints(root, {2, 3}), ops::Const(root, 4), DT_FLOAT);
  // Passed on by Identity and by the ops that change the list.
  auto changed = ops::Identity(root, list);
  changed = ops::TensorListSetItem(root, changed, ops::Const(root, 0),
                                   ops::Fill(root, Ints(root, {2, 3}), ops::Const(root, 0.f)));
  changed = ops::TensorListPushBack(root, changed,
                                    ops::Fill(root, Ints(root, {2, 3}), ops::Const(root, 1.f)));
  auto popped = ops::TensorListPopBack(root, changed, unknown, DT_FLOAT);
  auto item =
      ops::TensorListGetItem(root, popped.output(0), ops::Const(root, 0), unknown, DT_FLOAT);
  auto stacked = ops::TensorListStack(root, list, unknown, DT_FLOAT, {{"num_elements", 4}});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(ShapeOf(popped.output(1)), PartialShape({2, 3}));
  EXPECT_EQ(ShapeOf(item), PartialShape({2, 3}));
  EXPECT_EQ(ShapeOf(stacked), PartialShape({4, 2, 3}));
  // A partly known element shape merges with what the reader asks for.
  auto partial = ops::TensorListReserve(root, Ints(root, {-1, 3}), ops::Const(root, 4), DT_FLOAT);
  auto merged =
      ops::TensorListGetItem(root, partial, ops::Const(root, 0), Ints(root, {2, -1}), DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(ShapeOf(merged), PartialShape({2, 3}));
}

TEST_F(ListOpsShapeTest, UnknownWhereNothingIsKnown) {
  Scope root = Scope::NewRootScope();
  auto unknown = ops::Const(root, -1);
  auto list = ops::TensorListReserve(root, unknown, ops::Const(root, 4), DT_FLOAT);
  auto item = ops::TensorListGetItem(root, list, ops::Const(root, 0), unknown, DT_FLOAT);
  // PopBack's element_shape is only for an unset element: without list
  // data its output is unknown, as in TensorFlow.
  auto popped = ops::TensorListPopBack(root, list, Ints(root, {2, 3}), DT_FLOAT);
  // Merge (of a loop or a cond) keeps no handle data.
  auto known = ops::TensorListReserve(root, Ints(root, {2, 3}), ops::Const(root, 4), DT_FLOAT);
  auto merge = ops::Merge(root, {known, known});
  auto after_merge =
      ops::TensorListGetItem(root, merge.output(0), ops::Const(root, 0), unknown, DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_FALSE(ShapeOf(item).known_rank());
  EXPECT_FALSE(ShapeOf(popped.output(1)).known_rank());
  EXPECT_FALSE(ShapeOf(after_merge).known_rank());
}

TEST_F(ListOpsShapeTest, ReadersThatDisagreeWithTheListAreRefused) {
  {
    Scope root = Scope::NewRootScope();
    auto list = ops::TensorListReserve(root, Ints(root, {2, 3}), ops::Const(root, 4), DT_FLOAT);
    ops::TensorListGetItem(root.WithOpName("wrong_shape"), list, ops::Const(root, 0),
                           Ints(root, {5, 5}), DT_FLOAT);
    ASSERT_FALSE(root.ok());
    EXPECT_NE(root.status().message().find("wrong_shape"), std::string::npos) << root.status();
    EXPECT_NE(root.status().message().find("[5,5]"), std::string::npos) << root.status();
  }
  {
    Scope root = Scope::NewRootScope();
    auto list = ops::TensorListReserve(root, Ints(root, {2, 3}), ops::Const(root, 4), DT_FLOAT);
    ops::TensorListStack(root.WithOpName("wrong_dtype"), list, ops::Const(root, -1), DT_INT32);
    ASSERT_FALSE(root.ok());
    EXPECT_NE(root.status().message().find("wrong_dtype"), std::string::npos) << root.status();
    EXPECT_NE(root.status().message().find("int32"), std::string::npos) << root.status();
  }
}

}  // namespace
}  // namespace weir
