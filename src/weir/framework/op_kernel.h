// OpKernel: the implementation of one op on one device type.
//
// A kernel is constructed once per node when a partition is compiled (attrs
// are read and checked there) and then Compute is called for every step,
// possibly concurrently from several steps: Compute must not mutate the
// kernel. Asynchronous kernels (Recv, blocking queue ops) derive from
// AsyncOpKernel and call `done` when finished, never holding a thread while
// they wait.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/device.h"
#include "weir/framework/node_def.h"
#include "weir/framework/tensor.h"

namespace weir {

class AsyncOpKernel;
class CallFrame;
class CancellationManager;
class OpKernelContext;
class Rendezvous;
class ResourceMgr;
struct OpDef;

// The identity of one iteration of one loop frame; the root frame is {0, 0}.
struct FrameAndIter {
  uint64_t frame_id = 0;
  int64_t iter_id = 0;
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(Device* device, const NodeDef* node, const OpDef* op,
                       std::vector<DType> input_types, std::vector<DType> output_types)
      : device_(device), node_(node), op_(op), input_types_(std::move(input_types)),
        output_types_(std::move(output_types)) {}

  Device* device() const { return device_; }
  const NodeDef& node() const { return *node_; }
  const OpDef& op_def() const { return *op_; }
  const std::vector<DType>& input_types() const { return input_types_; }
  const std::vector<DType>& output_types() const { return output_types_; }

  template <typename T>
  Status GetAttr(const std::string& name, T* value) const {
    Status status = ::weir::GetAttr(node_->attrs, name, value);
    // Describe() formats a string: only for errors (it ran per kernel built).
    if (!status.ok()) status = status.WithContext(node_->Describe());
    return status;
  }

  // Records a construction failure; kernel creation then fails with it.
  void SetStatus(const Status& status) { status_.Update(status); }
  const Status& status() const { return status_; }

 private:
  Device* device_;
  const NodeDef* node_;
  const OpDef* op_;
  std::vector<DType> input_types_;
  std::vector<DType> output_types_;
  Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* context);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(OpKernelContext* context) = 0;
  virtual AsyncOpKernel* AsAsync() { return nullptr; }

  // Cheap kernels run inline on the executor thread that made them ready;
  // expensive ones (GEMM, convolution) may be handed to the inter-op pool so
  // independent branches overlap. Most kernels parallelize inside through
  // the intra-op pool, so the default is cheap.
  virtual bool IsExpensive() const { return false; }

  // Non-null for a kernel whose only output is always this tensor (Const),
  // with no other effect: the executor then hands it on itself instead of
  // calling Compute. The tensor lives as long as the kernel.
  virtual const Tensor* ConstantOutput() const { return nullptr; }

  const NodeDef& def() const { return def_; }
  const std::string& name() const { return def_.name; }
  const std::string& type_string() const { return def_.op; }
  const std::string& requested_device() const { return def_.device; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DType input_type(int i) const { return input_types_[i]; }
  DType output_type(int i) const { return output_types_[i]; }
  const std::vector<DType>& output_types() const { return output_types_; }

 private:
  const NodeDef def_;
  const std::vector<DType> input_types_;
  const std::vector<DType> output_types_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;

  // Must eventually call `done` exactly once, on any thread; the context
  // stays valid until then.
  virtual void ComputeAsync(OpKernelContext* context, DoneCallback done) = 0;

  AsyncOpKernel* AsAsync() final { return this; }
  void Compute(OpKernelContext* context) final;
};

// What every kernel invocation in one step shares.
struct StepContext {
  int64_t step_id = 0;
  Rendezvous* rendezvous = nullptr;           // for _Send/_Recv
  CancellationManager* cancellation = nullptr;
  CallFrame* call_frame = nullptr;            // for _Arg/_Retval
  // Where resources with an empty container attr live: private to the
  // session that runs the step (named containers are shared).
  std::string_view default_container = "localhost";
  // Resources that live for this step only (stacks, TensorArrays), owned by
  // the step's executor and freed when the step ends.
  ResourceMgr* step_resources = nullptr;
};

class OpKernelContext {
 public:
  struct Params {
    Device* device = nullptr;
    const OpKernel* kernel = nullptr;
    const StepContext* step = nullptr;
    FrameAndIter frame_iter;
    bool is_input_dead = false;  // some input is dead (untaken branch)
    // The node's inputs, owned by the executor; a kernel may move from them
    // (forward_input) since each is consumed exactly once.
    std::span<Tensor> inputs;
    // One slot per output, owned by the executor.
    std::span<Tensor> outputs;
    bool track_allocations = false;
  };

  explicit OpKernelContext(Params* params) : params_(params) {}

  const OpKernel& op_kernel() const { return *params_->kernel; }
  Device* device() const { return params_->device; }
  Allocator* allocator() const { return params_->device->allocator(); }
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const {
    return *params_->device->eigen_cpu_device();
  }
  ResourceMgr* resource_manager() const { return params_->device->resource_manager(); }
  int64_t step_id() const { return params_->step->step_id; }
  Rendezvous* rendezvous() const { return params_->step->rendezvous; }
  CancellationManager* cancellation_manager() const { return params_->step->cancellation; }
  CallFrame* call_frame() const { return params_->step->call_frame; }
  std::string_view default_container() const { return params_->step->default_container; }
  // Null when the executor keeps no per-step resources.
  ResourceMgr* step_resources() const { return params_->step->step_resources; }
  const FrameAndIter& frame_iter() const { return params_->frame_iter; }
  bool is_input_dead() const { return params_->is_input_dead; }

  int num_inputs() const { return static_cast<int>(params_->inputs.size()); }
  int num_outputs() const { return static_cast<int>(params_->outputs.size()); }
  const Tensor& input(int index) const { return params_->inputs[index]; }
  DType input_dtype(int index) const { return params_->kernel->input_type(index); }
  DType expected_output_dtype(int index) const { return params_->kernel->output_type(index); }

  // Allocates output `index` on the device's allocator; a ResourceExhausted
  // status (naming the node) also becomes the kernel's status.
  Status allocate_output(int index, const TensorShape& shape, Tensor** output);
  // Allocates a scratch tensor that is not an output.
  Status allocate_temp(DType dtype, const TensorShape& shape, Tensor* out);
  // Sets output `index` to share `value`'s buffer.
  void set_output(int index, Tensor value);
  // Returns input `index` for reuse as output `output_index` when nothing
  // else holds its buffer and dtype and shape fit; null otherwise.
  Tensor* forward_input_to_output(int input_index, int output_index, const TensorShape& shape);
  // Input `index` for the kernel to move from (each input is consumed once):
  // a variant kernel takes its input's value so that it may change the value
  // in place when nothing else holds it.
  Tensor* mutable_input(int index) { return &params_->inputs[index]; }
  Tensor* mutable_output(int index) { return &params_->outputs[index]; }

  void SetStatus(const Status& status);
  const Status& status() const { return status_; }

  // Marks every output dead (a _Recv that received a dead value); the
  // executor then propagates deadness instead of values.
  void set_outputs_dead() { outputs_dead_ = true; }
  bool outputs_dead() const { return outputs_dead_; }

  // Bytes this invocation allocated for outputs and temps (for step stats).
  int64_t bytes_allocated() const { return bytes_allocated_; }

 private:
  Params* params_;
  Status status_;
  int64_t bytes_allocated_ = 0;
  bool outputs_dead_ = false;
};

// Kernel-side error plumbing: on failure, set the context's status (with the
// node named) and return from Compute.
#define OP_REQUIRES(ctx, condition, status) \
  do {                                      \
    if (!(condition)) {                     \
      (ctx)->SetStatus(status);             \
      return;                               \
    }                                       \
  } while (0)

#define OP_REQUIRES_OK(ctx, expr)         \
  do {                                    \
    ::weir::Status _weir_op_status = (expr); \
    if (!_weir_op_status.ok()) {          \
      (ctx)->SetStatus(_weir_op_status);  \
      return;                             \
    }                                     \
  } while (0)

#define OP_REQUIRES_ASYNC(ctx, condition, status, done) \
  do {                                                  \
    if (!(condition)) {                                 \
      (ctx)->SetStatus(status);                         \
      (done)();                                         \
      return;                                           \
    }                                                   \
  } while (0)

#define OP_REQUIRES_OK_ASYNC(ctx, expr, done) \
  do {                                        \
    ::weir::Status _weir_op_status = (expr);  \
    if (!_weir_op_status.ok()) {              \
      (ctx)->SetStatus(_weir_op_status);      \
      (done)();                               \
      return;                                 \
    }                                         \
  } while (0)

}  // namespace weir
