// Variable::Create and GroupInitializers: names, dtype and shape, and the
// initializer's value.
#include "weir/train/variables.h"

#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

TEST(VariablesTest, CreateNamesNodesAfterTheVariable) {
  Scope root = Scope::NewRootScope();
  Scope layer = root.NewSubScope("layer");
  auto w = Variable::Create(layer, "w", ops::Const(layer, {{1.f, 2.f}, {3.f, 4.f}}));
  auto w2 = Variable::Create(layer, "w", ops::Const(layer, {5.0}));
  ASSERT_TRUE(w.ok() && w2.ok()) << root.status();
  EXPECT_EQ(w->name, "layer/w");
  EXPECT_EQ(w->value.node()->name(), "layer/w/read");
  EXPECT_EQ(w->initializer.name(), "layer/w/Assign");
  EXPECT_EQ(w->dtype, DT_FLOAT);
  EXPECT_EQ(w->shape, PartialShape({2, 2}));
  EXPECT_EQ(w2->name, "layer/w_1");
  EXPECT_EQ(w2->value.node()->name(), "layer/w_1/read");
  EXPECT_EQ(w2->dtype, DT_DOUBLE);

  Operation init = GroupInitializers(root, {*w, *w2});
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {w->value.name(), w2->value.name()}, {}, &out).ok());
  EXPECT_EQ(out[0].data<float>()[3], 4.f);
  EXPECT_EQ(out[1].data<double>()[0], 5.0);
}

TEST(VariablesTest, InvalidInitialValueIsAnError) {
  Scope root = Scope::NewRootScope();
  auto w = Variable::Create(root, "w", Output());
  EXPECT_EQ(w.status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(root.ok());
}

}  // namespace
}  // namespace weir
