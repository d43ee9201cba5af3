#include "weir/framework/tensor_proto.h"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "proto/tensor.pb.h"
#include "weir/base/checked_math.h"
#include "proto/tensor_shape.pb.h"

namespace weir {
namespace {

// tensor_content holds little-endian bytes; on such a host they are the
// in-memory representation and copy as they are.
static_assert(std::endian::native == std::endian::little,
              "tensor_content decoding assumes a little-endian host");

// Zero for numbers, empty for strings, a default handle for resources.
template <typename T>
T ZeroValue() {
  if constexpr (std::is_constructible_v<T, float>) {
    return T(0.0f);
  } else {
    return T();
  }
}

// Copies the raw bytes of tensor_content into `out`.
template <typename T>
Status FromContent(const std::string& content, int64_t n, T* out) {
  if (content.size() % sizeof(T) != 0 || static_cast<int64_t>(content.size() / sizeof(T)) != n) {
    return errors::InvalidArgument("tensor_content has ", content.size(),
                                   " bytes, expected ", n, " elements of ", sizeof(T),
                                   " bytes");
  }
  if constexpr (std::is_same_v<T, bool>) {
    // Any nonzero byte is true; copying other bytes into a bool would make
    // an invalid bool.
    for (int64_t i = 0; i < n; ++i) out[i] = content[i] != 0;
  } else {
    std::memcpy(out, content.data(), content.size());
  }
  return Status::OK();
}

// Fills out[0, n) from `count` wire values, element i decoded by
// `get(i, &out[i])`. Elements past the last value given repeat it (the
// compact form TensorFlow writes for constants such as tf.fill); with no
// values at all, the tensor is zeros.
template <typename T, typename Get>
Status FromValues(int64_t count, int64_t n, std::string_view field, T* out, Get get) {
  if (count > n) {
    return errors::InvalidArgument("", field, " has ", count,
                                   " values but the shape holds ", n);
  }
  for (int64_t i = 0; i < count; ++i) {
    Status status = get(i, &out[i]);
    if (!status.ok()) {
      return errors::InvalidArgument("value ", i, " of ", field, " ",
                                     status.message());
    }
  }
  std::fill(out + count, out + n, count > 0 ? out[count - 1] : ZeroValue<T>());
  return Status::OK();
}

// Narrow integers travel widened in int_val; reject values that do not fit.
template <typename T>
Status Narrow(int32_t value, T* out) {
  if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) {
    return errors::InvalidArgument("(", value, ") does not fit in ", DTypeName(kDTypeOf<T>));
  }
  *out = static_cast<T>(value);
  return Status::OK();
}

// half_val holds the 16-bit pattern of a half or bfloat16 value.
template <typename T>
Status FromBits(int32_t bits, T* out) {
  if (bits < 0 || bits > 0xffff) {
    return errors::InvalidArgument("(", bits, ") is not a 16-bit pattern");
  }
  *out = std::bit_cast<T>(static_cast<uint16_t>(bits));
  return Status::OK();
}

// A numeric tensor from tensor_content or from the typed field, each wire
// value passed through `convert`.
template <typename T, typename Field, typename Convert>
Status FromNumeric(const wire::TensorProto& proto, const Field& field, std::string_view name,
                   Convert convert, Tensor* t) {
  T* out = t->data<T>();
  if (!proto.tensor_content().empty()) {
    return FromContent(proto.tensor_content(), t->NumElements(), out);
  }
  return FromValues(field.size(), t->NumElements(), name, out,
                    [&](int64_t i, T* element) { return convert(field[i], element); });
}

template <typename T, typename Field>
Status FromSame(const wire::TensorProto& proto, const Field& field, std::string_view name, Tensor* t) {
  return FromNumeric<T>(
      proto, field, name,
      [](const auto& value, T* element) {
        *element = value;
        return Status::OK();
      }, t);
}

// Complex values travel as interleaved (real, imaginary) pairs.
template <typename T, typename Field>
Status FromComplex(const wire::TensorProto& proto, const Field& field, std::string_view name, Tensor* t) {
  T* out = t->data<T>();
  if (!proto.tensor_content().empty()) {
    return FromContent(proto.tensor_content(), t->NumElements(), out);
  }
  if (field.size() % 2 != 0) {
    return errors::InvalidArgument("", name, " has ", field.size(),
                                   " values, not (real, imaginary) pairs");
  }
  return FromValues(
      field.size() / 2, t->NumElements(), name, out,
      [&](int64_t i, T* element) {
        *element = T(field[2 * i], field[2 * i + 1]);
        return Status::OK();
      });
}

// Strings and handles cannot be raw bytes; TensorFlow never writes them so.
Status NoContent(const wire::TensorProto& proto) {
  if (!proto.tensor_content().empty()) {
    return errors::InvalidArgument("tensor_content cannot hold ",
                                   DTypeName(static_cast<DType>(proto.dtype())),
                                   " values; they belong in the typed field");
  }
  return Status::OK();
}

Status FillTensor(const wire::TensorProto& proto, Tensor* t) {
  switch (t->dtype()) {
    case DT_FLOAT:
      return FromSame<float>(proto, proto.float_val(), "float_val", t);
    case DT_DOUBLE:
      return FromSame<double>(proto, proto.double_val(), "double_val", t);
    case DT_INT32:
      return FromSame<int32_t>(proto, proto.int_val(), "int_val", t);
    case DT_INT64:
      return FromSame<int64_t>(proto, proto.int64_val(), "int64_val", t);
    case DT_UINT32:
      return FromSame<uint32_t>(proto, proto.uint32_val(), "uint32_val", t);
    case DT_UINT64:
      return FromSame<uint64_t>(proto, proto.uint64_val(), "uint64_val", t);
    case DT_BOOL:
      return FromSame<bool>(proto, proto.bool_val(), "bool_val", t);
    case DT_INT16:
      return FromNumeric<int16_t>(proto, proto.int_val(), "int_val", Narrow<int16_t>, t);
    case DT_INT8:
      return FromNumeric<int8_t>(proto, proto.int_val(), "int_val", Narrow<int8_t>, t);
    case DT_UINT8:
      return FromNumeric<uint8_t>(proto, proto.int_val(), "int_val", Narrow<uint8_t>, t);
    case DT_UINT16:
      return FromNumeric<uint16_t>(proto, proto.int_val(), "int_val", Narrow<uint16_t>, t);
    case DT_HALF:
      return FromNumeric<Eigen::half>(proto, proto.half_val(), "half_val",
                                      FromBits<Eigen::half>, t);
    case DT_BFLOAT16:
      return FromNumeric<Eigen::bfloat16>(proto, proto.half_val(), "half_val",
                                          FromBits<Eigen::bfloat16>, t);
    case DT_COMPLEX64:
      return FromComplex<complex64>(proto, proto.scomplex_val(), "scomplex_val", t);
    case DT_COMPLEX128:
      return FromComplex<complex128>(proto, proto.dcomplex_val(), "dcomplex_val", t);
    case DT_STRING: {
      WEIR_RETURN_IF_ERROR(NoContent(proto));
      const auto& field = proto.string_val();
      return FromValues(
          field.size(), t->NumElements(), "string_val", t->data<std::string>(),
          [&](int64_t i, std::string* element) {
            *element = field[i];
            return Status::OK();
          });
    }
    case DT_RESOURCE: {
      WEIR_RETURN_IF_ERROR(NoContent(proto));
      const auto& field = proto.resource_handle_val();
      return FromValues(
          field.size(), t->NumElements(), "resource_handle_val", t->data<ResourceHandle>(),
          [&](int64_t i, ResourceHandle* element) {
            const wire::ResourceHandleProto& h = field[i];
            *element = ResourceHandle(h.device(), h.container(), h.name(), h.maybe_type_name());
            return Status::OK();
          });
    }
    default:
      return errors::Internal("no decoder for this dtype");
  }
}

// The bytes string and resource elements hold outside the tensor's buffer
// once the typed field is completed to `n` elements by repeating its last
// value (FromValues): what the proto spells in a few bytes may be terabytes.
StatusOr<int64_t> HeapBytes(const wire::TensorProto& proto, DType dtype, int64_t n) {
  std::vector<int64_t> sizes;
  if (dtype == DT_STRING) {
    for (const std::string& v : proto.string_val()) sizes.push_back(v.size());
  } else if (dtype == DT_RESOURCE) {
    for (const wire::ResourceHandleProto& h : proto.resource_handle_val()) {
      sizes.push_back(h.device().size() + h.container().size() + h.name().size() +
                      h.maybe_type_name().size());
    }
  }
  if (sizes.empty() || static_cast<int64_t>(sizes.size()) > n) return int64_t{0};
  int64_t given = 0;  // bounded by the proto's own size (< 2 GiB)
  for (int64_t size : sizes) given += size;
  int64_t repeated;
  WEIR_RETURN_IF_ERROR(CheckedMultiply(n - static_cast<int64_t>(sizes.size()), sizes.back(),
                                       &repeated, "repeating the last value"));
  int64_t total;
  WEIR_RETURN_IF_ERROR(CheckedAdd(given, repeated, &total, "string bytes"));
  return total;
}

}  // namespace

std::string WireDTypeName(int number) {
  const std::string& name = wire::DataType_Name(static_cast<wire::DataType>(number));
  return name.empty() ? StrCat("number ", number) : StrCat(name, " (", number, ")");
}

Status ShapeFromProto(const wire::TensorShapeProto& proto, PartialShape* out) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return errors::InvalidArgument("TensorShapeProto has unknown_rank set and ",
                                     proto.dim_size(), " dims");
    }
    *out = PartialShape::UnknownRank();
    return Status::OK();
  }
  if (proto.dim_size() > TensorShape::kMaxRank) {
    return errors::InvalidArgument("TensorShapeProto has rank ", proto.dim_size(),
                                   ", more than ", TensorShape::kMaxRank);
  }
  std::vector<int64_t> dims;
  dims.reserve(proto.dim_size());
  for (const wire::TensorShapeProto::Dim& dim : proto.dim()) dims.push_back(dim.size());
  for (int64_t d : dims) {
    if (d < PartialShape::kUnknown) {
      return errors::InvalidArgument("TensorShapeProto [", StrJoin(dims, ","),
                                     "] has dimension ", d, "; sizes are >= 0, or -1 if unknown");
    }
  }
  PartialShape shape(std::move(dims));
  Status valid = shape.Validate();
  if (!valid.ok()) return errors::InvalidArgument("TensorShapeProto: ", valid.message());
  *out = std::move(shape);
  return Status::OK();
}

void ShapeToProto(const PartialShape& shape, wire::TensorShapeProto* proto) {
  proto->Clear();
  if (!shape.known_rank()) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape.dim_sizes()) proto->add_dim()->set_size(d);
}

Status TensorFromProto(const wire::TensorProto& proto, Tensor* out) {
  const int dtype_number = proto.dtype();
  std::vector<int64_t> dims;
  for (const wire::TensorShapeProto::Dim& dim : proto.tensor_shape().dim()) {
    dims.push_back(dim.size());
  }
  if (!IsValidDType(dtype_number)) {
    const std::string raw_shape = proto.tensor_shape().unknown_rank()
                                      ? "<unknown>"
                                      : StrCat("[", StrJoin(dims, ","), "]");
    return errors::InvalidArgument("TensorProto of shape ", raw_shape, " has dtype ",
                                   WireDTypeName(dtype_number),
                                   ", which Weir does not support");
  }
  const DType dtype = static_cast<DType>(dtype_number);
  if (dtype == DT_VARIANT) {
    return errors::Unimplemented(
        "TensorProto of dtype variant: Weir does not decode serialized "
        "variant values (TensorList, Optional); they exist only inside "
        "a step");
  }
  if (proto.tensor_shape().unknown_rank()) {
    return errors::InvalidArgument("TensorProto of dtype ", dtype,
                                   " has an unknown rank; a tensor's shape must be known");
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) {
    return errors::InvalidArgument("TensorProto of dtype ", dtype, ": ",
                                   shape.status().message());
  }
  // Every Const of an imported graph passes here: the description is built
  // only for an error.
  auto fail = [&](const Status& status) {
    return status.WithContext(StrCat("TensorProto of dtype ", dtype, " and shape ", *shape));
  };

  // Refuse before allocating: a shape that fits in int64 elements may still
  // overflow in bytes, and a short typed field is broadcast to the whole
  // shape, so a few bytes of proto can ask for any amount of memory.
  const size_t stride = dtype == DT_STRING     ? sizeof(std::string)
                        : dtype == DT_RESOURCE ? sizeof(ResourceHandle)
                                               : DTypeSize(dtype);
  StatusOr<int64_t> bytes = CheckedByteSize(shape->num_elements(), static_cast<int64_t>(stride),
                                            kMaxAttrTensorBytes, "elements");
  if (bytes.ok()) {
    StatusOr<int64_t> heap = HeapBytes(proto, dtype, shape->num_elements());
    if (!heap.ok()) {
      bytes = heap.status();
    } else if (*heap > kMaxAttrTensorBytes - *bytes) {
      bytes = errors::InvalidArgument("its elements need ", *bytes, " + ", *heap,
                                      " bytes, more than the limit of ", kMaxAttrTensorBytes);
    }
  }
  if (!bytes.ok()) {
    return errors::InvalidArgument("TensorProto is too large: ", fail(bytes.status()).message());
  }
  WEIR_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DefaultCpuAllocator(), dtype, *shape));
  Status filled = FillTensor(proto, &tensor);
  if (!filled.ok()) return fail(filled);
  *out = std::move(tensor);
  return Status::OK();
}

Status TensorToProto(const Tensor& tensor, wire::TensorProto* proto) {
  DCHECK(tensor.IsInitialized());
  proto->Clear();
  proto->set_dtype(static_cast<wire::DataType>(tensor.dtype()));
  ShapeToProto(PartialShape(tensor.shape()), proto->mutable_tensor_shape());
  switch (tensor.dtype()) {
    case DT_VARIANT:
      return errors::Unimplemented("a variant tensor of shape ", tensor.shape(),
                                   " cannot be encoded as a TensorProto: its values (",
                                   tensor.NumElements() > 0 ? tensor.flat<Variant>()[0].TypeName()
                                                            : std::string_view("none"),
                                   ") exist only inside a step");
    case DT_STRING:
      for (const std::string& s : tensor.flat<std::string>()) proto->add_string_val(s);
      break;
    case DT_RESOURCE:
      for (const ResourceHandle& h : tensor.flat<ResourceHandle>()) {
        wire::ResourceHandleProto* wire_handle = proto->add_resource_handle_val();
        wire_handle->set_device(h.device());
        wire_handle->set_container(h.container());
        wire_handle->set_name(h.name());
        wire_handle->set_maybe_type_name(h.type_name());
      }
      break;
    default:
      if (tensor.NumElements() > 0) {
        proto->set_tensor_content(static_cast<const char*>(tensor.raw_data()),
                                  tensor.TotalBytes());
      }
      break;
  }
  return Status::OK();
}

}  // namespace weir
