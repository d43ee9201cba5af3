#include "weir/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"
#include "weir/base/threadpool.h"
#include "weir/framework/resource_mgr.h"
#include "weir/runtime/executor_plan.h"

namespace weir {
namespace {

std::atomic<std::function<void()>*> async_start_hook{nullptr};

// The plan's vocabulary (executor_plan.h), used throughout.
constexpr auto kDeadBit = PendingWord::kDeadBit;
constexpr auto kExitRanDeadBit = PendingWord::kExitRanDeadBit;
constexpr auto kCountMask = PendingWord::kCountMask;
constexpr auto kMergeLiveClaimed = PendingWord::kMergeLiveClaimed;
constexpr auto kMergeLiveWritten = PendingWord::kMergeLiveWritten;
constexpr auto kMergeFired = PendingWord::kMergeFired;
constexpr auto kMergeForcedDead = PendingWord::kMergeForcedDead;
constexpr auto kMergeControlOne = PendingWord::kMergeControlOne;
constexpr auto kMergeControlMask = PendingWord::kMergeControlMask;
constexpr auto kMergeDeadShift = PendingWord::kMergeDeadShift;
constexpr auto kMergeDeadOne = PendingWord::kMergeDeadOne;
using NodeKind = ExecNodeKind;
using NodeItem = ExecutorPlan::NodeItem;
using EdgeInfo = ExecutorPlan::EdgeInfo;
using ControlEdge = ExecutorPlan::ControlEdge;
using FrameInfo = ExecutorPlan::FrameInfo;
constexpr uint8_t kToMerge = ExecutorPlan::kToMerge;
constexpr uint8_t kToControlTrigger = ExecutorPlan::kToControlTrigger;
constexpr uint8_t kToSingleInput = ExecutorPlan::kToSingleInput;
constexpr uint8_t kToExit = ExecutorPlan::kToExit;
constexpr uint8_t kKeepsValue = ExecutorPlan::kKeepsValue;
constexpr int kControlFlagBits = ExecutorPlan::kControlFlagBits;

enum MergeFiring { kNotReady = 0, kFireLive = 1, kFireDead = 2 };

MergeFiring MergeReady(int32_t word, int num_data_inputs) {
  if ((word & kMergeFired) || (word & kMergeControlMask)) return kNotReady;
  if (word & kMergeLiveClaimed) return (word & kMergeLiveWritten) ? kFireLive : kNotReady;
  if ((word & kMergeForcedDead) || (word >> kMergeDeadShift) == num_data_inputs) return kFireDead;
  return kNotReady;
}

MergeFiring UpdateMerge(std::atomic<int32_t>& word, int32_t add, int32_t set, int num_data) {
  int32_t old = word.load(std::memory_order_relaxed);
  for (;;) {
    int32_t next = (old + add) | set;
    const MergeFiring firing = MergeReady(next, num_data);
    if (firing != kNotReady) next |= kMergeFired;
    if (word.compare_exchange_weak(old, next, std::memory_order_acq_rel,
                                   std::memory_order_relaxed)) {
      return firing;
    }
  }
}

// True if this live input is the Merge's first (it then owns the value).
bool ClaimMerge(std::atomic<int32_t>& word) {
  int32_t old = word.load(std::memory_order_relaxed);
  do {
    if (old & (kMergeLiveClaimed | kMergeFired)) return false;
  } while (!word.compare_exchange_weak(old, old | kMergeLiveClaimed, std::memory_order_acq_rel,
                                       std::memory_order_relaxed));
  return true;
}

// Counts one input of a node off its pending word (marking it dead for a
// dead input); returns the word as it was before. The last input skips the
// atomic read-modify-write, a good part of a cheap node's dispatch: every
// other input has already counted (the acquire load sees their slots) and
// nothing counts on this word again in this iteration.
// In an iteration that one thread owns (IterationState::owned) no other
// thread touches the word, so every input is counted with plain stores.
inline int32_t TakePendingInput(std::atomic<int32_t>& word, bool dead, bool owned) {
  const int32_t seen = word.load(std::memory_order_acquire);
  const int32_t marked = dead ? (seen | kDeadBit) : seen;
  if ((seen & kCountMask) == 1) return marked;
  if (owned) {
    word.store(marked - 1, std::memory_order_relaxed);
    return marked;
  }
  if (dead) word.fetch_or(kDeadBit, std::memory_order_relaxed);
  return word.fetch_sub(1, std::memory_order_acq_rel);
}

// Small output buffer on the stack for the common case.
constexpr int kInlineOutputs = 8;

// Releases `t`'s buffer. Rebuilding in place skips the out-of-line move
// assignment (and its copy of the inline dims) that `t = Tensor()` costs,
// which is a good part of a cheap node's dispatch.
inline void ResetTensor(Tensor& t) {
  if (!t.IsInitialized()) return;
  std::destroy_at(&t);
  std::construct_at(&t);
}

// Fills an empty slot (moving or copying `value`).
template <typename T>
inline void FillEmpty(Tensor& slot, T&& value) {
  std::destroy_at(&slot);
  std::construct_at(&slot, std::forward<T>(value));
}

// `n` output slots: on the stack up to kInlineOutputs, constructed only as
// many as needed.
class OutputSlots {
 public:
  explicit OutputSlots(int n) : n_(n) {
    if (n <= kInlineOutputs) {
      data_ = reinterpret_cast<Tensor*>(storage_);
      std::uninitialized_default_construct_n(data_, n);
    } else {
      heap_ = std::make_unique<Tensor[]>(n);
      data_ = heap_.get();
    }
  }
  ~OutputSlots() {
    if (!heap_) std::destroy_n(data_, n_);
  }
  std::span<Tensor> span() { return std::span<Tensor>(data_, n_); }

 private:
  int n_;
  Tensor* data_;
  std::unique_ptr<Tensor[]> heap_;
  alignas(Tensor) unsigned char storage_[kInlineOutputs * sizeof(Tensor)];
};

uint64_t HashFrame(uint64_t parent_id, int64_t parent_iter, std::string_view name) {
  // FNV-1a over explicit bytes: the same frame invocation gets the same id on
  // every device and in every process, so partitioned loops meet in the
  // rendezvous.
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(parent_id);
  mix(static_cast<uint64_t>(parent_iter));
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;  // 0 is the root frame
}

struct FrameState;

// One iteration of one frame invocation: its pending words and input slots.
struct IterationState {
  FrameState* frame = nullptr;
  int64_t iter = 0;
  int base = 0;  // FrameInfo::node_base
  // Nodes of this iteration ready or running, plus one per live child frame,
  // plus a token held until the iteration can receive nothing more from
  // outside (iteration 0: all Enters arrived; later ones: the previous
  // iteration is gone). The thread that brings it to zero frees it.
  std::atomic<int> outstanding{0};
  // Started by StartNextIteration as the one iteration of a runs_inline
  // frame, after its predecessor ended (so every Enter of the frame has
  // arrived): only the starting thread delivers into it or touches its
  // frame, so its pending words need no read-modify-writes and its
  // NextIterations no frame lock.
  bool owned = false;
  std::unique_ptr<std::atomic<int32_t>[]> pending;
  std::unique_ptr<Tensor[]> inputs;
  IterationState* next = nullptr;         // FrameState::mu
  std::vector<FrameState*> children;      // FrameState::mu (of `frame`)
};

// One invocation of a loop frame in one step.
struct FrameState {
  const FrameInfo* info = nullptr;
  int info_index = 0;
  FrameState* parent = nullptr;
  IterationState* parent_iter = nullptr;
  uint64_t id = 0;
  int max_parallel = 1;
  std::mutex mu;
  int64_t newest_iter = 0;  // number of the newest iteration started
  int outstanding_iterations = 0;
  int pending_enters = 0;
  IterationState* oldest = nullptr;  // live iterations, oldest first, linked by `next`
  IterationState* newest = nullptr;
  struct Value {
    int id;
    Tensor value;
    bool dead;
  };
  std::vector<Value> invariants;  // is_constant Enters: delivered to every iteration
  std::vector<Value> deferred;    // NextIteration outputs waiting for parallel_iterations
  // Dead NextIterations of the newest iteration: the next one gets their
  // deadness if a live value starts it.
  std::vector<int> dead_next;
  std::vector<int> dead_exits;
  std::vector<std::unique_ptr<IterationState>> owned_iterations;
  std::vector<IterationState*> free_iterations;
};

// A node ready to run in an iteration.
struct TaggedNode {
  int id;
  bool dead;
  IterationState* iter;
};

// The nodes a node made ready, and those a thread runs next. A growable
// array whose push_back stays inline: std::vector's went out of line in
// ActivateEdges, and passing the node through the stack to it stalled the
// store forwarding of every push.
class ReadyList {
 public:
  ReadyList() = default;
  ReadyList(std::initializer_list<TaggedNode> nodes) : slots_(nodes), size_(nodes.size()) {}
  ReadyList(ReadyList&& other) noexcept
      : slots_(std::move(other.slots_)), size_(std::exchange(other.size_, 0)) {}
  ReadyList& operator=(ReadyList&& other) noexcept {
    slots_ = std::move(other.slots_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  void push_back(const TaggedNode& node) {
    if (size_ == slots_.size()) Grow();
    slots_[size_++] = node;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > slots_.size()) slots_.resize(n);
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const TaggedNode& back() const { return slots_[size_ - 1]; }
  const TaggedNode& operator[](size_t i) const { return slots_[i]; }
  const TaggedNode* begin() const { return slots_.data(); }
  const TaggedNode* end() const { return slots_.data() + size_; }

 private:
  [[gnu::noinline]] void Grow() { slots_.resize(std::max<size_t>(16, 2 * slots_.size())); }

  std::vector<TaggedNode> slots_;
  size_t size_ = 0;
};

// One step of one partition. Deletes itself after calling `done`.
class ExecutorState {
 public:
  ExecutorState(const ExecutorPlan* plan, const Executor::Args& args, Executor::DoneCallback done);
  void Start();

 private:
  struct AsyncCall;
  static constexpr int kFinishesLater = -1;
  // RunNode of a NextIteration that ended its own iteration and started the
  // next one (StartNextIteration): its ready nodes are counted in the new
  // iteration, and the old one is gone.
  static constexpr int kIterationRetired = -2;

  using Claim = ThreadPool::ScopedBusy::Claim;
  void Process(TaggedNode node, Claim claim = Claim::kNew);
  // Runs the nodes of `inline_ready`, and those they make ready that are
  // cheap, on this thread, which counts as busy on the device's cores
  // meanwhile (`claim`: ThreadPool::ScopedBusy). May finish the step and
  // delete `this`: only after this thread no longer counts, since the step's
  // `done` may destroy the device.
  void ProcessLoop(ReadyList inline_ready, Claim claim = Claim::kNew);
  // ProcessLoop's loop. Returns true if the last node of the step ran;
  // the caller then calls Finish.
  bool RunReady(ReadyList* inline_ready);
  // Runs the node (or skips it: dead inputs, or the step aborted) and
  // delivers its outputs. Returns kFinishesLater if an asynchronous kernel
  // started (its callback finishes the node); otherwise the number of nodes
  // appended to `ready` in the node's own iteration.
  int RunNode(const TaggedNode& node, ReadyList* ready);
  // RunNode of a node whose kernel runs (synchronous or asynchronous).
  [[gnu::noinline]] int RunKernel(const NodeItem& item, const TaggedNode& node, ReadyList* ready);
  // Fails the step: Switch's or LoopCond's predicate `pred` is no bool scalar.
  [[gnu::noinline, gnu::cold]] int PredicateError(const NodeItem& item, const TaggedNode& node,
                                                  const Tensor& pred);
  // The one path by which every node finishes: accounts for it and its
  // newly ready nodes and schedules those. Returns true if that ended the
  // step: `this` is deleted, or with `finish` false the caller must call
  // Finish.
  bool NodeFinished(IterationState* iter, int same_iteration, ReadyList* ready,
                    ReadyList* inline_ready, bool finish = true);
  // Delivers a node's outputs (or its deadness) to where its kind sends
  // them; returns how many of the nodes it made ready are in its iteration,
  // or kIterationRetired.
  inline int PropagateOutputs(const NodeItem& item, const TaggedNode& node,
                              std::span<Tensor> outputs, bool dead, ReadyList* ready);
  // PropagateOutputs of Enter, Exit and NextIteration.
  [[gnu::noinline]] int PropagateAcrossFrames(const NodeItem& item, const TaggedNode& node,
                                              std::span<Tensor> outputs, bool dead,
                                              ReadyList* ready);
  // Delivers along the node's out-edges into `iter`; returns the number of
  // nodes that became ready (appended to `ready`, not yet counted).
  // `borrowed`: the outputs belong to someone else (a Const's kernel, a
  // frame's invariants): copied where needed, never moved from or reset.
  int ActivateEdges(const NodeItem& item, IterationState* iter, std::span<Tensor> outputs,
                    bool dead, bool from_enter, ReadyList* ready, bool borrowed = false);
  void ActivateCounted(const NodeItem& item, IterationState* iter, std::span<Tensor> outputs,
                       bool dead, bool from_enter, ReadyList* ready);
  void EnterFrame(const NodeItem& item, const TaggedNode& node, std::span<Tensor> outputs,
                  bool dead, ReadyList* ready);
  // Returns true if it ended the node's iteration (kIterationRetired).
  bool StartNextIteration(const NodeItem& item, const TaggedNode& node, Tensor value,
                          ReadyList* ready);
  void DeadToNextIteration(const NodeItem& item, const TaggedNode& node, ReadyList* ready);
  FrameState* FindOrCreateChildFrame(const NodeItem& item, IterationState* parent_iter);
  // REQUIRES: frame->mu held.
  IterationState* StartIteration(FrameState* frame, ReadyList* ready, bool owned = false);
  // Frees `iter`, the frame's only iteration, whose last node is running on
  // this thread and will start the next one. REQUIRES: frame->mu held.
  void RetireOnlyIteration(IterationState* iter);
  // Empties a finished iteration's input slots but the kept ones
  // (ExecutorPlan::kKeepsValue), which the iteration's reuse takes as is.
  void ResetIterationInputs(IterationState* iter);
  // `iter`'s outstanding count reached zero on this thread: frees it and
  // whatever that completes (later iterations, the frame, its parents).
  void IterationDone(IterationState* iter, ReadyList* ready);
  void DeleteFrame(FrameState* frame, ReadyList* ready);
  IterationState* TakeIteration(FrameState* frame);

  // Whether the kernel set every output with its declared dtype (the
  // common case, checked inline); CheckOutputs says what is wrong.
  bool OutputsOk(const NodeItem& item, std::span<Tensor> outputs) const {
    for (int i = 0; i < item.num_outputs; ++i) {
      const Tensor& t = outputs[i];
      if (!t.IsInitialized() ? !item.outputs_may_be_unset
                             : t.dtype() != item.kernel->output_type(i)) {
        return false;
      }
    }
    return true;
  }
  [[gnu::noinline, gnu::cold]] Status CheckOutputs(const NodeItem& item,
                                                   std::span<Tensor> outputs) const;
  void ClearInputs(const NodeItem& item, IterationState* iter);
  // Cheap ready nodes go to `inline_ready`; expensive ones to the pool
  // (keeping the most urgent inline if nothing else is). With
  // `inline_ready` null, everything goes to the pool.
  void ScheduleReady(const ReadyList& ready, ReadyList* inline_ready);
  // Takes the most urgent node of expensive_queue_.
  TaggedNode PopMostUrgent();
  // Accounts for a finished node that made nothing ready. Returns true if
  // that completed the step (and, with `finish`, `this` is deleted).
  bool NodesDone(bool finish);
  void RecordError(const NodeItem& item, const TaggedNode& node, const Status& status);
  void SaveStats(const NodeItem& item, const TaggedNode& node, int64_t start, int64_t bytes);
  FrameAndIter FrameIterOf(const IterationState* iter) const {
    return iter == &root_iter_ ? FrameAndIter() : FrameAndIter{iter->frame->id, iter->iter};
  }
  void Finish();

  const ExecutorPlan* plan_;
  Executor::Args args_;
  Executor::DoneCallback done_;
  StepContext step_;
  ResourceMgr step_resources_;
  FrameState root_frame_;
  IterationState root_iter_;
  // Nodes ready or running in every frame; the step ends at zero.
  std::atomic<int> outstanding_{0};
  std::atomic<bool> aborted_{false};
  std::mutex mu_;
  Status status_;
  // The step's expensive ready nodes, a heap by NodeItem::priority. Each
  // queued node has exactly one pool task waiting to pop it, though not
  // necessarily that node: a task takes whichever is most urgent when it
  // starts.
  std::mutex queue_mu_;
  std::vector<TaggedNode> expensive_queue_;
  // Frame states of finished loop invocations, per plan frame, for reuse.
  std::mutex frame_pool_mu_;
  std::vector<std::unique_ptr<FrameState>> owned_frames_;
  std::vector<std::vector<FrameState*>> free_frames_;
};

class ExecutorImpl final : public Executor {
 public:
  Status Initialize(const Graph& graph, Device* device, const KernelRegistry& kernels) {
    return plan_.Build(graph, device, kernels);
  }
  void RunAsync(const Args& args, DoneCallback done) override {
    (new ExecutorState(&plan_, args, std::move(done)))->Start();
  }
  int num_nodes() const override { return static_cast<int>(plan_.items.size()); }

 private:
  ExecutorPlan plan_;
};

ExecutorState::ExecutorState(const ExecutorPlan* plan, const Executor::Args& args,
                             Executor::DoneCallback done)
    : plan_(plan), args_(args), done_(std::move(done)) {
  step_.step_id = args.step_id;
  step_.rendezvous = args.rendezvous;
  step_.cancellation = args.cancellation;
  step_.call_frame = args.call_frame;
  step_.default_container = args.default_container;
  step_.step_resources = &step_resources_;
  const FrameInfo& root = plan->frames[0];
  root_frame_.info = &root;
  root_iter_.frame = &root_frame_;
  root_frame_.oldest = root_frame_.newest = &root_iter_;
  const size_t n = root.num_nodes;
  root_iter_.pending.reset(new std::atomic<int32_t>[n]);
  for (size_t i = 0; i < n; ++i) {
    root_iter_.pending[i].store(root.pending_init[i], std::memory_order_relaxed);
  }
  if (root.num_inputs > 0) root_iter_.inputs.reset(new Tensor[root.num_inputs]);
}

void ExecutorState::Start() {
  const std::vector<int>& roots = plan_->roots;
  if (roots.empty()) {
    Finish();
    return;
  }
  outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
  // Cheap roots (constants, feeds) run right here on the caller's thread.
  ReadyList inline_ready;
  inline_ready.reserve(std::max<size_t>(16, roots.size()));
  if (plan_->has_expensive_root) {
    ReadyList ready;
    for (int id : roots) ready.push_back({id, false, &root_iter_});
    ScheduleReady(ready, &inline_ready);
  } else {
    for (int id : roots) inline_ready.push_back({id, false, &root_iter_});
  }
  ProcessLoop(std::move(inline_ready));  // may delete `this`
}

void ExecutorState::Process(TaggedNode node, Claim claim) { ProcessLoop({node}, claim); }

void ExecutorState::ProcessLoop(ReadyList inline_ready, Claim claim) {
  bool step_done;
  {
    // This thread occupies one of the device's cores while it runs nodes,
    // so the kernels' own ParallelFors and those of kernels running beside
    // them recruit only idle cores (threadpool.h). Once per loop, not per
    // kernel: it costs two atomic updates of a shared counter.
    ThreadPool::ScopedBusy busy(plan_->device->intra_op_pool(), claim);
    step_done = RunReady(&inline_ready);
  }
  if (step_done) Finish();  // may destroy the device
}

bool ExecutorState::RunReady(ReadyList* inline_ready_list) {
  ReadyList& inline_ready = *inline_ready_list;
  // Two lists in turn: a node that runs next in a chain is read where its
  // predecessor put it, not copied out first (the copy, one 16-byte load of
  // a node just stored field by field, stalled on store forwarding).
  ReadyList lists[2];
  while (!inline_ready.empty()) {
    const TaggedNode popped = inline_ready.back();
    inline_ready.pop_back();
    const TaggedNode* current = &popped;
    for (int which = 0;; which ^= 1) {
      ReadyList& ready = lists[which];
      ready.clear();
      const int same_iteration = RunNode(*current, &ready);
      if (same_iteration == kFinishesLater) break;
      if (same_iteration == kIterationRetired) {
        // A NextIteration that ended its iteration: the next one's Merge
        // takes over its count.
        if (ready.size() == 1 && !plan_->items[ready[0].id].is_expensive) {
          current = &ready[0];
          continue;
        }
        if (NodeFinished(nullptr, 0, &ready, &inline_ready, /*finish=*/false)) return true;
        break;
      }
      // A chain (the common case in a loop body): the one cheap node this
      // one made ready in its own iteration takes over its counts and runs
      // next, as NodeFinished and ScheduleReady would have it, without
      // their bookkeeping.
      if (same_iteration == 1 && ready.size() == 1 && !plan_->items[ready[0].id].is_expensive) {
        current = &ready[0];
        continue;
      }
      if (NodeFinished(current->iter, same_iteration, &ready, &inline_ready, /*finish=*/false)) {
        return true;
      }
      break;
    }
  }
  return false;
}

bool ExecutorState::NodeFinished(IterationState* iter, int same_iteration, ReadyList* ready,
                                 ReadyList* inline_ready, bool finish) {
  if (iter != nullptr && iter != &root_iter_) {
    // The nodes it made ready in its iteration take over its count there.
    if (same_iteration > 1) {
      iter->outstanding.fetch_add(same_iteration - 1, std::memory_order_relaxed);
    } else if (same_iteration == 0 &&
               iter->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      IterationDone(iter, ready);
    }
  }
  // Count the new nodes before any can run elsewhere and finish.
  const size_t n = ready->size();
  if (n > 1) outstanding_.fetch_add(static_cast<int>(n) - 1, std::memory_order_relaxed);
  ScheduleReady(*ready, inline_ready);
  return n == 0 && NodesDone(finish);
}

bool ExecutorState::NodesDone(bool finish) {
  if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (finish) Finish();
    return true;
  }
  return false;
}

struct ExecutorState::AsyncCall {
  OpKernelContext::Params params;
  std::vector<Tensor> outputs;
  std::unique_ptr<OpKernelContext> context;
  TaggedNode node;
  int64_t start_micros = 0;
  // Set when the kernel called `done` before ComputeAsync returned, on the
  // calling thread: what it made ready is then run by RunNode's caller.
  bool finished_inline = false;
  int same_iteration = 0;
  ReadyList ready;
};

namespace {
// The asynchronous call this thread is inside ComputeAsync of, if any: a
// `done` run by the same call on the same thread finished synchronously (a
// dequeue from a queue holding elements), and its successors stay on this
// thread instead of a hop through the inter-op pool.
thread_local const void* current_async_call = nullptr;
}  // namespace

int ExecutorState::RunNode(const TaggedNode& node, ReadyList* ready) {
  const NodeItem& item = plan_->items[node.id];
  IterationState* iter = node.iter;
  std::span<Tensor> inputs(iter->inputs.get() + item.input_start, item.num_inputs);
  if (item.is_async) {
    if (std::function<void()>* hook = async_start_hook.load(std::memory_order_acquire)) (*hook)();
  }
  // The only check of aborted_ before a node runs: a node that does not run
  // finishes like any other, through NodeFinished.
  if (aborted_.load(std::memory_order_relaxed)) {
    ClearInputs(item, iter);
    return 0;
  }
  const bool trace = args_.stats != nullptr;
  if (node.dead && !item.runs_when_dead) {
    // An untaken branch: outputs are dead, the kernel never runs.
    ClearInputs(item, iter);
    return PropagateOutputs(item, node, {}, /*dead=*/true, ready);
  }
  if (item.forwards_input) {
    if (item.kind == NodeKind::kLoopCond &&
        (inputs[0].dtype() != DT_BOOL || inputs[0].dims() != 0)) {
      return PredicateError(item, node, inputs[0]);
    }
    // The input slot serves as the output: delivery moves the value on
    // from there (and empties the slot), one move of a tensor fewer.
    if (trace) SaveStats(item, node, NowMicros(), 0);
    return PropagateOutputs(item, node, inputs.first(1), /*dead=*/false, ready);
  }
  if (item.constant_output != nullptr) {
    // A Const: what its kernel would set, without the call, and lent
    // rather than copied (a kept slot takes nothing: kKeepsValue).
    if (trace) SaveStats(item, node, NowMicros(), 0);
    return ActivateEdges(item, iter,
                         std::span<Tensor>(const_cast<Tensor*>(item.constant_output), 1),
                         /*dead=*/false, /*from_enter=*/false, ready, /*borrowed=*/true);
  }
  // Switch and Merge move values too; the executor does that itself (their
  // kernels, which do the same, would cost a kernel call and copies).
  if (item.kind == NodeKind::kMerge) {
    Tensor outputs[2];
    for (int i = 0; i < item.num_inputs; ++i) {
      if (!inputs[i].IsInitialized()) continue;  // its only live input
      outputs[0] = std::move(inputs[i]);
      // value_index only if an edge reads it: a loop's Merges rarely have
      // one, and the copy costs a Ref and an Unref per iteration.
      if (item.merge_index_used) outputs[1] = item.merge_indices[i];
      break;
    }
    if (trace) SaveStats(item, node, NowMicros(), 0);
    return PropagateOutputs(item, node, std::span<Tensor>(outputs, 2), /*dead=*/false, ready);
  }
  if (item.kind == NodeKind::kSwitch) {
    const Tensor& pred = inputs[1];
    if (pred.dtype() != DT_BOOL || pred.dims() != 0) return PredicateError(item, node, pred);
    // The input slots serve as the outputs (an unset one is dead): the
    // value stays in slot 0 or moves to slot 1 in the predicate's place.
    const bool taken = pred.scalar<bool>();
    ResetTensor(inputs[1]);
    if (taken) FillEmpty(inputs[1], std::move(inputs[0]));
    if (trace) SaveStats(item, node, NowMicros(), 0);
    return PropagateOutputs(item, node, inputs.first(2), /*dead=*/false, ready);
  }
  return RunKernel(item, node, ready);
}

int ExecutorState::PredicateError(const NodeItem& item, const TaggedNode& node,
                                  const Tensor& pred) {
  const Status status = errors::InvalidArgument(
      "the predicate of ", item.kernel->type_string(), " node ", item.kernel->def().Describe(),
      " must be a bool scalar, got ", pred.dtype(), " ", pred.shape());
  ClearInputs(item, node.iter);
  RecordError(item, node, status);
  return 0;
}

int ExecutorState::RunKernel(const NodeItem& item, const TaggedNode& node, ReadyList* ready) {
  IterationState* iter = node.iter;
  std::span<Tensor> inputs(iter->inputs.get() + item.input_start, item.num_inputs);
  const bool trace = args_.stats != nullptr;
  if (item.is_async) {
    auto call = std::make_shared<AsyncCall>();
    call->node = node;
    call->outputs.resize(item.num_outputs);
    call->params.device = plan_->device;
    call->params.kernel = item.kernel.get();
    call->params.step = &step_;
    call->params.frame_iter = FrameIterOf(iter);
    call->params.is_input_dead = node.dead;
    call->params.inputs = inputs;
    call->params.outputs = std::span<Tensor>(call->outputs);
    call->params.track_allocations = trace;
    call->context = std::make_unique<OpKernelContext>(&call->params);
    if (trace) call->start_micros = NowMicros();
    const void* const outer_call = current_async_call;
    current_async_call = call.get();
    item.kernel->AsAsync()->ComputeAsync(call->context.get(), [this, call] {
      const NodeItem& item = plan_->items[call->node.id];
      OpKernelContext* context = call->context.get();
      if (args_.stats) SaveStats(item, call->node, call->start_micros, context->bytes_allocated());
      ReadyList ready;
      int same_iteration = 0;
      Status status = context->status();
      if (status.ok() && !context->outputs_dead() && !OutputsOk(item, call->params.outputs))
        status = CheckOutputs(item, call->params.outputs);
      if (!status.ok()) {
        RecordError(item, call->node, status);
      } else {
        same_iteration = PropagateOutputs(item, call->node, call->params.outputs,
                                          context->outputs_dead(), &ready);
      }
      ClearInputs(item, call->node.iter);
      if (current_async_call == call.get()) {
        call->finished_inline = true;
        call->same_iteration = same_iteration;
        call->ready = std::move(ready);
        return;
      }
      NodeFinished(call->node.iter, same_iteration, &ready, nullptr);
    });
    current_async_call = outer_call;
    if (call->finished_inline) {
      *ready = std::move(call->ready);
      return call->same_iteration;
    }
    return kFinishesLater;
  }

  OutputSlots output_slots(item.num_outputs);
  std::span<Tensor> outputs = output_slots.span();
  OpKernelContext::Params params;
  params.device = plan_->device;
  params.kernel = item.kernel.get();
  params.step = &step_;
  params.frame_iter = FrameIterOf(iter);
  params.is_input_dead = node.dead;
  params.inputs = inputs;
  params.outputs = outputs;
  params.track_allocations = trace;
  OpKernelContext context(&params);
  int64_t start = trace ? NowMicros() : 0;
  item.kernel->Compute(&context);  // ProcessLoop holds the core busy
  if (trace) SaveStats(item, node, start, context.bytes_allocated());
  ClearInputs(item, iter);
  if (!context.status().ok() || (!context.outputs_dead() && !OutputsOk(item, outputs))) {
    RecordError(item, node, context.status().ok() ? CheckOutputs(item, outputs) : context.status());
    return 0;
  }
  return PropagateOutputs(item, node, outputs, context.outputs_dead(), ready);
}

Status ExecutorState::CheckOutputs(const NodeItem& item, std::span<Tensor> outputs) const {
  for (int i = 0; i < item.num_outputs; ++i) {
    const Tensor& t = outputs[i];
    if (!t.IsInitialized()) {
      if (item.outputs_may_be_unset) continue;  // a dead output
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

int ExecutorState::PropagateOutputs(const NodeItem& item, const TaggedNode& node,
                                    std::span<Tensor> outputs, bool dead, ReadyList* ready) {
  if (item.kind != NodeKind::kEnter && item.kind != NodeKind::kExit &&
      item.kind != NodeKind::kNextIteration) {
    return ActivateEdges(item, node.iter, outputs, dead, /*from_enter=*/false, ready);
  }
  return PropagateAcrossFrames(item, node, outputs, dead, ready);
}

int ExecutorState::PropagateAcrossFrames(const NodeItem& item, const TaggedNode& node,
                                         std::span<Tensor> outputs, bool dead, ReadyList* ready) {
  IterationState* iter = node.iter;
  switch (item.kind) {
    case NodeKind::kEnter:
      EnterFrame(item, node, outputs, dead, ready);
      return 0;
    case NodeKind::kExit:
      if (dead) {
        // Only the last iteration's dead Exits matter: when the frame ends
        // their consumers see dead values (IterationDone).
        iter->pending[node.id - iter->base].fetch_or(kExitRanDeadBit, std::memory_order_relaxed);
        return 0;
      }
      ActivateCounted(item, iter->frame->parent_iter, outputs, false, false, ready);
      return 0;
    case NodeKind::kNextIteration:
      if (dead) {
        DeadToNextIteration(item, node, ready);
      } else if (StartNextIteration(item, node, std::move(outputs[0]), ready)) {
        return kIterationRetired;
      }
      return 0;
    default:
      return ActivateEdges(item, iter, outputs, dead, /*from_enter=*/false, ready);
  }
}

int ExecutorState::ActivateEdges(const NodeItem& item, IterationState* iter,
                                 std::span<Tensor> outputs, bool dead, bool from_enter,
                                 ReadyList* ready, bool borrowed) {
  const size_t before = ready->size();
  std::atomic<int32_t>* pending = iter->pending.get();
  Tensor* inputs = iter->inputs.get();
  const int base = iter->base;
  const EdgeInfo* edges = plan_->edges.data() + item.edges_start;
  for (int k = 0; k < item.num_edges; ++k) {
    const EdgeInfo& e = edges[k];
    const bool edge_dead =
        dead || (item.outputs_may_be_unset && !outputs[e.src_output].IsInitialized());
    std::atomic<int32_t>& word = pending[e.dst_id - base];
    if (e.dst_flags & kToMerge) {
      const int num_data = plan_->items[e.dst_id].num_inputs;
      // The Merge's last possible input in this iteration (its other data
      // inputs all came dead, its control inputs all came: a loop's Merge
      // after the first iteration, fed by its back edge only): nothing else
      // writes the word now, so it fires without compare-and-swap, as the
      // last input of other nodes does (TakePendingInput).
      const int32_t seen = word.load(std::memory_order_acquire);
      if ((seen & (kMergeControlMask | kMergeLiveClaimed | kMergeFired)) == 0 &&
          (seen >> kMergeDeadShift) == num_data - 1) {
        if (edge_dead) {
          const int32_t forced = from_enter ? kMergeForcedDead : 0;
          word.store((seen + kMergeDeadOne) | forced | kMergeFired, std::memory_order_relaxed);
        } else {
          if (e.is_last && !borrowed) {
            FillEmpty(inputs[e.dst_slot], std::move(outputs[e.src_output]));
          } else {
            FillEmpty(inputs[e.dst_slot], outputs[e.src_output]);
          }
          word.store(seen | kMergeLiveClaimed | kMergeLiveWritten | kMergeFired,
                     std::memory_order_relaxed);
        }
        ready->push_back({e.dst_id, edge_dead, iter});
        continue;
      }
      MergeFiring firing;
      if (edge_dead) {
        firing = UpdateMerge(word, kMergeDeadOne, from_enter ? kMergeForcedDead : 0, num_data);
      } else {
        if (!ClaimMerge(word)) continue;  // it already has its live input
        if (e.is_last && !borrowed) {
          FillEmpty(inputs[e.dst_slot], std::move(outputs[e.src_output]));
        } else {
          FillEmpty(inputs[e.dst_slot], outputs[e.src_output]);
        }
        firing = UpdateMerge(word, 0, kMergeLiveWritten, num_data);
      }
      if (firing != kNotReady) ready->push_back({e.dst_id, firing == kFireDead, iter});
      continue;
    }
    // A kept value still in its slot is this edge's own earlier delivery of
    // the same tensor (kKeepsValue): nothing to copy.
    if (!edge_dead && !((e.dst_flags & kKeepsValue) && inputs[e.dst_slot].IsInitialized())) {
      if (e.is_last && !borrowed) {
        FillEmpty(inputs[e.dst_slot], std::move(outputs[e.src_output]));
      } else {
        FillEmpty(inputs[e.dst_slot], outputs[e.src_output]);
      }
    }
    if (e.dst_flags & kToSingleInput) {
      if (edge_dead && (e.dst_flags & kToExit)) {
        // What running the dead Exit would do (PropagateOutputs). Its only
        // in-edge is this one, so nothing else writes the word in this
        // iteration: a plain store, no read-modify-write.
        word.store(word.load(std::memory_order_relaxed) | kExitRanDeadBit,
                   std::memory_order_relaxed);
        continue;
      }
      ready->push_back({e.dst_id, edge_dead && !(e.dst_flags & kToControlTrigger), iter});
      continue;
    }
    const int32_t old = TakePendingInput(word, edge_dead, iter->owned);
    if ((old & kCountMask) == 1) {
      const bool dst_dead = (old & kDeadBit) && !(e.dst_flags & kToControlTrigger);
      ready->push_back({e.dst_id, dst_dead, iter});
    }
  }
  const ControlEdge* controls = plan_->control_edges.data() + item.controls_start;
  for (int k = 0; k < item.num_controls; ++k) {
    const int dst = controls[k] >> kControlFlagBits;
    const int flags = controls[k] & ((1 << kControlFlagBits) - 1);
    if (flags & kToSingleInput) {
      ready->push_back({dst, dead && !(flags & kToControlTrigger), iter});
      continue;
    }
    std::atomic<int32_t>& word = pending[dst - base];
    if (flags & kToMerge) {
      // A Merge's control inputs only count; their deadness does not matter.
      const MergeFiring firing =
          UpdateMerge(word, -kMergeControlOne, 0, plan_->items[dst].num_inputs);
      if (firing != kNotReady) ready->push_back({dst, firing == kFireDead, iter});
      continue;
    }
    const int32_t old = TakePendingInput(word, dead, iter->owned);
    if ((old & kCountMask) == 1) {
      ready->push_back({dst, (old & kDeadBit) && !(flags & kToControlTrigger), iter});
    }
  }
  // Outputs nobody consumes (or copies left behind) die here.
  if (!borrowed) {
    for (Tensor& t : outputs) ResetTensor(t);
  }
  return static_cast<int>(ready->size() - before);
}

void ExecutorState::ActivateCounted(const NodeItem& item, IterationState* iter,
                                    std::span<Tensor> outputs, bool dead, bool from_enter,
                                    ReadyList* ready) {
  const int n = ActivateEdges(item, iter, outputs, dead, from_enter, ready);
  if (n > 0 && iter != &root_iter_) iter->outstanding.fetch_add(n, std::memory_order_relaxed);
}

FrameState* ExecutorState::FindOrCreateChildFrame(const NodeItem& item,
                                                  IterationState* parent_iter) {
  FrameState* parent = parent_iter->frame;
  {
    std::lock_guard<std::mutex> lock(parent->mu);
    for (FrameState* child : parent_iter->children) {
      if (child->info_index == item.child_frame) return child;
    }
  }
  FrameState* frame = nullptr;
  {
    std::lock_guard<std::mutex> lock(frame_pool_mu_);
    if (free_frames_.empty()) free_frames_.resize(plan_->frames.size());
    std::vector<FrameState*>& free = free_frames_[item.child_frame];
    if (!free.empty()) {
      frame = free.back();
      free.pop_back();
    } else {
      owned_frames_.push_back(std::make_unique<FrameState>());
      frame = owned_frames_.back().get();
    }
  }
  const FrameInfo& info = plan_->frames[item.child_frame];
  frame->info = &info;
  frame->info_index = item.child_frame;
  frame->parent = parent;
  frame->parent_iter = parent_iter;
  frame->id = HashFrame(parent->id, parent_iter->iter, info.name);
  frame->max_parallel = item.parallel_iterations;
  frame->newest_iter = -1;
  frame->outstanding_iterations = 0;
  frame->pending_enters = info.num_enters;
  frame->oldest = frame->newest = nullptr;
  std::lock_guard<std::mutex> lock(parent->mu);
  // Two Enters of the same frame may race here; the first one wins.
  for (FrameState* child : parent_iter->children) {
    if (child->info_index == item.child_frame) {
      std::lock_guard<std::mutex> pool_lock(frame_pool_mu_);
      free_frames_[item.child_frame].push_back(frame);
      return child;
    }
  }
  {
    std::lock_guard<std::mutex> frame_lock(frame->mu);
    // Iteration 0 holds its token until every Enter of the frame arrived.
    StartIteration(frame, nullptr)->outstanding.store(1, std::memory_order_relaxed);
  }
  parent_iter->children.push_back(frame);
  if (parent_iter != &root_iter_) parent_iter->outstanding.fetch_add(1, std::memory_order_relaxed);
  return frame;
}

void ExecutorState::EnterFrame(const NodeItem& item, const TaggedNode& node,
                               std::span<Tensor> outputs, bool dead, ReadyList* ready) {
  FrameState* frame = FindOrCreateChildFrame(item, node.iter);
  IterationState* done = nullptr;
  {
    std::lock_guard<std::mutex> lock(frame->mu);
    // While Enters are pending no iteration can end, so all are safe here.
    if (item.is_constant_enter) {
      frame->invariants.push_back({node.id, dead ? Tensor() : std::move(outputs[0]), dead});
      Tensor& value = frame->invariants.back().value;
      for (IterationState* iter = frame->oldest; iter != nullptr; iter = iter->next) {
        const int n = ActivateEdges(item, iter, std::span<Tensor>(&value, 1), dead, true, ready,
                                    /*borrowed=*/true);
        if (n > 0) iter->outstanding.fetch_add(n, std::memory_order_relaxed);
      }
    } else {
      ActivateCounted(item, frame->oldest, outputs, dead, true, ready);
    }
    if (--frame->pending_enters == 0 &&
        frame->oldest->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      done = frame->oldest;
    }
  }
  if (done != nullptr) IterationDone(done, ready);
}

IterationState* ExecutorState::TakeIteration(FrameState* frame) {
  const FrameInfo& info = *frame->info;
  const std::vector<int32_t>& pending_init =
      frame->newest_iter < 0 || info.pending_after_first.empty() ? info.pending_init
                                                                 : info.pending_after_first;
  IterationState* iter;
  if (!frame->free_iterations.empty()) {
    iter = frame->free_iterations.back();
    frame->free_iterations.pop_back();
  } else {
    frame->owned_iterations.push_back(std::make_unique<IterationState>());
    iter = frame->owned_iterations.back().get();
    iter->pending.reset(new std::atomic<int32_t>[info.num_nodes]);
    if (info.num_inputs > 0) iter->inputs.reset(new Tensor[info.num_inputs]);
  }
  for (int i = 0; i < info.num_nodes; ++i) {
    iter->pending[i].store(pending_init[i], std::memory_order_relaxed);
  }
  iter->frame = frame;
  iter->base = info.node_base;
  iter->next = nullptr;
  iter->owned = false;
  return iter;
}

IterationState* ExecutorState::StartIteration(FrameState* frame, ReadyList* ready, bool owned) {
  IterationState* iter = TakeIteration(frame);
  IterationState* previous = frame->newest;
  iter->iter = ++frame->newest_iter;
  iter->owned = owned;
  if (previous != nullptr) {
    previous->next = iter;
  } else {
    frame->oldest = iter;
  }
  frame->newest = iter;
  ++frame->outstanding_iterations;
  // Until frame->mu is released no other thread reaches the new iteration
  // and none of its nodes runs: its count is set once, at the end.
  int activated = 0;
  for (FrameState::Value& invariant : frame->invariants) {
    activated += ActivateEdges(plan_->items[invariant.id], iter,
                               std::span<Tensor>(&invariant.value, 1), invariant.dead, true, ready,
                               /*borrowed=*/true);
  }
  for (int id : frame->dead_next) {
    activated += ActivateEdges(plan_->items[id], iter, {}, true, false, ready);
  }
  frame->dead_next.clear();
  // The token: held while the previous iteration may still send values.
  iter->outstanding.store(activated + (previous != nullptr ? 1 : 0), std::memory_order_relaxed);
  return iter;
}

void ExecutorState::RetireOnlyIteration(IterationState* iter) {
  // What IterationDone does for an iteration with a successor to come.
  FrameState* frame = iter->frame;
  frame->oldest = frame->newest = nullptr;
  --frame->outstanding_iterations;
  ResetIterationInputs(iter);
  frame->free_iterations.push_back(iter);
}

void ExecutorState::ResetIterationInputs(IterationState* iter) {
  const FrameInfo& info = *iter->frame->info;
  Tensor* inputs = iter->inputs.get();
  const int* kept = info.kept_slots.data();
  const int* kept_end = kept + info.kept_slots.size();
  for (int i = 0; i < info.num_inputs; ++i) {
    if (kept != kept_end && *kept == i) {
      ++kept;
      continue;
    }
    ResetTensor(inputs[i]);
  }
}

bool ExecutorState::StartNextIteration(const NodeItem& item, const TaggedNode& node, Tensor value,
                                       ReadyList* ready) {
  // A loop of cheap nodes never blocks, so nothing else would notice that
  // its step was cancelled (Session::Close, RunOptions::timeout_ms): each
  // iteration looks. Dropping the value ends the loop as a dead one would.
  if (args_.cancellation != nullptr && args_.cancellation->IsCancelled()) {
    RecordError(item, node, errors::Cancelled("the step was cancelled"));
    return false;
  }
  IterationState* iter = node.iter;
  FrameState* frame = iter->frame;
  // An owned iteration's frame has no other thread in it (no Enter still
  // to come, every node on this thread): the lock would only cost time.
  std::unique_lock<std::mutex> lock(frame->mu, std::defer_lock);
  if (!iter->owned) lock.lock();
  IterationState* next = iter->next;
  if (next == nullptr && frame->oldest == iter && frame->deferred.empty() &&
      iter->outstanding.load(std::memory_order_acquire) == 1) {
    // This node is all that is left of the frame's only iteration (no token,
    // no child frame, nothing else ready or running), and nothing can add to
    // it: the lock keeps out Enters and other NextIterations. End it here,
    // under the lock already held, instead of in IterationDone after it, and
    // start the next one without a token.
    RetireOnlyIteration(iter);
    next = StartIteration(frame, ready, frame->info->runs_inline);
    const int n = ActivateEdges(item, next, std::span<Tensor>(&value, 1), false, false, ready);
    next->outstanding.store(next->outstanding.load(std::memory_order_relaxed) + n,
                            std::memory_order_relaxed);
    return true;
  }
  if (next == nullptr) {
    if (frame->outstanding_iterations >= frame->max_parallel) {
      // parallel_iterations reached: the value waits for the oldest to end.
      frame->deferred.push_back({node.id, std::move(value), false});
      return false;
    }
    next = StartIteration(frame, ready);
  }
  ActivateCounted(item, next, std::span<Tensor>(&value, 1), false, false, ready);
  return false;
}

void ExecutorState::DeadToNextIteration(const NodeItem& item, const TaggedNode& node,
                                        ReadyList* ready) {
  // A dead value starts no iteration, but an iteration that live values
  // start gets it: otherwise the loop variable's nodes there would never
  // run, and a _Send among them would leave its _Recv on another device,
  // which the control loop starts in every iteration, waiting forever.
  FrameState* frame = node.iter->frame;
  std::lock_guard<std::mutex> lock(frame->mu);
  if (IterationState* next = node.iter->next) {
    ActivateCounted(item, next, {}, /*dead=*/true, false, ready);
  } else {
    frame->dead_next.push_back(node.id);
  }
}

void ExecutorState::IterationDone(IterationState* iter, ReadyList* ready) {
  FrameState* frame = iter->frame;
  for (;;) {
    IterationState* also_done = nullptr;
    bool frame_done = false;
    {
      std::lock_guard<std::mutex> lock(frame->mu);
      DCHECK(frame->oldest == iter);
      IterationState* next = iter->next;
      if (next == nullptr && frame->deferred.empty()) {
        // The last iteration: its dead Exits are what the parent sees.
        frame->dead_next.clear();
        for (int id : frame->info->exits) {
          if (iter->pending[id - iter->base].load(std::memory_order_relaxed) & kExitRanDeadBit) {
            frame->dead_exits.push_back(id);
          }
        }
      }
      frame->oldest = next;
      if (next == nullptr) frame->newest = nullptr;
      --frame->outstanding_iterations;
      ResetIterationInputs(iter);
      frame->free_iterations.push_back(iter);
      if (!frame->deferred.empty()) {
        IterationState* started = StartIteration(frame, ready);
        for (FrameState::Value& value : frame->deferred) {
          ActivateCounted(plan_->items[value.id], started, std::span<Tensor>(&value.value, 1),
                          false, false, ready);
        }
        frame->deferred.clear();
        if (next == nullptr && started->outstanding.load(std::memory_order_relaxed) == 0) {
          also_done = started;
        }
      }
      if (next != nullptr) {
        if (next->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) also_done = next;
      } else if (frame->oldest == nullptr) {
        frame_done = true;
      }
    }
    if (also_done != nullptr) {
      iter = also_done;
      continue;
    }
    if (frame_done) DeleteFrame(frame, ready);
    return;
  }
}

void ExecutorState::DeleteFrame(FrameState* frame, ReadyList* ready) {
  FrameState* parent = frame->parent;
  IterationState* parent_iter = frame->parent_iter;
  for (int id : frame->dead_exits) {
    ActivateCounted(plan_->items[id], parent_iter, {}, /*dead=*/true, false, ready);
  }
  frame->dead_exits.clear();
  frame->invariants.clear();
  // The next invocation of the frame may have other invariants: kept values
  // go now (with the invariants, whose memory they would otherwise hold).
  for (IterationState* iter : frame->free_iterations) {
    for (int slot : frame->info->kept_slots) ResetTensor(iter->inputs[slot]);
  }
  {
    std::lock_guard<std::mutex> lock(parent->mu);
    std::vector<FrameState*>& children = parent_iter->children;
    children.erase(std::find(children.begin(), children.end(), frame));
  }
  {
    std::lock_guard<std::mutex> lock(frame_pool_mu_);
    free_frames_[frame->info_index].push_back(frame);
  }
  if (parent_iter != &root_iter_ &&
      parent_iter->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    IterationDone(parent_iter, ready);
  }
}

void ExecutorState::ClearInputs(const NodeItem& item, IterationState* iter) {
  Tensor* inputs = iter->inputs.get() + item.input_start;
  if (item.kept_inputs == 0) {
    for (int i = 0; i < item.num_inputs; ++i) ResetTensor(inputs[i]);
    return;
  }
  for (int i = 0; i < item.num_inputs; ++i) {
    if (i >= 32 || !((item.kept_inputs >> i) & 1)) ResetTensor(inputs[i]);
  }
}

namespace {
// Orders a max-heap of nodes by priority; among equals, the earlier node in
// the plan comes first.
struct LessUrgent {
  const std::vector<NodeItem>* items;
  template <typename Tagged>
  bool operator()(const Tagged& a, const Tagged& b) const {
    const int pa = (*items)[a.id].priority, pb = (*items)[b.id].priority;
    return pa != pb ? pa < pb : a.id > b.id;
  }
};
}  // namespace

void ExecutorState::ScheduleReady(const ReadyList& ready, ReadyList* inline_ready) {
  if (ready.empty()) return;
  const Executor::Runner* runner = args_.runner;
  if (runner == nullptr) {  // everything runs on this thread
    if (inline_ready == nullptr) {
      for (const TaggedNode& node : ready) Process(node);
    } else {
      for (const TaggedNode& node : ready) inline_ready->push_back(node);
    }
    return;
  }
  auto goes_to_pool = [&](const TaggedNode& node) {
    return inline_ready == nullptr || plan_->items[node.id].is_expensive;
  };
  int tasks = 0;
  for (const TaggedNode& node : ready) {
    if (goes_to_pool(node)) {
      ++tasks;
    } else {
      inline_ready->push_back(node);
    }
  }
  if (tasks == 0) return;  // the common case takes no lock
  {
    const LessUrgent less{&plan_->items};
    std::lock_guard<std::mutex> lock(queue_mu_);
    for (const TaggedNode& node : ready) {
      if (!goes_to_pool(node)) continue;
      expensive_queue_.push_back(node);
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
  ThreadPool* cores = plan_->device->intra_op_pool();
  for (int i = 0; i < tasks; ++i) {
    cores->ClaimCore();
    (*runner)([this] { Process(PopMostUrgent(), Claim::kClaimed); });  // may delete `this`
  }
}

TaggedNode ExecutorState::PopMostUrgent() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  DCHECK(!expensive_queue_.empty());
  std::pop_heap(expensive_queue_.begin(), expensive_queue_.end(), LessUrgent{&plan_->items});
  const TaggedNode node = expensive_queue_.back();
  expensive_queue_.pop_back();
  return node;
}

void ExecutorState::RecordError(const NodeItem& item, const TaggedNode& node,
                                const Status& status) {
  std::string where = StrCat("node ", item.kernel->def().Describe());
  if (node.iter != &root_iter_) {
    where = StrCat(where, " in frame '", node.iter->frame->info->name, "' iteration ",
                   node.iter->iter);
  }
  Status located(status.code(), StrCat(where, ": ", status.message()));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = located;
  }
  aborted_.store(true, std::memory_order_relaxed);
  // Wake blocked kernels of this step on every device.
  if (args_.cancellation) args_.cancellation->StartCancel();
}

void ExecutorState::SaveStats(const NodeItem& item, const TaggedNode& node, int64_t start,
                              int64_t bytes) {
  NodeExecStats stats;
  stats.node_name = item.kernel->name();
  stats.op = item.kernel->type_string();
  stats.device = plan_->device->name();
  stats.thread_id = CurrentThreadTraceId();
  stats.start_micros = start;
  stats.end_micros = NowMicros();
  stats.bytes_allocated = bytes;
  if (node.iter != &root_iter_) {
    stats.frame_name = node.iter->frame->info->name;
    stats.iteration = node.iter->iter;
  }
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

void SetExecutorAsyncStartHookForTest(std::function<void()>* hook) {
  async_start_hook.store(hook, std::memory_order_release);
}

}  // namespace weir
