// Tensor: a dense n-dimensional array of one dtype.
//
// A small value type: dtype, shape, a reference-counted 64-byte aligned buffer
// and a byte offset into it. Copies share the buffer; so does slicing the
// first dimension. The buffer returns to its allocator when the last tensor
// that shares it is destroyed. Eigen views live in eigen_tensor.h so this
// header stays light.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "weir/base/logging.h"
#include "weir/framework/allocator.h"
#include "weir/framework/resource_handle.h"
#include "weir/framework/tensor_shape.h"
#include "weir/framework/types.h"
#include "weir/framework/variant.h"

namespace weir {

// Reference-counted storage shared by tensors. Constructs and destroys the
// elements of non-POD dtypes (string, resource, variant).
class TensorBuffer {
 public:
  // Returns nullptr when the allocator is out of memory.
  static TensorBuffer* Create(Allocator* allocator, DType dtype, int64_t num_elements);

  // Wraps memory weir does not own (a numpy array fed from Python): no
  // allocator; `release(arg)` runs when the last reference goes. Only POD
  // dtypes.
  using ReleaseFn = void (*)(void* arg);
  static TensorBuffer* Borrow(DType dtype, int64_t num_elements, void* data, size_t size,
                              ReleaseFn release, void* release_arg);

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }
  // Never true for borrowed memory, so no kernel reuses it in place.
  bool RefCountIsOne() const {
    return release_ == nullptr && refs_.load(std::memory_order_acquire) == 1;
  }
  bool is_borrowed() const { return release_ != nullptr; }

  void* data() const { return data_; }
  size_t size() const { return size_; }
  Allocator* allocator() const { return allocator_; }

 private:
  TensorBuffer(Allocator* allocator, DType dtype, int64_t num_elements, void* data, size_t size)
      : allocator_(allocator), dtype_(dtype), num_elements_(num_elements), data_(data),
        size_(size) {}
  void Destroy();

  std::atomic<int32_t> refs_{1};
  Allocator* allocator_;
  DType dtype_;
  int64_t num_elements_;
  void* data_;
  size_t size_;
  ReleaseFn release_ = nullptr;  // set for borrowed memory
  void* release_arg_ = nullptr;
};

class Tensor {
 public:
  // An empty, uninitialized float scalar: IsInitialized() is false.
  Tensor() = default;
  // Allocates (uninitialized for POD dtypes, default-constructed otherwise).
  // CHECK-fails when memory is exhausted; kernels use
  // OpKernelContext::allocate_output, which returns a Status instead.
  Tensor(DType dtype, const TensorShape& shape);
  Tensor(Allocator* allocator, DType dtype, const TensorShape& shape);
  // Like the constructor, but out-of-memory is a ResourceExhausted Status.
  static StatusOr<Tensor> Allocate(Allocator* allocator, DType dtype, const TensorShape& shape);
  // A tensor over memory weir does not own (TensorBuffer::Borrow), for
  // zero-copy feeds. Weir never writes into it, and whatever keeps a value
  // past the step (a variable's assign, a queue's enqueue) takes DeepCopy().
  // REQUIRES: a POD dtype; `data` holds shape.num_elements() elements.
  static Tensor Borrow(DType dtype, const TensorShape& shape, void* data,
                       TensorBuffer::ReleaseFn release, void* release_arg);

  Tensor(const Tensor& other)
      : dtype_(other.dtype_), shape_(other.shape_), buffer_(other.buffer_), offset_(other.offset_) {
    if (buffer_) buffer_->Ref();
  }
  Tensor(Tensor&& other) noexcept
      : dtype_(other.dtype_), shape_(std::move(other.shape_)), buffer_(other.buffer_),
        offset_(other.offset_) {
    other.buffer_ = nullptr;
  }
  // Inline, like the constructors: the executor moves and copies tensors
  // between nodes all the time.
  Tensor& operator=(const Tensor& other) {
    if (other.buffer_) other.buffer_->Ref();
    if (buffer_) buffer_->Unref();
    dtype_ = other.dtype_;
    shape_ = other.shape_;
    buffer_ = other.buffer_;
    offset_ = other.offset_;
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this == &other) return *this;
    if (buffer_) buffer_->Unref();
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    buffer_ = other.buffer_;
    offset_ = other.offset_;
    other.buffer_ = nullptr;
    return *this;
  }
  ~Tensor() {
    if (buffer_) buffer_->Unref();
  }

  // Convenience constructors for tests, examples and constants.
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(kDTypeOf<T>, TensorShape());
    t.data<T>()[0] = std::move(value);
    return t;
  }
  // REQUIRES: values.size() == shape.num_elements().
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const TensorShape& shape) {
    CHECK_EQ(static_cast<int64_t>(values.size()), shape.num_elements());
    Tensor t(kDTypeOf<T>, shape);
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values) {
    return FromVector(values, TensorShape({static_cast<int64_t>(values.size())}));
  }

  DType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.rank(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  bool IsInitialized() const { return buffer_ != nullptr; }
  // Bytes of element storage (0 for string, resource and variant payloads).
  size_t TotalBytes() const { return NumElements() * DTypeSize(dtype_); }

  // Typed element access. REQUIRES: kDTypeOf<T> == dtype().
  template <typename T>
  T* data() {
    DCHECK(kDTypeOf<T> == dtype_);
    return reinterpret_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    DCHECK(kDTypeOf<T> == dtype_);
    return reinterpret_cast<const T*>(raw_data());
  }
  template <typename T>
  std::span<T> flat() { return {data<T>(), static_cast<size_t>(NumElements())}; }
  template <typename T>
  std::span<const T> flat() const { return {data<T>(), static_cast<size_t>(NumElements())}; }
  template <typename T>
  const T& scalar() const { return data<T>()[0]; }
  template <typename T>
  T& scalar() { return data<T>()[0]; }

  void* raw_data() const {
    return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr;
  }

  // Rows [start, limit) of the first dimension, sharing this buffer.
  // REQUIRES: dims() >= 1 and 0 <= start <= limit <= dim_size(0).
  Tensor Slice(int64_t start, int64_t limit) const;

  // A tensor with `shape` sharing this buffer; false if the element counts
  // differ (the reshape of Reshape, without a copy).
  bool CopyFrom(const Tensor& other, const TensorShape& shape);

  // Whether the buffer is borrowed memory (see Borrow).
  bool IsBorrowed() const { return buffer_ != nullptr && buffer_->is_borrowed(); }
  // The same values in a buffer of its own from `allocator`.
  StatusOr<Tensor> DeepCopy(Allocator* allocator) const;

  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // True if this tensor is the only owner of its buffer (so a kernel may
  // reuse it in place).
  bool RefCountIsOne() const { return buffer_ != nullptr && buffer_->RefCountIsOne(); }

  // "float [2,2] {1, 2, 3, 4}", with at most `max_entries` values.
  std::string DebugString(int max_entries = 10) const;
  // Bit-identical dtype, shape and values (strings compared by value,
  // variants by identity).
  bool ContentEquals(const Tensor& other) const;

 private:
  DType dtype_ = DT_FLOAT;
  TensorShape shape_;
  TensorBuffer* buffer_ = nullptr;
  size_t offset_ = 0;  // bytes into buffer_->data()
};

// Calls `fn.template operator()<T>()` with T the C++ type of `dtype`.
// Returns false if `dtype` is not one of the listed numeric types.
template <typename Fn>
bool DispatchNumericDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn.template operator()<float>(); return true;
    case DT_DOUBLE: fn.template operator()<double>(); return true;
    case DT_INT32: fn.template operator()<int32_t>(); return true;
    case DT_INT64: fn.template operator()<int64_t>(); return true;
    case DT_UINT8: fn.template operator()<uint8_t>(); return true;
    case DT_INT8: fn.template operator()<int8_t>(); return true;
    case DT_INT16: fn.template operator()<int16_t>(); return true;
    case DT_UINT16: fn.template operator()<uint16_t>(); return true;
    case DT_UINT32: fn.template operator()<uint32_t>(); return true;
    case DT_UINT64: fn.template operator()<uint64_t>(); return true;
    case DT_BOOL: fn.template operator()<bool>(); return true;
    case DT_COMPLEX64: fn.template operator()<complex64>(); return true;
    case DT_COMPLEX128: fn.template operator()<complex128>(); return true;
    default: return false;
  }
}

}  // namespace weir
