#include "weir/graph/graph_def_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <new>
#include <stdexcept>

#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "proto/op_def.pb.h"
#include "weir/base/file_system.h"
#include "weir/framework/ref_inputs.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/proto_parse.h"

namespace weir {
namespace {

constexpr char kSourceLocationAttr[] = "_source_location";

// A GraphDef nests about 8 messages deep (node, attr, list, tensor, shape,
// dim); function attrs and variant tensors nest without bound. The text
// parser recurses once per level with no limit of its own, so a hostile file
// could overflow the stack: parsing stops at kMaxProtoNesting.
constexpr int kMaxNesting = kMaxProtoNesting;
// Protobuf cannot parse or write a message of 2 GiB or more.
constexpr size_t kMaxGraphDefBytes = std::numeric_limits<int>::max();

Status TooLarge(size_t bytes, const char* what) {
  return errors::InvalidArgument("GraphDef ", what, " of ", bytes,
                                 " bytes is larger than the ", kMaxGraphDefBytes,
                                 " bytes (2 GiB) protobuf can parse");
}

Status OutOfMemory(const char* what, size_t bytes) {
  return errors::ResourceExhausted("out of memory parsing a GraphDef ", what, " of ", bytes,
                                   " bytes");
}

Status DTypeFromWire(int number, DType* out) {
  if (!IsValidDType(number)) {
    return errors::InvalidArgument("dtype ", WireDTypeName(number),
                                   " is not supported by Weir");
  }
  *out = static_cast<DType>(number);
  return Status::OK();
}

Status AttrFromWire(const wire::AttrValue& proto, AttrValue* out);

Status FuncFromWire(const wire::NameAttrList& proto, NameAttrList* out) {
  out->name = proto.name();
  out->attr.clear();
  for (const auto& [name, value_proto] : proto.attr()) {
    AttrValue value;
    Status status = AttrFromWire(value_proto, &value);
    if (!status.ok()) {
      return status.WithContext(StrCat("func '", proto.name(), "' attr '", name, "'"));
    }
    out->attr.emplace(name, std::move(value));
  }
  return Status::OK();
}

void AttrToWire(const AttrValue& value, wire::AttrValue* proto);

void FuncToWire(const NameAttrList& func, wire::NameAttrList* proto) {
  proto->set_name(func.name);
  auto* attrs = proto->mutable_attr();
  for (const auto& [name, value] : func.attr) AttrToWire(value, &(*attrs)[name]);
}

Status ListFromWire(const wire::AttrValue::ListValue& proto, AttrValue::List* out) {
  for (const wire::NameAttrList& func_proto : proto.func()) {
    NameAttrList func;
    WEIR_RETURN_IF_ERROR(FuncFromWire(func_proto, &func));
    out->func.push_back(std::make_shared<const NameAttrList>(std::move(func)));
  }
  out->s.assign(proto.s().begin(), proto.s().end());
  out->i.assign(proto.i().begin(), proto.i().end());
  out->f.assign(proto.f().begin(), proto.f().end());
  out->b.assign(proto.b().begin(), proto.b().end());
  for (int number : proto.type()) {
    DType dtype;
    WEIR_RETURN_IF_ERROR(DTypeFromWire(number, &dtype));
    out->type.push_back(dtype);
  }
  for (const wire::TensorShapeProto& shape_proto : proto.shape()) {
    PartialShape shape;
    WEIR_RETURN_IF_ERROR(ShapeFromProto(shape_proto, &shape));
    out->shape.push_back(std::move(shape));
  }
  for (const wire::TensorProto& tensor_proto : proto.tensor()) {
    Tensor tensor;
    WEIR_RETURN_IF_ERROR(TensorFromProto(tensor_proto, &tensor));
    out->tensor.push_back(std::move(tensor));
  }
  return Status::OK();
}

Status AttrFromWire(const wire::AttrValue& proto, AttrValue* out) {
  switch (proto.value_case()) {
    case wire::AttrValue::kS:
      *out = AttrValue(proto.s());
      return Status::OK();
    case wire::AttrValue::kI:
      *out = AttrValue(static_cast<int64_t>(proto.i()));
      return Status::OK();
    case wire::AttrValue::kF:
      *out = AttrValue(proto.f());
      return Status::OK();
    case wire::AttrValue::kB:
      *out = AttrValue(proto.b());
      return Status::OK();
    case wire::AttrValue::kType: {
      DType dtype;
      WEIR_RETURN_IF_ERROR(DTypeFromWire(proto.type(), &dtype));
      *out = AttrValue(dtype);
      return Status::OK();
    }
    case wire::AttrValue::kShape: {
      PartialShape shape;
      WEIR_RETURN_IF_ERROR(ShapeFromProto(proto.shape(), &shape));
      *out = AttrValue(std::move(shape));
      return Status::OK();
    }
    case wire::AttrValue::kTensor: {
      Tensor tensor;
      WEIR_RETURN_IF_ERROR(TensorFromProto(proto.tensor(), &tensor));
      *out = AttrValue(std::move(tensor));
      return Status::OK();
    }
    case wire::AttrValue::kList: {
      AttrValue::List list;
      WEIR_RETURN_IF_ERROR(ListFromWire(proto.list(), &list));
      *out = AttrValue(std::move(list));
      return Status::OK();
    }
    case wire::AttrValue::kFunc: {
      NameAttrList func;
      WEIR_RETURN_IF_ERROR(FuncFromWire(proto.func(), &func));
      *out = AttrValue(std::move(func));
      return Status::OK();
    }
    case wire::AttrValue::kPlaceholder:
      *out = AttrValue(AttrValue::Placeholder{proto.placeholder()});
      return Status::OK();
    case wire::AttrValue::VALUE_NOT_SET:
      *out = AttrValue();
      return Status::OK();
  }
  return errors::InvalidArgument("unknown AttrValue kind ", static_cast<int>(proto.value_case()));
}

void AttrToWire(const AttrValue& value, wire::AttrValue* proto) {
  proto->Clear();
  if (value.is_s()) {
    proto->set_s(value.s());
  } else if (value.is_i()) {
    proto->set_i(value.i());
  } else if (value.is_f()) {
    proto->set_f(value.f());
  } else if (value.is_b()) {
    proto->set_b(value.b());
  } else if (value.is_type()) {
    proto->set_type(static_cast<wire::DataType>(value.type()));
  } else if (value.is_shape()) {
    ShapeToProto(value.shape(), proto->mutable_shape());
  } else if (value.is_tensor()) {
    // A variant attr keeps only its dtype and shape; reading it back is the
    // error (TensorFromProto refuses variant values).
    static_cast<void>(TensorToProto(value.tensor(), proto->mutable_tensor()));
  } else if (value.is_list()) {
    // mutable_list() marks the list as set even when it stays empty, which
    // is how an empty list differs from no value on the wire.
    wire::AttrValue::ListValue* list = proto->mutable_list();
    const AttrValue::List& l = value.list();
    for (const std::string& s : l.s) list->add_s(s);
    for (int64_t i : l.i) list->add_i(i);
    for (float f : l.f) list->add_f(f);
    for (bool b : l.b) list->add_b(b);
    for (DType t : l.type) list->add_type(static_cast<wire::DataType>(t));
    for (const PartialShape& shape : l.shape) ShapeToProto(shape, list->add_shape());
    for (const Tensor& tensor : l.tensor) {
      static_cast<void>(TensorToProto(tensor, list->add_tensor()));  // as above
    }
    for (const AttrValue::Func& func : l.func) FuncToWire(*func, list->add_func());
  } else if (value.is_func()) {
    FuncToWire(value.func(), proto->mutable_func());
  } else if (value.is_placeholder()) {
    proto->set_placeholder(value.placeholder());
  }
}

Status NodeFromWire(const wire::NodeDef& proto, NodeDef* out) {
  NodeDef node;
  node.name = proto.name();
  node.op = proto.op();
  node.inputs.assign(proto.input().begin(), proto.input().end());
  node.device = proto.device();
  // The source location first, so that errors about other attrs can cite it.
  auto location = proto.attr().find(kSourceLocationAttr);
  if (location != proto.attr().end()) {
    if (location->second.value_case() != wire::AttrValue::kS) {
      return errors::InvalidArgument("node ", node.Describe(), ": attr '", kSourceLocationAttr,
                                     "' must be a string");
    }
    node.source_location = location->second.s();
  }
  for (const auto& [name, value_proto] : proto.attr()) {
    if (name == kSourceLocationAttr) continue;
    AttrValue value;
    Status status = AttrFromWire(value_proto, &value);
    if (!status.ok()) {
      return status.WithContext(StrCat("node ", node.Describe(), " attr '", name, "'"));
    }
    node.attrs.emplace(name, std::move(value));
  }
  *out = std::move(node);
  return Status::OK();
}

void NodeToWire(const NodeDef& node, wire::NodeDef* proto) {
  proto->set_name(node.name);
  proto->set_op(node.op);
  for (const std::string& input : node.inputs) proto->add_input(input);
  proto->set_device(node.device);
  auto* attrs = proto->mutable_attr();
  for (const auto& [name, value] : node.attrs) AttrToWire(value, &(*attrs)[name]);
  if (!node.source_location.empty()) {
    (*attrs)[kSourceLocationAttr].set_s(node.source_location);
  }
}

Status FunctionFromWire(const wire::FunctionDef& proto, FunctionDef* out) {
  FunctionDef def;
  WEIR_RETURN_IF_ERROR(OpDefFromProto(proto.signature(), &def.signature));
  for (const auto& [attr_name, value_proto] : proto.attr()) {
    AttrValue value;
    Status status = AttrFromWire(value_proto, &value);
    if (!status.ok()) return status.WithContext(StrCat("attr '", attr_name, "'"));
    def.attr.emplace(attr_name, std::move(value));
  }
  // Argument indices are uint32 on the wire; anything past the signature's
  // inputs cannot name an argument (and would not fit an int).
  auto arg_index = [&](uint32_t index, const char* what) -> StatusOr<int> {
    if (index >= def.signature.inputs.size()) {
      return errors::InvalidArgument(what, " names argument ", index, " but the function has ",
                                     def.signature.inputs.size(), " arguments");
    }
    return static_cast<int>(index);
  };
  for (const auto& [index, arg_attrs] : proto.arg_attr()) {
    WEIR_ASSIGN_OR_RETURN(int i, arg_index(index, "arg_attr"));
    AttrMap& attrs = def.arg_attr[i];
    for (const auto& [attr_name, value_proto] : arg_attrs.attr()) {
      AttrValue value;
      Status status = AttrFromWire(value_proto, &value);
      if (!status.ok()) {
        return status.WithContext(StrCat("arg_attr ", index, " attr '", attr_name, "'"));
      }
      attrs.emplace(attr_name, std::move(value));
    }
  }
  for (const auto& [index, id] : proto.resource_arg_unique_id()) {
    WEIR_ASSIGN_OR_RETURN(int i, arg_index(index, "resource_arg_unique_id"));
    def.resource_arg_unique_id[i] = static_cast<int>(std::min<uint32_t>(id, INT32_MAX));
  }
  def.node_def.resize(proto.node_def_size());
  for (int i = 0; i < proto.node_def_size(); ++i) {
    WEIR_RETURN_IF_ERROR(NodeFromWire(proto.node_def(i), &def.node_def[i]));
  }
  def.ret.insert(proto.ret().begin(), proto.ret().end());
  def.control_ret.insert(proto.control_ret().begin(), proto.control_ret().end());
  *out = std::move(def);
  return Status::OK();
}

void FunctionToWire(const FunctionDef& def, wire::FunctionDef* proto) {
  OpDefToProto(def.signature, proto->mutable_signature());
  // The signature lists the control outputs that control_ret maps.
  for (const auto& [output, node] : def.control_ret) {
    proto->mutable_signature()->add_control_output(output);
  }
  auto* attrs = proto->mutable_attr();
  for (const auto& [name, value] : def.attr) AttrToWire(value, &(*attrs)[name]);
  for (const auto& [index, arg_attrs] : def.arg_attr) {
    auto* wire_attrs = (*proto->mutable_arg_attr())[static_cast<uint32_t>(index)].mutable_attr();
    for (const auto& [name, value] : arg_attrs) AttrToWire(value, &(*wire_attrs)[name]);
  }
  for (const auto& [index, id] : def.resource_arg_unique_id) {
    (*proto->mutable_resource_arg_unique_id())[static_cast<uint32_t>(index)] =
        static_cast<uint32_t>(id);
  }
  for (const NodeDef& node : def.node_def) NodeToWire(node, proto->add_node_def());
  proto->mutable_ret()->insert(def.ret.begin(), def.ret.end());
  proto->mutable_control_ret()->insert(def.control_ret.begin(), def.control_ret.end());
}

Status LibraryFromWire(const wire::FunctionDefLibrary& proto, FunctionDefLibrary* out) {
  out->functions.resize(proto.function_size());
  for (int i = 0; i < proto.function_size(); ++i) {
    Status status = FunctionFromWire(proto.function(i), &out->functions[i]);
    if (!status.ok()) {
      return status.WithContext(StrCat("function '", proto.function(i).signature().name(),
                                       "' of the GraphDef's library"));
    }
  }
  for (const wire::GradientDef& gradient : proto.gradient()) {
    out->gradients.push_back({gradient.function_name(), gradient.gradient_func()});
  }
  // registered_gradients name gradient functions of op types, which Weir
  // takes from its own gradient registry; they are not kept.
  return Status::OK();
}

void LibraryToWire(const FunctionDefLibrary& library, wire::FunctionDefLibrary* proto) {
  for (const FunctionDef& def : library.functions) FunctionToWire(def, proto->add_function());
  for (const GradientDef& gradient : library.gradients) {
    wire::GradientDef* g = proto->add_gradient();
    g->set_function_name(gradient.function_name);
    g->set_gradient_func(gradient.gradient_func);
  }
}

bool IsTextPath(const std::string& path) { return EndsWith(path, ".pbtxt"); }

// Serialized size of `proto`, or an error above protobuf's 2 GiB limit.
Status CheckEncodable(const wire::GraphDef& proto) {
  size_t bytes = proto.ByteSizeLong();
  if (bytes > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return errors::InvalidArgument("GraphDef of ", proto.node_size(), " nodes needs ", bytes,
                                   " bytes, more than protobuf's 2 GiB limit");
  }
  return Status::OK();
}

std::string SerializeDeterministic(const wire::GraphDef& proto) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    // Map order would otherwise vary with hashing, and equal graphs should
    // give equal files (caches and checksums compare bytes).
    coded.SetSerializationDeterministic(true);
    CHECK(proto.SerializeToCodedStream(&coded)) << "could not serialize a GraphDef";
  }
  return bytes;
}

}  // namespace

Status GraphDefFromProto(const wire::GraphDef& proto, GraphDef* out) {
  GraphDef graph;
  int i = 0;
  try {
    graph.nodes.resize(proto.node_size());
    for (; i < proto.node_size(); ++i) {
      WEIR_RETURN_IF_ERROR(NodeFromWire(proto.node(i), &graph.nodes[i]));
    }
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("out of memory converting GraphDef node ", i, " of ",
                                     proto.node_size(),
                                     i < proto.node_size() ? " '" + proto.node(i).name() + "'"
                                                           : std::string());
  } catch (const std::length_error&) {
    return errors::ResourceExhausted("a container grew past its maximum size converting GraphDef "
                                     "node ", i, " of ", proto.node_size());
  }
  if (proto.has_library()) {
    try {
      WEIR_RETURN_IF_ERROR(LibraryFromWire(proto.library(), &graph.library));
    } catch (const std::bad_alloc&) {
      return errors::ResourceExhausted("out of memory converting the GraphDef's function library");
    }
  }
  if (proto.has_versions()) {
    graph.producer = proto.versions().producer();
    graph.min_consumer = proto.versions().min_consumer();
    graph.bad_consumers.assign(proto.versions().bad_consumers().begin(),
                               proto.versions().bad_consumers().end());
  } else {
    // Producers from before VersionDef wrote only the deprecated field.
    graph.producer = proto.version();
  }
  *out = std::move(graph);
  return Status::OK();
}

void GraphDefToProto(const GraphDef& graph, wire::GraphDef* proto) {
  proto->Clear();
  for (const NodeDef& node : graph.nodes) NodeToWire(node, proto->add_node());
  if (!graph.library.empty()) LibraryToWire(graph.library, proto->mutable_library());
  proto->mutable_versions()->set_producer(graph.producer);
  proto->mutable_versions()->set_min_consumer(graph.min_consumer);
  for (int bad : graph.bad_consumers) proto->mutable_versions()->add_bad_consumers(bad);
}

namespace {

Status ArgFromWire(const wire::OpDef::ArgDef& proto, ArgDef* out) {
  out->name = proto.name();
  out->type = DT_INVALID;
  if (proto.type() != 0) WEIR_RETURN_IF_ERROR(DTypeFromWire(proto.type(), &out->type));
  out->type_attr = proto.type_attr();
  out->number_attr = proto.number_attr();
  out->type_list_attr = proto.type_list_attr();
  return Status::OK();
}

void ArgToWire(const ArgDef& arg, wire::OpDef::ArgDef* proto) {
  proto->set_name(arg.name);
  proto->set_type(static_cast<wire::DataType>(arg.type));
  proto->set_type_attr(arg.type_attr);
  proto->set_number_attr(arg.number_attr);
  proto->set_type_list_attr(arg.type_list_attr);
}

Status AttrDefFromWire(const wire::OpDef::AttrDef& proto, AttrDef* out) {
  out->name = proto.name();
  out->type = proto.type();
  out->has_default = proto.has_default_value();
  if (out->has_default) WEIR_RETURN_IF_ERROR(AttrFromWire(proto.default_value(), &out->default_value));
  out->has_minimum = proto.has_minimum();
  out->minimum = proto.minimum();
  if (proto.has_allowed_values() && proto.allowed_values().has_list()) {
    // Allowed dtypes that Weir lacks (TensorFlow's quantized types in every
    // numbertype list) are left out: no Weir tensor has them, and a
    // producer's op list must still parse.
    const wire::AttrValue::ListValue& allowed = proto.allowed_values().list();
    for (int number : allowed.type()) {
      if (IsValidDType(number)) out->allowed_types.push_back(static_cast<DType>(number));
    }
    if (allowed.type_size() > 0 && out->allowed_types.empty()) {
      return errors::InvalidArgument("allows only dtypes Weir does not support (",
                                     WireDTypeName(allowed.type(0)), "...)");
    }
    out->allowed_strings.assign(allowed.s().begin(), allowed.s().end());
  }
  return Status::OK();
}

}  // namespace

Status OpDefFromProto(const wire::OpDef& proto, OpDef* out) {
  OpDef op;
  op.name = proto.name();
  auto context = [&](std::string_view what, const std::string& name) {
    return StrCat("op '", op.name, "' ", what, " '", name, "'");
  };
  for (const auto& arg : proto.input_arg()) {
    Status status = ArgFromWire(arg, &op.inputs.emplace_back());
    if (!status.ok()) return status.WithContext(context("input", arg.name()));
  }
  for (const auto& arg : proto.output_arg()) {
    Status status = ArgFromWire(arg, &op.outputs.emplace_back());
    if (!status.ok()) return status.WithContext(context("output", arg.name()));
  }
  for (const auto& attr : proto.attr()) {
    Status status = AttrDefFromWire(attr, &op.attrs.emplace_back());
    if (!status.ok()) return status.WithContext(context("attr", attr.name()));
  }
  op.is_stateful = proto.is_stateful();
  op.doc = proto.description().empty() ? proto.summary()
                                        : StrCat(proto.summary(), "\n\n", proto.description());
  *out = std::move(op);
  return Status::OK();
}

void OpDefToProto(const OpDef& op, wire::OpDef* proto) {
  proto->Clear();
  proto->set_name(op.name);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    wire::OpDef::ArgDef* arg = proto->add_input_arg();
    ArgToWire(op.inputs[i], arg);
    // What TensorFlow passes by reference (framework/ref_inputs.h).
    if (IsRefInputArg(op, static_cast<int>(i))) arg->set_is_ref(true);
  }
  for (const ArgDef& arg : op.outputs) ArgToWire(arg, proto->add_output_arg());
  for (const AttrDef& attr : op.attrs) {
    wire::OpDef::AttrDef* a = proto->add_attr();
    a->set_name(attr.name);
    a->set_type(attr.type);
    if (attr.has_default) AttrToWire(attr.default_value, a->mutable_default_value());
    a->set_has_minimum(attr.has_minimum);
    a->set_minimum(attr.minimum);
    if (!attr.allowed_types.empty() || !attr.allowed_strings.empty()) {
      wire::AttrValue::ListValue* list = a->mutable_allowed_values()->mutable_list();
      for (DType t : attr.allowed_types) list->add_type(static_cast<wire::DataType>(t));
      for (const std::string& s : attr.allowed_strings) list->add_s(s);
    }
  }
  proto->set_is_stateful(op.is_stateful);
  size_t newline = op.doc.find('\n');
  proto->set_summary(op.doc.substr(0, newline));
  if (newline != std::string::npos) {
    size_t start = op.doc.find_first_not_of('\n', newline);
    if (start != std::string::npos) proto->set_description(op.doc.substr(start));
  }
}

StatusOr<std::vector<OpDef>> ParseOpList(std::string_view binary) {
  if (binary.size() > kMaxGraphDefBytes) {
    return errors::InvalidArgument("OpList of ", binary.size(),
                                   " bytes is larger than protobuf can parse (2 GiB)");
  }
  wire::OpList proto;
  try {
    if (!ParseBinaryProto(binary, &proto)) {
      return errors::InvalidArgument("could not parse an OpList from ", binary.size(), " bytes");
    }
    std::vector<OpDef> ops(proto.op_size());
    for (int i = 0; i < proto.op_size(); ++i) {
      WEIR_RETURN_IF_ERROR(OpDefFromProto(proto.op(i), &ops[i]));
    }
    return ops;
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("out of memory parsing an OpList of ", binary.size(),
                                     " bytes");
  }
}

std::string SerializeOpList(const std::vector<const OpDef*>& ops) {
  wire::OpList proto;
  for (const OpDef* op : ops) OpDefToProto(*op, proto.add_op());
  std::string bytes;
  CHECK(proto.SerializeToString(&bytes)) << "could not serialize an OpList";
  return bytes;
}

StatusOr<GraphDef> ParseGraphDef(std::string_view binary) {
  if (binary.size() > kMaxGraphDefBytes) return TooLarge(binary.size(), "encoding");
  wire::GraphDef proto;
  try {
    if (!ParseBinaryProto(binary, &proto)) {
      return errors::InvalidArgument("could not parse GraphDef from ", binary.size(),
                                     " bytes: not a binary GraphDef, or nested more than ",
                                     kMaxNesting, " messages deep");
    }
  } catch (const std::bad_alloc&) {
    return OutOfMemory("encoding", binary.size());
  }
  GraphDef graph;
  WEIR_RETURN_IF_ERROR(GraphDefFromProto(proto, &graph));
  return graph;
}

StatusOr<GraphDef> ParseGraphDefText(std::string_view text) {
  if (text.size() > kMaxGraphDefBytes) return TooLarge(text.size(), "text");
  wire::GraphDef proto;
  try {
    std::string error;
    if (!ParseTextProto(text, &proto, &error)) {
      return errors::InvalidArgument("could not parse GraphDef text: ", error);
    }
  } catch (const std::bad_alloc&) {
    return OutOfMemory("text", text.size());
  }
  GraphDef graph;
  WEIR_RETURN_IF_ERROR(GraphDefFromProto(proto, &graph));
  return graph;
}

std::string SerializeGraphDef(const GraphDef& graph) {
  wire::GraphDef proto;
  GraphDefToProto(graph, &proto);
  CHECK_OK(CheckEncodable(proto));
  return SerializeDeterministic(proto);
}

std::string SerializeGraphDefText(const GraphDef& graph) {
  wire::GraphDef proto;
  GraphDefToProto(graph, &proto);
  std::string text;
  CHECK(google::protobuf::TextFormat::PrintToString(proto, &text));
  return text;
}

StatusOr<GraphDef> ReadGraphDefFile(const std::string& path) {
  // Refuse an oversized file before reading it all into memory.
  std::error_code error;
  uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxGraphDefBytes) {
    return TooLarge(size, "file").WithContext(StrCat("reading '", path, "'"));
  }
  WEIR_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  StatusOr<GraphDef> graph =
      IsTextPath(path) ? ParseGraphDefText(contents) : ParseGraphDef(contents);
  if (!graph.ok()) return graph.status().WithContext(StrCat("reading '", path, "'"));
  return graph;
}

Status WriteGraphDefFile(const std::string& path, const GraphDef& graph) {
  wire::GraphDef proto;
  GraphDefToProto(graph, &proto);
  std::string contents;
  if (IsTextPath(path)) {
    CHECK(google::protobuf::TextFormat::PrintToString(proto, &contents));
  } else {
    Status status = CheckEncodable(proto);
    if (!status.ok()) return status.WithContext(StrCat("writing '", path, "'"));
    contents = SerializeDeterministic(proto);
  }
  return WriteStringToFileAtomic(path, contents);
}

}  // namespace weir
