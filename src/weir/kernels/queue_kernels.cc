// Kernels of the queue family (ops/queue_ops.cc). The creation ops find or
// make the queue in the device's ResourceMgr and output its handle; the
// ops that may wait (enqueue, dequeue, a close behind pending enqueues) are
// asynchronous and hold no thread while they wait. Each callback holds the
// queue, so a reset container cannot free it under a waiting op.
#include <mutex>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/resource_handle.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/fifo_queue.h"
#include "weir/kernels/padding_fifo_queue.h"
#include "weir/kernels/priority_queue.h"
#include "weir/kernels/random_shuffle_queue.h"

namespace weir {
namespace {

template <typename Queue>
StatusOr<std::shared_ptr<QueueInterface>> AsInterface(StatusOr<std::shared_ptr<Queue>> queue);

// The queue creation ops. shared_name empty: a queue private to the node
// (per session, in the session's container, as TensorFlow's).
class QueueHandleOp : public OpKernel {
 public:
  explicit QueueHandleOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("container", &container_));
    context->SetStatus(context->GetAttr("shared_name", &shared_name_));
    context->SetStatus(ReadQueueOptions(context->node(), &options_));
    options_.name = shared_name_.empty() ? "_" + name() : shared_name_;
  }

  void Compute(OpKernelContext* context) override {
    const std::string container =
        container_.empty() ? std::string(context->default_container()) : container_;
    QueueInterface* made = nullptr;
    StatusOr<std::shared_ptr<QueueInterface>> queue =
        context->resource_manager()->LookupOrCreate<QueueInterface>(
            container, options_.name, [&]() -> StatusOr<std::shared_ptr<QueueInterface>> {
              WEIR_ASSIGN_OR_RETURN(std::shared_ptr<QueueInterface> created, MakeQueue());
              made = created.get();
              return created;
            });
    OP_REQUIRES_OK(context, queue.status());
    if (queue->get() != made) OP_REQUIRES_OK(context, CheckShared(*queue));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<ResourceHandle>() =
        ResourceHandle(context->device()->name(), container, options_.name, kQueueTypeName);
  }

 protected:
  virtual StatusOr<std::shared_ptr<QueueInterface>> MakeQueue() const = 0;
  QueueOptions options_;

 private:
  // A queue made elsewhere (another node, session or step) must match this
  // node's attrs; the last one checked is remembered, as nodes run per step.
  Status CheckShared(const std::shared_ptr<QueueInterface>& queue) const {
    {
      std::lock_guard<std::mutex> lock(checked_mu_);
      if (checked_.lock() == queue) return Status::OK();
    }
    WEIR_RETURN_IF_ERROR(queue->MatchesNodeDef(def()));
    std::lock_guard<std::mutex> lock(checked_mu_);
    checked_ = queue;
    return Status::OK();
  }

  std::string container_;
  std::string shared_name_;
  mutable std::mutex checked_mu_;
  mutable std::weak_ptr<QueueInterface> checked_;
};

class FIFOQueueOp final : public QueueHandleOp {
 public:
  using QueueHandleOp::QueueHandleOp;

 private:
  StatusOr<std::shared_ptr<QueueInterface>> MakeQueue() const override {
    return AsInterface(FIFOQueue::Create(options_));
  }
};

class PaddingFIFOQueueOp final : public QueueHandleOp {
 public:
  using QueueHandleOp::QueueHandleOp;

 private:
  StatusOr<std::shared_ptr<QueueInterface>> MakeQueue() const override {
    return AsInterface(PaddingFIFOQueue::Create(options_));
  }
};

class PriorityQueueOp final : public QueueHandleOp {
 public:
  using QueueHandleOp::QueueHandleOp;

 private:
  StatusOr<std::shared_ptr<QueueInterface>> MakeQueue() const override {
    return AsInterface(PriorityQueue::Create(options_));
  }
};

class RandomShuffleQueueOp final : public QueueHandleOp {
 public:
  explicit RandomShuffleQueueOp(OpKernelConstruction* context) : QueueHandleOp(context) {
    context->SetStatus(context->GetAttr("min_after_dequeue", &min_after_dequeue_));
    context->SetStatus(context->GetAttr("seed", &seed_));
    context->SetStatus(context->GetAttr("seed2", &seed2_));
  }

 private:
  StatusOr<std::shared_ptr<QueueInterface>> MakeQueue() const override {
    return AsInterface(RandomShuffleQueue::Create(options_, min_after_dequeue_, seed_, seed2_));
  }
  int64_t min_after_dequeue_ = 0, seed_ = 0, seed2_ = 0;
};

template <typename Queue>
StatusOr<std::shared_ptr<QueueInterface>> AsInterface(StatusOr<std::shared_ptr<Queue>> queue) {
  WEIR_RETURN_IF_ERROR(queue.status());
  return std::shared_ptr<QueueInterface>(std::move(queue).value());
}

// The op's dtypes (its components' inputs or outputs) must be the queue's.
Status CheckSignature(const OpKernel& kernel, const QueueInterface& queue,
                      const std::vector<DType>& types) {
  if (types == queue.component_dtypes()) return Status::OK();
  return errors::InvalidArgument(kernel.type_string(), " has components [", StrJoin(types, ","),
                                 "] but ", queue.DebugString(), " holds [",
                                 StrJoin(queue.component_dtypes(), ","), "]");
}

template <bool kMany>
class QueueEnqueueOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    StatusOr<std::shared_ptr<QueueInterface>> queue = LookupQueue(context, 0);
    OP_REQUIRES_OK_ASYNC(context, queue.status(), done);
    QueueInterface::Tuple tuple;
    tuple.reserve(context->num_inputs() - 1);
    for (int i = 1; i < context->num_inputs(); ++i) {
      const Tensor& value = context->input(i);
      if (!value.IsBorrowed()) {
        tuple.push_back(value);
        continue;
      }
      // A fed numpy array's memory must not outlive the step in the queue.
      StatusOr<Tensor> copy = value.DeepCopy(DefaultCpuAllocator());
      OP_REQUIRES_OK_ASYNC(context, copy.status(), done);
      tuple.push_back(std::move(copy).value());
    }
    std::shared_ptr<QueueInterface> held = std::move(queue).value();
    QueueInterface* q = held.get();
    auto callback = [held = std::move(held), done = std::move(done)] { done(); };
    if (kMany) {
      q->TryEnqueueMany(std::move(tuple), context, std::move(callback));
    } else {
      q->TryEnqueue(std::move(tuple), context, std::move(callback));
    }
  }
};

// QueueDequeueV2, QueueDequeueManyV2 (kMany) and QueueDequeueUpToV2 (kUpTo).
template <bool kMany, bool kUpTo>
class QueueDequeueOp final : public AsyncOpKernel {
 public:
  explicit QueueDequeueOp(OpKernelConstruction* context)
      : AsyncOpKernel(context), component_types_(context->output_types()) {}

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    StatusOr<std::shared_ptr<QueueInterface>> queue = LookupQueue(context, 0);
    OP_REQUIRES_OK_ASYNC(context, queue.status(), done);
    OP_REQUIRES_OK_ASYNC(context, CheckSignature(*this, **queue, component_types_), done);
    int64_t n = 1;
    if (kMany) {
      const Tensor& n_tensor = context->input(1);
      OP_REQUIRES_ASYNC(context, n_tensor.NumElements() == 1,
                        errors::InvalidArgument(type_string(), ": n must be a scalar, got shape ",
                                                n_tensor.shape()),
                        done);
      n = *n_tensor.data<int32_t>();
      OP_REQUIRES_ASYNC(context, n >= 0,
                        errors::InvalidArgument(type_string(), " requested ", n, " < 0 elements"),
                        done);
    }
    std::shared_ptr<QueueInterface> held = std::move(queue).value();
    QueueInterface* q = held.get();
    auto callback = [context, held = std::move(held),
                     done = std::move(done)](QueueInterface::Tuple tuple) {
      if (context->status().ok()) {
        for (size_t i = 0; i < tuple.size(); ++i) context->set_output(i, std::move(tuple[i]));
      }
      done();
    };
    if (kMany) {
      q->TryDequeueMany(n, context, kUpTo, std::move(callback));
    } else {
      q->TryDequeue(context, std::move(callback));
    }
  }

 private:
  const std::vector<DType> component_types_;
};

class QueueCloseOp final : public AsyncOpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* context) : AsyncOpKernel(context) {
    context->SetStatus(context->GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    StatusOr<std::shared_ptr<QueueInterface>> queue = LookupQueue(context, 0);
    OP_REQUIRES_OK_ASYNC(context, queue.status(), done);
    std::shared_ptr<QueueInterface> held = std::move(queue).value();
    QueueInterface* q = held.get();
    q->Close(context, cancel_pending_enqueues_,
             [held = std::move(held), done = std::move(done)] { done(); });
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

class QueueSizeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<QueueInterface>> queue = LookupQueue(context, 0);
    OP_REQUIRES_OK(context, queue.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>((*queue)->size());
  }
};

class QueueIsClosedOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<QueueInterface>> queue = LookupQueue(context, 0);
    OP_REQUIRES_OK(context, queue.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<bool>() = (*queue)->is_closed();
  }
};

}  // namespace

void RegisterQueueKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("FIFOQueueV2").Device(kDeviceCpu), MakeKernel<FIFOQueueOp>);
  registry->Register(KernelBuilder("PaddingFIFOQueueV2").Device(kDeviceCpu),
                     MakeKernel<PaddingFIFOQueueOp>);
  registry->Register(KernelBuilder("RandomShuffleQueueV2").Device(kDeviceCpu),
                     MakeKernel<RandomShuffleQueueOp>);
  registry->Register(KernelBuilder("PriorityQueueV2").Device(kDeviceCpu),
                     MakeKernel<PriorityQueueOp>);
  registry->Register(KernelBuilder("QueueEnqueueV2").Device(kDeviceCpu),
                     MakeKernel<QueueEnqueueOp<false>>);
  registry->Register(KernelBuilder("QueueEnqueueManyV2").Device(kDeviceCpu),
                     MakeKernel<QueueEnqueueOp<true>>);
  registry->Register(KernelBuilder("QueueDequeueV2").Device(kDeviceCpu),
                     MakeKernel<QueueDequeueOp<false, false>>);
  registry->Register(KernelBuilder("QueueDequeueManyV2").Device(kDeviceCpu),
                     MakeKernel<QueueDequeueOp<true, false>>);
  registry->Register(KernelBuilder("QueueDequeueUpToV2").Device(kDeviceCpu),
                     MakeKernel<QueueDequeueOp<true, true>>);
  registry->Register(KernelBuilder("QueueCloseV2").Device(kDeviceCpu), MakeKernel<QueueCloseOp>);
  registry->Register(KernelBuilder("QueueSizeV2").Device(kDeviceCpu), MakeKernel<QueueSizeOp>);
  registry->Register(KernelBuilder("QueueIsClosedV2").Device(kDeviceCpu),
                     MakeKernel<QueueIsClosedOp>);
}

}  // namespace weir
