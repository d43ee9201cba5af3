// null_step_client: the Weir side of bench/null_step.sh (OSDI 2016, Fig. 6),
// run like TensorFlow's side (bench/peers/null_step_peers.py): a grpc://
// session to a master already serving (weir-server processes started by the
// driver) runs a step that fetches one scalar Const placed on each of
// /job:<job>/task:0..N-1. After --warmup untimed steps (which also register
// the partitions with every task), --steps steps are timed one by one, and
// one JSON line gives the median, p90 and mean step latency in milliseconds,
// the client's CPU time per step and, with --server-pids, the CPU time per
// step of those processes together (from /proc, over the timed steps only):
//
//   null_step_client --target grpc://127.0.0.1:2222 --job worker --tasks 4
//       [--steps 1000] [--warmup 50] [--server-pids 11,12,13,14]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>

#include "weir/distributed/grpc_session.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace {

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// utime + stime of a process in seconds, from /proc/<pid>/stat (fields 14
// and 15, after the parenthesised command name); -1 if unreadable.
double ProcCpuSeconds(int pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return -1;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double SumCpu(const std::vector<int>& pids) {
  double total = 0;
  for (int pid : pids) {
    double s = ProcCpuSeconds(pid);
    if (s < 0) return -1;
    total += s;
  }
  return total;
}

double Round3(double x) { return std::round(x * 1000) / 1000; }

}  // namespace

int main(int argc, char** argv) {
  std::string target, job = "worker", pids_flag;
  int tasks = 1, steps = 1000, warmup = 50;
  CLI::App app{"null_step_client: Weir's distributed null step against a running cluster"};
  app.add_option("--target", target, "grpc://host:port of the master")->required();
  app.add_option("--job", job, "the job whose tasks each hold one scalar");
  app.add_option("--tasks", tasks, "how many tasks of --job (0..N-1)")->required();
  app.add_option("--steps", steps, "timed steps");
  app.add_option("--warmup", warmup, "untimed steps first");
  app.add_option("--server-pids", pids_flag, "comma-separated pids whose CPU time to report");
  CLI11_PARSE(app, argc, argv);
  if (tasks < 1 || steps < 1 || warmup < 0) {
    std::cerr << "null_step_client: --tasks and --steps must be positive, --warmup >= 0\n";
    return 64;
  }
  std::vector<int> pids;
  for (std::stringstream in(pids_flag); in.good();) {
    std::string pid;
    std::getline(in, pid, ',');
    if (!pid.empty()) pids.push_back(std::stoi(pid));
  }
  weir::RegisterStandardOpsAndKernels();
  weir::RegisterGrpcSessionFactory();
  weir::Scope root = weir::Scope::NewRootScope();
  std::vector<std::string> fetches;
  for (int t = 0; t < tasks; ++t) {
    auto c = weir::ops::Const(root.WithOpName(weir::StrCat("scalar_", t))
                                  .WithDevice(weir::StrCat("/job:", job, "/task:", t)),
                              static_cast<float>(t));
    fetches.push_back(c.name());
  }
  weir::SessionOptions options;
  options.target = target;
  auto session = weir::Session::New(options);
  if (!session.ok()) {
    std::cerr << "null_step_client: " << session.status() << "\n";
    return 1;
  }
  weir::Status s = (*session)->Create(root.ToGraphDef());
  std::vector<weir::Tensor> out;
  for (int i = 0; s.ok() && i < warmup; ++i) s = (*session)->Run({}, fetches, {}, &out);
  if (s.ok() && warmup > 0) {
    for (int t = 0; t < tasks; ++t) {
      if (out[t].scalar<float>() != static_cast<float>(t)) {
        std::cerr << "null_step_client: task " << t << " returned " << out[t].DebugString() << "\n";
        return 1;
      }
    }
  }
  std::vector<double> times;
  times.reserve(steps);
  const double server_start = SumCpu(pids);
  const double cpu_start = ProcessCpuSeconds();
  for (int i = 0; s.ok() && i < steps; ++i) {
    auto start = std::chrono::steady_clock::now();
    s = (*session)->Run({}, fetches, {}, &out);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double cpu = ProcessCpuSeconds() - cpu_start;
  const double server_end = SumCpu(pids);
  if (!s.ok()) {
    std::cerr << "null_step_client: " << s << "\n";
    return 1;
  }
  std::sort(times.begin(), times.end());
  const double median =
      steps % 2 ? times[steps / 2] : (times[steps / 2 - 1] + times[steps / 2]) / 2;
  const double mean = std::accumulate(times.begin(), times.end(), 0.0) / steps;
  std::cout << "{\"peer\": \"weir\", \"workers\": " << tasks << ", \"steps\": " << steps
            << ", \"median_ms\": " << Round3(1e3 * median)
            << ", \"p90_ms\": " << Round3(1e3 * times[static_cast<size_t>(0.9 * (steps - 1))])
            << ", \"mean_ms\": " << Round3(1e3 * mean)
            << ", \"client_cpu_ms_per_step\": " << Round3(1e3 * cpu / steps);
  if (!pids.empty() && server_start >= 0 && server_end >= 0) {
    std::cout << ", \"server_cpu_ms_per_step\": "
              << Round3(1e3 * (server_end - server_start) / steps);
  }
  std::cout << "}" << std::endl;
  (*session)->Close().ok();
  return 0;
}
