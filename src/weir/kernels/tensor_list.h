// TensorList and Optional: the values DT_VARIANT tensors hold in the graphs
// TensorFlow 2 writes. A TensorArray in a tf.function, and the forward values
// a while loop's gradient saves, are TensorLists; the intermediates a cond's
// gradient reads are Optionals. Both are immutable once a kernel outputs them
// (framework/variant.h): list kernels take their input list and change it in
// place only when nothing else holds it, else they change a copy, whose
// element tensors still share their buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"
#include "weir/framework/variant.h"

namespace weir {

class TensorList : public VariantValue {
 public:
  TensorList() = default;
  TensorList(DType element_dtype, PartialShape element_shape)
      : element_dtype(element_dtype), element_shape(std::move(element_shape)) {}

  // Elements; an uninitialized Tensor is an element not set yet (it reads as
  // zeros of the element shape).
  std::vector<Tensor> tensors;
  DType element_dtype = DT_INVALID;
  // What every element must fit (unknown dims or rank allowed).
  PartialShape element_shape;
  // -1: no limit (EmptyTensorList's max_num_elements).
  int64_t max_num_elements = -1;

  std::string_view TypeName() const override { return "TensorList"; }
  std::string DebugString() const override;
  std::unique_ptr<VariantValue> Clone() const override {
    return std::make_unique<TensorList>(*this);
  }
  // The same length, each set element replaced by zeros of its shape.
  StatusOr<Variant> ZerosLike() const override;
  // Elementwise sums of two lists of one dtype and length; an unset element
  // takes the other list's element.
  StatusOr<Variant> Add(const VariantValue& other) const override;
};

class OptionalValue : public VariantValue {
 public:
  OptionalValue() = default;  // none
  explicit OptionalValue(std::vector<Tensor> components)
      : has_value(true), components(std::move(components)) {}

  bool has_value = false;
  std::vector<Tensor> components;

  std::string_view TypeName() const override { return "Optional"; }
  std::string DebugString() const override;
  std::unique_ptr<VariantValue> Clone() const override {
    return std::make_unique<OptionalValue>(*this);
  }
  StatusOr<Variant> ZerosLike() const override;
  // Both none, or both with values to add component by component.
  StatusOr<Variant> Add(const VariantValue& other) const override;
};

// Element arithmetic the variant values need (they hold tensors of any
// numeric dtype, or variants again).
StatusOr<Tensor> ZerosLikeTensor(const Tensor& t);
// REQUIRES nothing: dtype and shape mismatches are InvalidArgument.
StatusOr<Tensor> AddTensors(const Tensor& a, const Tensor& b);

// An element shape as TensorFlow's list ops pass it: an int32/int64 tensor,
// either the scalar -1 (unknown rank) or a vector whose -1 entries are
// unknown dims. `what` names the tensor in errors.
StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t, std::string_view what);

}  // namespace weir
