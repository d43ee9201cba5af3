// NodeDef and GraphDef in memory: what a graph is made of before it becomes
// a Graph. Mirrors TensorFlow's protos field for field; graph/graph_def_io
// converts to and from the wire format. Kernels see NodeDefs, never protos.
#pragma once

#include <string>
#include <vector>

#include "weir/framework/attr_value.h"

namespace weir {

struct NodeDef {
  std::string name;
  std::string op;
  // "node", "node:port" for data inputs; "^node" for control inputs, which
  // come after all data inputs.
  std::vector<std::string> inputs;
  std::string device;  // requested device spec, may be partial or empty
  AttrMap attrs;
  // Where the user built the node ("model.cc:42"); empty if unknown. Stored
  // on the wire as the string attr "_source_location".
  std::string source_location;

  // "'name' (Op)" or "'name' (Op) created at file:line", for error messages.
  std::string Describe() const;
};

struct GraphDef {
  std::vector<NodeDef> nodes;
  int producer = 0;      // VersionDef.producer
  int min_consumer = 0;  // VersionDef.min_consumer
  std::vector<int> bad_consumers;  // VersionDef.bad_consumers
};

// A tensor reference "node:port" split into its parts. Control inputs
// ("^node") have port -1.
struct TensorId {
  std::string node;
  int port = 0;
  bool operator==(const TensorId& o) const { return node == o.node && port == o.port; }
  std::string ToString() const;
};

// Parses "node", "node:3" or "^node". Errors name the bad text.
StatusOr<TensorId> ParseTensorName(std::string_view text);

}  // namespace weir
