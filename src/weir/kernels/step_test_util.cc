#include "weir/kernels/step_test_util.h"

#include <gtest/gtest.h>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {

StatusOr<std::vector<Tensor>> TestStep::Run(const std::string& op, AttrMap attrs,
                                            std::vector<Tensor> inputs, const std::string& name) {
  WEIR_ASSIGN_OR_RETURN(
      std::unique_ptr<OpKernel> kernel,
      CreateTestKernel(op, std::move(attrs), static_cast<int>(inputs.size()), name));
  const NodeDef& node = kernel->def();
  std::vector<PartialShape> shapes;
  std::vector<const Tensor*> values;
  for (const Tensor& t : inputs) {
    shapes.emplace_back(t.shape());
    values.push_back(&t);
  }
  StatusOr<std::vector<PartialShape>> inferred = InferShapes(node, shapes, values);

  StepContext step;
  step.step_resources = &resources_;
  std::vector<Tensor> outputs(kernel->num_outputs());
  OpKernelContext::Params params;
  params.device = TestCpuDevice();
  params.kernel = kernel.get();
  params.step = &step;
  params.inputs = std::span<Tensor>(inputs);
  params.outputs = std::span<Tensor>(outputs);
  OpKernelContext context(&params);
  kernel->Compute(&context);
  WEIR_RETURN_IF_ERROR(context.status());
  if (!inferred.ok()) {
    return errors::Internal("the kernel succeeded but the shape function failed: ",
                            inferred.status().ToString());
  }
  for (int i = 0; i < kernel->num_outputs(); ++i) {
    if (!outputs[i].IsInitialized() || outputs[i].dtype() != kernel->output_type(i)) {
      return errors::Internal(node.Describe(), " output ", i, " is unset or of the wrong dtype");
    }
    if (!(*inferred)[i].IsCompatibleWith(outputs[i].shape())) {
      return errors::Internal(node.Describe(), " output ", i, " has shape ", outputs[i].shape(),
                              " but the shape function says ", (*inferred)[i]);
    }
  }
  return outputs;
}

Tensor TestStep::RunOrDie(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  StatusOr<std::vector<Tensor>> outputs = Run(op, std::move(attrs), std::move(inputs));
  if (!outputs.ok()) {
    ADD_FAILURE() << op << ": " << outputs.status();
    return Tensor();
  }
  return outputs->empty() ? Tensor() : (*outputs)[0];
}

}  // namespace weir
