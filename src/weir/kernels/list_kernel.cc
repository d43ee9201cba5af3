#include "weir/kernels/list_kernel.h"

#include <algorithm>
#include <cstring>

#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/kernels/all_kernels.h"

namespace weir {

ListKernel::ListKernel(OpKernelConstruction* context) : OpKernel(context) {
  if (context->op_def().FindAttr("element_dtype") != nullptr) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
}

StatusOr<const TensorList*> ListKernel::ReadList(OpKernelContext* c, int index) const {
  const Tensor& t = c->input(index);
  if (t.dtype() != DT_VARIANT || t.dims() != 0) {
    return Invalid("input ", index, " must be a scalar variant (a TensorList) but is a ", t.dtype(),
                   " tensor of shape ", t.shape());
  }
  const TensorList* list = t.scalar<Variant>().get<TensorList>();
  if (list == nullptr) {
    return Invalid("input ", index, " holds a ", t.scalar<Variant>().TypeName(),
                   " variant, not a TensorList");
  }
  return list;
}

namespace {

// element_dtype DT_INVALID: the op has no such attr, any list will do.
Status CheckDType(const TensorList& list, DType element_dtype, const std::string& where) {
  if (element_dtype == DT_INVALID || list.element_dtype == element_dtype) return Status::OK();
  return errors::InvalidArgument(where, "the list holds ", list.element_dtype,
                                 " elements but element_dtype is ", element_dtype);
}

}  // namespace

StatusOr<const TensorList*> ListKernel::ReadTypedList(OpKernelContext* c, int index) const {
  WEIR_ASSIGN_OR_RETURN(const TensorList* list, ReadList(c, index));
  WEIR_RETURN_IF_ERROR(CheckDType(*list, element_dtype_, Where()));
  return list;
}

Status ListKernel::TakeList(OpKernelContext* c, int index, Variant* holder,
                            TensorList** list) const {
  WEIR_RETURN_IF_ERROR(ReadList(c, index).status());
  Tensor in = std::move(*c->mutable_input(index));
  if (in.RefCountIsOne()) {
    *holder = std::move(in.scalar<Variant>());
  } else {
    *holder = in.scalar<Variant>();
  }
  *list = holder->GetMutable<TensorList>();  // copies unless unique
  return CheckDType(**list, element_dtype_, Where());
}

Status ListKernel::CheckFits(const TensorList& list, const Tensor& item,
                             std::string_view what) const {
  if (!list.element_shape.IsCompatibleWith(item.shape())) {
    return Invalid(what, " of shape ", item.shape(), " does not fit the list's element shape ",
                   list.element_shape);
  }
  return Status::OK();
}

Status ListKernel::CheckSize(int64_t size) const {
  if (size > kMaxListElements) {
    return errors::ResourceExhausted(Where(), "a TensorList of ", size,
                                     " elements is more than the limit of ", kMaxListElements);
  }
  return Status::OK();
}

StatusOr<TensorShape> ListKernel::UnsetShape(const TensorList& list, const PartialShape& requested,
                                             int64_t index) const {
  StatusOr<PartialShape> merged = list.element_shape.Merge(requested);
  if (!merged.ok()) {
    return Invalid("element_shape ", requested, " is incompatible with the list's ",
                   list.element_shape);
  }
  if (!merged->IsFullyDefined()) {
    return Invalid("element ", index, " was never set and its shape ", *merged,
                   " is not fully defined, so it cannot be read as zeros");
  }
  return merged->ToTensorShape();
}

StatusOr<TensorShape> ListKernel::CommonShape(const TensorList& list, const PartialShape& requested,
                                              const std::vector<int64_t>& indices) const {
  const Tensor* first = nullptr;
  for (int64_t i : indices) {
    const Tensor& t = list.tensors[i];
    if (!t.IsInitialized()) continue;
    if (first == nullptr) {
      first = &t;
    } else if (t.shape() != first->shape()) {
      return Invalid("elements must all have one shape to be stacked, but element ", i,
                     " has shape ", t.shape(), " and an earlier one ", first->shape());
    }
  }
  if (first != nullptr) {
    if (!requested.IsCompatibleWith(first->shape())) {
      return Invalid("element_shape ", requested, " is incompatible with the elements' shape ",
                     first->shape());
    }
    return first->shape();
  }
  StatusOr<PartialShape> merged = list.element_shape.Merge(requested);
  if (!merged.ok()) {
    return Invalid("element_shape ", requested, " is incompatible with the list's ",
                   list.element_shape);
  }
  if (!merged->IsFullyDefined()) {
    return Invalid("no element is set and the element shape ", *merged,
                   " is not fully defined, so the result's shape is unknown");
  }
  return merged->ToTensorShape();
}

StatusOr<Tensor> ListKernel::Zeros(OpKernelContext* c, DType dtype,
                                   const TensorShape& shape) const {
  Tensor z;
  WEIR_RETURN_IF_ERROR(c->allocate_temp(dtype, shape, &z));
  if (!IsNonPodDType(dtype) && z.TotalBytes() > 0) std::memset(z.raw_data(), 0, z.TotalBytes());
  return z;
}

StatusOr<int64_t> ListKernel::ScalarInt(OpKernelContext* c, int index,
                                        std::string_view what) const {
  const Tensor& t = c->input(index);
  if (t.dims() != 0) return Invalid(what, " must be a scalar, not shape ", t.shape());
  StatusOr<std::vector<int64_t>> v = IntTensorValues(t, what);
  if (!v.ok()) return v.status().WithContext(Where());
  return (*v)[0];
}

StatusOr<int64_t> ListKernel::ScalarInt(OpKernelContext* c, int index, std::string_view what,
                                        int64_t least, std::string_view minus_one_means) const {
  WEIR_ASSIGN_OR_RETURN(int64_t value, ScalarInt(c, index, what));
  if (value >= least) return value;
  if (least == -1) {
    return Invalid(what, " must be -1 (", minus_one_means, ") or >= 0, not ", value);
  }
  return Invalid(what, " must be >= ", least, ", not ", value);
}

StatusOr<PartialShape> ListKernel::ShapeInput(OpKernelContext* c, int index) const {
  StatusOr<PartialShape> s = PartialShapeFromTensor(c->input(index), "element_shape");
  if (!s.ok()) return s.status().WithContext(StrCat(type_string(), " '", name(), "'"));
  return s;
}

void ListKernel::OutputList(OpKernelContext* c, int index, Variant value) {
  Tensor* out;
  OP_REQUIRES_OK(c, c->allocate_output(index, TensorShape(), &out));
  out->scalar<Variant>() = std::move(value);
}

Status ListKernel::ScatterRows(const Tensor& tensor, const Tensor& indices_tensor, int64_t min_size,
                               TensorList* list) const {
  if (tensor.dims() < 1) {
    return Invalid("tensor must be at least a vector, not shape ", tensor.shape());
  }
  if (indices_tensor.dims() != 1) {
    return Invalid("indices must be a vector, not shape ", indices_tensor.shape());
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntTensorValues(indices_tensor, "indices"));
  if (static_cast<int64_t>(indices.size()) != tensor.dim_size(0)) {
    return Invalid("indices has ", indices.size(), " entries but tensor has ", tensor.dim_size(0),
                   " rows");
  }
  TensorShape row_shape = tensor.shape();
  row_shape.RemoveDim(0);
  if (!list->element_shape.IsCompatibleWith(row_shape)) {
    return Invalid("rows of shape ", row_shape, " do not fit the list's element shape ",
                   list->element_shape);
  }
  int64_t size = std::max<int64_t>(min_size, static_cast<int64_t>(list->tensors.size()));
  for (int64_t i : indices) {
    if (i < 0) return Invalid("index ", i, " is negative");
    size = std::max(size, i + 1);
  }
  WEIR_RETURN_IF_ERROR(CheckSize(size));
  list->tensors.resize(size);
  std::vector<Tensor> rows;
  AppendRows(tensor, &rows);
  for (size_t k = 0; k < indices.size(); ++k) list->tensors[indices[k]] = std::move(rows[k]);
  return Status::OK();
}

void ListWriteKernel::Compute(OpKernelContext* c) {
  Variant holder;
  TensorList* list;
  OP_REQUIRES_OK(c, TakeList(c, 0, &holder, &list));
  OP_REQUIRES_OK(c, Change(c, list));
  OutputList(c, 0, std::move(holder));
}

void AppendRows(const Tensor& tensor, std::vector<Tensor>* rows) {
  TensorShape row_shape = tensor.shape();
  row_shape.RemoveDim(0);
  for (int64_t i = 0; i < tensor.dim_size(0); ++i) {
    Tensor row;
    CHECK(row.CopyFrom(tensor.Slice(i, i + 1), row_shape));
    rows->push_back(std::move(row));
  }
}

void RegisterListKernels(KernelRegistry* registry) {
  RegisterListAccessKernels(registry);
  RegisterListRowsKernels(registry);
  RegisterListConcatSplitKernels(registry);
}

}  // namespace weir
