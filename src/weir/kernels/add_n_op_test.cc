// AddN against sums computed here in input order: bit-identical for
// floats (the order is the contract), exact for integers (which wrap).
#include <gtest/gtest.h>

#include <limits>

#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

// Values with fractions whose float sums depend on the order of addition.
template <typename T>
Tensor Mixed(const TensorShape& shape, int seed) {
  Tensor t = Values<T>(shape, seed);
  int64_t i = 0;
  for (T& v : t.flat<T>()) {
    if constexpr (std::is_floating_point_v<T>) {
      v = v * static_cast<T>(1.37) + static_cast<T>(1e-3 * (i++ % 97)) * v * v * v;
    }
  }
  return t;
}

template <typename T>
void CheckSums() {
  for (const TensorShape& shape : {TensorShape({2, 3}), TensorShape({}), TensorShape({0, 5}),
                                   TensorShape({1, 1}), TensorShape({300, 1001})}) {
    for (int n : {1, 2, 3, 5, 8}) {
      std::vector<Tensor> inputs;
      for (int i = 0; i < n; ++i) inputs.push_back(Mixed<T>(shape, i));
      std::vector<T> expected(shape.num_elements());
      for (int64_t j = 0; j < shape.num_elements(); ++j) {
        T sum = inputs[0].template data<T>()[j];
        for (int i = 1; i < n; ++i) sum = sum + inputs[i].template data<T>()[j];
        expected[j] = sum;
      }
      auto out = RunKernel("AddN", {{"T", kDTypeOf<T>}, {"N", n}}, inputs);
      ASSERT_TRUE(out.ok()) << shape << " N=" << n << ": " << out.status();
      ASSERT_EQ((*out)[0].shape(), shape);
      for (size_t j = 0; j < expected.size(); ++j) {
        ASSERT_EQ((*out)[0].template data<T>()[j], expected[j]) << shape << " N=" << n << " at " << j;
      }
    }
  }
}

TEST(AddNTest, SumsInInputOrderFloat) { CheckSums<float>(); }
TEST(AddNTest, SumsInInputOrderDouble) { CheckSums<double>(); }
TEST(AddNTest, SumsInInputOrderInt32) { CheckSums<int32_t>(); }
TEST(AddNTest, SumsInInputOrderInt64) { CheckSums<int64_t>(); }

TEST(AddNTest, IntegersWrap) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  auto out = RunKernel("AddN", {{"T", DT_INT32}, {"N", 3}},
                       {Tensor::Scalar<int32_t>(max), Tensor::Scalar<int32_t>(1),
                        Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].scalar<int32_t>(), std::numeric_limits<int32_t>::min() + 1);
}

TEST(AddNTest, NanAndInf) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = RunKernel("AddN", {{"T", DT_FLOAT}, {"N", 3}},
                       {Tensor::FromVector<float>({inf, 1, NAN}),
                        Tensor::FromVector<float>({-inf, inf, 1}),
                        Tensor::FromVector<float>({1, 1, 1})});
  ASSERT_TRUE(out.ok());
  std::vector<double> z = ToDoubles((*out)[0]);
  EXPECT_TRUE(std::isnan(z[0]));
  EXPECT_EQ(z[1], inf);
  EXPECT_TRUE(std::isnan(z[2]));
}

TEST(AddNTest, SameInputTwiceAndInPlace) {
  Tensor x = Tensor::FromVector<double>({1, 2, 3});
  auto twice = RunKernel("AddN", {{"T", DT_DOUBLE}, {"N", 2}}, {x, x});
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(ToDoubles((*twice)[0]), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(ToDoubles(x), (std::vector<double>{1, 2, 3}));

  std::vector<Tensor> inputs;
  inputs.push_back(Tensor::FromVector<double>({1, 2, 3}));
  const void* data = inputs[0].raw_data();
  inputs.push_back(Tensor::FromVector<double>({10, 20, 30}));
  inputs.push_back(Tensor::FromVector<double>({100, 200, 300}));
  auto out = RunKernel("AddN", {{"T", DT_DOUBLE}, {"N", 3}}, std::move(inputs));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].raw_data(), data);
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{111, 222, 333}));
}

TEST(AddNTest, MismatchedShapesAreAnError) {
  auto out = RunKernel("AddN", {{"T", DT_FLOAT}, {"N", 3}},
                       {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({2, 3})),
                        Tensor(DT_FLOAT, TensorShape({3}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_EQ(out.status().message(),
            "AddN: input 2 has shape [3] but input 0 has shape [2,3] (dtype float)");
  // No broadcasting, not even of scalars.
  out = RunKernel("AddN", {{"T", DT_INT64}, {"N", 2}},
                  {Tensor(DT_INT64, TensorShape({2})), Tensor::Scalar<int64_t>(1)});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace weir
