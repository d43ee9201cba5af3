#include "weir/framework/tensor.h"

#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <new>
#include <sstream>

namespace weir {

TensorBuffer* TensorBuffer::Create(Allocator* allocator, DType dtype, int64_t num_elements) {
  size_t element_size = DTypeSize(dtype);
  if (dtype == DT_STRING) element_size = sizeof(std::string);
  if (dtype == DT_RESOURCE) element_size = sizeof(ResourceHandle);
  if (dtype == DT_VARIANT) element_size = sizeof(Variant);
  // A byte count that wraps around size_t is out of memory, not a small block.
  if (element_size != 0 &&
      static_cast<size_t>(num_elements) > std::numeric_limits<size_t>::max() / element_size) {
    return nullptr;
  }
  size_t bytes = static_cast<size_t>(num_elements) * element_size;
  void* data = allocator->AllocateRaw(kTensorAlignment, bytes);
  if (data == nullptr) return nullptr;
  if (dtype == DT_STRING) {
    std::uninitialized_default_construct_n(static_cast<std::string*>(data), num_elements);
  } else if (dtype == DT_RESOURCE) {
    std::uninitialized_default_construct_n(static_cast<ResourceHandle*>(data), num_elements);
  } else if (dtype == DT_VARIANT) {
    std::uninitialized_default_construct_n(static_cast<Variant*>(data), num_elements);
  }
  return new TensorBuffer(allocator, dtype, num_elements, data, bytes);
}

TensorBuffer* TensorBuffer::Borrow(DType dtype, int64_t num_elements, void* data, size_t size,
                                   ReleaseFn release, void* release_arg) {
  CHECK(!IsNonPodDType(dtype)) << "cannot borrow " << dtype << " memory";
  CHECK(release != nullptr);
  auto* buffer = new TensorBuffer(nullptr, dtype, num_elements, data, size);
  buffer->release_ = release;
  buffer->release_arg_ = release_arg;
  return buffer;
}

void TensorBuffer::Destroy() {
  if (release_ != nullptr) {
    release_(release_arg_);
    delete this;
    return;
  }
  if (dtype_ == DT_STRING) {
    std::destroy_n(static_cast<std::string*>(data_), num_elements_);
  } else if (dtype_ == DT_RESOURCE) {
    std::destroy_n(static_cast<ResourceHandle*>(data_), num_elements_);
  } else if (dtype_ == DT_VARIANT) {
    std::destroy_n(static_cast<Variant*>(data_), num_elements_);
  }
  allocator_->DeallocateRaw(data_, size_);
  delete this;
}

Tensor::Tensor(DType dtype, const TensorShape& shape)
    : Tensor(DefaultCpuAllocator(), dtype, shape) {}

Tensor::Tensor(Allocator* allocator, DType dtype, const TensorShape& shape)
    : dtype_(dtype), shape_(shape) {
  buffer_ = TensorBuffer::Create(allocator, dtype, shape.num_elements());
  CHECK(buffer_ != nullptr) << "out of memory allocating " << dtype << " " << shape;
}

StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DType dtype, const TensorShape& shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = TensorBuffer::Create(allocator, dtype, shape.num_elements());
  if (t.buffer_ == nullptr) {
    return errors::ResourceExhausted("out of memory allocating a ", dtype, " tensor of shape ",
                                     shape, " from allocator ", allocator->Name());
  }
  return t;
}

Tensor Tensor::Borrow(DType dtype, const TensorShape& shape, void* data,
                      TensorBuffer::ReleaseFn release, void* release_arg) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = TensorBuffer::Borrow(dtype, shape.num_elements(), data,
                                   shape.num_elements() * DTypeSize(dtype), release, release_arg);
  return t;
}

StatusOr<Tensor> Tensor::DeepCopy(Allocator* allocator) const {
  if (!IsInitialized()) return *this;
  WEIR_ASSIGN_OR_RETURN(Tensor copy, Allocate(allocator, dtype_, shape_));
  if (dtype_ == DT_STRING) {
    std::copy(data<std::string>(), data<std::string>() + NumElements(), copy.data<std::string>());
  } else if (dtype_ == DT_RESOURCE) {
    std::copy(data<ResourceHandle>(), data<ResourceHandle>() + NumElements(),
              copy.data<ResourceHandle>());
  } else if (dtype_ == DT_VARIANT) {
    // The values are shared, not cloned: a kernel that changes one clones it
    // first unless it holds the only reference (Variant::GetMutable).
    std::copy(data<Variant>(), data<Variant>() + NumElements(), copy.data<Variant>());
  } else if (TotalBytes() > 0) {
    std::memcpy(copy.raw_data(), raw_data(), TotalBytes());
  }
  return copy;
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (other.buffer_) other.buffer_->Ref();
  if (buffer_) buffer_->Unref();
  dtype_ = other.dtype_;
  shape_ = other.shape_;
  buffer_ = other.buffer_;
  offset_ = other.offset_;
  return *this;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this == &other) return *this;
  if (buffer_) buffer_->Unref();
  dtype_ = other.dtype_;
  shape_ = std::move(other.shape_);
  buffer_ = other.buffer_;
  offset_ = other.offset_;
  other.buffer_ = nullptr;
  return *this;
}

namespace {
size_t ElementStride(DType dtype) {
  if (dtype == DT_STRING) return sizeof(std::string);
  if (dtype == DT_RESOURCE) return sizeof(ResourceHandle);
  if (dtype == DT_VARIANT) return sizeof(Variant);
  return DTypeSize(dtype);
}
}  // namespace

Tensor Tensor::Slice(int64_t start, int64_t limit) const {
  CHECK(dims() >= 1 && 0 <= start && start <= limit && limit <= dim_size(0))
      << "Slice(" << start << ", " << limit << ") of " << shape_;
  Tensor result = *this;
  result.shape_.set_dim(0, limit - start);
  int64_t row_elements = dim_size(0) == 0 ? 0 : NumElements() / dim_size(0);
  result.offset_ = offset_ + start * row_elements * ElementStride(dtype_);
  return result;
}

bool Tensor::CopyFrom(const Tensor& other, const TensorShape& shape) {
  if (other.NumElements() != shape.num_elements()) return false;
  *this = other;
  shape_ = shape;
  return true;
}

namespace {

template <typename T>
void PrintValue(std::ostream& os, const T& value) {
  if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    os << static_cast<int>(value);
  } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    os << static_cast<float>(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    os << '"' << value << '"';
  } else if constexpr (std::is_same_v<T, ResourceHandle>) {
    os << value.DebugString();
  } else if constexpr (std::is_same_v<T, Variant>) {
    os << value.DebugString();
  } else {
    os << value;
  }
}

// Calls fn<T>() for every dtype a tensor can hold.
template <typename Fn>
void DispatchAnyDType(DType dtype, Fn&& fn) {
  if (DispatchNumericDType(dtype, fn)) return;
  switch (dtype) {
    case DT_HALF: fn.template operator()<Eigen::half>(); return;
    case DT_BFLOAT16: fn.template operator()<Eigen::bfloat16>(); return;
    case DT_STRING: fn.template operator()<std::string>(); return;
    case DT_RESOURCE: fn.template operator()<ResourceHandle>(); return;
    case DT_VARIANT: fn.template operator()<Variant>(); return;
    default: LOG(Fatal) << "unsupported dtype " << static_cast<int>(dtype);
  }
}

}  // namespace

std::string Tensor::DebugString(int max_entries) const {
  std::ostringstream os;
  os << dtype_ << " " << shape_;
  if (!IsInitialized()) return os.str() + " <uninitialized>";
  os << " {";
  int64_t n = std::min<int64_t>(NumElements(), max_entries);
  DispatchAnyDType(dtype_, [&]<typename T>() {
    const T* values = data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if (i) os << ", ";
      PrintValue(os, values[i]);
    }
  });
  if (NumElements() > n) os << ", ...";
  os << "}";
  return os.str();
}

bool Tensor::ContentEquals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (IsInitialized() != other.IsInitialized()) return false;
  if (!IsInitialized()) return true;
  bool equal = true;
  DispatchAnyDType(dtype_, [&]<typename T>() {
    const T* a = data<T>();
    const T* b = other.data<T>();
    if constexpr (std::is_trivially_copyable_v<T>) {
      equal = NumElements() == 0 || std::memcmp(a, b, NumElements() * sizeof(T)) == 0;
    } else {
      equal = std::equal(a, a + NumElements(), b);
    }
  });
  return equal;
}

}  // namespace weir
