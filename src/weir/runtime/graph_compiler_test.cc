#include "weir/runtime/graph_compiler.h"

#include <gtest/gtest.h>

#include "weir/graph/graph_constructor.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

class GraphCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  // Imports `root` into graph_ and compiles it for `signature`.
  StatusOr<CompiledGraph> Compile(const Scope& root, const StepSignature& signature,
                                  int num_devices = 1, CompileOptions options = {}) {
    EXPECT_TRUE(root.ok()) << root.status();
    graph_ = std::make_unique<Graph>();
    WEIR_RETURN_IF_ERROR(ImportGraphDef(root.ToGraphDef(), graph_.get()));
    devices_ = DeviceMgr::NewCpuDevices(num_devices, 1);
    CompileEnv env;
    env.devices = devices_->Infos();
    env.kernels = KernelRegistry::Global();
    env.host_device = devices_->devices().front().get();
    env.incarnation = [this](const std::string& d) { return devices_->Incarnation(d); };
    return CompileGraph(*graph_, signature, env, options);
  }

  static const PassRecord* FindPass(const CompiledGraph& compiled, const std::string& name) {
    for (const PassRecord& pass : compiled.passes) {
      if (pass.pass == name) return &pass;
    }
    return nullptr;
  }

  std::unique_ptr<Graph> graph_;
  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(GraphCompilerTest, LeavesTheSourceGraphAloneAndPrunes) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({2})}});
  auto y = ops::Neg(root.WithOpName("y"), x);
  ops::Exp(root.WithOpName("unused"), y);
  CompileOptions options;
  options.record_passes = true;
  StatusOr<CompiledGraph> compiled = Compile(root, {{"x"}, {"y"}, {}}, 1, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(graph_->num_nodes(), 3) << "the session's graph must not change";
  EXPECT_NE(graph_->FindNode("unused"), nullptr);

  ASSERT_EQ(compiled->feeds.size(), 1u);
  EXPECT_EQ(compiled->feeds[0].name, "x");
  EXPECT_EQ(compiled->feeds[0].dtype, DT_FLOAT);
  EXPECT_EQ(compiled->feeds[0].shape, PartialShape({2}));
  EXPECT_EQ(compiled->fetches, std::vector<std::string>{"y"});
  ASSERT_EQ(compiled->partitions.size(), 1u);
  const Graph& part = *compiled->partitions[0].graph;
  EXPECT_EQ(part.FindNode("unused"), nullptr);
  EXPECT_EQ(part.FindNode("x"), nullptr) << "a fed placeholder is replaced by its _Arg";
  ASSERT_NE(part.FindNode("y"), nullptr);
  EXPECT_EQ(part.FindNode("y")->assigned_device(), devices_->Infos()[0].name);

  const PassRecord* rewrite = FindPass(*compiled, "rewrite feeds and fetches, prune");
  ASSERT_NE(rewrite, nullptr) << DescribePasses(compiled->passes);
  // 3 nodes + _Arg + _Retval, then x and unused pruned.
  EXPECT_EQ(rewrite->nodes_before, 3);
  EXPECT_EQ(rewrite->nodes_after, 3);
  EXPECT_NE(DescribePasses(compiled->passes).find("pruned 2 nodes"), std::string::npos)
      << DescribePasses(compiled->passes);
  EXPECT_NE(FindPass(*compiled, "place"), nullptr);
}

TEST_F(GraphCompilerTest, PassesAreRecordedOnlyWhenAsked) {
  Scope root = Scope::NewRootScope();
  ops::Neg(root.WithOpName("y"), ops::Const(root, 1.f));
  StatusOr<CompiledGraph> compiled = Compile(root, {{}, {"y"}, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(compiled->passes.empty());
}

TEST_F(GraphCompilerTest, SplitsAcrossDevicesIntoGraphDefsWithTransfers) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x").WithDevice("/device:CPU:0"), DT_FLOAT);
  auto y = ops::Neg(root.WithOpName("y").WithDevice("/device:CPU:1"), x);
  ops::Exp(root.WithOpName("z").WithDevice("/device:CPU:0"), y);
  StatusOr<CompiledGraph> compiled = Compile(root, {{"x"}, {"z"}, {}}, 2);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(compiled->partitions.size(), 2u);
  int sends = 0, recvs = 0;
  for (const CompiledPartition& partition : compiled->partitions) {
    EXPECT_EQ(partition.graph, nullptr);
    for (const NodeDef& node : partition.def.nodes) {
      EXPECT_EQ(node.device, partition.device) << node.name;
      sends += node.op == "_Send";
      recvs += node.op == "_Recv";
    }
  }
  EXPECT_EQ(sends, 2);  // x to CPU:1, y back to CPU:0
  EXPECT_EQ(recvs, 2);
}

TEST_F(GraphCompilerTest, BadSignaturesNameWhatIsWrong) {
  Scope root = Scope::NewRootScope();
  ops::Neg(root.WithOpName("y"), ops::Const(root, 1.f));
  EXPECT_EQ(Compile(root, {{"nope"}, {"y"}, {}}).status().code(), Code::kNotFound);
  EXPECT_EQ(Compile(root, {{}, {"y:3"}, {}}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Compile(root, {{}, {}, {"ghost"}}).status().code(), Code::kNotFound);
  Status none = Compile(root, {{}, {}, {}}).status();
  EXPECT_EQ(none.code(), Code::kInvalidArgument);
  EXPECT_NE(none.message().find("at least one fetch or target"), std::string::npos) << none;
}

}  // namespace
}  // namespace weir
