// Partitioning: cutting a placed graph into one graph per device, joined by
// _Send/_Recv pairs. Each tensor that crosses to a device is sent once,
// however many consumers it has there; a control edge across devices
// becomes a tiny tensor sent from a node that runs after the source.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "weir/framework/node_def.h"
#include "weir/graph/graph.h"

namespace weir {

// Device name -> its partition. REQUIRES: every node has an assigned device.
// `incarnation` gives each device's incarnation number for rendezvous keys.
Status PartitionGraph(const Graph& graph,
                      const std::function<uint64_t(const std::string&)>& incarnation,
                      std::map<std::string, GraphDef>* partitions);

}  // namespace weir
