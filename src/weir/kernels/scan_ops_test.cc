// Cumsum and Cumprod against a reference loop in double: every axis
// (negative too), exclusive and reverse, several dtypes, wide rows that
// split into bands, and bad axes.
#include <gtest/gtest.h>

#include <Eigen/Core>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

template <typename T>
Tensor Make(const std::vector<double>& values, const TensorShape& shape) {
  std::vector<T> converted;
  for (double v : values) converted.push_back(static_cast<T>(v));
  return Tensor::FromVector<T>(converted, shape);
}

Tensor MakeOf(DType dtype, const std::vector<double>& values, const TensorShape& shape) {
  switch (dtype) {
    case DT_FLOAT: return Make<float>(values, shape);
    case DT_DOUBLE: return Make<double>(values, shape);
    case DT_INT32: return Make<int32_t>(values, shape);
    case DT_INT64: return Make<int64_t>(values, shape);
    case DT_HALF: return Make<Eigen::half>(values, shape);
    case DT_BFLOAT16: return Make<Eigen::bfloat16>(values, shape);
    default: ADD_FAILURE() << dtype; return Tensor();
  }
}

// The scan of `x` (shape `dims`) along `axis`, in double.
std::vector<double> Reference(bool product, const std::vector<double>& x,
                              const std::vector<int64_t>& dims, int axis, bool exclusive,
                              bool reverse) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t length = dims[axis];
  std::vector<double> out(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      double running = product ? 1 : 0;
      for (int64_t s = 0; s < length; ++s) {
        const int64_t i = reverse ? length - 1 - s : s;
        const int64_t at = (o * length + i) * inner + j;
        if (exclusive) out[at] = running;
        running = product ? running * x[at] : running + x[at];
        if (!exclusive) out[at] = running;
      }
    }
  }
  return out;
}

TEST(ScanTest, EveryAxisAndMode) {
  const std::vector<int64_t> dims = {2, 3, 4};
  std::vector<double> x;
  for (int i = 0; i < 24; ++i) x.push_back((i * 5) % 7 - 3 + (i % 3 == 0 ? 0 : 0.5));
  for (const char* op : {"Cumsum", "Cumprod"}) {
    const bool product = std::string(op) == "Cumprod";
    for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
      for (int axis = -3; axis < 3; ++axis) {
        for (bool exclusive : {false, true}) {
          for (bool reverse : {false, true}) {
            auto out = RunKernel(
                op, {{"T", dtype}, {"exclusive", exclusive}, {"reverse", reverse}},
                {MakeOf(dtype, x, TensorShape({2, 3, 4})), Tensor::Scalar<int32_t>(axis)});
            ASSERT_TRUE(out.ok()) << out.status();
            std::vector<double> want =
                Reference(product, x, dims, axis < 0 ? axis + 3 : axis, exclusive, reverse);
            std::vector<double> got = ToDoubles((*out)[0]);
            const double tolerance = dtype == DT_BFLOAT16 ? 1e-2 : dtype == DT_HALF ? 1e-3 : 1e-6;
            for (size_t i = 0; i < want.size(); ++i) {
              EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i])))
                  << op << " " << dtype << " axis " << axis << " exclusive " << exclusive
                  << " reverse " << reverse << " at " << i;
            }
          }
        }
      }
    }
  }
}

TEST(ScanTest, IntegersAndInt64Axis) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6};
  for (DType dtype : {DT_INT32, DT_INT64}) {
    auto out = RunKernel("Cumsum", {{"T", dtype}, {"Tidx", DT_INT64}},
                         {MakeOf(dtype, x, TensorShape({2, 3})), Tensor::Scalar<int64_t>(1)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{1, 3, 6, 4, 9, 15}));
    out = RunKernel("Cumprod", {{"T", dtype}, {"exclusive", true}},
                    {MakeOf(dtype, x, TensorShape({2, 3})), Tensor::Scalar<int32_t>(0)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{1, 1, 1, 1, 2, 3}));
  }
}

TEST(ScanTest, WideRowsSplitIntoBands) {
  const std::vector<int64_t> dims = {3, 5, 2500};
  std::vector<double> x(3 * 5 * 2500);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 11) % 13) - 6;
  auto out =
      RunKernel("Cumsum", {{"T", DT_DOUBLE}, {"reverse", true}},
                {MakeOf(DT_DOUBLE, x, TensorShape({3, 5, 2500})), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), Reference(false, x, dims, 1, false, true));
}

TEST(ScanTest, EmptyInputAndBadAxes) {
  auto out = RunKernel("Cumsum", {{"T", DT_FLOAT}},
                       {Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 3}));
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  for (const auto& [axis, part] : std::vector<std::pair<Tensor, std::string>>{
           {Tensor::Scalar<int32_t>(2), "axis 2 is not in [-2, 2)"},
           {Tensor::Scalar<int32_t>(-3), "axis -3 is not in [-2, 2)"},
           {Tensor::FromVector<int32_t>({0}), "axis must be a scalar"}}) {
    out = RunKernel("Cumprod", {{"T", DT_FLOAT}}, {x, axis});
    ASSERT_FALSE(out.ok()) << part;
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
  }
  out = RunKernel("Cumsum", {{"T", DT_FLOAT}},
                  {Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(0)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("not in [0, 0)"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace weir
