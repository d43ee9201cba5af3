// ExampleParser against protobuf's generated parser on thousands of mutated
// Examples: wherever protobuf accepts the bytes, the requested features get
// protobuf's values (or a type error where protobuf's oneof holds another
// kind); wherever it does not, the parser fails cleanly with InvalidArgument
// or, for damage in features nobody asked for, succeeds. Never a crash.
#include "weir/kernels/example_parser.h"

#include <gtest/gtest.h>

#include <random>

#include "proto/example.pb.h"
#include "weir/framework/allocator.h"

namespace weir {
namespace {

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  for (int i = 0; i < 4; ++i) {
    wire::Example example;
    auto& features = *example.mutable_features()->mutable_feature();
    for (int v = 0; v < i + 1; ++v) {
      features["f"].mutable_float_list()->add_value(0.5f * v - i);
      features["i"].mutable_int64_list()->add_value(int64_t{v - 2} << (7 * v));
      features["b"].mutable_bytes_list()->add_value(std::string(v * 3, static_cast<char>('a' + v)));
    }
    features["other"].mutable_int64_list()->add_value(i);
    seeds.push_back(example.SerializeAsString());
  }
  return seeds;
}

std::string Mutate(std::string bytes, std::mt19937& rng) {
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    const size_t at = rng() % bytes.size();
    switch (rng() % 5) {
      case 0: bytes[at] = static_cast<char>(rng()); break;             // any byte
      case 1: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); break;  // one bit
      case 2: bytes.erase(at, 1 + rng() % 4); break;                    // delete
      case 3: bytes.insert(at, 1, static_cast<char>(rng())); break;     // insert
      default: bytes.resize(at); break;                                 // truncate
    }
  }
  return bytes;
}

// What protobuf's parser says feature `key` holds: its kind (0 none, else
// the oneof's field number) and values as doubles / strings.
struct Expected {
  int kind = 0;
  std::vector<double> numbers;
  std::vector<std::string> strings;
};

Expected FromProtobuf(const wire::Example& example, const std::string& key) {
  Expected out;
  auto it = example.features().feature().find(key);
  if (it == example.features().feature().end()) return out;
  const wire::Feature& f = it->second;
  out.kind = f.kind_case();
  for (float v : f.float_list().value()) out.numbers.push_back(v);
  for (int64_t v : f.int64_list().value()) out.numbers.push_back(static_cast<double>(v));
  for (const std::string& v : f.bytes_list().value()) out.strings.push_back(v);
  return out;
}

TEST(ExampleParserTest, AgreesWithProtobufOnMutatedExamples) {
  ExampleParserConfig config;
  config.sparse = {{"f", DT_FLOAT}, {"i", DT_INT64}, {"b", DT_STRING}};
  StatusOr<ExampleParser> parser = ExampleParser::Create(config);
  ASSERT_TRUE(parser.ok()) << parser.status();
  const DType dtypes[] = {DT_FLOAT, DT_INT64, DT_STRING};
  const int kinds[] = {wire::Feature::kFloatList, wire::Feature::kInt64List,
                       wire::Feature::kBytesList};
  std::mt19937 rng(20261201);
  const std::vector<std::string> seeds = Seeds();
  int agreed_valid = 0, agreed_invalid = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string bytes = Mutate(seeds[round % seeds.size()], rng);
    SCOPED_TRACE(testing::Message() << "round " << round);
    ParsedExamples out;
    Status status = parser->Parse({&bytes, 1}, {}, /*batched=*/false, DefaultCpuAllocator(), &out);
    wire::Example example;
    if (!example.ParseFromString(bytes)) {
      // Protobuf validates every feature; the parser only those it decodes.
      if (!status.ok()) {
        ASSERT_EQ(status.code(), Code::kInvalidArgument) << status;
        ++agreed_invalid;
      }
      continue;
    }
    bool type_error = false;
    for (int s = 0; s < 3; ++s) {
      const Expected e = FromProtobuf(example, config.sparse[s].key);
      type_error |= e.kind != 0 && e.kind != kinds[s];
    }
    if (type_error) {
      ASSERT_FALSE(status.ok());
      ASSERT_EQ(status.code(), Code::kInvalidArgument) << status;
      ASSERT_NE(status.message().find("was expected"), std::string::npos) << status;
      ++agreed_invalid;
      continue;
    }
    ASSERT_TRUE(status.ok()) << status;
    for (int s = 0; s < 3; ++s) {
      const Expected e = FromProtobuf(example, config.sparse[s].key);
      const Tensor& values = out.sparse_values[s];
      ASSERT_EQ(values.dtype(), dtypes[s]);
      if (dtypes[s] == DT_STRING) {
        ASSERT_EQ(values.NumElements(), static_cast<int64_t>(e.strings.size()));
        for (size_t j = 0; j < e.strings.size(); ++j) {
          ASSERT_EQ(values.data<std::string>()[j], e.strings[j]);
        }
      } else {
        ASSERT_EQ(values.NumElements(), static_cast<int64_t>(e.numbers.size()));
        for (size_t j = 0; j < e.numbers.size(); ++j) {
          const double got = dtypes[s] == DT_FLOAT ? values.data<float>()[j]
                                                   : static_cast<double>(values.data<int64_t>()[j]);
          if (std::isnan(e.numbers[j])) {
            ASSERT_TRUE(std::isnan(got));
          } else {
            ASSERT_EQ(got, e.numbers[j]);
          }
        }
      }
      ASSERT_EQ(out.sparse_shapes[s].data<int64_t>()[0], values.NumElements());
    }
    ++agreed_valid;
  }
  // The mutations reach both sides.
  EXPECT_GT(agreed_valid, 1000);
  EXPECT_GT(agreed_invalid, 1000);
}


// Length-delimited field `field` holding `bytes`, as protobuf writes it.
std::string Field(int field, const std::string& bytes) {
  std::string out(1, static_cast<char>(field << 3 | 2));
  out.push_back(static_cast<char>(bytes.size()));  // < 128 here
  return out + bytes;
}

TEST(ExampleParserTest, AMapEntryWithItsValueTwiceMergesLikeProtobuf) {
  wire::Feature one, two;
  one.mutable_float_list()->add_value(1.5f);
  two.mutable_float_list()->add_value(-2.0f);
  two.mutable_float_list()->add_value(4.0f);
  const std::string entry =
      Field(1, "f") + Field(2, one.SerializeAsString()) + Field(2, two.SerializeAsString());
  const std::string bytes = Field(1, Field(1, entry));
  wire::Example example;
  ASSERT_TRUE(example.ParseFromString(bytes));
  const Expected e = FromProtobuf(example, "f");
  ASSERT_EQ(e.numbers, (std::vector<double>{1.5, -2.0, 4.0}));

  ExampleParserConfig config;
  config.sparse = {{"f", DT_FLOAT}};
  StatusOr<ExampleParser> parser = ExampleParser::Create(config);
  ASSERT_TRUE(parser.ok()) << parser.status();
  ParsedExamples out;
  ASSERT_TRUE(parser->Parse({&bytes, 1}, {}, /*batched=*/false, DefaultCpuAllocator(), &out).ok());
  const Tensor& values = out.sparse_values[0];
  ASSERT_EQ(values.NumElements(), 3);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(values.data<float>()[j], e.numbers[j]);
}

// The merged bytes must live until the outputs are built: string values of
// an earlier example in a batch point into them (ASan checks this).
TEST(ExampleParserTest, MergedStringValuesSurviveTheRestOfTheBatch) {
  wire::Feature one, two;
  one.mutable_bytes_list()->add_value("first");
  two.mutable_bytes_list()->add_value("second");
  const std::string entry =
      Field(1, "b") + Field(2, one.SerializeAsString()) + Field(2, two.SerializeAsString());
  const std::vector<std::string> batch = {Field(1, Field(1, entry)), Field(1, Field(1, entry)),
                                          std::string()};
  ExampleParserConfig config;
  config.sparse = {{"b", DT_STRING}};
  StatusOr<ExampleParser> parser = ExampleParser::Create(config);
  ASSERT_TRUE(parser.ok()) << parser.status();
  ParsedExamples out;
  ASSERT_TRUE(parser->Parse(batch, {}, /*batched=*/true, DefaultCpuAllocator(), &out).ok());
  const Tensor& values = out.sparse_values[0];
  ASSERT_EQ(values.NumElements(), 4);
  const std::string expected[] = {"first", "second", "first", "second"};
  for (int j = 0; j < 4; ++j) EXPECT_EQ(values.data<std::string>()[j], expected[j]);
}

}  // namespace
}  // namespace weir
