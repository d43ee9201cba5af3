// TensorList kernels that make a list without elements (EmptyTensorList,
// TensorListReserve), or move between a list and one tensor by pieces of any
// length along dim 0 (TensorListConcatV2, TensorListSplit): what a
// TensorArray's creation, concat and split become in a tf.function.
#include <algorithm>
#include <cstring>
#include <optional>

#include "weir/base/checked_math.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/list_kernel.h"

namespace weir {
namespace {

class EmptyTensorListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 0);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<int64_t> max = ScalarInt(c, 1, "max_num_elements", -1, "no limit");
    OP_REQUIRES_OK(c, max.status());
    auto list = NewList(*std::move(shape));
    list->max_num_elements = *max;
    OutputList(c, 0, std::move(list));
  }
};

class TensorListReserveOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<PartialShape> shape = ShapeInput(c, 0);
    OP_REQUIRES_OK(c, shape.status());
    StatusOr<int64_t> n = ScalarInt(c, 1, "num_elements", 0);
    OP_REQUIRES_OK(c, n.status());
    OP_REQUIRES_OK(c, CheckSize(*n));
    auto list = NewList(*std::move(shape));
    list->tensors.resize(*n);
    OutputList(c, 0, std::move(list));
  }
};

class TensorListConcatV2Op : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const TensorList*> list_or = ReadTypedList(c, 0);
    OP_REQUIRES_OK(c, list_or.status());
    const TensorList& list = **list_or;
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
    DispatchByElementSize(element_dtype(), [&]<typename T>() {
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
};

class TensorListSplitOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
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
    auto list = NewList(*std::move(shape));
    int64_t start = 0;
    for (int64_t n : *lengths) {
      Tensor piece = tensor.Slice(start, start + n);
      OP_REQUIRES_OK(c, CheckFits(*list, piece, "a piece"));
      list->tensors.push_back(std::move(piece));
      start += n;
    }
    OutputList(c, 0, std::move(list));
  }
};

}  // namespace

void RegisterListConcatSplitKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("EmptyTensorList"), MakeKernel<EmptyTensorListOp>);
  registry->Register(KernelBuilder("TensorListReserve"), MakeKernel<TensorListReserveOp>);
  registry->Register(KernelBuilder("TensorListConcatV2"), MakeKernel<TensorListConcatV2Op>);
  registry->Register(KernelBuilder("TensorListSplit"), MakeKernel<TensorListSplitOp>);
}

}  // namespace weir
