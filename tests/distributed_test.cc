// The distributed runtime across processes: two weir-server tasks
// (/job:worker/task:0 and /job:ps/task:0) on free loopback ports, started
// and stopped by the test; a remote session and `weir run --master` run a
// graph placed across both and give what the local session gives.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "weir/distributed/grpc_session.h"
#include "weir/distributed/master.h"
#include "weir/distributed/server.h"
#include "weir/distributed/worker.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/npy.h"
#include "weir/graph/graph_def_io.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
constexpr int kClientLeaseMs = 2000;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return -1;
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

std::string RunShell(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

class DistributedProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    RegisterGrpcSessionFactory();
    dir_ = fs::temp_directory_path() / ("weir_distributed_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    worker_address_ = "127.0.0.1:" + std::to_string(FreePort());
    ps_address_ = "127.0.0.1:" + std::to_string(FreePort());
    std::string cluster = "worker=" + worker_address_ + ";ps=" + ps_address_;
    StartTask(cluster, "worker");
    StartTask(cluster, "ps");
    for (const std::string& address : {worker_address_, ps_address_}) {
      bool up = false;
      for (int i = 0; i < 100 && !up; ++i) {
        // A new channel per try: one refused before the server listened
        // backs off (1 s, then longer) and fails fast meanwhile.
        auto client = WorkerClient::Create(address);
        ASSERT_TRUE(client.ok());
        up = (*client)->GetStatus(1s).ok();
        if (!up) std::this_thread::sleep_for(50ms);
      }
      ASSERT_TRUE(up) << "weir-server at " << address << " did not come up";
    }
  }
  void TearDown() override {
    for (pid_t pid : pids_) kill(pid, SIGTERM);
    for (pid_t pid : pids_) {
      int status = 0;
      waitpid(pid, &status, 0);
    }
    fs::remove_all(dir_);
  }
  void StartTask(const std::string& job) {
    StartTask("worker=" + worker_address_ + ";ps=" + ps_address_, job);
  }
  // Waits (bounded) until the task at `address` answers GetStatus.
  bool WaitUntilUp(const std::string& address) {
    for (int i = 0; i < 100; ++i) {
      auto client = WorkerClient::Create(address);
      if (client.ok() && (*client)->GetStatus(1s).ok()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  void StartTask(const std::string& cluster, const std::string& job) {
    // Its log (a lease that expires says so there), one per task.
    const std::string log = Path(job + ".log");
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd < 0 || dup2(fd, 2) < 0) _exit(127);
      // Short leases (the least the default health checks allow for the
      // workers'; 2 s for clients'), so the lease tests are quick; every
      // test's clients then renew theirs several times.
      execl(WEIR_SERVER_PATH, WEIR_SERVER_PATH, "--cluster", cluster.c_str(), "--job", job.c_str(),
            "--task", "0", "--session-lease-ms", "4000", "--client-session-lease-ms",
            std::to_string(kClientLeaseMs).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pids_.push_back(pid);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string worker_address_, ps_address_;
  std::vector<pid_t> pids_;
};

// Variables on ps, math on worker; `ps`/`worker` empty for one device.
Scope Model(const std::string& ps, const std::string& worker) {
  Scope root = Scope::NewRootScope();
  auto w = ops::VarHandleOp(root.WithOpName("w").WithDevice(ps), DT_FLOAT, PartialShape({2, 2}));
  ops::AssignVariableOp(root.WithOpName("init").WithDevice(ps), w,
                        Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  auto x = ops::Placeholder(root.WithOpName("x").WithDevice(worker), DT_FLOAT);
  auto read = ops::ReadVariableOp(root.WithOpName("read"), w, DT_FLOAT);
  auto y = ops::MatMul(root.WithOpName("y").WithDevice(worker), x, read);
  ops::AssignAddVariableOp(root.WithOpName("update").WithDevice(ps), w,
                           ops::Mul(root.WithDevice(worker), y, 0.5f));
  ops::Identity(root.WithOpName("label").WithDevice(ps),
                Tensor::FromVector<std::string>({"ps says hi", ""}, {2}));
  return root;
}

TEST_F(DistributedProcessTest, RemoteSessionOnTwoProcessesMatchesLocal) {
  Scope remote_graph = Model("/job:ps/task:0", "/job:worker/task:0");
  Scope local_graph = Model("", "");
  ASSERT_TRUE(remote_graph.ok() && local_graph.ok());
  SessionOptions options;
  options.target = "grpc://" + worker_address_;
  auto remote = Session::New(options);
  ASSERT_TRUE(remote.ok()) << remote.status();
  auto local = Session::New(SessionOptions());
  ASSERT_TRUE(local.ok());
  ASSERT_TRUE((*remote)->Create(remote_graph.ToGraphDef()).ok());
  ASSERT_TRUE((*local)->Create(local_graph.ToGraphDef()).ok());
  std::vector<Tensor> a, b;
  ASSERT_TRUE((*local)->Run({}, {}, {"init"}, &a).ok());
  Status s = (*remote)->Run({}, {}, {"init"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  Tensor x = Tensor::FromVector<float>({1, 0, 0.5f, -1}, {2, 2});
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE((*local)->Run({{"x", x}}, {"y", "label"}, {"update"}, &a).ok());
    s = (*remote)->Run({{"x", x}}, {"y", "label"}, {"update"}, &b);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_TRUE(a[0].ContentEquals(b[0])) << a[0].DebugString() << " vs " << b[0].DebugString();
    EXPECT_TRUE(a[1].ContentEquals(b[1]));
  }
  ASSERT_EQ((*remote)->ListDevices().size(), 2u);
}

TEST_F(DistributedProcessTest, WeirRunMasterRunsAGraphFileOnTheCluster) {
  Scope graph = Model("/job:ps/task:0", "/job:worker/task:0");
  ASSERT_TRUE(WriteGraphDefFile(Path("g.pb"), graph.ToGraphDef()).ok());
  ASSERT_TRUE(WriteNpy(Path("x.npy"), Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})).ok());
  int code = -1;
  std::string out = RunShell(std::string(WEIR_TOOL_PATH) + " run " + Path("g.pb") +
                                 " --master grpc://" + ps_address_ + " --target init",
                             &code);
  ASSERT_EQ(code, 0) << out;
  out = RunShell(std::string(WEIR_TOOL_PATH) + " run " + Path("g.pb") + " --master grpc://" +
                     ps_address_ + " --feed x=" + Path("x.npy") + " --fetch y --fetch label",
                 &code);
  ASSERT_EQ(code, 0) << out;
  // [[1,2],[3,4]] x [[1,2],[3,4]] = [[7,10],[15,22]]; the variable lives on
  // ps, so the second command's session sees the first one's init.
  EXPECT_NE(out.find("y: float [2,2] {7, 10, 15, 22}"), std::string::npos) << out;
  EXPECT_NE(out.find("ps says hi"), std::string::npos) << out;
  // A bad master is a clear error.
  out = RunShell(std::string(WEIR_TOOL_PATH) + " run " + Path("g.pb") +
                     " --master grpc://127.0.0.1:" + std::to_string(FreePort()) +
                     " --connect-timeout-ms 0 --fetch y",
                 &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("Unavailable"), std::string::npos) << out;
}

// `weir run --master ... --trace`: a Chrome trace with a process row for
// each task's device, holding nodes of both tasks.
TEST_F(DistributedProcessTest, WeirRunMasterWritesATraceOfEveryTask) {
  Scope graph = Model("/job:ps/task:0", "/job:worker/task:0");
  ASSERT_TRUE(WriteGraphDefFile(Path("g.pb"), graph.ToGraphDef()).ok());
  ASSERT_TRUE(WriteNpy(Path("x.npy"), Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})).ok());
  int code = -1;
  std::string out = RunShell(std::string(WEIR_TOOL_PATH) + " run " + Path("g.pb") +
                                 " --master grpc://" + worker_address_ + " --target init",
                             &code);
  ASSERT_EQ(code, 0) << out;
  out = RunShell(std::string(WEIR_TOOL_PATH) + " run " + Path("g.pb") + " --master grpc://" +
                     worker_address_ + " --feed x=" + Path("x.npy") +
                     " --fetch y --fetch label --trace " + Path("t.json"),
                 &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("trace: " + Path("t.json")), std::string::npos) << out;
  std::ifstream file(Path("t.json"));
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json trace = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(trace.is_discarded()) << text.str().substr(0, 500);
  std::map<int, std::string> devices;  // pid -> device
  for (const auto& event : trace["traceEvents"]) {
    if (event["name"] == "process_name") devices[event["pid"]] = event["args"]["name"];
  }
  const std::string ps_cpu = "/job:ps/replica:0/task:0/device:CPU:0";
  const std::string worker_cpu = "/job:worker/replica:0/task:0/device:CPU:0";
  std::set<std::string> names;
  for (const auto& [pid, device] : devices) names.insert(device);
  EXPECT_EQ(names, (std::set<std::string>{ps_cpu, worker_cpu}));
  // y (MatMul) ran on worker, label (Identity) on ps.
  std::map<std::string, std::string> node_device;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      node_device[event["name"]] = devices[event["pid"]];
      EXPECT_GE(event["dur"].get<int64_t>(), 0);
    }
  }
  EXPECT_EQ(node_device["y"], worker_cpu);
  EXPECT_EQ(node_device["label"], ps_cpu);
  // The flags of a secured cluster need --master.
  out = RunShell(std::string(WEIR_TOOL_PATH) + " run " + Path("g.pb") + " --tls-ca " +
                     Path("x.npy") + " --fetch y",
                 &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("need --master"), std::string::npos) << out;
}

// A step blocked on /job:worker/task:0 (a dequeue from its empty queue,
// received by the master's task, ps) while that task is killed (`signal`:
// SIGKILL, a dead process) or stopped (SIGSTOP, a hung one whose
// connections stay open: only the master's health monitor ends that step).
// Returns the step's status and how long it took to fail after the signal.
struct KillResult {
  Status step;
  std::chrono::milliseconds detection{0};
};
KillResult KillWorkerUnderABlockedStep(Session* session, pid_t worker, int signal) {
  KillResult result;
  std::thread step([&] {
    std::vector<Tensor> out;
    result.step = session->Run({}, {"out"}, {}, &out);  // no timeout
  });
  std::this_thread::sleep_for(500ms);  // the step is blocked on worker now
  auto start = std::chrono::steady_clock::now();
  kill(worker, signal);
  step.join();
  result.detection = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  return result;
}

Scope DequeueOnWorker() {
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:worker/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice("/job:worker/task:0"),
                                      queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:ps/task:0"), Output(dequeued.node()));
  ops::Identity(root.WithOpName("ps_only").WithDevice("/job:ps/task:0"),
                Tensor::FromVector<float>({7}, {1}));
  return root;
}

bool Names(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST_F(DistributedProcessTest, ADeadTaskFailsTheStepWithinFiveSeconds) {
  const std::string kWorkerTask = "/job:worker/replica:0/task:0";
  for (int signal : {SIGKILL, SIGSTOP}) {
    SCOPED_TRACE(signal == SIGKILL ? "SIGKILL" : "SIGSTOP");
    if (signal == SIGSTOP) {  // a fresh cluster
      TearDown();
      pids_.clear();
      SetUp();
    }
    Scope root = DequeueOnWorker();
    ASSERT_TRUE(root.ok()) << root.status();
    SessionOptions options;
    options.target = "grpc://" + ps_address_;
    auto session = Session::New(options);
    ASSERT_TRUE(session.ok()) << session.status();
    ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
    const pid_t worker = pids_[0];
    KillResult killed = KillWorkerUnderABlockedStep(session->get(), worker, signal);
    std::printf("[ detection ] %s: the blocked step failed %lld ms after the signal: %s\n",
                signal == SIGKILL ? "SIGKILL" : "SIGSTOP",
                static_cast<long long>(killed.detection.count()), killed.step.ToString().c_str());
    EXPECT_EQ(killed.step.code(), Code::kUnavailable) << killed.step;
    EXPECT_TRUE(Names(killed.step, kWorkerTask)) << killed.step;
    EXPECT_TRUE(Names(killed.step, worker_address_)) << killed.step;
    EXPECT_LT(killed.detection, 5s);

    // Later steps fail fast, naming the task, even ones it has no part in.
    for (const char* fetch : {"out", "ps_only"}) {
      std::vector<Tensor> out;
      auto start = std::chrono::steady_clock::now();
      Status again = (*session)->Run({}, {fetch}, {}, &out);
      EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms) << fetch;
      EXPECT_EQ(again.code(), Code::kUnavailable) << again;
      EXPECT_TRUE(Names(again, kWorkerTask)) << again;
    }
    auto start = std::chrono::steady_clock::now();
    (*session).reset();  // Close skips the failed task: prompt even when it hangs
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);

    if (signal == SIGKILL) {
      // A new session on the surviving master runs what does not use the
      // dead task, and says why it cannot place what does.
      auto fresh = Session::New(options);
      ASSERT_TRUE(fresh.ok()) << fresh.status();
      ASSERT_TRUE((*fresh)->Create(root.ToGraphDef()).ok());
      std::vector<Tensor> out;
      Status s = (*fresh)->Run({}, {"ps_only"}, {}, &out);
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_TRUE(out[0].ContentEquals(Tensor::FromVector<float>({7}, {1})));
      s = (*fresh)->Run({}, {"out"}, {}, &out);
      EXPECT_FALSE(s.ok());
      EXPECT_TRUE(Names(s, kWorkerTask)) << s;
    } else {
      kill(worker, SIGKILL);
    }
  }
}

// The master (worker task 0) is SIGKILLed while its step is blocked in a
// dequeue on ps: ps drops the session when the lease runs out (4 s here),
// aborting that step, and logs one line naming the session and the master.
// A master started again at the same address makes a new session whose
// dequeue gets the value enqueued: the queue outlived the session (it is in
// ps's shared container) and the old dequeue was cancelled, not left
// waiting to take the value.
TEST_F(DistributedProcessTest, AKilledMastersSessionIsDroppedWhenItsLeaseRunsOut) {
  const std::string kWorkerTask = "/job:worker/replica:0/task:0";
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:ps/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice("/job:ps/task:0"),
                                      queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:worker/task:0"), Output(dequeued.node()));
  ops::QueueEnqueueV2(root.WithOpName("enqueue").WithDevice("/job:ps/task:0"), queue,
                      {Input(Tensor::FromVector<float>({5}, {1}))});
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  options.target = "grpc://" + worker_address_;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  Status step;
  std::thread blocked([&] {
    std::vector<Tensor> out;
    step = (*session)->Run({}, {"out"}, {}, &out);  // no timeout: blocks on ps
  });
  std::this_thread::sleep_for(500ms);
  const pid_t master = pids_[0];
  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(master, SIGKILL), 0);
  waitpid(master, nullptr, 0);
  pids_.erase(pids_.begin());
  blocked.join();  // the client sees its master go at once
  EXPECT_FALSE(step.ok());

  const std::string ps_log = Path("ps.log");
  std::string line;
  std::chrono::milliseconds dropped_after{-1};
  while (std::chrono::steady_clock::now() - killed_at < 10s && line.empty()) {
    std::ifstream in(ps_log);
    for (std::string text; std::getline(in, text);) {
      if (text.find("dropped worker session") != std::string::npos) line = text;
    }
    if (line.empty()) std::this_thread::sleep_for(20ms);
  }
  dropped_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed_at);
  ASSERT_FALSE(line.empty()) << "ps logged no expiry in 10 s";
  std::printf("[ lease ] ps dropped the session %lld ms after its master was killed: %s\n",
              static_cast<long long>(dropped_after.count()), line.c_str());
  // The last renewal came at most a health interval (0.5 s) before the kill.
  EXPECT_GT(dropped_after, 3000ms);
  EXPECT_LT(dropped_after, 4000ms + 1500ms);
  EXPECT_NE(line.find(kWorkerTask), std::string::npos) << line;
  EXPECT_NE(line.find("aborted 1 running step"), std::string::npos) << line;

  StartTask("worker");
  ASSERT_TRUE(WaitUntilUp(worker_address_));
  auto fresh = Session::New(options);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_TRUE((*fresh)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status s = (*fresh)->Run({}, {}, {"enqueue"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  RunOptions bounded;
  bounded.timeout_ms = 5000;  // a dequeue left blocked would take the value
  s = (*fresh)->Run({}, {"out"}, {}, &out, bounded);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(out[0].ContentEquals(Tensor::FromVector<float>({5}, {1}))) << out[0].DebugString();
}

// The master hangs (SIGSTOP: its connections stay open) under an untimed
// step blocked on ps: ps drops the session when the lease runs out, and the
// client's step fails Unavailable when the master answers no keepalive
// ping (5 s without a frame, then 5 s), not at its 24 h deadline.
TEST_F(DistributedProcessTest, AHungMastersStepEndsByLeaseOnPsAndKeepaliveOnTheClient) {
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:ps/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice("/job:ps/task:0"),
                                      queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:worker/task:0"), Output(dequeued.node()));
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  options.target = "grpc://" + worker_address_;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  Status step;
  std::chrono::steady_clock::time_point ended_at;
  const pid_t master = pids_[0];
  std::thread blocked([&] {
    std::vector<Tensor> out;
    step = (*session)->Run({}, {"out"}, {}, &out);  // no timeout
    ended_at = std::chrono::steady_clock::now();
  });
  std::this_thread::sleep_for(500ms);
  const auto stopped_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(master, SIGSTOP), 0);
  blocked.join();
  const auto step_ended =
      std::chrono::duration_cast<std::chrono::milliseconds>(ended_at - stopped_at);
  // A stopped process ignores SIGTERM: end it here, not in TearDown.
  kill(master, SIGKILL);
  waitpid(master, nullptr, 0);
  pids_.erase(pids_.begin());
  std::printf("[ keepalive ] the client's step ended %lld ms after its master stopped: %s\n",
              static_cast<long long>(step_ended.count()), step.ToString().c_str());
  EXPECT_EQ(step.code(), Code::kUnavailable) << step;
  EXPECT_NE(step.message().find(worker_address_), std::string::npos) << step;
  EXPECT_GT(step_ended, 4000ms);  // a ping after 5 s of silence, 5 s to answer
  EXPECT_LT(step_ended, 15000ms);
  std::ifstream in(Path("ps.log"));
  std::string text, line;
  while (std::getline(in, text)) {
    if (text.find("dropped worker session") != std::string::npos) line = text;
  }
  EXPECT_NE(line.find("aborted 1 running step"), std::string::npos) << line;
}

// A client process SIGKILLed while its step waits in a dequeue on ps: its
// master (worker task 0) closes the session when the client lease runs out
// (2 s here), logging it, and the step is aborted on ps: a new session's
// dequeue gets the value enqueued, which a dequeue left waiting would take.
TEST_F(DistributedProcessTest, AKilledClientsSessionIsClosedEverywhereWhenItsLeaseRunsOut) {
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:ps/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice("/job:ps/task:0"),
                                      queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:worker/task:0"), Output(dequeued.node()));
  ops::QueueEnqueueV2(root.WithOpName("enqueue").WithDevice("/job:ps/task:0"), queue,
                      {Input(Tensor::FromVector<float>({5}, {1}))});
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE(WriteGraphDefFile(Path("q.pb"), root.ToGraphDef()).ok());
  const std::string master = "grpc://" + worker_address_;
  pid_t client = fork();
  ASSERT_GE(client, 0);
  if (client == 0) {
    int fd = open(Path("client.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(127);
    execl(WEIR_TOOL_PATH, WEIR_TOOL_PATH, "run", Path("q.pb").c_str(), "--master", master.c_str(),
          "--fetch", "out", static_cast<char*>(nullptr));  // blocks in the dequeue
    _exit(127);
  }
  std::this_thread::sleep_for(1500ms);  // connected, and its step waits on ps
  int status = 0;
  ASSERT_EQ(waitpid(client, &status, WNOHANG), 0) << "the client ended early";
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(client, SIGKILL), 0);
  waitpid(client, nullptr, 0);

  std::string line;
  while (std::chrono::steady_clock::now() - killed_at < 10s && line.empty()) {
    std::ifstream in(Path("worker.log"));
    for (std::string text; std::getline(in, text);) {
      if (text.find("closed session '") != std::string::npos) line = text;
    }
    if (line.empty()) std::this_thread::sleep_for(20ms);
  }
  const auto closed_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed_at);
  ASSERT_FALSE(line.empty()) << "the master logged no closed session in 10 s";
  std::printf(
      "[ client lease ] the master closed the session %lld ms after its client was "
      "killed: %s\n",
      static_cast<long long>(closed_after.count()), line.c_str());
  // The client renewed at most a quarter lease before it was killed.
  EXPECT_GT(closed_after, std::chrono::milliseconds(kClientLeaseMs * 3 / 4 - 100));
  EXPECT_LT(closed_after, std::chrono::milliseconds(kClientLeaseMs) + 1000ms);
  EXPECT_NE(line.find("without a call from its client"), std::string::npos) << line;

  SessionOptions options;
  options.target = master;
  auto fresh = Session::New(options);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_TRUE((*fresh)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status s = (*fresh)->Run({}, {}, {"enqueue"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  RunOptions bounded;
  bounded.timeout_ms = 5000;  // the killed client's dequeue, left waiting, would take it
  s = (*fresh)->Run({}, {"out"}, {}, &out, bounded);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(out[0].ContentEquals(Tensor::FromVector<float>({5}, {1}))) << out[0].DebugString();
}

// A master that hangs (SIGSTOP) under a step with a 1 s timeout: the client
// gives up at its deadline, the timeout plus a small slack (max(1 s, 10%)),
// not 10 s later.
TEST_F(DistributedProcessTest, AHungMasterFailsATimedStepWithinTimeoutAndSlack) {
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueueV2(root.WithOpName("q").WithDevice("/job:ps/task:0"), {DT_FLOAT});
  auto dequeued = ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice("/job:ps/task:0"),
                                      queue, {DT_FLOAT});
  ops::Identity(root.WithOpName("out").WithDevice("/job:worker/task:0"), Output(dequeued.node()));
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  options.target = "grpc://" + worker_address_;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  const pid_t master = pids_[0];
  Status step;
  std::chrono::milliseconds took{0};
  std::thread timed([&] {
    RunOptions run;
    run.timeout_ms = 1000;
    std::vector<Tensor> out;
    const auto start = std::chrono::steady_clock::now();
    step = (*session)->Run({}, {"out"}, {}, &out, run);
    took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  });
  std::this_thread::sleep_for(200ms);  // the step waits on ps
  ASSERT_EQ(kill(master, SIGSTOP), 0);
  timed.join();
  kill(master, SIGKILL);  // a stopped process ignores SIGTERM
  waitpid(master, nullptr, 0);
  pids_.erase(pids_.begin());
  std::printf("[ deadline ] a 1 s step on a hung master failed after %lld ms: %s\n",
              static_cast<long long>(took.count()), step.ToString().c_str());
  EXPECT_EQ(step.code(), Code::kDeadlineExceeded) << step;
  EXPECT_NE(step.message().find(worker_address_), std::string::npos) << step;
  EXPECT_GE(took, 1000ms);
  EXPECT_LT(took, 3000ms);
}

// The master's collector closes expired sessions side by side: a Close
// that waits on a hung task (SIGSTOP: its kernel still accepts the
// connection, nothing answers, so DeleteWorkerSession waits for its 60 s
// deadline) does not hold back the Close of another session that does not
// use that task. Session "other" is made while ps is not up yet (so it runs
// without ps); "hung" is made once ps runs, and ps is then stopped; the
// health checks are slowed down so that nothing notices the stop first.
TEST(MasterCollectorTest, AHungTaskDoesNotDelayClosingAnotherExpiredSession) {
  RegisterStandardOpsAndKernels();
  const std::string ps_address = "127.0.0.1:" + std::to_string(FreePort());
  auto cluster =
      ClusterSpec::FromJobs({{"worker", {{0, "127.0.0.1:0"}}}, {"ps", {{0, ps_address}}}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto server = Server::Create(ClusterConfig{*cluster, "worker", 0}, ServerOptions());
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->Start().ok());
  Worker* worker = (*server)->worker();
  MasterOptions options;
  options.client_session_lease = 1000ms;
  options.session_lease = 0ms;          // no worker lease: ps keeps its part
  options.health_interval = 600000ms;   // no health round sees ps stop
  ASSERT_TRUE(options.Validate().ok());
  auto master = std::make_unique<Master>(worker, options);

  auto uses_ps = [&](const std::string& handle) {
    auto session = master->Find(handle);
    if (!session.ok()) return false;
    for (const DeviceInfo& device : (*session)->ListDevices()) {
      if (device.name.find("/job:ps/") != std::string::npos) return true;
    }
    return false;
  };
  // ps is down: "other" is made without it (a refused connection fails at
  // once). A thread renews it (its lease is 1 s) until "hung" has expired.
  auto other = master->CreateSession(SessionOptions());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_FALSE(uses_ps(*other));
  std::atomic<bool> renew_other{true};
  std::thread renewer([&] {
    while (renew_other.load()) {
      EXPECT_TRUE(master->Find(*other).ok());
      std::this_thread::sleep_for(50ms);
    }
  });
  const std::string log =
      (fs::temp_directory_path() / ("weir_collector_test_" + std::to_string(getpid()) + ".log"))
          .string();
  pid_t ps = fork();
  if (ps == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(127);
    const std::string spec = "worker=" + (*server)->bound_address() + ";ps=" + ps_address;
    execl(WEIR_SERVER_PATH, WEIR_SERVER_PATH, "--cluster", spec.c_str(), "--job", "ps", "--task",
          "0", static_cast<char*>(nullptr));
    _exit(127);
  }
  auto stop = [&] {
    renew_other = false;
    if (renewer.joinable()) renewer.join();
    if (ps > 0) {
      kill(ps, SIGKILL);
      waitpid(ps, nullptr, 0);
      ps = -1;
    }
    fs::remove(log);
  };
  struct Cleanup {
    std::function<void()> run;
    ~Cleanup() { run(); }
  } cleanup{stop};  // also when an assertion returns early
  // "hung" uses ps: the master's channel to ps, refused once, backs off
  // for about a second, so it may take a few tries.
  StatusOr<std::string> hung = errors::Internal("not made");
  for (auto begin = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - begin < 10s;) {
    hung = master->CreateSession(SessionOptions());
    if (hung.ok() && uses_ps(*hung)) break;
    if (hung.ok()) {
      EXPECT_TRUE(master->CloseSession(*hung).ok());
    }
    hung = errors::Unavailable("ps not reached");
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_GT(ps, 0);
  ASSERT_TRUE(hung.ok()) << hung.status() << " (weir-server ps did not come up)";
  EXPECT_EQ(worker->num_sessions(), 2);  // each session's part on the master's own task
  ASSERT_EQ(kill(ps, SIGSTOP), 0);

  // "hung" expires one lease later and its Close hangs on ps.
  const auto start = std::chrono::steady_clock::now();
  while (master->num_expired_sessions() == 0 && std::chrono::steady_clock::now() - start < 5s) {
    std::this_thread::sleep_for(20ms);
  }
  std::this_thread::sleep_for(200ms);  // Close("hung") deleted the own part, then waits on ps
  renew_other = false;
  renewer.join();
  const auto last_call = std::chrono::steady_clock::now();
  EXPECT_EQ(master->num_expired_sessions(), 1);
  EXPECT_EQ(worker->num_sessions(), 1);  // only "other"'s part is left here

  // "other" expires one lease later; its Close (this task only) is prompt
  // although "hung"'s still waits on ps.
  while (worker->num_sessions() > 0 && std::chrono::steady_clock::now() - last_call < 10s) {
    std::this_thread::sleep_for(20ms);
  }
  const auto closed_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - last_call);
  EXPECT_EQ(master->num_expired_sessions(), 2);
  EXPECT_EQ(worker->num_sessions(), 0) << "the other session was not closed";
  EXPECT_LT(closed_after, options.client_session_lease + 1500ms);
  std::printf("[ collector ] the other session closed %lld ms after its last call\n",
              static_cast<long long>(closed_after.count()));
  Status gone = master->Find(*other).status();
  EXPECT_EQ(gone.code(), Code::kAborted) << gone;

  // A killed ps breaks the hung Close's connection: the master ends promptly.
  stop();
  const auto destroy = std::chrono::steady_clock::now();
  master.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - destroy, 10s);
}

}  // namespace
}  // namespace weir
