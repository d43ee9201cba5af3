#include "weir/graph/graph_def_io.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "proto/op_def.pb.h"
#include "weir/base/file_system.h"
#include "weir/graph/function_library.h"
#include "weir/graph/function_test_util.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

// "08 01" -> the bytes 0x08 0x01.
std::string Hex(std::string_view text) {
  std::string bytes;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    bytes.push_back(static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
    i += 2;
  }
  return bytes;
}

void ExpectGraphsEqual(const GraphDef& a, const GraphDef& b) {
  EXPECT_EQ(a.producer, b.producer);
  EXPECT_EQ(a.min_consumer, b.min_consumer);
  EXPECT_EQ(a.bad_consumers, b.bad_consumers);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t n = 0; n < a.nodes.size(); ++n) {
    const NodeDef& x = a.nodes[n];
    const NodeDef& y = b.nodes[n];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.source_location, y.source_location);
    ASSERT_EQ(x.attrs.size(), y.attrs.size()) << x.name;
    for (const auto& [name, value] : x.attrs) {
      auto it = y.attrs.find(name);
      ASSERT_NE(it, y.attrs.end()) << x.name << " lacks " << name;
      EXPECT_TRUE(value == it->second)
          << x.name << "." << name << ": " << value.DebugString() << " vs "
          << it->second.DebugString();
    }
  }
}

// One node per attr kind, plus inputs, devices and a source location.
GraphDef EveryAttrKind() {
  GraphDef g;
  g.producer = 1205;
  g.min_consumer = 12;
  g.bad_consumers = {3, 1204};

  NodeDef scalars;
  scalars.name = "scalars";
  scalars.op = "Everything";
  scalars.device = "/job:worker/task:1/device:CPU:0";
  scalars.source_location = "model.cc:42";
  scalars.attrs["s"] = AttrValue(std::string("bytes\0\xff", 7));
  scalars.attrs["i"] = AttrValue(int64_t{-1} << 40);
  scalars.attrs["f"] = AttrValue(0.1f);
  scalars.attrs["b"] = AttrValue(true);
  scalars.attrs["type"] = AttrValue(DT_BFLOAT16);
  scalars.attrs["shape"] = AttrValue(PartialShape({-1, 28, 28, 1}));
  scalars.attrs["unknown_shape"] = AttrValue(PartialShape::UnknownRank());
  scalars.attrs["scalar_shape"] = AttrValue(PartialShape({}));
  scalars.attrs["tensor"] = AttrValue(Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  scalars.attrs["string_tensor"] = AttrValue(Tensor::FromVector<std::string>({"a", "b"}));
  scalars.attrs["none"] = AttrValue();
  g.nodes.push_back(scalars);

  NodeDef lists;
  lists.name = "lists";
  lists.op = "Everything";
  lists.inputs = {"scalars", "scalars:1", "^other"};
  lists.attrs["s"] = AttrValue(std::vector<std::string>{"x", "", "yz"});
  lists.attrs["i"] = AttrValue(std::vector<int64_t>{1, 2, 2, 1});
  lists.attrs["f"] = AttrValue(std::vector<float>{0.5f, -1e30f});
  AttrValue::List bools;
  bools.b = {true, false, true};
  lists.attrs["b"] = AttrValue(bools);
  lists.attrs["type"] = AttrValue(std::vector<DType>{DT_FLOAT, DT_INT64, DT_STRING, DT_RESOURCE});
  lists.attrs["shape"] =
      AttrValue(std::vector<PartialShape>{PartialShape(), PartialShape({3}), PartialShape({})});
  AttrValue::List tensors;
  tensors.tensor = {Tensor::Scalar<int32_t>(7), Tensor::FromVector<double>({1.5, 2.5})};
  lists.attrs["tensor"] = AttrValue(tensors);
  lists.attrs["empty"] = AttrValue(AttrValue::List());
  g.nodes.push_back(lists);

  NodeDef other;
  other.name = "other";
  other.op = "NoOp";
  g.nodes.push_back(other);
  return g;
}

TEST(GraphDefIoTest, BinaryRoundTripKeepsEveryAttrKind) {
  GraphDef g = EveryAttrKind();
  StatusOr<GraphDef> back = ParseGraphDef(SerializeGraphDef(g));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectGraphsEqual(*back, g);
  // An empty list stays a list, distinct from no value.
  EXPECT_TRUE(back->nodes[1].attrs.at("empty").is_list());
  EXPECT_FALSE(back->nodes[0].attrs.at("none").has_value());
}

TEST(GraphDefIoTest, TextRoundTripKeepsEveryAttrKind) {
  GraphDef g = EveryAttrKind();
  std::string text = SerializeGraphDefText(g);
  EXPECT_NE(text.find("name: \"scalars\""), std::string::npos) << text;
  StatusOr<GraphDef> back = ParseGraphDefText(text);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectGraphsEqual(*back, g);
}

TEST(GraphDefIoTest, SerializationIsDeterministic) {
  GraphDef g = EveryAttrKind();
  std::string first = SerializeGraphDef(g);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(SerializeGraphDef(*ParseGraphDef(first)), first);
}

TEST(GraphDefIoTest, SourceLocationTravelsAsAttr) {
  GraphDef g = EveryAttrKind();
  wire::GraphDef proto;
  GraphDefToProto(g, &proto);
  EXPECT_EQ(proto.node(0).attr().at("_source_location").s(), "model.cc:42");
  EXPECT_EQ(proto.node(1).attr().count("_source_location"), 0u);
  EXPECT_EQ(proto.versions().producer(), 1205);
  EXPECT_EQ(proto.versions().min_consumer(), 12);

  GraphDef back;
  ASSERT_TRUE(GraphDefFromProto(proto, &back).ok());
  EXPECT_EQ(back.nodes[0].source_location, "model.cc:42");
  EXPECT_EQ(back.nodes[0].attrs.count("_source_location"), 0u);
}

// Bytes built from the protobuf encoding rules (tag = field << 3 | wire
// type), as TensorFlow would write them.
TEST(GraphDefIoTest, DecodesHandBuiltBytes) {
  // node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
  // versions { producer: 27 }
  //   0a 17           GraphDef.node, 23 bytes
  //     0a 01 61        name "a"
  //     12 05 ...       op "Const"
  //     2a 0b           attr map entry, 11 bytes
  //       0a 05 ...       key "dtype"
  //       12 02 30 01     value: AttrValue.type (field 6) = 1
  //   22 02 08 1b     GraphDef.versions { producer (1) = 27 }
  StatusOr<GraphDef> g = ParseGraphDef(
      Hex("0a 17 0a 01 61 12 05 43 6f 6e 73 74 2a 0b 0a 05 64 74 79 70 65 12 02 30 01"
          " 22 02 08 1b"));
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].name, "a");
  EXPECT_EQ(g->nodes[0].op, "Const");
  EXPECT_TRUE(g->nodes[0].attrs.at("dtype") == AttrValue(DT_FLOAT));
  EXPECT_EQ(g->producer, 27);

  // node { name: "b" op: "Conv2D" input: "a" input: "^c"
  //        attr { key: "strides" value { list { i: [1, 2, 2, 1] } } }
  //        attr { key: "padding" value { s: "SAME" } } }
  // The list's ints are packed: 1a 04 01 02 02 01 (ListValue.i, field 3).
  g = ParseGraphDef(
      Hex("0a 3a 0a 01 62 12 06 43 6f 6e 76 32 44 1a 01 61 1a 02 5e 63"
          " 2a 13 0a 07 73 74 72 69 64 65 73 12 08 0a 06 1a 04 01 02 02 01"
          " 2a 11 0a 07 70 61 64 64 69 6e 67 12 06 12 04 53 41 4d 45"));
  ASSERT_TRUE(g.ok()) << g.status();
  const NodeDef& b = g->nodes[0];
  EXPECT_EQ(b.inputs, (std::vector<std::string>{"a", "^c"}));
  EXPECT_TRUE(b.attrs.at("strides") == AttrValue(std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_TRUE(b.attrs.at("padding") == AttrValue("SAME"));
  EXPECT_EQ(g->producer, 0);
}

TEST(GraphDefIoTest, ReadsDeprecatedVersionField) {
  // GraphDef.version (field 3) = 9, no versions message.
  StatusOr<GraphDef> g = ParseGraphDef(Hex("18 09"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->producer, 9);
}

TEST(GraphDefIoTest, IgnoresDebugInfo) {
  wire::GraphDef proto;
  wire::NodeDef* node = proto.add_node();
  node->set_name("n");
  node->set_op("NoOp");
  node->mutable_experimental_debug_info()->add_original_node_names("orig");
  StatusOr<GraphDef> g = ParseGraphDef(proto.SerializeAsString());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->nodes.size(), 1u);
}

TEST(GraphDefIoTest, ParsesTextFormat) {
  StatusOr<GraphDef> g = ParseGraphDefText(R"pb(
    node {
      name: "c"
      op: "Const"
      device: "/device:CPU:0"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_FLOAT
            tensor_shape { dim { size: 3 } }
            float_val: 1.5
          }
        }
      }
      attr { key: "_source_location" value { s: "train.py:7" } }
    }
    node { name: "n" op: "Neg" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
    versions { producer: 3 min_consumer: 1 }
  )pb");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0].device, "/device:CPU:0");
  EXPECT_EQ(g->nodes[0].source_location, "train.py:7");
  EXPECT_TRUE(g->nodes[0].attrs.at("value").tensor().ContentEquals(
      Tensor::FromVector<float>({1.5f, 1.5f, 1.5f})));
  EXPECT_EQ(g->nodes[1].inputs, std::vector<std::string>{"c"});
  EXPECT_EQ(g->producer, 3);
  EXPECT_EQ(g->min_consumer, 1);
}

void ExpectError(const StatusOr<GraphDef>& g, Code code,
                 const std::vector<std::string>& fragments) {
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), code) << g.status();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(g.status().message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << g.status().message();
  }
}

TEST(GraphDefIoTest, RejectsBytesThatDoNotParse) {
  // A node field claiming 5 bytes with 2 present.
  ExpectError(ParseGraphDef(Hex("0a 05 0a 01")), Code::kInvalidArgument,
              {"could not parse GraphDef", "4 bytes"});
  ExpectError(ParseGraphDef(Hex("ff ff ff")), Code::kInvalidArgument,
              {"could not parse GraphDef"});
}

TEST(GraphDefIoTest, RejectsBadText) {
  ExpectError(ParseGraphDefText("node {\n  name: \"a\"\n  op: 3\n}"), Code::kInvalidArgument,
              {"could not parse GraphDef text", "line 3"});
  ExpectError(ParseGraphDefText("node { nmae: \"a\" }"), Code::kInvalidArgument,
              {"nmae"});
}

TEST(GraphDefIoTest, FunctionAndPlaceholderAttrsRoundTrip) {
  StatusOr<GraphDef> g = ParseGraphDefText(R"pb(node {
                                                  name: "call"
                                                  op: "PartitionedCall"
                                                  attr {
                                                    key: "f"
                                                    value {
                                                      func {
                                                        name: "fn"
                                                        attr { key: "T" value { type: DT_INT32 } }
                                                        attr { key: "U" value { placeholder: "V" } }
                                                      }
                                                    }
                                                  }
                                                  attr { key: "DstT" value { placeholder: "T" } }
                                                  attr {
                                                    key: "fs"
                                                    value { list { func { name: "g" } func { name: "h" } } }
                                                  }
                                                })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  const AttrMap& attrs = g->nodes[0].attrs;
  ASSERT_TRUE(attrs.at("f").is_func());
  EXPECT_EQ(attrs.at("f").func().name, "fn");
  EXPECT_EQ(attrs.at("f").func().attr.at("T").type(), DT_INT32);
  EXPECT_EQ(attrs.at("f").func().attr.at("U").placeholder(), "V");
  ASSERT_TRUE(attrs.at("DstT").is_placeholder());
  EXPECT_EQ(attrs.at("DstT").placeholder(), "T");
  ASSERT_EQ(attrs.at("fs").list().func.size(), 2u);
  EXPECT_EQ(attrs.at("fs").list().func[1]->name, "h");
  EXPECT_EQ(attrs.at("fs").KindName(), "list(func)");
  for (bool text : {false, true}) {
    StatusOr<GraphDef> back = text ? ParseGraphDefText(SerializeGraphDefText(*g))
                                   : ParseGraphDef(SerializeGraphDef(*g));
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectGraphsEqual(*g, *back);
  }
}

// A library with every field set: signature with attrs, arg attrs, resource
// ids, body nodes with placeholders and func attrs, ret and control_ret,
// gradients.
GraphDef GraphWithLibrary() {
  GraphDef g;
  g.producer = 1700;
  FunctionDef f = test::SquareFunction();
  f.signature.attrs[0].allowed_types = {DT_FLOAT, DT_INT32};
  f.attr["_noinline"] = true;
  f.arg_attr[0]["_user_specified_name"] = "x";
  f.resource_arg_unique_id[0] = 3;
  f.node_def[0].device = "/device:CPU:0";
  NodeDef call = test::BodyNode("inner", "PartitionedCall", {"mul:z:0", "^mul"},
                                {{"Tin", std::vector<DType>{DT_FLOAT}},
                                 {"Tout", std::vector<DType>{DT_FLOAT}}});
  NameAttrList inner;
  inner.name = "add_one";
  inner.attr["T"] = AttrValue(AttrValue::Placeholder{"T"});
  call.attrs["f"] = AttrValue(inner);
  f.node_def.push_back(call);
  f.control_ret["side"] = "inner";
  g.library.functions.push_back(f);
  g.library.functions.push_back(test::AddOneFunction());
  g.library.gradients.push_back({"square", "add_one"});
  NodeDef node = test::CallNode("c", "square", {}, {}, {DT_FLOAT});
  g.nodes.push_back(node);
  return g;
}

TEST(GraphDefIoTest, FunctionLibraryRoundTripsInBothFormats) {
  GraphDef g = GraphWithLibrary();
  for (bool text : {false, true}) {
    StatusOr<GraphDef> back = text ? ParseGraphDefText(SerializeGraphDefText(g))
                                   : ParseGraphDef(SerializeGraphDef(g));
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectGraphsEqual(g, *back);
    ASSERT_EQ(back->library.functions.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_TRUE(FunctionDefsEqual(g.library.functions[i], back->library.functions[i]))
          << g.library.functions[i].signature.name << (text ? " (text)" : " (binary)");
    }
    ASSERT_EQ(back->library.gradients.size(), 1u);
    EXPECT_EQ(back->library.gradients[0].function_name, "square");
    EXPECT_EQ(back->library.gradients[0].gradient_func, "add_one");
  }
  // The signature lists its control outputs, as TensorFlow's does.
  wire::GraphDef proto;
  GraphDefToProto(g, &proto);
  ASSERT_EQ(proto.library().function(0).signature().control_output_size(), 1);
  EXPECT_EQ(proto.library().function(0).signature().control_output(0), "side");
  EXPECT_EQ(proto.library().function(0).ret().at("y"), "mul:z:0");
}

TEST(GraphDefIoTest, ReadsTensorFlowFunctionText) {
  // As TensorFlow 2 prints a tf.function's library (trimmed).
  StatusOr<GraphDef> g = ParseGraphDefText(R"pb(
    library {
      function {
        signature {
          name: "__inference_f_12"
          input_arg { name: "x" type: DT_FLOAT }
          output_arg { name: "identity" type: DT_FLOAT }
          control_output: "assign"
        }
        node_def {
          name: "mul"
          op: "Mul"
          input: "x"
          input: "x"
          attr { key: "T" value { type: DT_FLOAT } }
        }
        ret { key: "identity" value: "mul:z:0" }
        control_ret { key: "assign" value: "mul" }
        arg_attr { key: 0 value { attr { key: "_user_specified_name" value { s: "x" } } } }
      }
    })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->library.functions.size(), 1u);
  const FunctionDef& f = g->library.functions[0];
  EXPECT_EQ(f.signature.name, "__inference_f_12");
  ASSERT_EQ(f.signature.inputs.size(), 1u);
  EXPECT_EQ(f.signature.inputs[0].type, DT_FLOAT);
  EXPECT_EQ(f.node_def[0].inputs, (std::vector<std::string>{"x", "x"}));
  EXPECT_EQ(f.ret.at("identity"), "mul:z:0");
  EXPECT_EQ(f.control_ret.at("assign"), "mul");
  EXPECT_EQ(f.arg_attr.at(0).at("_user_specified_name").s(), "x");
}

TEST(GraphDefIoTest, BadFunctionsNameTheFunction) {
  // A signature with a dtype Weir does not know.
  wire::GraphDef proto;
  wire::FunctionDef* f = proto.mutable_library()->add_function();
  f->mutable_signature()->set_name("bad_sig");
  wire::OpDef::ArgDef* arg = f->mutable_signature()->add_input_arg();
  arg->set_name("x");
  arg->set_type(static_cast<wire::DataType>(1234));
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"function 'bad_sig'", "input 'x'", "1234"});
  // A body node with a bad attr.
  arg->set_type(wire::DT_FLOAT);
  wire::NodeDef* node = f->add_node_def();
  node->set_name("body_cast");
  node->set_op("Cast");
  (*node->mutable_attr())["DstT"].set_type(static_cast<wire::DataType>(999));
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"function 'bad_sig'", "'body_cast'", "attr 'DstT'", "999"});
  // Argument attrs for an argument the function lacks.
  node->mutable_attr()->clear();
  (*f->mutable_arg_attr())[7].mutable_attr();
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"function 'bad_sig'", "arg_attr", "argument 7", "1 arguments"});
  f->mutable_arg_attr()->clear();
  (*f->mutable_resource_arg_unique_id())[4000000000u] = 1;
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"function 'bad_sig'", "resource_arg_unique_id"});
  f->mutable_resource_arg_unique_id()->clear();
  // A bad default value of a signature attr.
  wire::OpDef::AttrDef* attr = f->mutable_signature()->add_attr();
  attr->set_name("T");
  attr->set_type("type");
  attr->mutable_default_value()->set_type(static_cast<wire::DataType>(77));
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"function 'bad_sig'", "attr 'T'", "77"});
}

TEST(GraphDefIoTest, DeeplyNestedFunctionBodiesAreAnError) {
  // Func attrs nested inside a body node inside a library.
  wire::GraphDef proto;
  wire::FunctionDef* f = proto.mutable_library()->add_function();
  f->mutable_signature()->set_name("deep");
  wire::NodeDef* node = f->add_node_def();
  node->set_name("n");
  node->set_op("NoOp");
  wire::AttrValue* value = &(*node->mutable_attr())["k"];
  for (int i = 0; i < 200; ++i) value = &(*value->mutable_func()->mutable_attr())["k"];
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument, {"nested"});
}

TEST(GraphDefIoTest, UnknownDTypesInAttrsAreInvalid) {
  wire::GraphDef proto;
  wire::NodeDef* node = proto.add_node();
  node->set_name("v");
  node->set_op("VariableV2");
  (*node->mutable_attr())["dtype"].set_type(static_cast<wire::DataType>(99));
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"'v'", "VariableV2", "attr 'dtype'", "number 99"});

  (*node->mutable_attr())["dtype"].set_type(wire::DT_FLOAT_REF);
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"attr 'dtype'", "DT_FLOAT_REF (101)"});

  (*node->mutable_attr())["dtype"].mutable_list()->add_type(wire::DT_FLOAT);
  (*node->mutable_attr())["dtype"].mutable_list()->add_type(wire::DT_QINT8);
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"attr 'dtype'", "DT_QINT8 (11)"});
}

TEST(GraphDefIoTest, BadValuesNameNodeAndAttr) {
  ExpectError(ParseGraphDefText(R"pb(node {
                                       name: "c"
                                       op: "Const"
                                       attr { key: "_source_location" value { s: "m.py:3" } }
                                       attr {
                                         key: "value"
                                         value {
                                           tensor {
                                             dtype: DT_FLOAT
                                             tensor_shape { dim { size: 1 } }
                                             float_val: [ 1, 2 ]
                                           }
                                         }
                                       }
                                     })pb"),
              Code::kInvalidArgument,
              {"'c' (Const) created at m.py:3", "attr 'value'", "float_val has 2 values"});
  ExpectError(ParseGraphDefText(R"pb(node {
                                       name: "s"
                                       op: "Placeholder"
                                       attr { key: "shape" value { shape { dim { size: -5 } } } }
                                     })pb"),
              Code::kInvalidArgument, {"'s'", "attr 'shape'", "-5"});
  ExpectError(ParseGraphDefText(R"pb(node {
                                       name: "x"
                                       op: "NoOp"
                                       attr { key: "_source_location" value { i: 3 } }
                                     })pb"),
              Code::kInvalidArgument, {"'x'", "_source_location", "string"});
}

// Function-valued attrs nest without bound (NameAttrList holds attrs). The
// text parser had no recursion limit: this input overflowed the stack.
TEST(GraphDefIoTest, DeeplyNestedTextIsAnErrorNotAStackOverflow) {
  constexpr int kLevels = 40000;  // three messages each: 120k deep
  std::string text = "node { name: \"a\" op: \"NoOp\" attr { key: \"k\" value { ";
  std::string open = "func { name: \"f\" attr { key: \"k\" value { ";
  text.reserve(text.size() + kLevels * (open.size() + 6) + 16);
  for (int i = 0; i < kLevels; ++i) text += open;
  for (int i = 0; i < kLevels; ++i) text += "} } } ";
  text += "} } }";
  ExpectError(ParseGraphDefText(text), Code::kInvalidArgument,
              {"could not parse GraphDef text", "recursion limit"});
  // A list of lists of attrs, the other way to nest.
  std::string lists = "node { name: \"a\" op: \"NoOp\" attr { key: \"k\" value { ";
  for (int i = 0; i < kLevels; ++i) lists += "list { func { attr { key: \"k\" value { ";
  ExpectError(ParseGraphDefText(lists), Code::kInvalidArgument, {"recursion limit"});
}

TEST(GraphDefIoTest, DeeplyNestedBinaryIsAnError) {
  wire::GraphDef proto;
  wire::NodeDef* node = proto.add_node();
  node->set_name("a");
  node->set_op("NoOp");
  wire::AttrValue* value = &(*node->mutable_attr())["k"];
  for (int i = 0; i < 1000; ++i) value = &(*value->mutable_func()->mutable_attr())["k"];
  ExpectError(ParseGraphDef(proto.SerializeAsString()), Code::kInvalidArgument,
              {"could not parse GraphDef", "nested"});
}

TEST(GraphDefIoTest, BadConsumersTravel) {
  StatusOr<GraphDef> g = ParseGraphDefText(
      "versions { producer: 1994 min_consumer: 12 bad_consumers: 5 bad_consumers: 9 }");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->bad_consumers, (std::vector<int>{5, 9}));
  StatusOr<GraphDef> back = ParseGraphDef(SerializeGraphDef(*g));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->bad_consumers, (std::vector<int>{5, 9}));
}

class GraphDefFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_graph_io.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(GraphDefFileTest, WritesAndReadsBothFormatsAtomically) {
  GraphDef g = EveryAttrKind();
  ASSERT_TRUE(WriteGraphDefFile(dir_ + "/g.pb", g).ok());
  ASSERT_TRUE(WriteGraphDefFile(dir_ + "/g.pbtxt", g).ok());
  // Overwriting goes through a temporary file too.
  ASSERT_TRUE(WriteGraphDefFile(dir_ + "/g.pb", g).ok());
  EXPECT_EQ(Entries(), (std::vector<std::string>{"g.pb", "g.pbtxt"}));

  EXPECT_EQ(*ReadFileToString(dir_ + "/g.pb"), SerializeGraphDef(g));
  std::string text = *ReadFileToString(dir_ + "/g.pbtxt");
  EXPECT_EQ(text.rfind("node {", 0), 0u) << text.substr(0, 40);

  for (const char* name : {"/g.pb", "/g.pbtxt"}) {
    StatusOr<GraphDef> back = ReadGraphDefFile(dir_ + name);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectGraphsEqual(*back, g);
  }
}

TEST_F(GraphDefFileTest, ErrorsNameThePath) {
  StatusOr<GraphDef> g = ReadGraphDefFile(dir_ + "/missing.pb");
  ExpectError(g, Code::kNotFound, {dir_ + "/missing.pb"});

  ASSERT_TRUE(WriteStringToFileAtomic(dir_ + "/bad.pb", Hex("0a 05 0a 01")).ok());
  ExpectError(ReadGraphDefFile(dir_ + "/bad.pb"), Code::kInvalidArgument,
              {dir_ + "/bad.pb", "could not parse GraphDef"});

  ASSERT_TRUE(WriteStringToFileAtomic(dir_ + "/bad.pbtxt", "node {").ok());
  ExpectError(ReadGraphDefFile(dir_ + "/bad.pbtxt"), Code::kInvalidArgument,
              {dir_ + "/bad.pbtxt", "could not parse GraphDef text"});

  // Over protobuf's 2 GiB: refused before it is read (a sparse file).
  fs::path huge = dir_ + "/huge.pb";
  { std::ofstream touch(huge); }
  fs::resize_file(huge, uintmax_t{3} << 30);
  ExpectError(ReadGraphDefFile(huge.string()), Code::kInvalidArgument,
              {huge.string(), "3221225472 bytes", "2 GiB"});

  Status s = WriteGraphDefFile(dir_ + "/no/such/dir/g.pb", EveryAttrKind());
  EXPECT_TRUE(errors::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(dir_ + "/no/such/dir/g.pb"), std::string::npos) << s;
}

}  // namespace
}  // namespace weir

namespace weir {
namespace {

TEST(OpDefIoTest, RegisteredOpsRoundTripThroughTheWire) {
  RegisterAllOps();
  std::vector<const OpDef*> registered = OpRegistry::Global()->ListOps();
  ASSERT_GT(registered.size(), 100u);
  StatusOr<std::vector<OpDef>> parsed = ParseOpList(SerializeOpList(registered));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), registered.size());
  for (size_t i = 0; i < registered.size(); ++i) {
    const OpDef& want = *registered[i];
    const OpDef& got = (*parsed)[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.is_stateful, want.is_stateful) << want.name;
    EXPECT_EQ(got.doc, want.doc) << want.name;
    ASSERT_EQ(got.inputs.size(), want.inputs.size()) << want.name;
    for (size_t j = 0; j < want.inputs.size(); ++j) {
      EXPECT_EQ(got.inputs[j].type, want.inputs[j].type) << want.name;
      EXPECT_EQ(got.inputs[j].type_attr, want.inputs[j].type_attr) << want.name;
      EXPECT_EQ(got.inputs[j].number_attr, want.inputs[j].number_attr) << want.name;
      EXPECT_EQ(got.inputs[j].type_list_attr, want.inputs[j].type_list_attr) << want.name;
    }
    ASSERT_EQ(got.outputs.size(), want.outputs.size()) << want.name;
    ASSERT_EQ(got.attrs.size(), want.attrs.size()) << want.name;
    for (size_t j = 0; j < want.attrs.size(); ++j) {
      const AttrDef& a = want.attrs[j];
      const AttrDef& b = got.attrs[j];
      EXPECT_EQ(b.name, a.name) << want.name;
      EXPECT_EQ(b.type, a.type) << want.name << "." << a.name;
      EXPECT_EQ(b.has_default, a.has_default) << want.name << "." << a.name;
      if (a.has_default) {
        EXPECT_EQ(b.default_value, a.default_value) << want.name << "." << a.name;
      }
      EXPECT_EQ(b.allowed_types, a.allowed_types) << want.name << "." << a.name;
      EXPECT_EQ(b.allowed_strings, a.allowed_strings) << want.name << "." << a.name;
      EXPECT_EQ(b.has_minimum, a.has_minimum) << want.name << "." << a.name;
      EXPECT_EQ(b.minimum, a.minimum) << want.name << "." << a.name;
    }
  }
}

// TensorFlow's numbertype lists hold quantized dtypes, which Weir lacks:
// they are left out, so TensorFlow's op lists parse.
TEST(OpDefIoTest, AllowedDtypesWeirLacksAreLeftOut) {
  wire::OpDef proto;
  proto.set_name("BiasAddLike");
  wire::OpDef::AttrDef* t = proto.add_attr();
  t->set_name("T");
  t->set_type("type");
  for (int dtype : {1, 11, 3, 13}) {  // float, qint8, int32, qint32
    t->mutable_allowed_values()->mutable_list()->add_type(static_cast<wire::DataType>(dtype));
  }
  OpDef op;
  ASSERT_TRUE(OpDefFromProto(proto, &op).ok());
  EXPECT_EQ(op.attrs[0].allowed_types, (std::vector<DType>{DT_FLOAT, DT_INT32}));

  t->mutable_allowed_values()->mutable_list()->clear_type();
  t->mutable_allowed_values()->mutable_list()->add_type(static_cast<wire::DataType>(11));
  Status status = OpDefFromProto(proto, &op);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("op 'BiasAddLike' attr 'T'"), std::string::npos) << status;
}

// TF 2.x writes a structured type on nodes with variant outputs and stack
// traces on the graph; a text GraphDef names the type ids. Weir reads both
// and ignores them.
TEST(GraphDefIoTest, ReadsTensorFlow2TypesAndDebugInfo) {
  const char* text = R"(
    node {
      name: "list" op: "EmptyTensorList"
      input: "shape" input: "n"
      attr { key: "element_dtype" value { type: DT_FLOAT } }
      attr { key: "shape_type" value { type: DT_INT32 } }
      experimental_type {
        type_id: TFT_PRODUCT
        args { type_id: TFT_ARRAY args { type_id: TFT_TENSOR args { type_id: TFT_FLOAT } } }
      }
    }
    node { name: "v" op: "NoOp" experimental_type { type_id: TFT_VAR s: "T" } }
    debug_info {
      files: "model.py"
      frames_by_id { key: 7 value { file_index: 0 line: 12 func: "build" } }
      traces_by_id { key: 9 value { frame_id: 7 } }
      name_to_trace_id { key: "list" value: 9 }
      traces { key: "v" value { file_line_cols { file_index: 0 line: 3 } } }
    }
    versions { producer: 1994 }
  )";
  StatusOr<GraphDef> graph = ParseGraphDefText(text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->nodes.size(), 2u);
  EXPECT_EQ(graph->nodes[0].op, "EmptyTensorList");
  EXPECT_EQ(graph->nodes[0].inputs, (std::vector<std::string>{"shape", "n"}));
  // The same in binary, as TF writes it.
  wire::GraphDef proto;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &proto));
  StatusOr<GraphDef> binary = ParseGraphDef(proto.SerializeAsString());
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_EQ(binary->nodes.size(), 2u);
  // A type id Weir does not know is still an error in text (as in TensorFlow).
  EXPECT_FALSE(ParseGraphDefText("node { name: \"a\" op: \"NoOp\" "
                                 "experimental_type { type_id: TFT_NO_SUCH } }")
                   .ok());
}

TEST(OpDefIoTest, RejectsBadOpLists) {
  EXPECT_EQ(ParseOpList("\xff\xff garbage").status().code(), Code::kInvalidArgument);
  // OpList { op { name: "X" input_arg { name: "a" type: 999 } } }: an unknown dtype.
  std::string arg = std::string("\x0a\x01" "a" "\x18\xe7\x07", 6);
  std::string op = std::string("\x0a\x01X\x12", 4) + static_cast<char>(arg.size()) + arg;
  std::string list = std::string("\x0a", 1) + static_cast<char>(op.size()) + op;
  Status status = ParseOpList(list).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("op 'X' input 'a'"), std::string::npos) << status;
}

}  // namespace
}  // namespace weir
