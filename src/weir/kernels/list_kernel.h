// ListKernel: what every TensorList kernel (kernels/tensor_list.h) shares.
// The kernels sit in three files by idea: list_access_kernels.cc (one
// element at a time: push, pop, get, set, length, resize), list_rows_kernels.cc
// (a list and a tensor's rows: stack, gather, scatter, from-tensor) and
// list_concat_split_kernels.cc (new lists: reserve, empty; and pieces of
// any length: concat, split). A kernel that changes a list takes its input
// (OpKernelContext::mutable_input) and changes it in place only when neither
// the input tensor nor its value is shared; otherwise it changes a copy whose
// elements share their buffers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/str_util.h"
#include "weir/framework/op_kernel.h"
#include "weir/kernels/tensor_list.h"

namespace weir {

class KernelRegistry;

// A list holds a Tensor object per element; a reserve or scatter past this
// is refused before memory is asked for (an int32 from the graph could ask
// for 2^31 of them).
inline constexpr int64_t kMaxListElements = int64_t{1} << 26;

class ListKernel : public OpKernel {
 public:
  // Reads the op's element_dtype attr when it declares one (all list ops
  // but TensorListLength, TensorListElementShape and TensorListResize).
  explicit ListKernel(OpKernelConstruction* context);

 protected:
  // DT_INVALID for an op without the attr.
  DType element_dtype() const { return element_dtype_; }

  // "TensorListGetItem 'node': " for error messages.
  std::string Where() const { return StrCat(type_string(), " '", name(), "': "); }

  template <typename... Args>
  Status Invalid(const Args&... args) const {
    return errors::InvalidArgument(Where(), args...);
  }

  // Input `index`, a scalar variant holding a TensorList (of any dtype).
  StatusOr<const TensorList*> ReadList(OpKernelContext* c, int index) const;
  // The same, whose elements must be element_dtype().
  StatusOr<const TensorList*> ReadTypedList(OpKernelContext* c, int index) const;

  // Takes input `index` to change its list: `*holder` owns a list no other
  // tensor shares, `*list` points into it. The list's elements must be
  // element_dtype() unless the op has no such attr.
  Status TakeList(OpKernelContext* c, int index, Variant* holder, TensorList** list) const;

  // `item` fits the list's element shape; `what` names it in the error.
  Status CheckFits(const TensorList& list, const Tensor& item, std::string_view what) const;
  // ResourceExhausted past kMaxListElements.
  Status CheckSize(int64_t size) const;

  // The shape an unset element reads as: the list's element shape merged
  // with `requested`; it must be fully defined.
  StatusOr<TensorShape> UnsetShape(const TensorList& list, const PartialShape& requested,
                                   int64_t index) const;
  // The shape every element of `list` at `indices` has: from the set ones,
  // which must agree, else the list's shape merged with `requested`.
  StatusOr<TensorShape> CommonShape(const TensorList& list, const PartialShape& requested,
                                    const std::vector<int64_t>& indices) const;

  // A zero tensor (an empty string, a null variant...) from the step's
  // allocator.
  StatusOr<Tensor> Zeros(OpKernelContext* c, DType dtype, const TensorShape& shape) const;
  // Input `index` as one integer; it must be a scalar.
  StatusOr<int64_t> ScalarInt(OpKernelContext* c, int index, std::string_view what) const;
  // The same, at least `least` (0 or -1); `minus_one_means` says what -1
  // stands for in the error when it is allowed.
  StatusOr<int64_t> ScalarInt(OpKernelContext* c, int index, std::string_view what, int64_t least,
                              std::string_view minus_one_means = "") const;
  // Input `index` as an element shape (PartialShapeFromTensor).
  StatusOr<PartialShape> ShapeInput(OpKernelContext* c, int index) const;

  // Sets elements indices[i] = row i of `tensor` (sharing its buffer),
  // growing the list to at least `min_size` and past the largest index.
  Status ScatterRows(const Tensor& tensor, const Tensor& indices, int64_t min_size,
                     TensorList* list) const;

  // Output `index` as a scalar variant holding `value`.
  static void OutputList(OpKernelContext* c, int index, Variant value);
  // `list` as output `index`.
  static void OutputList(OpKernelContext* c, int index, std::shared_ptr<TensorList> list) {
    OutputList(c, index, Variant(std::move(list)));
  }
  // A new list of element_dtype() elements fitting `shape`.
  std::shared_ptr<TensorList> NewList(PartialShape shape) const {
    return std::make_shared<TensorList>(element_dtype_, std::move(shape));
  }

 private:
  DType element_dtype_ = DT_INVALID;
};

// A kernel that changes the list of input 0 (taken as TakeList does) and
// outputs it as output 0.
class ListWriteKernel : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) final;

 protected:
  // Changes `list`, which nothing else holds; may set the other outputs.
  virtual Status Change(OpKernelContext* c, TensorList* list) const = 0;
};

// Rows (dim 0 slices) of `tensor`, at least a vector, as list elements
// sharing its buffer, appended to `rows`.
void AppendRows(const Tensor& tensor, std::vector<Tensor>* rows);

// The three files' registrations; RegisterListKernels (all_kernels.h) calls
// them.
void RegisterListAccessKernels(KernelRegistry* registry);
void RegisterListRowsKernels(KernelRegistry* registry);
void RegisterListConcatSplitKernels(KernelRegistry* registry);

}  // namespace weir
