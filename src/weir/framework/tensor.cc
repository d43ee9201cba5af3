#include "weir/framework/tensor.h"

#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <new>
#include <sstream>

#include "weir/base/sanitizers.h"

namespace weir {
namespace {

#if defined(WEIR_ADDRESS_SANITIZER)
constexpr bool kCacheBufferObjects = false;  // keep use-after-free detectable
#else
constexpr bool kCacheBufferObjects = true;
#endif

// Freed TensorBuffer objects (not their memory, which the allocator keeps),
// per thread: a loop makes and frees one or two tensors per iteration, and
// the heap's allocation and free of the object cost more than reusing it.
// A few per thread, freed when the thread ends; none after that (an object
// freed during thread or static destruction goes back to the heap).
class BufferObjectCache {
 public:
  static constexpr int kMaxObjects = 32;
  static BufferObjectCache* ForThisThread() {
    if constexpr (!kCacheBufferObjects) return nullptr;
    thread_local BufferObjectCache cache;
    return alive_ ? &cache : nullptr;
  }
  BufferObjectCache() { alive_ = true; }
  ~BufferObjectCache() {
    alive_ = false;
    for (int i = 0; i < count_; ++i) ::operator delete(objects_[i]);
  }
  void* Take() { return count_ > 0 ? objects_[--count_] : nullptr; }
  bool Put(void* object) {
    if (count_ == kMaxObjects) return false;
    objects_[count_++] = object;
    return true;
  }

 private:
  static thread_local bool alive_;
  int count_ = 0;
  void* objects_[kMaxObjects];
};
thread_local bool BufferObjectCache::alive_ = false;

// Storage for one TensorBuffer object.
void* NewBufferObject() {
  if (BufferObjectCache* cache = BufferObjectCache::ForThisThread()) {
    if (void* object = cache->Take()) return object;
  }
  return ::operator new(sizeof(TensorBuffer));
}

void FreeBufferObject(void* object) {
  if (BufferObjectCache* cache = BufferObjectCache::ForThisThread()) {
    if (cache->Put(object)) return;
  }
  ::operator delete(object);
}

}  // namespace

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
  return new (NewBufferObject()) TensorBuffer(allocator, dtype, num_elements, data, bytes);
}

TensorBuffer* TensorBuffer::Borrow(DType dtype, int64_t num_elements, void* data, size_t size,
                                   ReleaseFn release, void* release_arg) {
  CHECK(!IsNonPodDType(dtype)) << "cannot borrow " << dtype << " memory";
  CHECK(release != nullptr);
  auto* buffer = new (NewBufferObject()) TensorBuffer(nullptr, dtype, num_elements, data, size);
  buffer->release_ = release;
  buffer->release_arg_ = release_arg;
  return buffer;
}

void TensorBuffer::Destroy() {
  if (release_ != nullptr) {
    release_(release_arg_);
    this->~TensorBuffer();
    FreeBufferObject(this);
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
  this->~TensorBuffer();
  FreeBufferObject(this);
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
