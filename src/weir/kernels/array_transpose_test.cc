// Transpose, ReverseV2 and Reverse against index-arithmetic references.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

// out[i_0, ..., i_n] = in[j] where j_{perm[k]} = i_k.
template <typename T>
Tensor ReferenceTranspose(const Tensor& in, const std::vector<int>& perm) {
  std::vector<int64_t> dims;
  for (int p : perm) dims.push_back(in.dim_size(p));
  TensorShape out_shape(dims);
  Tensor out(in.dtype(), out_shape);
  for (int64_t o = 0; o < out.NumElements(); ++o) {
    std::vector<int64_t> oi = Unravel(o, out_shape), ii(in.dims());
    for (size_t k = 0; k < perm.size(); ++k) ii[perm[k]] = oi[k];
    out.data<T>()[o] = in.data<T>()[Ravel(ii, in.shape())];
  }
  return out;
}

Tensor Transpose(const Tensor& x, std::vector<int32_t> perm) {
  return Run1("Transpose", {{"T", x.dtype()}}, {x, I32(perm)});
}

TEST(TransposeOpTest, Matrix) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  ExpectTensor<float>(Transpose(x, {1, 0}), TensorShape({3, 2}), {0, 3, 1, 4, 2, 5});
}

TEST(TransposeOpTest, EveryPermutationOfRank4MatchesReference) {
  Tensor x = Iota<int32_t>(TensorShape({2, 3, 4, 5}));
  std::vector<int> perm = {0, 1, 2, 3};
  do {
    Tensor y = Transpose(x, std::vector<int32_t>(perm.begin(), perm.end()));
    EXPECT_TRUE(y.ContentEquals(ReferenceTranspose<int32_t>(x, perm)))
        << "perm " << StrJoin(perm, ",");
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(TransposeOpTest, LargeTiledCopiesMatchReference) {
  // Big enough to split over the pool and to take the tiled path, with
  // sizes that are not multiples of the tile.
  for (const auto& [dims, perm] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int>>>{
           {{517, 389}, {1, 0}}, {{3, 131, 67}, {0, 2, 1}}, {{33, 45, 70}, {2, 1, 0}},
           {{7, 61, 5, 37}, {3, 1, 2, 0}}}) {
    Tensor x = Iota<float>(TensorShape(dims));
    Tensor y = Transpose(x, std::vector<int32_t>(perm.begin(), perm.end()));
    EXPECT_TRUE(y.ContentEquals(ReferenceTranspose<float>(x, perm)))
        << TensorShape(dims) << " perm " << StrJoin(perm, ",");
  }
}

TEST(TransposeOpTest, LargeCopiesOfEveryElementSizeMatchReference) {
  // 8-byte elements have their own SIMD path; 1, 2 and 16 bytes the
  // portable one.
  Tensor d = Iota<double>(TensorShape({67, 129}));
  EXPECT_TRUE(Transpose(d, {1, 0}).ContentEquals(ReferenceTranspose<double>(d, {1, 0})));
  Tensor i = Iota<int64_t>(TensorShape({3, 45, 70}));
  EXPECT_TRUE(Transpose(i, {0, 2, 1}).ContentEquals(ReferenceTranspose<int64_t>(i, {0, 2, 1})));
  Tensor b = Iota<uint8_t>(TensorShape({33, 65}));
  EXPECT_TRUE(Transpose(b, {1, 0}).ContentEquals(ReferenceTranspose<uint8_t>(b, {1, 0})));
  Tensor h = Iota<int16_t>(TensorShape({17, 9, 31}));
  EXPECT_TRUE(Transpose(h, {2, 1, 0}).ContentEquals(ReferenceTranspose<int16_t>(h, {2, 1, 0})));
  Tensor c(DT_COMPLEX128, TensorShape({19, 23}));
  for (int64_t k = 0; k < c.NumElements(); ++k) c.data<complex128>()[k] = {double(k), 0.5};
  EXPECT_TRUE(Transpose(c, {1, 0}).ContentEquals(ReferenceTranspose<complex128>(c, {1, 0})));
}

TEST(TransposeOpTest, EveryElementSize) {
  std::vector<int> perm = {2, 0, 1};
  TensorShape shape({3, 4, 5});
  EXPECT_TRUE(Transpose(Iota<uint8_t>(shape), {2, 0, 1})
                  .ContentEquals(ReferenceTranspose<uint8_t>(Iota<uint8_t>(shape), perm)));
  EXPECT_TRUE(Transpose(Iota<int16_t>(shape), {2, 0, 1})
                  .ContentEquals(ReferenceTranspose<int16_t>(Iota<int16_t>(shape), perm)));
  EXPECT_TRUE(Transpose(Iota<double>(shape), {2, 0, 1})
                  .ContentEquals(ReferenceTranspose<double>(Iota<double>(shape), perm)));
  Tensor c(DT_COMPLEX128, shape);
  for (int64_t i = 0; i < c.NumElements(); ++i) c.data<complex128>()[i] = {double(i), -1.0 * i};
  EXPECT_TRUE(Transpose(c, {2, 0, 1}).ContentEquals(ReferenceTranspose<complex128>(c, perm)));
  Tensor b(DT_BOOL, shape);
  for (int64_t i = 0; i < b.NumElements(); ++i) b.data<bool>()[i] = i % 3 == 0;
  EXPECT_TRUE(Transpose(b, {2, 0, 1}).ContentEquals(ReferenceTranspose<bool>(b, perm)));
}

TEST(TransposeOpTest, Strings) {
  Tensor s = StringIota(TensorShape({2, 3}));
  ExpectTensor<std::string>(Transpose(s, {1, 0}), TensorShape({3, 2}),
                            {"s0", "s3", "s1", "s4", "s2", "s5"});
  Tensor big = StringIota(TensorShape({40, 50}));
  EXPECT_TRUE(Transpose(big, {1, 0}).ContentEquals(ReferenceTranspose<std::string>(big, {1, 0})));
}

TEST(TransposeOpTest, ScalarsVectorsEmptyAndSizeOneDims) {
  Tensor scalar = Tensor::Scalar<float>(7);
  EXPECT_TRUE(Transpose(scalar, {}).ContentEquals(scalar));
  Tensor v = Iota<int64_t>(TensorShape({4}));
  EXPECT_TRUE(Transpose(v, {0}).ContentEquals(v));
  ExpectTensor<float>(Transpose(Tensor(DT_FLOAT, TensorShape({0, 3})), {1, 0}),
                      TensorShape({3, 0}), {});
  // Moving only dims of 1 keeps the element order: the buffer is shared.
  Tensor x = Iota<float>(TensorShape({1, 3, 1, 2}));
  Tensor y = Transpose(x, {2, 1, 0, 3});
  EXPECT_TRUE(y.SharesBufferWith(x));
  ExpectTensor<float>(y, TensorShape({1, 3, 1, 2}), {0, 1, 2, 3, 4, 5});
  Tensor z = Transpose(x, {0, 2, 3, 1});
  EXPECT_FALSE(z.SharesBufferWith(x));
  EXPECT_TRUE(z.ContentEquals(ReferenceTranspose<float>(x, {0, 2, 3, 1})));
}

TEST(TransposeOpTest, IdentitySharesTheBuffer) {
  Tensor x = Iota<float>(TensorShape({4, 5}));
  EXPECT_TRUE(Transpose(x, {0, 1}).SharesBufferWith(x));
}

TEST(TransposeOpTest, Int64Perm) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  Tensor y = Run1("Transpose", {{"T", DT_FLOAT}, {"Tperm", DT_INT64}}, {x, I64({1, 0})});
  ExpectTensor<float>(y, TensorShape({3, 2}), {0, 3, 1, 4, 2, 5});
}

TEST(TransposeOpTest, BadPermutations) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  RunError("Transpose", {{"T", DT_FLOAT}}, {x, I32({0})}, {"Transpose", "[0]", "[2,3]"});
  RunError("Transpose", {{"T", DT_FLOAT}}, {x, I32({0, 2})}, {"Transpose", "2", "[2,3]"});
  RunError("Transpose", {{"T", DT_FLOAT}}, {x, I32({1, 1})}, {"Transpose", "twice", "[2,3]"});
  RunError("Transpose", {{"T", DT_FLOAT}}, {x, I32({-1, 0})}, {"Transpose", "-1"});
  RunError("Transpose", {{"T", DT_FLOAT}},
           {x, Tensor::FromVector<int32_t>({1, 0}, TensorShape({1, 2}))},
           {"Transpose", "vector", "[1,2]"});
}

// out[i] = in[i with the reversed dims mirrored].
template <typename T>
Tensor ReferenceReverse(const Tensor& in, const std::vector<bool>& reversed) {
  Tensor out(in.dtype(), in.shape());
  for (int64_t o = 0; o < out.NumElements(); ++o) {
    std::vector<int64_t> index = Unravel(o, in.shape());
    for (int k = 0; k < in.dims(); ++k) {
      if (reversed[k]) index[k] = in.dim_size(k) - 1 - index[k];
    }
    out.data<T>()[o] = in.data<T>()[Ravel(index, in.shape())];
  }
  return out;
}

TEST(ReverseV2OpTest, EverySubsetOfAxesMatchesReference) {
  Tensor x = Iota<int32_t>(TensorShape({3, 4, 5}));
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<int32_t> axes;
    std::vector<bool> reversed(3);
    for (int k = 0; k < 3; ++k) {
      reversed[k] = (mask >> k) & 1;
      if (reversed[k]) axes.push_back(k - 3 * (k % 2));  // some negative
    }
    Tensor y = Run1("ReverseV2", {{"T", DT_INT32}}, {x, I32(axes)});
    EXPECT_TRUE(y.ContentEquals(ReferenceReverse<int32_t>(x, reversed))) << "mask " << mask;
  }
}

TEST(ReverseV2OpTest, StringsEmptyScalarAndLarge) {
  Tensor s = StringIota(TensorShape({3}));
  ExpectTensor<std::string>(Run1("ReverseV2", {{"T", DT_STRING}}, {s, I32({0})}),
                            TensorShape({3}), {"s2", "s1", "s0"});
  Tensor empty(DT_FLOAT, TensorShape({0, 2}));
  EXPECT_EQ(Run1("ReverseV2", {{"T", DT_FLOAT}}, {empty, I32({0, 1})}).shape(),
            TensorShape({0, 2}));
  Tensor scalar = Tensor::Scalar<double>(2.5);
  EXPECT_TRUE(Run1("ReverseV2", {{"T", DT_DOUBLE}}, {scalar, I32({})}).ContentEquals(scalar));
  Tensor big = Iota<float>(TensorShape({300, 700}));
  EXPECT_TRUE(Run1("ReverseV2", {{"T", DT_FLOAT}}, {big, I32({1})})
                  .ContentEquals(ReferenceReverse<float>(big, {false, true})));
  // Reversing dims of 1 changes nothing: the buffer is shared.
  Tensor row = Iota<float>(TensorShape({1, 4}));
  EXPECT_TRUE(Run1("ReverseV2", {{"T", DT_FLOAT}}, {row, I32({0})}).SharesBufferWith(row));
}

TEST(ReverseV2OpTest, BadAxes) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  RunError("ReverseV2", {{"T", DT_FLOAT}}, {x, I32({2})}, {"ReverseV2", "axis 2", "[2,3]"});
  RunError("ReverseV2", {{"T", DT_FLOAT}}, {x, I32({1, -1})}, {"ReverseV2", "twice"});
}

TEST(ReverseOpTest, BoolDims) {
  Tensor x = Iota<float>(TensorShape({2, 3}));
  Tensor dims = Tensor::FromVector<bool>({false, true});
  ExpectTensor<float>(Run1("Reverse", {{"T", DT_FLOAT}}, {x, dims}), TensorShape({2, 3}),
                      {2, 1, 0, 5, 4, 3});
  RunError("Reverse", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<bool>({true})},
           {"Reverse", "[1]", "[2,3]"});
}

}  // namespace
}  // namespace weir
