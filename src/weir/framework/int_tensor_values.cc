#include "weir/framework/int_tensor_values.h"

#include <algorithm>

#include "weir/base/logging.h"
#include "weir/framework/tensor.h"

namespace weir {

StatusOr<std::vector<int64_t>> IntTensorValues(const Tensor& t, std::string_view what) {
  if (t.dims() > 1) {
    return errors::InvalidArgument(what, " must be a scalar or a vector but has shape ", t.shape());
  }
  std::vector<int64_t> values(t.NumElements());
  auto copy = [&]<typename T>() {
    std::copy(t.data<T>(), t.data<T>() + t.NumElements(), values.begin());
  };
  // int8 and int16 too: TensorFlow allows them for some index args
  // (StridedSlice's Index, SplitV's Tlen), so shape functions read them.
  switch (t.dtype()) {
    case DT_INT32: copy.template operator()<int32_t>(); break;
    case DT_INT64: copy.template operator()<int64_t>(); break;
    case DT_INT16: copy.template operator()<int16_t>(); break;
    case DT_INT8: copy.template operator()<int8_t>(); break;
    default:
      return errors::InvalidArgument(what, " must be int8, int16, int32 or int64 but is ",
                                     t.dtype());
  }
  return values;
}

StatusOr<std::vector<int64_t>> IntTensorElements(const Tensor& t, std::string_view what) {
  Tensor flat;
  CHECK(flat.CopyFrom(t, TensorShape({t.NumElements()})));
  return IntTensorValues(flat, what);
}

}  // namespace weir
