// What the oneDNN-backed kernels share: the CPU engine, the oneDNN data
// type of an element type, and oneDNN's exceptions as a Status. oneDNN's
// C++ API throws dnnl::error; callers keep every call into it inside a try
// block and return what it throws through DnnlErrorStatus.
#pragma once

#include <exception>
#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>
#include <type_traits>

#include "weir/base/status.h"
#include "weir/framework/types.h"

namespace weir {

// The process's one oneDNN CPU engine.
const dnnl::engine& DnnlCpuEngine();

// oneDNN's data type for T, float or Eigen::bfloat16.
template <typename T>
constexpr dnnl::memory::data_type DnnlDataType() {
  if constexpr (std::is_same_v<T, float>) {
    return dnnl::memory::data_type::f32;
  } else {
    static_assert(std::is_same_v<T, Eigen::bfloat16>, "oneDNN kernels run float or bfloat16");
    return dnnl::memory::data_type::bf16;
  }
}

// `e`, thrown while doing `what`, as a Status: Unimplemented where oneDNN
// has no implementation for the problem on this CPU (bfloat16 needs at
// least AVX-512), Internal otherwise.
Status DnnlErrorStatus(const std::exception& e, std::string_view what);

}  // namespace weir
