// weir_cluster_probe: the client side of the network-namespace tests. Checks
// the tasks of a cluster with HealthMonitor, from whatever namespace it runs
// in:
//
//   weir_cluster_probe --cluster 'worker=10.0.0.1:2222;ps=10.0.0.3:2222' --once
//       one round: prints "healthy" and exits 0, or the failure and exits 1;
//   weir_cluster_probe --cluster ... --watch [--limit-s 30]
//       prints "watching" once the first round passed, then runs rounds until
//       one fails: prints "FAILED <status>" and exits 2 (3 if none failed
//       within --limit-s);
//   weir_cluster_probe --hold-step grpc://10.0.0.1:2222 --on /job:ps/task:0
//                      [--fetch-on /job:worker/task:1]
//       a session on that master whose step blocks in a dequeue on that
//       task (and, with --fetch-on, in a Recv of its value on the other
//       task): prints "holding" when the step is on its way, then waits for
//       it; prints "step ended: <status>" and exits 0 when it ends.
#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/health_monitor.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace {

int HoldStep(const std::string& target, const std::string& device,
             const std::string& fetch_device) {
  weir::RegisterStandardOpsAndKernels();
  weir::RegisterGrpcSessionFactory();
  weir::Scope root = weir::Scope::NewRootScope();
  auto queue = weir::ops::FIFOQueueV2(root.WithOpName("q").WithDevice(device), {weir::DT_FLOAT});
  auto dequeued = weir::ops::QueueDequeueV2(root.WithOpName("dequeue").WithDevice(device), queue,
                                            {weir::DT_FLOAT});
  std::string target_node = "dequeue";
  if (!fetch_device.empty()) {
    weir::ops::Identity(root.WithOpName("fetch").WithDevice(fetch_device),
                        weir::Output(dequeued.node()));
    target_node = "fetch";
  }
  weir::SessionOptions options;
  options.target = target;
  auto session = weir::Session::New(options);
  if (!session.ok()) {
    std::cerr << "weir_cluster_probe: " << session.status() << "\n";
    return 1;
  }
  weir::Status created = (*session)->Create(root.ToGraphDef());
  if (!created.ok()) {
    std::cerr << "weir_cluster_probe: " << created << "\n";
    return 1;
  }
  weir::Status step;
  std::thread run([&] {
    std::vector<weir::Tensor> out;
    step = (*session)->Run({}, {}, {target_node}, &out);  // no timeout
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::cout << "holding" << std::endl;
  run.join();
  std::cout << "step ended: " << step << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cluster_flag;
  bool once = false, watch = false;
  std::string hold_target, hold_device, fetch_device;
  int interval_ms = 500, timeout_ms = 1500, limit_s = 60;
  CLI::App app{"weir_cluster_probe: health checks of a cluster's tasks"};
  app.add_option("--cluster", cluster_flag, "worker=host:port,...;ps=host:port");
  app.add_option("--hold-step", hold_target, "grpc://master: run a step that blocks");
  app.add_option("--on", hold_device, "where the step blocks (/job:worker/task:1)");
  app.add_option("--fetch-on", fetch_device, "where a Recv of the dequeued value waits");
  app.add_flag("--once", once, "one round");
  app.add_flag("--watch", watch, "rounds until one fails");
  app.add_option("--interval-ms", interval_ms)->default_val(500);
  app.add_option("--timeout-ms", timeout_ms)->default_val(1500);
  app.add_option("--limit-s", limit_s)->default_val(60);
  CLI11_PARSE(app, argc, argv);
  if (!hold_target.empty()) return HoldStep(hold_target, hold_device, fetch_device);
  if (once == watch) {
    std::cerr << "weir_cluster_probe: give exactly one of --once and --watch\n";
    return 64;
  }
  auto cluster = weir::ClusterSpec::ParseFlags(cluster_flag);
  if (!cluster.ok()) {
    std::cerr << "weir_cluster_probe: " << cluster.status() << "\n";
    return 64;
  }
  weir::HealthMonitorOptions options;
  options.interval = std::chrono::milliseconds(interval_ms);
  options.timeout = std::chrono::milliseconds(timeout_ms);
  auto monitor = weir::HealthMonitor::Create(*cluster, options);
  if (!monitor.ok()) {
    std::cerr << "weir_cluster_probe: " << monitor.status() << "\n";
    return 64;
  }
  weir::Status first = (*monitor)->CheckNow();
  if (once || !first.ok()) {
    std::cout << (first.ok() ? "healthy" : "FAILED " + first.ToString()) << std::endl;
    return first.ok() ? 0 : (once ? 1 : 2);
  }
  std::mutex mu;
  std::condition_variable cv;
  std::optional<weir::Status> failure;
  weir::Status started = (*monitor)->Start([&](const weir::Status& status) {
    std::lock_guard<std::mutex> lock(mu);
    failure = status;
    cv.notify_all();
  });
  if (!started.ok()) {
    std::cerr << "weir_cluster_probe: " << started << "\n";
    return 64;
  }
  std::cout << "watching" << std::endl;
  std::unique_lock<std::mutex> lock(mu);
  cv.wait_for(lock, std::chrono::seconds(limit_s), [&] { return failure.has_value(); });
  if (!failure) {
    std::cout << "no failure within " << limit_s << " s" << std::endl;
    return 3;
  }
  std::cout << "FAILED " << failure->ToString() << std::endl;
  return 2;
}
