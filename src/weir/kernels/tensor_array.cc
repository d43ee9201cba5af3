#include "weir/kernels/tensor_array.h"

#include <Eigen/Core>
#include <cstring>
#include <type_traits>

#include "weir/framework/op_kernel.h"

namespace weir {
namespace {

// a + b into a fresh tensor (a gradient array's adding writes).
template <typename T>
void AddElements(const Tensor& a, const Tensor& b, Tensor* sum) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = sum->data<T>();
  for (int64_t i = 0, n = a.NumElements(); i < n; ++i) z[i] = x[i] + y[i];
}

Status Add(OpKernelContext* context, const Tensor& a, const Tensor& b, Tensor* sum) {
  WEIR_RETURN_IF_ERROR(context->allocate_temp(a.dtype(), a.shape(), sum));
  switch (a.dtype()) {
    case DT_HALF: AddElements<Eigen::half>(a, b, sum); return Status::OK();
    case DT_BFLOAT16: AddElements<Eigen::bfloat16>(a, b, sum); return Status::OK();
    default: break;
  }
  bool added = false;
  DispatchNumericDType(a.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      AddElements<T>(a, b, sum);
      added = true;
    }
  });
  if (!added) return errors::InvalidArgument("cannot add up writes of ", a.dtype());
  return Status::OK();
}

Status Zeros(OpKernelContext* context, DType dtype, const TensorShape& shape, Tensor* zeros) {
  WEIR_RETURN_IF_ERROR(context->allocate_temp(dtype, shape, zeros));
  // Strings are default-constructed (empty) already; zero bits are zero
  // for every numeric dtype.
  if (dtype != DT_STRING && dtype != DT_RESOURCE && zeros->TotalBytes() > 0) {
    std::memset(zeros->raw_data(), 0, zeros->TotalBytes());
  }
  return Status::OK();
}

}  // namespace

TensorArray::TensorArray(std::string name, int64_t size, Options options, bool is_gradient)
    : name_(std::move(name)), options_(std::move(options)), is_gradient_(is_gradient), size_(size) {
  CHECK_GE(size, 0);
}

std::string TensorArray::DebugString() const {
  return StrCat("TensorArray ", name_, " of ", options_.dtype, " ", options_.element_shape);
}

Status TensorArray::CheckOpen() const {
  if (closed_) return errors::InvalidArgument("TensorArray ", name_, " has already been closed");
  return Status::OK();
}

StatusOr<TensorArray::Element*> TensorArray::ElementAt(int64_t index) {
  if (index >= static_cast<int64_t>(elements_.size())) {
    if (index >= kMaxStoredElements) {
      return errors::ResourceExhausted("TensorArray ", name_, ": index ", index,
                                       " is past the most elements an array holds (",
                                       kMaxStoredElements, ")");
    }
    elements_.resize(index + 1);
  }
  return &elements_[index];
}

Status TensorArray::Write(OpKernelContext* context, std::span<const int64_t> indices,
                          std::vector<Tensor> values) {
  CHECK_EQ(indices.size(), values.size());
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < indices.size(); ++i) {
    WEIR_RETURN_IF_ERROR(WriteLocked(context, indices[i], std::move(values[i])));
  }
  return Status::OK();
}

Status TensorArray::WriteLocked(OpKernelContext* context, int64_t index, Tensor value) {
  WEIR_RETURN_IF_ERROR(CheckOpen());
  if (index < 0 || (!options_.dynamic_size && index >= size_)) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot write index ", index,
                                   ": the size is ", size_,
                                   options_.dynamic_size ? "" : " and the array cannot grow");
  }
  if (value.dtype() != options_.dtype) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot write a ", value.dtype(),
                                   " tensor to an array of ", options_.dtype);
  }
  if (!options_.element_shape.IsCompatibleWith(value.shape())) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot write index ", index,
                                   ": the value's shape ", value.shape(),
                                   " does not fit the element shape ", options_.element_shape);
  }
  WEIR_ASSIGN_OR_RETURN(Element * element, ElementAt(index));
  if (element->read) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot write index ", index,
                                   " because it has already been read");
  }
  if (element->written && !is_gradient_) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot write index ", index,
                                   " because it has already been written to");
  }
  if (options_.identical_element_shapes && !options_.element_shape.IsFullyDefined()) {
    options_.element_shape = PartialShape(value.shape());
  }
  size_ = std::max(size_, index + 1);
  if (!element->written) {
    element->shape = value.shape();
    element->tensor = std::move(value);
    element->written = true;
    return Status::OK();
  }
  // A gradient array adds up the writes to one index.
  if (value.shape() != element->shape) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot add a value of shape ",
                                   value.shape(), " to index ", index, ", of shape ",
                                   element->shape);
  }
  if (!element->tensor.IsInitialized()) {  // only a shape: zeros so far
    element->tensor = std::move(value);
    return Status::OK();
  }
  Tensor sum;
  WEIR_RETURN_IF_ERROR(Add(context, element->tensor, value, &sum));
  element->tensor = std::move(sum);
  writes_added_ = true;
  return Status::OK();
}

Status TensorArray::Read(OpKernelContext* context, std::span<const int64_t> indices,
                         std::vector<Tensor>* values) {
  std::lock_guard<std::mutex> lock(mu_);
  values->resize(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    WEIR_RETURN_IF_ERROR(ReadLocked(context, indices[i], &(*values)[i]));
  }
  return Status::OK();
}

Status TensorArray::ReadLocked(OpKernelContext* context, int64_t index, Tensor* value) {
  WEIR_RETURN_IF_ERROR(CheckOpen());
  // A gradient array reads zeros past its end: the forward array grew
  // where no gradient flowed back.
  if (index < 0 || (!is_gradient_ && index >= size_)) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot read index ", index,
                                   ": the size is ", size_);
  }
  WEIR_ASSIGN_OR_RETURN(Element * element, ElementAt(index));
  if (element->cleared) {
    return errors::InvalidArgument("TensorArray ", name_, ": cannot read index ", index,
                                   " twice because it was cleared after a previous read "
                                   "(perhaps set clear_after_read = false?)");
  }
  if (!element->written) {
    if (!options_.element_shape.IsFullyDefined()) {
      return errors::InvalidArgument("TensorArray ", name_, ": index ", index,
                                     " was never written, and zeros cannot stand in for it "
                                     "because the element shape ",
                                     options_.element_shape, " is not fully defined");
    }
    element->shape = options_.element_shape.ToTensorShape();
    element->written = true;
  }
  if (!element->tensor.IsInitialized()) {
    WEIR_RETURN_IF_ERROR(Zeros(context, options_.dtype, element->shape, &element->tensor));
  }
  size_ = std::max(size_, index + 1);
  *value = element->tensor;
  element->read = true;
  if (options_.clear_after_read) {
    element->tensor = Tensor();
    element->cleared = true;
  }
  return Status::OK();
}

StatusOr<int64_t> TensorArray::Size() {
  std::lock_guard<std::mutex> lock(mu_);
  WEIR_RETURN_IF_ERROR(CheckOpen());
  return size_;
}

StatusOr<bool> TensorArray::DynamicSize() {
  std::lock_guard<std::mutex> lock(mu_);
  WEIR_RETURN_IF_ERROR(CheckOpen());
  return options_.dynamic_size;
}

StatusOr<PartialShape> TensorArray::ElementShape() {
  std::lock_guard<std::mutex> lock(mu_);
  WEIR_RETURN_IF_ERROR(CheckOpen());
  return options_.element_shape;
}

StatusOr<std::shared_ptr<TensorArray>> TensorArray::MakeGradient(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  WEIR_RETURN_IF_ERROR(CheckOpen());
  if (writes_added_) {
    return errors::InvalidArgument("TensorArray ", name_,
                                   " added up several writes to one index, so it has no "
                                   "gradient array");
  }
  options_.dynamic_size = false;
  Options options = options_;
  options.clear_after_read = true;
  auto gradient = std::make_shared<TensorArray>(std::move(name), size_, options, true);
  // Each element's gradient reads as zeros of its shape until written.
  gradient->elements_.resize(elements_.size());
  for (size_t i = 0; i < elements_.size(); ++i) {
    if (!elements_[i].written) continue;
    gradient->elements_[i].shape = elements_[i].shape;
    gradient->elements_[i].written = true;
  }
  return gradient;
}

void TensorArray::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  elements_.clear();
  closed_ = true;
}

}  // namespace weir
