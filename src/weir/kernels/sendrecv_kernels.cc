// _Send and _Recv: hand a tensor across devices through the step's
// Rendezvous. _Recv is asynchronous: it never holds a thread while it waits,
// and the step's cancellation (an error elsewhere, Close, a timeout) ends the
// wait with an error.
#include "weir/framework/kernel_registry.h"
#include "weir/framework/rendezvous.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

// The parts of a rendezvous key fixed at construction; the frame and
// iteration come from each invocation.
class RendezvousKeyPrefix {
 public:
  Status Init(OpKernelConstruction* context) {
    WEIR_RETURN_IF_ERROR(context->GetAttr("send_device", &send_device_));
    WEIR_RETURN_IF_ERROR(context->GetAttr("recv_device", &recv_device_));
    WEIR_RETURN_IF_ERROR(context->GetAttr("tensor_name", &tensor_name_));
    int64_t incarnation = 0;
    WEIR_RETURN_IF_ERROR(context->GetAttr("send_device_incarnation", &incarnation));
    incarnation_ = static_cast<uint64_t>(incarnation);
    root_key_ = MakeKey(FrameAndIter());
    return Status::OK();
  }
  Rendezvous::ParsedKey MakeKey(const FrameAndIter& frame_iter) const {
    Rendezvous::ParsedKey key;
    key.src_device = send_device_;
    key.src_incarnation = incarnation_;
    key.dst_device = recv_device_;
    key.edge_name = tensor_name_;
    key.frame_iter = frame_iter;
    key.full_key = Rendezvous::CreateKey(send_device_, incarnation_, recv_device_, tensor_name_,
                                         frame_iter);
    return key;
  }
  // The key for this invocation; the common root-frame case is precomputed.
  const Rendezvous::ParsedKey& KeyFor(const FrameAndIter& frame_iter,
                                      Rendezvous::ParsedKey* storage) const {
    if (frame_iter.frame_id == 0 && frame_iter.iter_id == 0) return root_key_;
    *storage = MakeKey(frame_iter);
    return *storage;
  }

 private:
  std::string send_device_, recv_device_, tensor_name_;
  uint64_t incarnation_ = 0;
  Rendezvous::ParsedKey root_key_;
};

class SendKernel final : public OpKernel {
 public:
  explicit SendKernel(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(key_.Init(context));
  }
  void Compute(OpKernelContext* context) override {
    OP_REQUIRES(context, context->rendezvous() != nullptr,
                errors::Internal("_Send run without a rendezvous"));
    Rendezvous::ParsedKey storage;
    const Rendezvous::ParsedKey& key = key_.KeyFor(context->frame_iter(), &storage);
    OP_REQUIRES_OK(context,
                   context->rendezvous()->Send(key, context->input(0), context->is_input_dead()));
  }

 private:
  RendezvousKeyPrefix key_;
};

class RecvKernel final : public AsyncOpKernel {
 public:
  explicit RecvKernel(OpKernelConstruction* context) : AsyncOpKernel(context) {
    context->SetStatus(key_.Init(context));
  }
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    OP_REQUIRES_ASYNC(context, context->rendezvous() != nullptr,
                      errors::Internal("_Recv run without a rendezvous"), done);
    Rendezvous::ParsedKey storage;
    const Rendezvous::ParsedKey& key = key_.KeyFor(context->frame_iter(), &storage);
    context->rendezvous()->RecvAsync(
        key, context->cancellation_manager(),
        [context, done = std::move(done)](const Status& status, const Tensor& value,
                                          bool is_dead) {
          if (!status.ok()) {
            context->SetStatus(status);
          } else if (is_dead) {
            context->set_outputs_dead();
          } else {
            context->set_output(0, value);
          }
          done();
        });
  }

 private:
  RendezvousKeyPrefix key_;
};

}  // namespace

void RegisterSendRecvKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("_Send").Device(kDeviceCpu), MakeKernel<SendKernel>);
  registry->Register(KernelBuilder("_Recv").Device(kDeviceCpu), MakeKernel<RecvKernel>);
}

}  // namespace weir
