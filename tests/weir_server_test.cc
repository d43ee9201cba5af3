// weir-server as a real process: started on a free loopback port, asked for
// its devices over gRPC (with a deadline), stopped with SIGTERM; serving TLS
// with a token from a file; and a bad TF_CONFIG or TLS flag refused with its
// message on stderr.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "weir/distributed/health_monitor.h"
#include "weir/distributed/tls_test_util.h"
#include "weir/distributed/worker_client.h"
#include "weir/graph/graph_def_io.h"

namespace weir {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `command`'s stdout and stderr; its exit status in *exit_code.
std::string RunShell(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

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

class WeirServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/weir_server_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (pid_ > 0) {  // a failed test must not leave a server behind
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (pid_t pid : others_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }

  // Starts weir-server with `args`, its stderr into dir_/stderr.txt, and
  // `tf_config` (unless null) as TF_CONFIG.
  void Start(std::vector<std::string> args, const char* tf_config = nullptr) {
    pid_ = Spawn(std::move(args), dir_ + "/stderr.txt", tf_config);
    ASSERT_GE(pid_, 0);
  }

  // Starts one more weir-server (killed at teardown), its stderr into `stderr_path`.
  pid_t StartOther(std::vector<std::string> args, const std::string& stderr_path) {
    pid_t pid = Spawn(std::move(args), stderr_path, nullptr);
    if (pid > 0) others_.push_back(pid);
    return pid;
  }

  pid_t Spawn(std::vector<std::string> args, const std::string& stderr_path,
              const char* tf_config) {
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, 2) < 0) _exit(127);
      if (tf_config != nullptr) {
        setenv("TF_CONFIG", tf_config, 1);
      } else {
        unsetenv("TF_CONFIG");
      }
      std::vector<char*> argv;
      std::string tool = WEIR_SERVER_PATH;
      argv.push_back(tool.data());
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(tool.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }

  // Waits (polling) for the process to exit; its exit status, or -1 if it
  // still runs after `limit`.
  int WaitForExit(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

  // The address the server wrote once serving; "" if it did not in `limit`.
  std::string WaitForAddress(const std::string& path, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = ReadFile(path);
      if (!text.empty() && text.back() == '\n') return text.substr(0, text.size() - 1);
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return "";
      }
      std::this_thread::sleep_for(10ms);
    }
    return "";
  }

  std::string dir_;
  pid_t pid_ = -1;
  std::vector<pid_t> others_;
};

TEST_F(WeirServerTest, ServesGetStatusAndStopsOnSigterm) {
  std::string address_file = dir_ + "/address";
  Start({"--cluster", "worker=localhost:0;ps=localhost:1", "--job", "worker", "--task", "0",
         "--cpu-devices", "2", "--intra-op-threads", "1", "--address-file", address_file});
  std::string address = WaitForAddress(address_file, 20s);
  ASSERT_FALSE(address.empty()) << "no address; stderr:\n" << ReadFile(dir_ + "/stderr.txt");
  EXPECT_THAT(address, HasSubstr("127.0.0.1:"));  // loopback unless told otherwise

  auto client = WorkerClient::Create(address);
  ASSERT_TRUE(client.ok()) << client.status();
  auto devices = (*client)->GetStatus(5s);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].name, "/job:worker/replica:0/task:0/device:CPU:0");
  EXPECT_EQ((*devices)[1].name, "/job:worker/replica:0/task:0/device:CPU:1");
  EXPECT_EQ((*devices)[0].device_type, "CPU");
  EXPECT_GT((*devices)[0].memory_limit, 0);

  std::string log = ReadFile(dir_ + "/stderr.txt");
  EXPECT_THAT(log, HasSubstr("/job:worker/replica:0/task:0 listening on " + address));
  EXPECT_THAT(log, HasSubstr("device /job:worker/replica:0/task:0/device:CPU:1 (CPU"));

  // Prompt although the client keeps its connection open (gRPC's own
  // Shutdown would wait out its whole grace period, 1 s).
  auto term_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_EQ(WaitForExit(5s), 0) << ReadFile(dir_ + "/stderr.txt");
  EXPECT_LT(std::chrono::steady_clock::now() - term_at, 900ms);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("SIGTERM, stopping"));
  // Gone: the next call fails within its deadline.
  auto after = (*client)->GetStatus(1s);
  EXPECT_FALSE(after.ok());
}

TEST_F(WeirServerTest, TakesTheClusterFromTfConfig) {
  std::string address_file = dir_ + "/address";
  Start({"--intra-op-threads", "1", "--address-file", address_file},
        R"({"cluster": {"worker": ["localhost:1"], "ps": {"3": "localhost:0"}},
            "task": {"type": "ps", "index": 3}})");
  std::string address = WaitForAddress(address_file, 20s);
  ASSERT_FALSE(address.empty()) << "no address; stderr:\n" << ReadFile(dir_ + "/stderr.txt");
  auto client = WorkerClient::Create(address);
  ASSERT_TRUE(client.ok());
  auto devices = (*client)->GetStatus(5s);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "/job:ps/replica:0/task:3/device:CPU:0");
  ASSERT_EQ(kill(pid_, SIGINT), 0);
  EXPECT_EQ(WaitForExit(5s), 0);
}

TEST_F(WeirServerTest, BadTfConfigExitsNonZeroWithTheMessage) {
  Start({}, R"({"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 2}})");
  int status = WaitForExit(10s);
  EXPECT_NE(status, 0);
  EXPECT_NE(status, -1);  // it exited rather than hung
  std::string log = ReadFile(dir_ + "/stderr.txt");
  EXPECT_THAT(log, HasSubstr("InvalidArgument"));
  EXPECT_THAT(log, HasSubstr("TF_CONFIG"));
  EXPECT_THAT(log, HasSubstr("job 'worker' has no task 2"));

  Start({}, "{not json");
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("TF_CONFIG: not valid JSON"));

  Start({});  // no cluster at all
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("no cluster"));

  Start({"--cluster", "worker=localhost:0", "--job", "worker", "--task", "1"});
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("--job/--task"));
}

TEST_F(WeirServerTest, ServesTlsWithATokenFromAFile) {
  auto certs = MakeTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  std::string token_file = dir_ + "/token";
  std::ofstream(token_file) << "process-token-42\n";
  std::string address_file = dir_ + "/address";
  Start({"--cluster", "worker=localhost:0", "--job", "worker", "--task", "0", "--intra-op-threads",
         "1", "--tls-cert", certs->server_cert, "--tls-key", certs->server_key, "--tls-ca",
         certs->ca_cert, "--auth-token-file", token_file, "--address-file", address_file});
  std::string address = WaitForAddress(address_file, 20s);
  ASSERT_FALSE(address.empty()) << "no address; stderr:\n" << ReadFile(dir_ + "/stderr.txt");
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("(TLS, auth token required)"));

  ChannelOptions options;
  options.tls_ca_file = certs->ca_cert;
  options.auth_token = "process-token-42";
  auto client = WorkerClient::Create(address, options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto devices = (*client)->GetStatus(5s);
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ((*devices)[0].name, "/job:worker/replica:0/task:0/device:CPU:0");

  options.auth_token = "process-token-41";
  auto wrong = WorkerClient::Create(address, options);
  ASSERT_TRUE(wrong.ok());
  Status refused = (*wrong)->GetStatus(5s).status();
  EXPECT_EQ(refused.code(), Code::kUnauthenticated) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("the call's auth token is wrong"));
  auto plaintext = WorkerClient::Create(address);
  ASSERT_TRUE(plaintext.ok());
  EXPECT_EQ((*plaintext)->GetStatus(5s).status().code(), Code::kUnavailable);

  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_EQ(WaitForExit(10s), 0) << ReadFile(dir_ + "/stderr.txt");
  std::filesystem::remove_all(certs->dir);
}

// `weir run --master` of a TLS server that requires a token: started before
// the server (it waits for it), then refused clearly and at once with a
// wrong token, no token or the wrong CA.
TEST_F(WeirServerTest, WeirRunMasterReachesATlsServerWithATokenAndWaitsForIt) {
  auto certs = MakeTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  std::ofstream(dir_ + "/token") << "process-token-42\n";
  std::ofstream(dir_ + "/wrong") << "process-token-41\n";
  GraphDef graph;
  NodeDef c;
  c.name = "c";
  c.op = "Const";
  c.attrs = {{"dtype", DT_FLOAT}, {"value", Tensor::FromVector<float>({7.f}, {})}};
  graph.nodes.push_back(c);
  ASSERT_TRUE(WriteGraphDefFile(dir_ + "/g.pb", graph).ok());
  const int port = FreePort();
  ASSERT_GT(port, 0);
  auto weir_run = [&](const std::string& flags, int* code) {
    return RunShell(std::string(WEIR_TOOL_PATH) + " run " + dir_ + "/g.pb --fetch c --master " +
                        "grpc://localhost:" + std::to_string(port) + " " + flags,
                    code);
  };
  const std::string ca = " --tls-ca " + certs->ca_cert;
  int code = -1;
  std::string out;
  std::thread client([&] { out = weir_run(ca + " --auth-token-file " + dir_ + "/token", &code); });
  std::this_thread::sleep_for(500ms);  // the client is being refused meanwhile
  Start({"--cluster", "worker=localhost:" + std::to_string(port), "--job", "worker", "--task", "0",
         "--intra-op-threads", "1", "--tls-cert", certs->server_cert, "--tls-key",
         certs->server_key, "--tls-ca", certs->ca_cert, "--auth-token-file", dir_ + "/token"});
  client.join();
  EXPECT_EQ(code, 0) << out << "\nweir-server:\n" << ReadFile(dir_ + "/stderr.txt");
  EXPECT_THAT(out, HasSubstr("c: float [] {7}"));

  auto start = std::chrono::steady_clock::now();
  out = weir_run(ca + " --auth-token-file " + dir_ + "/wrong", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("Unauthenticated: "));
  EXPECT_THAT(out, HasSubstr("the call's auth token is wrong"));
  out = weir_run(ca, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("Unauthenticated: "));
  EXPECT_THAT(out, HasSubstr("the call carries no auth token"));
  out = weir_run(" --tls-ca " + certs->other_ca_cert + " --auth-token-file " + dir_ + "/token",
                 &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("TLS handshake failed"));
  // Refusals do not wait for --connect-timeout-ms (30 s by default).
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);

  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_EQ(WaitForExit(10s), 0) << ReadFile(dir_ + "/stderr.txt");
  std::filesystem::remove_all(certs->dir);
}

TEST_F(WeirServerTest, BadSecurityFlagsExitNonZeroWithTheMessage) {
  std::vector<std::string> task = {"--cluster", "worker=localhost:0", "--job", "worker", "--task",
                                   "0"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = task;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  std::string token_file = dir_ + "/token";
  std::ofstream(token_file) << "tok\n";
  Start(with({"--auth-token-file", token_file}));  // a token without TLS
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("an auth token needs TLS"));

  Start(with({"--tls-cert", dir_ + "/missing.pem", "--tls-key", dir_ + "/missing.key"}));
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("missing.key' cannot be read"));

  Start(with({"--auth-token-file", dir_ + "/no-token-file"}));
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("--auth-token-file"));

  Start(with({"--max-message-bytes", "0"}));
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("max_message_bytes 0"));

  // A lease the health checks could not keep renewed.
  Start(with({"--session-lease-ms", "1000"}));
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("a session lease of 1000 ms"));

  // A client lease shorter than its renewals could keep.
  Start(with({"--client-session-lease-ms", "100"}));
  EXPECT_EQ(WaitForExit(10s), 1);
  EXPECT_THAT(ReadFile(dir_ + "/stderr.txt"), HasSubstr("a client session lease of 100 ms"));
}

// The issue's failure-detection test: a task killed with SIGKILL is reported
// Unavailable, naming its job, task and address, within 5 s.
TEST_F(WeirServerTest, HealthMonitorReportsASigkilledTaskWithinFiveSeconds) {
  std::string ps_file = dir_ + "/ps_address";
  std::string worker_file = dir_ + "/worker_address";
  Start({"--cluster", "worker=localhost:0;ps=localhost:1", "--job", "worker", "--task", "0",
         "--intra-op-threads", "1", "--address-file", worker_file});
  pid_t worker = pid_;
  std::string worker_address = WaitForAddress(worker_file, 20s);
  ASSERT_FALSE(worker_address.empty()) << ReadFile(dir_ + "/stderr.txt");
  pid_t ps = StartOther({"--cluster", "worker=localhost:1;ps=localhost:0", "--job", "ps", "--task",
                         "0", "--intra-op-threads", "1", "--address-file", ps_file},
                        dir_ + "/ps_stderr.txt");
  ASSERT_GT(ps, 0);
  pid_ = ps;  // WaitForAddress watches pid_
  std::string ps_address = WaitForAddress(ps_file, 20s);
  pid_ = worker;
  ASSERT_FALSE(ps_address.empty()) << ReadFile(dir_ + "/ps_stderr.txt");

  auto cluster =
      ClusterSpec::FromJobs({{"worker", {{0, worker_address}}}, {"ps", {{0, ps_address}}}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto monitor = HealthMonitor::Create(*cluster, HealthMonitorOptions());
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  ASSERT_TRUE((*monitor)->CheckNow().ok());
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::chrono::steady_clock::time_point> detected;
  ASSERT_TRUE((*monitor)
                  ->Start([&](const Status&) {
                    std::lock_guard<std::mutex> lock(mu);
                    detected = std::chrono::steady_clock::now();
                    cv.notify_all();
                  })
                  .ok());
  std::this_thread::sleep_for(700ms);  // healthy rounds first
  ASSERT_TRUE((*monitor)->status().ok()) << (*monitor)->status();

  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(worker, SIGKILL), 0);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 10s, [&] { return detected.has_value(); });
  }
  ASSERT_TRUE(detected.has_value()) << "not detected in 10 s";
  EXPECT_LT(*detected - killed_at, 5s);
  Status status = (*monitor)->status();
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("task /job:worker/replica:0/task:0 at " + worker_address +
                                          " failed its health check"));
  (*monitor)->Stop();
}

}  // namespace
}  // namespace weir
