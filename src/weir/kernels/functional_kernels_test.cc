#include <gtest/gtest.h>

#include <Eigen/Core>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

StatusOr<bool> ToBool(const Tensor& input) {
  WEIR_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunKernel("ToBool", {{"T", input.dtype()}}, {input}));
  EXPECT_EQ(out[0].dtype(), DT_BOOL);
  EXPECT_EQ(out[0].dims(), 0);
  return out[0].scalar<bool>();
}

void ExpectTruth(const Tensor& input, bool expected) {
  StatusOr<bool> truth = ToBool(input);
  ASSERT_TRUE(truth.ok()) << input.DebugString() << ": " << truth.status();
  EXPECT_EQ(*truth, expected) << input.DebugString();
}

TEST(ToBoolKernelTest, AScalarIsTrueWhenNonzero) {
  ExpectTruth(Tensor::Scalar<bool>(true), true);
  ExpectTruth(Tensor::Scalar<bool>(false), false);
  ExpectTruth(Tensor::Scalar<int32_t>(-2), true);
  ExpectTruth(Tensor::Scalar<int32_t>(0), false);
  ExpectTruth(Tensor::Scalar<int64_t>(int64_t{1} << 40), true);
  ExpectTruth(Tensor::Scalar<uint8_t>(0), false);
  ExpectTruth(Tensor::Scalar<float>(0.25f), true);
  ExpectTruth(Tensor::Scalar<float>(-0.f), false);
  ExpectTruth(Tensor::Scalar<double>(1e-300), true);
  ExpectTruth(Tensor::Scalar<Eigen::half>(Eigen::half(0.5f)), true);
  ExpectTruth(Tensor::Scalar<Eigen::half>(Eigen::half(0.f)), false);
  ExpectTruth(Tensor::Scalar<complex64>(complex64(0, 1)), true);
  ExpectTruth(Tensor::Scalar<complex64>(complex64(0, 0)), false);
  ExpectTruth(Tensor::Scalar<std::string>(""), false);
  ExpectTruth(Tensor::Scalar<std::string>("no"), true);
}

TEST(ToBoolKernelTest, AnyOtherTensorIsTrueWhenNotEmpty) {
  ExpectTruth(Tensor::FromVector<float>({0.f}), true);
  ExpectTruth(Tensor::FromVector<bool>({false, false}), true);
  ExpectTruth(Tensor(DT_INT32, TensorShape({0})), false);
  ExpectTruth(Tensor(DT_FLOAT, TensorShape({3, 0, 2})), false);
  ExpectTruth(Tensor(DT_STRING, TensorShape({1, 1})), true);
}

TEST(ToBoolKernelTest, AScalarWithoutATruthValueIsAnError) {
  StatusOr<bool> truth = ToBool(Tensor(DT_RESOURCE, TensorShape({})));
  ASSERT_FALSE(truth.ok());
  EXPECT_EQ(truth.status().code(), Code::kInvalidArgument) << truth.status();
  EXPECT_NE(truth.status().message().find("ToBool"), std::string::npos) << truth.status();
  EXPECT_NE(truth.status().message().find("resource"), std::string::npos) << truth.status();
}

}  // namespace
}  // namespace weir
