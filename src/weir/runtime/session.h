// Session: the client's handle on a graph and the devices that run it.
//
//   auto session = Session::New(SessionOptions());
//   WEIR_RETURN_IF_ERROR((*session)->Create(root.ToGraphDef()));
//   std::vector<Tensor> outputs;
//   WEIR_RETURN_IF_ERROR((*session)->Run({{"x", x}}, {"y"}, {}, &outputs));
//
// Run names tensors to feed ("node" or "node:port"), tensors to fetch and
// nodes to run for their effects. The first Run of a signature prunes the
// graph to what it needs, places and partitions it and builds one executor
// per device; later Runs of the same signature reuse them (or skip even the
// lookup with MakeCallable). Run is thread-safe: many concurrent steps on
// one session are the normal case. State (variables, queues) lives in the
// devices' resource managers, so every signature sees the same state.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weir/base/status.h"
#include "weir/base/threadpool.h"
#include "weir/framework/node_def.h"
#include "weir/framework/step_stats.h"
#include "weir/framework/tensor.h"
#include "weir/graph/graph.h"
#include "weir/runtime/device_mgr.h"

namespace weir {

class CancellationManager;

struct SessionOptions {
  int num_cpu_devices = 1;   // virtual CPU devices, CPU:0 .. CPU:n-1
  int intra_op_threads = 0;  // per device; 0: one per schedulable core
  int inter_op_threads = 0;  // 0: one per schedulable core
  // Warn when the graph has grown between Runs this many times in a row
  // (ops created inside the training loop).
  int graph_growth_warning_threshold = 3;
  // Rewrite op chains into fused kernels when a step is compiled
  // (graph/fuse_ops.h): same values, fewer passes over memory.
  bool fuse_kernels = true;
};

struct RunOptions {
  bool trace = false;       // collect per-node step statistics
  int64_t timeout_ms = 0;   // 0: no timeout; else DeadlineExceeded after it
};

struct RunMetadata {
  StepStats step_stats;
  // The step statistics as Chrome trace-event JSON (chrome://tracing, Perfetto).
  std::string ChromeTrace() const;
};

using CallableHandle = int64_t;

struct CallableOptions {
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> New(const SessionOptions& options);
  ~Session();

  // Sets the graph. FailedPrecondition if one is already set (use Extend).
  Status Create(const GraphDef& graph);
  // Adds nodes to the graph; existing nodes and cached executors stay valid.
  Status Extend(const GraphDef& graph);

  Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs, const RunOptions& options = {},
             RunMetadata* metadata = nullptr);

  // Compiles a signature once; RunCallable then takes feeds in
  // `options.feeds` order and returns fetches in `options.fetches` order.
  StatusOr<CallableHandle> MakeCallable(const CallableOptions& options);
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, const RunOptions& options = {},
                     RunMetadata* metadata = nullptr);
  Status ReleaseCallable(CallableHandle handle);

  // Cancels running steps (they return Cancelled) and refuses new ones.
  Status Close();

  // Drops every resource (variables, queues) in `containers` on every
  // device. Containers are shared by all sessions in the process that name
  // them; resources created with an empty container live in this session's
  // own container, default_container(), dropped when the session goes.
  Status Reset(const std::vector<std::string>& containers);
  const std::string& default_container() const { return default_container_; }

  const DeviceMgr& devices() const { return *devices_; }
  // Times the graph-growth warning fired (for tests and tools).
  int graph_growth_warnings() const { return graph_growth_warnings_; }
  // Number of compiled signatures cached.
  int num_cached_signatures() const;

  // The executors of one signature, built by the first Run that needs it.
  struct CompiledStep;

 private:
  explicit Session(const SessionOptions& options);
  StatusOr<std::shared_ptr<const CompiledStep>> GetOrCompile(
      const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets);
  StatusOr<std::shared_ptr<const CompiledStep>> Compile(const std::vector<std::string>& feeds,
                                                        const std::vector<std::string>& fetches,
                                                        const std::vector<std::string>& targets);
  // Feeds are given in the compiled step's feed order.
  Status RunCompiled(const CompiledStep& step, std::vector<Tensor> feeds,
                     std::vector<Tensor>* fetches, const RunOptions& options,
                     RunMetadata* metadata);
  void NoteGraphGrowth(int added_nodes);

  const SessionOptions options_;
  const std::string default_container_;
  std::unique_ptr<DeviceMgr> devices_;
  std::unique_ptr<ThreadPool> inter_op_pool_;
  std::function<void(std::function<void()>)> runner_;

  mutable std::shared_mutex graph_mu_;  // guards graph_ and the caches
  Graph graph_;
  bool graph_created_ = false;
  std::unordered_map<std::string, std::shared_ptr<const CompiledStep>> signatures_;
  std::map<CallableHandle, std::shared_ptr<const CompiledStep>> callables_;
  CallableHandle next_callable_ = 0;
  std::mutex compile_mu_;  // one compilation at a time

  std::atomic<int64_t> next_step_id_{1};
  std::mutex steps_mu_;
  std::set<CancellationManager*> active_steps_;
  bool closed_ = false;

  // Graph-growth detection.
  std::mutex growth_mu_;
  bool ran_since_extend_ = false;
  int consecutive_growths_ = 0;
  int graph_growth_warnings_ = 0;
};

}  // namespace weir
