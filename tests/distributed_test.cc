// The distributed runtime across processes: two weir-server tasks
// (/job:worker/task:0 and /job:ps/task:0) on free loopback ports, started
// and stopped by the test; a remote session and `weir run --master` run a
// graph placed across both and give what the local session gives.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <thread>

#include "weir/distributed/grpc_session.h"
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
      auto client = WorkerClient::Create(address);
      ASSERT_TRUE(client.ok());
      bool up = false;
      for (int i = 0; i < 100 && !up; ++i) {
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
  void StartTask(const std::string& cluster, const std::string& job) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      execl(WEIR_SERVER_PATH, WEIR_SERVER_PATH, "--cluster", cluster.c_str(), "--job", job.c_str(),
            "--task", "0", static_cast<char*>(nullptr));
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
                     " --master grpc://127.0.0.1:" + std::to_string(FreePort()) + " --fetch y",
                 &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("Unavailable"), std::string::npos) << out;
}

}  // namespace
}  // namespace weir
