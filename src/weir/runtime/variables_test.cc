// Resource variables through sessions: state outlives steps and signatures,
// containers are shared or private as documented, updates are
// copy-on-write, and misuse is a clear error.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

struct Model {
  Scope root = Scope::NewRootScope();
  Output handle, read, init, add, sub, gather, scatter_bad;
};

// A [3] float variable `w` with ops to init it to {1,2,3}, add/sub {10,20,30}.
Model BuildModel(const std::string& container = "", const std::string& device = "") {
  Model m;
  Scope s = m.root.WithDevice(device);
  m.handle = ops::VarHandleOp(s.WithOpName("w"), DT_FLOAT, PartialShape({3}), {{"container", container}});
  m.read = ops::ReadVariableOp(m.root.WithOpName("read"), m.handle, DT_FLOAT);
  m.init = Output(ops::AssignVariableOp(m.root.WithOpName("init"), m.handle, {1.f, 2.f, 3.f}).node());
  m.add = Output(ops::AssignAddVariableOp(m.root.WithOpName("add"), m.handle, {10.f, 20.f, 30.f}).node());
  m.sub = Output(ops::AssignSubVariableOp(m.root.WithOpName("sub"), m.handle, {1.f, 1.f, 1.f}).node());
  m.gather = ops::ResourceGather(m.root.WithOpName("gather"), m.handle, {2, 0}, DT_FLOAT);
  m.scatter_bad =
      Output(ops::ResourceScatterAdd(m.root.WithOpName("scatter_bad"), m.handle, {5}, {1.f}).node());
  ops::VarIsInitializedOp(m.root.WithOpName("is_init"), m.handle);
  ops::DestroyResourceOp(m.root.WithOpName("destroy"), m.handle);
  return m;
}

std::unique_ptr<Session> NewSession(const Model& m, int devices = 1) {
  EXPECT_TRUE(m.root.ok()) << m.root.status();
  SessionOptions options;
  options.num_cpu_devices = devices;
  auto session = Session::New(options);
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE((*session)->Create(m.root.ToGraphDef()).ok());
  return std::move(session).value();
}

std::vector<float> Values(const Tensor& t) { return {t.flat<float>().begin(), t.flat<float>().end()}; }

TEST(VariablesTest, ReadBeforeInitIsFailedPreconditionNamingTheVariable) {
  Model m = BuildModel();
  auto session = NewSession(m);
  std::vector<Tensor> out;
  Status s = session->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s;
  ASSERT_TRUE(session->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
}

TEST(VariablesTest, StateOutlivesStepsAndSignatures) {
  Model m = BuildModel();
  auto session = NewSession(m);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {"sub"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"read", "is_init"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{20, 41, 62}));
  EXPECT_TRUE(out[1].scalar<bool>());
  ASSERT_TRUE(session->Run({}, {"gather"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{62, 20}));
}

TEST(VariablesTest, UpdatesAreCopyOnWrite) {
  Model m = BuildModel();
  auto session = NewSession(m);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  Tensor before = out[0];
  ASSERT_TRUE(session->Run({}, {}, {"add"}, &out).ok());
  EXPECT_EQ(Values(before), (std::vector<float>{1, 2, 3})) << "a fetched value must not change";
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{11, 22, 33}));
}

TEST(VariablesTest, OutOfRangeScatterIsAnErrorAndLeavesTheVariable) {
  Model m = BuildModel();
  auto session = NewSession(m);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  Status s = session->Run({}, {}, {"scatter_bad"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("indices[0] = 5"), std::string::npos) << s;
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{1, 2, 3}));
}

TEST(VariablesTest, DefaultContainerIsPrivateNamedContainerIsShared) {
  Model private_model = BuildModel();
  auto a = NewSession(private_model);
  auto b = NewSession(private_model);
  std::vector<Tensor> out;
  ASSERT_TRUE(a->Run({}, {}, {"init"}, &out).ok());
  EXPECT_EQ(b->Run({}, {"read"}, {}, &out).code(), Code::kFailedPrecondition)
      << "another session's default container must not leak";

  Model shared_model = BuildModel("shared_test_container");
  auto c = NewSession(shared_model);
  auto d = NewSession(shared_model);
  ASSERT_TRUE(c->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(d->Run({}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(c->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{11, 22, 33}));
  ASSERT_TRUE(c->Reset({"shared_test_container"}).ok());
  EXPECT_EQ(d->Run({}, {"read"}, {}, &out).code(), Code::kFailedPrecondition);
}

TEST(VariablesTest, DestroyThenReadFails) {
  Model m = BuildModel();
  auto session = NewSession(m);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {"destroy"}, &out).ok());
  EXPECT_EQ(session->Run({}, {"read"}, {}, &out).code(), Code::kFailedPrecondition);
}

TEST(VariablesTest, AssigningTheWrongShapeNamesBothShapes) {
  Model m = BuildModel();
  ops::AssignVariableOp(m.root.WithOpName("bad_init"), m.handle, {1.f, 2.f});
  auto session = NewSession(m);
  std::vector<Tensor> out;
  Status s = session->Run({}, {}, {"bad_init"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("[3]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[2]"), std::string::npos) << s;
}

TEST(VariablesTest, OpsUsingAHandleRunWhereTheVariableLives) {
  Model m = BuildModel("", "/device:CPU:1");
  auto session = NewSession(m, 2);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  RunOptions options;
  options.trace = true;
  RunMetadata metadata;
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out, options, &metadata).ok());
  bool saw_read = false;
  for (const NodeExecStats& node : metadata.step_stats.nodes) {
    if (node.node_name == "read") {
      saw_read = true;
      EXPECT_NE(node.device.find("CPU:1"), std::string::npos) << node.device;
    }
  }
  EXPECT_TRUE(saw_read);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{1, 2, 3}));
}

// A fed tensor over memory weir does not own (a numpy array from Python)
// must not become the variable's storage, nor be written by an update.
TEST(VariablesTest, BorrowedFeedsAreCopiedIntoTheVariableAndNeverWritten) {
  Scope root = Scope::NewRootScope();
  auto handle = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialShape({3}));
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::AssignVariableOp(root.WithOpName("assign"), handle, x);
  ops::AssignAddVariableOp(root.WithOpName("assign_add"), handle, x);
  ops::ReadVariableOp(root.WithOpName("read"), handle, DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  static int released = 0;
  released = 0;
  float memory[3] = {1, 2, 3};
  auto borrowed = [&] {
    return Tensor::Borrow(DT_FLOAT, TensorShape({3}), memory,
                          [](void* arg) { ++*static_cast<int*>(arg); }, &released);
  };
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({{"x", borrowed()}}, {}, {"assign"}, &out).ok());
  ASSERT_TRUE((*session)->Run({{"x", borrowed()}}, {}, {"assign_add"}, &out).ok());
  EXPECT_EQ(memory[0], 1.f);  // not written into
  EXPECT_EQ(released, 2);     // nothing kept a reference past the steps
  memory[0] = -100;
  ASSERT_TRUE((*session)->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 2.f);
  EXPECT_EQ(out[0].flat<float>()[2], 6.f);
}

}  // namespace
}  // namespace weir
