// How long HealthMonitor takes to report a weir-server process killed with
// SIGKILL (issue 16: "detection time of a killed task, median and worst of
// 10 kills"). Each trial starts two weir-server processes on free loopback
// ports, watches both with a HealthMonitor, waits a random part of one
// interval (so the kill lands anywhere in the round cycle), kills one, and
// times the monitor's callback from the kill. Prints each trial and a JSON
// summary line:
//
//   build/release/bench/failure_detection_bench [--kills 10] [--interval-ms 500]
//                                                [--timeout-ms 1500]
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/health_monitor.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

pid_t StartServer(const std::string& job, const std::string& address_file) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    std::string cluster =
        job == "worker" ? "worker=localhost:0;ps=localhost:1" : "worker=localhost:1;ps=localhost:0";
    execl(WEIR_SERVER_PATH, WEIR_SERVER_PATH, "--cluster", cluster.c_str(), "--job", job.c_str(),
          "--task", "0", "--intra-op-threads", "1", "--address-file", address_file.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

std::string WaitForAddress(const std::string& path) {
  for (int i = 0; i < 3000; ++i) {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
    std::this_thread::sleep_for(10ms);
  }
  return "";
}

int IntFlag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  int kills = IntFlag(argc, argv, "--kills", 10);
  weir::HealthMonitorOptions options;
  options.interval = std::chrono::milliseconds(IntFlag(argc, argv, "--interval-ms", 500));
  options.timeout = std::chrono::milliseconds(IntFlag(argc, argv, "--timeout-ms", 1500));
  char pattern[] = "/tmp/failure_detection_bench.XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 1;
  std::string dir = pattern;
  std::mt19937 random(12345);
  std::vector<double> millis;
  for (int trial = 0; trial < kills; ++trial) {
    std::string worker_file = dir + "/worker" + std::to_string(trial);
    std::string ps_file = dir + "/ps" + std::to_string(trial);
    pid_t worker = StartServer("worker", worker_file);
    pid_t ps = StartServer("ps", ps_file);
    std::string worker_address = WaitForAddress(worker_file);
    std::string ps_address = WaitForAddress(ps_file);
    auto cleanup = [&] {
      for (pid_t pid : {worker, ps}) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    };
    if (worker_address.empty() || ps_address.empty()) {
      std::cerr << "a server did not start\n";
      cleanup();
      return 1;
    }
    auto cluster =
        weir::ClusterSpec::FromJobs({{"worker", {{0, worker_address}}}, {"ps", {{0, ps_address}}}});
    auto monitor = weir::HealthMonitor::Create(*cluster, options);
    if (!monitor.ok() || !(*monitor)->CheckNow().ok()) {
      std::cerr << "the cluster is not healthy at the start\n";
      cleanup();
      return 1;
    }
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Clock::time_point> detected;
    std::string message;
    (void)(*monitor)->Start([&](const weir::Status& status) {
      std::lock_guard<std::mutex> lock(mu);
      detected = Clock::now();
      message = status.ToString();
      cv.notify_all();
    });
    std::uniform_int_distribution<int> phase(0, static_cast<int>(options.interval.count()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + phase(random)));
    auto killed_at = Clock::now();
    kill(worker, SIGKILL);
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, 30s, [&] { return detected.has_value(); });
    }
    (*monitor)->Stop();
    cleanup();
    if (!detected) {
      std::cerr << "trial " << trial << ": not detected in 30 s\n";
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(*detected - killed_at).count();
    millis.push_back(ms);
    std::printf("trial %d: %.1f ms  %s\n", trial, ms, message.c_str());
  }
  std::filesystem::remove_all(dir);
  std::vector<double> sorted = millis;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted.size() % 2
                      ? sorted[sorted.size() / 2]
                      : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf(
      "{\"kills\": %d, \"interval_ms\": %lld, \"timeout_ms\": %lld, \"median_ms\": %.1f, "
      "\"worst_ms\": %.1f, \"best_ms\": %.1f}\n",
      kills, static_cast<long long>(options.interval.count()),
      static_cast<long long>(options.timeout.count()), median, sorted.back(), sorted.front());
  return 0;
}
