#include "weir/runtime/session.h"

#include <algorithm>
#include <new>
#include <numeric>
#include <stdexcept>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/resource_mgr.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/fuse_ops.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/partition.h"
#include "weir/graph/placer.h"
#include "weir/kernels/all_kernels.h"
#include "weir/runtime/executor.h"
#include "weir/runtime/local_rendezvous.h"

namespace weir {

struct Session::CompiledStep {
  // Feeds in argument order, with what each must look like.
  std::vector<std::string> feeds;
  std::vector<DType> feed_dtypes;
  std::vector<PartialShape> feed_shapes;
  std::vector<std::string> fetches;
  struct Part {
    Device* device = nullptr;
    std::unique_ptr<Graph> graph;
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts;
};

namespace {

// Joins names into a cache key; '\n' cannot appear in a node name.
void AppendKeyPart(std::string* key, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    key->append(name);
    key->push_back('\n');
  }
  key->push_back('|');
}

// Indexes that sort `names`.
std::vector<int> SortOrder(const std::vector<std::string>& names) {
  std::vector<int> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  if (names.size() > 1) {
    std::sort(order.begin(), order.end(), [&](int a, int b) { return names[a] < names[b]; });
  }
  return order;
}

// "x" and "x:0" are the same tensor; normalize to the short form.
StatusOr<TensorId> ParseTensorRef(const std::string& name, const char* what) {
  StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->port < 0) {
    return errors::InvalidArgument(what, " '", name, "' is not a tensor name ('node' or 'node:port')");
  }
  return id;
}

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

StatusOr<std::unique_ptr<Session>> Session::New(const SessionOptions& options) {
  if (options.num_cpu_devices < 1) {
    return errors::InvalidArgument("SessionOptions.num_cpu_devices must be >= 1, got ",
                                   options.num_cpu_devices);
  }
  RegisterAllKernels();
  return std::unique_ptr<Session>(new Session(options));
}

namespace {
std::string NewDefaultContainer() {
  static std::atomic<int64_t> next{0};
  return StrCat("session_", next.fetch_add(1));
}
}  // namespace

Session::Session(const SessionOptions& options)
    : options_(options), default_container_(NewDefaultContainer()) {
  devices_ = DeviceMgr::NewCpuDevices(options.num_cpu_devices, options.intra_op_threads);
  int inter = options.inter_op_threads > 0 ? options.inter_op_threads : NumSchedulableCpus();
  inter_op_pool_ = std::make_unique<ThreadPool>("inter_op", inter);
  runner_ = [pool = inter_op_pool_.get()](std::function<void()> fn) {
    pool->Schedule(std::move(fn));
  };
}

Session::~Session() {
  Close().ok();
  // Wait for steps still running on other threads to drain.
  while (true) {
    {
      std::lock_guard<std::mutex> lock(steps_mu_);
      if (active_steps_.empty()) break;
    }
    std::this_thread::yield();
  }
  Reset({default_container_}).ok();
}

Status Session::Reset(const std::vector<std::string>& containers) {
  for (const auto& device : devices_->devices()) {
    for (const std::string& container : containers) {
      device->resource_manager()->Cleanup(container);
    }
  }
  return Status::OK();
}

Status Session::Create(const GraphDef& graph) {
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (graph_created_) {
      return errors::FailedPrecondition(
          "Session::Create called twice; use Extend to add nodes to the graph");
    }
  }
  return Extend(graph);
}

Status Session::Extend(const GraphDef& graph) {
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

void Session::NoteGraphGrowth(int added_nodes) {
  std::lock_guard<std::mutex> lock(growth_mu_);
  if (!ran_since_extend_) return;
  ran_since_extend_ = false;
  ++consecutive_growths_;
  int threshold = options_.graph_growth_warning_threshold;
  if (threshold > 0 && consecutive_growths_ >= threshold &&
      (consecutive_growths_ == threshold || (consecutive_growths_ & (consecutive_growths_ - 1)) == 0)) {
    ++graph_growth_warnings_;
    int total;
    {
      std::shared_lock<std::shared_mutex> graph_lock(graph_mu_);
      total = graph_.num_nodes();
    }
    LOG(Warning) << "the graph grew between Runs " << consecutive_growths_
                 << " times in a row (by " << added_nodes << " nodes this time, now " << total
                 << " nodes): are ops being created inside the training loop? Build the graph "
                    "once, then only Run it.";
  }
}

int Session::num_cached_signatures() const {
  std::shared_lock<std::shared_mutex> lock(graph_mu_);
  return static_cast<int>(signatures_.size());
}

StatusOr<std::shared_ptr<const Session::CompiledStep>> Session::GetOrCompile(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  std::string key;
  AppendKeyPart(&key, feeds);
  AppendKeyPart(&key, fetches);
  AppendKeyPart(&key, targets);
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
      return Compile(feeds, fetches, targets);
    } catch (const std::bad_alloc&) {
      return errors::ResourceExhausted("out of memory compiling the step with fetches [",
                                       StrJoin(fetches, ", "), "] and targets [",
                                       StrJoin(targets, ", "), "]");
    } catch (const std::length_error&) {
      return errors::ResourceExhausted("a container grew past its maximum size compiling the "
                                       "step with fetches [", StrJoin(fetches, ", "), "]");
    }
  };
  StatusOr<std::shared_ptr<const CompiledStep>> compiled = compile();
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step, std::move(compiled));
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  signatures_[key] = step;
  return step;
}

StatusOr<std::shared_ptr<const Session::CompiledStep>> Session::Compile(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  auto step = std::make_shared<CompiledStep>();
  auto graph = std::make_unique<Graph>();
  {
    std::shared_lock<std::shared_mutex> lock(graph_mu_);
    if (!graph_created_) {
      return errors::FailedPrecondition("Session::Run called before Create: the session has no graph");
    }
    graph->CopyFrom(graph_);
  }
  // Feeds become _Arg nodes; consumers of a fed tensor read the _Arg.
  std::map<std::pair<std::string, int>, Node*> fed;
  // Per fed node, its fed ports' _Arg nodes (port -> _Arg), so that each
  // node's out-edges are walked once however many of its outputs are fed.
  std::map<int, std::map<int, Node*>> fed_ports;  // by node id, for a fixed order
  for (size_t i = 0; i < feeds.size(); ++i) {
    WEIR_ASSIGN_OR_RETURN(TensorId id, ParseTensorRef(feeds[i], "feed"));
    Node* node = graph->FindNode(id.node);
    if (node == nullptr) {
      return errors::NotFound("feed '", feeds[i], "' names no node in the graph");
    }
    if (id.port >= node->num_outputs()) {
      return errors::InvalidArgument("feed '", feeds[i], "': node ", node->Describe(), " has ",
                                     node->num_outputs(), " outputs");
    }
    if (fed.count({id.node, id.port})) {
      return errors::InvalidArgument("tensor '", feeds[i], "' is fed twice");
    }
    NodeDef arg;
    arg.name = graph->NewName(StrCat("_arg/", id.node, "_", id.port));
    arg.op = "_Arg";
    arg.device = node->requested_device();
    arg.attrs["T"] = node->output_type(id.port);
    arg.attrs["index"] = static_cast<int64_t>(i);
    WEIR_ASSIGN_OR_RETURN(Node* arg_node, graph->AddNode(std::move(arg)));
    arg_node->set_output_shapes({node->output_shape(id.port)});
    fed[{id.node, id.port}] = arg_node;
    fed_ports[node->id()][id.port] = arg_node;
    step->feeds.push_back(feeds[i]);
    step->feed_dtypes.push_back(node->output_type(id.port));
    step->feed_shapes.push_back(node->output_shape(id.port));
  }
  for (const auto& [node_id, args] : fed_ports) {
    const Node* node = graph->FindNodeId(node_id);
    std::vector<const Edge*> redirect;
    for (const Edge* e : node->out_edges()) {
      if (!e->IsControlEdge() && args.count(e->src_output())) redirect.push_back(e);
    }
    for (const Edge* e : redirect) {
      Node* arg_node = args.at(e->src_output());
      Node* dst = e->dst();
      int slot = e->dst_input();
      graph->RemoveEdge(e);
      graph->AddEdge(arg_node, 0, dst, slot);
    }
  }
  std::vector<Node*> roots;
  for (size_t i = 0; i < fetches.size(); ++i) {
    WEIR_ASSIGN_OR_RETURN(TensorId id, ParseTensorRef(fetches[i], "fetch"));
    Node* node = graph->FindNode(id.node);
    if (node == nullptr) {
      return errors::NotFound("fetch '", fetches[i], "' names no node in the graph");
    }
    if (id.port >= node->num_outputs()) {
      return errors::InvalidArgument("fetch '", fetches[i], "': node ", node->Describe(),
                                     " has ", node->num_outputs(), " outputs");
    }
    Node* src = node;
    int port = id.port;
    auto fed_it = fed.find({id.node, id.port});
    if (fed_it != fed.end()) {
      src = fed_it->second;
      port = 0;
    }
    NodeDef retval;
    retval.name = graph->NewName(StrCat("_retval/", id.node, "_", id.port));
    retval.op = "_Retval";
    retval.device = src->requested_device();
    retval.attrs["T"] = src->output_type(port);
    retval.attrs["index"] = static_cast<int64_t>(i);
    WEIR_ASSIGN_OR_RETURN(Node* retval_node, graph->AddNode(std::move(retval)));
    graph->AddEdge(src, port, retval_node, 0);
    roots.push_back(retval_node);
    step->fetches.push_back(fetches[i]);
  }
  for (const std::string& target : targets) {
    Node* node = graph->FindNode(target);
    if (node == nullptr) {
      StatusOr<TensorId> id = ParseTensorName(target);
      if (id.ok() && id->port == 0) node = graph->FindNode(id->node);
    }
    if (node == nullptr) {
      return errors::NotFound("target '", target, "' names no node in the graph");
    }
    roots.push_back(node);
  }
  if (roots.empty()) {
    return errors::InvalidArgument("Run needs at least one fetch or target");
  }
  PruneToRoots(graph.get(), roots);
  WEIR_RETURN_IF_ERROR(PlaceGraph(graph.get(), devices_->Infos(), 0));
  if (options_.fuse_kernels) WEIR_RETURN_IF_ERROR(FuseKernels(graph.get()).status());

  std::set<std::string> used_devices;
  for (const Node* node : graph->nodes()) used_devices.insert(node->assigned_device());
  if (used_devices.size() == 1) {
    CompiledStep::Part part;
    WEIR_ASSIGN_OR_RETURN(part.device, devices_->Find(*used_devices.begin()));
    part.graph = std::move(graph);
    step->parts.push_back(std::move(part));
  } else {
    std::map<std::string, GraphDef> partitions;
    WEIR_RETURN_IF_ERROR(PartitionGraph(
        *graph, [this](const std::string& d) { return devices_->Incarnation(d); },
        &partitions));
    for (auto& [device_name, def] : partitions) {
      CompiledStep::Part part;
      WEIR_ASSIGN_OR_RETURN(part.device, devices_->Find(device_name));
      part.graph = std::make_unique<Graph>();
      // Partitions hold the runtime's own _Arg, _Retval, _Send and _Recv.
      ImportGraphDefOptions import_options;
      import_options.allow_internal_ops = true;
      WEIR_RETURN_IF_ERROR(ImportGraphDef(def, part.graph.get(), import_options)
                               .WithContext("partition for " + device_name));
      step->parts.push_back(std::move(part));
    }
  }
  for (CompiledStep::Part& part : step->parts) {
    WEIR_ASSIGN_OR_RETURN(part.executor, Executor::Create(*part.graph, part.device));
  }
  return std::shared_ptr<const CompiledStep>(std::move(step));
}

Status Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                    const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                    const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  feed_names.reserve(feeds.size());
  for (const auto& feed : feeds) feed_names.push_back(feed.first);
  std::vector<int> feed_order = SortOrder(feed_names);
  std::vector<int> fetch_order = SortOrder(fetches);
  std::vector<std::string> sorted_feeds, sorted_fetches, sorted_targets(targets);
  sorted_feeds.reserve(feeds.size());
  sorted_fetches.reserve(fetches.size());
  for (int i : feed_order) sorted_feeds.push_back(feed_names[i]);
  for (int i : fetch_order) sorted_fetches.push_back(fetches[i]);
  if (sorted_targets.size() > 1) std::sort(sorted_targets.begin(), sorted_targets.end());

  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step,
                        GetOrCompile(sorted_feeds, sorted_fetches, sorted_targets));
  std::vector<Tensor> args;
  args.reserve(feeds.size());
  for (int i : feed_order) args.push_back(feeds[i].second);
  std::vector<Tensor> results;
  WEIR_RETURN_IF_ERROR(RunCompiled(*step, std::move(args), &results, options, metadata));
  outputs->resize(fetches.size());
  for (size_t k = 0; k < fetch_order.size(); ++k) (*outputs)[fetch_order[k]] = std::move(results[k]);
  return Status::OK();
}

StatusOr<CallableHandle> Session::MakeCallable(const CallableOptions& options) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledStep> step,
                        GetOrCompile(options.feeds, options.fetches, options.targets));
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  CallableHandle handle = next_callable_++;
  callables_[handle] = step;
  return handle;
}

Status Session::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
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

Status Session::ReleaseCallable(CallableHandle handle) {
  std::unique_lock<std::shared_mutex> lock(graph_mu_);
  if (callables_.erase(handle) == 0) {
    return errors::InvalidArgument("no callable with handle ", handle);
  }
  return Status::OK();
}

Status Session::RunCompiled(const CompiledStep& step, std::vector<Tensor> feeds,
                            std::vector<Tensor>* fetches, const RunOptions& options,
                            RunMetadata* metadata) {
  if (feeds.size() != step.feeds.size()) {
    return errors::InvalidArgument("expected ", step.feeds.size(), " feeds, got ", feeds.size());
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& t = feeds[i];
    if (!t.IsInitialized()) {
      return errors::InvalidArgument("feed '", step.feeds[i], "' is an empty (uninitialized) tensor");
    }
    if (t.dtype() != step.feed_dtypes[i]) {
      return errors::InvalidArgument("feed '", step.feeds[i], "' is a ", t.dtype(),
                                     " tensor but the graph expects ", step.feed_dtypes[i]);
    }
    if (!step.feed_shapes[i].IsCompatibleWith(t.shape())) {
      return errors::InvalidArgument("feed '", step.feeds[i], "' has shape ", t.shape(),
                                     " but the graph expects shape ", step.feed_shapes[i]);
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
  if (options.trace || metadata != nullptr) {
    if (options.trace) stats = std::make_unique<StepStatsCollector>();
  }

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
    step.parts[p].executor->RunAsync(args, [&, p](const Status& status) {
      statuses[p] = status;
      if (!status.ok()) {
        cancellation.StartCancel();
        if (rendezvous) rendezvous->StartAbort(status);
      }
      if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done.Notify();
    });
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
  }
  if (stats && metadata) metadata->step_stats = stats->Finalize();
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

Status Session::Close() {
  std::lock_guard<std::mutex> lock(steps_mu_);
  closed_ = true;
  for (CancellationManager* cancellation : active_steps_) cancellation->StartCancel();
  return Status::OK();
}

}  // namespace weir
