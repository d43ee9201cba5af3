// TensorArray: the state behind the TensorArray*V3 ops, a per-step list of
// tensors of one dtype (kernels/step_resources.h), with TensorFlow's rules:
// - an index is written once (a gradient array instead adds the writes up)
//   and not after it was read; with clear_after_read it is read once;
// - a write past the end is an error unless dynamic_size, which grows the
//   array (until a gradient array is made from it);
// - every element fits element_shape; with identical_element_shapes the
//   first element written fixes it;
// - reading an unwritten index gives zeros of the element shape when that
//   is known (a gradient array knows each forward element's), else an error.
// Elements are held, not copied: tensors are immutable. Errors are
// InvalidArgument naming the array, the index and the size. Storage grows
// with the highest index used, at most kMaxStoredElements (ResourceExhausted
// beyond), so an index or size from input never becomes a huge allocation.
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "weir/framework/resource_mgr.h"
#include "weir/framework/tensor.h"

namespace weir {

class OpKernelContext;

inline constexpr char kTensorArrayTypeName[] = "TensorArray";

class TensorArray final : public ResourceBase {
 public:
  // 2^19: about 100 MiB of bookkeeping (some 200 bytes an element) at most.
  static constexpr int64_t kMaxStoredElements = int64_t{1} << 19;

  struct Options {
    DType dtype = DT_FLOAT;
    PartialShape element_shape;
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
  };

  // REQUIRES: size >= 0. Gradient arrays come from MakeGradient.
  TensorArray(std::string name, int64_t size, Options options, bool is_gradient = false);

  const std::string& name() const { return name_; }
  DType dtype() const { return options_.dtype; }

  // Writes values[i] at indices[i], in order, stopping at the first error.
  Status Write(OpKernelContext* context, std::span<const int64_t> indices,
               std::vector<Tensor> values);
  // The elements at `indices`, in order.
  Status Read(OpKernelContext* context, std::span<const int64_t> indices,
              std::vector<Tensor>* values);

  StatusOr<int64_t> Size();
  StatusOr<bool> DynamicSize();
  StatusOr<PartialShape> ElementShape();

  // The gradient array `name` of this one: its size, dtype and element
  // shapes, fixed size, adding writes, clear_after_read. This array can no
  // longer grow. An error when this one is closed or had writes added up.
  StatusOr<std::shared_ptr<TensorArray>> MakeGradient(std::string name);

  // Frees the elements; every later use is an error.
  void Close();

  std::string DebugString() const override;

 private:
  struct Element {
    Tensor tensor;      // empty when never written, cleared, or only a shape
    TensorShape shape;  // when written
    bool written = false;
    bool read = false;
    bool cleared = false;
  };

  // REQUIRES: mu_ held.
  Status CheckOpen() const;
  Status WriteLocked(OpKernelContext* context, int64_t index, Tensor value);
  Status ReadLocked(OpKernelContext* context, int64_t index, Tensor* value);
  // Stored elements up to `index` (storage grows lazily: a large size costs
  // nothing until written).
  StatusOr<Element*> ElementAt(int64_t index);

  const std::string name_;
  Options options_;
  const bool is_gradient_;
  std::mutex mu_;
  int64_t size_;
  std::vector<Element> elements_;  // the first elements_.size() of size_
  bool closed_ = false;
  bool writes_added_ = false;  // then no gradient array can be made
};

}  // namespace weir
