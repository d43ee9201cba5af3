// The worker service driven by a WorkerClient, and the master (through
// Session::New("grpc://...")) on in-process clusters on loopback: the same
// results as the local session, values of every dtype across tasks, errors
// that name node and task, hostile requests refused.
#include "weir/distributed/master.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <thread>

#include "proto/worker_service.pb.h"
#include "weir/base/notification.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/test_cluster_test_util.h"
#include "weir/distributed/worker.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/rendezvous.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using namespace std::chrono_literals;
constexpr auto kTimeout = 10s;
const char kWorker0[] = "/job:worker/replica:0/task:0";
const char kPs0[] = "/job:ps/replica:0/task:0";

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

Tensor Floats(std::vector<float> values, TensorShape shape) {
  Tensor t(DT_FLOAT, shape);
  std::copy(values.begin(), values.end(), t.flat<float>().begin());
  return t;
}

class DistributedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    RegisterGrpcSessionFactory();
  }
  void StartCluster(std::vector<std::pair<std::string, int>> jobs) {
    auto cluster = TestCluster::Start(jobs);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  std::unique_ptr<Session> Remote(const std::string& master_task, const Scope& root) {
    EXPECT_TRUE(root.ok()) << root.status();
    auto session = cluster_.NewSession(master_task, root.ToGraphDef());
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }
  std::unique_ptr<Session> Local(const Scope& root) {
    auto session = Session::New(SessionOptions());
    EXPECT_TRUE(session.ok());
    EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
    return std::move(*session);
  }

  TestCluster cluster_;
};

// ---- The worker service, driven directly -------------------------------

NodeDef MakeNode(std::string name, std::string op, std::vector<std::string> inputs, AttrMap attrs) {
  NodeDef node;
  node.name = std::move(name);
  node.op = std::move(op);
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.device = StrCat(kWorker0, "/device:CPU:0");
  return node;
}

// y = x * 2 as a partition: _Arg -> Mul -> _Retval.
GraphDef DoublingPartition() {
  GraphDef def;
  def.nodes.push_back(MakeNode("x", "_Arg", {}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
  def.nodes.push_back(MakeNode("two", "Const", {},
                               {{"dtype", DT_FLOAT}, {"value", Floats({2.f}, TensorShape({}))}}));
  def.nodes.push_back(MakeNode("mul", "Mul", {"x", "two"}, {{"T", DT_FLOAT}}));
  def.nodes.push_back(MakeNode("y", "_Retval", {"mul"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
  return def;
}

TEST_F(DistributedTest, WorkerServiceRegistersRunsAndDeregistersAGraph) {
  StartCluster({{"worker", 1}});
  auto client = WorkerClient::Create(cluster_.server(kWorker0)->bound_address());
  ASSERT_TRUE(client.ok());
  WorkerClient& worker = **client;

  wire::CreateWorkerSessionRequest create;
  create.set_session_handle("s1");
  wire::CreateWorkerSessionResponse created;
  ASSERT_TRUE(worker.CreateWorkerSession(create, &created, kTimeout).ok());
  EXPECT_EQ(worker.CreateWorkerSession(create, &created, kTimeout).code(), Code::kAlreadyExists);

  wire::RegisterGraphRequest reg;
  reg.set_session_handle("s1");
  GraphDefToProto(DoublingPartition(), reg.mutable_graph_def());
  reg.add_feed_names("x");
  reg.add_fetch_names("y");
  wire::RegisterGraphResponse registered;
  Status s = worker.RegisterGraph(reg, &registered, kTimeout);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_FALSE(registered.graph_handle().empty());

  wire::RunGraphRequest run;
  run.set_session_handle("s1");
  run.set_graph_handle(registered.graph_handle());
  run.set_step_id(42);
  wire::NamedTensorProto* send = run.add_send();
  send->set_name("x");
  ASSERT_TRUE(TensorToProto(Floats({1, 2, 3}, TensorShape({3})), send->mutable_tensor()).ok());
  run.add_recv_key("y");
  wire::RunGraphResponse ran;
  s = worker.RunGraph(run, &ran, kTimeout);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(ran.recv_size(), 1);
  Tensor y;
  ASSERT_TRUE(TensorFromProto(ran.recv(0).tensor(), &y).ok());
  EXPECT_TRUE(y.ContentEquals(Floats({2, 4, 6}, TensorShape({3})))) << y.DebugString();
  // No other task can ask for this graph's values: the state went with
  // the step.
  EXPECT_EQ(cluster_.server(kWorker0)->worker()->num_steps(), 0);

  wire::CleanupGraphRequest cleanup;
  cleanup.set_step_id(42);
  wire::CleanupGraphResponse cleaned;
  ASSERT_TRUE(worker.CleanupGraph(cleanup, &cleaned, kTimeout).ok());
  EXPECT_EQ(cluster_.server(kWorker0)->worker()->num_steps(), 0);
  // A cleaned step is not brought back by a late RunGraph.
  run.set_step_id(42);
  EXPECT_EQ(worker.RunGraph(run, &ran, kTimeout).code(), Code::kAborted);

  wire::DeregisterGraphRequest dereg;
  dereg.set_session_handle("s1");
  dereg.set_graph_handle(registered.graph_handle());
  wire::DeregisterGraphResponse deregistered;
  ASSERT_TRUE(worker.DeregisterGraph(dereg, &deregistered, kTimeout).ok());
  run.set_step_id(43);
  s = worker.RunGraph(run, &ran, kTimeout);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;

  wire::DeleteWorkerSessionRequest del;
  del.set_session_handle("s1");
  wire::DeleteWorkerSessionResponse deleted;
  ASSERT_TRUE(worker.DeleteWorkerSession(del, &deleted, kTimeout).ok());
  EXPECT_EQ(cluster_.server(kWorker0)->worker()->num_sessions(), 0);
}

TEST_F(DistributedTest, WorkerServiceRefusesHostileRequests) {
  StartCluster({{"worker", 1}});
  auto client = WorkerClient::Create(cluster_.server(kWorker0)->bound_address());
  ASSERT_TRUE(client.ok());
  WorkerClient& worker = **client;

  // Unknown session.
  wire::RegisterGraphRequest reg;
  reg.set_session_handle("nobody");
  GraphDefToProto(DoublingPartition(), reg.mutable_graph_def());
  reg.add_feed_names("x");
  reg.add_fetch_names("y");
  wire::RegisterGraphResponse registered;
  Status s = worker.RegisterGraph(reg, &registered, kTimeout);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(Contains(s, "nobody") && Contains(s, kWorker0)) << s;

  wire::CreateWorkerSessionRequest create;
  create.set_session_handle("s");
  wire::CreateWorkerSessionResponse created;
  ASSERT_TRUE(worker.CreateWorkerSession(create, &created, kTimeout).ok());
  create.set_session_handle("");
  EXPECT_EQ(worker.CreateWorkerSession(create, &created, kTimeout).code(), Code::kInvalidArgument);

  // A graph that fails import: an op nobody declared.
  GraphDef bad = DoublingPartition();
  bad.nodes[2].op = "NoSuchOp";
  reg.set_session_handle("s");
  reg.clear_graph_def();
  GraphDefToProto(bad, reg.mutable_graph_def());
  s = worker.RegisterGraph(reg, &registered, kTimeout);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(Contains(s, "NoSuchOp") && Contains(s, kWorker0)) << s;

  // A node on a device of another task.
  bad = DoublingPartition();
  for (NodeDef& node : bad.nodes) node.device = "/job:ps/replica:0/task:0/device:CPU:0";
  reg.clear_graph_def();
  GraphDefToProto(bad, reg.mutable_graph_def());
  s = worker.RegisterGraph(reg, &registered, kTimeout);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;

  // Unknown graph handle.
  wire::RunGraphRequest run;
  run.set_session_handle("s");
  run.set_graph_handle("graph_999");
  wire::RunGraphResponse ran;
  EXPECT_EQ(worker.RunGraph(run, &ran, kTimeout).code(), Code::kNotFound);

  // A feed declaring 2^40 floats but carrying one, and one whose dims
  // overflow: refused before anything of that size is allocated.
  reg.clear_graph_def();
  GraphDefToProto(DoublingPartition(), reg.mutable_graph_def());
  ASSERT_TRUE(worker.RegisterGraph(reg, &registered, kTimeout).ok());
  run.set_graph_handle(registered.graph_handle());
  run.set_step_id(7);
  wire::NamedTensorProto* send = run.add_send();
  send->set_name("x");
  send->mutable_tensor()->set_dtype(static_cast<wire::DataType>(DT_FLOAT));
  send->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  send->mutable_tensor()->add_float_val(1.f);
  run.add_recv_key("y");
  s = worker.RunGraph(run, &ran, kTimeout);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "1099511627776")) << s;
  send->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  s = worker.RunGraph(run, &ran, kTimeout);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // A feed or fetch the graph does not have.
  send->set_name("z");
  EXPECT_EQ(worker.RunGraph(run, &ran, kTimeout).code(), Code::kInvalidArgument);

  // RecvTensor for a step that never runs: the caller's deadline ends it,
  // and the state it made goes with it.
  {
    wire::RecvTensorRequest orphan;
    orphan.set_step_id(123456);
    orphan.set_rendezvous_key(Rendezvous::CreateKey(StrCat(kWorker0, "/device:CPU:0"), 1,
                                                    StrCat(kWorker0, "/device:CPU:0"), "edge",
                                                    FrameAndIter()));
    Status orphan_status;
    Notification orphan_done;
    worker.RecvTensorAsync(orphan, 200ms, [&](WorkerClient::RecvTensorResult result) {
      orphan_status = result.status;
      orphan_done.Notify();
    });
    orphan_done.Wait();
    EXPECT_EQ(orphan_status.code(), Code::kDeadlineExceeded) << orphan_status;
    EXPECT_TRUE(cluster_.NoStepStateAnywhere());
  }

  // RecvTensor: a malformed key, and a key sent from another task.
  wire::RecvTensorRequest recv;
  recv.set_step_id(9);
  recv.set_rendezvous_key("garbage");
  Status recv_status;
  Notification done;
  worker.RecvTensorAsync(recv, kTimeout, [&](WorkerClient::RecvTensorResult result) {
    recv_status = result.status;
    done.Notify();
  });
  done.Wait();
  EXPECT_FALSE(recv_status.ok());
  EXPECT_NE(recv_status.code(), Code::kUnavailable) << recv_status;
}

// ---- The master: remote sessions against local ones ----------------------

// A linear model trained with gradient descent: w on `ps_device`, the math
// on `worker_device`.
Scope TrainingGraph(const std::string& ps_device, const std::string& worker_device) {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice(ps_device);
  Scope wk = root.WithDevice(worker_device);
  auto w = ops::VarHandleOp(ps.WithOpName("w"), DT_FLOAT, PartialShape({2, 1}));
  ops::AssignVariableOp(ps.WithOpName("init"), w, Floats({0.5f, -0.25f}, TensorShape({2, 1})));
  auto x = ops::Placeholder(wk.WithOpName("x"), DT_FLOAT);
  auto y = ops::Placeholder(wk.WithOpName("y"), DT_FLOAT);
  // Ops on the resource go where it is (colocation), the math on worker.
  auto read = ops::ReadVariableOp(root.WithOpName("read"), w, DT_FLOAT);
  auto pred = ops::MatMul(wk.WithOpName("pred"), x, read);
  auto err = ops::Sub(wk.WithOpName("err"), pred, y);
  ops::Sum(wk.WithOpName("loss"), ops::Mul(wk, err, err), {0, 1});
  // d loss / d w = 2 x^T err
  auto grad =
      ops::Mul(wk.WithOpName("grad"), ops::MatMul(wk, x, err, {{"transpose_a", true}}), 2.f);
  ops::ResourceApplyGradientDescent(ps.WithOpName("train"), w, 0.05f, grad);
  ops::Identity(ps.WithOpName("w_value"), ops::ReadVariableOp(ps, w, DT_FLOAT));
  return root;
}

std::vector<float> Values(const Tensor& t) {
  return {t.flat<float>().begin(), t.flat<float>().end()};
}

TEST_F(DistributedTest, RemoteSessionMatchesLocalOnATrainingLoop) {
  StartCluster({{"worker", 1}});
  Scope root = TrainingGraph("", "");
  auto remote = Remote(kWorker0, root);
  auto local = Local(root);
  ASSERT_TRUE(remote && local);
  EXPECT_EQ(remote->ListDevices().size(), 1u);
  EXPECT_EQ(remote->ListDevices()[0].name, StrCat(kWorker0, "/device:CPU:0"));
  Tensor x = Floats({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Tensor y = Floats({1, 0, -1}, TensorShape({3, 1}));
  std::vector<Tensor> a, b;
  ASSERT_TRUE(local->Run({}, {}, {"init"}, &a).ok());
  Status s = remote->Run({}, {}, {"init"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE(local->Run({{"x", x}, {"y", y}}, {"loss"}, {"train"}, &a).ok());
    s = remote->Run({{"x", x}, {"y", y}}, {"loss"}, {"train"}, &b);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(b.size(), 1u);
    EXPECT_TRUE(a[0].ContentEquals(b[0])) << a[0].DebugString() << " vs " << b[0].DebugString();
  }
  // Fetch order is the caller's; feeds in any order.
  ASSERT_TRUE(local->Run({{"y", y}, {"x", x}}, {"w_value", "pred", "loss"}, {}, &a).ok());
  ASSERT_TRUE(remote->Run({{"y", y}, {"x", x}}, {"w_value", "pred", "loss"}, {}, &b).ok());
  ASSERT_EQ(b.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(a[i].ContentEquals(b[i])) << i;

  // Callables.
  CallableOptions callable{{"x", "y"}, {"loss"}, {}};
  auto lh = local->MakeCallable(callable);
  auto rh = remote->MakeCallable(callable);
  ASSERT_TRUE(lh.ok() && rh.ok()) << rh.status();
  ASSERT_TRUE(local->RunCallable(*lh, {x, y}, &a).ok());
  s = remote->RunCallable(*rh, {x, y}, &b);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(a[0].ContentEquals(b[0]));
  ASSERT_TRUE(remote->ReleaseCallable(*rh).ok());
  EXPECT_EQ(remote->RunCallable(*rh, {x, y}, &b).code(), Code::kInvalidArgument);

  // Errors of the graph come back as the local session gives them.
  s = remote->Run({{"x", Floats({1}, TensorShape({1, 1}))}, {"y", y}}, {"loss"}, {}, &b);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  s = remote->Run({}, {"no_such_node"}, {}, &b);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "no_such_node")) << s;
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
}

TEST_F(DistributedTest, RunOptionsTimeoutEndsABlockedRemoteStep) {
  StartCluster({{"worker", 1}});
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q"), {DT_FLOAT});
  ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, {DT_FLOAT});
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  RunOptions options;
  options.timeout_ms = 300;
  std::vector<Tensor> out;
  auto start = std::chrono::steady_clock::now();
  Status s = remote->Run({}, {"dequeue"}, {}, &out, options);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;
  EXPECT_LT(elapsed, 5s);
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
}

TEST_F(DistributedTest, StoppingAServerEndsAStepBlockedThere) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:ps/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:worker/task:0"), Output(dequeued.node()));
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  Status s;
  std::thread step([&] {
    std::vector<Tensor> out;
    s = remote->Run({}, {"out"}, {}, &out);  // no timeout: blocks on ps
  });
  std::this_thread::sleep_for(300ms);
  auto start = std::chrono::steady_clock::now();
  cluster_.server(kPs0)->Stop();
  step.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, kPs0)) << s;
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
}

// The master's health monitor: once a task of the session is gone, every
// step fails fast with Unavailable naming it (even one it has no part in),
// callables too; a new session runs without the task's devices.
TEST_F(DistributedTest, ASessionWhoseTaskWentAwayFailsFastAndANewOneRunsWithoutIt) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  ops::Identity(root.WithOpName("on_ps").WithDevice("/job:ps/task:0"),
                Floats({1.f}, TensorShape({1})));
  ops::Identity(root.WithOpName("on_worker").WithDevice("/job:worker/task:0"),
                Floats({2.f}, TensorShape({1})));
  auto session = NewMasterSession(cluster_.server(kWorker0)->worker(), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  auto callable = (*session)->MakeCallable({{}, {"on_worker"}, {}});
  ASSERT_TRUE(callable.ok()) << callable.status();
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {"on_ps", "on_worker"}, {}, &out).ok());
  auto ps_address = cluster_.server(kWorker0)->worker()->config().cluster.task_address("ps", 0);
  ASSERT_TRUE(ps_address.ok());
  cluster_.server(kPs0)->Stop();
  // The monitor sees it within interval + timeout (2 s); poll up to 5 s.
  Status s;
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 5s) {
    s = (*session)->Run({}, {"on_worker"}, {}, &out);
    if (!s.ok()) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(s.code(), Code::kUnavailable) << s;
  EXPECT_TRUE(Contains(s, kPs0)) << s;
  EXPECT_TRUE(Contains(s, *ps_address)) << s;
  start = std::chrono::steady_clock::now();
  Status again = (*session)->RunCallable(*callable, {}, &out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
  EXPECT_EQ(again.code(), Code::kUnavailable) << again;
  EXPECT_TRUE(Contains(again, kPs0)) << again;
  EXPECT_TRUE((*session)->Close().ok());

  auto fresh = NewMasterSession(cluster_.server(kWorker0)->worker(), SessionOptions());
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_TRUE((*fresh)->Create(root.ToGraphDef()).ok());
  EXPECT_EQ((*fresh)->ListDevices().size(), 1u);
  ASSERT_TRUE((*fresh)->Run({}, {"on_worker"}, {}, &out).ok());
  EXPECT_TRUE(out[0].ContentEquals(Floats({2.f}, TensorShape({1}))));
  s = (*fresh)->Run({}, {"on_ps"}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, kPs0)) << s;
}

TEST_F(DistributedTest, VariableOnPsIsTrainedByAStepOnWorker) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope remote_graph = TrainingGraph("/job:ps/task:0", "/job:worker/task:0");
  Scope local_graph = TrainingGraph("", "");
  auto remote = Remote(kWorker0, remote_graph);
  auto local = Local(local_graph);
  ASSERT_TRUE(remote && local);
  EXPECT_EQ(remote->ListDevices().size(), 2u);
  Tensor x = Floats({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Tensor y = Floats({1, 0, -1}, TensorShape({3, 1}));
  std::vector<Tensor> a, b;
  ASSERT_TRUE(local->Run({}, {}, {"init"}, &a).ok());
  Status s = remote->Run({}, {}, {"init"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE(local->Run({{"x", x}, {"y", y}}, {"loss"}, {"train"}, &a).ok());
    s = remote->Run({{"x", x}, {"y", y}}, {"loss"}, {"train"}, &b);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_TRUE(a[0].ContentEquals(b[0])) << a[0].DebugString() << " vs " << b[0].DebugString();
  }
  ASSERT_TRUE(local->Run({}, {"w_value"}, {}, &a).ok());
  ASSERT_TRUE(remote->Run({}, {"w_value"}, {}, &b).ok());
  EXPECT_TRUE(a[0].ContentEquals(b[0])) << a[0].DebugString() << " vs " << b[0].DebugString();
  EXPECT_NE(Values(b[0]), (std::vector<float>{0.5f, -0.25f})) << "the variable was not trained";
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
  // The variable lives in the ps task's shared container: a second session
  // sees it; Reset drops it.
  auto second = Remote(kWorker0, remote_graph);
  ASSERT_TRUE(second);
  ASSERT_TRUE(second->Run({}, {"w_value"}, {}, &b).ok());
  EXPECT_TRUE(a[0].ContentEquals(b[0]));
  EXPECT_EQ(second->default_container(), "localhost");
  ASSERT_TRUE(second->Reset({second->default_container()}).ok());
  s = second->Run({}, {"w_value"}, {}, &b);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_TRUE(Contains(s, kPs0)) << s;
  // Closing drops the sessions on every task.
  ASSERT_TRUE(remote->Close().ok());
  ASSERT_TRUE(second->Close().ok());
  EXPECT_EQ(cluster_.server(kPs0)->worker()->num_sessions(), 0);
  EXPECT_EQ(cluster_.server(kWorker0)->worker()->num_sessions(), 0);
}

// A tensor of `dtype` with distinct values in every byte-addressable slot.
Tensor Sample(DType dtype, TensorShape shape) {
  Tensor t(dtype, shape);
  if (dtype == DT_STRING) {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      t.flat<std::string>()[i] = StrCat("value ", i, std::string(i * 37, 'x'), '\0', "after nul");
    }
    return t;
  }
  if (dtype == DT_BOOL) {
    for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<bool>()[i] = (i % 3) == 1;
    return t;
  }
  auto* bytes = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.TotalBytes(); ++i) bytes[i] = static_cast<unsigned char>(i * 13 + 7);
  // Keep floating-point values finite and free of NaN payloads.
  if (dtype == DT_FLOAT || dtype == DT_COMPLEX64) {
    for (size_t i = 0; i < t.TotalBytes() / 4; ++i) reinterpret_cast<float*>(bytes)[i] = i * 0.5f;
  } else if (dtype == DT_DOUBLE || dtype == DT_COMPLEX128) {
    for (size_t i = 0; i < t.TotalBytes() / 8; ++i) reinterpret_cast<double*>(bytes)[i] = i * 0.25;
  } else if (dtype == DT_HALF || dtype == DT_BFLOAT16) {
    for (size_t i = 0; i < t.TotalBytes() / 2; ++i) {
      reinterpret_cast<uint16_t*>(bytes)[i] = static_cast<uint16_t>(0x3c00 + i);
    }
  }
  return t;
}

TEST_F(DistributedTest, EveryDtypeCrossesTasks) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  const std::vector<DType> dtypes = {
      DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_UINT8, DT_INT16,  DT_INT8,   DT_STRING,   DT_COMPLEX64,
      DT_INT64, DT_BOOL,   DT_UINT16, DT_HALF,  DT_UINT32, DT_UINT64, DT_BFLOAT16, DT_COMPLEX128};
  Scope root = Scope::NewRootScope();
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  int i = 0;
  for (DType dtype : dtypes) {
    for (TensorShape shape : {TensorShape({2, 3}), TensorShape({0, 4}), TensorShape({})}) {
      std::string name = StrCat("v", i++);
      // Fed on ps, through an Identity on ps, received by one on worker.
      auto in = ops::Placeholder(root.WithOpName(name).WithDevice("/job:ps/task:0"), dtype);
      auto on_ps = ops::Identity(root.WithOpName(name + "_ps").WithDevice("/job:ps/task:0"), in);
      ops::Identity(root.WithOpName(name + "_worker").WithDevice("/job:worker/task:0"), on_ps);
      feeds.push_back({name, Sample(dtype, shape)});
      fetches.push_back(name + "_worker");
    }
  }
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  std::vector<Tensor> out;
  Status s = remote->Run(feeds, fetches, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), feeds.size());
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_TRUE(out[k].ContentEquals(feeds[k].second))
        << fetches[k] << ": " << out[k].DebugString() << " vs " << feeds[k].second.DebugString();
  }
}

TEST_F(DistributedTest, DeadValuesCrossTasks) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto data = ops::Placeholder(ps.WithOpName("data"), DT_FLOAT);
  auto pred = ops::Placeholder(ps.WithOpName("pred"), DT_BOOL);
  auto sw = ops::Switch(ps.WithOpName("switch"), data, pred);
  auto if_false = ops::Mul(wk.WithOpName("if_false"), Output(sw.node(), 0), 10.f);
  auto if_true = ops::Mul(wk.WithOpName("if_true"), Output(sw.node(), 1), 100.f);
  ops::Merge(wk.WithOpName("merge"), {if_false, if_true});
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  Tensor t(DT_BOOL, TensorShape({}));
  for (bool branch : {false, true}) {
    t.scalar<bool>() = branch;
    std::vector<Tensor> out;
    Status s = remote->Run({{"data", Floats({3}, TensorShape({}))}, {"pred", t}},
                           {"merge", "merge:1"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].scalar<float>(), branch ? 300.f : 30.f);
    EXPECT_EQ(out[1].scalar<int32_t>(), branch ? 1 : 0);
  }
}

TEST_F(DistributedTest, AnErrorOnOneTaskReachesTheClientNamingNodeAndTask) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto x = ops::Placeholder(wk.WithOpName("x"), DT_FLOAT);
  auto doubled = ops::Mul(wk.WithOpName("doubled"), x, 2.f);
  auto bad = ops::Reshape(ps.WithOpName("bad_reshape"), doubled, {7});
  ops::Identity(wk.WithOpName("back"), bad);
  // A Recv on worker that waits for ps, and another wait on worker itself:
  // both must end.
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  std::vector<Tensor> out;
  Status s =
      remote->Run({{"x", Floats({1, 2, 3}, TensorShape({3}))}}, {"back", "doubled"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "bad_reshape")) << s;
  EXPECT_TRUE(Contains(s, kPs0)) << s;
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
  // The session still works.
  s = remote->Run({{"x", Floats({1, 2, 3}, TensorShape({3}))}}, {"doubled"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2, 4, 6}));
}

TEST_F(DistributedTest, AWhileLoopWhoseBodySpansTwoTasks) {
  // The loop's condition on worker, half of its body on ps: each iteration's
  // values and the control loop's predicate cross tasks, keyed by frame and
  // iteration (white paper §4.4).
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice("/job:worker/task:0");
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  std::vector<Output> outputs;
  Status built = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        Scope far = b.WithDevice("/job:ps/task:0");
        auto acc = ops::Add(far, ops::Mul(far, v[1], 0.5f), ops::Cast(far, v[0], DT_FLOAT));
        next->push_back(ops::Add(b, v[0], 1));
        next->push_back(acc);
        return Status::OK();
      },
      &outputs);
  ASSERT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("acc"), outputs[1]);
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  for (int32_t count : {0, 1, 7}) {
    Tensor t(DT_INT32, TensorShape({}));
    t.scalar<int32_t>() = count;
    std::vector<Tensor> out;
    Status st = remote->Run({{"n", t}}, {"acc"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    float expected = 1.0f;
    for (int32_t i = 0; i < count; ++i) expected = expected * 0.5f + static_cast<float>(i);
    EXPECT_EQ(out[0].scalar<float>(), expected) << count;
  }
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
}

TEST_F(DistributedTest, TensorsPastGrpcsDefaultLimitCrossTasks) {
  // 24 MiB each way: gRPC's default limit is 4 MiB, raised on purpose.
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  auto in = ops::Placeholder(root.WithOpName("in").WithDevice("/job:ps/task:0"), DT_FLOAT);
  auto on_ps = ops::Mul(root.WithOpName("on_ps").WithDevice("/job:ps/task:0"), in, 2.f);
  ops::Add(root.WithOpName("on_worker").WithDevice("/job:worker/task:0"), on_ps, 1.f);
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  Tensor big(DT_FLOAT, TensorShape({6 << 20}));
  for (int64_t i = 0; i < big.NumElements(); ++i)
    big.flat<float>()[i] = static_cast<float>(i % 1000);
  std::vector<Tensor> out;
  Status s = remote->Run({{"in", big}}, {"on_worker"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out[0].NumElements(), big.NumElements());
  for (int64_t i : {int64_t{0}, int64_t{999}, big.NumElements() - 1}) {
    EXPECT_EQ(out[0].flat<float>()[i], 2.f * static_cast<float>(i % 1000) + 1.f) << i;
  }
}

TEST_F(DistributedTest, ConcurrentStepsAcrossThreeTasks) {
  // Each step sends a value from worker 1 to worker 0 and back through ps;
  // eight threads run steps at once on one remote session.
  StartCluster({{"worker", 2}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x").WithDevice("/job:worker/task:1"), DT_FLOAT);
  auto a = ops::Mul(root.WithOpName("a").WithDevice("/job:worker/task:1"), x, 3.f);
  auto b = ops::Add(root.WithOpName("b").WithDevice("/job:ps/task:0"), a, 1.f);
  ops::Sub(root.WithOpName("c").WithDevice("/job:worker/task:0"), b, x);
  auto remote = Remote("/job:worker/replica:0/task:1", root);
  ASSERT_TRUE(remote);
  EXPECT_EQ(remote->ListDevices().size(), 3u);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        float v = static_cast<float>(t * 100 + i);
        std::vector<Tensor> out;
        Status s = remote->Run({{"x", Floats({v}, TensorShape({}))}}, {"c"}, {}, &out);
        if (!s.ok() || out[0].scalar<float>() != 2 * v + 1) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
}

TEST_F(DistributedTest, ClosedSessionsAndUnknownHandlesAreRefused) {
  StartCluster({{"worker", 1}});
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("c"), 1.f);
  auto remote = Remote(kWorker0, root);
  ASSERT_TRUE(remote);
  std::vector<Tensor> out;
  ASSERT_TRUE(remote->Run({}, {"c"}, {}, &out).ok());
  EXPECT_EQ(cluster_.server(kWorker0)->master()->num_sessions(), 1);
  ASSERT_TRUE(remote->Close().ok());
  EXPECT_EQ(cluster_.server(kWorker0)->master()->num_sessions(), 0);
  EXPECT_EQ(cluster_.server(kWorker0)->worker()->num_sessions(), 0);
  Status s = remote->Run({}, {"c"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(Contains(s, "has no session")) << s;
  auto found = cluster_.server(kWorker0)->master()->Find("no such handle");
  EXPECT_EQ(found.status().code(), Code::kNotFound);
  // An in-process master session, the same interface without the client.
  auto local_master = NewMasterSession(cluster_.server(kWorker0)->worker(), SessionOptions());
  ASSERT_TRUE(local_master.ok()) << local_master.status();
  ASSERT_TRUE((*local_master)->Create(root.ToGraphDef()).ok());
  ASSERT_TRUE((*local_master)->Run({}, {"c"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.f);
  EXPECT_EQ((*local_master)->num_cached_signatures(), 1);
}

TEST_F(DistributedTest, BadTargetsAreClearErrors) {
  SessionOptions options;
  options.target = "nosuch://x:1";
  auto session = Session::New(options);
  EXPECT_EQ(session.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(session.status(), "nosuch")) << session.status();
  options.target = "grpc://";
  EXPECT_EQ(Session::New(options).status().code(), Code::kInvalidArgument);
  // Nobody listens there: Unavailable naming the address, quickly (without
  // waiting for a master that may start later: remote_session_test.cc).
  options.target = StrCat("grpc://127.0.0.1:", PickFreePort());
  options.remote.connect_timeout_ms = 0;
  auto start = std::chrono::steady_clock::now();
  session = Session::New(options);
  EXPECT_EQ(session.status().code(), Code::kUnavailable) << session.status();
  EXPECT_TRUE(Contains(session.status(), "127.0.0.1")) << session.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

// The fan-out of a step: RunGraphs to several tasks on one completion queue
// drained by the caller, each answered under its tag; a dead address fails
// naming it; after CancelAll a started call ends Cancelled.
TEST_F(DistributedTest, RunGraphGroupRunsCallsOnSeveralTasksAtOnce) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  std::vector<std::unique_ptr<WorkerClient>> clients;
  std::vector<std::string> graphs;
  for (const char* task : {kWorker0, kPs0}) {
    auto client = WorkerClient::Create(cluster_.server(task)->bound_address());
    ASSERT_TRUE(client.ok());
    wire::CreateWorkerSessionRequest create;
    create.set_session_handle("group");
    wire::CreateWorkerSessionResponse created;
    ASSERT_TRUE((*client)->CreateWorkerSession(create, &created, kTimeout).ok());
    wire::RegisterGraphRequest reg;
    reg.set_session_handle("group");
    GraphDef partition = DoublingPartition();
    for (NodeDef& node : partition.nodes) node.device = StrCat(task, "/device:CPU:0");
    GraphDefToProto(partition, reg.mutable_graph_def());
    reg.add_feed_names("x");
    reg.add_fetch_names("y");
    wire::RegisterGraphResponse registered;
    Status s = (*client)->RegisterGraph(reg, &registered, kTimeout);
    ASSERT_TRUE(s.ok()) << s;
    graphs.push_back(registered.graph_handle());
    clients.push_back(std::move(*client));
  }
  std::vector<wire::RunGraphRequest> requests(2);
  std::vector<wire::RunGraphResponse> responses(2);
  RunGraphGroup group;
  for (int t = 0; t < 2; ++t) {
    requests[t].set_session_handle("group");
    requests[t].set_graph_handle(graphs[t]);
    requests[t].set_step_id(100 + t);
    wire::NamedTensorProto* send = requests[t].add_send();
    send->set_name("x");
    ASSERT_TRUE(TensorToProto(Floats({t + 1.f}, TensorShape({1})), send->mutable_tensor()).ok());
    requests[t].add_recv_key("y");
    group.Start(clients[t].get(), &requests[t], &responses[t], kTimeout, 10 + t);
  }
  std::set<int> tags;
  int tag = -1;
  Status status;
  while (group.Next(&tag, &status)) {
    ASSERT_TRUE(status.ok()) << status;
    tags.insert(tag);
    const int t = tag - 10;
    ASSERT_EQ(responses[t].recv_size(), 1);
    Tensor y;
    ASSERT_TRUE(TensorFromProto(responses[t].recv(0).tensor(), &y).ok());
    EXPECT_TRUE(y.ContentEquals(Floats({2.f * (t + 1)}, TensorShape({1})))) << y.DebugString();
  }
  EXPECT_EQ(tags, (std::set<int>{10, 11}));
  EXPECT_FALSE(group.Next(&tag, &status));

  // Nobody listens at the address: Unavailable, naming the call and it.
  auto dead = WorkerClient::Create(StrCat("127.0.0.1:", PickFreePort()));
  ASSERT_TRUE(dead.ok());
  RunGraphGroup failing;
  failing.Start(dead->get(), &requests[0], &responses[0], kTimeout, 7);
  ASSERT_TRUE(failing.Next(&tag, &status));
  EXPECT_EQ(tag, 7);
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_TRUE(Contains(status, StrCat("RunGraph to ", (*dead)->address()))) << status;

  RunGraphGroup cancelled;
  cancelled.CancelAll();
  requests[1].set_step_id(200);
  cancelled.Start(clients[1].get(), &requests[1], &responses[1], kTimeout, 3);
  ASSERT_TRUE(cancelled.Next(&tag, &status));
  EXPECT_EQ(status.code(), Code::kCancelled) << status;
}

}  // namespace
}  // namespace weir
