// Executor: runs one partition (the nodes placed on one device) for a step.
//
// Built once per partition into an immutable plan: kernels instantiated,
// every node's inputs laid out in one flat array of slots, out-edges and
// initial pending counts precomputed. Each step allocates only a small state
// (pending counts and input slots) and runs nodes as their inputs arrive:
// cheap nodes inline on the thread that made them ready, expensive ones on
// the inter-op pool. A tensor is released as soon as its last consumer ran.
// The first error cancels the step and is what RunAsync reports.
//
// Loops (white paper 4.4): every invocation of a loop frame (Enter's
// frame_name) gets its own state and every iteration its own pending counts
// and input slots; at most parallel_iterations iterations of a frame are in
// flight, and a finished iteration's and frame's state is reused at once.
// Switch leaves one output unset (dead); Merge fires on its first live
// input; deadness flows through everything else (_Send/_Recv run dead, to
// pass it on). The executor moves the values of Identity, Switch, Merge,
// Enter, Exit, NextIteration and LoopCond itself, and hands on a Const's
// tensor (OpKernel::ConstantOutput): their kernels are created (so a
// missing one is an error) but not called. The plan: executor_plan.h.
//
// RunAsync may be called concurrently for different steps. The Graph and
// Device must outlive the Executor.
#pragma once

#include <functional>
#include <memory>

#include "weir/base/status.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/step_stats.h"
#include "weir/graph/graph.h"

namespace weir {

class CallFrame;
class CancellationManager;
class KernelRegistry;
class Rendezvous;

class Executor {
 public:
  // Schedules a closure on the inter-op pool.
  using Runner = std::function<void(std::function<void()>)>;
  using DoneCallback = std::function<void(const Status&)>;

  struct Args {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;
    CancellationManager* cancellation = nullptr;
    CallFrame* call_frame = nullptr;
    StepStatsCollector* stats = nullptr;  // non-null: record per-node stats
    const Runner* runner = nullptr;       // null: run everything inline
    std::string_view default_container = "localhost";
  };

  // Instantiates a kernel from `kernels` for every node of `graph` on
  // `device`. Errors name the node (no kernel for its dtype, bad attrs, a
  // cycle). The registry is an argument, not the global one, so that a worker
  // builds executors from whatever kernels it was linked or configured with.
  static StatusOr<std::unique_ptr<Executor>> Create(const Graph& graph, Device* device,
                                                    const KernelRegistry& kernels);

  virtual ~Executor() = default;
  // Runs one step; `done` is called exactly once, possibly before RunAsync
  // returns. Pointers in `args` must stay valid until then.
  virtual void RunAsync(const Args& args, DoneCallback done) = 0;
  // Runs one step and waits for it.
  Status Run(const Args& args);

  virtual int num_nodes() const = 0;
};

// Test only: `hook` (null: none) runs on the executor thread just before
// every asynchronous kernel is started, or skipped because the step was
// aborted. `*hook` must outlive its use.
void SetExecutorAsyncStartHookForTest(std::function<void()>* hook);

}  // namespace weir
