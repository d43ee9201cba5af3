#include <gtest/gtest.h>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(ConstOpTest, OutputSharesTheAttrBuffer) {
  Tensor value = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  auto out = RunKernel("Const", {{"value", value}, {"dtype", DT_FLOAT}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(value));
  EXPECT_TRUE((*out)[0].SharesBufferWith(value));
}

TEST(ConstOpTest, DtypeMismatchIsAnError) {
  Tensor value = Tensor::FromVector<int32_t>({1, 2});
  auto out = RunKernel("Const", {{"value", value}, {"dtype", DT_FLOAT}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "int32")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "float")) << out.status();
}

TEST(PlaceholderOpTest, RunningUnfedIsAnError) {
  auto out = RunKernel("Placeholder",
                       {{"dtype", DT_FLOAT}, {"shape", PartialShape({-1, 784})}}, {}, "x");
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_EQ(out.status().message(),
            "You must feed a value for placeholder tensor 'x' with dtype float and shape "
            "[?,784]");
  out = RunKernel("Placeholder", {{"dtype", DT_INT64}}, {}, "y");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "You must feed a value for placeholder tensor 'y' with dtype int64");
}

TEST(IdentityOpTest, ForwardsWithoutCopying) {
  Tensor x = Tensor::FromVector<double>({1.5, -2}, TensorShape({2, 1}));
  auto out = RunKernel("Identity", {{"T", DT_DOUBLE}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 1}));

  Tensor s = Tensor::FromVector<std::string>({"a", "bc"});
  out = RunKernel("Identity", {{"T", DT_STRING}}, {s});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(s));
}

TEST(ShapeOpTest, Int32AndInt64) {
  Tensor x(DT_FLOAT, TensorShape({2, 0, 7}));
  auto out = RunKernel("Shape", {{"T", DT_FLOAT}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<int32_t>({2, 0, 7})));
  out = RunKernel("Shape", {{"T", DT_FLOAT}, {"out_type", DT_INT64}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Tensor::FromVector<int64_t>({2, 0, 7})));
  out = RunKernel("Shape", {{"T", DT_INT32}}, {Tensor::Scalar<int32_t>(4)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
}

TEST(ShapeOpTest, DimTooLargeForInt32) {
  Tensor x(DT_BOOL, TensorShape({int64_t{3} << 31, 0}));
  auto out = RunKernel("Shape", {{"T", DT_BOOL}}, {x});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "int32")) << out.status();
  out = RunKernel("Shape", {{"T", DT_BOOL}, {"out_type", DT_INT64}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], int64_t{3} << 31);
}

StatusOr<Tensor> Reshape(const Tensor& x, std::vector<int32_t> dims) {
  WEIR_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        RunKernel("Reshape", {{"T", x.dtype()}}, {x, Tensor::FromVector(dims)}));
  return out[0];
}

TEST(ReshapeOpTest, SharesTheBuffer) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  StatusOr<Tensor> y = Reshape(x, {3, 2});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({3, 2}));
  EXPECT_TRUE(y->SharesBufferWith(x));
  EXPECT_EQ(ToDoubles(*y), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(ReshapeOpTest, InfersOneDimension) {
  Tensor x(DT_INT32, TensorShape({2, 3, 4}));
  EXPECT_EQ(Reshape(x, {-1})->shape(), TensorShape({24}));
  EXPECT_EQ(Reshape(x, {4, -1})->shape(), TensorShape({4, 6}));
  EXPECT_EQ(Reshape(x, {-1, 2, 3})->shape(), TensorShape({4, 2, 3}));
  EXPECT_EQ(Reshape(Tensor(DT_INT32, TensorShape({1, 1})), {})->shape(), TensorShape());
  EXPECT_EQ(Reshape(Tensor(DT_INT32, TensorShape({0, 3})), {-1, 3})->shape(),
            TensorShape({0, 3}));
  EXPECT_EQ(Reshape(Tensor(DT_INT32, TensorShape({0, 3})), {3, 0, 5})->shape(),
            TensorShape({3, 0, 5}));
  auto out = RunKernel("Reshape", {{"T", DT_INT32}, {"Tshape", DT_INT64}},
                       {x, Tensor::FromVector<int64_t>({-1, 12})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 12}));
}

TEST(ReshapeOpTest, Errors) {
  Tensor x(DT_FLOAT, TensorShape({2, 3}));
  StatusOr<Tensor> y = Reshape(x, {4});
  ASSERT_FALSE(y.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(y.status()));
  EXPECT_TRUE(Contains(y.status(), "Reshape")) << y.status();
  EXPECT_TRUE(Contains(y.status(), "[2,3]")) << y.status();
  EXPECT_TRUE(Contains(y.status(), "[4]")) << y.status();

  y = Reshape(x, {-1, 4});
  ASSERT_FALSE(y.ok());
  EXPECT_TRUE(Contains(y.status(), "[2,3]")) << y.status();
  EXPECT_TRUE(Contains(y.status(), "[-1,4]")) << y.status();

  EXPECT_TRUE(errors::IsInvalidArgument(Reshape(x, {-1, -1}).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(Reshape(x, {-2, -3}).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(Reshape(Tensor(DT_FLOAT, TensorShape({0})), {0, -1})
                                            .status()));
  auto out = RunKernel("Reshape", {{"T", DT_FLOAT}},
                       {x, Tensor::FromVector<int32_t>({2, 3}, TensorShape({1, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "[1,2]")) << out.status();
}

TEST(ArrayKernelsTest, AreCheap) {
  Tensor value = Tensor::Scalar<float>(1);
  auto kernel = CreateTestKernel("Const", {{"value", value}, {"dtype", DT_FLOAT}}, 0);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE((*kernel)->IsExpensive());
  for (const char* op : {"Identity", "Shape"}) {
    kernel = CreateTestKernel(op, {{"T", DT_FLOAT}}, 1);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_FALSE((*kernel)->IsExpensive()) << op;
  }
  kernel = CreateTestKernel("Reshape", {{"T", DT_FLOAT}}, 2);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE((*kernel)->IsExpensive());
  kernel = CreateTestKernel("Placeholder", {{"dtype", DT_FLOAT}}, 0);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE((*kernel)->IsExpensive());
  kernel = CreateTestKernel("MatMul", {{"T", DT_FLOAT}}, 2);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE((*kernel)->IsExpensive());
}

}  // namespace
}  // namespace weir
