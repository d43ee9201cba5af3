// GraphDef import and export in TensorFlow's formats: binary protobuf (.pb)
// and protobuf text format (.pbtxt), schemas in proto/graph.proto.
//
// A node's source_location travels as the string attr "_source_location".
// The function library (GraphDef.library) travels with the graph: function
// signatures as OpDefs, bodies as NodeDefs in function form, func,
// list(func) and placeholder attrs. A signature's control_output list is
// written from control_ret's keys; registered_gradients are not kept.
// Nothing here checks that a function is well formed (FunctionLibrary does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/node_def.h"
#include "weir/framework/op_def.h"

namespace weir::wire {
class GraphDef;
class OpDef;
}  // namespace weir::wire

namespace weir {

// Decodes a binary GraphDef. InvalidArgument if the bytes do not parse or a
// value is not valid (unknown dtypes, bad shapes or tensors), naming the
// node (or function) and attr.
StatusOr<GraphDef> ParseGraphDef(std::string_view binary);
// The same for the text format; parse errors give line and column.
StatusOr<GraphDef> ParseGraphDefText(std::string_view text);

// Binary encoding, deterministic: equal graphs give equal bytes.
// REQUIRES: the encoding is under 2 GiB (protobuf's limit).
std::string SerializeGraphDef(const GraphDef& graph);
// Text format, for reading and for .pbtxt files.
std::string SerializeGraphDefText(const GraphDef& graph);

// Reads a graph file: text format when `path` ends in ".pbtxt", binary
// otherwise. Errors name the path.
StatusOr<GraphDef> ReadGraphDefFile(const std::string& path);
// Writes a graph file atomically (WriteStringToFileAtomic), in the format
// chosen by the extension as for ReadGraphDefFile.
Status WriteGraphDefFile(const std::string& path, const GraphDef& graph);

// Conversion to and from the generated message, for code that embeds a
// GraphDef in another message (distributed runtime).
Status GraphDefFromProto(const wire::GraphDef& proto, GraphDef* out);
void GraphDefToProto(const GraphDef& graph, wire::GraphDef* proto);

// OpDefs on the wire (proto/op_def.proto): producers' op lists, function
// signatures. From the wire, `doc` is summary + "\n\n" + description, there
// is no shape function, is_ref args are read as plain ones (Weir has no
// reference tensors), and allowed dtypes Weir lacks (quantized) are left out. InvalidArgument, naming the op and attr, for bad
// dtypes or default values. The OpDef is not checked for consistency (that
// arg types name attrs of the right kind): callers that run it do that.
Status OpDefFromProto(const wire::OpDef& proto, OpDef* out);
void OpDefToProto(const OpDef& op, wire::OpDef* proto);
// A binary OpList (TensorFlow's registry dump, a stripped_op_list).
StatusOr<std::vector<OpDef>> ParseOpList(std::string_view binary);
std::string SerializeOpList(const std::vector<const OpDef*>& ops);

}  // namespace weir
