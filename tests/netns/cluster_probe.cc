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
//   weir_cluster_probe --train grpc://10.0.0.1:2222 [--steps 300]
//       trains a small MLP through that master: its variables (and Adam's
//       state) on /job:ps/task:0, the hidden layer and the whole backward
//       pass on /job:worker/task:1, the output layer and the loss on
//       /job:worker/task:0. Checks that the loss falls at least
//       --min-loss-drop times and that the trained variables live on the ps
//       task (a second session reads them there; they are not on worker 0),
//       prints "trained: ...", then keeps training (each step with a 10 s
//       RunOptions timeout) until a step fails: prints "FAILED <status>" and
//       exits 2 (3 if none failed within --limit-s, 1 if training was wrong);
//   weir_cluster_probe --hold-step grpc://10.0.0.1:2222 --on /job:ps/task:0
//                      [--fetch-on /job:worker/task:1]
//       a session on that master whose step blocks in a dequeue on that
//       task (and, with --fetch-on, in a Recv of its value on the other
//       task): prints "holding" when the step is on its way, then waits for
//       it; prints "step ended: <status>" and exits 0 when it ends.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/health_monitor.h"
#include "weir/ops/const_op.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/gradients.h"
#include "weir/train/optimizers.h"
#include "weir/train/variables.h"

namespace weir {
namespace {

constexpr int kBatch = 64, kInputs = 4, kHidden = 16;
constexpr char kPs[] = "/job:ps/replica:0/task:0";

Tensor Normal(std::mt19937* rng, std::vector<int64_t> dims, float scale) {
  std::normal_distribution<float> normal(0.f, scale);
  Tensor t(DT_FLOAT, TensorShape(dims));
  for (float& v : t.flat<float>()) v = normal(*rng);
  return t;
}

// y = sin(x . a) + 0.5 (x . b): a smooth target an MLP fits.
std::pair<Tensor, Tensor> SyntheticBatch() {
  std::mt19937 rng(11);
  Tensor x = Normal(&rng, {kBatch, kInputs}, 1.f);
  Tensor a = Normal(&rng, {kInputs}, 0.7f), b = Normal(&rng, {kInputs}, 0.7f);
  Tensor y(DT_FLOAT, TensorShape({kBatch, 1}));
  for (int i = 0; i < kBatch; ++i) {
    float xa = 0, xb = 0;
    for (int k = 0; k < kInputs; ++k) {
      xa += x.flat<float>()[i * kInputs + k] * a.flat<float>()[k];
      xb += x.flat<float>()[i * kInputs + k] * b.flat<float>()[k];
    }
    y.flat<float>()[i] = std::sin(xa) + 0.5f * xb;
  }
  return {x, y};
}

// A graph reading the variables named `names` placed on `device`.
GraphDef ReadVariables(const std::vector<Variable>& variables, const std::string& device) {
  Scope root = Scope::NewRootScope().WithDevice(device);
  for (const Variable& v : variables) {
    auto handle = ops::VarHandleOp(root.WithOpName(v.name), v.dtype, v.shape);
    ops::ReadVariableOp(root.WithOpName(v.name + "_value"), handle, v.dtype);
  }
  return root.ToGraphDef();
}

int Train(const std::string& target, int steps, double min_drop, int limit_s) {
  RegisterStandardOpsAndKernels();
  RegisterGrpcSessionFactory();
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope worker0 = root.WithDevice("/job:worker/task:0");
  Scope worker1 = root.WithDevice("/job:worker/task:1");
  std::mt19937 rng(5);
  Output x = ops::Placeholder(worker0.WithOpName("x"), DT_FLOAT);
  Output y = ops::Placeholder(worker0.WithOpName("y"), DT_FLOAT);
  std::vector<Variable> vars;
  for (auto [name, value] : {std::pair{"w1", Normal(&rng, {kInputs, kHidden}, 0.5f)},
                             std::pair{"b1", Normal(&rng, {kHidden}, 0.1f)},
                             std::pair{"w2", Normal(&rng, {kHidden, 1}, 0.5f)},
                             std::pair{"b2", Normal(&rng, {1}, 0.1f)}}) {
    StatusOr<Variable> v = Variable::Create(ps, name, ops::Const(ps, value));
    if (!v.ok()) {
      std::cerr << "weir_cluster_probe: " << v.status() << "\n";
      return 1;
    }
    vars.push_back(*v);
  }
  Output hidden = ops::Tanh(
      worker1, ops::BiasAdd(worker1, ops::MatMul(worker1, x, vars[0].value), vars[1].value));
  Output pred = ops::BiasAdd(worker0, ops::MatMul(worker0, hidden, vars[2].value), vars[3].value);
  Output loss =
      ops::Mean(worker0.WithOpName("loss"), ops::Square(worker0, ops::Sub(worker0, pred, y)),
                ops::Const(worker0, {0, 1}));
  std::vector<Output> values;
  for (const Variable& v : vars) values.push_back(v.value);
  std::vector<Gradient> grads;
  Status s = AddSymbolicGradients(worker1, {loss}, values, {}, &grads);
  std::vector<GradAndVar> grads_and_vars;
  for (size_t i = 0; s.ok() && i < vars.size(); ++i) grads_and_vars.push_back({grads[i], vars[i]});
  AdamOptimizer adam(0.03);
  StatusOr<Operation> train = s.ok() ? adam.ApplyGradients(ps, grads_and_vars) : s;
  if (!train.ok()) {
    std::cerr << "weir_cluster_probe: building the training graph: " << train.status() << "\n";
    return 1;
  }
  std::vector<Variable> all = vars;
  all.insert(all.end(), adam.variables().begin(), adam.variables().end());
  Operation init = GroupInitializers(ps, all);
  if (!root.ok()) {
    std::cerr << "weir_cluster_probe: " << root.status() << "\n";
    return 1;
  }
  SessionOptions options;
  options.target = target;
  auto session = Session::New(options);
  if (!session.ok()) {
    std::cerr << "weir_cluster_probe: " << session.status() << "\n";
    return 1;
  }
  auto [batch_x, batch_y] = SyntheticBatch();
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", batch_x}, {"y", batch_y}};
  std::vector<Tensor> out;
  s = (*session)->Create(root.ToGraphDef());
  if (s.ok()) s = (*session)->Run({}, {}, {init.name()}, &out);
  double first_loss = -1, last_loss = -1;
  for (int step = 0; s.ok() && step < steps; ++step) {
    s = (*session)->Run(feeds, {loss.name()}, {train->name()}, &out);
    if (s.ok()) (step == 0 ? first_loss : last_loss) = out[0].scalar<float>();
  }
  if (!s.ok()) {
    std::cerr << "weir_cluster_probe: training: " << s << "\n";
    return 1;
  }
  const double drop = first_loss / last_loss;
  if (!(drop >= min_drop)) {
    std::cerr << "weir_cluster_probe: the loss fell from " << first_loss << " to " << last_loss
              << " in " << steps << " steps, " << drop << "x; at least " << min_drop
              << "x expected\n";
    return 1;
  }
  // The trained values, read through the training session ...
  std::vector<std::string> names;
  for (const Variable& v : all) names.push_back(v.value.name());
  std::vector<Tensor> trained;
  s = (*session)->Run({}, names, {}, &trained);
  // ... are what a new session reads from the ps task's resources, and no
  // variable of that name is on worker 0.
  std::vector<std::string> reads;
  for (const Variable& v : all) reads.push_back(v.name + "_value");
  for (const auto& [device, expect_there] :
       {std::pair{std::string(kPs), true}, std::pair{std::string("/job:worker/task:0"), false}}) {
    auto reader = Session::New(options);
    if (!s.ok() || !reader.ok()) {
      std::cerr << "weir_cluster_probe: " << (s.ok() ? reader.status() : s) << "\n";
      return 1;
    }
    std::vector<Tensor> read;
    Status r = (*reader)->Create(ReadVariables(all, device));
    if (r.ok()) r = (*reader)->Run({}, reads, {}, &read);
    if (expect_there != r.ok()) {
      std::cerr << "weir_cluster_probe: reading the variables on " << device << ": "
                << (r.ok() ? std::string("found there") : r.ToString()) << "\n";
      return 1;
    }
    for (size_t i = 0; r.ok() && i < all.size(); ++i) {
      if (!read[i].ContentEquals(trained[i])) {
        std::cerr << "weir_cluster_probe: " << all[i].name << " on " << device << " is "
                  << read[i].DebugString() << ", trained " << trained[i].DebugString() << "\n";
        return 1;
      }
    }
    (*reader)->Close().ok();
  }
  std::cout << "trained: loss " << first_loss << " -> " << last_loss << " (" << drop << "x) in "
            << steps << " Adam steps; " << all.size() << " variables on " << kPs << std::endl;
  RunOptions run_options;
  run_options.timeout_ms = 10000;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  int more = 0;
  while (std::chrono::steady_clock::now() < limit) {
    s = (*session)->Run(feeds, {loss.name()}, {train->name()}, &out, run_options);
    if (!s.ok()) {
      std::cout << "FAILED " << s << " (after " << more << " more steps)" << std::endl;
      return 2;
    }
    ++more;
  }
  std::cout << "no failure within " << limit_s << " s" << std::endl;
  return 3;
}

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
}  // namespace weir

int main(int argc, char** argv) {
  std::string cluster_flag;
  std::string train_target;
  std::string hold_target, hold_device, fetch_device;
  bool once = false, watch = false;
  int interval_ms = 500, timeout_ms = 1500, limit_s = 60, steps = 300;
  double min_loss_drop = 10;
  CLI::App app{"weir_cluster_probe: health checks of a cluster's tasks"};
  app.add_option("--cluster", cluster_flag, "worker=host:port,...;ps=host:port");
  app.add_option("--train", train_target, "grpc://host:port: train through this master");
  app.add_option("--steps", steps, "training steps checked (--train)");
  app.add_option("--min-loss-drop", min_loss_drop, "first loss / last loss at least (--train)");
  app.add_option("--hold-step", hold_target, "grpc://master: run a step that blocks");
  app.add_option("--on", hold_device, "where the step blocks (/job:worker/task:1)");
  app.add_option("--fetch-on", fetch_device, "where a Recv of the dequeued value waits");
  app.add_flag("--once", once, "one round");
  app.add_flag("--watch", watch, "rounds until one fails");
  app.add_option("--interval-ms", interval_ms)->default_val(500);
  app.add_option("--timeout-ms", timeout_ms)->default_val(1500);
  app.add_option("--limit-s", limit_s)->default_val(60);
  CLI11_PARSE(app, argc, argv);
  if (!train_target.empty()) return weir::Train(train_target, steps, min_loss_drop, limit_s);
  if (!hold_target.empty()) return weir::HoldStep(hold_target, hold_device, fetch_device);
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
