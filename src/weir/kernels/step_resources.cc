#include "weir/kernels/step_resources.h"

#include <atomic>

namespace weir {

StatusOr<ResourceMgr*> StepResources(OpKernelContext* context) {
  ResourceMgr* resources = context->step_resources();
  if (resources == nullptr) {
    return errors::FailedPrecondition(
        "no per-step resources: the executor running this step does not provide "
        "StepContext::step_resources, which stacks and TensorArrays live in");
  }
  return resources;
}

std::string UniqueStepResourceName(std::string_view base) {
  static std::atomic<int64_t> counter{0};
  return StrCat(base, "_", counter.fetch_add(1, std::memory_order_relaxed));
}

Status SetStepHandleOutput(OpKernelContext* context, int output, const ResourceMgr& resources,
                           const std::string& name, const char* type_name) {
  Tensor* out;
  WEIR_RETURN_IF_ERROR(context->allocate_output(output, TensorShape(), &out));
  out->scalar<ResourceHandle>() =
      ResourceHandle(context->device()->name(), resources.default_container(), name, type_name);
  return Status::OK();
}

}  // namespace weir
