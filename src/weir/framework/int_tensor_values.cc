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
  if (t.dtype() == DT_INT32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + t.NumElements(), values.begin());
  } else if (t.dtype() == DT_INT64) {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + t.NumElements(), values.begin());
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64 but is ", t.dtype());
  }
  return values;
}

StatusOr<std::vector<int64_t>> IntTensorElements(const Tensor& t, std::string_view what) {
  Tensor flat;
  CHECK(flat.CopyFrom(t, TensorShape({t.NumElements()})));
  return IntTensorValues(flat, what);
}

}  // namespace weir
