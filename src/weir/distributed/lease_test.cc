// Worker-session leases (worker.h, master.h): a session whose master stops
// renewing it is dropped with its running steps aborted, renewals keep an
// idle one alive, a master whose task lost its session fails it, and
// hostile renewals and lease requests are refused.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "proto/worker_service.pb.h"
#include "weir/distributed/credentials.h"
#include "weir/distributed/health_monitor.h"
#include "weir/distributed/master.h"
#include "weir/distributed/test_cluster_test_util.h"
#include "weir/distributed/worker.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
constexpr auto kTimeout = 10s;
const char kWorker0[] = "/job:worker/replica:0/task:0";
const char kPs0[] = "/job:ps/replica:0/task:0";
const char kMasterTask[] = "/job:chief/replica:0/task:7";

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }
  void StartCluster(std::vector<std::pair<std::string, int>> jobs) {
    auto cluster = TestCluster::Start(jobs);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  Status CreateSession(WorkerClient& client, const std::string& handle, int64_t lease_ms) {
    wire::CreateWorkerSessionRequest request;
    request.set_session_handle(handle);
    request.set_lease_ms(lease_ms);
    request.set_master_task(kMasterTask);
    wire::CreateWorkerSessionResponse response;
    return client.CreateWorkerSession(request, &response, kTimeout);
  }
  // Registers `scope`'s graph, every node on worker 0's CPU, in `session`.
  StatusOr<std::string> Register(WorkerClient& client, const std::string& session,
                                 const Scope& scope, std::vector<std::string> fetches) {
    GraphDef def = scope.ToGraphDef();
    for (NodeDef& node : def.nodes) node.device = StrCat(kWorker0, "/device:CPU:0");
    wire::RegisterGraphRequest request;
    request.set_session_handle(session);
    GraphDefToProto(def, request.mutable_graph_def());
    for (const std::string& fetch : fetches) request.add_fetch_names(fetch);
    wire::RegisterGraphResponse response;
    WEIR_RETURN_IF_ERROR(client.RegisterGraph(request, &response, kTimeout));
    return response.graph_handle();
  }
  // Renews `handles` on `worker` in process, as the gRPC GetStatus does.
  std::vector<std::string> Renew(Worker* worker, const std::vector<std::string>& handles,
                                 Status* status = nullptr) {
    wire::GetStatusRequest request;
    for (const std::string& handle : handles) request.add_renew_session_handle(handle);
    wire::GetStatusResponse response;
    Status s = worker->RenewLeases(request, &response);
    if (status != nullptr) *status = s;
    return {response.lost_session_handle().begin(), response.lost_session_handle().end()};
  }

  TestCluster cluster_;
};

// A step blocked in a queue op on a worker whose master goes silent ends
// when the lease runs out, not before; the session, its graphs and step
// state go; later calls say why; a new session works.
TEST_F(LeaseTest, AnExpiredLeaseAbortsTheSessionsStepAndDropsItsState) {
  StartCluster({{"worker", 1}});
  Worker* worker = cluster_.server(kWorker0)->worker();
  auto client = WorkerClient::Create(cluster_.server(kWorker0)->bound_address());
  ASSERT_TRUE(client.ok());
  constexpr int64_t kLeaseMs = 1000;
  ASSERT_TRUE(CreateSession(**client, "leased", kLeaseMs).ok());
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q"), {DT_FLOAT});
  ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, {DT_FLOAT});
  auto graph = Register(**client, "leased", root, {});
  ASSERT_TRUE(graph.ok()) << graph.status();

  Status ran;
  std::atomic<bool> done{false};
  std::thread step([&] {
    wire::RunGraphRequest request;
    request.set_session_handle("leased");
    request.set_graph_handle(*graph);
    request.set_step_id(77);
    wire::RunGraphResponse response;
    ran = (*client)->RunGraph(request, &response, kTimeout);  // blocks in the dequeue
    done = true;
  });
  // Renewed for three lease periods: the session and its step stay.
  auto renew_until = Clock::now() + 3 * std::chrono::milliseconds(kLeaseMs);
  Clock::time_point last_renewal;
  while (Clock::now() < renew_until) {
    last_renewal = Clock::now();  // the lease runs from a moment after this
    EXPECT_TRUE(Renew(worker, {"leased"}).empty());
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_FALSE(done.load());
  EXPECT_EQ(worker->num_sessions(), 1);
  EXPECT_EQ(worker->num_steps(), 1);

  step.join();
  auto ended_after = Clock::now() - last_renewal;
  EXPECT_GE(ended_after, std::chrono::milliseconds(kLeaseMs));
  EXPECT_LT(ended_after, std::chrono::milliseconds(kLeaseMs) + 1500ms);
  EXPECT_EQ(ran.code(), Code::kAborted) << ran;
  EXPECT_TRUE(Contains(ran, "'leased'") && Contains(ran, kMasterTask) && Contains(ran, "lease"))
      << ran;
  EXPECT_EQ(worker->num_sessions(), 0);
  EXPECT_EQ(worker->num_steps(), 0);

  // Later calls naming it say why; deleting it is no error; a renewal
  // reports it lost.
  Scope other = Scope::NewRootScope();
  ops::Const(other.WithOpName("c"), 1.f);
  Status late = Register(**client, "leased", other, {}).status();
  EXPECT_EQ(late.code(), Code::kAborted) << late;
  EXPECT_TRUE(Contains(late, "expired")) << late;
  wire::DeleteWorkerSessionRequest del;
  del.set_session_handle("leased");
  wire::DeleteWorkerSessionResponse deleted;
  EXPECT_TRUE((*client)->DeleteWorkerSession(del, &deleted, kTimeout).ok());
  EXPECT_EQ(Renew(worker, {"leased"}), std::vector<std::string>{"leased"});

  // A new session (of a new master) runs.
  ASSERT_TRUE(CreateSession(**client, "fresh", 0).ok());
  Scope doubling = Scope::NewRootScope();
  auto two = ops::Const(doubling.WithOpName("two"), 2.f);
  ops::Identity(doubling.WithOpName("y"), ops::Mul(doubling, two, 21.f));
  // _Retval nodes are the compiler's; fetch through one made by hand.
  GraphDef def = doubling.ToGraphDef();
  NodeDef retval;
  retval.name = "y_retval";
  retval.op = "_Retval";
  retval.inputs = {"y"};
  retval.attrs = {{"T", DT_FLOAT}, {"index", int64_t{0}}};
  def.nodes.push_back(retval);
  for (NodeDef& node : def.nodes) node.device = StrCat(kWorker0, "/device:CPU:0");
  wire::RegisterGraphRequest reg;
  reg.set_session_handle("fresh");
  GraphDefToProto(def, reg.mutable_graph_def());
  reg.add_fetch_names("y");
  wire::RegisterGraphResponse registered;
  Status s = (*client)->RegisterGraph(reg, &registered, kTimeout);
  ASSERT_TRUE(s.ok()) << s;
  wire::RunGraphRequest run;
  run.set_session_handle("fresh");
  run.set_graph_handle(registered.graph_handle());
  run.set_step_id(78);
  run.add_recv_key("y");
  wire::RunGraphResponse response;
  s = (*client)->RunGraph(run, &response, kTimeout);
  ASSERT_TRUE(s.ok()) << s;
  Tensor y;
  ASSERT_EQ(response.recv_size(), 1);
  ASSERT_TRUE(TensorFromProto(response.recv(0).tensor(), &y).ok());
  EXPECT_EQ(y.scalar<float>(), 42.f);
  // Without a lease the session stays while nobody renews it.
  std::this_thread::sleep_for(std::chrono::milliseconds(kLeaseMs) + 200ms);
  EXPECT_EQ(worker->num_sessions(), 1);
}

TEST_F(LeaseTest, HostileRenewalsAndLeasesAreRefused) {
  StartCluster({{"worker", 1}});
  Worker* worker = cluster_.server(kWorker0)->worker();
  auto client = WorkerClient::Create(cluster_.server(kWorker0)->bound_address());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(CreateSession(**client, "mine", 60000).ok());
  // Unknown handles are reported lost; known ones renewed.
  EXPECT_EQ(Renew(worker, {"nobody", "mine", "ghost"}),
            (std::vector<std::string>{"nobody", "ghost"}));
  Status s;
  Renew(worker, std::vector<std::string>(4097, "mine"), &s);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  Renew(worker, {std::string(300, 'h')}, &s);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  Renew(worker, {""}, &s);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // Leases out of range, an oversized master name.
  s = CreateSession(**client, "negative", -1);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  s = CreateSession(**client, "forever", int64_t{25} * 3600 * 1000);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "lease")) << s;
  wire::CreateWorkerSessionRequest request;
  request.set_session_handle("long_master");
  request.set_master_task(std::string(300, 'm'));
  wire::CreateWorkerSessionResponse response;
  s = (*client)->CreateWorkerSession(request, &response, kTimeout);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_EQ(worker->num_sessions(), 1);
}

TEST_F(LeaseTest, MasterOptionsAreValidated) {
  MasterOptions options;
  EXPECT_TRUE(options.Validate().ok());
  options.session_lease = 3999ms;  // under 2 * (500 + 1500)
  Status s = options.Validate();
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "4000")) << s;
  options.session_lease = 0ms;
  EXPECT_TRUE(options.Validate().ok());
  options.session_lease = -1ms;
  EXPECT_EQ(options.Validate().code(), Code::kInvalidArgument);
  options.session_lease = 10s;
  options.health_timeout = 0ms;
  EXPECT_EQ(options.Validate().code(), Code::kInvalidArgument);

  ServerOptions server_options;
  server_options.session_lease_ms = 1000;
  auto cluster = ClusterSpec::FromJobs({{"worker", {{0, "127.0.0.1:0"}}}});
  ASSERT_TRUE(cluster.ok());
  auto server = Server::Create(ClusterConfig{*cluster, "worker", 0}, server_options);
  EXPECT_EQ(server.status().code(), Code::kInvalidArgument) << server.status();
}

// The master renews its session on the other tasks with its health checks:
// an idle session outlives many lease periods; a task that no longer holds
// it (it expired there, or the task restarted) fails the session with
// Aborted naming the task; Close is prompt; a new session runs.
TEST_F(LeaseTest, AMasterRenewsItsLeasesAndFailsTheSessionWhenATaskLostIt) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  MasterOptions master_options;
  // Short, with room for a loaded machine's slow rounds.
  master_options.session_lease = 1500ms;
  master_options.health_interval = 100ms;
  master_options.health_timeout = 650ms;
  Scope root = Scope::NewRootScope();
  ops::Identity(root.WithOpName("on_ps").WithDevice("/job:ps/task:0"), 3.f);
  Worker* ps = cluster_.server(kPs0)->worker();
  Worker* master_worker = cluster_.server(kWorker0)->worker();
  auto session = NewMasterSession(master_worker, SessionOptions(), kTimeout, master_options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {"on_ps"}, {}, &out).ok());
  std::this_thread::sleep_for(3 * master_options.session_lease);  // idle
  EXPECT_EQ(ps->num_sessions(), 1);
  EXPECT_EQ(master_worker->num_sessions(), 1);  // its own task's: no lease
  Status s = (*session)->Run({}, {"on_ps"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 3.f);

  // The session goes from ps behind the master's back.
  std::vector<std::string> handles = ps->session_handles();
  ASSERT_EQ(handles.size(), 1u);
  wire::DeleteWorkerSessionRequest del;
  del.set_session_handle(handles[0]);
  ASSERT_TRUE(ps->DeleteWorkerSession(del).ok());
  // The next round reports it (a step that meets the missing session first
  // fails with the worker's NotFound); from then on every step fails at
  // once with the monitor's Aborted naming ps.
  auto start = Clock::now();
  while (Clock::now() - start < 5s) {
    s = (*session)->Run({}, {"on_ps"}, {}, &out);
    if (s.code() == Code::kAborted) break;
    EXPECT_TRUE(s.ok() || s.code() == Code::kNotFound) << s;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  EXPECT_TRUE(Contains(s, kPs0) && Contains(s, "no longer holds worker session")) << s;
  start = Clock::now();
  s = (*session)->Run({}, {"on_ps"}, {}, &out);
  EXPECT_LT(Clock::now() - start, 500ms);
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  start = Clock::now();
  EXPECT_TRUE((*session)->Close().ok());
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(master_worker->num_sessions(), 0);

  auto fresh = NewMasterSession(master_worker, SessionOptions(), kTimeout, master_options);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_TRUE((*fresh)->Create(root.ToGraphDef()).ok());
  s = (*fresh)->Run({}, {"on_ps"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ps->num_sessions(), 1);
}

// A task that lost the session answers the step's RunGraph with NotFound:
// the master fails the step at once with Aborted naming the task (not at
// the monitor's next round, 10 s away here), also when its own part waits
// for a value from that task, and fails every later step at once.
TEST_F(LeaseTest, ARunGraphAnsweredWithALostSessionFailsTheSessionAtOnce) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  MasterOptions master_options;
  master_options.health_interval = 10s;
  master_options.session_lease = 30s;
  Scope root = Scope::NewRootScope();
  auto on_ps = ops::Const(root.WithOpName("on_ps").WithDevice(kPs0), 2.f);
  ops::Mul(root.WithOpName("y").WithDevice(kWorker0), on_ps, 21.f);  // waits for ps's value
  Worker* ps = cluster_.server(kPs0)->worker();
  auto session = NewMasterSession(cluster_.server(kWorker0)->worker(), SessionOptions(), kTimeout,
                                  master_options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status s = (*session)->Run({}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 42.f);

  std::vector<std::string> handles = ps->session_handles();
  ASSERT_EQ(handles.size(), 1u);
  wire::DeleteWorkerSessionRequest del;
  del.set_session_handle(handles[0]);
  ASSERT_TRUE(ps->DeleteWorkerSession(del).ok());
  auto start = Clock::now();
  s = (*session)->Run({}, {"y"}, {}, &out);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  EXPECT_TRUE(Contains(s, kPs0) && Contains(s, "no longer holds worker session '" + handles[0]) &&
              Contains(s, "has no worker session"))
      << s;
  start = Clock::now();
  s = (*session)->Run({}, {"y"}, {}, &out);
  EXPECT_LT(Clock::now() - start, 500ms);
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  EXPECT_TRUE(Contains(s, kPs0) && Contains(s, "create a new one")) << s;
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
  start = Clock::now();
  EXPECT_TRUE((*session)->Close().ok());
  EXPECT_LT(Clock::now() - start, 2s);
}

// The loss is marked in RunGraph's answer (lost_session_handle), in process
// and over gRPC (in the error's details, which a single call and a
// RunGraphGroup both read back); other errors of a held session do not set
// it.
TEST_F(LeaseTest, ALostSessionIsMarkedInTheRunGraphAnswer) {
  StartCluster({{"worker", 1}});
  Worker* worker = cluster_.server(kWorker0)->worker();
  auto client = WorkerClient::Create(cluster_.server(kWorker0)->bound_address());
  ASSERT_TRUE(client.ok());
  wire::RunGraphRequest request;
  request.set_session_handle("ghost");
  request.set_graph_handle("graph_0");
  request.set_step_id(9);

  wire::RunGraphResponse in_process;
  Status s = worker->RunGraph(request, &in_process);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_EQ(in_process.lost_session_handle(), "ghost");

  wire::RunGraphResponse single;
  request.set_step_id(10);
  s = (*client)->RunGraph(request, &single, kTimeout);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(Contains(s, "has no worker session 'ghost'")) << s;  // the text is unchanged
  EXPECT_EQ(single.lost_session_handle(), "ghost");

  wire::RunGraphResponse grouped;
  request.set_step_id(11);
  {
    RunGraphGroup group;
    group.Start(client->get(), &request, &grouped, kTimeout, 3);
    int tag = -1;
    ASSERT_TRUE(group.Next(&tag, &s));
    EXPECT_EQ(tag, 3);
    EXPECT_FALSE(group.Next(&tag, &s));
  }
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_EQ(grouped.lost_session_handle(), "ghost");

  // A held session whose graph is unknown: an error, but no lost session.
  ASSERT_TRUE(CreateSession(**client, "held", 0).ok());
  request.set_session_handle("held");
  request.set_step_id(12);
  wire::RunGraphResponse no_graph;
  s = (*client)->RunGraph(request, &no_graph, kTimeout);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(no_graph.lost_session_handle().empty()) << no_graph.lost_session_handle();
}

// The master reads the loss from the answer, not from the error's text: a
// step whose own error quotes the worker's wording word for word (a file
// name here) is an ordinary step error, and the session goes on.
TEST_F(LeaseTest, AStepErrorQuotingTheLostSessionWordingDoesNotFailTheSession) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  MasterOptions master_options;
  master_options.health_interval = 10s;
  master_options.session_lease = 30s;
  Scope root = Scope::NewRootScope();
  Scope on_ps = root.WithDevice(kPs0);
  auto name = ops::Placeholder(on_ps.WithOpName("name"), DT_STRING);
  ops::ReadFile(on_ps.WithOpName("read"), name);
  ops::Const(on_ps.WithOpName("three"), 3.f);
  Worker* ps = cluster_.server(kPs0)->worker();
  auto session = NewMasterSession(cluster_.server(kWorker0)->worker(), SessionOptions(), kTimeout,
                                  master_options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<std::string> handles = ps->session_handles();
  ASSERT_EQ(handles.size(), 1u);
  const std::string wording =
      StrCat("/nonexistent/task ", kPs0, " has no worker session '", handles[0],
             "' (never created, deleted, or the task restarted)");
  std::vector<Tensor> out;
  for (int i = 0; i < 2; ++i) {
    Status s =
        (*session)->Run({{"name", Tensor::Scalar<std::string>(wording)}}, {"read"}, {}, &out);
    EXPECT_EQ(s.code(), Code::kNotFound) << s;
    EXPECT_TRUE(Contains(s, wording)) << s;
    EXPECT_FALSE(Contains(s, "no longer holds worker session")) << s;
  }
  Status s = (*session)->Run({}, {"three"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 3.f);
  EXPECT_TRUE((*session)->Close().ok());
}

// A client with keepalive pings (what grpc:// sessions use) keeps a call
// that waits long without data: servers accept its pings (gRPC's default
// policy would end the connection with GOAWAY after a few of them).
TEST_F(LeaseTest, KeepalivePingsDoNotEndALongCall) {
  StartCluster({{"worker", 1}});
  ChannelOptions options;
  options.keepalive = 2s;
  auto client = WorkerClient::Create(cluster_.server(kWorker0)->bound_address(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(CreateSession(**client, "long", 0).ok());
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q"), {DT_FLOAT});
  ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, {DT_FLOAT});
  auto graph = Register(**client, "long", root, {});
  ASSERT_TRUE(graph.ok()) << graph.status();
  wire::RunGraphRequest request;
  request.set_session_handle("long");
  request.set_graph_handle(*graph);
  request.set_step_id(5);
  request.set_timeout_ms(10000);  // five pings' worth of silence
  wire::RunGraphResponse response;
  Status s = (*client)->RunGraph(request, &response, 20s);
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;  // the step's own limit
  EXPECT_TRUE(Contains(s, "10000 ms (RunOptions.timeout_ms)")) << s;
}

// A session that could not be made on every task leaves nothing behind on
// those that made it, the master's own task included (which holds it
// without a lease).
TEST_F(LeaseTest, ASessionThatFailsPartWayIsDeletedWhereItWasMade) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Worker* ps = cluster_.server(kPs0)->worker();
  for (int i = 0; i < 4096; ++i) {  // the most a task keeps
    wire::CreateWorkerSessionRequest create;
    create.set_session_handle(StrCat("filler_", i));
    ASSERT_TRUE(ps->CreateWorkerSession(create).ok());
  }
  Worker* master_worker = cluster_.server(kWorker0)->worker();
  auto session = NewMasterSession(master_worker, SessionOptions());
  EXPECT_EQ(session.status().code(), Code::kResourceExhausted) << session.status();
  EXPECT_TRUE(Contains(session.status(), kPs0)) << session.status();
  EXPECT_EQ(master_worker->num_sessions(), 0);
}

// The sessions of one master share one health-monitor thread: each is a
// watch of it, which Close removes.
TEST_F(LeaseTest, AMastersSessionsShareOneHealthMonitor) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Master* master = cluster_.server(kWorker0)->master();
  EXPECT_EQ(master->health_monitor(), nullptr);
  auto first = master->CreateSession(SessionOptions());
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = master->CreateSession(SessionOptions());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(master->health_monitor(), nullptr);
  EXPECT_EQ(master->health_monitor()->num_watches(), 2);
  EXPECT_EQ(cluster_.server(kPs0)->worker()->num_sessions(), 2);
  ASSERT_TRUE(master->CloseSession(*first).ok());
  EXPECT_EQ(master->health_monitor()->num_watches(), 1);
  ASSERT_TRUE(master->CloseSession(*second).ok());
  EXPECT_EQ(master->health_monitor()->num_watches(), 0);
  EXPECT_EQ(cluster_.server(kPs0)->worker()->num_sessions(), 0);
}

}  // namespace
}  // namespace weir
