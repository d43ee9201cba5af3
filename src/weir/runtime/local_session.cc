#include "weir/runtime/local_session.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/resource_mgr.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/executor.h"
#include "weir/runtime/local_rendezvous.h"
#include "weir/runtime/run_signature.h"

namespace weir {

struct LocalSession::CompiledStep {
  // Feeds in argument order, with what each must look like.
  std::vector<FeedSpec> feeds;
  std::vector<std::string> fetches;
  struct Part {
    Device* device = nullptr;
    std::unique_ptr<Graph> graph;
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts;
};

namespace {


// Prefers the root cause over the Cancelled errors it caused elsewhere.
Status CombineStatuses(const std::vector<Status>& statuses) {
  Status first;
  for (const Status& s : statuses) {
    if (s.ok()) continue;
    if (!errors::IsCancelled(s)) return s;
    first.Update(s);
  }
  return first;
}

}  // namespace

namespace {
std::string NewDefaultContainer() {
  static std::atomic<int64_t> next{0};
  return StrCat("session_", next.fetch_add(1));
}
}  // namespace

LocalSession::LocalSession(const SessionOptions& options)
    : options_(options), default_container_(NewDefaultContainer()) {
  devices_ = DeviceMgr::NewCpuDevices(options.num_cpu_devices, options.intra_op_threads);
  int inter = options.inter_op_threads > 0 ? options.inter_op_threads : NumSchedulableCpus();
  inter_op_pool_ = std::make_unique<ThreadPool>("inter_op", inter);
  runner_ = [pool = inter_op_pool_.get()](std::function<void()> fn) {
    pool->Schedule(std::move(fn));
  };
}

LocalSession::~LocalSession() {
  Close().ok();
  // Steps still running on other threads hold pointers into this session.
  {
    std::unique_lock<std::mutex> lock(steps_mu_);
    steps_done_.wait(lock, [this] { return active_steps_.empty(); });
  }
  Reset({default_container_}).ok();
}

Status LocalSession::Reset(const std::vector<std::string>& containers) {
  for (const auto& device : devices_->devices()) {
    for (const std::string& container : containers) {
      device->resource_manager()->Cleanup(container);
    }
  }
  return Status::OK();
}

Status LocalSession::Create(const GraphDef& graph) {
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (graph_created_) {
      return errors::FailedPrecondition(
          "Session::Create called twice; use Extend to add nodes to the graph");
    }
  }
  return Extend(graph);
}

Status LocalSession::Extend(const GraphDef& graph) {
  int added = 0;
  {
    std::unique_lock<std::shared_mutex> lock(graph_mu_);
    {
      std::lock_guard<std::mutex> steps(steps_mu_);
      if (closed_) return errors::Cancelled("Session has been closed");
    }
    int before = graph_.num_nodes();
    WEIR_RETURN_IF_ERROR(ImportGraphDef(graph, &graph_));
    graph_created_ = true;
    added = graph_.num_nodes() - before;
  }
  if (added > 0) NoteGraphGrowth(added);
  return Status::OK();
}

void LocalSession::NoteGraphGrowth(int added_nodes) {
  std::lock_guard<std::mutex> lock(growth_mu_);
  if (!ran_since_extend_) return;
  ran_since_extend_ = false;
  ++consecutive_growths_;
  int threshold = options_.graph_growth_warning_threshold;
  if (threshold > 0 && consecutive_growths_ >= threshold &&
      (consecutive_growths_ == threshold ||
       (consecutive_growths_ & (consecutive_growths_ - 1)) == 0)) {
    ++graph_growth_warnings_;
    int total;
    {
      std::shared_lock<std::shared_mutex> graph_lock(graph_mu_);
      total = graph_.num_nodes();
    }
    LOG(Warning) << "the graph grew between Runs " << consecutive_growths_ << " times in a row (by "
                 << added_nodes << " nodes this time, now " << total
                 << " nodes): are ops being created inside the training loop? Build the graph "
                    "once, then only Run it.";
  }
}

int LocalSession::num_cached_signatures() const {
  std::shared_lock<std::shared_mutex> lock(graph_mu_);
  return static_cast<int>(signatures_.size());
}

StatusOr<std::shared_ptr<const LocalSession::CompiledStep>> LocalSession::GetOrCompile(
    const StepSignature& signature) {
  const std::string key = SignatureKey(signature);
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    auto it = signatures_.find(key);
    if (it != signatures_.end()) return it->second;
  }
  std::lock_guard<std::mutex> compile_lock(compile_mu_);
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    auto it = signatures_.find(key);
    if (it != signatures_.end()) return it->second;
  }
  // The core throws nothing, but the standard containers can: a graph too
  // large to compile must not end the process.
  auto compile = [&]() -> StatusOr<std::shared_ptr<const CompiledStep>> {
    try {
      return Compile(signature);
    } catch (const std::bad_alloc&) {
      return errors::ResourceExhausted("out of memory compiling the step with fetches [",
                                       StrJoin(signature.fetches, ", "), "] and targets [",
                                       StrJoin(signature.targets, ", "), "]");
    } catch (const std::length_error&) {
      return errors::ResourceExhausted(
          "a container grew past its maximum size compiling the "
          "step with fetches [",
          StrJoin(signature.fetches, ", "), "]");
    }
  };
  StatusOr<std::shared_ptr<const CompiledStep>> compiled = compile();
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step, std::move(compiled));
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  signatures_[key] = step;
  return step;
}

StatusOr<std::shared_ptr<const LocalSession::CompiledStep>> LocalSession::Compile(
    const StepSignature& signature) {
  CompileEnv env;
  env.devices = devices_->Infos();
  env.kernels = KernelRegistry::Global();
  env.host_device = devices_->devices().front().get();
  env.incarnation = [this](const std::string& d) { return devices_->Incarnation(d); };
  env.cost_model = &cost_model_;
  env.stateful_placements = &stateful_placements_;
  StatusOr<CompiledGraph> compiled = errors::Internal("not compiled");
  {
    // The compiler copies the graph first; Extend waits for that copy only.
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (!graph_created_) {
      return errors::FailedPrecondition(
          "Session::Run called before Create: the session has no graph");
    }
    compiled = CompileGraph(graph_, signature, env, options_.compile);
  }
  WEIR_RETURN_IF_ERROR(compiled.status());
  auto step = std::make_shared<CompiledStep>();
  step->feeds = std::move(compiled->feeds);
  step->fetches = std::move(compiled->fetches);
  for (CompiledPartition& partition : compiled->partitions) {
    CompiledStep::Part part;
    WEIR_ASSIGN_OR_RETURN(part.device, devices_->Find(partition.device));
    if (partition.graph != nullptr) {
      part.graph = std::move(partition.graph);
    } else {
      part.graph = std::make_unique<Graph>();
      // Partitions hold the runtime's own _Arg, _Retval, _Send and _Recv.
      ImportGraphDefOptions import_options;
      import_options.allow_internal_ops = true;
      WEIR_RETURN_IF_ERROR(ImportGraphDef(partition.def, part.graph.get(), import_options)
                               .WithContext("partition for " + partition.device));
    }
    WEIR_ASSIGN_OR_RETURN(part.executor, Executor::Create(*part.graph, part.device, *env.kernels));
    step->parts.push_back(std::move(part));
  }
  return std::shared_ptr<const CompiledStep>(std::move(step));
}

Status LocalSession::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                         const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                         const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  feed_names.reserve(feeds.size());
  for (const auto& feed : feeds) feed_names.push_back(feed.first);
  CanonicalRun run = CanonicalizeRun(feed_names, fetches, targets);
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step, GetOrCompile(run.signature));
  std::vector<Tensor> args;
  args.reserve(feeds.size());
  for (int i : run.feed_order) args.push_back(feeds[i].second);
  std::vector<Tensor> results;
  WEIR_RETURN_IF_ERROR(RunCompiled(*step, std::move(args), &results, options, metadata));
  outputs->resize(fetches.size());
  for (size_t k = 0; k < run.fetch_order.size(); ++k)
    (*outputs)[run.fetch_order[k]] = std::move(results[k]);
  return Status::OK();
}

StatusOr<CallableHandle> LocalSession::MakeCallable(const CallableOptions& options) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step,
                        GetOrCompile({options.feeds, options.fetches, options.targets}));
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  CallableHandle handle = next_callable_++;
  callables_[handle] = step;
  return handle;
}

Status LocalSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                 std::vector<Tensor>* fetches, const RunOptions& options,
                                 RunMetadata* metadata) {
  std::shared_ptr<const CompiledStep> step;
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    auto it = callables_.find(handle);
    if (it == callables_.end()) {
      return errors::InvalidArgument("no callable with handle ", handle);
    }
    step = it->second;
  }
  return RunCompiled(*step, feeds, fetches, options, metadata);
}

Status LocalSession::ReleaseCallable(CallableHandle handle) {
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  if (callables_.erase(handle) == 0) {
    return errors::InvalidArgument("no callable with handle ", handle);
  }
  return Status::OK();
}

Status LocalSession::RunCompiled(const CompiledStep& step, std::vector<Tensor> feeds,
                                 std::vector<Tensor>* fetches, const RunOptions& options,
                                 RunMetadata* metadata) {
  if (feeds.size() != step.feeds.size()) {
    return errors::InvalidArgument("expected ", step.feeds.size(), " feeds, got ", feeds.size());
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& t = feeds[i];
    if (!t.IsInitialized()) {
      return errors::InvalidArgument("feed '", step.feeds[i].name,
                                     "' is an empty (uninitialized) tensor");
    }
    const FeedSpec& spec = step.feeds[i];
    if (t.dtype() != spec.dtype) {
      return errors::InvalidArgument("feed '", spec.name, "' is a ", t.dtype(),
                                     " tensor but the graph expects ", spec.dtype);
    }
    if (!spec.shape.IsCompatibleWith(t.shape())) {
      return errors::InvalidArgument("feed '", spec.name, "' has shape ", t.shape(),
                                     " but the graph expects shape ", spec.shape);
    }
  }
  {
    std::lock_guard<std::mutex> lock(growth_mu_);
    ran_since_extend_ = true;
  }
  CancellationManager cancellation;
  {
    std::lock_guard<std::mutex> lock(steps_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    active_steps_.insert(&cancellation);
  }
  CallFrame frame(std::move(feeds), static_cast<int>(step.fetches.size()));
  std::unique_ptr<LocalRendezvous> rendezvous;
  if (step.parts.size() > 1) rendezvous = std::make_unique<LocalRendezvous>();
  std::unique_ptr<StepStatsCollector> stats;
  if (options.trace) stats = std::make_unique<StepStatsCollector>();

  Executor::Args args;
  args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  args.rendezvous = rendezvous.get();
  args.cancellation = &cancellation;
  args.call_frame = &frame;
  args.stats = stats.get();
  args.runner = &runner_;
  args.default_container = default_container_;

  std::vector<Status> statuses(step.parts.size());
  std::atomic<int> remaining(static_cast<int>(step.parts.size()));
  Notification all_done;
  for (size_t p = 0; p < step.parts.size(); ++p) {
    auto start = [&, p] {
      step.parts[p].executor->RunAsync(args, [&, p](const Status& status) {
        statuses[p] = status;
        if (!status.ok()) {
          cancellation.StartCancel();
          if (rendezvous) rendezvous->StartAbort(status);
        }
        if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done.Notify();
      });
    };
    // An executor runs cheap nodes on the thread that starts it, a loop of
    // them for as long as it goes: with a timeout, this thread must stay
    // free to keep it.
    if (options.timeout_ms > 0) {
      runner_(start);
    } else {
      start();
    }
  }
  Status timeout;
  if (options.timeout_ms > 0) {
    if (!all_done.WaitFor(std::chrono::milliseconds(options.timeout_ms))) {
      timeout = errors::DeadlineExceeded("step timed out after ", options.timeout_ms,
                                         " ms (RunOptions.timeout_ms)");
      cancellation.StartCancel();
      if (rendezvous) rendezvous->StartAbort(timeout);
    }
  }
  all_done.Wait();
  {
    std::lock_guard<std::mutex> lock(steps_mu_);
    active_steps_.erase(&cancellation);
    if (active_steps_.empty()) steps_done_.notify_all();
  }
  if (stats) {
    StepStats step_stats = stats->Finalize();
    // Measured times replace the cost model's estimates when later
    // signatures are placed.
    for (const NodeExecStats& node : step_stats.nodes) {
      cost_model_.RecordMeasurement(node.node_name, node.device,
                                    static_cast<double>(node.end_micros - node.start_micros));
    }
    if (metadata) metadata->step_stats = std::move(step_stats);
  }
  if (!timeout.ok()) return timeout;
  Status status = CombineStatuses(statuses);
  if (!status.ok()) return status;
  std::vector<Tensor>& values = frame.retvals();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].IsInitialized()) {
      return errors::Internal("fetch '", step.fetches[i], "' was not produced (a dead branch?)");
    }
  }
  *fetches = std::move(values);
  return Status::OK();
}

Status LocalSession::Close() {
  std::lock_guard<std::mutex> lock(steps_mu_);
  closed_ = true;
  for (CancellationManager* cancellation : active_steps_) cancellation->StartCancel();
  return Status::OK();
}

}  // namespace weir
