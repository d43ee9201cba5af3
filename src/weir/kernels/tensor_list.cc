#include "weir/kernels/tensor_list.h"

#include <Eigen/Core>
#include <cstring>
#include <sstream>

#include "weir/base/str_util.h"
#include "weir/framework/int_tensor_values.h"

namespace weir {

std::string TensorList::DebugString() const {
  std::ostringstream os;
  os << "TensorList(" << element_dtype << ", " << element_shape << ", " << tensors.size()
     << " elements)";
  return os.str();
}

StatusOr<Variant> TensorList::ZerosLike() const {
  auto zeros = std::make_shared<TensorList>(element_dtype, element_shape);
  zeros->max_num_elements = max_num_elements;
  zeros->tensors.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    if (!t.IsInitialized()) {
      zeros->tensors.emplace_back();
      continue;
    }
    WEIR_ASSIGN_OR_RETURN(Tensor z, ZerosLikeTensor(t));
    zeros->tensors.push_back(std::move(z));
  }
  return Variant(std::move(zeros));
}

StatusOr<Variant> TensorList::Add(const VariantValue& other_value) const {
  const auto* other = dynamic_cast<const TensorList*>(&other_value);
  if (other == nullptr) return VariantValue::Add(other_value);
  if (element_dtype != other->element_dtype) {
    return errors::InvalidArgument("cannot add a TensorList of ", element_dtype, " to one of ",
                                   other->element_dtype);
  }
  if (tensors.size() != other->tensors.size()) {
    return errors::InvalidArgument("cannot add TensorLists of lengths ", tensors.size(), " and ",
                                   other->tensors.size());
  }
  StatusOr<PartialShape> shape = element_shape.Merge(other->element_shape);
  auto sum = std::make_shared<TensorList>(element_dtype,
                                          shape.ok() ? *shape : PartialShape::UnknownRank());
  sum->max_num_elements = max_num_elements;
  sum->tensors.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& a = tensors[i];
    const Tensor& b = other->tensors[i];
    if (!a.IsInitialized() || !b.IsInitialized()) {
      sum->tensors.push_back(a.IsInitialized() ? a : b);
      continue;
    }
    StatusOr<Tensor> s = AddTensors(a, b);
    if (!s.ok()) return s.status().WithContext(StrCat("TensorList element ", i));
    sum->tensors.push_back(*std::move(s));
  }
  return Variant(std::move(sum));
}

std::string OptionalValue::DebugString() const {
  return has_value ? StrCat("Optional(", components.size(), " components)")
                   : std::string("Optional(none)");
}

StatusOr<Variant> OptionalValue::ZerosLike() const {
  if (!has_value) return Variant::Make<OptionalValue>();
  std::vector<Tensor> zeros;
  for (const Tensor& t : components) {
    WEIR_ASSIGN_OR_RETURN(Tensor z, ZerosLikeTensor(t));
    zeros.push_back(std::move(z));
  }
  return Variant::Make<OptionalValue>(std::move(zeros));
}

StatusOr<Variant> OptionalValue::Add(const VariantValue& other_value) const {
  const auto* other = dynamic_cast<const OptionalValue*>(&other_value);
  if (other == nullptr) return VariantValue::Add(other_value);
  if (has_value != other->has_value) {
    return errors::InvalidArgument("cannot add two Optionals when only one of them has a value");
  }
  if (!has_value) return Variant::Make<OptionalValue>();
  if (components.size() != other->components.size()) {
    return errors::InvalidArgument("cannot add Optionals of ", components.size(), " and ",
                                   other->components.size(), " components");
  }
  std::vector<Tensor> sum;
  for (size_t i = 0; i < components.size(); ++i) {
    StatusOr<Tensor> s = AddTensors(components[i], other->components[i]);
    if (!s.ok()) return s.status().WithContext(StrCat("Optional component ", i));
    sum.push_back(*std::move(s));
  }
  return Variant::Make<OptionalValue>(std::move(sum));
}

StatusOr<Tensor> ZerosLikeTensor(const Tensor& t) {
  if (t.dtype() == DT_RESOURCE) {
    return errors::InvalidArgument("ZerosLike of a resource tensor is not defined");
  }
  WEIR_ASSIGN_OR_RETURN(Tensor z, Tensor::Allocate(DefaultCpuAllocator(), t.dtype(), t.shape()));
  if (t.dtype() == DT_VARIANT) {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const Variant& v = t.data<Variant>()[i];
      if (v.empty()) continue;
      WEIR_ASSIGN_OR_RETURN(z.data<Variant>()[i], v.value()->ZerosLike());
    }
  } else if (!IsNonPodDType(t.dtype()) && z.TotalBytes() > 0) {
    // Zero bits are zero in every numeric dtype (and false).
    std::memset(z.raw_data(), 0, z.TotalBytes());
  }
  return z;
}

namespace {

template <typename T>
void AddElements(const Tensor& a, const Tensor& b, Tensor* out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out->data<T>();
  for (int64_t i = 0; i < a.NumElements(); ++i) z[i] = x[i] + y[i];
}

}  // namespace

StatusOr<Tensor> AddTensors(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return errors::InvalidArgument("cannot add a ", a.dtype(), " tensor of shape ", a.shape(),
                                   " to a ", b.dtype(), " tensor of shape ", b.shape());
  }
  WEIR_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DefaultCpuAllocator(), a.dtype(), a.shape()));
  switch (a.dtype()) {
    case DT_HALF: AddElements<Eigen::half>(a, b, &out); return out;
    case DT_BFLOAT16: AddElements<Eigen::bfloat16>(a, b, &out); return out;
    case DT_VARIANT:
      for (int64_t i = 0; i < a.NumElements(); ++i) {
        const Variant& x = a.data<Variant>()[i];
        const Variant& y = b.data<Variant>()[i];
        if (x.empty() || y.empty()) {
          out.data<Variant>()[i] = x.empty() ? y : x;
          continue;
        }
        WEIR_ASSIGN_OR_RETURN(out.data<Variant>()[i], x.value()->Add(*y.value()));
      }
      return out;
    case DT_BOOL:
    case DT_STRING:
    case DT_RESOURCE: break;
    default: {
      bool done =
          DispatchNumericDType(a.dtype(), [&]<typename T>() { AddElements<T>(a, b, &out); });
      if (done) return out;
    }
  }
  return errors::InvalidArgument("cannot add ", a.dtype(), " tensors");
}

StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t, std::string_view what) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return errors::InvalidArgument(what, " must be int32 or int64, not ", t.dtype());
  }
  if (t.dims() > 1) {
    return errors::InvalidArgument(what, " must be a scalar or a vector, not shape ", t.shape());
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(t, what));
  if (t.dims() == 0) {
    if (dims[0] != -1) {
      return errors::InvalidArgument(what, " as a scalar must be -1 (unknown rank), not ", dims[0]);
    }
    return PartialShape::UnknownRank();
  }
  for (int64_t& d : dims) {
    if (d < -1) {
      return errors::InvalidArgument(what, " has dim ", d, "; a dim is -1 (unknown) or >= 0");
    }
    if (d == -1) d = PartialShape::kUnknown;
  }
  StatusOr<PartialShape> shape = PartialShape::FromDims(std::move(dims));
  if (!shape.ok()) return shape.status().WithContext(what);
  return shape;
}

}  // namespace weir
