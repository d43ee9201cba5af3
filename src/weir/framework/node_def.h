// NodeDef, FunctionDef and GraphDef in memory: what a graph and the
// functions it calls are made of before they become a Graph. Mirrors
// TensorFlow's protos field for field; graph/graph_def_io converts to and
// from the wire format. Kernels see NodeDefs, never protos.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/framework/op_def.h"

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

// A function (TensorFlow's FunctionDef). Its body's node inputs use the
// function form: "arg_name" for an argument, "node:output_arg:index" for an
// output of a body node, "^node" for control; attrs may be placeholders
// ("$T") bound when the function is instantiated.
struct FunctionDef {
  OpDef signature;  // name, args, attrs of the function; no shape function
  AttrMap attr;     // attrs of the function itself ("_noinline", ...)
  std::map<int, AttrMap> arg_attr;               // by argument index
  std::map<int, int> resource_arg_unique_id;     // by argument index
  std::vector<NodeDef> node_def;
  std::map<std::string, std::string> ret;          // output arg -> "node:out:index"
  std::map<std::string, std::string> control_ret;  // control output -> node
};

// Names the function that computes the gradient of another.
struct GradientDef {
  std::string function_name;
  std::string gradient_func;
};

struct FunctionDefLibrary {
  std::vector<FunctionDef> functions;
  std::vector<GradientDef> gradients;
  bool empty() const { return functions.empty() && gradients.empty(); }
};

struct GraphDef {
  std::vector<NodeDef> nodes;
  FunctionDefLibrary library;
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
