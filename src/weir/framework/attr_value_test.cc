#include "weir/framework/attr_value.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace weir {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(AttrValueTest, KindsAndAccessors) {
  AttrValue none;
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(none.KindName(), "none");
  EXPECT_EQ(none.DebugString(), "<none>");

  AttrValue s("SAME");
  EXPECT_TRUE(s.has_value());
  EXPECT_TRUE(s.is_s());
  EXPECT_EQ(s.s(), "SAME");
  EXPECT_EQ(s.KindName(), "string");

  AttrValue i(int64_t{-5});
  EXPECT_TRUE(i.is_i());
  EXPECT_EQ(i.i(), -5);
  EXPECT_EQ(i.KindName(), "int");
  EXPECT_TRUE(AttrValue(7).is_i());  // int widens to int64

  AttrValue f(0.5f);
  EXPECT_TRUE(f.is_f());
  EXPECT_EQ(f.f(), 0.5f);
  EXPECT_EQ(f.KindName(), "float");
  EXPECT_TRUE(AttrValue(0.25).is_f());  // double narrows to float
  EXPECT_EQ(AttrValue(0.25).f(), 0.25f);

  AttrValue b(true);
  EXPECT_TRUE(b.is_b());
  EXPECT_FALSE(b.is_i());
  EXPECT_TRUE(b.b());
  EXPECT_EQ(b.KindName(), "bool");

  AttrValue t(DT_HALF);
  EXPECT_TRUE(t.is_type());
  EXPECT_EQ(t.type(), DT_HALF);
  EXPECT_EQ(t.KindName(), "type");

  AttrValue shape(PartialShape({-1, 3}));
  EXPECT_TRUE(shape.is_shape());
  EXPECT_EQ(shape.shape(), PartialShape({-1, 3}));
  EXPECT_EQ(shape.KindName(), "shape");
  EXPECT_EQ(AttrValue(TensorShape({2})).shape(), PartialShape({2}));

  AttrValue tensor(Tensor::FromVector<int32_t>({1, 2}));
  EXPECT_TRUE(tensor.is_tensor());
  EXPECT_EQ(tensor.tensor().NumElements(), 2);
  EXPECT_EQ(tensor.KindName(), "tensor");
}

TEST(AttrValueTest, ListKinds) {
  EXPECT_EQ(AttrValue(std::vector<int64_t>{1, 2}).KindName(), "list(int)");
  EXPECT_EQ(AttrValue(std::vector<int>{1, 2}).list().i, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(AttrValue(std::vector<float>{1.5f}).KindName(), "list(float)");
  EXPECT_EQ(AttrValue(std::vector<DType>{DT_FLOAT}).KindName(), "list(type)");
  EXPECT_EQ(AttrValue(std::vector<std::string>{"a"}).KindName(), "list(string)");
  EXPECT_EQ(AttrValue(std::vector<PartialShape>{PartialShape()}).KindName(), "list(shape)");
  EXPECT_EQ(AttrValue(std::vector<int64_t>{}).KindName(), "list");  // empty: any list
  AttrValue::List l;
  l.b = {true, false};
  EXPECT_EQ(AttrValue(l).KindName(), "list(bool)");
  l = {};
  l.tensor.push_back(Tensor::Scalar<float>(1));
  EXPECT_EQ(AttrValue(l).KindName(), "list(tensor)");

  AttrValue v(int64_t{3});
  v.mutable_list()->i.push_back(4);  // replaces the scalar with a list
  EXPECT_TRUE(v.is_list());
  EXPECT_EQ(v.list().i, (std::vector<int64_t>{4}));
  v.mutable_list()->i.push_back(5);  // keeps an existing list
  EXPECT_EQ(v.list().i, (std::vector<int64_t>{4, 5}));
}

TEST(AttrValueTest, DebugString) {
  EXPECT_EQ(AttrValue("VALID").DebugString(), "\"VALID\"");
  EXPECT_EQ(AttrValue(42).DebugString(), "42");
  EXPECT_EQ(AttrValue(1.5f).DebugString(), "1.5");
  EXPECT_EQ(AttrValue(false).DebugString(), "false");
  EXPECT_EQ(AttrValue(DT_INT64).DebugString(), "int64");
  EXPECT_EQ(AttrValue(PartialShape({-1, 784})).DebugString(), "[?,784]");
  EXPECT_EQ(AttrValue(PartialShape()).DebugString(), "<unknown>");
  EXPECT_EQ(AttrValue(Tensor::FromVector<float>({1, 2, 3, 4, 5})).DebugString(),
            "float [5] {1, 2, 3, 4, ...}");
  EXPECT_EQ(AttrValue(std::vector<int64_t>{1, 2, 3}).DebugString(), "[1, 2, 3]");
  EXPECT_EQ(AttrValue(std::vector<DType>{DT_FLOAT, DT_INT32}).DebugString(), "[float, int32]");
  EXPECT_EQ(AttrValue(std::vector<std::string>{"a", "b"}).DebugString(), "[a, b]");
  EXPECT_EQ(AttrValue(std::vector<int64_t>{}).DebugString(), "[]");
}

TEST(AttrValueTest, Equality) {
  EXPECT_EQ(AttrValue(), AttrValue());
  EXPECT_EQ(AttrValue(3), AttrValue(int64_t{3}));
  EXPECT_FALSE(AttrValue(3) == AttrValue(4));
  EXPECT_FALSE(AttrValue(1) == AttrValue(1.0f));  // kinds differ
  EXPECT_FALSE(AttrValue(1) == AttrValue(true));
  EXPECT_FALSE(AttrValue(1) == AttrValue());
  EXPECT_EQ(AttrValue("x"), AttrValue(std::string("x")));
  EXPECT_EQ(AttrValue(DT_FLOAT), AttrValue(DT_FLOAT));
  EXPECT_FALSE(AttrValue(DT_FLOAT) == AttrValue(DT_DOUBLE));
  EXPECT_EQ(AttrValue(PartialShape({-1})), AttrValue(PartialShape({-1})));
  EXPECT_FALSE(AttrValue(PartialShape({-1})) == AttrValue(PartialShape()));
  EXPECT_EQ(AttrValue(std::vector<int64_t>{1, 2}), AttrValue(std::vector<int>{1, 2}));
  EXPECT_FALSE(AttrValue(std::vector<int64_t>{1, 2}) == AttrValue(std::vector<int64_t>{2, 1}));
}

TEST(AttrValueTest, TensorEqualityComparesContents) {
  // Two tensors with equal contents in different buffers are equal attrs.
  AttrValue a(Tensor::FromVector<float>({1, 2}));
  AttrValue b(Tensor::FromVector<float>({1, 2}));
  EXPECT_FALSE(a.tensor().SharesBufferWith(b.tensor()));
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == AttrValue(Tensor::FromVector<float>({1, 3})));
  EXPECT_FALSE(a == AttrValue(Tensor::FromVector<double>({1, 2})));
  EXPECT_FALSE(a == AttrValue(Tensor::FromVector<float>({1, 2}, TensorShape({2, 1}))));

  AttrValue::List l1, l2;
  l1.tensor = {Tensor::Scalar<int32_t>(5)};
  l2.tensor = {Tensor::Scalar<int32_t>(5)};
  EXPECT_EQ(AttrValue(l1), AttrValue(l2));
  l2.tensor = {Tensor::Scalar<int32_t>(6)};
  EXPECT_FALSE(AttrValue(l1) == AttrValue(l2));
  l2.tensor = {Tensor::Scalar<int32_t>(5), Tensor::Scalar<int32_t>(5)};
  EXPECT_FALSE(AttrValue(l1) == AttrValue(l2));
}

AttrMap SampleAttrs() {
  AttrMap attrs;
  attrs["s"] = AttrValue("SAME");
  attrs["i"] = AttrValue(int64_t{-12});
  attrs["f"] = AttrValue(2.5f);
  attrs["b"] = AttrValue(true);
  attrs["T"] = AttrValue(DT_DOUBLE);
  attrs["shape"] = AttrValue(PartialShape({-1, 2}));
  attrs["value"] = AttrValue(Tensor::FromVector<int32_t>({4, 5}));
  attrs["ints"] = AttrValue(std::vector<int64_t>{1, 2, 3});
  attrs["floats"] = AttrValue(std::vector<float>{0.5f});
  attrs["types"] = AttrValue(std::vector<DType>{DT_INT32, DT_BOOL});
  attrs["strings"] = AttrValue(std::vector<std::string>{"x", "y"});
  attrs["shapes"] = AttrValue(std::vector<PartialShape>{PartialShape({1}), PartialShape()});
  attrs["empty"] = AttrValue(std::vector<int64_t>{});
  attrs["big"] = AttrValue(int64_t{1} << 40);
  attrs["big_ints"] = AttrValue(std::vector<int64_t>{1, int64_t{1} << 40});
  attrs["min_int32"] = AttrValue(int64_t{INT32_MIN});
  return attrs;
}

TEST(GetAttrTest, TypedLookups) {
  AttrMap attrs = SampleAttrs();
  std::string s;
  ASSERT_TRUE(GetAttr(attrs, "s", &s).ok());
  EXPECT_EQ(s, "SAME");
  int64_t i = 0;
  ASSERT_TRUE(GetAttr(attrs, "i", &i).ok());
  EXPECT_EQ(i, -12);
  int32_t i32 = 0;
  ASSERT_TRUE(GetAttr(attrs, "i", &i32).ok());
  EXPECT_EQ(i32, -12);
  ASSERT_TRUE(GetAttr(attrs, "min_int32", &i32).ok());
  EXPECT_EQ(i32, INT32_MIN);
  float f = 0;
  ASSERT_TRUE(GetAttr(attrs, "f", &f).ok());
  EXPECT_EQ(f, 2.5f);
  bool b = false;
  ASSERT_TRUE(GetAttr(attrs, "b", &b).ok());
  EXPECT_TRUE(b);
  DType t = DT_INVALID;
  ASSERT_TRUE(GetAttr(attrs, "T", &t).ok());
  EXPECT_EQ(t, DT_DOUBLE);
  PartialShape shape;
  ASSERT_TRUE(GetAttr(attrs, "shape", &shape).ok());
  EXPECT_EQ(shape, PartialShape({-1, 2}));
  Tensor value;
  ASSERT_TRUE(GetAttr(attrs, "value", &value).ok());
  EXPECT_EQ(value.flat<int32_t>()[1], 5);

  std::vector<int64_t> ints;
  ASSERT_TRUE(GetAttr(attrs, "ints", &ints).ok());
  EXPECT_EQ(ints, (std::vector<int64_t>{1, 2, 3}));
  std::vector<int32_t> ints32;
  ASSERT_TRUE(GetAttr(attrs, "ints", &ints32).ok());
  EXPECT_EQ(ints32, (std::vector<int32_t>{1, 2, 3}));
  std::vector<float> floats;
  ASSERT_TRUE(GetAttr(attrs, "floats", &floats).ok());
  EXPECT_EQ(floats, (std::vector<float>{0.5f}));
  std::vector<DType> types;
  ASSERT_TRUE(GetAttr(attrs, "types", &types).ok());
  EXPECT_EQ(types, (std::vector<DType>{DT_INT32, DT_BOOL}));
  std::vector<std::string> strings;
  ASSERT_TRUE(GetAttr(attrs, "strings", &strings).ok());
  EXPECT_EQ(strings, (std::vector<std::string>{"x", "y"}));
  std::vector<PartialShape> shapes;
  ASSERT_TRUE(GetAttr(attrs, "shapes", &shapes).ok());
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0], PartialShape({1}));
  EXPECT_FALSE(shapes[1].known_rank());

  // An empty list is an empty list of any kind.
  types = {DT_FLOAT};
  ASSERT_TRUE(GetAttr(attrs, "empty", &types).ok());
  EXPECT_TRUE(types.empty());
  strings = {"z"};
  ASSERT_TRUE(GetAttr(attrs, "empty", &strings).ok());
  EXPECT_TRUE(strings.empty());
}

TEST(GetAttrTest, MissingAttrIsNotFound) {
  AttrMap attrs = SampleAttrs();
  int64_t i = 99;
  Status s = GetAttr(attrs, "nope", &i);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "'nope'")) << s;
  EXPECT_EQ(i, 99);
  std::vector<DType> types;
  EXPECT_EQ(GetAttr(attrs, "nope", &types).code(), Code::kNotFound);
  int32_t i32;
  EXPECT_EQ(GetAttr(attrs, "nope", &i32).code(), Code::kNotFound);
}

TEST(GetAttrTest, WrongKindNamesAttrAndKinds) {
  AttrMap attrs = SampleAttrs();
  int64_t i = 99;
  Status s = GetAttr(attrs, "s", &i);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'s'")) << s;
  EXPECT_TRUE(Contains(s.message(), "string")) << s;    // what it is
  EXPECT_TRUE(Contains(s.message(), "\"SAME\"")) << s;  // its value
  EXPECT_TRUE(Contains(s.message(), "expected int")) << s;
  EXPECT_EQ(i, 99);

  DType t;
  s = GetAttr(attrs, "ints", &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "list(int)")) << s;
  EXPECT_TRUE(Contains(s.message(), "expected type")) << s;

  std::vector<DType> types;
  s = GetAttr(attrs, "ints", &types);  // a list, but of another kind
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'ints'")) << s;
  EXPECT_TRUE(Contains(s.message(), "expected list(type)")) << s;

  std::vector<int64_t> ints;
  s = GetAttr(attrs, "i", &ints);  // a scalar where a list is wanted
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "expected list(int)")) << s;

  bool b;
  EXPECT_EQ(GetAttr(attrs, "i", &b).code(), Code::kInvalidArgument);
  float f;
  EXPECT_EQ(GetAttr(attrs, "i", &f).code(), Code::kInvalidArgument);
  Tensor tensor;
  EXPECT_EQ(GetAttr(attrs, "shape", &tensor).code(), Code::kInvalidArgument);
  PartialShape shape;
  EXPECT_EQ(GetAttr(attrs, "shapes", &shape).code(), Code::kInvalidArgument);
  std::string str;
  EXPECT_EQ(GetAttr(attrs, "strings", &str).code(), Code::kInvalidArgument);
}

TEST(GetAttrTest, Int32Overflow) {
  AttrMap attrs = SampleAttrs();
  int32_t i32 = 7;
  Status s = GetAttr(attrs, "big", &i32);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'big'")) << s;
  EXPECT_TRUE(Contains(s.message(), "1099511627776")) << s;
  EXPECT_TRUE(Contains(s.message(), "int32")) << s;
  EXPECT_EQ(i32, 7);
  attrs["neg"] = AttrValue(int64_t{INT32_MIN} - 1);
  EXPECT_EQ(GetAttr(attrs, "neg", &i32).code(), Code::kInvalidArgument);

  // Lists are checked element by element, not silently truncated.
  std::vector<int32_t> ints32 = {9};
  s = GetAttr(attrs, "big_ints", &ints32);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'big_ints'")) << s;
  EXPECT_TRUE(Contains(s.message(), "1099511627776")) << s;
  EXPECT_EQ(ints32, (std::vector<int32_t>{9}));
}

TEST(AttrValueTest, FuncAndPlaceholder) {
  AttrValue body(NameAttrList{"body_fn", {{"T", DT_FLOAT}}});
  EXPECT_TRUE(body.is_func());
  EXPECT_EQ(body.KindName(), "func");
  EXPECT_EQ(body.func().name, "body_fn");
  EXPECT_EQ(body.DebugString(), "body_fn[T=float]");
  AttrValue copy = body;
  EXPECT_EQ(copy, body);
  EXPECT_NE(copy, AttrValue(NameAttrList{"body_fn", {{"T", DT_INT32}}}));
  AttrMap attrs{{"body", body}, {"T", AttrValue(AttrValue::Placeholder{"T"})}};
  NameAttrList got;
  ASSERT_TRUE(GetAttr(attrs, "body", &got).ok());
  EXPECT_EQ(got.name, "body_fn");
  EXPECT_EQ(attrs["T"].KindName(), "placeholder");
  EXPECT_EQ(attrs["T"].placeholder(), "T");
  EXPECT_EQ(attrs["T"].DebugString(), "$T");
  EXPECT_FALSE(GetAttr(attrs, "T", &got).ok());
  AttrValue::List branches;
  branches.func.push_back(std::make_shared<const NameAttrList>(NameAttrList{"a", {}}));
  branches.func.push_back(std::make_shared<const NameAttrList>(NameAttrList{"b", {}}));
  attrs["branches"] = AttrValue(branches);
  EXPECT_EQ(attrs["branches"].KindName(), "list(func)");
  std::vector<NameAttrList> list;
  ASSERT_TRUE(GetAttr(attrs, "branches", &list).ok());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].name, "b");
  EXPECT_FALSE(GetAttr(attrs, "body", &list).ok());
}

}  // namespace
}  // namespace weir
