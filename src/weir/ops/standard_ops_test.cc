// The C++ builder: Scope naming, devices, control dependencies, colocation,
// literal inputs and build-time errors that point at the caller's line.
#include "weir/ops/standard_ops.h"

#include <gtest/gtest.h>

#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

class BuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }
};

TEST_F(BuilderTest, NamesFollowScopesAndStayUnique) {
  Scope root = Scope::NewRootScope();
  Scope layer = root.NewSubScope("layer");
  auto a = ops::Const(layer, 1.f);
  auto b = ops::Const(layer, 2.f);
  auto c = ops::Add(layer.WithOpName("sum"), a, b);
  Scope layer_again = root.NewSubScope("layer");
  auto d = ops::Const(layer_again, 3.f);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(a.node()->name(), "layer/Const");
  EXPECT_EQ(b.node()->name(), "layer/Const_1");
  EXPECT_EQ(c.node()->name(), "layer/sum");
  EXPECT_EQ(d.node()->name(), "layer_1/Const");
}

TEST_F(BuilderTest, TypeAttrsAreInferredAndLiteralsTakeTheOpsDtype) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Mul(root, x, 2.0f);  // a float literal becomes a double Const
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(y.dtype(), DT_DOUBLE);
  const Node* literal = y.node()->data_inputs()[1]->src();
  EXPECT_EQ(literal->type_string(), "Const");
  EXPECT_EQ(literal->output_type(0), DT_DOUBLE);
}

TEST_F(BuilderTest, ShapesAreInferredAtBuildTime) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {{"shape", PartialShape({-1, 784})}});
  auto w = ops::Const(root, Tensor(DT_FLOAT, TensorShape({784, 10})));
  auto y = ops::MatMul(root, x, w);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(y.shape(), PartialShape({-1, 10}));
}

TEST_F(BuilderTest, ErrorsCarryTheCallersLineAndLaterBuildsAreNoOps) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, Tensor(DT_FLOAT, TensorShape({2, 3})));
  auto b = ops::Const(root, Tensor(DT_FLOAT, TensorShape({4, 5})));
  int line = __LINE__ + 1;
  auto bad = ops::MatMul(root.WithOpName("bad"), a, b);
  EXPECT_FALSE(bad.valid());
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.status().code(), Code::kInvalidArgument);
  EXPECT_NE(root.status().message().find(StrCat("standard_ops_test.cc:", line)), std::string::npos)
      << root.status();
  EXPECT_NE(root.status().message().find("[2,3]"), std::string::npos) << root.status();
  auto after = ops::Neg(root, a);
  EXPECT_FALSE(after.valid());
  EXPECT_EQ(root.graph()->FindNode("bad"), nullptr);
}

TEST_F(BuilderTest, DtypeMismatchIsReported) {
  Scope root = Scope::NewRootScope();
  auto f = ops::Placeholder(root.WithOpName("f"), DT_FLOAT);
  auto i = ops::Placeholder(root.WithOpName("i"), DT_INT32);
  ops::Add(root, f, i);
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("int32"), std::string::npos) << root.status();
}

TEST_F(BuilderTest, DevicesControlDependenciesAndColocation) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root.WithOpName("a"), 1.f);
  auto b =
      ops::Neg(root.WithOpName("b").WithDevice("/device:CPU:1").WithControlDependencies({a}), a);
  auto c = ops::Neg(root.WithOpName("c").ColocateWith(b), a);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(b.node()->requested_device(), "/device:CPU:1");
  bool has_control = false;
  for (const Edge* e : b.node()->in_edges())
    has_control |= e->IsControlEdge() && e->src() == a.node();
  EXPECT_TRUE(has_control);
  EXPECT_EQ(c.node()->def().attrs.at("_class").list().s, std::vector<std::string>{"loc:@b"});
  GraphDef def = root.ToGraphDef();
  EXPECT_EQ(def.nodes[1].inputs, (std::vector<std::string>{"a", "^a"}));
  EXPECT_FALSE(def.nodes[1].source_location.empty());
}

}  // namespace
}  // namespace weir
