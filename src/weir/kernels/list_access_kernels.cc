// TensorList kernels that read or change one element at a time, or the
// list's length: what a TensorArray's read, write and size become in a
// tf.function, and the push and pop of a v2 while loop's gradient.
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/list_kernel.h"

namespace weir {
namespace {

class TensorListPushBackOp : public ListWriteKernel {
 public:
  using ListWriteKernel::ListWriteKernel;

 protected:
  Status Change(OpKernelContext* c, TensorList* list) const override {
    const Tensor& item = c->input(1);
    WEIR_RETURN_IF_ERROR(CheckFits(*list, item, "tensor"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    if (list->max_num_elements >= 0 && size >= list->max_num_elements) {
      return Invalid("the list is full: it holds its max_num_elements (", list->max_num_elements,
                     ")");
    }
    WEIR_RETURN_IF_ERROR(CheckSize(size + 1));
    list->tensors.push_back(item);
    return Status::OK();
  }
};

class TensorListPopBackOp : public ListWriteKernel {
 public:
  using ListWriteKernel::ListWriteKernel;

 protected:
  Status Change(OpKernelContext* c, TensorList* list) const override {
    WEIR_ASSIGN_OR_RETURN(PartialShape shape, ShapeInput(c, 1));
    if (list->tensors.empty()) return Invalid("cannot pop from an empty list");
    Tensor item = std::move(list->tensors.back());
    const int64_t index = static_cast<int64_t>(list->tensors.size()) - 1;
    list->tensors.pop_back();
    if (!item.IsInitialized()) {
      WEIR_ASSIGN_OR_RETURN(TensorShape zeros_shape, UnsetShape(*list, shape, index));
      WEIR_ASSIGN_OR_RETURN(item, Zeros(c, element_dtype(), zeros_shape));
    }
    c->set_output(1, std::move(item));
    return Status::OK();
  }
};

class TensorListGetItemOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list = ReadTypedList(c, 0);
    OP_REQUIRES_OK(c, list.status());
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
    StatusOr<Tensor> zeros = Zeros(c, element_dtype(), *zeros_shape);
    OP_REQUIRES_OK(c, zeros.status());
    c->set_output(0, *std::move(zeros));
  }
};

class TensorListSetItemOp : public ListWriteKernel {
 public:
  explicit TensorListSetItemOp(OpKernelConstruction* context) : ListWriteKernel(context) {
    if (context->status().ok()) {
      context->SetStatus(context->GetAttr("resize_if_index_out_of_bounds", &resize_));
    }
  }

 protected:
  Status Change(OpKernelContext* c, TensorList* list) const override {
    WEIR_ASSIGN_OR_RETURN(int64_t index, ScalarInt(c, 1, "index"));
    const Tensor& item = c->input(2);
    WEIR_RETURN_IF_ERROR(CheckFits(*list, item, "item"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    if (index < 0) return Invalid("index ", index, " is negative");
    if (index >= size) {
      if (!resize_) {
        return Invalid("index ", index, " is out of range for a list of ", size, " elements");
      }
      WEIR_RETURN_IF_ERROR(CheckSize(index + 1));
      list->tensors.resize(index + 1);
    }
    list->tensors[index] = item;
    return Status::OK();
  }

 private:
  bool resize_ = false;
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

class TensorListResizeOp : public ListWriteKernel {
 public:
  using ListWriteKernel::ListWriteKernel;

 protected:
  Status Change(OpKernelContext* c, TensorList* list) const override {
    WEIR_ASSIGN_OR_RETURN(int64_t size, ScalarInt(c, 1, "size", 0));
    WEIR_RETURN_IF_ERROR(CheckSize(size));
    list->tensors.resize(size);
    return Status::OK();
  }
};

}  // namespace

void RegisterListAccessKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("TensorListPushBack"), MakeKernel<TensorListPushBackOp>);
  registry->Register(KernelBuilder("TensorListPopBack"), MakeKernel<TensorListPopBackOp>);
  registry->Register(KernelBuilder("TensorListGetItem"), MakeKernel<TensorListGetItemOp>);
  registry->Register(KernelBuilder("TensorListSetItem"), MakeKernel<TensorListSetItemOp>);
  registry->Register(KernelBuilder("TensorListLength"), MakeKernel<TensorListLengthOp>);
  registry->Register(KernelBuilder("TensorListElementShape"), MakeKernel<TensorListElementShapeOp>);
  registry->Register(KernelBuilder("TensorListResize"), MakeKernel<TensorListResizeOp>);
}

}  // namespace weir
