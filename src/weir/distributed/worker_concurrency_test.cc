// The Worker's own concurrency, driven directly (no gRPC, so that TSan sees
// every synchronization: scripts/test.sh runs these under TSan, where the
// tests through Debian's uninstrumented gRPC cannot run). Concurrent
// RunGraph, CleanupGraph, RecvTensorAsync and AbortAllSteps on one worker:
// every step either succeeds with the right value or fails as aborted,
// every RecvTensor callback runs exactly once, and no step state is left.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "proto/worker_service.pb.h"
#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/worker.h"
#include "weir/framework/rendezvous.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

constexpr char kDevice[] = "/job:worker/replica:0/task:0/device:CPU:0";

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, AttrMap attrs) {
  NodeDef node;
  node.name = std::move(name);
  node.op = std::move(op);
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.device = kDevice;
  return node;
}

class WorkerConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    StatusOr<ClusterSpec> cluster = ClusterSpec::ParseFlags("worker=localhost:1");
    ASSERT_TRUE(cluster.ok());
    devices_ = DeviceMgr::NewCpuDevices(1, 2, "worker", 0);
    worker_ = std::make_unique<Worker>(ClusterConfig{*cluster, std::string("worker"), 0},
                                       devices_.get(), 4);
    wire::CreateWorkerSessionRequest create;
    create.set_session_handle("s");
    ASSERT_TRUE(worker_->CreateWorkerSession(create).ok());
    // y = x * 2.
    GraphDef def;
    def.nodes.push_back(Node("x", "_Arg", {}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
    def.nodes.push_back(
        Node("two", "Const", {}, {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(2.f)}}));
    def.nodes.push_back(Node("mul", "Mul", {"x", "two"}, {{"T", DT_FLOAT}}));
    def.nodes.push_back(Node("y", "_Retval", {"mul"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
    wire::RegisterGraphRequest reg;
    reg.set_session_handle("s");
    GraphDefToProto(def, reg.mutable_graph_def());
    reg.add_feed_names(std::string("x"));
    reg.add_fetch_names(std::string("y"));
    wire::RegisterGraphResponse registered;
    Status s = worker_->RegisterGraph(reg, &registered);
    ASSERT_TRUE(s.ok()) << s;
    graph_ = registered.graph_handle();
  }

  // RunGraph of step `step_id` with x = [i, -i]; checks y when it succeeds.
  Status Run(int64_t step_id, float i) {
    wire::RunGraphRequest run;
    run.set_session_handle("s");
    run.set_graph_handle(graph_);
    run.set_step_id(step_id);
    wire::NamedTensorProto* send = run.add_send();
    send->set_name("x");
    EXPECT_TRUE(TensorToProto(Tensor::FromVector<float>({i, -i}), send->mutable_tensor()).ok());
    run.add_recv_key("y");
    wire::RunGraphResponse response;
    Status s = worker_->RunGraph(run, &response);
    if (s.ok()) {
      Tensor y;
      EXPECT_EQ(response.recv_size(), 1);
      EXPECT_TRUE(TensorFromProto(response.recv(0).tensor(), &y).ok());
      EXPECT_TRUE(y.ContentEquals(Tensor::FromVector<float>({2 * i, -2 * i}))) << y.DebugString();
    }
    return s;
  }

  void Cleanup(int64_t step_id) {
    wire::CleanupGraphRequest cleanup;
    cleanup.set_step_id(step_id);
    EXPECT_TRUE(worker_->CleanupGraph(cleanup).ok());
  }

  std::unique_ptr<DeviceMgr> devices_;
  std::unique_ptr<Worker> worker_;
  std::string graph_;
};

TEST_F(WorkerConcurrencyTest, RunGraphCleanupAndAbortFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kSteps = 40;
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSteps; ++i) {
        const int64_t step_id = 1 + t * kSteps + i;
        Status s = Run(step_id, static_cast<float>(step_id));
        if (s.ok()) {
          ++ok;
        } else {
          // Only the cleaners and the abort below end a step early.
          EXPECT_TRUE(errors::IsAborted(s) || errors::IsCancelled(s)) << s;
          ++failed;
        }
      }
    });
  }
  // Cleaners race the runners: each cleans the other threads' step ids,
  // which either ends a running step or refuses it later.
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kThreads * kSteps; i += 7) Cleanup(1 + i);
    });
  }
  threads.emplace_back([&] { worker_->AbortAllSteps(errors::Aborted("test aborts all steps")); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok + failed, kThreads * kSteps);
  EXPECT_GT(ok.load(), 0);
  for (int64_t id = 1; id <= kThreads * kSteps; ++id) Cleanup(id);
  EXPECT_EQ(worker_->num_steps(), 0);
}

TEST_F(WorkerConcurrencyTest, EveryRecvTensorCallbackRunsOnceWhenItsStepIsCleanedUp) {
  constexpr int kRequests = 64;
  std::atomic<int> called{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kRequests; i += 4) {
        wire::RecvTensorRequest request;
        request.set_step_id(1000 + i % 8);
        request.set_rendezvous_key(
            Rendezvous::CreateKey(kDevice, 1, kDevice, "edge_" + std::to_string(i), {0, 0}));
        worker_->RecvTensorAsync(request, [&](const Status& s, const Tensor&, bool) {
          EXPECT_FALSE(s.ok());  // nothing is ever sent
          ++called;
        });
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 8; ++i) Cleanup(1000 + i);
  });
  for (std::thread& thread : threads) thread.join();
  // Requests that came after their step's cleanup were refused at once;
  // the others were waiting and end with the cleanup (or the next one).
  for (int i = 0; i < 8; ++i) Cleanup(1000 + i);
  EXPECT_EQ(called.load(), kRequests);
  EXPECT_EQ(worker_->num_steps(), 0);
}

}  // namespace
}  // namespace weir
