// Shape functions of the parsing declarations with partly known inputs
// (kernel tests check them with every input known).
#include <gtest/gtest.h>

#include "weir/framework/tensor.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

AttrMap ParseExampleAttrs(int num_sparse, std::vector<PartialShape> dense_shapes, int num_ragged) {
  return {{"num_sparse", int64_t{num_sparse}},
          {"sparse_types", std::vector<DType>(num_sparse, DT_INT64)},
          {"Tdense", std::vector<DType>(dense_shapes.size(), DT_FLOAT)},
          {"dense_shapes", dense_shapes},
          {"ragged_value_types", std::vector<DType>(num_ragged, DT_STRING)},
          {"ragged_split_types", std::vector<DType>(num_ragged, DT_INT32)}};
}

TEST(ParsingOpsShapeTest, ParseExampleV2) {
  AttrMap attrs = ParseExampleAttrs(1, {PartialShape({2, 3}), PartialShape({kUnknown, 4})}, 1);
  // serialized, names, three key vectors, two defaults.
  auto shapes = InferShapes("ParseExampleV2", attrs, {{8}, {0}, {1}, {2}, {1}, {2, 3}, {1}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 7u);
  EXPECT_EQ((*shapes)[0], PartialShape({kUnknown, 2}));  // indices
  EXPECT_EQ((*shapes)[1], PartialShape({kUnknown}));     // values
  EXPECT_EQ((*shapes)[2], PartialShape({2}));            // dense shape
  EXPECT_EQ((*shapes)[3], PartialShape({8, 2, 3}));
  EXPECT_EQ((*shapes)[4], PartialShape({8, kUnknown, 4}));
  EXPECT_EQ((*shapes)[5], PartialShape({kUnknown}));
  EXPECT_EQ((*shapes)[6], PartialShape({9}));  // row splits
  // A scalar input: no batch dim; unknown rank: unknown everything.
  shapes = InferShapes("ParseExampleV2", attrs, {kScalar, {0}, {1}, {2}, {1}, {2, 3}, {1}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({kUnknown, 1}));
  EXPECT_EQ((*shapes)[3], PartialShape({2, 3}));
  EXPECT_EQ((*shapes)[6], PartialShape({kUnknown}));
  shapes = InferShapes("ParseExampleV2", attrs, {PartialShape(), {0}, {1}, {2}, {1}, {2, 3}, {1}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({kUnknown, kUnknown}));
  EXPECT_EQ((*shapes)[3], PartialShape());
  EXPECT_FALSE(
      InferShapes("ParseExampleV2", attrs, {{2, 2}, {0}, {1}, {2}, {1}, {2, 3}, {1}}).ok());
  // Shapes unknown beyond the first dim are refused.
  AttrMap bad = ParseExampleAttrs(0, {PartialShape({2, kUnknown})}, 0);
  EXPECT_FALSE(InferShapes("ParseExampleV2", bad, {{1}, {0}, {0}, {1}, {0}, {2}}).ok());
}

TEST(ParsingOpsShapeTest, ParseSingleExampleAndTheDecoders) {
  AttrMap attrs = {{"num_sparse", int64_t{1}},
                   {"sparse_keys", std::vector<std::string>{"s"}},
                   {"dense_keys", std::vector<std::string>{"d"}},
                   {"sparse_types", std::vector<DType>{DT_STRING}},
                   {"Tdense", std::vector<DType>{DT_INT64}},
                   {"dense_shapes", std::vector<PartialShape>{PartialShape({5})}}};
  auto shapes = InferShapes("ParseSingleExample", attrs, {kScalar, {5}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({kUnknown, 1}));
  EXPECT_EQ((*shapes)[2], PartialShape({1}));
  EXPECT_EQ((*shapes)[3], PartialShape({5}));
  EXPECT_FALSE(InferShapes("ParseSingleExample", attrs, {{1}, {5}}).ok());
  attrs["sparse_keys"] = std::vector<std::string>{};
  EXPECT_FALSE(InferShapes("ParseSingleExample", attrs, {kScalar, {5}}).ok());

  shapes = InferShapes("DecodeRaw", {{"out_type", DT_FLOAT}}, {{4, kUnknown}});
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ((*shapes)[0], PartialShape({4, kUnknown, kUnknown}));
  shapes = InferShapes("DecodeCSV", {{"OUT_TYPE", std::vector<DType>{DT_INT32, DT_STRING}}},
                       {{3, 2}, {1}, kScalar});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({3, 2}));
  EXPECT_EQ((*shapes)[1], PartialShape({3, 2}));
  EXPECT_FALSE(
      InferShapes("DecodeCSV", {{"OUT_TYPE", std::vector<DType>{DT_INT32}}}, {{3}, {2}}).ok());
  EXPECT_FALSE(
      InferShapes("DecodeCSV", {{"OUT_TYPE", std::vector<DType>{DT_INT32}}}, {{3}, {1, 1}}).ok());
  shapes = InferShapes("StringToNumber", {{"out_type", DT_INT64}}, {{2, 7}});
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ((*shapes)[0], PartialShape({2, 7}));
  shapes = InferShapes("SerializeTensor", {{"T", DT_FLOAT}}, {{2, 7}});
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ((*shapes)[0], kScalar);
  shapes = InferShapes("ParseTensor", {{"out_type", DT_FLOAT}}, {kScalar});
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ((*shapes)[0], PartialShape());
}

}  // namespace
}  // namespace weir
