// Kernels of the state family (ops/state_ops.cc): resource variables.
// Each variable is locked while it is read or updated; updates are
// copy-on-write (see framework/resource_var.h).
#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <type_traits>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/resource_var.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

Status Uninitialized(const ResourceHandle& handle) {
  return errors::FailedPrecondition("variable '", handle.name(), "' (container '",
                                    handle.container(),
                                    "') is uninitialized: run its initializer first");
}

// The variable behind input 0, which must be initialized and of `dtype`.
// Locks it into `lock`.
Status LockInitializedVar(OpKernelContext* context, DType dtype, std::shared_ptr<Var>* var,
                          std::unique_lock<std::mutex>* lock) {
  WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle, HandleFromInput(context, 0, kVarTypeName));
  StatusOr<std::shared_ptr<Var>> found = LookupVar(context, 0);
  if (!found.ok()) {
    return errors::IsNotFound(found.status()) ? Uninitialized(*handle) : found.status();
  }
  *var = std::move(found).value();
  if ((*var)->dtype() != dtype) {
    return errors::InvalidArgument("variable '", handle->name(), "' holds ", (*var)->dtype(),
                                   " but the op expects ", dtype);
  }
  *lock = std::unique_lock<std::mutex>(*(*var)->mu());
  if (!(*var)->is_initialized()) return Uninitialized(*handle);
  return Status::OK();
}

class VarHandleOp final : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("container", &container_));
    context->SetStatus(context->GetAttr("shared_name", &shared_name_));
    context->SetStatus(context->GetAttr("dtype", &dtype_));
    context->SetStatus(context->GetAttr("shape", &shape_));
    if (shared_name_.empty()) shared_name_ = name();
  }
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* context) override {
    std::string container =
        container_.empty() ? std::string(context->default_container()) : container_;
    DType dtype = dtype_;
    PartialShape shape = shape_;
    StatusOr<std::shared_ptr<Var>> var = context->resource_manager()->LookupOrCreate<Var>(
        container, shared_name_,
        [dtype, shape]() -> StatusOr<std::shared_ptr<Var>> { return std::make_shared<Var>(dtype, shape); });
    OP_REQUIRES_OK(context, var.status());
    OP_REQUIRES(context, (*var)->dtype() == dtype_,
                errors::InvalidArgument("variable '", shared_name_, "' already exists in container '",
                                        container, "' with dtype ", (*var)->dtype(), ", not ", dtype_));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<ResourceHandle>() =
        ResourceHandle(context->device()->name(), container, shared_name_, kVarTypeName);
  }

 private:
  std::string container_;
  std::string shared_name_;
  DType dtype_ = DT_FLOAT;
  PartialShape shape_;
};

class ReadVariableOp final : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  bool IsExpensive() const override { return false; }
  void Compute(OpKernelContext* context) override {
    std::shared_ptr<Var> var;
    std::unique_lock<std::mutex> lock;
    OP_REQUIRES_OK(context, LockInitializedVar(context, dtype_, &var, &lock));
    context->set_output(0, *var->tensor());
  }

 private:
  DType dtype_ = DT_FLOAT;
};

class AssignVariableOp final : public OpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  bool IsExpensive() const override { return false; }
  void Compute(OpKernelContext* context) override {
    StatusOr<const ResourceHandle*> handle = HandleFromInput(context, 0, kVarTypeName);
    OP_REQUIRES_OK(context, handle.status());
    StatusOr<std::shared_ptr<Var>> var = LookupVar(context, 0);
    OP_REQUIRES_OK(context, var.status());
    const Tensor& value = context->input(1);
    OP_REQUIRES(context, (*var)->dtype() == dtype_,
                errors::InvalidArgument("variable '", (*handle)->name(), "' holds ",
                                        (*var)->dtype(), " but is assigned a ", dtype_));
    OP_REQUIRES(context, (*var)->declared_shape().IsCompatibleWith(value.shape()),
                errors::InvalidArgument("variable '", (*handle)->name(), "' has shape ",
                                        (*var)->declared_shape(), " but is assigned a value of shape ",
                                        value.shape()));
    // A fed numpy array's memory (borrowed) must not become the variable's.
    Tensor stored = value;
    if (value.IsBorrowed()) {
      StatusOr<Tensor> copy = value.DeepCopy(DefaultCpuAllocator());
      OP_REQUIRES_OK(context, copy.status());
      stored = std::move(copy).value();
    }
    std::lock_guard<std::mutex> lock(*(*var)->mu());
    (*var)->set(std::move(stored));
  }

 private:
  DType dtype_ = DT_FLOAT;
};

// AssignAdd / AssignSub: variable = variable (+|-) value, in place when the
// buffer is the variable's alone.
template <bool kSubtract>
class AssignUpdateVariableOp final : public OpKernel {
 public:
  explicit AssignUpdateVariableOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* context) override {
    std::shared_ptr<Var> var;
    std::unique_lock<std::mutex> lock;
    OP_REQUIRES_OK(context, LockInitializedVar(context, dtype_, &var, &lock));
    const Tensor& value = context->input(1);
    OP_REQUIRES(context, value.shape() == var->tensor()->shape(),
                errors::InvalidArgument(type_string(), ": variable has shape ",
                                        var->tensor()->shape(), " but the value has shape ",
                                        value.shape()));
    OP_REQUIRES_OK(context, PrepareToUpdate(context, var.get()));
    bool supported = DispatchNumericDType(dtype_, [&]<typename T>() {
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        T* dst = var->tensor()->data<T>();
        const T* src = value.data<T>();
        const int64_t n = value.NumElements();
        for (int64_t i = 0; i < n; ++i) dst[i] = kSubtract ? dst[i] - src[i] : dst[i] + src[i];
      }
    });
    OP_REQUIRES(context, supported && dtype_ != DT_BOOL && !IsComplexDType(dtype_),
                errors::InvalidArgument(type_string(), " does not support ", dtype_));
  }

 private:
  DType dtype_ = DT_FLOAT;
};

class VarIsInitializedOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }
  void Compute(OpKernelContext* context) override {
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    StatusOr<std::shared_ptr<Var>> var = LookupVar(context, 0);
    if (!var.ok()) {
      OP_REQUIRES(context, errors::IsNotFound(var.status()), var.status());
      out->scalar<bool>() = false;
      return;
    }
    std::lock_guard<std::mutex> lock(*(*var)->mu());
    out->scalar<bool>() = (*var)->is_initialized();
  }
};

// As TensorFlow's CountUpTo: the value before the increment, and no
// increment past `limit`.
class ResourceCountUpToOp final : public OpKernel {
 public:
  explicit ResourceCountUpToOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("limit", &limit_));
    context->SetStatus(context->GetAttr("T", &dtype_));
  }
  bool IsExpensive() const override { return false; }
  void Compute(OpKernelContext* context) override {
    std::shared_ptr<Var> var;
    std::unique_lock<std::mutex> lock;
    OP_REQUIRES_OK(context, LockInitializedVar(context, dtype_, &var, &lock));
    OP_REQUIRES(context, var->tensor()->shape().rank() == 0,
                errors::InvalidArgument("ResourceCountUpTo: the variable must be a scalar, has ",
                                        "shape ", var->tensor()->shape()));
    const int64_t before = dtype_ == DT_INT32 ? var->tensor()->data<int32_t>()[0]
                                              : var->tensor()->data<int64_t>()[0];
    OP_REQUIRES(context, before < limit_, errors::OutOfRange("Reached limit of ", limit_));
    OP_REQUIRES_OK(context, PrepareToUpdate(context, var.get()));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    if (dtype_ == DT_INT32) {
      out->scalar<int32_t>() = static_cast<int32_t>(before);
      var->tensor()->data<int32_t>()[0] = static_cast<int32_t>(before + 1);
    } else {
      out->scalar<int64_t>() = before;
      var->tensor()->data<int64_t>()[0] = before + 1;
    }
  }

 private:
  int64_t limit_ = 0;
  DType dtype_ = DT_INT64;
};

class DestroyResourceOp final : public OpKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<const ResourceHandle*> handle = HandleFromInput(context, 0, kVarTypeName);
    OP_REQUIRES_OK(context, handle.status());
    Status deleted =
        context->resource_manager()->Delete<Var>((*handle)->container(), (*handle)->name());
    if (!deleted.ok() && !(ignore_lookup_error_ && errors::IsNotFound(deleted))) {
      context->SetStatus(deleted);
    }
  }

 private:
  bool ignore_lookup_error_ = true;
};

// Reads indices of either width as int64, checking each against `limit`.
Status ReadIndices(const Tensor& indices, int64_t limit, const std::string& op,
                   std::vector<int64_t>* out) {
  out->resize(indices.NumElements());
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    int64_t index = indices.dtype() == DT_INT32 ? indices.data<int32_t>()[i]
                                                : indices.data<int64_t>()[i];
    if (index < 0 || index >= limit) {
      return errors::InvalidArgument(op, ": indices[", i, "] = ", index, " is not in [0, ",
                                     limit, ")");
    }
    (*out)[i] = index;
  }
  return Status::OK();
}

// Calls `fn.template operator()<T>()` for the element type of `dtype`, to
// copy or combine rows; false for a dtype with no element type here
// (resource, variant), which the caller reports.
template <typename Fn>
bool ForEachRow(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_STRING: fn.template operator()<std::string>(); return true;
    case DT_HALF: fn.template operator()<Eigen::half>(); return true;
    case DT_BFLOAT16: fn.template operator()<Eigen::bfloat16>(); return true;
    default: return DispatchNumericDType(dtype, fn);
  }
}

Status Unsupported(const std::string& op, DType dtype) {
  return errors::InvalidArgument(op, " does not support variables of ", dtype);
}

class ResourceGatherOp final : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
    context->SetStatus(context->GetAttr("batch_dims", &batch_dims_));
  }
  void Compute(OpKernelContext* context) override {
    OP_REQUIRES(context, batch_dims_ == 0,
                errors::Unimplemented("ResourceGather: batch_dims != 0 is not supported"));
    std::shared_ptr<Var> var;
    std::unique_lock<std::mutex> lock;
    OP_REQUIRES_OK(context, LockInitializedVar(context, dtype_, &var, &lock));
    const Tensor& params = *var->tensor();
    const Tensor& indices = context->input(1);
    OP_REQUIRES(context, params.dims() >= 1,
                errors::InvalidArgument("ResourceGather: the variable must have rank >= 1, has shape ",
                                        params.shape()));
    std::vector<int64_t> rows;
    OP_REQUIRES_OK(context, ReadIndices(indices, params.dim_size(0), "ResourceGather", &rows));
    std::vector<int64_t> out_dims(indices.shape().dim_sizes().begin(),
                                  indices.shape().dim_sizes().end());
    out_dims.insert(out_dims.end(), params.shape().dim_sizes().begin() + 1,
                    params.shape().dim_sizes().end());
    StatusOr<TensorShape> out_shape = CheckedShape(out_dims, "ResourceGather");
    OP_REQUIRES_OK(context, out_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    const int64_t row = params.dim_size(0) == 0 ? 0 : params.NumElements() / params.dim_size(0);
    const bool supported = ForEachRow(dtype_, [&]<typename T>() {
      const T* src = params.data<T>();
      T* dst = out->data<T>();
      for (size_t i = 0; i < rows.size(); ++i) {
        std::copy(src + rows[i] * row, src + (rows[i] + 1) * row, dst + i * row);
      }
    });
    OP_REQUIRES(context, supported, Unsupported(type_string(), dtype_));
  }

 private:
  DType dtype_ = DT_FLOAT;
  int64_t batch_dims_ = 0;
};

enum class ScatterMode { kAdd, kSub, kMul, kDiv, kMin, kMax, kUpdate };

// out = out (op) in for the arithmetic modes, on plain arithmetic types.
// Integer divisors were checked to be nonzero (CheckDivisors); the lowest
// signed value divided by -1 wraps to itself, where the hardware would trap.
template <ScatterMode kMode, typename T>
void Combine(T* out, const T* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    if constexpr (kMode == ScatterMode::kAdd) {
      out[k] = out[k] + in[k];
    } else if constexpr (kMode == ScatterMode::kSub) {
      out[k] = out[k] - in[k];
    } else if constexpr (kMode == ScatterMode::kMul) {
      out[k] = out[k] * in[k];
    } else if constexpr (kMode == ScatterMode::kDiv) {
      if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        if (in[k] == T(-1)) {
          out[k] = static_cast<T>(0u - static_cast<std::make_unsigned_t<T>>(out[k]));
          continue;
        }
      }
      out[k] = out[k] / in[k];
    } else if constexpr (kMode == ScatterMode::kMin) {
      out[k] = std::min(out[k], in[k]);
    } else {
      out[k] = std::max(out[k], in[k]);
    }
  }
}

// Overwrites or combines `n` elements of one row or slice; InvalidArgument
// for a dtype the mode does not apply to.
template <ScatterMode kMode, typename T>
Status ScatterRow(T* out, const T* in, int64_t n, DType dtype, const std::string& op) {
  if constexpr (kMode == ScatterMode::kUpdate) {
    std::copy(in, in + n, out);
    return Status::OK();
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    Combine<kMode>(out, in, n);
    return Status::OK();
  } else {
    return errors::InvalidArgument(op, " does not support ", dtype);
  }
}

// An integer division by zero would trap: refused before anything is written.
template <ScatterMode kMode>
Status CheckDivisors(const Tensor& updates, const std::string& op) {
  if constexpr (kMode != ScatterMode::kDiv) return Status::OK();
  Status status;
  DispatchNumericDType(updates.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* divisors = updates.data<T>();
      for (int64_t i = 0; i < updates.NumElements(); ++i) {
        if (divisors[i] == 0) {
          status = errors::InvalidArgument(op, ": integer division by zero (updates[", i, "])");
          return;
        }
      }
    }
  });
  return status;
}

template <ScatterMode kMode>
class ResourceScatterOp final : public OpKernel {
 public:
  explicit ResourceScatterOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* context) override {
    std::shared_ptr<Var> var;
    std::unique_lock<std::mutex> lock;
    OP_REQUIRES_OK(context, LockInitializedVar(context, dtype_, &var, &lock));
    const Tensor& indices = context->input(1);
    const Tensor& updates = context->input(2);
    const TensorShape params_shape = var->tensor()->shape();
    OP_REQUIRES(context, params_shape.rank() >= 1,
                errors::InvalidArgument(type_string(), ": the variable must have rank >= 1"));
    std::vector<int64_t> expected_dims(indices.shape().dim_sizes().begin(),
                                       indices.shape().dim_sizes().end());
    expected_dims.insert(expected_dims.end(), params_shape.dim_sizes().begin() + 1,
                         params_shape.dim_sizes().end());
    StatusOr<TensorShape> checked = CheckedShape(expected_dims, type_string());
    OP_REQUIRES_OK(context, checked.status());
    const TensorShape& expected = *checked;
    OP_REQUIRES(context, updates.shape() == expected,
                errors::InvalidArgument(type_string(), ": updates have shape ", updates.shape(),
                                        " but indices ", indices.shape(), " and variable ",
                                        params_shape, " need ", expected));
    std::vector<int64_t> rows;
    OP_REQUIRES_OK(context, ReadIndices(indices, params_shape.dim_size(0), type_string(), &rows));
    OP_REQUIRES_OK(context, CheckDivisors<kMode>(updates, type_string()));
    OP_REQUIRES_OK(context, PrepareToUpdate(context, var.get()));
    const int64_t row =
        params_shape.dim_size(0) == 0 ? 0 : params_shape.num_elements() / params_shape.dim_size(0);
    Status status = Unsupported(type_string(), dtype_);
    ForEachRow(dtype_, [&]<typename T>() {
      status = Status::OK();
      T* dst = var->tensor()->data<T>();
      const T* src = updates.data<T>();
      for (size_t i = 0; i < rows.size() && status.ok(); ++i) {
        status = ScatterRow<kMode>(dst + rows[i] * row, src + i * row, row, dtype_, type_string());
      }
    });
    OP_REQUIRES_OK(context, status);
  }

 private:
  DType dtype_ = DT_FLOAT;
};

// ResourceScatterNd*: indices [..., K] name slices var[i0, ..., iK-1] of
// the variable's trailing shape; updates are indices.shape[:-1] + that shape.
template <ScatterMode kMode>
class ResourceScatterNdOp final : public OpKernel {
 public:
  explicit ResourceScatterNdOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("T", &dtype_));
    std::string policy;
    context->SetStatus(context->GetAttr("bad_indices_policy", &policy));
    if (policy == "IGNORE") {
      ignore_bad_indices_ = true;
    } else if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
      context->SetStatus(errors::InvalidArgument(
          type_string(), ": bad_indices_policy must be '', 'DEFAULT', 'ERROR' or 'IGNORE', not '",
          policy, "'"));
    }
  }
  void Compute(OpKernelContext* context) override {
    std::shared_ptr<Var> var;
    std::unique_lock<std::mutex> lock;
    OP_REQUIRES_OK(context, LockInitializedVar(context, dtype_, &var, &lock));
    const Tensor& indices = context->input(1);
    const Tensor& updates = context->input(2);
    const TensorShape shape = var->tensor()->shape();
    OP_REQUIRES(context, indices.dims() >= 1,
                errors::InvalidArgument(type_string(), ": indices must have rank >= 1, have shape ",
                                        indices.shape()));
    const int64_t depth = indices.dim_size(indices.dims() - 1);
    OP_REQUIRES(
        context, depth <= shape.rank(),
        errors::InvalidArgument(type_string(), ": the last axis of indices ", indices.shape(),
                                " is longer than the rank of the "
                                "variable's shape ",
                                shape));
    std::vector<int64_t> expected_dims(indices.shape().dim_sizes().begin(),
                                       indices.shape().dim_sizes().end() - 1);
    expected_dims.insert(expected_dims.end(), shape.dim_sizes().begin() + depth,
                         shape.dim_sizes().end());
    StatusOr<TensorShape> expected = CheckedShape(expected_dims, type_string());
    OP_REQUIRES_OK(context, expected.status());
    OP_REQUIRES(context, updates.shape() == *expected,
                errors::InvalidArgument(type_string(), ": updates have shape ", updates.shape(),
                                        " but indices ", indices.shape(), " and variable ", shape,
                                        " need ", *expected));
    int64_t slice = 1;  // elements per slice: the product of the trailing dims
    for (int d = static_cast<int>(depth); d < shape.rank(); ++d) slice *= shape.dim_size(d);
    const int64_t count = depth == 0 ? 0 : indices.NumElements() / depth;
    // Each index tuple's offset, checked before anything is written.
    std::vector<int64_t> offsets;
    offsets.reserve(count);
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      bool bad = false;
      for (int64_t j = 0; j < depth; ++j) {
        const int64_t at = i * depth + j;
        const int64_t index =
            indices.dtype() == DT_INT32 ? indices.data<int32_t>()[at] : indices.data<int64_t>()[at];
        if (index < 0 || index >= shape.dim_size(j)) {
          OP_REQUIRES(context, ignore_bad_indices_,
                      errors::InvalidArgument(type_string(), ": index ", i, " of indices ",
                                              indices.shape(), " has ", index, " on axis ", j,
                                              ", not in [0, ", shape.dim_size(j), ")"));
          bad = true;
          break;
        }
        offset = offset * shape.dim_size(j) + index;
      }
      offsets.push_back(bad ? -1 : offset * slice);
    }
    if (depth == 0) {
      // indices [..., 0]: each of the indices.shape[:-1] entries names the whole variable.
      int64_t wholes = 1;
      for (int d = 0; d + 1 < indices.dims(); ++d) wholes *= indices.dim_size(d);
      offsets.assign(wholes, 0);
    }
    OP_REQUIRES_OK(context, CheckDivisors<kMode>(updates, type_string()));
    OP_REQUIRES_OK(context, PrepareToUpdate(context, var.get()));
    Status status = Unsupported(type_string(), dtype_);
    ForEachRow(dtype_, [&]<typename T>() {
      status = Status::OK();
      T* dst = var->tensor()->data<T>();
      const T* src = updates.data<T>();
      for (size_t i = 0; i < offsets.size() && status.ok(); ++i) {
        if (offsets[i] < 0) continue;
        status = ScatterRow<kMode>(dst + offsets[i], src + i * slice, slice, dtype_, type_string());
      }
    });
    OP_REQUIRES_OK(context, status);
  }

 private:
  DType dtype_ = DT_FLOAT;
  bool ignore_bad_indices_ = false;
};

}  // namespace

void RegisterStateKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("VarHandleOp"), MakeKernel<VarHandleOp>);
  registry->Register(KernelBuilder("ReadVariableOp"), MakeKernel<ReadVariableOp>);
  registry->Register(KernelBuilder("AssignVariableOp"), MakeKernel<AssignVariableOp>);
  registry->Register(KernelBuilder("AssignAddVariableOp"), MakeKernel<AssignUpdateVariableOp<false>>);
  registry->Register(KernelBuilder("AssignSubVariableOp"), MakeKernel<AssignUpdateVariableOp<true>>);
  registry->Register(KernelBuilder("VarIsInitializedOp"), MakeKernel<VarIsInitializedOp>);
  registry->Register(KernelBuilder("ResourceCountUpTo"), MakeKernel<ResourceCountUpToOp>);
  registry->Register(KernelBuilder("DestroyResourceOp"), MakeKernel<DestroyResourceOp>);
  registry->Register(KernelBuilder("ResourceGather"), MakeKernel<ResourceGatherOp>);
  registry->Register(KernelBuilder("ResourceScatterAdd"), MakeKernel<ResourceScatterOp<ScatterMode::kAdd>>);
  registry->Register(KernelBuilder("ResourceScatterSub"), MakeKernel<ResourceScatterOp<ScatterMode::kSub>>);
  registry->Register(KernelBuilder("ResourceScatterMul"),
                     MakeKernel<ResourceScatterOp<ScatterMode::kMul>>);
  registry->Register(KernelBuilder("ResourceScatterDiv"),
                     MakeKernel<ResourceScatterOp<ScatterMode::kDiv>>);
  registry->Register(KernelBuilder("ResourceScatterMin"),
                     MakeKernel<ResourceScatterOp<ScatterMode::kMin>>);
  registry->Register(KernelBuilder("ResourceScatterMax"),
                     MakeKernel<ResourceScatterOp<ScatterMode::kMax>>);
  registry->Register(KernelBuilder("ResourceScatterUpdate"), MakeKernel<ResourceScatterOp<ScatterMode::kUpdate>>);
  registry->Register(KernelBuilder("ResourceScatterNdUpdate"),
                     MakeKernel<ResourceScatterNdOp<ScatterMode::kUpdate>>);
  registry->Register(KernelBuilder("ResourceScatterNdAdd"),
                     MakeKernel<ResourceScatterNdOp<ScatterMode::kAdd>>);
  registry->Register(KernelBuilder("ResourceScatterNdSub"),
                     MakeKernel<ResourceScatterNdOp<ScatterMode::kSub>>);
  registry->Register(KernelBuilder("ResourceScatterNdMin"),
                     MakeKernel<ResourceScatterNdOp<ScatterMode::kMin>>);
  registry->Register(KernelBuilder("ResourceScatterNdMax"),
                     MakeKernel<ResourceScatterNdOp<ScatterMode::kMax>>);
}

}  // namespace weir
