// Hostile graphs through the session and executor: extreme fan-in and
// fan-out compile in linear time, user-written internal nodes are refused,
// and the call frame cannot be written twice or read out of range.
#include <gtest/gtest.h>

#include <limits>

#include "weir/base/cancellation.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/cpu_device.h"
#include "weir/runtime/executor.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

constexpr int kWide = 200000;

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             AttrMap attrs = {}) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs = std::move(attrs);
  return def;
}

NodeDef ScalarPlaceholder(const std::string& name) {
  return Node(name, "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({})}});
}

class HostileSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }
  static std::unique_ptr<Session> NewSession(int devices = 1) {
    SessionOptions options;
    options.num_cpu_devices = devices;
    options.intra_op_threads = 1;
    options.inter_op_threads = 2;
    StatusOr<std::unique_ptr<Session>> session = Session::New(options);
    EXPECT_TRUE(session.ok()) << session.status();
    return std::move(session).value();
  }
};

// A fed tensor with 200k consumers: the feed rewrite removed each edge with a
// find-and-erase on two vectors (quadratic).
TEST_F(HostileSessionTest, FedTensorWithManyConsumersCompilesInLinearTime) {
  GraphDef def;
  def.nodes.push_back(ScalarPlaceholder("x"));
  NodeDef sum = Node("sum", "AddN", {}, {{"T", DT_FLOAT}, {"N", int64_t{kWide}}});
  sum.inputs.assign(kWide, "x");
  def.nodes.push_back(std::move(sum));
  auto session = NewSession();
  ASSERT_TRUE(session->Create(def).ok());
  std::vector<Tensor> out;
  Status s = session->Run({{"x", Tensor::Scalar<float>(0.5f)}}, {"sum"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 0.5f * kWide);
}

// 200k control inputs on one node, 1% across devices (Send/Recv pairs).
TEST_F(HostileSessionTest, ManyControlInputsCompileInLinearTime) {
  GraphDef def;
  NodeDef sink = Node("sink", "NoOp", {});
  for (int i = 0; i < kWide; ++i) {
    std::string name = "n" + std::to_string(i);
    def.nodes.push_back(Node(name, "NoOp", {}));
    if (i % 100 == 0) def.nodes.back().device = "/device:CPU:1";
    sink.inputs.push_back("^" + name);
  }
  def.nodes.push_back(std::move(sink));
  auto session = NewSession(2);
  ASSERT_TRUE(session->Create(def).ok());
  std::vector<Tensor> out;
  Status s = session->Run({}, {}, {"sink"}, &out);
  EXPECT_TRUE(s.ok()) << s;
}

// A _Retval in the user's graph could overwrite a fetch's slot; _Arg could
// read another feed's value.
TEST_F(HostileSessionTest, UserGraphsMayNotHoldInternalOps) {
  GraphDef def;
  def.nodes = {ScalarPlaceholder("x"),
               Node("evil", "_Retval", {"x"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}})};
  auto session = NewSession();
  Status s = session->Create(def);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'evil'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("_Retval"), std::string::npos) << s;
  // The session still works with a clean graph, and its own rewrite (which
  // adds _Arg and _Retval) is unaffected.
  def.nodes.pop_back();
  ASSERT_TRUE(session->Create(def).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(3)}}, {"x"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 3.f);
}

class InternalOpsTest : public HostileSessionTest {
 protected:
  Status Run(std::vector<NodeDef> nodes, CallFrame* frame) {
    GraphDef def;
    def.nodes = std::move(nodes);
    graph_ = std::make_unique<Graph>();
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, graph_.get(), {.allow_internal_ops = true}));
    WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                          Executor::Create(*graph_, &device_, *KernelRegistry::Global()));
    CancellationManager cancellation;
    Executor::Args args;
    args.cancellation = &cancellation;
    args.call_frame = frame;
    return executor->Run(args);
  }
  CpuDevice device_{"/job:localhost/replica:0/task:0/device:CPU:0", 1};
  std::unique_ptr<Graph> graph_;
};

// The index attr is int64; 2^32 was truncated to int and read feed 0.
TEST_F(InternalOpsTest, ArgIndexThatDoesNotFitAnIntIsAnError) {
  CallFrame frame({Tensor::Scalar<float>(7)}, 1);
  int64_t index = int64_t{1} << 32;
  Status s = Run({Node("a", "_Arg", {}, {{"T", DT_FLOAT}, {"index", index}}),
                  Node("r", "_Retval", {"a"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}})},
                 &frame);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("4294967296"), std::string::npos) << s;
  EXPECT_FALSE(frame.retvals()[0].IsInitialized());
  s = Run({Node("a", "_Arg", {}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}),
           Node("r", "_Retval", {"a"}, {{"T", DT_FLOAT}, {"index", index + 1}})},
          &frame);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'r'"), std::string::npos) << s;
}

TEST_F(InternalOpsTest, RetvalSlotSetTwiceIsAnError) {
  CallFrame frame({}, 1);
  auto constant = [](const std::string& name, float v) {
    return Node(name, "Const", {}, {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(v)}});
  };
  Status s = Run({constant("a", 1), constant("b", 2),
                  Node("ra", "_Retval", {"a"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}),
                  Node("rb", "_Retval", {"b"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}})},
                 &frame);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("index 0"), std::string::npos) << s;
  EXPECT_NE(s.message().find("set twice"), std::string::npos) << s;
}

TEST(CallFrameTest, RefusesOutOfRangeAndSecondWrites) {
  CallFrame frame({Tensor::Scalar<float>(1)}, 2);
  EXPECT_TRUE(frame.GetArg(0).ok());
  EXPECT_EQ(frame.GetArg(1).status().code(), Code::kInternal);
  EXPECT_EQ(frame.GetArg(int64_t{1} << 32).status().code(), Code::kInternal);
  EXPECT_EQ(frame.GetArg(-1).status().code(), Code::kInternal);
  EXPECT_EQ(frame.SetRetval(2, Tensor::Scalar<float>(1)).code(), Code::kInternal);
  EXPECT_EQ(frame.SetRetval(int64_t{1} << 32, Tensor::Scalar<float>(1)).code(), Code::kInternal);
  EXPECT_TRUE(frame.SetRetval(1, Tensor::Scalar<float>(5)).ok());
  Status again = frame.SetRetval(1, Tensor::Scalar<float>(6));
  EXPECT_EQ(again.code(), Code::kFailedPrecondition) << again;
  EXPECT_NE(again.message().find("index 1"), std::string::npos) << again;
  EXPECT_EQ(frame.retvals()[1].scalar<float>(), 5.f) << "the first value stays";
  EXPECT_TRUE(frame.SetRetval(0, Tensor::Scalar<float>(4)).ok());
}

}  // namespace
}  // namespace weir
