// Client leases (master.h): a master closes a session that no call of its
// client touched for the lease, on every task, aborting its running steps;
// calls and KeepAlive renew it; a remote client renews it while it lives,
// however long it idles; later calls on a collected session say why.
#include <gtest/gtest.h>

#include <thread>

#include "weir/distributed/grpc_session.h"
#include "weir/distributed/master.h"
#include "weir/distributed/test_cluster_test_util.h"
#include "weir/distributed/worker.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
const char kWorker0[] = "/job:worker/replica:0/task:0";
const char kPs0[] = "/job:ps/replica:0/task:0";

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

class ClientLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    RegisterGrpcSessionFactory();
    auto cluster = TestCluster::Start({{"worker", 1}, {"ps", 1}});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  Worker* worker(const char* task) { return cluster_.server(task)->worker(); }
  // A master on worker 0's task beside the server's own, with `lease`.
  std::unique_ptr<Master> NewMaster(std::chrono::milliseconds lease) {
    MasterOptions options;
    options.client_session_lease = lease;
    return std::make_unique<Master>(worker(kWorker0), options);
  }
  // Waits (at most `limit`) until `master` holds no session.
  static bool WaitUntilEmpty(const Master& master, std::chrono::milliseconds limit) {
    const auto give_up = Clock::now() + limit;
    while (master.num_sessions() > 0 && Clock::now() < give_up) std::this_thread::sleep_for(5ms);
    return master.num_sessions() == 0;
  }

  TestCluster cluster_;
};

// A value on ps fetched through worker 0: graphs registered on both tasks.
GraphDef AcrossTasks() {
  Scope root = Scope::NewRootScope();
  auto on_ps = ops::Const(root.WithOpName("on_ps").WithDevice(kPs0), 2.f);
  ops::Mul(root.WithOpName("y").WithDevice(kWorker0), on_ps, 21.f);
  return root.ToGraphDef();
}

TEST_F(ClientLeaseTest, AnIdleSessionIsClosedOnEveryTaskWhenItsLeaseRunsOut) {
  constexpr auto kLease = 600ms;
  auto master = NewMaster(kLease);
  auto handle = master->CreateSession(SessionOptions());
  ASSERT_TRUE(handle.ok()) << handle.status();
  const auto before_last_call = Clock::now();
  {
    auto session = master->Find(*handle);
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE((*session)->Create(AcrossTasks()).ok());
    std::vector<Tensor> out;
    Status s = (*session)->Run({}, {"y"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].scalar<float>(), 42.f);
  }
  const auto last_call = Clock::now();
  EXPECT_EQ(worker(kPs0)->num_sessions(), 1);
  EXPECT_EQ(worker(kWorker0)->num_sessions(), 1);

  ASSERT_TRUE(WaitUntilEmpty(*master, kLease + 1s));
  EXPECT_GE(Clock::now() - before_last_call, kLease);
  EXPECT_LT(Clock::now() - last_call, kLease + 300ms);
  EXPECT_EQ(master->num_expired_sessions(), 1);
  // The collector's Close (after it forgot the handle) deletes the worker
  // sessions, and their graphs, on every task.
  for (int i = 0; i < 200 && worker(kPs0)->num_sessions() + worker(kWorker0)->num_sessions() > 0;
       ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(worker(kPs0)->num_sessions(), 0);
  EXPECT_EQ(worker(kWorker0)->num_sessions(), 0);

  // Later calls say what happened; closing it is no error.
  auto gone = master->Find(*handle);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kAborted) << gone.status();
  EXPECT_TRUE(Contains(gone.status(), *handle) && Contains(gone.status(), "expired after") &&
              Contains(gone.status(), "without a call from its client") &&
              Contains(gone.status(), "600 ms") && Contains(gone.status(), kWorker0))
      << gone.status();
  EXPECT_TRUE(master->CloseSession(*handle).ok());
  EXPECT_EQ(master->Find("never made").status().code(), Code::kNotFound);
}

TEST_F(ClientLeaseTest, CallsRenewTheLease) {
  constexpr auto kLease = 400ms;
  auto master = NewMaster(kLease);
  auto handle = master->CreateSession(SessionOptions());
  ASSERT_TRUE(handle.ok()) << handle.status();
  // Each Find is a call of the client (KeepAlive is one); five leases long.
  for (auto until = Clock::now() + 5 * kLease; Clock::now() < until;) {
    ASSERT_TRUE(master->Find(*handle).ok());
    std::this_thread::sleep_for(kLease / 4);
  }
  EXPECT_EQ(master->num_sessions(), 1);
  EXPECT_EQ(master->num_expired_sessions(), 0);
  EXPECT_EQ(worker(kPs0)->num_sessions(), 1);
  // Without a lease nothing is collected.
  auto unleased = NewMaster(0ms);
  auto kept = unleased->CreateSession(SessionOptions());
  ASSERT_TRUE(kept.ok());
  std::this_thread::sleep_for(kLease + 200ms);
  EXPECT_TRUE(unleased->Find(*kept).ok());
}

// A step blocked in a dequeue on ps whose client went away: the collector's
// Close aborts it on every task, so no step state stays behind.
TEST_F(ClientLeaseTest, ACollectedSessionsBlockedStepIsAbortedEverywhere) {
  constexpr auto kLease = 500ms;
  auto master = NewMaster(kLease);
  auto handle = master->CreateSession(SessionOptions());
  ASSERT_TRUE(handle.ok()) << handle.status();
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice(kPs0), {DT_FLOAT});
  auto dequeued =
      ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice(kPs0), queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice(kWorker0), Output(dequeued.node()));
  std::shared_ptr<Session> session = *master->Find(*handle);
  ASSERT_TRUE(session->Create(root.ToGraphDef()).ok());
  Status step;
  Clock::time_point ended;
  std::thread blocked([&] {
    std::vector<Tensor> out;
    step = session->Run({}, {"out"}, {}, &out);  // no timeout
    ended = Clock::now();
  });
  const auto started = Clock::now();
  blocked.join();
  EXPECT_GE(ended - started, kLease - 50ms);
  EXPECT_LT(ended - started, kLease + 1s);
  EXPECT_EQ(step.code(), Code::kCancelled) << step;
  EXPECT_TRUE(Contains(step, "closed")) << step;
  EXPECT_TRUE(cluster_.NoStepStateAnywhere());
  // Close deletes the worker sessions after aborting the step.
  for (int i = 0; i < 200 && worker(kPs0)->num_sessions() > 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(worker(kPs0)->num_sessions(), 0);
}

// A remote client that idles for several leases keeps its session: its
// KeepAlive renews it.
TEST_F(ClientLeaseTest, ALivingIdleRemoteClientKeepsItsSession) {
  // A one-task cluster of its own on a free port, with a short client lease.
  ClusterConfig config;
  auto single = ClusterSpec::FromJobs({{"chief", {{0, StrCat("127.0.0.1:", PickFreePort())}}}});
  ASSERT_TRUE(single.ok());
  config.cluster = *single;
  config.job = "chief";
  ServerOptions options;
  options.client_session_lease_ms = 400;
  auto server = Server::Create(config, options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->Start().ok());
  SessionOptions session_options;
  session_options.target = StrCat("grpc://", (*server)->bound_address());
  auto session = Session::New(session_options);
  ASSERT_TRUE(session.ok()) << session.status();
  Scope root = Scope::NewRootScope();
  ops::Mul(root.WithOpName("y"), ops::Const(root, 2.f), 21.f);
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::this_thread::sleep_for(1500ms);  // nearly four leases without a step
  std::vector<Tensor> out;
  Status s = (*session)->Run({}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 42.f);
  EXPECT_EQ((*server)->master()->num_expired_sessions(), 0);
  EXPECT_EQ((*server)->master()->num_sessions(), 1);
  ASSERT_TRUE((*session)->Close().ok());
  EXPECT_EQ((*server)->master()->num_sessions(), 0);
}

TEST_F(ClientLeaseTest, ALeaseTooShortToRenewIsRefused) {
  MasterOptions options;
  options.client_session_lease = 100ms;
  Status s = options.Validate();
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "client session lease") && Contains(s, "400")) << s;
  options.client_session_lease = -1ms;
  EXPECT_EQ(options.Validate().code(), Code::kInvalidArgument);
  ServerOptions server_options;
  server_options.client_session_lease_ms = 10;
  ClusterConfig config;
  config.cluster = cluster_.cluster;
  config.job = "worker";
  EXPECT_EQ(Server::Create(config, server_options).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace weir
