// Small builders shared by the graph layer's tests. Header-only; tests only.
#pragma once

#include <string>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/node_def.h"
#include "weir/framework/tensor.h"
#include "weir/graph/placer.h"

namespace weir {

// A node of float ops: a Const holds 1.0f, a NoOp has no attrs, any other op
// gets T = float.
inline NodeDef FloatNode(const std::string& name, const std::string& op,
                         std::vector<std::string> inputs, const std::string& device = "") {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.device = device;
  if (op == "Const") {
    def.attrs["dtype"] = DT_FLOAT;
    def.attrs["value"] = Tensor::Scalar<float>(1);
  } else if (op != "NoOp") {
    def.attrs["T"] = DT_FLOAT;
  }
  return def;
}

// Places every node on its requested device, else the first device (no
// cost model), with the global kernel registry: tests of the passes after
// placement want placement out of the way.
inline Status PlaceOnRequestedDevices(Graph* graph, const std::vector<DeviceInfo>& devices) {
  PlacementOptions options;
  options.kernels = KernelRegistry::Global();
  options.simulate = false;
  return PlaceGraph(graph, devices, options);
}

}  // namespace weir
