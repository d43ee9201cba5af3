#include "weir/kernels/kernel_test_util.h"

#include <memory>
#include <type_traits>

#include <Eigen/Core>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"
#include "weir/framework/op_kernel.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"
#include "weir/runtime/cpu_device.h"

namespace weir {

Device* TestCpuDevice() {
  static CpuDevice* const device = new CpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", 2);
  return device;
}

StatusOr<std::unique_ptr<OpKernel>> CreateTestKernel(const std::string& op, AttrMap attrs,
                                                     int num_inputs, const std::string& name) {
  return CreateTestKernelOn(TestCpuDevice(), op, std::move(attrs), num_inputs, name);
}

StatusOr<std::unique_ptr<OpKernel>> CreateTestKernelOn(Device* device, const std::string& op,
                                                       AttrMap attrs, int num_inputs,
                                                       const std::string& name) {
  RegisterAllOps();
  RegisterAllKernels();
  WEIR_ASSIGN_OR_RETURN(NodeDef node, MakeTestNode(op, std::move(attrs), num_inputs, name));
  WEIR_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUp(op));
  return KernelRegistry::Global()->CreateKernel(device, node, *op_def);
}

StatusOr<std::vector<Tensor>> RunKernel(const std::string& op, AttrMap attrs,
                                        std::vector<Tensor> inputs, const std::string& name) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                        CreateTestKernel(op, std::move(attrs), static_cast<int>(inputs.size()),
                                         name));
  return ComputeTestKernel(kernel.get(), TestCpuDevice(), std::move(inputs));
}

StatusOr<std::vector<Tensor>> ComputeTestKernel(OpKernel* kernel, Device* device,
                                                std::vector<Tensor> inputs) {
  const NodeDef& node = kernel->def();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != kernel->input_type(static_cast<int>(i))) {
      return errors::InvalidArgument("test input ", i, " of ", node.Describe(), " is ",
                                     inputs[i].dtype(), " but the node takes ",
                                     kernel->input_type(static_cast<int>(i)));
    }
  }

  // The shape function sees every input's shape and value. It runs first
  // because Compute may move from the inputs (reusing a buffer the caller
  // handed over with std::move).
  StatusOr<std::vector<PartialShape>> inferred = [&]() {
    std::vector<PartialShape> shapes;
    std::vector<const Tensor*> values;
    for (const Tensor& t : inputs) {
      shapes.emplace_back(t.shape());
      values.push_back(&t);
    }
    return InferShapes(node, std::move(shapes), std::move(values));
  }();

  StepContext step;
  std::vector<Tensor> outputs(kernel->num_outputs());
  OpKernelContext::Params params;
  params.device = device;
  params.kernel = kernel;
  params.step = &step;
  params.inputs = std::span<Tensor>(inputs);
  params.outputs = std::span<Tensor>(outputs);
  OpKernelContext context(&params);
  kernel->Compute(&context);
  WEIR_RETURN_IF_ERROR(context.status());

  for (int i = 0; i < kernel->num_outputs(); ++i) {
    if (!outputs[i].IsInitialized()) {
      return errors::Internal(node.Describe(), " left output ", i, " unset");
    }
    if (outputs[i].dtype() != kernel->output_type(i)) {
      return errors::Internal(node.Describe(), " output ", i, " is ", outputs[i].dtype(),
                              " but should be ", kernel->output_type(i));
    }
  }
  if (!inferred.ok()) {
    return errors::Internal("the kernel succeeded but the shape function failed: ",
                            inferred.status().ToString());
  }
  for (int i = 0; i < kernel->num_outputs(); ++i) {
    if (!(*inferred)[i].IsCompatibleWith(outputs[i].shape())) {
      return errors::Internal(node.Describe(), " output ", i, " has shape ",
                              outputs[i].shape(), " but the shape function says ",
                              (*inferred)[i]);
    }
  }
  return outputs;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> values(t.NumElements());
  auto fill = [&]<typename T>() {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      values[i] = static_cast<double>(static_cast<float>(t.data<T>()[i]));
    }
  };
  switch (t.dtype()) {
    case DT_HALF: fill.template operator()<Eigen::half>(); break;
    case DT_BFLOAT16: fill.template operator()<Eigen::bfloat16>(); break;
    default:
      CHECK(DispatchNumericDType(t.dtype(), [&]<typename T>() {
        if constexpr (std::is_arithmetic_v<T>) {
          for (int64_t i = 0; i < t.NumElements(); ++i) {
            values[i] = static_cast<double>(t.data<T>()[i]);
          }
        }
      })) << "ToDoubles of a " << t.dtype() << " tensor";
  }
  return values;
}

}  // namespace weir
