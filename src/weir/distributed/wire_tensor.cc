#include "weir/distributed/wire_tensor.h"

#include "weir/base/checked_math.h"
#include "weir/framework/tensor_proto.h"

namespace weir {

Status TensorFromWire(const wire::TensorProto& proto, std::string_view what, Tensor* out) {
  int64_t elements = 1;
  std::string dims;
  for (const auto& dim : proto.tensor_shape().dim()) {
    dims += StrCat(dims.empty() ? "" : ",", dim.size());
    std::optional<int64_t> product =
        dim.size() < 0 ? std::nullopt : MultiplyWithoutOverflow(elements, dim.size());
    if (!product) {
      return errors::InvalidArgument(what, ": tensor of ", WireDTypeName(proto.dtype()),
                                     " declares shape [", dims, "...], which is not valid");
    }
    elements = *product;
  }
  // Every element is at least one byte of tensor_content or one value of a
  // typed field.
  int64_t values = static_cast<int64_t>(proto.tensor_content().size()) + proto.half_val_size() +
                   proto.float_val_size() + proto.double_val_size() + proto.int_val_size() +
                   proto.string_val_size() + proto.scomplex_val_size() + proto.int64_val_size() +
                   proto.bool_val_size() + proto.dcomplex_val_size() +
                   proto.resource_handle_val_size() + proto.variant_val_size() +
                   proto.uint32_val_size() + proto.uint64_val_size();
  if (elements > values) {
    return errors::InvalidArgument(what, ": tensor of ", WireDTypeName(proto.dtype()),
                                   " declares shape [", dims, "] (", elements,
                                   " elements) but carries only ", values, " values");
  }
  return TensorFromProto(proto, out).WithContext(what);
}

}  // namespace weir
