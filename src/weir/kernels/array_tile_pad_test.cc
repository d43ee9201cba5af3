// Tile, BroadcastTo, Pad, PadV2 and MirrorPad against index references.
#include <gtest/gtest.h>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

// out[i] = in[i mod in.shape] for Tile; for BroadcastTo dims of 1 read 0.
template <typename T>
Tensor ReferenceRepeat(const Tensor& in, const TensorShape& out_shape) {
  Tensor out(in.dtype(), out_shape);
  const int lead = out_shape.rank() - in.dims();
  for (int64_t o = 0; o < out.NumElements(); ++o) {
    std::vector<int64_t> oi = Unravel(o, out_shape);
    std::vector<int64_t> ii(oi.begin() + lead, oi.end());
    for (int k = 0; k < in.dims(); ++k) ii[k] %= in.dim_size(k);
    out.data<T>()[o] = in.data<T>()[Ravel(ii, in.shape())];
  }
  return out;
}

TEST(TileOpTest, HandComputedAndReference) {
  Tensor x = Iota<float>(TensorShape({2, 2}));
  ExpectTensor<float>(Run1("Tile", {{"T", DT_FLOAT}}, {x, I32({1, 2})}), TensorShape({2, 4}),
                      {0, 1, 0, 1, 2, 3, 2, 3});
  ExpectTensor<float>(Run1("Tile", {{"T", DT_FLOAT}}, {x, I32({2, 1})}), TensorShape({4, 2}),
                      {0, 1, 2, 3, 0, 1, 2, 3});
  Tensor y = Iota<int32_t>(TensorShape({3, 1, 4}));
  Tensor tiled = Run1("Tile", {{"T", DT_INT32}, {"Tmultiples", DT_INT64}}, {y, I64({2, 5, 3})});
  EXPECT_TRUE(tiled.ContentEquals(ReferenceRepeat<int32_t>(y, TensorShape({6, 5, 12}))));
  Tensor big = Iota<float>(TensorShape({100, 30}));
  EXPECT_TRUE(Run1("Tile", {{"T", DT_FLOAT}}, {big, I32({3, 7})})
                  .ContentEquals(ReferenceRepeat<float>(big, TensorShape({300, 210}))));
}

TEST(TileOpTest, OnesShareZerosEmptyScalarStrings) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  EXPECT_TRUE(Run1("Tile", {{"T", DT_FLOAT}}, {x, I32({1, 1})}).SharesBufferWith(x));
  ExpectTensor<float>(Run1("Tile", {{"T", DT_FLOAT}}, {x, I32({0, 2})}), TensorShape({0, 6}), {});
  Tensor scalar = Tensor::Scalar<int64_t>(3);
  EXPECT_TRUE(Run1("Tile", {{"T", DT_INT64}}, {scalar, I32({})}).ContentEquals(scalar));
  ExpectTensor<std::string>(
      Run1("Tile", {{"T", DT_STRING}}, {StringIota(TensorShape({2})), I32({2})}),
      TensorShape({4}), {"s0", "s1", "s0", "s1"});
}

TEST(TileOpTest, Errors) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  RunError("Tile", {{"T", DT_FLOAT}}, {x, I32({2})}, {"Tile", "multiples [2]", "[2,3]"});
  RunError("Tile", {{"T", DT_FLOAT}}, {x, I32({1, -1})}, {"Tile", "negative", "[2,3]"});
}

TEST(BroadcastToOpTest, Broadcasts) {
  Tensor row = Iota<float>(TensorShape({3}));
  ExpectTensor<float>(Run1("BroadcastTo", {{"T", DT_FLOAT}}, {row, I32({2, 3})}),
                      TensorShape({2, 3}), {0, 1, 2, 0, 1, 2});
  Tensor col = Iota<float>(TensorShape({2, 1}));
  ExpectTensor<float>(Run1("BroadcastTo", {{"T", DT_FLOAT}}, {col, I32({2, 3})}),
                      TensorShape({2, 3}), {0, 0, 0, 1, 1, 1});
  Tensor x = Iota<int32_t>(TensorShape({1, 4, 1}));
  EXPECT_TRUE(Run1("BroadcastTo", {{"T", DT_INT32}, {"Tidx", DT_INT64}}, {x, I64({2, 3, 4, 5})})
                  .ContentEquals(ReferenceRepeat<int32_t>(x, TensorShape({2, 3, 4, 5}))));
  EXPECT_TRUE(Run1("BroadcastTo", {{"T", DT_INT32}}, {x, I32({1, 4, 1})}).SharesBufferWith(x));
  ExpectTensor<bool>(Run1("BroadcastTo", {{"T", DT_BOOL}}, {Tensor::Scalar<bool>(true), I32({2})}),
                     TensorShape({2}), {true, true});
  ExpectTensor<float>(Run1("BroadcastTo", {{"T", DT_FLOAT}}, {row, I32({0, 3})}),
                      TensorShape({0, 3}), {});
  RunError("BroadcastTo", {{"T", DT_FLOAT}}, {row, I32({2, 4})}, {"BroadcastTo", "[3]", "[2,4]"});
  RunError("BroadcastTo", {{"T", DT_FLOAT}}, {col, I32({3})}, {"BroadcastTo", "[2,1]", "[3]"});
  RunError("BroadcastTo", {{"T", DT_FLOAT}}, {row, I32({-1, 3})}, {"BroadcastTo", "negative"});
}

TEST(PadOpTest, ZerosAndConstant) {
  Tensor x = Iota<float>(TensorShape({2, 2}), 1);  // 1 2 / 3 4
  Tensor paddings = Tensor::FromVector<int32_t>({1, 0, 0, 2}, TensorShape({2, 2}));
  ExpectTensor<float>(Run1("Pad", {{"T", DT_FLOAT}}, {x, paddings}), TensorShape({3, 4}),
                      {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0});
  ExpectTensor<float>(
      Run1("PadV2", {{"T", DT_FLOAT}}, {x, paddings, Tensor::Scalar<float>(-1)}),
      TensorShape({3, 4}), {-1, -1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1});
  ExpectTensor<std::string>(
      Run1("PadV2", {{"T", DT_STRING}},
           {StringIota(TensorShape({1})), Tensor::FromVector<int32_t>({1, 1}, TensorShape({1, 2})),
            Tensor::Scalar<std::string>("pad")}),
      TensorShape({3}), {"pad", "s0", "pad"});
  ExpectTensor<std::string>(
      Run1("Pad", {{"T", DT_STRING}},
           {StringIota(TensorShape({1})), Tensor::FromVector<int32_t>({0, 1}, TensorShape({1, 2}))}),
      TensorShape({2}), {"s0", ""});
}

TEST(PadOpTest, ReferenceEmptyAndScalar) {
  Tensor x = Iota<int64_t>(TensorShape({3, 1, 4}), 1);
  Tensor paddings = Tensor::FromVector<int64_t>({2, 1, 0, 3, 1, 1}, TensorShape({3, 2}));
  Tensor y = Run1("Pad", {{"T", DT_INT64}, {"Tpaddings", DT_INT64}}, {x, paddings});
  ASSERT_EQ(y.shape(), TensorShape({6, 4, 6}));
  for (int64_t o = 0; o < y.NumElements(); ++o) {
    std::vector<int64_t> i = Unravel(o, y.shape());
    i[0] -= 2;
    i[2] -= 1;
    const bool inside = i[0] >= 0 && i[0] < 3 && i[1] < 1 && i[2] >= 0 && i[2] < 4;
    ASSERT_EQ(y.data<int64_t>()[o], inside ? x.data<int64_t>()[Ravel(i, x.shape())] : 0) << o;
  }
  // An empty input padded is all padding; zero paddings share the input.
  ExpectTensor<float>(Run1("Pad", {{"T", DT_FLOAT}},
                           {Tensor(DT_FLOAT, TensorShape({0, 2})),
                            Tensor::FromVector<int32_t>({1, 0, 0, 0}, TensorShape({2, 2}))}),
                      TensorShape({1, 2}), {0, 0});
  Tensor z = Iota<float>(TensorShape({2}));
  EXPECT_TRUE(Run1("Pad", {{"T", DT_FLOAT}},
                   {z, Tensor::FromVector<int32_t>({0, 0}, TensorShape({1, 2}))})
                  .SharesBufferWith(z));
  Tensor scalar = Tensor::Scalar<float>(5);
  EXPECT_TRUE(Run1("Pad", {{"T", DT_FLOAT}}, {scalar, Tensor(DT_INT32, TensorShape({0, 2}))})
                  .ContentEquals(scalar));
}

TEST(PadOpTest, Errors) {
  Tensor x = Iota<float>(TensorShape({2, 2}));
  RunError("Pad", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({1, 1}, TensorShape({1, 2}))},
           {"Pad", "[2,2]", "[1,2]"});
  RunError("Pad", {{"T", DT_FLOAT}},
           {x, Tensor::FromVector<int32_t>({0, 0, -1, 0}, TensorShape({2, 2}))},
           {"Pad", "negative", "dim 1"});
  RunError("PadV2", {{"T", DT_FLOAT}},
           {x, Tensor::FromVector<int32_t>({0, 0, 0, 0}, TensorShape({2, 2})),
            Tensor::FromVector<float>({1, 2})},
           {"PadV2", "constant_values", "scalar"});
}

TEST(MirrorPadOpTest, ReflectAndSymmetric) {
  Tensor x = Iota<int32_t>(TensorShape({3}), 1);  // 1 2 3
  Tensor p = Tensor::FromVector<int32_t>({2, 2}, TensorShape({1, 2}));
  ExpectTensor<int32_t>(Run1("MirrorPad", {{"T", DT_INT32}, {"mode", "REFLECT"}}, {x, p}),
                        TensorShape({7}), {3, 2, 1, 2, 3, 2, 1});
  ExpectTensor<int32_t>(Run1("MirrorPad", {{"T", DT_INT32}, {"mode", "SYMMETRIC"}}, {x, p}),
                        TensorShape({7}), {2, 1, 1, 2, 3, 3, 2});
  Tensor m = Iota<float>(TensorShape({2, 3}), 1);  // 1 2 3 / 4 5 6
  Tensor p2 = Tensor::FromVector<int32_t>({1, 1, 2, 2}, TensorShape({2, 2}));
  ExpectTensor<float>(Run1("MirrorPad", {{"T", DT_FLOAT}, {"mode", "REFLECT"}}, {m, p2}),
                      TensorShape({4, 7}),
                      {6, 5, 4, 5, 6, 5, 4,  //
                       3, 2, 1, 2, 3, 2, 1,  //
                       6, 5, 4, 5, 6, 5, 4,  //
                       3, 2, 1, 2, 3, 2, 1});
  ExpectTensor<float>(Run1("MirrorPad", {{"T", DT_FLOAT}, {"mode", "SYMMETRIC"}}, {m, p2}),
                      TensorShape({4, 7}),
                      {2, 1, 1, 2, 3, 3, 2,  //
                       2, 1, 1, 2, 3, 3, 2,  //
                       5, 4, 4, 5, 6, 6, 5,  //
                       5, 4, 4, 5, 6, 6, 5});
  ExpectTensor<std::string>(Run1("MirrorPad", {{"T", DT_STRING}, {"mode", "SYMMETRIC"}},
                                 {StringIota(TensorShape({2})),
                                  Tensor::FromVector<int32_t>({1, 0}, TensorShape({1, 2}))}),
                            TensorShape({3}), {"s0", "s0", "s1"});
}

TEST(MirrorPadOpTest, PaddingLimits) {
  Tensor x = Iota<int32_t>(TensorShape({3}));
  RunError("MirrorPad", {{"T", DT_INT32}, {"mode", "REFLECT"}},
           {x, Tensor::FromVector<int32_t>({3, 0}, TensorShape({1, 2}))},
           {"MirrorPad", "REFLECT", "at most 2", "[3]"});
  RunError("MirrorPad", {{"T", DT_INT32}, {"mode", "SYMMETRIC"}},
           {x, Tensor::FromVector<int32_t>({0, 4}, TensorShape({1, 2}))},
           {"MirrorPad", "SYMMETRIC", "at most 3"});
  ExpectTensor<int32_t>(Run1("MirrorPad", {{"T", DT_INT32}, {"mode", "SYMMETRIC"}},
                             {x, Tensor::FromVector<int32_t>({3, 0}, TensorShape({1, 2}))}),
                        TensorShape({6}), {2, 1, 0, 0, 1, 2});
}

}  // namespace
}  // namespace weir
