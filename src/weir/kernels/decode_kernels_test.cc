// DecodeRaw, DecodeCSV, StringToNumber, SerializeTensor and ParseTensor:
// values against hand-computed references, and every bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

Tensor Strings(std::vector<std::string> values) { return Tensor::FromVector(values); }

void ExpectInvalid(const StatusOr<std::vector<Tensor>>& result,
                   std::vector<std::string> fragments) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument) << result.status();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(result.status().message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << result.status();
  }
}

template <typename T>
std::string BytesOf(std::vector<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(DecodeRawTest, LittleAndBigEndian) {
  const std::string a = BytesOf<int16_t>({1, -2, 300});
  const std::string b = BytesOf<int16_t>({7, 8, 9});
  auto out = RunKernel("DecodeRaw", {{"out_type", DT_INT16}}, {Strings({a, b})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(
      Tensor::FromVector<int16_t>({1, -2, 300, 7, 8, 9}, TensorShape({2, 3}))));
  // The same bytes read big-endian: each pair swapped (1 -> 256).
  out =
      RunKernel("DecodeRaw", {{"out_type", DT_INT16}, {"little_endian", false}}, {Strings({a, b})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(
      Tensor::FromVector<int16_t>({256, -257, 11265, 1792, 2048, 2304}, TensorShape({2, 3}))));

  // Floats from a 2-D batch keep the batch shape; complex numbers swap each part.
  Tensor grid = Tensor::FromVector<std::string>(
      {BytesOf<float>({1.5f}), BytesOf<float>({-2}), BytesOf<float>({0}), BytesOf<float>({8})},
      TensorShape({2, 2}));
  out = RunKernel("DecodeRaw", {{"out_type", DT_FLOAT}}, {grid});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(
      (*out)[0].ContentEquals(Tensor::FromVector<float>({1.5f, -2, 0, 8}, TensorShape({2, 2, 1}))));
  std::string big_endian_complex;
  for (float part : {1.0f, -3.0f}) {
    std::string bytes = BytesOf<float>({part});
    big_endian_complex += std::string(bytes.rbegin(), bytes.rend());
  }
  out = RunKernel("DecodeRaw", {{"out_type", DT_COMPLEX64}, {"little_endian", false}},
                  {Strings({big_endian_complex})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(
      (*out)[0].ContentEquals(Tensor::FromVector<complex64>({{1.0f, -3.0f}}, TensorShape({1, 1}))));
  // Bytes as bools, and uint8 untouched.
  out =
      RunKernel("DecodeRaw", {{"out_type", DT_BOOL}}, {Strings({std::string("\x00\x01\x07", 3)})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(
      (*out)[0].ContentEquals(Tensor::FromVector<bool>({false, true, true}, TensorShape({1, 3}))));
  out = RunKernel("DecodeRaw", {{"out_type", DT_UINT8}}, {Strings({"\xff\x10"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<uint8_t>({255, 16}, TensorShape({1, 2}))));
}

TEST(DecodeRawTest, EmptyAndBadInputs) {
  auto out = RunKernel("DecodeRaw", {{"out_type", DT_INT32}}, {Strings({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 0}));
  out = RunKernel("DecodeRaw", {{"out_type", DT_INT32}}, {Strings({"", ""})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 0}));
  ExpectInvalid(RunKernel("DecodeRaw", {{"out_type", DT_INT16}}, {Strings({"abcd", "ab"})}),
                {"same length", "element 1 has 2"});
  ExpectInvalid(RunKernel("DecodeRaw", {{"out_type", DT_INT32}}, {Strings({"abcdef"})}),
                {"6 bytes", "multiple of 4", "int32"});
  EXPECT_FALSE(RunKernel("DecodeRaw", {{"out_type", DT_STRING}}, {Strings({"a"})}).ok());
}

TEST(StringToNumberTest, EachTypeAndWhitespace) {
  auto out = RunKernel("StringToNumber", {},
                       {Strings({"1.5", " -2e3 ", "+0.25", "inf", "-Infinity", "1e50", "0x10"})});
  ASSERT_TRUE(out.ok()) << out.status();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(
      (*out)[0].ContentEquals(Tensor::FromVector<float>({1.5f, -2000, 0.25f, inf, -inf, inf, 16})));
  out = RunKernel("StringToNumber", {}, {Strings({"nan"})});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(std::isnan((*out)[0].data<float>()[0]));
  out = RunKernel("StringToNumber", {{"out_type", DT_DOUBLE}}, {Strings({"0.1", "1e-320"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<double>()[0], 0.1);
  EXPECT_EQ((*out)[0].data<double>()[1], 1e-320);
  out = RunKernel("StringToNumber", {{"out_type", DT_INT32}},
                  {Strings({"2147483647", "-2147483648", " +12\t", "0"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(
      (*out)[0].ContentEquals(Tensor::FromVector<int32_t>({2147483647, -2147483647 - 1, 12, 0})));
  out = RunKernel("StringToNumber", {{"out_type", DT_INT64}}, {Strings({"-9223372036854775808"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  out = RunKernel("StringToNumber", {{"out_type", DT_UINT64}}, {Strings({"18446744073709551615"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
}

TEST(StringToNumberTest, ErrorsNameTheString) {
  for (const char* bad : {"1.5x", "", " ", "1,5", "--1", "+-1", "1 2"}) {
    ExpectInvalid(RunKernel("StringToNumber", {}, {Strings({"1", bad})}),
                  {"element 1", StrCat("'", bad, "'"), "float"});
  }
  for (const char* bad : {"2147483648", "-2147483649", "1.0", "0x10", "12a"}) {
    ExpectInvalid(RunKernel("StringToNumber", {{"out_type", DT_INT32}}, {Strings({bad})}),
                  {StrCat("'", bad, "'"), "int32"});
  }
  ExpectInvalid(RunKernel("StringToNumber", {{"out_type", DT_UINT32}}, {Strings({"-1"})}),
                {"'-1'", "uint32"});
}

AttrMap CsvAttrs(std::vector<DType> types, AttrMap more = {}) {
  more["OUT_TYPE"] = types;
  return more;
}

TEST(DecodeCSVTest, TypesDefaultsAndQuotes) {
  Tensor records = Strings({"1,2.5,x,7", ",,\"a,\"\"b\"\"\",", "-3,1e2,,"});
  auto out =
      RunKernel("DecodeCSV", CsvAttrs({DT_INT32, DT_FLOAT, DT_STRING, DT_INT64}),
                {records, Tensor::FromVector<int32_t>({-1}), Tensor::FromVector<float>({0.5f}),
                 Strings({"none"}), Tensor::Scalar<int64_t>(99)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<int32_t>({1, -1, -3})));
  EXPECT_TRUE((*out)[1].ContentEquals(Tensor::FromVector<float>({2.5f, 0.5f, 100})));
  EXPECT_TRUE((*out)[2].ContentEquals(Strings({"x", "a,\"b\"", "none"})));
  EXPECT_TRUE((*out)[3].ContentEquals(Tensor::FromVector<int64_t>({7, 99, 99})));
}

TEST(DecodeCSVTest, DelimiterNaValueAndSelectedColumns) {
  Tensor records = Tensor::FromVector<std::string>({"a|NA|3|x", "b|2|NA|y"}, TensorShape({2, 1}));
  auto out = RunKernel(
      "DecodeCSV",
      CsvAttrs(
          {DT_DOUBLE, DT_STRING},
          {{"field_delim", "|"}, {"na_value", "NA"}, {"select_cols", std::vector<int64_t>{2, 3}}}),
      {records, Tensor::FromVector<double>({-1}), Strings({""})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<double>({3, -1}, TensorShape({2, 1}))));
  EXPECT_TRUE(
      (*out)[1].ContentEquals(Tensor::FromVector<std::string>({"x", "y"}, TensorShape({2, 1}))));
  // Without use_quote_delim quotes are ordinary characters.
  out = RunKernel("DecodeCSV", CsvAttrs({DT_STRING, DT_STRING}, {{"use_quote_delim", false}}),
                  {Strings({"\"a,b\""}), Strings({""}), Strings({""})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Strings({"\"a"})));
  EXPECT_TRUE((*out)[1].ContentEquals(Strings({"b\""})));
}

TEST(DecodeCSVTest, ErrorsNameRecordAndField) {
  auto run = [](std::vector<std::string> records, AttrMap attrs = {}) {
    return RunKernel(
        "DecodeCSV", CsvAttrs({DT_INT32, DT_FLOAT}, attrs),
        {Strings(records), Tensor::FromVector<int32_t>({0}), Tensor(DT_FLOAT, TensorShape({0}))});
  };
  ExpectInvalid(run({"1,2", "3"}), {"record 1", "1 fields", "2 were expected"});
  ExpectInvalid(run({"1,2,3"}), {"record 0", "3 fields"});
  ExpectInvalid(run({"1,2", "4,"}), {"field 1 of record 1", "no default"});
  ExpectInvalid(run({"1,2", "x,3"}), {"field 0 of record 1", "'x'", "int32"});
  ExpectInvalid(run({"1,2.5.1"}), {"field 1 of record 0", "'2.5.1'", "float"});
  ExpectInvalid(run({"\"1\"x,2"}), {"record 0", "field 0", "doubled"});
  ExpectInvalid(run({"2,\"1"}), {"record 0", "field 1", "quoted field must end"});
  ExpectInvalid(run({"\"1\"\"\",\"a\"b\",2"}), {"record 0", "field 1", "doubled"});
  ExpectInvalid(run({"1,2\"3"}), {"record 0", "field 1", "unquoted"});
  ExpectInvalid(RunKernel("DecodeCSV", CsvAttrs({DT_INT32}),
                          {Strings({"1"}), Tensor::FromVector<int32_t>({1, 2})}),
                {"record_defaults[0]"});
  ExpectInvalid(RunKernel("DecodeCSV", CsvAttrs({DT_INT32}, {{"field_delim", "ab"}}),
                          {Strings({"1"}), Tensor::Scalar<int32_t>(0)}),
                {"one character"});
  ExpectInvalid(
      RunKernel("DecodeCSV",
                CsvAttrs({DT_INT32, DT_INT32}, {{"select_cols", std::vector<int64_t>{2, 1}}}),
                {Strings({"1"}), Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(0)}),
      {"strictly increasing"});
  ExpectInvalid(
      RunKernel("DecodeCSV", CsvAttrs({DT_INT32}, {{"select_cols", std::vector<int64_t>{0, 1}}}),
                {Strings({"1"}), Tensor::Scalar<int32_t>(0)}),
      {"select_cols has 2"});
}

TEST(TensorSerializationTest, RoundTripsAndChecksOutType) {
  for (const Tensor& t : {Tensor::FromVector<float>({1, -2.5f, 3, 4, 5, 6}, TensorShape({2, 3})),
                          Tensor::FromVector<std::string>({"", std::string("\0\xff", 2), "abc"}),
                          Tensor::Scalar<int64_t>(-5), Tensor(DT_DOUBLE, TensorShape({0, 4}))}) {
    auto serialized = RunKernel("SerializeTensor", {{"T", t.dtype()}}, {t});
    ASSERT_TRUE(serialized.ok()) << serialized.status();
    EXPECT_EQ((*serialized)[0].shape(), TensorShape());
    auto parsed = RunKernel("ParseTensor", {{"out_type", t.dtype()}}, {(*serialized)[0]});
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_TRUE((*parsed)[0].ContentEquals(t)) << (*parsed)[0].DebugString();
  }
  auto serialized = RunKernel("SerializeTensor", {{"T", DT_FLOAT}}, {Tensor::Scalar(1.0f)});
  ASSERT_TRUE(serialized.ok());
  ExpectInvalid(RunKernel("ParseTensor", {{"out_type", DT_INT32}}, {(*serialized)[0]}),
                {"is float", "out_type is int32"});
  ExpectInvalid(RunKernel("ParseTensor", {{"out_type", DT_INT32}},
                          {Tensor::Scalar<std::string>("garbage\xff")}),
                {"not a TensorProto"});
  ExpectInvalid(
      RunKernel("ParseTensor", {{"out_type", DT_FLOAT}},
                {Tensor::FromVector<std::string>({(*serialized)[0].scalar<std::string>()})}),
      {"scalar"});
  // A TensorProto whose content does not fill its shape (dtype float,
  // shape [1000000], 4 bytes of tensor_content).
  std::string short_content("\x08\x01\x12\x06\x12\x04\x08\xc0\x84\x3d\x22\x04\x00\x00\x80\x3f", 16);
  ExpectInvalid(RunKernel("ParseTensor", {{"out_type", DT_FLOAT}}, {Tensor::Scalar(short_content)}),
                {"ParseTensor"});
}

}  // namespace
}  // namespace weir
