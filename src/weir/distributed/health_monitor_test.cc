#include "weir/distributed/health_monitor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "proto/worker_service.pb.h"
#include "weir/distributed/server.h"
#include "weir/distributed/worker.h"

namespace weir {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::unique_ptr<Server> StartServer(const std::string& job, int task, const std::string& spec) {
  auto config = ClusterConfigFromFlags(spec, job, task);
  EXPECT_TRUE(config.ok()) << config.status();
  ServerOptions options;
  options.intra_op_threads = 1;
  auto server = Server::Create(*config, options);
  EXPECT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE((*server)->Start().ok());
  return std::move(*server);
}

// A loopback socket that listens but never accepts or answers: the TCP
// handshake completes, gRPC's never does (a host that stopped responding).
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    listen(fd_, 16);
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() { close(fd_); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Two live servers, worker 0 and ps 0, and the spec naming both.
struct TwoTasks {
  TwoTasks() {
    worker = StartServer("worker", 0, "worker=localhost:0;ps=localhost:1");
    ps = StartServer("ps", 0, "worker=localhost:1;ps=localhost:0");
    auto spec = ClusterSpec::FromJobs(
        {{"worker", {{0, worker->bound_address()}}}, {"ps", {{0, ps->bound_address()}}}});
    EXPECT_TRUE(spec.ok()) << spec.status();
    cluster = *spec;
  }
  std::unique_ptr<Server> worker, ps;
  ClusterSpec cluster;
};

TEST(HealthMonitorTest, CheckNowNamesTheFailedTask) {
  TwoTasks tasks;
  auto monitor = HealthMonitor::Create(tasks.cluster, HealthMonitorOptions());
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  Status healthy = (*monitor)->CheckNow();
  EXPECT_TRUE(healthy.ok()) << healthy;

  std::string ps_address = tasks.ps->bound_address();
  tasks.ps->Stop();
  tasks.ps->Join();
  auto start = Clock::now();
  FailedTask failed;
  Status status = (*monitor)->CheckNow(&failed);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("task /job:ps/replica:0/task:0 at " + ps_address +
                                          " failed its health check"));
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("/job:worker")));
  EXPECT_EQ(failed.name, "/job:ps/replica:0/task:0");
  EXPECT_EQ(failed.address, ps_address);
}

// The checks carry lease renewals: a task that holds every session passes,
// one that does not (expired, deleted, restarted) fails with Aborted.
TEST(HealthMonitorTest, ATaskThatLostARenewedSessionFailsTheCheck) {
  TwoTasks tasks;
  for (Server* server : {tasks.worker.get(), tasks.ps.get()}) {
    wire::CreateWorkerSessionRequest create;
    create.set_session_handle("s");
    create.set_lease_ms(60000);
    ASSERT_TRUE(server->worker()->CreateWorkerSession(create).ok());
  }
  HealthMonitorOptions options;
  options.renew_sessions = {"s"};
  auto monitor = HealthMonitor::Create(tasks.cluster, options);
  ASSERT_TRUE(monitor.ok());
  FailedTask failed;
  Status status = (*monitor)->CheckNow(&failed);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(failed.name.empty());

  wire::DeleteWorkerSessionRequest del;
  del.set_session_handle("s");
  ASSERT_TRUE(tasks.ps->worker()->DeleteWorkerSession(del).ok());
  status = (*monitor)->CheckNow(&failed);
  EXPECT_EQ(status.code(), Code::kAborted) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("task /job:ps/replica:0/task:0 at " + tasks.ps->bound_address() +
                        " no longer holds worker session 's'"));
  EXPECT_EQ(failed.name, "/job:ps/replica:0/task:0");

  // The background rounds keep the structured task with the failure.
  ASSERT_TRUE((*monitor)->Start(nullptr).ok());
  for (int i = 0; i < 200 && (*monitor)->status().ok(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ((*monitor)->status().code(), Code::kAborted);
  EXPECT_EQ((*monitor)->failed_task().name, "/job:ps/replica:0/task:0");
  EXPECT_EQ((*monitor)->failed_task().address, tasks.ps->bound_address());
}

// One thread for many sessions: a dead task fails every watch that has it
// (once each, naming it), others go on; a lost session fails only the
// watch that renews it; a removed watch is never reported.
TEST(HealthMonitorTest, ASharedMonitorFailsTheWatchesOfAFailedTaskOnly) {
  TwoTasks tasks;
  for (Server* server : {tasks.worker.get(), tasks.ps.get()}) {
    for (const char* handle : {"a", "b"}) {
      wire::CreateWorkerSessionRequest create;
      create.set_session_handle(handle);
      create.set_lease_ms(60000);
      ASSERT_TRUE(server->worker()->CreateWorkerSession(create).ok());
    }
  }
  HealthMonitorOptions options;
  options.interval = 50ms;
  options.timeout = 1000ms;
  auto monitor = SharedHealthMonitor::Create(options);
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  auto worker_only = ClusterSpec::FromJobs({{"worker", {{0, tasks.worker->bound_address()}}}});
  ASSERT_TRUE(worker_only.ok());
  std::mutex mu;
  std::map<int64_t, std::vector<std::pair<Status, FailedTask>>> reports;
  auto report = [&](int64_t* id) {
    return [&, id](const Status& status, const FailedTask& task) {
      std::lock_guard<std::mutex> lock(mu);
      reports[*id].push_back({status, task});
    };
  };
  int64_t both_a = 0, both_b = 0, worker_a = 0, removed = 0;
  both_a = *(*monitor)->Add(tasks.cluster, "a", report(&both_a));
  both_b = *(*monitor)->Add(tasks.cluster, "b", report(&both_b));
  worker_a = *(*monitor)->Add(*worker_only, "a", report(&worker_a));
  removed = *(*monitor)->Add(tasks.cluster, "", report(&removed));
  std::this_thread::sleep_for(300ms);  // healthy rounds
  EXPECT_EQ((*monitor)->num_watches(), 4);
  (*monitor)->Remove(removed);

  // ps loses "b": only the watch renewing it fails.
  wire::DeleteWorkerSessionRequest del;
  del.set_session_handle("b");
  ASSERT_TRUE(tasks.ps->worker()->DeleteWorkerSession(del).ok());
  for (int i = 0; i < 200 && (*monitor)->num_watches() > 2; ++i) std::this_thread::sleep_for(10ms);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(reports[both_b].size(), 1u);
    EXPECT_EQ(reports[both_b][0].first.code(), Code::kAborted) << reports[both_b][0].first;
    EXPECT_EQ(reports[both_b][0].second.name, "/job:ps/replica:0/task:0");
    EXPECT_TRUE(reports[both_a].empty());
  }

  // ps dies: the watch that has it fails; the worker-only one goes on.
  std::string ps_address = tasks.ps->bound_address();
  tasks.ps->Stop();
  for (int i = 0; i < 500 && (*monitor)->num_watches() > 1; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(200ms);  // more rounds: nothing reported twice
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(reports[both_a].size(), 1u);
  EXPECT_EQ(reports[both_a][0].first.code(), Code::kUnavailable) << reports[both_a][0].first;
  EXPECT_EQ(reports[both_a][0].second.name, "/job:ps/replica:0/task:0");
  EXPECT_EQ(reports[both_a][0].second.address, ps_address);
  EXPECT_EQ(reports[both_b].size(), 1u);
  EXPECT_TRUE(reports[worker_a].empty());
  EXPECT_TRUE(reports[removed].empty());
  EXPECT_EQ((*monitor)->num_watches(), 1);
  FailedTask failed;
  EXPECT_TRUE((*monitor)->CheckNow(worker_a, &failed).ok());
}

TEST(HealthMonitorTest, BackgroundRoundsReportTheFirstFailureOnce) {
  TwoTasks tasks;
  HealthMonitorOptions options;
  options.interval = 100ms;
  options.timeout = 1000ms;
  auto monitor = HealthMonitor::Create(tasks.cluster, options);
  ASSERT_TRUE(monitor.ok());
  std::atomic<int> failures{0};
  std::atomic<int64_t> detected_at{0};
  ASSERT_TRUE((*monitor)
                  ->Start([&](const Status& status) {
                    detected_at = Clock::now().time_since_epoch().count();
                    ++failures;
                  })
                  .ok());
  EXPECT_EQ((*monitor)->Start(nullptr).code(), Code::kFailedPrecondition);
  std::this_thread::sleep_for(300ms);  // a few healthy rounds
  EXPECT_TRUE((*monitor)->status().ok());
  EXPECT_EQ(failures.load(), 0);

  std::string worker_address = tasks.worker->bound_address();
  auto stopped_at = Clock::now();
  tasks.worker->Stop();
  while (failures.load() == 0 && Clock::now() - stopped_at < 10s) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(failures.load(), 1);
  auto latency = Clock::time_point(Clock::duration(detected_at.load())) - stopped_at;
  EXPECT_LT(latency, 5s);
  Status status = (*monitor)->status();
  EXPECT_EQ(status.code(), Code::kUnavailable);
  EXPECT_THAT(status.message(),
              HasSubstr("task /job:worker/replica:0/task:0 at " + worker_address));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(failures.load(), 1);  // once, and it stays
  (*monitor)->Stop();
  (*monitor)->Stop();
}

TEST(HealthMonitorTest, ASilentHostFailsAtTheDeadline) {
  SilentListener silent;
  auto spec = ClusterSpec::FromJobs({{"worker", {{3, silent.address()}}}});
  ASSERT_TRUE(spec.ok());
  HealthMonitorOptions options;
  options.timeout = 300ms;
  auto monitor = HealthMonitor::Create(*spec, options);
  ASSERT_TRUE(monitor.ok());
  auto start = Clock::now();
  Status status = (*monitor)->CheckNow();
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("task /job:worker/replica:0/task:3 at " + silent.address() +
                        " failed its health check: "
                        "no answer within 300 ms"));
}

TEST(HealthMonitorTest, StopIsPromptDuringARound) {
  SilentListener silent;
  auto spec = ClusterSpec::FromJobs({{"worker", {{0, silent.address()}}}});
  ASSERT_TRUE(spec.ok());
  HealthMonitorOptions options;
  options.timeout = 20s;
  auto monitor = HealthMonitor::Create(*spec, options);
  ASSERT_TRUE(monitor.ok());
  std::atomic<bool> called{false};
  ASSERT_TRUE((*monitor)->Start([&](const Status&) { called = true; }).ok());
  std::this_thread::sleep_for(200ms);  // the round is waiting on the silent host
  auto start = Clock::now();
  (*monitor)->Stop();
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_FALSE(called.load());  // a stop is not a failure
  EXPECT_TRUE((*monitor)->status().ok());
}

TEST(HealthMonitorTest, CreateErrors) {
  EXPECT_EQ(HealthMonitor::Create(ClusterSpec(), HealthMonitorOptions()).status().code(),
            Code::kInvalidArgument);
  auto spec = ClusterSpec::FromJobs({{"worker", {{0, "127.0.0.1:1"}}}});
  ASSERT_TRUE(spec.ok());
  HealthMonitorOptions options;
  options.timeout = 0ms;
  EXPECT_EQ(HealthMonitor::Create(*spec, options).status().code(), Code::kInvalidArgument);
  options = HealthMonitorOptions();
  options.channel.auth_token = "token";  // without TLS
  EXPECT_THAT(HealthMonitor::Create(*spec, options).status().message(),
              HasSubstr("an auth token needs TLS"));
}

}  // namespace
}  // namespace weir
