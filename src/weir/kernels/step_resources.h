// Resources that live for one step (stacks, TensorArrays). They are kept in
// the step's ResourceMgr (StepContext::step_resources), which the executor
// owns and frees when the step ends, in its default container, and reached
// through DT_RESOURCE handles that name them there.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "weir/framework/op_kernel.h"
#include "weir/framework/resource_mgr.h"
#include "weir/framework/resource_var.h"

namespace weir {

// The step's ResourceMgr. FailedPrecondition when the executor gives none.
StatusOr<ResourceMgr*> StepResources(OpKernelContext* context);

// `base` + "_" + a number unique in the process: each run of a creating op
// makes a new resource (an op in a loop body makes one per iteration).
std::string UniqueStepResourceName(std::string_view base);

// Sets output `output` to the handle of resource `name` of `type_name` in
// `resources`.
Status SetStepHandleOutput(OpKernelContext* context, int output, const ResourceMgr& resources,
                           const std::string& name, const char* type_name);

// Adds `resource` to the step's resources as `name` and sets output
// `output` to its handle.
template <typename T>
Status CreateStepResource(OpKernelContext* context, const char* type_name, const std::string& name,
                          std::shared_ptr<T> resource, int output) {
  WEIR_ASSIGN_OR_RETURN(ResourceMgr * resources, StepResources(context));
  WEIR_RETURN_IF_ERROR(
      resources->Create<T>(resources->default_container(), name, std::move(resource)));
  return SetStepHandleOutput(context, output, *resources, name, type_name);
}

// The resource behind the handle in input `input`, which must name a
// `type_name` of this step on this device. NotFound when it does not exist
// (a handle kept from another step).
template <typename T>
StatusOr<std::shared_ptr<T>> LookupStepResource(OpKernelContext* context, int input,
                                                const char* type_name) {
  WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle, HandleFromInput(context, input, type_name));
  WEIR_ASSIGN_OR_RETURN(ResourceMgr * resources, StepResources(context));
  StatusOr<std::shared_ptr<T>> found = resources->Lookup<T>(handle->container(), handle->name());
  if (!found.ok()) {
    return errors::NotFound(type_name, " '", handle->name(),
                            "' does not exist in this step: a handle lives for the step that "
                            "created it");
  }
  return found;
}

}  // namespace weir
