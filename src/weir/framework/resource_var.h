// Var: the state behind a resource variable. A tensor with a lock, living in
// a device's ResourceMgr and reached through a DT_RESOURCE handle.
//
// Updates are copy-on-write: a reader gets the variable's tensor (sharing
// its buffer), and an update that finds the buffer shared writes a fresh
// copy, so a tensor a reader holds never changes under it.
#pragma once

#include <mutex>
#include <string>

#include "weir/framework/resource_mgr.h"
#include "weir/framework/tensor.h"

namespace weir {

class OpKernelContext;

class Var final : public ResourceBase {
 public:
  Var(DType dtype, PartialShape shape) : dtype_(dtype), shape_(std::move(shape)) {}

  DType dtype() const { return dtype_; }
  // The declared shape (VarHandleOp's `shape` attr); values must fit it.
  const PartialShape& declared_shape() const { return shape_; }

  // REQUIRES: mu() held for the accessors below.
  std::mutex* mu() { return &mu_; }
  bool is_initialized() const { return initialized_; }
  Tensor* tensor() { return &tensor_; }
  void set(Tensor value) {
    tensor_ = std::move(value);
    initialized_ = true;
  }

  std::string DebugString() const override;

 private:
  const DType dtype_;
  const PartialShape shape_;
  std::mutex mu_;
  Tensor tensor_;
  bool initialized_ = false;
};

// The type name a variable's handle carries.
inline constexpr char kVarTypeName[] = "Var";

// The handle in input `index` of the kernel, checked to be a scalar
// resource handle of `type_name` for this device.
StatusOr<const ResourceHandle*> HandleFromInput(OpKernelContext* context, int index,
                                                const char* type_name);

// Looks up the variable a handle names. NotFound (naming the variable and
// container) when it does not exist, InvalidArgument when the handle is for
// another device or type.
StatusOr<std::shared_ptr<Var>> LookupVar(OpKernelContext* context, int input_index);

// Makes the variable's buffer exclusively its own before an in-place update
// (copy-on-write): a reader's tensor that shares it keeps the old values.
// REQUIRES: the variable's lock held and the variable initialized.
Status PrepareToUpdate(OpKernelContext* context, Var* var);

}  // namespace weir
