// Kernels for float16 and bfloat16 that compute in float32: the kernel
// converts its 16-bit inputs to float, runs the op's float kernel on them
// and rounds the float outputs back to the 16-bit type (round to nearest
// even). This is what TensorFlow's CPU kernels do for these types (Eigen's
// half arithmetic widens every operation to float; reductions accumulate in
// float), and it adds no Eigen instantiation per op: only the conversions.
//
// Contract of a kernel registered here for (op, dtype):
//   - every type attr named in `attrs` whose value is `dtype` is float for
//     the float kernel; inputs and outputs of those attrs are converted,
//     all others (indices, labels, float scale/mean of FusedBatchNorm) pass
//     through unchanged;
//   - errors are the float kernel's, with its dtype shown as `dtype`;
//   - the op must be a pure function of its inputs (no ref or resource
//     inputs it mutates: a converted copy would be mutated instead).
#pragma once

#include <initializer_list>
#include <string>

#include "weir/framework/types.h"

namespace weir {

class KernelRegistry;

// How the float kernel may be split (same results, converting cache-sized
// chunks instead of whole float copies) when all inputs have one shape:
// kElementwise: output element i depends only on element i of each input;
// kRows: output row r (dim 0) depends only on row r of each input.
enum class FloatCompute { kWhole, kElementwise, kRows };

// Registers the float-computing kernel of `op` for T=`dtype` (DT_HALF or
// DT_BFLOAT16) on CPU, unless a kernel for that dtype exists already.
// REQUIRES: the op's float kernel is registered in `registry` first (the
// float kernel is looked up there each time a kernel is built).
void RegisterComputeInFloat(KernelRegistry* registry, const std::string& op, DType dtype,
                            FloatCompute how = FloatCompute::kWhole,
                            std::initializer_list<const char*> attrs = {"T"});

}  // namespace weir
