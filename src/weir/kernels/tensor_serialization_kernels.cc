// SerializeTensor and ParseTensor: a tensor to and from the bytes of a
// TensorProto (framework/tensor_proto.h's encoding, TensorFlow's), so
// tensors can travel in strings (records, Example bytes features).
#include "proto/tensor.pb.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/tensor_proto.h"
#include "weir/kernels/parsing_kernels.h"

namespace weir {
namespace {

class SerializeTensorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    wire::TensorProto proto;
    OP_REQUIRES_OK(context, TensorToProto(context->input(0), &proto)
                                .WithContext(StrCat("SerializeTensor '", name(), "'")));
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &output));
    OP_REQUIRES(context, proto.SerializeToString(&output->scalar<std::string>()),
                errors::InvalidArgument("SerializeTensor: a ", context->input(0).dtype(), " ",
                                        context->input(0).shape(),
                                        " tensor is too large for a TensorProto (2 GiB)"));
  }
};

class ParseTensorOp : public OpKernel {
 public:
  explicit ParseTensorOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("out_type", &out_type_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& serialized = context->input(0);
    OP_REQUIRES(context, serialized.dims() == 0,
                errors::InvalidArgument("ParseTensor: serialized must be a scalar but has shape ",
                                        serialized.shape()));
    const std::string& bytes = serialized.scalar<std::string>();
    wire::TensorProto proto;
    OP_REQUIRES(context, proto.ParseFromString(bytes),
                errors::InvalidArgument("ParseTensor: serialized (", bytes.size(),
                                        " bytes) is not a TensorProto"));
    // Checked before decoding, so a mismatch costs no allocation.
    OP_REQUIRES(
        context, proto.dtype() == static_cast<int>(out_type_),
        errors::InvalidArgument("ParseTensor: the serialized tensor is ",
                                IsValidDType(proto.dtype())
                                    ? std::string(DTypeName(static_cast<DType>(proto.dtype())))
                                    : WireDTypeName(proto.dtype()),
                                " but out_type is ", out_type_));
    Tensor tensor;
    OP_REQUIRES_OK(context, TensorFromProto(proto, &tensor).WithContext("ParseTensor"));
    context->set_output(0, std::move(tensor));
  }

 private:
  DType out_type_ = DT_FLOAT;
};

}  // namespace

void RegisterTensorSerializationKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("SerializeTensor"), MakeKernel<SerializeTensorOp>);
  registry->Register(KernelBuilder("ParseTensor"), MakeKernel<ParseTensorOp>);
}

}  // namespace weir
