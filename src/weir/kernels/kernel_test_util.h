// Test helpers for kernels: run one op's CPU kernel on given inputs, the way
// the executor would, without building a graph.
//
//   StatusOr<std::vector<Tensor>> out =
//       RunKernel("MatMul", {{"T", DT_FLOAT}}, {a, b});
//
// Test-only: *_test_util.cc files build into the test binary (which links
// weir_runtime for CpuDevice), never into the kernels library.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/framework/tensor.h"
#include "weir/ops/op_test_util.h"

namespace weir {

class Device;
class OpKernel;

// The shared test device: "/job:localhost/replica:0/task:0/device:CPU:0"
// with two intra-op threads.
Device* TestCpuDevice();

// Builds node `name` of `op` with `attrs` (defaults added, validated) and
// `num_inputs` inputs, and creates its kernel on TestCpuDevice().
StatusOr<std::unique_ptr<OpKernel>> CreateTestKernel(const std::string& op, AttrMap attrs,
                                                     int num_inputs,
                                                     const std::string& name = "test_node");
// The same on `device` (for instance one with another intra-op thread count).
StatusOr<std::unique_ptr<OpKernel>> CreateTestKernelOn(Device* device, const std::string& op,
                                                       AttrMap attrs, int num_inputs,
                                                       const std::string& name = "test_node");

// Runs `kernel`, created on `device`, once on `inputs` with the checks of
// RunKernel below; a kernel may be run any number of times (stateful
// kernels continue their state).
StatusOr<std::vector<Tensor>> ComputeTestKernel(OpKernel* kernel, Device* device,
                                                std::vector<Tensor> inputs);

// Builds node `name` of `op` with `attrs` (defaults added, validated),
// creates its CPU kernel, runs Compute on `inputs` and returns the outputs.
// Registers all ops and kernels on first use. The op's shape function is run
// too, with every input's shape and value known: if it fails where the
// kernel succeeded, or disagrees with an output shape, the result is an
// Internal error, so every kernel test also checks the shape function.
StatusOr<std::vector<Tensor>> RunKernel(const std::string& op, AttrMap attrs,
                                        std::vector<Tensor> inputs,
                                        const std::string& name = "test_node");

// The elements of a real-valued tensor (any integer, float or bool dtype)
// as doubles, for comparing with references computed in double.
std::vector<double> ToDoubles(const Tensor& t);

}  // namespace weir
