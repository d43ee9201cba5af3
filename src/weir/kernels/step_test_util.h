// Test helper for kernels that keep per-step resources (stacks,
// TensorArrays): runs kernels one after another as nodes of one step, all
// sharing the step's ResourceMgr, with RunKernel's checks
// (kernel_test_util.h: output dtypes, and the shape function agreeing).
// Test-only.
#pragma once

#include <string>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/framework/resource_mgr.h"
#include "weir/framework/tensor.h"

namespace weir {

class TestStep {
 public:
  // Runs node `name` of `op` on `inputs` in this step.
  StatusOr<std::vector<Tensor>> Run(const std::string& op, AttrMap attrs,
                                    std::vector<Tensor> inputs,
                                    const std::string& name = "test_node");
  // The first output of Run (empty if it has none); a test failure on error.
  Tensor RunOrDie(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs);

  ResourceMgr* resources() { return &resources_; }

 private:
  ResourceMgr resources_;
};

}  // namespace weir
