#include "weir/framework/op_def.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace weir {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

OpDef BuildOk(const OpDefBuilder& builder) {
  StatusOr<OpDef> op = builder.Build();
  EXPECT_TRUE(op.ok()) << op.status();
  return op.ok() ? std::move(op).value() : OpDef();
}

const AttrDef& Attr(const OpDef& op, const std::string& name) {
  const AttrDef* attr = op.FindAttr(name);
  EXPECT_NE(attr, nullptr) << name;
  static const AttrDef kMissing;
  return attr ? *attr : kMissing;
}

TEST(OpDefBuilderTest, TypeAttrInputsAndOutputs) {
  OpDef op = BuildOk(OpDefBuilder("MatMulLike")
                         .Input("a: T")
                         .Input("b: T")
                         .Input("scale: float")
                         .Output("product: T")
                         .Attr("T: {float, double}")
                         .Attr("transpose_a: bool = false")
                         .SetIsStateful()
                         .Doc("doc text"));
  EXPECT_EQ(op.name, "MatMulLike");
  ASSERT_EQ(op.inputs.size(), 3u);
  EXPECT_EQ(op.inputs[0].name, "a");
  EXPECT_EQ(op.inputs[0].type_attr, "T");
  EXPECT_EQ(op.inputs[0].type, DT_INVALID);
  EXPECT_EQ(op.inputs[2].name, "scale");
  EXPECT_EQ(op.inputs[2].type, DT_FLOAT);
  EXPECT_TRUE(op.inputs[2].type_attr.empty());
  ASSERT_EQ(op.outputs.size(), 1u);
  EXPECT_EQ(op.outputs[0].name, "product");
  EXPECT_EQ(op.outputs[0].type_attr, "T");
  const AttrDef& t = Attr(op, "T");
  EXPECT_EQ(t.type, "type");
  EXPECT_EQ(t.allowed_types, (std::vector<DType>{DT_FLOAT, DT_DOUBLE}));
  EXPECT_FALSE(t.has_default);
  EXPECT_TRUE(op.is_stateful);
  EXPECT_EQ(op.doc, "doc text");
  EXPECT_EQ(op.FindAttr("missing"), nullptr);
}

TEST(OpDefBuilderTest, RepeatedAndListInputs) {
  OpDef op = BuildOk(OpDefBuilder("ConcatLike")
                         .Input("values: N * T")
                         .Input("flags: N * bool")
                         .Input("mixed: Tin")
                         .Output("out: Tout")
                         .Attr("N: int >= 1")
                         .Attr("T: type")
                         .Attr("Tin: list(type)")
                         .Attr("Tout: list({float, int32})"));
  EXPECT_EQ(op.inputs[0].number_attr, "N");
  EXPECT_EQ(op.inputs[0].type_attr, "T");
  EXPECT_EQ(op.inputs[1].number_attr, "N");
  EXPECT_EQ(op.inputs[1].type, DT_BOOL);
  EXPECT_EQ(op.inputs[2].type_list_attr, "Tin");
  EXPECT_TRUE(op.inputs[2].number_attr.empty());
  EXPECT_EQ(op.outputs[0].type_list_attr, "Tout");
  const AttrDef& n = Attr(op, "N");
  EXPECT_EQ(n.type, "int");
  EXPECT_TRUE(n.has_minimum);
  EXPECT_EQ(n.minimum, 1);
  EXPECT_EQ(Attr(op, "T").type, "type");
  EXPECT_TRUE(Attr(op, "T").allowed_types.empty());  // any type
  EXPECT_EQ(Attr(op, "Tin").type, "list(type)");
  const AttrDef& tout = Attr(op, "Tout");
  EXPECT_EQ(tout.type, "list(type)");
  EXPECT_EQ(tout.allowed_types, (std::vector<DType>{DT_FLOAT, DT_INT32}));
}

TEST(OpDefBuilderTest, TypeGroups) {
  OpDef op = BuildOk(OpDefBuilder("Groups")
                         .Attr("A: numbertype")
                         .Attr("B: realnumbertype")
                         .Attr("C: floattype")
                         .Attr("D: {floattype, int32}"));
  const AttrDef& a = Attr(op, "A");
  EXPECT_EQ(a.type, "type");
  auto has = [](const AttrDef& attr, DType d) {
    return std::find(attr.allowed_types.begin(), attr.allowed_types.end(), d) !=
           attr.allowed_types.end();
  };
  for (DType d : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT8, DT_INT16, DT_INT32,
                  DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_COMPLEX64,
                  DT_COMPLEX128}) {
    EXPECT_TRUE(has(a, d)) << DTypeName(d);
  }
  EXPECT_FALSE(has(a, DT_BOOL));
  EXPECT_FALSE(has(a, DT_STRING));
  EXPECT_FALSE(has(a, DT_RESOURCE));
  const AttrDef& b = Attr(op, "B");
  EXPECT_TRUE(has(b, DT_INT64));
  EXPECT_FALSE(has(b, DT_COMPLEX64));
  const AttrDef& c = Attr(op, "C");
  EXPECT_EQ(c.allowed_types.size(), 4u);
  EXPECT_TRUE(has(c, DT_BFLOAT16));
  EXPECT_FALSE(has(c, DT_INT32));
  const AttrDef& d = Attr(op, "D");
  EXPECT_EQ(d.type, "type");
  EXPECT_EQ(d.allowed_types.size(), 5u);
  EXPECT_TRUE(has(d, DT_INT32));
  EXPECT_TRUE(has(d, DT_HALF));
}

TEST(OpDefBuilderTest, ScalarDefaults) {
  OpDef op = BuildOk(OpDefBuilder("Defaults")
                         .Attr("i: int = -3")
                         .Attr("f: float = 0.25")
                         .Attr("g: float = -2")
                         .Attr("b: bool = true")
                         .Attr("c: bool = false")
                         .Attr("s: string = 'hello world'")
                         .Attr("q: string = \"dq\"")
                         .Attr("e: string = ''")
                         .Attr("t: type = DT_INT64")
                         .Attr("h: type = half")
                         .Attr("T: {float, double} = DT_DOUBLE")
                         .Attr("nodefault: int"));
  EXPECT_TRUE(Attr(op, "i").has_default);
  EXPECT_EQ(Attr(op, "i").default_value, AttrValue(-3));
  EXPECT_EQ(Attr(op, "f").default_value, AttrValue(0.25f));
  EXPECT_EQ(Attr(op, "g").default_value, AttrValue(-2.0f));
  EXPECT_EQ(Attr(op, "b").default_value, AttrValue(true));
  EXPECT_EQ(Attr(op, "c").default_value, AttrValue(false));
  EXPECT_EQ(Attr(op, "s").default_value, AttrValue("hello world"));
  EXPECT_EQ(Attr(op, "q").default_value, AttrValue("dq"));
  EXPECT_EQ(Attr(op, "e").default_value, AttrValue(""));
  EXPECT_EQ(Attr(op, "t").default_value, AttrValue(DT_INT64));
  EXPECT_EQ(Attr(op, "h").default_value, AttrValue(DT_HALF));
  EXPECT_EQ(Attr(op, "T").default_value, AttrValue(DT_DOUBLE));
  EXPECT_EQ(Attr(op, "T").allowed_types, (std::vector<DType>{DT_FLOAT, DT_DOUBLE}));
  EXPECT_FALSE(Attr(op, "nodefault").has_default);
  EXPECT_FALSE(Attr(op, "nodefault").default_value.has_value());
}

TEST(OpDefBuilderTest, ListDefaults) {
  OpDef op = BuildOk(OpDefBuilder("ListDefaults")
                         .Attr("strides: list(int) = [1, 2, 3]")
                         .Attr("empty: list(int) = []")
                         .Attr("types: list(type) = [float, DT_INT32]")
                         .Attr("names: list(string) = ['a', 'b']")
                         .Attr("scales: list(float) = [0.5,2]")
                         .Attr("flags: list(bool) = [true]")
                         .Attr("ksize: list(int) >= 4"));
  EXPECT_EQ(Attr(op, "strides").type, "list(int)");
  EXPECT_EQ(Attr(op, "strides").default_value, AttrValue(std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(Attr(op, "empty").has_default);
  EXPECT_TRUE(Attr(op, "empty").default_value.is_list());
  EXPECT_EQ(Attr(op, "empty").default_value.KindName(), "list");
  EXPECT_EQ(Attr(op, "types").default_value,
            AttrValue(std::vector<DType>{DT_FLOAT, DT_INT32}));
  EXPECT_EQ(Attr(op, "names").default_value, AttrValue(std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Attr(op, "scales").default_value, AttrValue(std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(Attr(op, "flags").default_value.list().b, (std::vector<bool>{true}));
  const AttrDef& ksize = Attr(op, "ksize");
  EXPECT_EQ(ksize.type, "list(int)");
  EXPECT_TRUE(ksize.has_minimum);
  EXPECT_EQ(ksize.minimum, 4);
  EXPECT_FALSE(ksize.has_default);
}

TEST(OpDefBuilderTest, MinimumWithDefault) {
  // TensorFlow's grammar: "<name>: <type> >= <minimum> = <default>".
  OpDef op = BuildOk(OpDefBuilder("MinDefault")
                         .Attr("N: int >= 2 = 3")
                         .Attr("M: int>=0=0")
                         .Attr("sizes: list(int) >= 1 = [7]"));
  EXPECT_TRUE(Attr(op, "N").has_minimum);
  EXPECT_EQ(Attr(op, "N").minimum, 2);
  EXPECT_EQ(Attr(op, "N").default_value, AttrValue(3));
  EXPECT_EQ(Attr(op, "M").minimum, 0);
  EXPECT_EQ(Attr(op, "M").default_value, AttrValue(0));
  EXPECT_EQ(Attr(op, "sizes").minimum, 1);
  EXPECT_EQ(Attr(op, "sizes").default_value, AttrValue(std::vector<int64_t>{7}));
  // A minimum may be negative.
  op = BuildOk(OpDefBuilder("NegMin").Attr("axis: int >= -1 = -1"));
  EXPECT_EQ(Attr(op, "axis").minimum, -1);
  EXPECT_EQ(Attr(op, "axis").default_value, AttrValue(-1));
}

TEST(OpDefBuilderTest, StringAllowedSet) {
  OpDef op = BuildOk(OpDefBuilder("Pool")
                         .Attr("padding: {'SAME', 'VALID'}")
                         .Attr("format: {\"NHWC\", \"NCHW\"} = 'NHWC'"));
  const AttrDef& padding = Attr(op, "padding");
  EXPECT_EQ(padding.type, "string");
  EXPECT_EQ(padding.allowed_strings, (std::vector<std::string>{"SAME", "VALID"}));
  EXPECT_TRUE(padding.allowed_types.empty());
  const AttrDef& format = Attr(op, "format");
  EXPECT_EQ(format.allowed_strings, (std::vector<std::string>{"NHWC", "NCHW"}));
  EXPECT_EQ(format.default_value, AttrValue("NHWC"));
}

TEST(OpDefBuilderTest, AttrDefaultForShapesAndTensors) {
  OpDef op = BuildOk(OpDefBuilder("Placeholderish")
                         .Attr("shape: shape")
                         .Attr("value: tensor")
                         .Attr("fn: func")
                         .AttrDefault("shape", PartialShape({-1, 2}))
                         .AttrDefault("value", Tensor::Scalar<float>(1.5f)));
  EXPECT_TRUE(Attr(op, "shape").has_default);
  EXPECT_EQ(Attr(op, "shape").default_value, AttrValue(PartialShape({-1, 2})));
  EXPECT_EQ(Attr(op, "value").default_value, AttrValue(Tensor::Scalar<float>(1.5f)));
  EXPECT_EQ(Attr(op, "fn").type, "func");

  StatusOr<OpDef> bad = OpDefBuilder("Undeclared").AttrDefault("nope", 1).Build();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(bad.status().message(), "op Undeclared")) << bad.status();
  EXPECT_TRUE(Contains(bad.status().message(), "nope")) << bad.status();
}

TEST(OpDefBuilderTest, ShapeFnIsKept) {
  OpDef op = BuildOk(OpDefBuilder("WithShapeFn").SetShapeFn(
      [](InferenceContext*) { return errors::Unimplemented("marker"); }));
  ASSERT_TRUE(static_cast<bool>(op.shape_fn));
  EXPECT_EQ(op.shape_fn(nullptr), errors::Unimplemented("marker"));
  EXPECT_FALSE(static_cast<bool>(BuildOk(OpDefBuilder("NoShapeFn")).shape_fn));
}

// Each malformed spec fails Build() with an error naming the op and spec.
void ExpectSpecError(const OpDefBuilder& builder, const std::string& op_name,
                     const std::string& fragment) {
  StatusOr<OpDef> op = builder.Build();
  ASSERT_FALSE(op.ok()) << "'" << fragment << "' was accepted";
  EXPECT_EQ(op.status().code(), Code::kInvalidArgument) << op.status();
  EXPECT_TRUE(Contains(op.status().message(), "op " + op_name)) << op.status();
  EXPECT_TRUE(Contains(op.status().message(), fragment)) << op.status();
}

TEST(OpDefBuilderTest, AttrSpecErrors) {
  ExpectSpecError(OpDefBuilder("E1").Attr("T"), "E1", "has no ':'");
  ExpectSpecError(OpDefBuilder("E2").Attr(": int"), "E2", "has no name");
  ExpectSpecError(OpDefBuilder("E3").Attr("x: widget"), "E3", "unknown attr type 'widget'");
  ExpectSpecError(OpDefBuilder("E4").Attr("T: {float, widget}"), "E4", "unknown type 'widget'");
  ExpectSpecError(OpDefBuilder("E5").Attr("T: {float, double"), "E5", "unclosed");
  ExpectSpecError(OpDefBuilder("E6").Attr("T: type").Attr("T: int"), "E6", "duplicate attr");
  ExpectSpecError(OpDefBuilder("E7").Attr("x: int = abc"), "E7", "bad int default 'abc'");
  ExpectSpecError(OpDefBuilder("E8").Attr("x: int = 1.5"), "E8", "bad int default");
  ExpectSpecError(OpDefBuilder("E9").Attr("x: bool = yes"), "E9", "bad bool 'yes'");
  ExpectSpecError(OpDefBuilder("E10").Attr("x: string = SAME"), "E10", "must be quoted");
  ExpectSpecError(OpDefBuilder("E11").Attr("x: type = DT_WIDGET"), "E11", "bad type");
  ExpectSpecError(OpDefBuilder("E12").Attr("x: type = float32"), "E12", "bad type");
  ExpectSpecError(OpDefBuilder("E13").Attr("x: int >= many"), "E13", "bad minimum");
  ExpectSpecError(OpDefBuilder("E14").Attr("x: shape = [1, 2]"), "E14", "AttrDefault()");
  ExpectSpecError(OpDefBuilder("E15").Attr("x: list(int) = 1"), "E15", "must be [..]");
  ExpectSpecError(OpDefBuilder("E16").Attr("x: list(int) = [1, x]"), "E16", "bad int default");
  ExpectSpecError(OpDefBuilder("E17").Attr("x: list(widget)"), "E17", "unknown attr type");
}

TEST(OpDefBuilderTest, FloatDefaultErrorsAreStatuses) {
  // Malformed numbers are spec errors, not exceptions escaping the core.
  ExpectSpecError(OpDefBuilder("F1").Attr("x: float = abc"), "F1", "x: float = abc");
  ExpectSpecError(OpDefBuilder("F2").Attr("x: float = 1.5x"), "F2", "x: float = 1.5x");
  ExpectSpecError(OpDefBuilder("F3").Attr("x: float = 1e99999"), "F3", "x: float = 1e99999");
  ExpectSpecError(OpDefBuilder("F4").Attr("x: list(float) = [1, ?]"), "F4", "list(float)");
  OpDef op = BuildOk(OpDefBuilder("F5").Attr("x: float = 1e-3").Attr("y: float = -0.5"));
  EXPECT_EQ(Attr(op, "x").default_value, AttrValue(1e-3f));
  EXPECT_EQ(Attr(op, "y").default_value, AttrValue(-0.5f));
}

TEST(OpDefBuilderTest, ArgSpecErrors) {
  ExpectSpecError(OpDefBuilder("A1").Input("x"), "A1", "has no ':'");
  ExpectSpecError(OpDefBuilder("A2").Input("x: Q"), "A2", "unknown type or attr 'Q'");
  ExpectSpecError(OpDefBuilder("A3").Input("x: N").Attr("N: int"), "A3", "of type int");
  ExpectSpecError(OpDefBuilder("A4").Input("x: M * T").Attr("T: type"), "A4",
                  "needs an int attr 'M'");
  ExpectSpecError(OpDefBuilder("A5").Input("x: T * T").Attr("T: type"), "A5",
                  "needs an int attr 'T'");
  ExpectSpecError(OpDefBuilder("A6").Output("y: float32"), "A6", "float32");
}

TEST(OpRegistryTest, RegisterAndLookUp) {
  OpRegistry* registry = OpRegistry::Global();
  registry->Register(OpDefBuilder("UnitTestOp1").Input("x: T").Output("y: T").Attr("T: type"));
  StatusOr<const OpDef*> op = registry->LookUp("UnitTestOp1");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ((*op)->name, "UnitTestOp1");
  EXPECT_EQ((*op)->inputs.size(), 1u);
  std::vector<const OpDef*> all = registry->ListOps();
  EXPECT_TRUE(std::any_of(all.begin(), all.end(),
                          [](const OpDef* d) { return d->name == "UnitTestOp1"; }));
}

TEST(OpRegistryTest, LookUpMissing) {
  OpRegistry* registry = OpRegistry::Global();
  registry->Register(OpDefBuilder("UnitTestOp2"));
  StatusOr<const OpDef*> op = registry->LookUp("UnitTestNoSuchOp");
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().code(), Code::kNotFound);
  EXPECT_TRUE(Contains(op.status().message(), "'UnitTestNoSuchOp'")) << op.status();
  EXPECT_FALSE(Contains(op.status().message(), "did you mean")) << op.status();

  op = registry->LookUp("unittestOP2");  // a case slip
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().code(), Code::kNotFound);
  EXPECT_TRUE(Contains(op.status().message(), "did you mean UnitTestOp2?")) << op.status();
}

TEST(OpRegistryTest, LookUpMissingListsTheOpsOfItsFamily) {
  OpRegistry* registry = OpRegistry::Global();
  for (const char* name :
       {"UnitFamilyListPush", "UnitFamilyListPop", "UnitFamilyMapGet", "_UnitFamilyListInternal"}) {
    registry->Register(OpDefBuilder(name));
  }
  EXPECT_NE(registry->Find("UnitFamilyMapGet"), nullptr);
  EXPECT_EQ(registry->Find("UnitFamilyListReserve"), nullptr);
  auto message = [&](const std::string& op) {
    StatusOr<const OpDef*> found = registry->LookUp(op);
    EXPECT_FALSE(found.ok()) << op;
    EXPECT_EQ(found.status().code(), Code::kNotFound);
    return std::string(found.status().message());
  };
  // The most leading words any op shares.
  std::string list = message("UnitFamilyListReserve");
  EXPECT_TRUE(Contains(list, "'UnitFamilyListReserve' is not registered")) << list;
  EXPECT_TRUE(Contains(list, "(UnitFamilyList*)")) << list;
  EXPECT_TRUE(Contains(list, "UnitFamilyListPop, UnitFamilyListPush")) << list;
  EXPECT_FALSE(Contains(list, "UnitFamilyMapGet")) << list;
  EXPECT_FALSE(Contains(list, "_UnitFamilyListInternal")) << list;
  std::string wider = message("UnitFamilyQueueClose");
  EXPECT_TRUE(Contains(wider, "(UnitFamily*)")) << wider;
  EXPECT_TRUE(Contains(wider, "UnitFamilyMapGet")) << wider;
  // No shared leading word: the ops holding its longest word.
  std::string inner = message("ZqxFamilyRelated");
  EXPECT_TRUE(Contains(inner, "(*Related*)") || Contains(inner, "(*Family*)")) << inner;
  EXPECT_TRUE(Contains(message("ZqxFamilyZq"), "UnitFamilyListPop")) << message("ZqxFamilyZq");
  EXPECT_TRUE(Contains(message("Zqx"), "Weir has no op of its family")) << message("Zqx");
}

TEST(OpRegistryDeathTest, DuplicateOrMalformedRegistrationIsABug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  OpRegistry::Global()->Register(OpDefBuilder("UnitTestOp3"));
  EXPECT_DEATH(OpRegistry::Global()->Register(OpDefBuilder("UnitTestOp3")),
               "UnitTestOp3 registered twice");
  EXPECT_DEATH(OpRegistry::Global()->Register(OpDefBuilder("UnitTestOp4").Attr("x: widget")),
               "unknown attr type");
}

}  // namespace
}  // namespace weir
