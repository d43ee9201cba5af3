// Kernels of the io family: SaveV2 and RestoreV2 over the checkpoint format
// of framework/tensor_bundle.h. Both do file I/O, so both are expensive.
#include <memory>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/framework/tensor_slice.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

// Checks the inputs SaveV2 and RestoreV2 share: a scalar prefix and one name
// and one slice spec per tensor.
Status CheckCommonInputs(std::string_view op, const Tensor& prefix, const Tensor& names,
                         const Tensor& specs, int num_tensors) {
  if (prefix.dims() != 0) {
    return errors::InvalidArgument(op, ": prefix must be a scalar but has shape ",
                                   prefix.shape());
  }
  for (const auto& [input, what] : {std::pair{&names, "tensor_names"},
                                    std::pair{&specs, "shape_and_slices"}}) {
    if (input->dims() != 1 || input->dim_size(0) != num_tensors) {
      return errors::InvalidArgument(op, ": ", what, " must be a vector of ", num_tensors,
                                     " strings (one per tensor) but has shape ",
                                     input->shape());
    }
  }
  return Status::OK();
}

class SaveV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const int num_tensors = context->num_inputs() - 3;
    const Tensor& names = context->input(1);
    const Tensor& specs = context->input(2);
    OP_REQUIRES_OK(context, CheckCommonInputs("SaveV2", context->input(0), names, specs,
                                              num_tensors));
    const std::string& prefix = context->input(0).scalar<std::string>();
    BundleWriter writer(prefix);
    for (int i = 0; i < num_tensors; ++i) {
      const std::string& name = names.data<std::string>()[i];
      const std::string& spec = specs.data<std::string>()[i];
      if (spec.empty()) {
        OP_REQUIRES_OK(context, writer.Add(name, context->input(3 + i)).WithContext("SaveV2"));
        continue;
      }
      // A slice of a partitioned variable: the tensor is that slice.
      StatusOr<ShapeAndSlice> slice = ParseShapeAndSlice(spec);
      OP_REQUIRES_OK(context, slice.status().WithContext(StrCat("SaveV2: tensor '", name, "'")));
      OP_REQUIRES_OK(context,
                     writer.AddSlice(name, *slice, context->input(3 + i)).WithContext("SaveV2"));
    }
    OP_REQUIRES_OK(context, writer.Finish().WithContext("SaveV2"));
  }
  bool IsExpensive() const override { return true; }
};

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtypes", &dtypes_));
  }

  void Compute(OpKernelContext* context) override {
    const int num_tensors = context->num_outputs();
    const Tensor& names = context->input(1);
    const Tensor& specs = context->input(2);
    OP_REQUIRES_OK(context, CheckCommonInputs("RestoreV2", context->input(0), names, specs,
                                              num_tensors));
    const std::string& prefix = context->input(0).scalar<std::string>();
    StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
    OP_REQUIRES_OK(context, reader.status().WithContext("RestoreV2"));
    for (int i = 0; i < num_tensors; ++i) {
      const std::string& name = names.data<std::string>()[i];
      const std::string& spec = specs.data<std::string>()[i];
      const BundleTensorInfo* info = (*reader)->FindTensor(name);
      OP_REQUIRES(context, info != nullptr,
                  errors::NotFound("RestoreV2: tensor '", name, "' is not in checkpoint '",
                                   prefix, "'"));
      // DT_INVALID (a dtype Weir lacks) is left to Lookup, which names it.
      OP_REQUIRES(context, info->dtype == DT_INVALID || info->dtype == dtypes_[i],
                  errors::InvalidArgument("RestoreV2: tensor '", name, "' of checkpoint '",
                                          prefix, "' is ", info->dtype, " ", info->shape,
                                          " but dtypes[", i, "] expects ", dtypes_[i]));
      ShapeAndSlice slice;
      if (!spec.empty()) {
        StatusOr<ShapeAndSlice> parsed = ParseShapeAndSlice(spec);
        OP_REQUIRES_OK(context, parsed.status().WithContext(
                                    StrCat("RestoreV2: tensor '", name, "'")));
        slice = std::move(parsed).value();
        OP_REQUIRES(context, slice.full_shape == info->shape,
                    errors::InvalidArgument("RestoreV2: tensor '", name, "' of checkpoint '",
                                            prefix, "' has shape ", info->shape,
                                            " but its shape_and_slices '", spec,
                                            "' says ", slice.full_shape));
      }
      // A slice reads only the saved pieces that overlap it.
      StatusOr<Tensor> tensor =
          spec.empty() ? (*reader)->Lookup(name) : (*reader)->LookupSlice(name, slice);
      OP_REQUIRES_OK(context, tensor.status().WithContext("RestoreV2"));
      context->set_output(i, std::move(tensor).value());
    }
  }
  bool IsExpensive() const override { return true; }

 private:
  std::vector<DType> dtypes_;
};

}  // namespace

void RegisterIoKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("SaveV2"), MakeKernel<SaveV2Op>);
  registry->Register(KernelBuilder("RestoreV2"), MakeKernel<RestoreV2Op>);
}

}  // namespace weir
