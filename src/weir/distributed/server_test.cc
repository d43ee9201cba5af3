#include "weir/distributed/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "proto/server.pb.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/worker_client.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

ClusterConfig Config(const std::string& cluster, const std::string& job, int task) {
  auto config = ClusterConfigFromFlags(cluster, job, task);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

ServerOptions SmallOptions(int devices = 1) {
  ServerOptions options;
  options.num_cpu_devices = devices;
  options.intra_op_threads = 1;
  return options;
}

TEST(ServerTest, GetStatusListsTheTasksDevices) {
  auto server =
      Server::Create(Config("worker=localhost:0;ps=localhost:1", "worker", 0), SmallOptions(2));
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->Start().ok());
  std::string address = (*server)->bound_address();
  EXPECT_THAT(address, HasSubstr("127.0.0.1:"));
  EXPECT_NE(address, "127.0.0.1:0");  // the picked port is reported

  auto client = WorkerClient::Create(address);
  ASSERT_TRUE(client.ok()) << client.status();
  auto devices = (*client)->GetStatus(5s);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].name, "/job:worker/replica:0/task:0/device:CPU:0");
  EXPECT_EQ((*devices)[1].name, "/job:worker/replica:0/task:0/device:CPU:1");
  EXPECT_EQ((*devices)[0].device_type, "CPU");
  EXPECT_GT((*devices)[0].memory_limit, 0);
  EXPECT_NE((*devices)[0].incarnation, (*devices)[1].incarnation);
  // The same as the server reports in process.
  EXPECT_EQ((*devices)[1].incarnation, (*server)->device_attributes()[1].incarnation);

  (*server)->Stop();
  (*server)->Join();
  // A stopped server refuses (not hangs): the deadline bounds the call.
  auto start = std::chrono::steady_clock::now();
  auto after = (*client)->GetStatus(2s);
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(after.status().code() == Code::kUnavailable ||
              after.status().code() == Code::kDeadlineExceeded)
      << after.status();
  EXPECT_THAT(after.status().message(), HasSubstr("GetStatus to " + address));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(ServerTest, StopWakesJoinFromAnotherThread) {
  auto server = Server::Create(Config("worker=localhost:0", "worker", 0), SmallOptions());
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->Start().ok());
  std::thread stopper([&] { (*server)->Stop(); });
  (*server)->Join();
  stopper.join();
  (*server)->Stop();  // again: a no-op
  Status restart = (*server)->Start();
  EXPECT_EQ(restart.code(), Code::kFailedPrecondition) << restart;
}

TEST(ServerTest, PortInUseIsUnavailable) {
  auto first = Server::Create(Config("worker=localhost:0", "worker", 0), SmallOptions());
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->Start().ok());
  std::string port = (*first)->bound_address().substr((*first)->bound_address().rfind(':') + 1);
  auto second = Server::Create(Config("worker=localhost:" + port, "worker", 0), SmallOptions());
  ASSERT_TRUE(second.ok());
  Status status = (*second)->Start();
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("/job:worker/replica:0/task:0"));
  EXPECT_THAT(status.message(), HasSubstr("127.0.0.1:" + port));
}

TEST(ServerTest, CreateErrors) {
  ClusterConfig config = Config("worker=localhost:0", "worker", 0);
  config.task = 1;
  auto bad_task = Server::Create(config, SmallOptions());
  ASSERT_FALSE(bad_task.ok());
  EXPECT_THAT(bad_task.status().message(), HasSubstr("no task 1"));
  config.task = 0;
  EXPECT_EQ(Server::Create(config, SmallOptions(0)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Server::Create(config, SmallOptions(100000)).status().code(), Code::kInvalidArgument);
  ServerOptions no_host = SmallOptions();
  no_host.host = "";
  EXPECT_EQ(Server::Create(config, no_host).status().code(), Code::kInvalidArgument);
}

TEST(ServerTest, FromServerDef) {
  wire::ServerDef server_def;
  ToServerDef(Config("worker=localhost:1;ps=localhost:2", "ps", 0), &server_def);
  server_def.set_port(0);
  auto server = Server::Create(server_def, SmallOptions());
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->config().job, "ps");
  EXPECT_EQ((*server)->device_attributes()[0].name, "/job:ps/replica:0/task:0/device:CPU:0");
  server_def.set_port(70000);
  EXPECT_EQ(Server::Create(server_def, SmallOptions()).status().code(), Code::kInvalidArgument);
  server_def.set_port(2345);
  auto moved = Server::Create(server_def, SmallOptions());
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*(*moved)->config().cluster.task_address("ps", 0), "localhost:2345");
}

TEST(WorkerClientTest, UnreachableTaskFailsWithinItsDeadline) {
  auto client = WorkerClient::Create("127.0.0.1:1");  // nothing listens on port 1
  ASSERT_TRUE(client.ok());
  auto start = std::chrono::steady_clock::now();
  auto devices = (*client)->GetStatus(1s);
  ASSERT_FALSE(devices.ok());
  EXPECT_THAT(devices.status().message(), HasSubstr("GetStatus to 127.0.0.1:1"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ((*client)->GetStatus(0ms).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(WorkerClient::Create("nohost").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace weir

namespace weir {
namespace {

// Port 0 in the cluster spec: the task binds a free port and its own master
// calls itself there, so a session runs; another task's port 0 cannot be
// known, so a graph that needs that task fails naming it.
TEST(ServerTest, PortZeroIsResolvedForTheTasksOwnSessions) {
  RegisterGrpcSessionFactory();
  const std::string cluster = "worker=localhost:0;ps=localhost:0";
  auto worker = Server::Create(Config(cluster, "worker", 0), SmallOptions());
  auto ps = Server::Create(Config(cluster, "ps", 0), SmallOptions());
  ASSERT_TRUE(worker.ok() && ps.ok());
  ASSERT_TRUE((*worker)->Start().ok());
  ASSERT_TRUE((*ps)->Start().ok());
  const std::string bound = (*worker)->bound_address();
  const std::string port = bound.substr(bound.rfind(':'));
  auto own = (*worker)->config().cluster.task_address("worker", 0);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(*own, "localhost" + port);  // the spec's host, the bound port

  SessionOptions options;
  options.target = "grpc://" + bound;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  Scope root = Scope::NewRootScope();
  ops::Mul(root.WithOpName("y"), ops::Const(root, 2.f), 21.f);
  ops::Identity(root.WithOpName("on_ps").WithDevice("/job:ps/task:0"), 1.f);
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status s = (*session)->Run({}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 42.f);
  s = (*session)->Run({}, {"on_ps"}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("/job:ps/replica:0/task:0"));
  EXPECT_THAT(s.message(), HasSubstr("port 0"));
  EXPECT_TRUE((*session)->Close().ok());
}

}  // namespace
}  // namespace weir
