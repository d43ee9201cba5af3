// A grpc:// session as a client sees it, beyond results (master_test.cc):
// step statistics of every task, RunOptions.timeout_ms on a step blocked on
// another task, TLS and the token, and waiting for a master that is not
// listening yet. In-process servers on loopback; certificates made by
// openssl at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "proto/step_stats.pb.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/server.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/distributed/test_cluster_test_util.h"
#include "weir/distributed/tls_test_util.h"
#include "weir/distributed/worker.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
const char kWorker0[] = "/job:worker/replica:0/task:0";
const char kPs0[] = "/job:ps/replica:0/task:0";
const std::string kWorkerCpu = StrCat(kWorker0, "/device:CPU:0");
const std::string kPsCpu = StrCat(kPs0, "/device:CPU:0");

class RemoteSessionTest : public ::testing::Test {
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
  std::unique_ptr<Session> Remote(const Scope& root) {
    EXPECT_TRUE(root.ok()) << root.status();
    auto session = cluster_.NewSession(kWorker0, root.ToGraphDef());
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }

  TestCluster cluster_;
};

// b = square(a) on ps, c = b * 3 on worker (the master's task); a is fed
// (constants would be folded away).
Scope TwoTaskGraph() {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope worker = root.WithDevice("/job:worker/task:0");
  auto a = ops::Placeholder(ps.WithOpName("a"), DT_FLOAT);
  auto b = ops::Square(ps.WithOpName("b"), a);
  ops::Mul(worker.WithOpName("c"), b, ops::Const(worker.WithOpName("three"), 3.f));
  return root;
}

const NodeExecStats* FindNode(const StepStats& stats, const std::string& name) {
  for (const NodeExecStats& node : stats.nodes) {
    if (node.node_name == name) return &node;
  }
  return nullptr;
}

void ExpectStatsOfBothTasks(const StepStats& stats) {
  const NodeExecStats* b = FindNode(stats, "b");
  const NodeExecStats* c = FindNode(stats, "c");
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(b->device, kPsCpu);
  EXPECT_EQ(b->op, "Square");
  EXPECT_EQ(c->device, kWorkerCpu);
  EXPECT_EQ(c->op, "Mul");
  int sends_on_ps = 0, recvs_on_worker = 0;
  std::set<std::string> devices;
  for (const NodeExecStats& node : stats.nodes) {
    devices.insert(node.device);
    EXPECT_GT(node.start_micros, 0) << node.node_name;
    EXPECT_GE(node.end_micros, node.start_micros) << node.node_name;
    sends_on_ps += node.op == "_Send" && node.device == kPsCpu;
    recvs_on_worker += node.op == "_Recv" && node.device == kWorkerCpu;
  }
  EXPECT_EQ(devices, (std::set<std::string>{kPsCpu, kWorkerCpu}));
  EXPECT_GE(sends_on_ps, 1);
  EXPECT_GE(recvs_on_worker, 1);
  // c needs b's value, sent across tasks: b ends before c starts (one
  // process here, so one clock).
  EXPECT_LE(b->end_micros, c->start_micros);
}

TEST_F(RemoteSessionTest, TracedStepsReturnTheStepStatisticsOfEveryTask) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  auto remote = Remote(TwoTaskGraph());
  ASSERT_TRUE(remote);
  std::vector<Tensor> out;
  RunOptions trace;
  trace.trace = true;
  RunMetadata metadata;
  const Tensor two = Tensor::FromVector<float>({2.f}, {});
  Status s = remote->Run({{"a", two}}, {"c"}, {}, &out, trace, &metadata);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 12.f);
  ExpectStatsOfBothTasks(metadata.step_stats);

  // The Chrome trace: one process row per device, across tasks.
  nlohmann::json json = nlohmann::json::parse(metadata.ChromeTrace());
  std::set<std::string> processes;
  for (const auto& event : json["traceEvents"]) {
    if (event["name"] == "process_name") processes.insert(event["args"]["name"]);
  }
  EXPECT_EQ(processes, (std::set<std::string>{kPsCpu, kWorkerCpu}));

  // Callables too.
  auto handle = remote->MakeCallable({{"a"}, {"c"}, {}});
  ASSERT_TRUE(handle.ok()) << handle.status();
  RunMetadata callable_metadata;
  s = remote->RunCallable(*handle, {two}, &out, trace, &callable_metadata);
  ASSERT_TRUE(s.ok()) << s;
  ExpectStatsOfBothTasks(callable_metadata.step_stats);

  // Without a trace nothing is collected.
  RunMetadata untraced;
  ASSERT_TRUE(remote->Run({{"a", two}}, {"c"}, {}, &out, RunOptions(), &untraced).ok());
  EXPECT_TRUE(untraced.step_stats.nodes.empty());
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
}

TEST_F(RemoteSessionTest, StepStatisticsFromTheWireAreChecked) {
  StepStats stats;
  NodeExecStats node;
  node.node_name = "n";
  node.op = "Add";
  node.device = kPsCpu;
  node.thread_id = 3;
  node.start_micros = 1000;
  node.end_micros = 1500;
  node.bytes_allocated = 64;
  node.frame_name = "loop";
  node.iteration = 2;
  stats.nodes.push_back(node);
  node.device = kWorkerCpu;
  stats.nodes.push_back(node);
  wire::StepStats proto;
  StepStatsToProto(stats, &proto);
  ASSERT_EQ(proto.dev_stats_size(), 2);
  EXPECT_EQ(proto.dev_stats(0).node_stats(0).all_end_rel_micros(), 500);
  EXPECT_EQ(proto.dev_stats(0).node_stats(0).timeline_label(), "n = Add()");
  StepStats back;
  ASSERT_TRUE(StepStatsFromWire(proto, "test", &back).ok());
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(back.nodes[1].device, kWorkerCpu);
  EXPECT_EQ(back.nodes[1].end_micros, 1500);
  EXPECT_EQ(back.nodes[1].frame_name, "loop");
  EXPECT_EQ(back.nodes[1].iteration, 2);
  EXPECT_EQ(back.nodes[1].bytes_allocated, 64);
  // Hostile durations are refused, naming node and device.
  proto.mutable_dev_stats(1)->mutable_node_stats(0)->set_all_end_rel_micros(-1);
  Status s = StepStatsFromWire(proto, "task x", &back);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("negative duration"));
  EXPECT_THAT(s.message(), HasSubstr(kWorkerCpu));
  proto.mutable_dev_stats(1)->mutable_node_stats(0)->set_all_start_micros(INT64_MAX);
  proto.mutable_dev_stats(1)->mutable_node_stats(0)->set_all_end_rel_micros(1);
  s = StepStatsFromWire(proto, "task x", &back);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("overflows"));
}

// A hostile (or huge) answer is cut at the limits, unread past them: two
// bytes on the wire per empty node, or one long device name that every node
// would copy, expand by orders of magnitude here. The last node says how
// many were dropped and whose; a trace of it is still valid.
TEST(StepStatsWireTest, AHostileAnswerIsCutAtTheLimits) {
  wire::StepStats proto;
  for (const std::string& device : {kPsCpu, kWorkerCpu}) {
    wire::DeviceStepStats* dev = proto.add_dev_stats();
    dev->set_device(device);
    for (int i = 0; i < 1500; ++i) dev->add_node_stats();  // 2 bytes each on the wire
  }
  EXPECT_LT(proto.ByteSizeLong(), 7000u);
  StepStatsWireLimits limits;
  limits.max_nodes = 1000;
  StepStats out;
  out.nodes.resize(2);  // another task's, kept
  ASSERT_TRUE(StepStatsFromWire(proto, "task /job:ps/replica:0/task:0", &out, limits).ok());
  ASSERT_EQ(out.nodes.size(), 2u + 1000u + 1u);
  const NodeExecStats& note = out.nodes.back();
  EXPECT_EQ(note.op, kStepStatsTruncatedOp);
  EXPECT_EQ(note.device, kPsCpu);  // where the cut fell
  EXPECT_THAT(note.node_name, HasSubstr("2000 more nodes of task /job:ps/replica:0/task:0"));
  EXPECT_THAT(note.node_name, HasSubstr("at most 1000 nodes"));
  EXPECT_EQ(out.nodes[2 + 999].device, kPsCpu);

  // Bytes: a 64 KiB device name, which each of 100 nodes would copy.
  wire::StepStats wide;
  wire::DeviceStepStats* dev = wide.add_dev_stats();
  dev->set_device(std::string(64 << 10, 'd'));
  for (int i = 0; i < 100; ++i) dev->add_node_stats()->set_node_name(StrCat("n", i));
  limits = StepStatsWireLimits();
  limits.max_bytes = 1 << 20;
  StepStats cut;
  ASSERT_TRUE(StepStatsFromWire(wide, "task t", &cut, limits).ok());
  ASSERT_GT(cut.nodes.size(), 1u);
  int64_t bytes = 0;
  for (size_t i = 0; i + 1 < cut.nodes.size(); ++i) {
    EXPECT_EQ(cut.nodes[i].node_name, StrCat("n", i));
    bytes += sizeof(NodeExecStats) + cut.nodes[i].device.size() + cut.nodes[i].node_name.size();
  }
  EXPECT_LE(bytes, limits.max_bytes);
  EXPECT_LT(cut.nodes.size(), 17u);  // 1 MiB / 64 KiB, and the note
  EXPECT_EQ(cut.nodes.back().op, kStepStatsTruncatedOp);
  EXPECT_EQ(cut.nodes.back().device.size(), 256u);  // the name, shortened
  EXPECT_THAT(cut.nodes.back().node_name,
              HasSubstr(StrCat(100 - (cut.nodes.size() - 1), " more nodes of task t")));
  RunMetadata metadata;
  metadata.step_stats = cut;
  EXPECT_TRUE(nlohmann::json::accept(metadata.ChromeTrace()));

  // Within the limits nothing is cut (the defaults keep a million nodes).
  StepStats all;
  ASSERT_TRUE(StepStatsFromWire(proto, "task x", &all).ok());
  EXPECT_EQ(all.nodes.size(), 3000u);
  EXPECT_EQ(StepStatsWireLimits().max_nodes, 1 << 20);
}

// A step blocked on a queue of another task (ps) than the master's:
// DeadlineExceeded in about the time limit, and no task keeps the step.
TEST_F(RemoteSessionTest, RunOptionsTimeoutEndsAStepBlockedOnAnotherTask) {
  StartCluster({{"worker", 1}, {"ps", 1}});
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:ps/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:worker/task:0"), Output(dequeued.node()));
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  RunOptions options;
  options.timeout_ms = 400;
  std::vector<Tensor> out;
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second with a cached signature
    auto start = std::chrono::steady_clock::now();
    Status s = remote->Run({}, {"out"}, {}, &out, options);
    auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;
    EXPECT_THAT(s.message(), HasSubstr("400 ms"));
    EXPECT_GE(elapsed, 400ms);
    EXPECT_LT(elapsed, 5s);
    EXPECT_TRUE(cluster_.NoStepStateAnywhere());
  }
}

// SessionOptions::remote.max_message_bytes bounds what the client accepts.
TEST_F(RemoteSessionTest, TheClientsMessageLimitIsHonouredAndNamed) {
  StartCluster({{"worker", 1}});
  Scope root = Scope::NewRootScope();
  ops::Fill(root.WithOpName("big"), Tensor::FromVector<int32_t>({4096}, {1}),
            ops::Placeholder(root.WithOpName("v"), DT_FLOAT));
  SessionOptions options;
  options.target = cluster_.target(kWorker0);
  options.remote.max_message_bytes = 4096;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status s = (*session)->Run({{"v", Tensor::FromVector<float>({1.f}, {})}}, {"big"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("max_message_bytes is 4096"));
  EXPECT_THAT(s.message(), HasSubstr(cluster_.server(kWorker0)->bound_address()));
  // The default limit takes it.
  options.remote.max_message_bytes = 0;
  session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  s = (*session)->Run({{"v", Tensor::FromVector<float>({1.f}, {})}}, {"big"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].NumElements(), 4096);
}

class RemoteSessionTlsTest : public RemoteSessionTest {
 protected:
  static void SetUpTestSuite() {
    auto made = MakeTestCertificates();
    ASSERT_TRUE(made.ok()) << made.status();
    certs_ = new TestCertificates(*made);
  }
  static void TearDownTestSuite() {
    if (certs_ != nullptr) std::filesystem::remove_all(certs_->dir);
    delete certs_;
    certs_ = nullptr;
  }
  // One task serving TLS with a token, on `port` (0: a free one). Its
  // master calls its own task through the cluster spec's address, so that
  // is a real port, and the task trusts the CA.
  std::unique_ptr<Server> StartServer(bool tls, int port = 0) {
    if (port == 0) port = PickFreePort();
    auto config = ClusterConfigFromFlags(StrCat("worker=localhost:", port), "worker", 0);
    EXPECT_TRUE(config.ok());
    ServerOptions options;
    options.intra_op_threads = 1;
    if (tls) {
      options.security.tls_cert_file = certs_->server_cert;
      options.security.tls_key_file = certs_->server_key;
      options.security.tls_ca_file = certs_->ca_cert;
      options.security.auth_token = "s3cret-token";
    }
    auto server = Server::Create(*config, options);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return nullptr;
    Status started = (*server)->Start();
    EXPECT_TRUE(started.ok()) << started;
    return std::move(*server);
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = certs_->dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // Session::New, then one step of a constant.
  Status Connect(const SessionOptions& options) {
    auto session = Session::New(options);
    if (!session.ok()) return session.status();
    Scope root = Scope::NewRootScope();
    ops::Const(root.WithOpName("c"), 5.f);
    WEIR_RETURN_IF_ERROR((*session)->Create(root.ToGraphDef()));
    std::vector<Tensor> out;
    WEIR_RETURN_IF_ERROR((*session)->Run({}, {"c"}, {}, &out));
    if (out[0].scalar<float>() != 5.f) return errors::Internal("wrong value");
    return (*session)->Close();
  }

  static TestCertificates* certs_;
};

TestCertificates* RemoteSessionTlsTest::certs_ = nullptr;

TEST_F(RemoteSessionTlsTest, TlsAndTokenSessionsAreServedAndWrongOnesRefusedClearly) {
  auto server = StartServer(/*tls=*/true);
  ASSERT_NE(server, nullptr);
  SessionOptions options;
  options.target = StrCat("grpc://", server->bound_address());
  options.remote.tls_ca_file = certs_->ca_cert;
  options.remote.auth_token_file = WriteFile("token", "s3cret-token\n");
  Status s = Connect(options);
  EXPECT_TRUE(s.ok()) << s;

  // Refusals come at once, not after connect_timeout_ms (30 s by default):
  // a server that answers and refuses will not change its mind.
  auto start = std::chrono::steady_clock::now();
  SessionOptions wrong_ca = options;
  wrong_ca.remote.tls_ca_file = certs_->other_ca_cert;
  s = Connect(wrong_ca);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("TLS handshake failed"));
  EXPECT_THAT(s.message(), HasSubstr(server->bound_address()));

  SessionOptions no_token = options;
  no_token.remote.auth_token_file.clear();
  s = Connect(no_token);
  EXPECT_EQ(s.code(), Code::kUnauthenticated) << s;
  EXPECT_THAT(s.message(), HasSubstr("the call carries no auth token"));
  EXPECT_THAT(s.message(), HasSubstr("the master at " + server->bound_address()));

  SessionOptions wrong_token = options;
  wrong_token.remote.auth_token_file = WriteFile("wrong", "not-the-token");
  s = Connect(wrong_token);
  EXPECT_EQ(s.code(), Code::kUnauthenticated) << s;
  EXPECT_THAT(s.message(), HasSubstr("the call's auth token is wrong"));

  SessionOptions plaintext;
  plaintext.target = options.target;
  s = Connect(plaintext);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);

  // Options that cannot work are InvalidArguments naming what is wrong.
  SessionOptions token_in_clear = plaintext;
  token_in_clear.remote.auth_token_file = options.remote.auth_token_file;
  s = Connect(token_in_clear);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("an auth token needs TLS"));
  SessionOptions missing_token = options;
  missing_token.remote.auth_token_file = certs_->dir + "/none";
  s = Connect(missing_token);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr(certs_->dir + "/none"));
  SessionOptions negative = options;
  negative.remote.connect_timeout_ms = -1;
  EXPECT_EQ(Connect(negative).code(), Code::kInvalidArgument);
  SessionOptions tiny_limit = options;
  tiny_limit.remote.max_message_bytes = -5;
  EXPECT_EQ(Connect(tiny_limit).code(), Code::kInvalidArgument);
}

TEST_F(RemoteSessionTlsTest, ASessionWaitsForAMasterThatStartsLater) {
  const int port = PickFreePort();
  SessionOptions options;
  options.target = StrCat("grpc://localhost:", port);
  options.remote.tls_ca_file = certs_->ca_cert;
  options.remote.auth_token_file = WriteFile("token", "s3cret-token");
  options.remote.connect_timeout_ms = 20000;
  // A second client with the wrong token waits too, then gets the master's
  // refusal (not "did not answer").
  SessionOptions wrong_token = options;
  wrong_token.remote.auth_token_file = WriteFile("wrong", "not-the-token");
  Status connected = errors::Internal("not run");
  Status refused = errors::Internal("not run");
  std::thread client([&] { connected = Connect(options); });
  std::thread refused_client([&] { refused = Connect(wrong_token); });
  std::this_thread::sleep_for(700ms);  // the clients have been refused a few times by now
  auto server = StartServer(/*tls=*/true, port);
  client.join();
  refused_client.join();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(connected.ok()) << connected;
  EXPECT_EQ(refused.code(), Code::kUnauthenticated) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("auth token is wrong"));
}

TEST_F(RemoteSessionTlsTest, WaitingForAMasterIsBounded) {
  SessionOptions options;
  options.target = StrCat("grpc://127.0.0.1:", PickFreePort());
  options.remote.connect_timeout_ms = 400;
  auto start = std::chrono::steady_clock::now();
  Status s = Connect(options);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Code::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr(options.target.substr(7)));
  EXPECT_THAT(s.message(), HasSubstr("did not answer in 400 ms"));
  EXPECT_GE(elapsed, 400ms);
  EXPECT_LT(elapsed, 5s);
  // 0: one try.
  options.remote.connect_timeout_ms = 0;
  start = std::chrono::steady_clock::now();
  s = Connect(options);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr(options.target.substr(7)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

}  // namespace
}  // namespace weir
