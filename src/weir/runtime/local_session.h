// LocalSession: the in-process Session. The graph, the devices (virtual
// CPU devices of this process), the inter-op pool and the executors of every
// compiled signature live here.
//
// The first Run of a signature compiles it (runtime/graph_compiler.h) and
// builds one executor per partition; later Runs of the same signature reuse
// them (or skip even the lookup with MakeCallable). Run is thread-safe: many
// concurrent steps on one session are the normal case. State (variables,
// queues) lives in the devices' resource managers, so every signature sees
// the same state.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "weir/base/threadpool.h"
#include "weir/graph/cost_model.h"
#include "weir/graph/graph.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/graph_compiler.h"
#include "weir/runtime/session.h"

namespace weir {

class CancellationManager;

class LocalSession final : public Session {
 public:
  // REQUIRES: options.num_cpu_devices >= 1 and the standard ops and kernels
  // registered; Session::New checks and does both.
  explicit LocalSession(const SessionOptions& options);
  // Cancels running steps and waits for them to finish.
  ~LocalSession() override;

  Status Create(const GraphDef& graph) override;
  Status Extend(const GraphDef& graph) override;
  Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs, const RunOptions& options = {},
             RunMetadata* metadata = nullptr) override;
  StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) override;
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, const RunOptions& options = {},
                     RunMetadata* metadata = nullptr) override;
  Status ReleaseCallable(CallableHandle handle) override;
  Status Close() override;
  Status Reset(const std::vector<std::string>& containers) override;
  const std::string& default_container() const override { return default_container_; }
  std::vector<DeviceInfo> ListDevices() const override { return devices_->Infos(); }
  int graph_growth_warnings() const override { return graph_growth_warnings_; }
  int num_cached_signatures() const override;

  const DeviceMgr& devices() const { return *devices_; }
  // What placement of the next signatures will use (measured node times).
  const CostModel& cost_model() const { return cost_model_; }

  // The executors of one signature.
  struct CompiledStep;

 private:
  StatusOr<std::shared_ptr<const CompiledStep>> GetOrCompile(const StepSignature& signature);
  StatusOr<std::shared_ptr<const CompiledStep>> Compile(const StepSignature& signature);
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
  // Node times measured in traced steps, for placing later signatures.
  CostModel cost_model_;
  // Where earlier signatures placed the stateful nodes (kept by later ones).
  StatefulPlacements stateful_placements_;

  mutable std::shared_mutex graph_mu_;  // guards graph_ and the caches
  Graph graph_;
  bool graph_created_ = false;
  std::unordered_map<std::string, std::shared_ptr<const CompiledStep>> signatures_;
  std::map<CallableHandle, std::shared_ptr<const CompiledStep>> callables_;
  CallableHandle next_callable_ = 0;
  std::mutex compile_mu_;  // one compilation at a time

  std::atomic<int64_t> next_step_id_{1};
  std::mutex steps_mu_;
  std::condition_variable steps_done_;  // signalled when active_steps_ empties
  std::set<CancellationManager*> active_steps_;
  bool closed_ = false;

  // Graph-growth detection.
  std::mutex growth_mu_;
  bool ran_since_extend_ = false;
  int consecutive_growths_ = 0;
  int graph_growth_warnings_ = 0;
};

}  // namespace weir
