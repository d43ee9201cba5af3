#include "weir/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"
#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/algorithm.h"

namespace weir {
namespace {

// A data edge as the plan stores it: where one output goes.
struct EdgeInfo {
  int dst_id;
  int src_output;
  int dst_slot;   // index into the step's flat input array
  bool is_last;   // the output's last consumer: move instead of copy
};

// Everything about a node that does not change between steps.
struct NodeItem {
  std::unique_ptr<OpKernel> kernel;
  bool is_async = false;
  bool is_expensive = false;
  bool accepts_dead_inputs = false;  // _Send forwards deadness to its peer
  int input_start = 0;
  int num_inputs = 0;
  int num_outputs = 0;
  int pending_init = 0;  // in-edges, data and control
  int edges_start = 0;   // into ExecutorImpl::edges_
  int num_edges = 0;
  int controls_start = 0;  // into ExecutorImpl::control_dsts_
  int num_controls = 0;
  // Nodes on the longest path from here to a sink. Of the expensive nodes
  // ready at once, the one with the most work still behind it runs first
  // (list scheduling by "bottom level"): on two cores a short branch that
  // runs first can delay the critical path by its whole length.
  int priority = 0;
};

// Small output buffer on the stack for the common case.
constexpr int kInlineOutputs = 8;

class ExecutorImpl;

// One step of one partition. Deletes itself after calling `done`.
class ExecutorState {
 public:
  ExecutorState(const ExecutorImpl* impl, const Executor::Args& args, Executor::DoneCallback done);
  void Start();

 private:
  struct AsyncCall;

  void Process(int id);
  // Runs the nodes of `inline_ready`, and those they make ready that are
  // cheap, on this thread. May finish the step and delete `this`.
  void ProcessLoop(std::vector<int> inline_ready);
  // Runs node `id` and propagates its outputs; appends newly ready nodes.
  void RunNode(int id, std::vector<int>* ready);
  // Moves `outputs` into consumers' slots and counts down their pending
  // inputs; newly ready nodes are appended to `ready`.
  void PropagateOutputs(const NodeItem& item, std::span<Tensor> outputs, bool dead,
                        std::vector<int>* ready);
  Status CheckOutputs(const NodeItem& item, std::span<Tensor> outputs) const;
  void ClearInputs(const NodeItem& item);
  // Cheap ready nodes go to `inline_ready`; expensive ones to the pool
  // (keeping the most urgent inline if nothing else is). With
  // `inline_ready` null, everything goes to the pool.
  void ScheduleReady(const std::vector<int>& ready, std::vector<int>* inline_ready);
  // Takes the most urgent node of expensive_queue_.
  int PopMostUrgent();
  // Accounts for a finished node that made nothing ready. Returns true if
  // that completed the step (and `this` is deleted).
  bool NodesDone();
  void RecordError(const NodeItem& item, const Status& status);
  void SaveStats(const NodeItem& item, int64_t start, int64_t bytes);
  void Finish();

  const ExecutorImpl* impl_;
  Executor::Args args_;
  Executor::DoneCallback done_;
  StepContext step_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  std::unique_ptr<std::atomic<bool>[]> input_dead_;
  std::unique_ptr<Tensor[]> inputs_;
  std::atomic<int> outstanding_{0};
  std::atomic<bool> aborted_{false};
  std::mutex mu_;
  Status status_;
  // The step's expensive ready nodes, a heap by NodeItem::priority. Each
  // queued node has exactly one pool task waiting to pop it, though not
  // necessarily that node: a task takes whichever is most urgent when it
  // starts.
  std::mutex queue_mu_;
  std::vector<int> expensive_queue_;
};

class ExecutorImpl final : public Executor {
 public:
  Status Initialize(const Graph& graph, Device* device, const KernelRegistry& kernels);
  void RunAsync(const Args& args, DoneCallback done) override {
    (new ExecutorState(this, args, std::move(done)))->Start();
  }
  int num_nodes() const override { return static_cast<int>(items_.size()); }

 private:
  friend class ExecutorState;
  Device* device_ = nullptr;
  std::vector<NodeItem> items_;
  std::vector<EdgeInfo> edges_;
  std::vector<int> control_dsts_;
  std::vector<int> roots_;
  int total_inputs_ = 0;
};

Status ExecutorImpl::Initialize(const Graph& graph, Device* device, const KernelRegistry& kernels) {
  device_ = device;
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  // Dense ids in topological order, so roots come first and the plan is
  // laid out in the order nodes tend to run.
  std::vector<int> dense(graph.num_node_ids(), -1);
  for (size_t i = 0; i < order.size(); ++i) dense[order[i]->id()] = static_cast<int>(i);
  items_.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* node = order[i];
    NodeItem& item = items_[i];
    WEIR_ASSIGN_OR_RETURN(item.kernel, kernels.CreateKernel(device, node->def(), node->op_def()));
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.is_expensive = item.kernel->IsExpensive() || item.is_async;
    item.accepts_dead_inputs = node->type_string() == "_Send";
    item.num_inputs = node->num_inputs();
    item.num_outputs = node->num_outputs();
    item.input_start = total_inputs_;
    total_inputs_ += item.num_inputs;
    item.pending_init = static_cast<int>(node->in_edges().size());
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) {
        return errors::InvalidArgument("node ", node->Describe(), " has an unconnected input");
      }
    }
    if (item.pending_init == 0) roots_.push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* node = order[i];
    NodeItem& item = items_[i];
    std::vector<const Edge*> data, control;
    for (const Edge* e : node->out_edges()) (e->IsControlEdge() ? control : data).push_back(e);
    std::stable_sort(data.begin(), data.end(), [](const Edge* a, const Edge* b) {
      return a->src_output() < b->src_output();
    });
    item.edges_start = static_cast<int>(edges_.size());
    item.num_edges = static_cast<int>(data.size());
    for (size_t k = 0; k < data.size(); ++k) {
      const Edge* e = data[k];
      int dst = dense[e->dst()->id()];
      bool is_last = k + 1 == data.size() || data[k + 1]->src_output() != e->src_output();
      edges_.push_back({dst, e->src_output(), items_[dst].input_start + e->dst_input(), is_last});
    }
    item.controls_start = static_cast<int>(control_dsts_.size());
    item.num_controls = static_cast<int>(control.size());
    for (const Edge* e : control) control_dsts_.push_back(dense[e->dst()->id()]);
  }
  // Ids are topological, so every successor's priority is known first.
  for (int i = static_cast<int>(items_.size()) - 1; i >= 0; --i) {
    NodeItem& item = items_[i];
    int below = 0;
    for (int k = 0; k < item.num_edges; ++k) {
      below = std::max(below, items_[edges_[item.edges_start + k].dst_id].priority);
    }
    for (int k = 0; k < item.num_controls; ++k) {
      below = std::max(below, items_[control_dsts_[item.controls_start + k]].priority);
    }
    item.priority = below + 1;
  }
  return Status::OK();
}

ExecutorState::ExecutorState(const ExecutorImpl* impl, const Executor::Args& args,
                             Executor::DoneCallback done)
    : impl_(impl), args_(args), done_(std::move(done)) {
  step_.step_id = args.step_id;
  step_.rendezvous = args.rendezvous;
  step_.cancellation = args.cancellation;
  step_.call_frame = args.call_frame;
  step_.default_container = args.default_container;
  size_t n = impl->items_.size();
  pending_.reset(new std::atomic<int>[n]);
  input_dead_.reset(new std::atomic<bool>[n]);
  for (size_t i = 0; i < n; ++i) {
    pending_[i].store(impl->items_[i].pending_init, std::memory_order_relaxed);
    input_dead_[i].store(false, std::memory_order_relaxed);
  }
  if (impl->total_inputs_ > 0) inputs_.reset(new Tensor[impl->total_inputs_]);
}

void ExecutorState::Start() {
  const std::vector<int>& roots = impl_->roots_;
  if (roots.empty()) {
    Finish();
    return;
  }
  outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
  // Cheap roots (constants, feeds) run right here on the caller's thread.
  std::vector<int> inline_ready;
  inline_ready.reserve(16);
  ScheduleReady(roots, &inline_ready);
  ProcessLoop(std::move(inline_ready));  // may delete `this`
}

void ExecutorState::Process(int id) { ProcessLoop({id}); }

void ExecutorState::ProcessLoop(std::vector<int> inline_ready) {
  std::vector<int> ready;
  while (!inline_ready.empty()) {
    int current = inline_ready.back();
    inline_ready.pop_back();
    const NodeItem& item = impl_->items_[current];
    if (item.is_async && !aborted_.load(std::memory_order_relaxed) &&
        !input_dead_[current].load(std::memory_order_acquire)) {
      RunNode(current, nullptr);  // finishes in its callback
      continue;
    }
    ready.clear();
    RunNode(current, &ready);
    // Count the new nodes before any can run elsewhere and finish.
    if (ready.size() > 1) {
      outstanding_.fetch_add(static_cast<int>(ready.size()) - 1, std::memory_order_relaxed);
    }
    ScheduleReady(ready, &inline_ready);
    if (ready.empty() && NodesDone()) return;  // `this` is gone
  }
}

bool ExecutorState::NodesDone() {
  if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Finish();
    return true;
  }
  return false;
}

struct ExecutorState::AsyncCall {
  OpKernelContext::Params params;
  std::vector<Tensor> outputs;
  std::unique_ptr<OpKernelContext> context;
  int id = 0;
  int64_t start_micros = 0;
};

void ExecutorState::RunNode(int id, std::vector<int>* ready) {
  const NodeItem& item = impl_->items_[id];
  std::span<Tensor> inputs(inputs_.get() + item.input_start, item.num_inputs);
  bool dead = input_dead_[id].load(std::memory_order_acquire);
  if (aborted_.load(std::memory_order_relaxed)) {
    // The step failed elsewhere: don't run, don't propagate; the node only
    // counts as done so the step can finish.
    ClearInputs(item);
    return;
  }
  if (dead && !item.accepts_dead_inputs) {
    // An untaken branch: outputs are dead, the kernel never runs.
    ClearInputs(item);
    PropagateOutputs(item, {}, /*dead=*/true, ready);
    return;
  }
  const bool trace = args_.stats != nullptr;
  if (item.is_async) {
    auto call = std::make_shared<AsyncCall>();
    call->id = id;
    call->outputs.resize(item.num_outputs);
    call->params.device = impl_->device_;
    call->params.kernel = item.kernel.get();
    call->params.step = &step_;
    call->params.is_input_dead = dead;
    call->params.inputs = inputs;
    call->params.outputs = std::span<Tensor>(call->outputs);
    call->params.track_allocations = trace;
    call->context = std::make_unique<OpKernelContext>(&call->params);
    if (trace) call->start_micros = NowMicros();
    item.kernel->AsAsync()->ComputeAsync(call->context.get(), [this, call] {
      const NodeItem& item = impl_->items_[call->id];
      OpKernelContext* context = call->context.get();
      if (args_.stats) SaveStats(item, call->start_micros, context->bytes_allocated());
      std::vector<int> ready;
      Status status = context->status();
      if (status.ok() && !context->outputs_dead())
        status = CheckOutputs(item, call->params.outputs);
      if (!status.ok()) {
        RecordError(item, status);
      } else {
        PropagateOutputs(item, call->params.outputs, context->outputs_dead(), &ready);
      }
      ClearInputs(item);
      if (ready.size() > 1) {
        outstanding_.fetch_add(static_cast<int>(ready.size()) - 1, std::memory_order_relaxed);
      }
      ScheduleReady(ready, nullptr);
      if (ready.empty()) NodesDone();
    });
    return;
  }

  Tensor inline_outputs[kInlineOutputs];
  std::vector<Tensor> heap_outputs;
  std::span<Tensor> outputs;
  if (item.num_outputs <= kInlineOutputs) {
    outputs = std::span<Tensor>(inline_outputs, item.num_outputs);
  } else {
    heap_outputs.resize(item.num_outputs);
    outputs = std::span<Tensor>(heap_outputs);
  }
  OpKernelContext::Params params;
  params.device = impl_->device_;
  params.kernel = item.kernel.get();
  params.step = &step_;
  params.is_input_dead = dead;
  params.inputs = inputs;
  params.outputs = outputs;
  params.track_allocations = trace;
  OpKernelContext context(&params);
  int64_t start = trace ? NowMicros() : 0;
  {
    // This thread occupies one of the device's cores while the kernel runs,
    // so the kernel's own ParallelFor and those of kernels running beside
    // it recruit only idle cores (threadpool.h).
    ThreadPool::ScopedBusy busy(impl_->device_->intra_op_pool());
    item.kernel->Compute(&context);
  }
  if (trace) SaveStats(item, start, context.bytes_allocated());
  Status status = context.status();
  if (status.ok() && !context.outputs_dead()) status = CheckOutputs(item, outputs);
  ClearInputs(item);
  if (!status.ok()) {
    RecordError(item, status);
    return;
  }
  PropagateOutputs(item, outputs, context.outputs_dead(), ready);
}

Status ExecutorState::CheckOutputs(const NodeItem& item, std::span<Tensor> outputs) const {
  for (int i = 0; i < item.num_outputs; ++i) {
    const Tensor& t = outputs[i];
    if (!t.IsInitialized()) {
      return errors::Internal("kernel of node ", item.kernel->def().Describe(),
                              " did not produce output ", i);
    }
    if (t.dtype() != item.kernel->output_type(i)) {
      return errors::Internal("kernel of node ", item.kernel->def().Describe(), " produced ",
                              t.dtype(), " for output ", i, ", declared ",
                              item.kernel->output_type(i));
    }
  }
  return Status::OK();
}

void ExecutorState::PropagateOutputs(const NodeItem& item, std::span<Tensor> outputs, bool dead,
                                     std::vector<int>* ready) {
  const EdgeInfo* edges = impl_->edges_.data() + item.edges_start;
  for (int k = 0; k < item.num_edges; ++k) {
    const EdgeInfo& e = edges[k];
    if (dead) {
      input_dead_[e.dst_id].store(true, std::memory_order_relaxed);
    } else if (e.is_last) {
      inputs_[e.dst_slot] = std::move(outputs[e.src_output]);
    } else {
      inputs_[e.dst_slot] = outputs[e.src_output];
    }
    if (pending_[e.dst_id].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ready->push_back(e.dst_id);
    }
  }
  const int* controls = impl_->control_dsts_.data() + item.controls_start;
  for (int k = 0; k < item.num_controls; ++k) {
    int dst = controls[k];
    if (dead) input_dead_[dst].store(true, std::memory_order_relaxed);
    if (pending_[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready->push_back(dst);
  }
  // Outputs nobody consumes (or copies left behind) die here.
  for (Tensor& t : outputs) t = Tensor();
}

void ExecutorState::ClearInputs(const NodeItem& item) {
  Tensor* inputs = inputs_.get() + item.input_start;
  for (int i = 0; i < item.num_inputs; ++i) inputs[i] = Tensor();
}

namespace {
// Orders a max-heap of node ids by priority; among equals, the earlier
// node in topological order comes first.
struct LessUrgent {
  const std::vector<NodeItem>* items;
  bool operator()(int a, int b) const {
    const int pa = (*items)[a].priority, pb = (*items)[b].priority;
    return pa != pb ? pa < pb : a > b;
  }
};
}  // namespace

void ExecutorState::ScheduleReady(const std::vector<int>& ready, std::vector<int>* inline_ready) {
  if (ready.empty()) return;
  const Executor::Runner* runner = args_.runner;
  if (runner == nullptr) {  // everything runs on this thread
    if (inline_ready == nullptr) {
      for (int id : ready) Process(id);
    } else {
      inline_ready->insert(inline_ready->end(), ready.begin(), ready.end());
    }
    return;
  }
  auto goes_to_pool = [&](int id) {
    return inline_ready == nullptr || impl_->items_[id].is_expensive;
  };
  int tasks = 0;
  for (int id : ready) {
    if (goes_to_pool(id)) {
      ++tasks;
    } else {
      inline_ready->push_back(id);
    }
  }
  if (tasks == 0) return;  // the common case takes no lock
  {
    const LessUrgent less{&impl_->items_};
    std::lock_guard<std::mutex> lock(queue_mu_);
    for (int id : ready) {
      if (!goes_to_pool(id)) continue;
      expensive_queue_.push_back(id);
      std::push_heap(expensive_queue_.begin(), expensive_queue_.end(), less);
    }
  }
  if (inline_ready != nullptr && inline_ready->empty()) {
    // Nothing else to do here: run the most urgent expensive node ourselves.
    inline_ready->push_back(PopMostUrgent());
    --tasks;
  }
  // Each task's core counts as busy from now, not from when a thread picks
  // it up: a kernel that starts meanwhile must not recruit that core for
  // its ParallelFor, or the task waits its turn behind the helper.
  ThreadPool* cores = impl_->device_->intra_op_pool();
  for (int i = 0; i < tasks; ++i) {
    cores->ClaimCore();
    (*runner)([this, cores] {
      ThreadPool::ScopedBusy busy(cores, ThreadPool::ScopedBusy::kClaimed);
      Process(PopMostUrgent());  // may delete `this`
    });
  }
}

int ExecutorState::PopMostUrgent() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  DCHECK(!expensive_queue_.empty());
  std::pop_heap(expensive_queue_.begin(), expensive_queue_.end(), LessUrgent{&impl_->items_});
  const int id = expensive_queue_.back();
  expensive_queue_.pop_back();
  return id;
}

void ExecutorState::RecordError(const NodeItem& item, const Status& status) {
  Status located(status.code(),
                 StrCat("node ", item.kernel->def().Describe(), ": ", status.message()));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = located;
  }
  aborted_.store(true, std::memory_order_relaxed);
  // Wake blocked kernels of this step on every device.
  if (args_.cancellation) args_.cancellation->StartCancel();
}

void ExecutorState::SaveStats(const NodeItem& item, int64_t start, int64_t bytes) {
  NodeExecStats stats;
  stats.node_name = item.kernel->name();
  stats.op = item.kernel->type_string();
  stats.device = impl_->device_->name();
  stats.thread_id = CurrentThreadTraceId();
  stats.start_micros = start;
  stats.end_micros = NowMicros();
  stats.bytes_allocated = bytes;
  args_.stats->Save(std::move(stats));
}

void ExecutorState::Finish() {
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = status_;
  }
  Executor::DoneCallback done = std::move(done_);
  delete this;
  done(status);
}

}  // namespace

StatusOr<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, Device* device,
                                                     const KernelRegistry& kernels) {
  auto executor = std::make_unique<ExecutorImpl>();
  WEIR_RETURN_IF_ERROR(executor->Initialize(graph, device, kernels));
  return std::unique_ptr<Executor>(std::move(executor));
}

Status Executor::Run(const Args& args) {
  Notification done;
  Status result;
  RunAsync(args, [&](const Status& status) {
    result = status;
    done.Notify();
  });
  done.Wait();
  return result;
}

}  // namespace weir
