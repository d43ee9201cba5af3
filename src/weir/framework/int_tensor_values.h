// The values of small integer tensors that kernels and shape functions read
// as arguments (axes, shapes, paddings, sizes), as int64.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "weir/base/status.h"

namespace weir {

class Tensor;

// The values of an int8, int16, int32 or int64 tensor of rank 0 or 1, as
// int64.
// `what` names the tensor in the error ("Sum: axes").
StatusOr<std::vector<int64_t>> IntTensorValues(const Tensor& t, std::string_view what);

// The same for a tensor of any rank, flattened.
StatusOr<std::vector<int64_t>> IntTensorElements(const Tensor& t, std::string_view what);

}  // namespace weir
