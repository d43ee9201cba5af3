// Placement: choosing a device for every node.
//
// Feasible devices for a node are those with a kernel for it that match its
// requested device spec. Nodes colocated by "_class" = ["loc:@other"] share
// one device, and so do a resource's producer and every op that takes it. Today the choice among feasible devices is the default device
// when it is feasible, else the first feasible one; the cost-model placer of
// the placement issue replaces that choice, not this interface.
#pragma once

#include <string>
#include <vector>

#include "weir/graph/graph.h"

namespace weir {

struct DeviceInfo {
  std::string name;  // full name
  std::string type;  // "CPU"
};

// Sets assigned_device on every node. Unsatisfiable requests are an
// InvalidArgument naming the node, its request and the devices available.
// REQUIRES: devices non-empty; default_device indexes it.
Status PlaceGraph(Graph* graph, const std::vector<DeviceInfo>& devices, int default_device);

}  // namespace weir
