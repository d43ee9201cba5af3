#include "weir/framework/resource_var.h"

#include <algorithm>
#include <cstring>

#include "weir/framework/op_kernel.h"

namespace weir {

std::string Var::DebugString() const {
  return StrCat("Var(", dtype_, " ", initialized_ ? tensor_.shape().DebugString() : "uninitialized", ")");
}

StatusOr<const ResourceHandle*> HandleFromInput(OpKernelContext* context, int index,
                                                const char* type_name) {
  const Tensor& t = context->input(index);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return errors::InvalidArgument("input ", index, " must be one resource handle, got ",
                                   t.dtype(), " ", t.shape());
  }
  const ResourceHandle* handle = t.data<ResourceHandle>();
  if (handle->type_name() != type_name) {
    return errors::InvalidArgument("handle to ", handle->container(), "/", handle->name(),
                                   " is a ", handle->type_name(), ", expected a ", type_name);
  }
  if (handle->device() != context->device()->name()) {
    return errors::InvalidArgument("handle to ", handle->container(), "/", handle->name(),
                                   " lives on ", handle->device(), " but the op runs on ",
                                   context->device()->name(),
                                   "; ops that use a resource must be placed with it");
  }
  return handle;
}

StatusOr<std::shared_ptr<Var>> LookupVar(OpKernelContext* context, int input_index) {
  WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle,
                        HandleFromInput(context, input_index, kVarTypeName));
  StatusOr<std::shared_ptr<Var>> var =
      context->resource_manager()->Lookup<Var>(handle->container(), handle->name());
  if (!var.ok()) {
    return errors::NotFound("variable '", handle->name(), "' (container '", handle->container(),
                            "') does not exist: it was never created in this session or was "
                            "destroyed or reset");
  }
  return var;
}

Status PrepareToUpdate(OpKernelContext* context, Var* var) {
  Tensor* current = var->tensor();
  if (current->RefCountIsOne()) return Status::OK();
  Tensor copy;
  WEIR_RETURN_IF_ERROR(context->allocate_temp(current->dtype(), current->shape(), &copy));
  if (current->dtype() == DT_STRING) {
    std::copy(current->data<std::string>(), current->data<std::string>() + current->NumElements(),
              copy.data<std::string>());
  } else if (current->TotalBytes() > 0) {
    std::memcpy(copy.raw_data(), current->raw_data(), current->TotalBytes());
  }
  var->set(std::move(copy));
  return Status::OK();
}

}  // namespace weir
