#include "weir/graph/function_library.h"

#include <gtest/gtest.h>

#include "weir/graph/function_test_util.h"
#include "weir/graph/graph.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

using test::Arg;
using test::BodyNode;

class FunctionLibraryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RegisterAllOps(); }
};

void ExpectError(const Status& status, Code code, const std::vector<std::string>& fragments) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << status.message();
  }
}

Status Add(FunctionDef def) {
  FunctionLibrary library;
  return library.AddFunction(std::move(def));
}

TEST_F(FunctionLibraryTest, AcceptsWellFormedFunctions) {
  FunctionLibrary library;
  ASSERT_TRUE(library.AddFunction(test::AddOneFunction()).ok());
  ASSERT_TRUE(library.AddFunction(test::SquareFunction()).ok());
  ASSERT_TRUE(library.AddFunction(test::PlusTwoFunction()).ok());  // calls add_one
  ASSERT_TRUE(library.AddFunction(test::BumpFunction()).ok());
  EXPECT_EQ(library.num_functions(), 4u);
  ASSERT_NE(library.Find("plus_two"), nullptr);
  EXPECT_EQ(library.Find("plus_two")->signature.outputs.size(), 2u);
  StatusOr<const OpDef*> op = library.LookUpOp("square");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(*op, &library.Find("square")->signature);
  EXPECT_EQ((*library.LookUpOp("Add"))->name, "Add");
  ExpectError(library.LookUpOp("cube").status(), Code::kNotFound,
              {"'cube'", "not registered", "function library"});
}

TEST_F(FunctionLibraryTest, IdenticalRedefinitionIsFineADifferentOneIsNot) {
  FunctionLibrary library;
  ASSERT_TRUE(library.AddFunction(test::AddOneFunction()).ok());
  EXPECT_TRUE(library.AddFunction(test::AddOneFunction()).ok());
  FunctionDef other = test::AddOneFunction();
  other.node_def[0].attrs["value"] = Tensor::Scalar<float>(2);
  ExpectError(library.AddFunction(other), Code::kAlreadyExists, {"'add_one'"});
  EXPECT_EQ(library.num_functions(), 1u);
  // The same within one library.
  FunctionDefLibrary twice;
  twice.functions = {test::SquareFunction(), test::SquareFunction()};
  EXPECT_TRUE(library.AddLibrary(twice).ok());
  twice.functions[1].ret["y"] = "x";
  FunctionLibrary fresh;
  ExpectError(fresh.AddLibrary(twice), Code::kAlreadyExists, {"'square'", "twice"});
  EXPECT_TRUE(fresh.empty());
}

TEST_F(FunctionLibraryTest, FunctionsOfOneLibraryMayCallEachOtherInAnyOrder) {
  FunctionDefLibrary lib;
  lib.functions = {test::PlusTwoFunction(), test::AddOneFunction()};
  lib.gradients = {{"add_one", "plus_two"}};
  FunctionLibrary library;
  ASSERT_TRUE(library.AddLibrary(lib).ok());
  EXPECT_EQ(library.FindGradient("add_one"), "plus_two");
  FunctionDefLibrary again = library.ToLibrary();
  EXPECT_EQ(again.functions.size(), 2u);
  EXPECT_EQ(again.functions[0].signature.name, "add_one");  // name order
  EXPECT_TRUE(library.AddLibrary(again).ok());
}

TEST_F(FunctionLibraryTest, AFailedLibraryAddsNothing) {
  FunctionDefLibrary lib;
  FunctionDef bad = test::AddOneFunction("bad");
  bad.ret["y"] = "nowhere:z:0";
  lib.functions = {test::AddOneFunction(), bad};
  FunctionLibrary library;
  ExpectError(library.AddLibrary(lib), Code::kInvalidArgument, {"'bad'", "nowhere"});
  EXPECT_EQ(library.Find("add_one"), nullptr);
}

TEST_F(FunctionLibraryTest, GradientsNameFunctionsOfTheLibrary) {
  FunctionLibrary library;
  ASSERT_TRUE(library.AddFunction(test::AddOneFunction()).ok());
  ASSERT_TRUE(library.AddFunction(test::SquareFunction()).ok());
  ExpectError(library.AddGradient({"add_one", "missing_grad"}), Code::kInvalidArgument,
              {"'missing_grad'", "not a function"});
  ExpectError(library.AddGradient({"missing", "add_one"}), Code::kInvalidArgument,
              {"'missing'"});
  ASSERT_TRUE(library.AddGradient({"add_one", "square"}).ok());
  EXPECT_TRUE(library.AddGradient({"add_one", "square"}).ok());
  ExpectError(library.AddGradient({"add_one", "add_one"}), Code::kAlreadyExists,
              {"'add_one'", "'square'"});
}

TEST_F(FunctionLibraryTest, AFunctionMayNotShadowARegisteredOp) {
  ExpectError(Add(test::AddOneFunction("MatMul")), Code::kInvalidArgument,
              {"'MatMul'", "registered op"});
}

TEST_F(FunctionLibraryTest, BodiesMayNotUseInternalOps) {
  FunctionDef f = test::AddOneFunction();
  f.node_def[0].op = "_Retval";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "_Retval", "internal"});
}

TEST_F(FunctionLibraryTest, BadSignaturesNameTheFunction) {
  FunctionDef f = test::AddOneFunction();
  f.signature.inputs.push_back(Arg("x", DT_FLOAT));
  ExpectError(Add(f), Code::kInvalidArgument, {"function 'add_one'", "input 'x'", "twice"});

  f = test::AddOneFunction();
  f.signature.inputs[0].type_attr = "T";  // a dtype and a type attr
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "input 'x'", "exactly one"});

  f = test::AddOneFunction();
  f.signature.inputs[0] = test::ArgOfAttr("x", "T");
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "type attr 'T'", "not an attr"});

  f = test::SquareFunction();
  f.signature.attrs[0].type = "int";
  ExpectError(Add(f), Code::kInvalidArgument, {"'square'", "'T' of type int, not type"});

  f = test::SquareFunction();
  f.signature.inputs[0].number_attr = "T";  // a type attr as the count
  ExpectError(Add(f), Code::kInvalidArgument, {"'square'", "number attr 'T'", "not int"});

  f = test::SquareFunction();
  f.signature.attrs.push_back(f.signature.attrs[0]);
  ExpectError(Add(f), Code::kInvalidArgument, {"'square'", "attr 'T'", "twice"});

  f = test::SquareFunction();
  f.signature.attrs[0].type = "tensr";
  ExpectError(Add(f), Code::kInvalidArgument, {"'square'", "unknown type 'tensr'"});

  f = test::AddOneFunction();
  f.signature.name = "";
  ExpectError(Add(f), Code::kInvalidArgument, {"no name"});
}

TEST_F(FunctionLibraryTest, BadBodiesNameTheFunctionAndNode) {
  FunctionDef f = test::AddOneFunction();
  f.node_def.push_back(test::FloatConst("one", 3));
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'one'", "another body node"});

  f = test::AddOneFunction();
  f.node_def.push_back(test::FloatConst("x", 3));
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'x'", "argument"});

  f = test::AddOneFunction();
  f.node_def[1].inputs[1] = "one:out:0";
  ExpectError(Add(f), Code::kInvalidArgument,
              {"'add_one'", "'add'", "'one:out:0'", "output 'out'", "{output}"});

  f = test::AddOneFunction();
  f.node_def[1].inputs[1] = "one:output:1";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'add'", "element 1", "has 1"});

  f = test::AddOneFunction();
  f.node_def[1].inputs[1] = "ghost:output:0";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'add'", "no body node 'ghost'"});

  f = test::AddOneFunction();
  f.node_def[1].inputs[1] = "y";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'add'", "'y'", "no argument"});

  f = test::AddOneFunction();
  f.node_def[1].inputs[1] = "one";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'add'", "without an output"});

  f = test::AddOneFunction();
  f.node_def[1].inputs = {"^one", "x", "x"};
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'add'", "after a control input"});

  f = test::AddOneFunction();
  f.node_def[1].inputs = {"x", "one:output:0", "^nobody"};
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'^nobody'"});

  f = test::AddOneFunction();
  f.node_def[1].inputs[1] = "one:output:x";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'add'", "one:output:x"});

  f = test::AddOneFunction();
  f.node_def[1].name = "";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "no name"});
}

TEST_F(FunctionLibraryTest, UnknownBodyOpsWaitUntilTheFunctionIsCalled) {
  // A library carries functions no step needs (savers, gradients); an op
  // Weir lacks in one of them is reported where the function is inlined.
  FunctionDef f = test::AddOneFunction("uses_unknown_op");
  f.node_def[1].op = "NoSuchOp";
  f.ret["y"] = "add:anything:0";
  EXPECT_TRUE(Add(f).ok());
}

TEST_F(FunctionLibraryTest, RetsAndControlRetsAreChecked) {
  FunctionDef f = test::AddOneFunction();
  f.ret.clear();
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "output 'y'", "no ret"});

  f = test::AddOneFunction();
  f.ret["z"] = "x";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'z'", "not an output"});

  f = test::AddOneFunction();
  f.ret["y"] = "add:z:3";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "ret of output 'y'", "element 3"});

  f = test::AddOneFunction();
  f.ret["y"] = "^add";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "ret of output 'y'"});

  f = test::AddOneFunction();
  f.control_ret["effects"] = "nobody";
  ExpectError(Add(f), Code::kInvalidArgument, {"'add_one'", "'effects'", "'nobody'"});

  // An argument returned as is is fine.
  f = test::AddOneFunction();
  f.ret["y"] = "x";
  EXPECT_TRUE(Add(f).ok());
}

TEST_F(FunctionLibraryTest, ListOutputSizesAreCheckedWhereTheAttrsFixThem) {
  FunctionDef f;
  f.signature.name = "halves";
  f.signature.inputs = {Arg("x", DT_FLOAT)};
  f.signature.outputs = {Arg("a", DT_FLOAT), Arg("b", DT_FLOAT)};
  NodeDef axis = BodyNode("axis", "Const", {}, {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(0)}});
  NodeDef split = BodyNode("split", "Split", {"axis:output:0", "x"},
                           {{"T", DT_FLOAT}, {"num_split", int64_t{2}}});
  f.node_def = {axis, split};
  f.ret["a"] = "split:output:0";
  f.ret["b"] = "split:output:1";
  EXPECT_TRUE(Add(f).ok());
  f.ret["b"] = "split:output:2";
  ExpectError(Add(f), Code::kInvalidArgument, {"'halves'", "element 2", "which has 2"});
  // With the count a placeholder, the index cannot be checked yet.
  f.node_def[1].attrs["num_split"] = AttrValue(AttrValue::Placeholder{"n"});
  EXPECT_TRUE(Add(f).ok());
}

TEST_F(FunctionLibraryTest, ParsesFunctionInputs) {
  StatusOr<FunctionInput> in = ParseFunctionInput("node:out:3");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->node, "node");
  EXPECT_EQ(in->output, "out");
  EXPECT_EQ(in->index, 3);
  in = ParseFunctionInput("x");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->node, "x");
  EXPECT_TRUE(in->output.empty());
  EXPECT_EQ(in->index, -1);
  in = ParseFunctionInput("x:2");
  ASSERT_TRUE(in.ok());
  EXPECT_TRUE(in->output.empty());
  EXPECT_EQ(in->index, 2);
  in = ParseFunctionInput("node:out");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->output, "out");
  EXPECT_EQ(in->index, -1);
  in = ParseFunctionInput("^n");
  ASSERT_TRUE(in.ok());
  EXPECT_TRUE(in->control);
  for (const char* bad : {"", "^", ":a", "a:", "a:b:", "a::1", "^a:b", "a:b:-1",
                          "a:b:99999999999999999999"}) {
    EXPECT_FALSE(ParseFunctionInput(bad).ok()) << bad;
  }
}

GraphDef CallGraph() {
  GraphDef g;
  g.library.functions = {test::AddOneFunction(), test::PlusTwoFunction()};
  g.nodes.push_back(test::FloatConst("c", 2));
  g.nodes.push_back(test::CallNode("call", "add_one", {"c"}, {DT_FLOAT}, {DT_FLOAT}));
  g.nodes.push_back(test::BodyNode("by_name", "plus_two", {"c"}));
  g.nodes.push_back(test::BodyNode("sum", "Add", {"call:0", "by_name:1"}, {{"T", DT_FLOAT}}));
  return g;
}

TEST_F(FunctionLibraryTest, ImportTakesTheLibraryAndResolvesCallsFromIt) {
  Graph graph;
  Status status = ImportGraphDef(CallGraph(), &graph);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(graph.function_library().num_functions(), 2u);
  Node* by_name = graph.FindNode("by_name");
  ASSERT_NE(by_name, nullptr);
  EXPECT_EQ(&by_name->op_def(), &graph.function_library().Find("plus_two")->signature);
  EXPECT_EQ(by_name->num_outputs(), 2);
  EXPECT_EQ(by_name->output_type(1), DT_FLOAT);
  // Shapes come from the body: add_one of a scalar is a scalar.
  EXPECT_EQ(graph.FindNode("call")->output_shape(0), PartialShape({}));
  EXPECT_EQ(by_name->output_shape(0), PartialShape({}));
  EXPECT_EQ(graph.FindNode("sum")->output_shape(0), PartialShape({}));
  // Export keeps the library, and the copy imports again.
  GraphDef back = graph.ToGraphDef();
  ASSERT_EQ(back.library.functions.size(), 2u);
  Graph again;
  status = ImportGraphDef(back, &again);
  ASSERT_TRUE(status.ok()) << status;
  // Copies share the library's entries, so op defs keep their address.
  Graph copy;
  copy.CopyFrom(graph);
  EXPECT_EQ(&copy.FindNode("by_name")->op_def(), &by_name->op_def());
}

TEST_F(FunctionLibraryTest, ExtendingWithTheSameLibraryIsFine) {
  Graph graph;
  ASSERT_TRUE(ImportGraphDef(CallGraph(), &graph).ok());
  GraphDef more;
  more.library.functions = {test::AddOneFunction(), test::SquareFunction()};
  more.nodes.push_back(test::BodyNode("sq", "square", {"c"}, {{"T", DT_FLOAT}}));
  Status status = ImportGraphDef(more, &graph);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(graph.function_library().num_functions(), 3u);
  GraphDef clash;
  clash.library.functions = {test::AddOneFunction()};
  clash.library.functions[0].ret["y"] = "x";
  ExpectError(ImportGraphDef(clash, &graph), Code::kAlreadyExists, {"'add_one'"});
}

TEST_F(FunctionLibraryTest, AFailedImportLeavesTheLibraryAsItWas) {
  Graph graph;
  GraphDef g = CallGraph();
  g.nodes.push_back(test::BodyNode("broken", "Add", {"c", "nowhere"}, {{"T", DT_FLOAT}}));
  ExpectError(ImportGraphDef(g, &graph), Code::kInvalidArgument, {"'broken'"});
  EXPECT_TRUE(graph.function_library().empty());
  EXPECT_EQ(graph.num_nodes(), 0);
}

TEST_F(FunctionLibraryTest, CallsAreCheckedAgainstTheSignature) {
  GraphDef g = CallGraph();
  g.nodes[2].attrs["T"] = DT_FLOAT;  // plus_two has no attrs
  Graph fresh;
  ExpectError(ImportGraphDef(g, &fresh), Code::kInvalidArgument,
              {"'by_name'", "attr 'T'", "plus_two"});
  g = CallGraph();
  g.nodes[2].inputs = {"c", "c"};
  Graph graph;
  ExpectError(ImportGraphDef(g, &graph), Code::kInvalidArgument, {"'by_name'", "2 data inputs"});
  g = CallGraph();
  g.nodes[1].attrs["f"] = AttrValue(NameAttrList{"missing", {}});
  ExpectError(ImportGraphDef(g, &graph), Code::kInvalidArgument,
              {"'call'", "attr 'f'", "'missing'", "function library"});
  g = CallGraph();
  g.nodes[1].attrs["f"] = AttrValue(int64_t{3});
  ExpectError(ImportGraphDef(g, &graph), Code::kInvalidArgument,
              {"'call'", "attr 'f'", "should be func"});
  g = CallGraph();
  g.nodes.push_back(test::BodyNode("unknown", "add_two", {"c"}));
  ExpectError(ImportGraphDef(g, &graph), Code::kNotFound,
              {"'unknown'", "add_two", "function library"});
}

TEST_F(FunctionLibraryTest, CopiesShareTheTableUntilOneAddsToIt) {
  FunctionLibrary original;
  ASSERT_TRUE(original.AddFunction(test::AddOneFunction()).ok());
  FunctionLibrary copy = original;
  // Shared: the same entry, at the same address.
  EXPECT_EQ(copy.Find("add_one"), original.Find("add_one"));
  // Adding to the copy leaves the original as it was, and back.
  ASSERT_TRUE(copy.AddFunction(test::AddOneFunction("add_one_again")).ok());
  EXPECT_NE(copy.Find("add_one_again"), nullptr);
  EXPECT_EQ(original.Find("add_one_again"), nullptr);
  EXPECT_EQ(copy.Find("add_one"), original.Find("add_one"));
  GradientDef gradient;
  gradient.function_name = "add_one";
  gradient.gradient_func = "add_one_again";
  EXPECT_FALSE(original.AddGradient(gradient).ok()) << "add_one_again is the copy's only";
  ASSERT_TRUE(copy.AddGradient(gradient).ok());
  EXPECT_EQ(copy.FindGradient("add_one"), "add_one_again");
  EXPECT_EQ(original.FindGradient("add_one"), "");
  ASSERT_TRUE(original.AddFunction(test::PlusTwoFunction()).ok());
  EXPECT_EQ(copy.Find("plus_two"), nullptr);
  EXPECT_EQ(original.num_functions(), 2u);
  EXPECT_EQ(copy.num_functions(), 2u);
  // A moved-from library is still a valid (shared) one.
  FunctionLibrary moved = std::move(copy);
  EXPECT_NE(moved.Find("add_one_again"), nullptr);
  EXPECT_NE(copy.Find("add_one_again"), nullptr);  // NOLINT(bugprone-use-after-move)
  // Empty libraries share nothing they could change.
  FunctionLibrary a, b;
  ASSERT_TRUE(a.AddFunction(test::AddOneFunction()).ok());
  EXPECT_TRUE(b.empty());
}

}  // namespace
}  // namespace weir
