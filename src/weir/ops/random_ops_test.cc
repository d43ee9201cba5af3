// Shape functions and flags of the random declarations with partly known
// inputs (kernel tests check them with every input known).
#include <gtest/gtest.h>

#include "weir/framework/op_def.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

StatusOr<PartialShape> Infer(const std::string& op, AttrMap attrs,
                             std::vector<PartialShape> inputs,
                             std::vector<const Tensor*> values = {}) {
  WEIR_ASSIGN_OR_RETURN(std::vector<PartialShape> out,
                        InferShapes(op, std::move(attrs), std::move(inputs), std::move(values)));
  return out.at(0);
}

TEST(RandomOpsShapeTest, ShapeInputGivesTheOutputDims) {
  AttrMap attrs = {{"dtype", DT_FLOAT}, {"T", DT_INT64}};
  Tensor dims = Tensor::FromVector<int64_t>({3, 0, 2});
  EXPECT_EQ(*Infer("RandomUniform", attrs, {{3}}, {&dims}), PartialShape({3, 0, 2}));
  EXPECT_EQ(*Infer("RandomStandardNormal", attrs, {{3}}),
            PartialShape({kUnknown, kUnknown, kUnknown}));
  EXPECT_EQ(*Infer("TruncatedNormal", attrs, {{kUnknown}}), PartialShape());
  EXPECT_FALSE(Infer("RandomUniform", attrs, {kScalar}).ok());
  Tensor negative = Tensor::FromVector<int64_t>({3, -1});
  EXPECT_FALSE(Infer("RandomUniform", attrs, {{2}}, {&negative}).ok());
  AttrMap ints = {{"Tout", DT_INT32}, {"T", DT_INT32}};
  EXPECT_EQ(*Infer("RandomUniformInt", ints, {{2}, kScalar, kScalar}),
            PartialShape({kUnknown, kUnknown}));
  EXPECT_FALSE(Infer("RandomUniformInt", ints, {{2}, {1}, kScalar}).ok());
}

TEST(RandomOpsShapeTest, MultinomialAndShuffle) {
  Tensor samples = Tensor::Scalar<int32_t>(7);
  EXPECT_EQ(*Infer("Multinomial", {{"T", DT_FLOAT}}, {{kUnknown, 5}, kScalar}, {nullptr, &samples}),
            PartialShape({kUnknown, 7}));
  EXPECT_EQ(*Infer("Multinomial", {{"T", DT_FLOAT}}, {{4, 5}, kScalar}),
            PartialShape({4, kUnknown}));
  EXPECT_FALSE(Infer("Multinomial", {{"T", DT_FLOAT}}, {{5}, kScalar}).ok());
  EXPECT_FALSE(Infer("Multinomial", {{"T", DT_FLOAT}}, {{4, 5}, {1}}).ok());
  Tensor negative = Tensor::Scalar<int32_t>(-1);
  EXPECT_FALSE(
      Infer("Multinomial", {{"T", DT_FLOAT}}, {{4, 5}, kScalar}, {nullptr, &negative}).ok());
  EXPECT_EQ(*Infer("RandomShuffle", {{"T", DT_STRING}}, {{kUnknown, 3}}),
            PartialShape({kUnknown, 3}));
  RegisterAllOps();
  for (const char* name : {"RandomUniform", "RandomUniformInt", "RandomStandardNormal",
                           "TruncatedNormal", "RandomShuffle", "Multinomial"}) {
    StatusOr<const OpDef*> op = OpRegistry::Global()->LookUp(name);
    ASSERT_TRUE(op.ok()) << name;
    EXPECT_TRUE((*op)->is_stateful) << name;
  }
}

}  // namespace
}  // namespace weir
