// TensorList kernels between a list and the rows (dim 0 slices) of one
// tensor: stacking or gathering elements into a tensor, and making or
// filling a list from a tensor's rows. What a TensorArray's stack, gather,
// unstack and scatter become in a tf.function.
#include <algorithm>
#include <cstring>

#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/list_kernel.h"

namespace weir {
namespace {

// Reads elements into one tensor of shape [n] + element shape.
class StackKernel : public ListKernel {
 public:
  using ListKernel::ListKernel;

 protected:
  // Stacks `elements` (set ones, or null for zeros) of `shape` into output
  // `index`.
  Status StackInto(OpKernelContext* c, int index, const TensorShape& shape,
                   const std::vector<const Tensor*>& elements) const {
    TensorShape out_shape = shape;
    WEIR_RETURN_IF_ERROR(out_shape.InsertDimWithStatus(0, static_cast<int64_t>(elements.size()))
                             .WithContext(Where()));
    Tensor* out;
    WEIR_RETURN_IF_ERROR(c->allocate_output(index, out_shape, &out));
    const int64_t n = shape.num_elements();
    DispatchByElementSize(element_dtype(), [&]<typename T>() {
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
};

class TensorListStackOp : public StackKernel {
 public:
  explicit TensorListStackOp(OpKernelConstruction* context) : StackKernel(context) {
    if (context->status().ok()) context->SetStatus(context->GetAttr("num_elements", &count_));
  }
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadTypedList(c, 0);
    OP_REQUIRES_OK(c, list.status());
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
    OP_REQUIRES_OK(c, StackInto(c, 0, *element_shape, elements));
  }

 private:
  int64_t count_ = -1;
};

class TensorListGatherOp : public StackKernel {
 public:
  using StackKernel::StackKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadTypedList(c, 0);
    OP_REQUIRES_OK(c, list.status());
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
    OP_REQUIRES_OK(c, StackInto(c, 0, *element_shape, elements));
  }
};

class TensorListFromTensorOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& tensor = c->input(0);
    StatusOr<PartialShape> shape = ShapeInput(c, 1);
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, tensor.dims() >= 1,
                Invalid("tensor must be at least a vector, not shape ", tensor.shape()));
    OP_REQUIRES_OK(c, CheckSize(tensor.dim_size(0)));
    auto list = NewList(*std::move(shape));
    TensorShape row_shape = tensor.shape();
    row_shape.RemoveDim(0);
    OP_REQUIRES(c, list->element_shape.IsCompatibleWith(row_shape),
                Invalid("element_shape ", list->element_shape,
                        " does not fit the rows of a tensor of shape ", tensor.shape()));
    AppendRows(tensor, &list->tensors);
    OutputList(c, 0, std::move(list));
  }
};

class TensorListScatterIntoExistingListOp : public ListWriteKernel {
 public:
  using ListWriteKernel::ListWriteKernel;

 protected:
  Status Change(OpKernelContext* c, TensorList* list) const override {
    return ScatterRows(c->input(1), c->input(2), 0, list);
  }
};

class TensorListScatterV2Op : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 2);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<int64_t> count = ScalarInt(c, 3, "num_elements", -1, "from the indices");
    OP_REQUIRES_OK(c, count.status());
    auto list = NewList(*std::move(shape));
    OP_REQUIRES_OK(c, ScatterRows(c->input(0), c->input(1), *count, list.get()));
    OutputList(c, 0, std::move(list));
  }
};

}  // namespace

void RegisterListRowsKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("TensorListStack"), MakeKernel<TensorListStackOp>);
  registry->Register(KernelBuilder("TensorListGather"), MakeKernel<TensorListGatherOp>);
  registry->Register(KernelBuilder("TensorListFromTensor"), MakeKernel<TensorListFromTensorOp>);
  registry->Register(KernelBuilder("TensorListScatterIntoExistingList"),
                     MakeKernel<TensorListScatterIntoExistingListOp>);
  registry->Register(KernelBuilder("TensorListScatterV2"), MakeKernel<TensorListScatterV2Op>);
}

}  // namespace weir
