// Fill, ZerosLike, OnesLike, Range, BroadcastArgs, and the ops that forward
// or describe their input: IdentityN, StopGradient, PreventGradient,
// ExpandDims, Squeeze, ShapeN, Size, Rank.
#include <gtest/gtest.h>

#include <Eigen/Core>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

TEST(FillOpTest, EveryElementGetsTheValue) {
  ExpectTensor<float>(Run1("Fill", {{"T", DT_FLOAT}}, {I32({2, 3}), Tensor::Scalar<float>(1.5f)}),
                      TensorShape({2, 3}), std::vector<float>(6, 1.5f));
  ExpectTensor<std::string>(Run1("Fill", {{"T", DT_STRING}, {"index_type", DT_INT64}},
                                 {I64({2}), Tensor::Scalar<std::string>("x")}),
                            TensorShape({2}), {"x", "x"});
  ExpectTensor<int32_t>(Run1("Fill", {{"T", DT_INT32}}, {I32({}), I32Scalar(9)}), TensorShape(),
                        {9});
  ExpectTensor<bool>(Run1("Fill", {{"T", DT_BOOL}}, {I32({0, 4}), Tensor::Scalar<bool>(true)}),
                     TensorShape({0, 4}), {});
  Tensor big = Run1("Fill", {{"T", DT_DOUBLE}}, {I32({1000, 300}), Tensor::Scalar<double>(-2)});
  EXPECT_EQ(std::count(big.data<double>(), big.data<double>() + big.NumElements(), -2.0),
            300000);
  RunError("Fill", {{"T", DT_FLOAT}}, {I32({2, -1}), Tensor::Scalar<float>(0)},
           {"Fill", "[2,-1]", "negative"});
  RunError("Fill", {{"T", DT_FLOAT}}, {I32({2}), Tensor::FromVector<float>({0})},
           {"Fill", "scalar", "[1]"});
}

TEST(ZerosOnesLikeOpTest, EveryDtype) {
  ExpectTensor<float>(Run1("ZerosLike", {{"T", DT_FLOAT}}, {Iota<float>(TensorShape({2}), 3)}),
                      TensorShape({2}), {0, 0});
  ExpectTensor<std::string>(Run1("ZerosLike", {{"T", DT_STRING}}, {StringIota(TensorShape({2}))}),
                            TensorShape({2}), {"", ""});
  ExpectTensor<bool>(Run1("ZerosLike", {{"T", DT_BOOL}}, {Tensor::Scalar<bool>(true)}),
                     TensorShape(), {false});
  ExpectTensor<int64_t>(Run1("OnesLike", {{"T", DT_INT64}}, {Iota<int64_t>(TensorShape({3}))}),
                        TensorShape({3}), {1, 1, 1});
  ExpectTensor<bool>(Run1("OnesLike", {{"T", DT_BOOL}}, {Tensor(DT_BOOL, TensorShape({2}))}),
                     TensorShape({2}), {true, true});
  ExpectTensor<complex64>(Run1("OnesLike", {{"T", DT_COMPLEX64}},
                               {Tensor(DT_COMPLEX64, TensorShape({1}))}),
                          TensorShape({1}), {complex64(1, 0)});
  Tensor h = Run1("OnesLike", {{"T", DT_HALF}}, {Tensor(DT_HALF, TensorShape({2}))});
  EXPECT_EQ(ToDoubles(h), (std::vector<double>{1, 1}));
  ExpectTensor<uint8_t>(Run1("OnesLike", {{"T", DT_UINT8}}, {Tensor(DT_UINT8, TensorShape({0}))}),
                        TensorShape({0}), {});
}

TEST(RangeOpTest, IntegersAndFloats) {
  ExpectTensor<int32_t>(Run1("Range", {}, {I32Scalar(3), I32Scalar(18), I32Scalar(3)}),
                        TensorShape({5}), {3, 6, 9, 12, 15});
  ExpectTensor<int32_t>(Run1("Range", {}, {I32Scalar(3), I32Scalar(1), I32Scalar(-1)}),
                        TensorShape({2}), {3, 2});
  ExpectTensor<int32_t>(Run1("Range", {}, {I32Scalar(3), I32Scalar(3), I32Scalar(1)}),
                        TensorShape({0}), {});
  ExpectTensor<int64_t>(Run1("Range", {{"Tidx", DT_INT64}},
                             {Tensor::Scalar<int64_t>(-5), Tensor::Scalar<int64_t>(0),
                              Tensor::Scalar<int64_t>(2)}),
                        TensorShape({3}), {-5, -3, -1});
  ExpectTensor<float>(Run1("Range", {{"Tidx", DT_FLOAT}},
                           {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1),
                            Tensor::Scalar<float>(0.25f)}),
                      TensorShape({4}), {0, 0.25f, 0.5f, 0.75f});
  ExpectTensor<double>(Run1("Range", {{"Tidx", DT_DOUBLE}},
                            {Tensor::Scalar<double>(1), Tensor::Scalar<double>(-0.5),
                             Tensor::Scalar<double>(-0.5)}),
                       TensorShape({3}), {1, 0.5, 0});
  ExpectTensor<double>(Run1("Range", {{"Tidx", DT_DOUBLE}},
                            {Tensor::Scalar<double>(0), Tensor::Scalar<double>(1),
                             Tensor::Scalar<double>(0.3)}),
                       TensorShape({4}), {0, 0.3, 0.6, 0.3 * 3});
  // The full int32 span does not overflow the count.
  Tensor wide = Run1("Range", {}, {I32Scalar(std::numeric_limits<int32_t>::min()),
                                   I32Scalar(std::numeric_limits<int32_t>::max()),
                                   I32Scalar(1 << 30)});
  ExpectTensor<int32_t>(wide, TensorShape({4}), {-(1 << 30) * 2, -(1 << 30), 0, 1 << 30});
}

TEST(RangeOpTest, Errors) {
  RunError("Range", {}, {I32Scalar(0), I32Scalar(5), I32Scalar(0)},
           {"Range", "delta must not be 0", "limit 5"});
  RunError("Range", {}, {I32Scalar(5), I32Scalar(0), I32Scalar(1)}, {"Range", "start 5", "limit 0"});
  RunError("Range", {}, {I32Scalar(0), I32Scalar(5), I32Scalar(-1)}, {"Range", "delta -1"});
  RunError("Range", {{"Tidx", DT_FLOAT}},
           {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)},
           {"Range", "delta must not be 0"});
  RunError("Range", {{"Tidx", DT_FLOAT}},
           {Tensor::Scalar<float>(0), Tensor::Scalar<float>(INFINITY), Tensor::Scalar<float>(1)},
           {"Range", "finite"});
  RunError("Range", {}, {I32({0}), I32Scalar(5), I32Scalar(1)}, {"Range", "scalars", "[1]"});
}

TEST(BroadcastArgsOpTest, Shapes) {
  ExpectTensor<int32_t>(Run1("BroadcastArgs", {}, {I32({2, 1, 3}), I32({4, 1})}),
                        TensorShape({3}), {2, 4, 3});
  ExpectTensor<int64_t>(Run1("BroadcastArgs", {{"T", DT_INT64}}, {I64({}), I64({0, 5})}),
                        TensorShape({2}), {0, 5});
  RunError("BroadcastArgs", {}, {I32({2, 3}), I32({4})}, {"BroadcastArgs", "[2,3]", "[4]"});
}

TEST(IdentityLikeOpTest, ForwardWithoutCopying) {
  Tensor a = Iota<float>(TensorShape({2}));
  Tensor s = StringIota(TensorShape({1}));
  auto out = RunKernel("IdentityN", {{"T", std::vector<DType>{DT_FLOAT, DT_STRING}}}, {a, s});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].SharesBufferWith(a));
  EXPECT_TRUE((*out)[1].SharesBufferWith(s));
  EXPECT_TRUE(Run1("StopGradient", {{"T", DT_FLOAT}}, {a}).SharesBufferWith(a));
  EXPECT_TRUE(Run1("PreventGradient", {{"T", DT_STRING}, {"message", "no"}}, {s})
                  .SharesBufferWith(s));
}

TEST(ExpandDimsOpTest, InsertsAOne) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  for (const auto& [dim, shape] : std::vector<std::pair<int, TensorShape>>{
           {0, TensorShape({1, 2, 3})}, {2, TensorShape({2, 3, 1})},
           {-1, TensorShape({2, 3, 1})}, {-3, TensorShape({1, 2, 3})}}) {
    Tensor y = Run1("ExpandDims", {{"T", DT_FLOAT}}, {x, I32Scalar(dim)});
    EXPECT_EQ(y.shape(), shape) << dim;
    EXPECT_TRUE(y.SharesBufferWith(x));
  }
  EXPECT_EQ(Run1("ExpandDims", {{"T", DT_INT32}, {"Tdim", DT_INT64}},
                 {I32Scalar(1), I64({0})}).shape(),
            TensorShape({1}));
  RunError("ExpandDims", {{"T", DT_FLOAT}}, {x, I32Scalar(3)},
           {"ExpandDims", "dim 3", "[-3, 2]", "[2,3]"});
  RunError("ExpandDims", {{"T", DT_FLOAT}}, {x, I32({0, 1})}, {"ExpandDims", "one value"});
}

TEST(SqueezeOpTest, RemovesDimsOfOne) {
  Tensor x = Iota<float>(TensorShape({1, 2, 1, 3, 1}));
  Tensor y = Run1("Squeeze", {{"T", DT_FLOAT}}, {x});
  EXPECT_EQ(y.shape(), TensorShape({2, 3}));
  EXPECT_TRUE(y.SharesBufferWith(x));
  EXPECT_EQ(Run1("Squeeze", {{"T", DT_FLOAT}, {"squeeze_dims", std::vector<int64_t>{2, -1}}}, {x})
                .shape(),
            TensorShape({1, 2, 3}));
  EXPECT_EQ(Run1("Squeeze", {{"T", DT_FLOAT}}, {Tensor::Scalar<float>(1)}).shape(), TensorShape());
  EXPECT_EQ(Run1("Squeeze", {{"T", DT_FLOAT}}, {Tensor(DT_FLOAT, TensorShape({0, 1}))}).shape(),
            TensorShape({0}));
  RunError("Squeeze", {{"T", DT_FLOAT}, {"squeeze_dims", std::vector<int64_t>{1}}}, {x},
           {"Squeeze", "dim 1", "size 2", "[1,2,1,3,1]"});
  RunError("Squeeze", {{"T", DT_FLOAT}, {"squeeze_dims", std::vector<int64_t>{5}}}, {x},
           {"Squeeze", "5", "out of range"});
}

TEST(ShapeNSizeRankOpTest, DescribeInputs) {
  auto out = RunKernel("ShapeN", {{"T", DT_FLOAT}, {"N", 2}},
                       {Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor::Scalar<float>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[0], TensorShape({2}), {2, 0});
  ExpectTensor<int32_t>((*out)[1], TensorShape({0}), {});
  out = RunKernel("ShapeN", {{"T", DT_STRING}, {"N", 1}, {"out_type", DT_INT64}},
                  {StringIota(TensorShape({3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int64_t>((*out)[0], TensorShape({1}), {3});
  ExpectTensor<int32_t>(Run1("Size", {{"T", DT_FLOAT}}, {Tensor(DT_FLOAT, TensorShape({2, 3}))}),
                        TensorShape(), {6});
  ExpectTensor<int64_t>(Run1("Size", {{"T", DT_BOOL}, {"out_type", DT_INT64}},
                             {Tensor(DT_BOOL, TensorShape({int64_t{3} << 31, 0}))}),
                        TensorShape(), {0});
  ExpectTensor<int32_t>(Run1("Rank", {{"T", DT_FLOAT}}, {Tensor(DT_FLOAT, TensorShape({2, 3, 1}))}),
                        TensorShape(), {3});
  ExpectTensor<int32_t>(Run1("Rank", {{"T", DT_STRING}}, {Tensor::Scalar<std::string>("a")}),
                        TensorShape(), {0});
}

}  // namespace
}  // namespace weir
