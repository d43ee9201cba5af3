// The TensorList kernels (kernels/tensor_list.h): TensorFlow 2's TensorArray
// and the forward values a v2 while loop's gradient saves. A kernel that
// changes a list takes its input (OpKernelContext::mutable_input) and
// changes it in place only when neither the input tensor nor its value is
// shared; otherwise it changes a copy whose elements share their buffers.
#include <algorithm>
#include <cstring>
#include <limits>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/tensor_list.h"

namespace weir {
namespace {

// A list holds a Tensor object per element; a reserve or scatter past this
// is refused before memory is asked for (an int32 from the graph could ask
// for 2^31 of them).
constexpr int64_t kMaxListElements = int64_t{1} << 26;

class ListKernel : public OpKernel {
 public:
  explicit ListKernel(OpKernelConstruction* context) : OpKernel(context) {}

 protected:
  // "TensorListGetItem 'node': " for error messages.
  std::string Where() const { return StrCat(type_string(), " '", name(), "': "); }

  template <typename... Args>
  Status Invalid(const Args&... args) const {
    return errors::InvalidArgument(Where(), args...);
  }

  // Input `index`, a scalar variant holding a TensorList.
  StatusOr<const TensorList*> ReadList(OpKernelContext* c, int index) const {
    const Tensor& t = c->input(index);
    if (t.dtype() != DT_VARIANT || t.dims() != 0) {
      return Invalid("input ", index, " must be a scalar variant (a TensorList) but is a ",
                     t.dtype(), " tensor of shape ", t.shape());
    }
    const TensorList* list = t.scalar<Variant>().get<TensorList>();
    if (list == nullptr) {
      return Invalid("input ", index, " holds a ", t.scalar<Variant>().TypeName(),
                     " variant, not a TensorList");
    }
    return list;
  }

  // Takes input `index` to change its list: `*holder` owns a list no other
  // tensor shares, `*list` points into it.
  Status TakeList(OpKernelContext* c, int index, Variant* holder, TensorList** list) const {
    WEIR_RETURN_IF_ERROR(ReadList(c, index).status());
    Tensor in = std::move(*c->mutable_input(index));
    if (in.RefCountIsOne()) {
      *holder = std::move(in.scalar<Variant>());
    } else {
      *holder = in.scalar<Variant>();
    }
    *list = holder->GetMutable<TensorList>();  // copies unless unique
    return Status::OK();
  }

  Status CheckDType(const TensorList& list, DType element_dtype) const {
    if (list.element_dtype != element_dtype) {
      return Invalid("the list holds ", list.element_dtype, " elements but element_dtype is ",
                     element_dtype);
    }
    return Status::OK();
  }

  Status CheckFits(const TensorList& list, const Tensor& item, std::string_view what) const {
    if (!list.element_shape.IsCompatibleWith(item.shape())) {
      return Invalid(what, " of shape ", item.shape(), " does not fit the list's element shape ",
                     list.element_shape);
    }
    return Status::OK();
  }

  Status CheckSize(int64_t size) const {
    if (size > kMaxListElements) {
      return errors::ResourceExhausted(Where(), "a TensorList of ", size,
                                       " elements is more than the limit of ", kMaxListElements);
    }
    return Status::OK();
  }

  // The shape an unset element reads as: the list's element shape merged
  // with `requested`; it must be fully defined.
  StatusOr<TensorShape> UnsetShape(const TensorList& list, const PartialShape& requested,
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

  StatusOr<Tensor> Zeros(OpKernelContext* c, DType dtype, const TensorShape& shape) const {
    Tensor z;
    WEIR_RETURN_IF_ERROR(c->allocate_temp(dtype, shape, &z));
    if (!IsNonPodDType(dtype) && z.TotalBytes() > 0) std::memset(z.raw_data(), 0, z.TotalBytes());
    return z;
  }

  StatusOr<int64_t> ScalarInt(OpKernelContext* c, int index, std::string_view what) const {
    const Tensor& t = c->input(index);
    if (t.dims() != 0) return Invalid(what, " must be a scalar, not shape ", t.shape());
    StatusOr<std::vector<int64_t>> v = IntTensorValues(t, what);
    if (!v.ok()) return v.status().WithContext(Where());
    return (*v)[0];
  }

  StatusOr<PartialShape> ShapeInput(OpKernelContext* c, int index) const {
    StatusOr<PartialShape> s = PartialShapeFromTensor(c->input(index), "element_shape");
    if (!s.ok()) return s.status().WithContext(StrCat(type_string(), " '", name(), "'"));
    return s;
  }

  static void OutputList(OpKernelContext* c, int index, Variant value) {
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(index, TensorShape(), &out));
    out->scalar<Variant>() = std::move(value);
  }

  // Stacks `elements` (set ones, or null for zeros) of `shape` into output
  // `index`, [n] + shape.
  Status StackInto(OpKernelContext* c, int index, DType dtype, const TensorShape& shape,
                   const std::vector<const Tensor*>& elements) const {
    TensorShape out_shape = shape;
    WEIR_RETURN_IF_ERROR(out_shape.InsertDimWithStatus(0, static_cast<int64_t>(elements.size()))
                             .WithContext(Where()));
    Tensor* out;
    WEIR_RETURN_IF_ERROR(c->allocate_output(index, out_shape, &out));
    const int64_t n = shape.num_elements();
    DispatchByElementSize(dtype, [&]<typename T>() {
      T* dst = ElementsAs<T>(*out);
      for (size_t i = 0; i < elements.size(); ++i) {
        if (elements[i] != nullptr) {
          CopyElements(ElementsAs<T>(*elements[i]), n, dst + i * n);
        } else if constexpr (std::is_trivially_copyable_v<T>) {
          if (n > 0) std::memset(dst + i * n, 0, n * sizeof(T));
        } else {
          std::fill(dst + i * n, dst + (i + 1) * n, T());
        }
      }
    });
    return Status::OK();
  }

  // The shape every element of `list` (at `indices`) has: from the set
  // ones, which must agree, else the list's shape merged with `requested`.
  StatusOr<TensorShape> CommonShape(const TensorList& list, const PartialShape& requested,
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
};

class EmptyTensorListOp : public ListKernel {
 public:
  explicit EmptyTensorListOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 0);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<int64_t> max = ScalarInt(c, 1, "max_num_elements");
    OP_REQUIRES_OK(c, max.status());
    OP_REQUIRES(c, *max >= -1,
                Invalid("max_num_elements must be -1 (no limit) or >= 0, not ", *max));
    auto list = std::make_shared<TensorList>(element_dtype_, *std::move(shape));
    list->max_num_elements = *max;
    OutputList(c, 0, Variant(std::move(list)));
  }

 private:
  DType element_dtype_;
};

class TensorListReserveOp : public ListKernel {
 public:
  explicit TensorListReserveOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 0);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<int64_t> n = ScalarInt(c, 1, "num_elements");
    OP_REQUIRES_OK(c, n.status());
    OP_REQUIRES(c, *n >= 0, Invalid("num_elements must be >= 0, not ", *n));
    OP_REQUIRES_OK(c, CheckSize(*n));
    auto list = std::make_shared<TensorList>(element_dtype_, *std::move(shape));
    list->tensors.resize(*n);
    OutputList(c, 0, Variant(std::move(list)));
  }

 private:
  DType element_dtype_;
};

class TensorListPushBackOp : public ListKernel {
 public:
  explicit TensorListPushBackOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    Variant holder;
    TensorList* list;
    OP_REQUIRES_OK(c, TakeList(c, 0, &holder, &list));
    const Tensor& item = c->input(1);
    OP_REQUIRES_OK(c, CheckDType(*list, element_dtype_));
    OP_REQUIRES_OK(c, CheckFits(*list, item, "tensor"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(
        c, list->max_num_elements < 0 || size < list->max_num_elements,
        Invalid("the list is full: it holds its max_num_elements (", list->max_num_elements, ")"));
    OP_REQUIRES_OK(c, CheckSize(size + 1));
    list->tensors.push_back(item);
    OutputList(c, 0, std::move(holder));
  }

 private:
  DType element_dtype_;
};

class TensorListPopBackOp : public ListKernel {
 public:
  explicit TensorListPopBackOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 1);
    OP_REQUIRES_OK(c, shape.status());
    Variant holder;
    TensorList* list;
    OP_REQUIRES_OK(c, TakeList(c, 0, &holder, &list));
    OP_REQUIRES_OK(c, CheckDType(*list, element_dtype_));
    OP_REQUIRES(c, !list->tensors.empty(), Invalid("cannot pop from an empty list"));
    Tensor item = std::move(list->tensors.back());
    const int64_t index = static_cast<int64_t>(list->tensors.size()) - 1;
    list->tensors.pop_back();
    if (!item.IsInitialized()) {
      StatusOr<TensorShape> zeros_shape = UnsetShape(*list, *shape, index);
      OP_REQUIRES_OK(c, zeros_shape.status());
      StatusOr<Tensor> zeros = Zeros(c, element_dtype_, *zeros_shape);
      OP_REQUIRES_OK(c, zeros.status());
      item = *std::move(zeros);
    }
    OutputList(c, 0, std::move(holder));
    c->set_output(1, std::move(item));
  }

 private:
  DType element_dtype_;
};

class TensorListGetItemOp : public ListKernel {
 public:
  explicit TensorListGetItemOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadList(c, 0);
    OP_REQUIRES_OK(c, list.status());
    OP_REQUIRES_OK(c, CheckDType(**list, element_dtype_));
    StatusOr<int64_t> index = ScalarInt(c, 1, "index");
    OP_REQUIRES_OK(c, index.status());
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    OP_REQUIRES(c, *index >= 0 && *index < size,
                Invalid("index ", *index, " is out of range for a list of ", size, " elements"));
    const Tensor& item = (*list)->tensors[*index];
    if (item.IsInitialized()) {
      c->set_output(0, item);
      return;
    }
    StatusOr<PartialShape> shape = ShapeInput(c, 2);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<TensorShape> zeros_shape = UnsetShape(**list, *shape, *index);
    OP_REQUIRES_OK(c, zeros_shape.status());
    StatusOr<Tensor> zeros = Zeros(c, element_dtype_, *zeros_shape);
    OP_REQUIRES_OK(c, zeros.status());
    c->set_output(0, *std::move(zeros));
  }

 private:
  DType element_dtype_;
};

class TensorListSetItemOp : public ListKernel {
 public:
  explicit TensorListSetItemOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
    if (context->status().ok()) {
      context->SetStatus(context->GetAttr("resize_if_index_out_of_bounds", &resize_));
    }
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<int64_t> index = ScalarInt(c, 1, "index");
    OP_REQUIRES_OK(c, index.status());
    Variant holder;
    TensorList* list;
    OP_REQUIRES_OK(c, TakeList(c, 0, &holder, &list));
    OP_REQUIRES_OK(c, CheckDType(*list, element_dtype_));
    const Tensor& item = c->input(2);
    OP_REQUIRES_OK(c, CheckFits(*list, item, "item"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(c, *index >= 0, Invalid("index ", *index, " is negative"));
    if (*index >= size) {
      OP_REQUIRES(c, resize_,
                  Invalid("index ", *index, " is out of range for a list of ", size, " elements"));
      OP_REQUIRES_OK(c, CheckSize(*index + 1));
      list->tensors.resize(*index + 1);
    }
    list->tensors[*index] = item;
    OutputList(c, 0, std::move(holder));
  }

 private:
  DType element_dtype_;
  bool resize_ = false;
};

class TensorListStackOp : public ListKernel {
 public:
  explicit TensorListStackOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
    if (context->status().ok()) context->SetStatus(context->GetAttr("num_elements", &count_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadList(c, 0);
    OP_REQUIRES_OK(c, list.status());
    OP_REQUIRES_OK(c, CheckDType(**list, element_dtype_));
    StatusOr<PartialShape> shape = ShapeInput(c, 1);
    OP_REQUIRES_OK(c, shape.status());
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    OP_REQUIRES(c, count_ == -1 || count_ == size,
                Invalid("the list has ", size, " elements but num_elements is ", count_));
    std::vector<int64_t> indices(size);
    for (int64_t i = 0; i < size; ++i) indices[i] = i;
    StatusOr<TensorShape> element_shape = CommonShape(**list, *shape, indices);
    OP_REQUIRES_OK(c, element_shape.status());
    std::vector<const Tensor*> elements;
    for (const Tensor& t : (*list)->tensors) elements.push_back(t.IsInitialized() ? &t : nullptr);
    OP_REQUIRES_OK(c, StackInto(c, 0, element_dtype_, *element_shape, elements));
  }

 private:
  DType element_dtype_;
  int64_t count_ = -1;
};

class TensorListGatherOp : public ListKernel {
 public:
  explicit TensorListGatherOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadList(c, 0);
    OP_REQUIRES_OK(c, list.status());
    OP_REQUIRES_OK(c, CheckDType(**list, element_dtype_));
    OP_REQUIRES(c, c->input(1).dims() == 1,
                Invalid("indices must be a vector, not shape ", c->input(1).shape()));
    StatusOr<std::vector<int64_t>> indices = IntTensorValues(c->input(1), "indices");
    OP_REQUIRES_OK(c, indices.status());
    StatusOr<PartialShape> shape = ShapeInput(c, 2);
    OP_REQUIRES_OK(c, shape.status());
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    std::vector<const Tensor*> elements;
    for (int64_t i : *indices) {
      OP_REQUIRES(c, i >= 0 && i < size,
                  Invalid("index ", i, " is out of range for a list of ", size, " elements"));
      const Tensor& t = (*list)->tensors[i];
      elements.push_back(t.IsInitialized() ? &t : nullptr);
    }
    StatusOr<TensorShape> element_shape = CommonShape(**list, *shape, *indices);
    OP_REQUIRES_OK(c, element_shape.status());
    OP_REQUIRES_OK(c, StackInto(c, 0, element_dtype_, *element_shape, elements));
  }

 private:
  DType element_dtype_;
};

// Rows of `tensor` as list elements (sharing its buffer).
Status RowsOf(const Tensor& tensor, std::vector<Tensor>* rows) {
  TensorShape row_shape = tensor.shape();
  row_shape.RemoveDim(0);
  for (int64_t i = 0; i < tensor.dim_size(0); ++i) {
    Tensor row;
    CHECK(row.CopyFrom(tensor.Slice(i, i + 1), row_shape));
    rows->push_back(std::move(row));
  }
  return Status::OK();
}

class TensorListFromTensorOp : public ListKernel {
 public:
  explicit TensorListFromTensorOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& tensor = c->input(0);
    StatusOr<PartialShape> shape = ShapeInput(c, 1);
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, tensor.dims() >= 1,
                Invalid("tensor must be at least a vector, not shape ", tensor.shape()));
    OP_REQUIRES_OK(c, CheckSize(tensor.dim_size(0)));
    auto list = std::make_shared<TensorList>(element_dtype_, *std::move(shape));
    TensorShape row_shape = tensor.shape();
    row_shape.RemoveDim(0);
    OP_REQUIRES(c, list->element_shape.IsCompatibleWith(row_shape),
                Invalid("element_shape ", list->element_shape,
                        " does not fit the rows of a tensor of shape ", tensor.shape()));
    OP_REQUIRES_OK(c, RowsOf(tensor, &list->tensors));
    OutputList(c, 0, Variant(std::move(list)));
  }

 private:
  DType element_dtype_;
};

class TensorListLengthOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadList(c, 0);
    OP_REQUIRES_OK(c, list.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>((*list)->tensors.size());
  }
};

class TensorListElementShapeOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadList(c, 0);
    OP_REQUIRES_OK(c, list.status());
    const PartialShape& shape = (*list)->element_shape;
    Tensor* out;
    if (!shape.known_rank()) {
      OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    } else {
      OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({shape.rank()}), &out));
    }
    DType dtype = c->expected_output_dtype(0);
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      int64_t d = shape.known_rank() ? shape.dim(i) : -1;
      if (d == PartialShape::kUnknown) d = -1;
      if (dtype == DT_INT32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(d);
      } else {
        out->data<int64_t>()[i] = d;
      }
    }
  }
};

class TensorListResizeOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<int64_t> size = ScalarInt(c, 1, "size");
    OP_REQUIRES_OK(c, size.status());
    OP_REQUIRES(c, *size >= 0, Invalid("size must be >= 0, not ", *size));
    OP_REQUIRES_OK(c, CheckSize(*size));
    Variant holder;
    TensorList* list;
    OP_REQUIRES_OK(c, TakeList(c, 0, &holder, &list));
    list->tensors.resize(*size);
    OutputList(c, 0, std::move(holder));
  }
};

// Sets list elements indices[i] = tensor[i], growing the list as needed.
class ScatterKernel : public ListKernel {
 public:
  using ListKernel::ListKernel;

 protected:
  Status Scatter(OpKernelContext* c, const Tensor& tensor, const Tensor& indices_tensor,
                 int64_t min_size, TensorList* list) const {
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
    WEIR_RETURN_IF_ERROR(RowsOf(tensor, &rows));
    for (size_t k = 0; k < indices.size(); ++k) list->tensors[indices[k]] = std::move(rows[k]);
    return Status::OK();
  }
};

class TensorListScatterIntoExistingListOp : public ScatterKernel {
 public:
  explicit TensorListScatterIntoExistingListOp(OpKernelConstruction* context)
      : ScatterKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    Variant holder;
    TensorList* list;
    OP_REQUIRES_OK(c, TakeList(c, 0, &holder, &list));
    OP_REQUIRES_OK(c, CheckDType(*list, element_dtype_));
    OP_REQUIRES_OK(c, Scatter(c, c->input(1), c->input(2), 0, list));
    OutputList(c, 0, std::move(holder));
  }

 private:
  DType element_dtype_;
};

class TensorListScatterV2Op : public ScatterKernel {
 public:
  explicit TensorListScatterV2Op(OpKernelConstruction* context) : ScatterKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 2);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<int64_t> count = ScalarInt(c, 3, "num_elements");
    OP_REQUIRES_OK(c, count.status());
    OP_REQUIRES(c, *count >= -1,
                Invalid("num_elements must be -1 (from the indices) or >= 0, not ", *count));
    auto list = std::make_shared<TensorList>(element_dtype_, *std::move(shape));
    OP_REQUIRES_OK(c, Scatter(c, c->input(0), c->input(1), *count, list.get()));
    OutputList(c, 0, Variant(std::move(list)));
  }

 private:
  DType element_dtype_;
};

class TensorListConcatV2Op : public ListKernel {
 public:
  explicit TensorListConcatV2Op(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list_or = ReadList(c, 0);
    OP_REQUIRES_OK(c, list_or.status());
    const TensorList& list = **list_or;
    OP_REQUIRES_OK(c, CheckDType(list, element_dtype_));
    StatusOr<PartialShape> requested = ShapeInput(c, 1);
    OP_REQUIRES_OK(c, requested.status());
    StatusOr<std::vector<int64_t>> leading = IntTensorValues(c->input(2), "leading_dims");
    if (c->input(2).NumElements() == 0) leading = std::vector<int64_t>();
    OP_REQUIRES_OK(c, leading.status());
    StatusOr<PartialShape> merged = list.element_shape.Merge(*requested);
    OP_REQUIRES(c, merged.ok(),
                Invalid("element_shape ", *requested, " is incompatible with the list's ",
                        list.element_shape));
    OP_REQUIRES(c, !merged->known_rank() || merged->rank() >= 1,
                Invalid("elements must be at least vectors to be concatenated, but the "
                        "element shape is ",
                        *merged));
    // The shape after dim 0: from a set element, else from the shapes given.
    std::optional<TensorShape> inner;
    for (const Tensor& t : list.tensors) {
      if (!t.IsInitialized()) continue;
      OP_REQUIRES(
          c, t.dims() >= 1,
          Invalid("elements must be at least vectors to be concatenated, not shape ", t.shape()));
      TensorShape rest = t.shape();
      rest.RemoveDim(0);
      if (!inner) {
        inner = rest;
      } else {
        OP_REQUIRES(c, rest == *inner,
                    Invalid("elements differ past dim 0: ", rest, " and ", *inner));
      }
    }
    const int64_t size = static_cast<int64_t>(list.tensors.size());
    std::vector<int64_t> lengths(size);
    std::vector<const Tensor*> pieces(size, nullptr);
    int64_t rows = 0;
    for (int64_t i = 0; i < size; ++i) {
      const Tensor& t = list.tensors[i];
      if (t.IsInitialized()) {
        lengths[i] = t.dim_size(0);
        pieces[i] = &t;
      } else {
        OP_REQUIRES(c, i < static_cast<int64_t>(leading->size()) && (*leading)[i] >= 0,
                    Invalid("element ", i,
                            " was never set and leading_dims gives no length "
                            "for it"));
        lengths[i] = (*leading)[i];
      }
      OP_REQUIRES_OK(c,
                     CheckedAdd(rows, lengths[i], &rows, "concatenated rows").WithContext(Where()));
    }
    if (!inner) {
      OP_REQUIRES(c, merged->known_rank(),
                  Invalid("no element is set and the element shape is unknown"));
      std::vector<int64_t> rest(merged->dim_sizes().begin() + 1, merged->dim_sizes().end());
      PartialShape rest_shape(rest);
      OP_REQUIRES(c, rest_shape.IsFullyDefined(),
                  Invalid("no element is set and the element shape ", *merged,
                          " is not fully defined past dim 0"));
      StatusOr<TensorShape> s = TensorShape::FromDims(rest);
      OP_REQUIRES_OK(c, s.status());
      inner = *s;
    }
    std::vector<int64_t> out_dims = {rows};
    for (int64_t d : inner->dim_sizes()) out_dims.push_back(d);
    StatusOr<TensorShape> out_shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(c, out_shape.status().WithContext(Where()));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *out_shape, &out));
    const int64_t row_size = inner->num_elements();
    DispatchByElementSize(element_dtype_, [&]<typename T>() {
      T* dst = ElementsAs<T>(*out);
      for (int64_t i = 0; i < size; ++i) {
        const int64_t n = lengths[i] * row_size;
        if (pieces[i] != nullptr) {
          CopyElements(ElementsAs<T>(*pieces[i]), n, dst);
        } else if constexpr (std::is_trivially_copyable_v<T>) {
          if (n > 0) std::memset(dst, 0, n * sizeof(T));
        }
        dst += n;
      }
    });
    Tensor* lengths_out;
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({size}), &lengths_out));
    std::copy(lengths.begin(), lengths.end(), lengths_out->data<int64_t>());
  }

 private:
  DType element_dtype_;
};

class TensorListSplitOp : public ListKernel {
 public:
  explicit TensorListSplitOp(OpKernelConstruction* context) : ListKernel(context) {
    context->SetStatus(context->GetAttr("element_dtype", &element_dtype_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& tensor = c->input(0);
    StatusOr<PartialShape> shape = ShapeInput(c, 1);
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, tensor.dims() >= 1,
                Invalid("tensor must be at least a vector, not shape ", tensor.shape()));
    OP_REQUIRES(c, c->input(2).dims() == 1,
                Invalid("lengths must be a vector, not shape ", c->input(2).shape()));
    StatusOr<std::vector<int64_t>> lengths = IntTensorValues(c->input(2), "lengths");
    OP_REQUIRES_OK(c, lengths.status());
    OP_REQUIRES_OK(c, CheckSize(static_cast<int64_t>(lengths->size())));
    int64_t total = 0;
    for (int64_t n : *lengths) {
      OP_REQUIRES(c, n >= 0, Invalid("lengths must be >= 0, but one is ", n));
      OP_REQUIRES_OK(c, CheckedAdd(total, n, &total, "sum of lengths").WithContext(Where()));
    }
    OP_REQUIRES(c, total == tensor.dim_size(0),
                Invalid("lengths sum to ", total, " but tensor has ", tensor.dim_size(0), " rows"));
    auto list = std::make_shared<TensorList>(element_dtype_, *std::move(shape));
    int64_t start = 0;
    for (int64_t n : *lengths) {
      Tensor piece = tensor.Slice(start, start + n);
      OP_REQUIRES_OK(c, CheckFits(*list, piece, "a piece"));
      list->tensors.push_back(std::move(piece));
      start += n;
    }
    OutputList(c, 0, Variant(std::move(list)));
  }

 private:
  DType element_dtype_;
};

}  // namespace

void RegisterListKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("EmptyTensorList"), MakeKernel<EmptyTensorListOp>);
  registry->Register(KernelBuilder("TensorListReserve"), MakeKernel<TensorListReserveOp>);
  registry->Register(KernelBuilder("TensorListPushBack"), MakeKernel<TensorListPushBackOp>);
  registry->Register(KernelBuilder("TensorListPopBack"), MakeKernel<TensorListPopBackOp>);
  registry->Register(KernelBuilder("TensorListGetItem"), MakeKernel<TensorListGetItemOp>);
  registry->Register(KernelBuilder("TensorListSetItem"), MakeKernel<TensorListSetItemOp>);
  registry->Register(KernelBuilder("TensorListStack"), MakeKernel<TensorListStackOp>);
  registry->Register(KernelBuilder("TensorListGather"), MakeKernel<TensorListGatherOp>);
  registry->Register(KernelBuilder("TensorListFromTensor"), MakeKernel<TensorListFromTensorOp>);
  registry->Register(KernelBuilder("TensorListLength"), MakeKernel<TensorListLengthOp>);
  registry->Register(KernelBuilder("TensorListElementShape"), MakeKernel<TensorListElementShapeOp>);
  registry->Register(KernelBuilder("TensorListResize"), MakeKernel<TensorListResizeOp>);
  registry->Register(KernelBuilder("TensorListScatterIntoExistingList"),
                     MakeKernel<TensorListScatterIntoExistingListOp>);
  registry->Register(KernelBuilder("TensorListScatterV2"), MakeKernel<TensorListScatterV2Op>);
  registry->Register(KernelBuilder("TensorListConcatV2"), MakeKernel<TensorListConcatV2Op>);
  registry->Register(KernelBuilder("TensorListSplit"), MakeKernel<TensorListSplitOp>);
}

}  // namespace weir
