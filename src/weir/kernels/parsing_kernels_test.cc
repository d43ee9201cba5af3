// ParseExampleV2 and ParseSingleExample on Examples built with the generated
// protobuf classes (an independent encoder), and on hand-made wire bytes for
// what protobuf's own serializer never writes.
#include <gtest/gtest.h>

#include "proto/example.pb.h"
#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

using Features = std::map<std::string, wire::Feature>;

wire::Feature Floats(std::vector<float> values) {
  wire::Feature f;
  for (float v : values) f.mutable_float_list()->add_value(v);
  if (values.empty()) f.mutable_float_list();
  return f;
}
wire::Feature Ints(std::vector<int64_t> values) {
  wire::Feature f;
  for (int64_t v : values) f.mutable_int64_list()->add_value(v);
  if (values.empty()) f.mutable_int64_list();
  return f;
}
wire::Feature Bytes(std::vector<std::string> values) {
  wire::Feature f;
  for (const std::string& v : values) f.mutable_bytes_list()->add_value(v);
  if (values.empty()) f.mutable_bytes_list();
  return f;
}

std::string Serialize(const Features& features) {
  wire::Example example;
  for (const auto& [key, feature] : features) {
    (*example.mutable_features()->mutable_feature())[key] = feature;
  }
  return example.SerializeAsString();
}

Tensor Strings(std::vector<std::string> values) { return Tensor::FromVector(values); }

struct Spec {
  std::vector<std::string> sparse_keys;
  std::vector<DType> sparse_types;
  std::vector<std::string> dense_keys;
  std::vector<DType> dense_types;
  std::vector<PartialShape> dense_shapes;
  std::vector<Tensor> dense_defaults;
  std::vector<std::string> ragged_keys;
  std::vector<DType> ragged_value_types;
  std::vector<DType> ragged_split_types;
};

StatusOr<std::vector<Tensor>> ParseExampleV2(const Tensor& serialized, const Spec& spec,
                                             Tensor names = Strings({})) {
  AttrMap attrs = {{"Tdense", spec.dense_types},
                   {"num_sparse", static_cast<int64_t>(spec.sparse_keys.size())},
                   {"sparse_types", spec.sparse_types},
                   {"ragged_value_types", spec.ragged_value_types},
                   {"ragged_split_types", spec.ragged_split_types},
                   {"dense_shapes", spec.dense_shapes}};
  std::vector<Tensor> inputs = {serialized, names, Strings(spec.sparse_keys),
                                Strings(spec.dense_keys), Strings(spec.ragged_keys)};
  inputs.insert(inputs.end(), spec.dense_defaults.begin(), spec.dense_defaults.end());
  return RunKernel("ParseExampleV2", attrs, inputs, "parse");
}

StatusOr<std::vector<Tensor>> ParseSingleExample(const std::string& serialized, const Spec& spec) {
  AttrMap attrs = {{"num_sparse", static_cast<int64_t>(spec.sparse_keys.size())},
                   {"sparse_keys", spec.sparse_keys},
                   {"dense_keys", spec.dense_keys},
                   {"sparse_types", spec.sparse_types},
                   {"Tdense", spec.dense_types},
                   {"dense_shapes", spec.dense_shapes}};
  std::vector<Tensor> inputs = {Tensor::Scalar(serialized)};
  inputs.insert(inputs.end(), spec.dense_defaults.begin(), spec.dense_defaults.end());
  return RunKernel("ParseSingleExample", attrs, inputs, "parse_single");
}

template <typename T>
Tensor Empty() {
  return Tensor(kDTypeOf<T>, TensorShape({0}));
}

void ExpectInvalid(const StatusOr<std::vector<Tensor>>& result,
                   std::vector<std::string> fragments) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument) << result.status();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(result.status().message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << result.status();
  }
}

TEST(ParseExampleTest, DenseFeaturesOfEachTypeWithDefaults) {
  const std::string first = Serialize({{"image", Bytes({"\x01\x02", ""})},
                                       {"label", Ints({7})},
                                       {"weights", Floats({0.5f, -1.5f, 3.0f, 4.0f})}});
  // The second example lacks label and weights: both take their defaults.
  const std::string second = Serialize({{"image", Bytes({"abc", "d"})}, {"other", Ints({1})}});
  Spec spec;
  spec.dense_keys = {"image", "label", "weights"};
  spec.dense_types = {DT_STRING, DT_INT64, DT_FLOAT};
  spec.dense_shapes = {PartialShape({2}), PartialShape(std::vector<int64_t>{}),
                       PartialShape({2, 2})};
  spec.dense_defaults = {Empty<std::string>(), Tensor::Scalar<int64_t>(-1),
                         Tensor::FromVector<float>({9, 8, 7, 6}, TensorShape({2, 2}))};
  auto out = ParseExampleV2(Strings({first, second}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_TRUE((*out)[0].ContentEquals(
      Tensor::FromVector<std::string>({"\x01\x02", "", "abc", "d"}, TensorShape({2, 2}))));
  EXPECT_TRUE((*out)[1].ContentEquals(Tensor::FromVector<int64_t>({7, -1})));
  EXPECT_TRUE((*out)[2].ContentEquals(
      Tensor::FromVector<float>({0.5f, -1.5f, 3, 4, 9, 8, 7, 6}, TensorShape({2, 2, 2}))));
}

TEST(ParseExampleTest, SparseFeaturesGiveIndicesValuesAndShape) {
  const std::string a = Serialize({{"ids", Ints({3, -4, 1LL << 40})}, {"tags", Bytes({"x"})}});
  const std::string b = Serialize({{"ids", Ints({})}});
  const std::string c = Serialize({{"ids", Ints({5})}, {"tags", Bytes({"y", "zz"})}});
  Spec spec;
  spec.sparse_keys = {"ids", "tags"};
  spec.sparse_types = {DT_INT64, DT_STRING};
  auto out = ParseExampleV2(Strings({a, b, c}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 6u);
  EXPECT_TRUE((*out)[0].ContentEquals(
      Tensor::FromVector<int64_t>({0, 0, 0, 1, 0, 2, 2, 0}, TensorShape({4, 2}))));
  EXPECT_TRUE((*out)[1].ContentEquals(
      Tensor::FromVector<int64_t>({0, 0, 2, 0, 2, 1}, TensorShape({3, 2}))));
  EXPECT_TRUE((*out)[2].ContentEquals(Tensor::FromVector<int64_t>({3, -4, 1LL << 40, 5})));
  EXPECT_TRUE((*out)[3].ContentEquals(Strings({"x", "y", "zz"})));
  EXPECT_TRUE((*out)[4].ContentEquals(Tensor::FromVector<int64_t>({3, 3})));
  EXPECT_TRUE((*out)[5].ContentEquals(Tensor::FromVector<int64_t>({3, 2})));
}

TEST(ParseExampleTest, RaggedFeaturesGiveValuesAndRowSplits) {
  const std::string a = Serialize({{"v", Floats({1, 2})}});
  const std::string b = Serialize({});
  const std::string c = Serialize({{"v", Floats({3, 4, 5})}});
  Spec spec;
  spec.ragged_keys = {"v"};
  spec.ragged_value_types = {DT_FLOAT};
  spec.ragged_split_types = {DT_INT32};
  auto out = ParseExampleV2(Strings({a, b, c}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<float>({1, 2, 3, 4, 5})));
  EXPECT_TRUE((*out)[1].ContentEquals(Tensor::FromVector<int32_t>({0, 2, 2, 5})));
}

TEST(ParseExampleTest, VariableLengthDenseFeaturesArePadded) {
  const std::string a = Serialize({{"pairs", Ints({1, 2, 3, 4})}});
  const std::string b = Serialize({});
  const std::string c = Serialize({{"pairs", Ints({5, 6})}});
  Spec spec;
  spec.dense_keys = {"pairs"};
  spec.dense_types = {DT_INT64};
  spec.dense_shapes = {PartialShape({-1, 2})};
  spec.dense_defaults = {Tensor::Scalar<int64_t>(0)};
  auto out = ParseExampleV2(Strings({a, b, c}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(
      Tensor::FromVector<int64_t>({1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 0, 0}, TensorShape({3, 2, 2}))));
  // A count that is not a whole number of rows.
  ExpectInvalid(ParseExampleV2(Strings({a, Serialize({{"pairs", Ints({1, 2, 3})}})}), spec),
                {"example 1", "'pairs'", "3 int64 values", "multiple of the 2"});
}

TEST(ParseExampleTest, ScalarInputAndParseSingleExample) {
  const std::string one = Serialize({{"x", Floats({1.5f, 2.5f})}, {"s", Ints({4, 5, 6})}});
  Spec spec;
  spec.sparse_keys = {"s"};
  spec.sparse_types = {DT_INT64};
  spec.dense_keys = {"x"};
  spec.dense_types = {DT_FLOAT};
  spec.dense_shapes = {PartialShape({2})};
  spec.dense_defaults = {Empty<float>()};
  for (bool single : {false, true}) {
    auto out = single ? ParseSingleExample(one, spec) : ParseExampleV2(Tensor::Scalar(one), spec);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 4u);
    EXPECT_TRUE(
        (*out)[0].ContentEquals(Tensor::FromVector<int64_t>({0, 1, 2}, TensorShape({3, 1}))));
    EXPECT_TRUE((*out)[1].ContentEquals(Tensor::FromVector<int64_t>({4, 5, 6})));
    EXPECT_TRUE((*out)[2].ContentEquals(Tensor::FromVector<int64_t>({3})));
    EXPECT_TRUE((*out)[3].ContentEquals(Tensor::FromVector<float>({1.5f, 2.5f})));
  }
  ExpectInvalid(ParseSingleExample(Serialize({{"x", Floats({1})}}), spec),
                {"the example", "'x'", "has 1 float values", "needs 2"});
}

TEST(ParseExampleTest, ErrorsNameTheExampleTheFeatureAndWhatWasExpected) {
  Spec spec;
  spec.dense_keys = {"label"};
  spec.dense_types = {DT_INT64};
  spec.dense_shapes = {PartialShape(std::vector<int64_t>{})};
  spec.dense_defaults = {Empty<int64_t>()};
  const std::string good = Serialize({{"label", Ints({1})}});
  Tensor names = Strings({"first.rec:0", "second.rec:7"});
  ExpectInvalid(
      ParseExampleV2(Strings({good, Serialize({{"label", Floats({1})}})}), spec, names),
      {"example 1 ('second.rec:7')", "'label'", "holds float values", "int64 was expected"});
  ExpectInvalid(ParseExampleV2(Strings({good, Serialize({{"label", Ints({1, 2})}})}), spec),
                {"example 1", "'label'", "has 2 int64 values", "needs 1"});
  ExpectInvalid(ParseExampleV2(Strings({Serialize({{"lab", Ints({1})}}), good}), spec),
                {"example 0", "'label'", "required but missing"});
  // Malformed bytes: a truncated length, a bad wire type, a truncated varint.
  for (std::string bad : {std::string("\x0a\x05"
                                      "abc"),
                          std::string("\x0b", 1), std::string("\x0a\x02\x0a\x80", 4),
                          good.substr(0, good.size() - 1)}) {
    ExpectInvalid(ParseExampleV2(Strings({good, good, bad}), spec, Strings({"a", "b", "c"})),
                  {"example 2 ('c')", "malformed"});
  }
  // A feature whose values do not parse.
  std::string broken_feature =
      "\x0a\x0c\x0a\x0a\x0a\x05label\x12\x01\x1a";  // Feature: tag, no length
  ExpectInvalid(ParseExampleV2(Strings({broken_feature}), spec), {"'label'", "malformed"});
  // Packed floats of a length that is not a multiple of 4.
  const std::string odd_floats =
      std::string("\x0a\x0d\x0a\x0b\x0a\x01x\x12\x06\x12\x04\x0a\x02", 13) +
      std::string("\x00\x00", 2);
  spec.dense_keys = {"x"};
  spec.dense_types = {DT_FLOAT};
  spec.dense_shapes = {PartialShape({-1})};
  spec.dense_defaults = {Tensor::Scalar<float>(0)};
  ExpectInvalid(ParseExampleV2(Strings({odd_floats}), spec), {"'x'", "malformed"});
}

TEST(ParseExampleTest, BadConfigurations) {
  Spec spec;
  spec.dense_keys = {"x"};
  spec.dense_types = {DT_FLOAT};
  spec.dense_shapes = {PartialShape({2})};
  spec.dense_defaults = {Tensor::FromVector<float>({1, 2, 3})};
  const std::string x = Serialize({{"x", Floats({1, 2})}});
  ExpectInvalid(ParseExampleV2(Strings({x}), spec), {"'x'", "shape [2]", "default has shape [3]"});
  // A variable-length feature's default is its one padding element.
  spec.dense_shapes = {PartialShape({-1})};
  ExpectInvalid(ParseExampleV2(Strings({x}), spec), {"'x'", "one element"});
  // Huge dims: refused before anything that size is allocated.
  spec.dense_shapes = {PartialShape({int64_t{1} << 40, int64_t{1} << 20})};
  spec.dense_defaults = {Empty<float>()};
  ExpectInvalid(ParseExampleV2(Strings({x}), spec), {"'x'", "1152921504606846976 values"});
  spec.dense_shapes = {PartialShape({int64_t{1} << 40, int64_t{1} << 40})};
  ExpectInvalid(ParseExampleV2(Strings({x}), spec), {"'x'", "more than 2^63"});
  // A key asked for twice.
  spec.dense_shapes = {PartialShape({2})};
  spec.sparse_keys = {"x"};
  spec.sparse_types = {DT_FLOAT};
  ExpectInvalid(ParseExampleV2(Strings({x}), spec), {"'x'", "twice"});
  // Keys and names that do not match the attrs and the batch.
  spec.sparse_keys.clear();
  spec.sparse_types.clear();
  ExpectInvalid(ParseExampleV2(Strings({x}), spec, Strings({"a", "b"})), {"names"});
  auto result =
      RunKernel("ParseExampleV2",
                {{"Tdense", std::vector<DType>{DT_FLOAT}},
                 {"num_sparse", int64_t{0}},
                 {"sparse_types", std::vector<DType>{}},
                 {"ragged_value_types", std::vector<DType>{}},
                 {"ragged_split_types", std::vector<DType>{}},
                 {"dense_shapes", std::vector<PartialShape>{PartialShape({2})}}},
                {Strings({x}), Strings({}), Strings({}), Strings({}), Strings({}), Empty<float>()});
  ExpectInvalid(result, {"dense_keys", "vector of 1"});
}

// What a serializer does not write but protobuf parsers accept: repeated
// Features and duplicate keys (the last wins), unpacked lists, two oneof
// members (the last wins), unknown fields; and malformed features nobody
// asked for, which are skipped as TensorFlow's fast parser skips them.
TEST(ParseExampleTest, ProtobufSemanticsOnHandMadeBytes) {
  Spec spec;
  spec.dense_keys = {"a"};
  spec.dense_types = {DT_INT64};
  spec.dense_shapes = {PartialShape({2})};
  spec.dense_defaults = {Empty<int64_t>()};
  // Two serialized Examples concatenated are one merged Example.
  const std::string merged = Serialize({{"a", Ints({1, 2})}}) + Serialize({{"a", Ints({3, 4})}});
  auto out = ParseExampleV2(Strings({merged}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<int64_t>({3, 4}, TensorShape({1, 2}))));

  // Feature {int64_list {value: 5 (unpacked) value: [6] (packed)}}, after an
  // unknown field 9 of the Example, and a float_list member before it.
  std::string int64_list = std::string("\x08\x05", 2) + std::string("\x0a\x01\x06", 3);
  std::string float_list = std::string("\x0d", 1) + std::string("\x00\x00\x80\x3f", 4);
  std::string feature = "\x12" + std::string(1, char(float_list.size())) + float_list + "\x1a" +
                        std::string(1, char(int64_list.size())) + int64_list;
  std::string entry = std::string(
                          "\x0a\x01"
                          "a",
                          3) +
                      "\x12" + std::string(1, char(feature.size())) + feature;
  std::string junk_entry = std::string(
      "\x0a\x01"
      "b\x12\x02\x1a\x7f",
      7);  // malformed, not asked for
  std::string features = "\x0a" + std::string(1, char(entry.size())) + entry + "\x0a" +
                         std::string(1, char(junk_entry.size())) + junk_entry;
  std::string example =
      std::string("\x48\x01", 2) + "\x0a" + std::string(1, char(features.size())) + features;
  out = ParseExampleV2(Strings({example}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<int64_t>({5, 6}, TensorShape({1, 2}))));

  // An empty Feature (no member) is an empty list of the expected type.
  spec.dense_shapes = {PartialShape({0})};
  out = ParseExampleV2(Strings({Serialize({{"a", wire::Feature()}})}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 0}));
}

// A kernel keeps its last parser while keys and defaults stay the same;
// new ones must take effect in the next step.
TEST(ParseExampleTest, OneKernelFollowsChangingKeysAndDefaults) {
  AttrMap attrs = {{"Tdense", std::vector<DType>{DT_INT64}},
                   {"num_sparse", int64_t{0}},
                   {"sparse_types", std::vector<DType>{}},
                   {"ragged_value_types", std::vector<DType>{}},
                   {"ragged_split_types", std::vector<DType>{}},
                   {"dense_shapes", std::vector<PartialShape>{PartialShape({1})}}};
  auto kernel = CreateTestKernel("ParseExampleV2", attrs, 6);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const Tensor serialized = Strings({Serialize({{"a", Ints({1})}}), Serialize({{"b", Ints({2})}})});
  auto step = [&](const std::string& key, int64_t default_value) {
    auto out = ComputeTestKernel(kernel->get(), TestCpuDevice(),
                                 {serialized, Strings({}), Strings({}), Strings({key}), Strings({}),
                                  Tensor::FromVector<int64_t>({default_value})});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  };
  auto column = [](std::vector<int64_t> values) {
    return Tensor::FromVector<int64_t>(values, TensorShape({2, 1}));
  };
  EXPECT_TRUE(step("a", -1).ContentEquals(column({1, -1})));
  EXPECT_TRUE(step("a", -1).ContentEquals(column({1, -1})));
  EXPECT_TRUE(step("a", -5).ContentEquals(column({1, -5})));
  EXPECT_TRUE(step("b", -5).ContentEquals(column({-5, 2})));
}

TEST(ParseExampleTest, EmptyBatch) {
  Spec spec;
  spec.sparse_keys = {"s"};
  spec.sparse_types = {DT_STRING};
  spec.dense_keys = {"x"};
  spec.dense_types = {DT_FLOAT};
  spec.dense_shapes = {PartialShape({3})};
  spec.dense_defaults = {Empty<float>()};
  auto out = ParseExampleV2(Strings({}), spec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 2}));
  EXPECT_TRUE((*out)[2].ContentEquals(Tensor::FromVector<int64_t>({0, 0})));
  EXPECT_EQ((*out)[3].shape(), TensorShape({0, 3}));
}

}  // namespace
}  // namespace weir
