#include "weir/framework/node_def_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weir {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

OpDef Build(const OpDefBuilder& builder) {
  StatusOr<OpDef> op = builder.Build();
  EXPECT_TRUE(op.ok()) << op.status();
  return op.ok() ? std::move(op).value() : OpDef();
}

// An op with one attr of every checked flavour.
OpDef ConvLike() {
  return Build(OpDefBuilder("ConvLike")
                   .Input("input: T")
                   .Input("filter: T")
                   .Output("output: T")
                   .Attr("T: {float, double}")
                   .Attr("strides: list(int) >= 2")
                   .Attr("padding: {'SAME', 'VALID'}")
                   .Attr("groups: int >= 1 = 1")
                   .Attr("use_bias: bool = false")
                   .Attr("name_hint: string = 'conv'"));
}

NodeDef ValidConvNode() {
  NodeDef node;
  node.name = "conv1";
  node.op = "ConvLike";
  node.inputs = {"x", "w"};
  node.attrs["T"] = AttrValue(DT_FLOAT);
  node.attrs["strides"] = AttrValue(std::vector<int64_t>{1, 1});
  node.attrs["padding"] = AttrValue("SAME");
  return node;
}

TEST(AddDefaultAttrsTest, FillsOnlyMissingDefaults) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  node.attrs["use_bias"] = AttrValue(true);  // set by the user: kept
  AddDefaultAttrs(op, &node);
  EXPECT_EQ(node.attrs.at("groups"), AttrValue(1));
  EXPECT_EQ(node.attrs.at("use_bias"), AttrValue(true));
  EXPECT_EQ(node.attrs.at("name_hint"), AttrValue("conv"));
  EXPECT_EQ(node.attrs.at("T"), AttrValue(DT_FLOAT));
  EXPECT_EQ(node.attrs.size(), 6u);  // nothing invented for attrs without defaults
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok()) << ValidateNodeAttrs(op, node);
}

TEST(ValidateNodeAttrsTest, MissingAttrWithoutDefaultsApplied) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  Status s = ValidateNodeAttrs(op, node);  // "groups" has a default but was not filled
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "missing attr 'groups' of type int")) << s;
  EXPECT_TRUE(Contains(s.message(), "'conv1' (ConvLike)")) << s;  // names the node

  node.attrs.erase("T");
  AddDefaultAttrs(op, &node);
  s = ValidateNodeAttrs(op, node);
  EXPECT_TRUE(Contains(s.message(), "missing attr 'T' of type type")) << s;
}

TEST(ValidateNodeAttrsTest, UnknownAttr) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["dilation"] = AttrValue(2);
  Status s = ValidateNodeAttrs(op, node);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "attr 'dilation' is not an attr of op ConvLike")) << s;
}

TEST(ValidateNodeAttrsTest, UnderscoreAttrsAreAllowed) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["_class"] = AttrValue(std::vector<std::string>{"loc:@w"});
  node.attrs["_source_location"] = AttrValue("model.cc:3");
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok()) << ValidateNodeAttrs(op, node);
}

TEST(ValidateNodeAttrsTest, WrongKind) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["groups"] = AttrValue(1.0f);
  Status s = ValidateNodeAttrs(op, node);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "attr 'groups' should be int but is float (1)")) << s;

  node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["strides"] = AttrValue(std::vector<float>{1, 1});
  s = ValidateNodeAttrs(op, node);
  EXPECT_TRUE(Contains(s.message(), "should be list(int) but is list(float)")) << s;

  node.attrs["strides"] = AttrValue(2);  // a scalar where a list is wanted
  s = ValidateNodeAttrs(op, node);
  EXPECT_TRUE(Contains(s.message(), "should be list(int) but is int")) << s;

  node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["T"] = AttrValue("float");
  s = ValidateNodeAttrs(op, node);
  EXPECT_TRUE(Contains(s.message(), "attr 'T' should be type but is string")) << s;
}

TEST(ValidateNodeAttrsTest, DisallowedType) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["T"] = AttrValue(DT_INT32);
  Status s = ValidateNodeAttrs(op, node);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "attr 'T' = int32 is not in the allowed set {float, double}"))
      << s;
  node.attrs["T"] = AttrValue(DT_DOUBLE);
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok());
}

TEST(ValidateNodeAttrsTest, DisallowedTypeInList) {
  OpDef op = Build(OpDefBuilder("ListTyped").Attr("Tout: list({float, int32})"));
  NodeDef node;
  node.name = "n";
  node.op = "ListTyped";
  node.attrs["Tout"] = AttrValue(std::vector<DType>{DT_FLOAT, DT_INT32, DT_FLOAT});
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok());
  node.attrs["Tout"] = AttrValue(std::vector<DType>{DT_FLOAT, DT_STRING});
  Status s = ValidateNodeAttrs(op, node);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "attr 'Tout' = string is not in the allowed set")) << s;
  node.attrs["Tout"] = AttrValue(std::vector<DType>{});  // empty list: nothing disallowed
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok());
}

TEST(ValidateNodeAttrsTest, DisallowedString) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["padding"] = AttrValue("same");
  Status s = ValidateNodeAttrs(op, node);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "attr 'padding' = \"same\" is not one of {SAME, VALID}"))
      << s;
  node.attrs["padding"] = AttrValue("VALID");
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok());
}

TEST(ValidateNodeAttrsTest, BelowMinimum) {
  OpDef op = ConvLike();
  NodeDef node = ValidConvNode();
  AddDefaultAttrs(op, &node);
  node.attrs["groups"] = AttrValue(0);
  Status s = ValidateNodeAttrs(op, node);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "attr 'groups' = 0 is below its minimum 1")) << s;

  node.attrs["groups"] = AttrValue(1);  // the minimum itself is fine
  node.attrs["strides"] = AttrValue(std::vector<int64_t>{1});  // a list too short
  s = ValidateNodeAttrs(op, node);
  EXPECT_TRUE(Contains(s.message(), "attr 'strides' = [1] is below its minimum 2")) << s;
  node.attrs["strides"] = AttrValue(std::vector<int64_t>{});
  EXPECT_FALSE(ValidateNodeAttrs(op, node).ok());
  node.attrs["strides"] = AttrValue(std::vector<int64_t>{1, 2, 3});
  EXPECT_TRUE(ValidateNodeAttrs(op, node).ok());
}

OpDef ConcatLike() {
  return Build(OpDefBuilder("ConcatLike")
                   .Input("axis: int32")
                   .Input("values: N * T")
                   .Input("extras: Tlist")
                   .Output("output: T")
                   .Output("sizes: N * int64")
                   .Attr("N: int >= 1")
                   .Attr("T: type")
                   .Attr("Tlist: list(type) >= 0"));
}

TEST(InOutTypesForNodeTest, ExpandsRepeatsAndLists) {
  OpDef op = ConcatLike();
  NodeDef node;
  node.name = "concat";
  node.op = "ConcatLike";
  node.attrs["N"] = AttrValue(3);
  node.attrs["T"] = AttrValue(DT_HALF);
  node.attrs["Tlist"] = AttrValue(std::vector<DType>{DT_STRING, DT_BOOL});
  ASSERT_TRUE(ValidateNodeAttrs(op, node).ok()) << ValidateNodeAttrs(op, node);
  std::vector<DType> inputs = {DT_UINT8}, outputs = {DT_UINT8};  // replaced, not appended
  ASSERT_TRUE(InOutTypesForNode(op, node, &inputs, &outputs).ok());
  EXPECT_EQ(inputs, (std::vector<DType>{DT_INT32, DT_HALF, DT_HALF, DT_HALF, DT_STRING,
                                        DT_BOOL}));
  EXPECT_EQ(outputs, (std::vector<DType>{DT_HALF, DT_INT64, DT_INT64, DT_INT64}));

  node.attrs["N"] = AttrValue(1);
  node.attrs["Tlist"] = AttrValue(std::vector<DType>{});
  ASSERT_TRUE(InOutTypesForNode(op, node, &inputs, &outputs).ok());
  EXPECT_EQ(inputs, (std::vector<DType>{DT_INT32, DT_HALF}));
  EXPECT_EQ(outputs, (std::vector<DType>{DT_HALF, DT_INT64}));
}

TEST(InOutTypesForNodeTest, ErrorsNameTheNode) {
  OpDef op = ConcatLike();
  NodeDef node;
  node.name = "concat";
  node.op = "ConcatLike";
  node.attrs["N"] = AttrValue(-2);
  node.attrs["T"] = AttrValue(DT_FLOAT);
  node.attrs["Tlist"] = AttrValue(std::vector<DType>{});
  std::vector<DType> inputs, outputs;
  Status s = InOutTypesForNode(op, node, &inputs, &outputs);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'concat' (ConcatLike)")) << s;
  EXPECT_TRUE(Contains(s.message(), "negative")) << s;

  node.attrs.erase("T");
  node.attrs["N"] = AttrValue(2);
  s = InOutTypesForNode(op, node, &inputs, &outputs);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "'concat' (ConcatLike)")) << s;
  EXPECT_TRUE(Contains(s.message(), "'T'")) << s;
}

// Before, `N` was expanded into a vector before any check: 2^40 threw
// std::bad_alloc and aborted the process.
TEST(InOutTypesForNodeTest, BoundsCountAttrsBeforeSizingAnything) {
  OpDef op = ConcatLike();
  NodeDef node;
  node.name = "concat";
  node.op = "ConcatLike";
  node.attrs["N"] = AttrValue(int64_t{1} << 40);
  node.attrs["T"] = AttrValue(DT_FLOAT);
  node.attrs["Tlist"] = AttrValue(std::vector<DType>{});
  std::vector<DType> inputs, outputs;
  Status s = InOutTypesForNode(op, node, &inputs, &outputs);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), "'concat' (ConcatLike)")) << s;
  EXPECT_TRUE(Contains(s.message(), "'N' = 1099511627776")) << s;

  // The sane maximum holds even when the node lists no inputs (the
  // builder's nodes) and for outputs, which no input can bound.
  node.attrs["N"] = AttrValue(kMaxCountAttr + 1);
  EXPECT_EQ(InOutTypesForNode(op, node, &inputs, &outputs).code(), Code::kInvalidArgument);
  node.attrs["N"] = AttrValue(kMaxCountAttr);
  EXPECT_TRUE(InOutTypesForNode(op, node, &inputs, &outputs).ok());
  EXPECT_EQ(outputs.size(), static_cast<size_t>(kMaxCountAttr) + 1);

  // A node that lists its inputs is held to them: N = 1000 with 3 data
  // inputs is refused before a vector of 1000 is built.
  node.inputs = {"axis", "a", "b", "^ctrl"};
  node.attrs["N"] = AttrValue(1000);
  s = InOutTypesForNode(op, node, &inputs, &outputs);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), "'N' = 1000")) << s;
  EXPECT_TRUE(Contains(s.message(), "has 3")) << s;
  node.attrs["N"] = AttrValue(2);
  EXPECT_TRUE(InOutTypesForNode(op, node, &inputs, &outputs).ok());
  EXPECT_EQ(inputs.size(), 3u);
}

TEST(NumDataInputsTest, CountsInputsBeforeControlInputs) {
  NodeDef node;
  EXPECT_EQ(NumDataInputs(node), 0);
  node.inputs = {"a", "b:1"};
  EXPECT_EQ(NumDataInputs(node), 2);
  node.inputs = {"a", "b:1", "^c", "^d"};
  EXPECT_EQ(NumDataInputs(node), 2);
  node.inputs = {"^c"};
  EXPECT_EQ(NumDataInputs(node), 0);
}

}  // namespace
}  // namespace weir
