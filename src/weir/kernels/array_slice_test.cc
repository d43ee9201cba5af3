// Slice and StridedSlice: hand-computed cases for every mask and an
// independent per-dim index-list reference for random dense slices.
#include <gtest/gtest.h>

#include <random>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

Tensor Slice(const Tensor& x, std::vector<int32_t> begin, std::vector<int32_t> size) {
  return Run1("Slice", {{"T", x.dtype()}, {"Index", DT_INT32}}, {x, I32(begin), I32(size)});
}

TEST(SliceOpTest, Basic) {
  Tensor x = Iota<float>(TensorShape({3, 4}));
  ExpectTensor<float>(Slice(x, {1, 1}, {2, 2}), TensorShape({2, 2}), {5, 6, 9, 10});
  ExpectTensor<float>(Slice(x, {1, 2}, {-1, -1}), TensorShape({2, 2}), {6, 7, 10, 11});
  ExpectTensor<float>(Slice(x, {0, 3}, {3, 1}), TensorShape({3, 1}), {3, 7, 11});
  Tensor y = Run1("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT64}},
                  {x, I64({2, 0}), I64({1, -1})});
  ExpectTensor<float>(y, TensorShape({1, 4}), {8, 9, 10, 11});
}

TEST(SliceOpTest, ContiguousSlicesShareTheBuffer) {
  Tensor x = Iota<float>(TensorShape({4, 3}));
  Tensor rows = Slice(x, {1, 0}, {2, 3});
  EXPECT_TRUE(rows.SharesBufferWith(x));
  ExpectTensor<float>(rows, TensorShape({2, 3}), {3, 4, 5, 6, 7, 8});
  // One row narrowed is contiguous too.
  Tensor part = Slice(x, {2, 1}, {1, 2});
  EXPECT_TRUE(part.SharesBufferWith(x));
  ExpectTensor<float>(part, TensorShape({1, 2}), {7, 8});
  EXPECT_FALSE(Slice(x, {0, 1}, {2, 2}).SharesBufferWith(x));
  EXPECT_TRUE(Slice(x, {0, 0}, {-1, -1}).SharesBufferWith(x));
}

TEST(SliceOpTest, RankZeroOneEmptyAndStrings) {
  Tensor scalar = Tensor::Scalar<int64_t>(5);
  EXPECT_TRUE(Slice(scalar, {}, {}).ContentEquals(scalar));
  ExpectTensor<int32_t>(Slice(Iota<int32_t>(TensorShape({5})), {4}, {1}), TensorShape({1}), {4});
  ExpectTensor<int32_t>(Slice(Iota<int32_t>(TensorShape({5})), {5}, {-1}), TensorShape({0}), {});
  ExpectTensor<float>(Slice(Tensor(DT_FLOAT, TensorShape({0, 3})), {0, 1}, {0, 2}),
                      TensorShape({0, 2}), {});
  ExpectTensor<float>(Slice(Iota<float>(TensorShape({2, 3})), {0, 3}, {2, 0}),
                      TensorShape({2, 0}), {});
  ExpectTensor<std::string>(Slice(StringIota(TensorShape({2, 3})), {0, 1}, {2, 1}),
                            TensorShape({2, 1}), {"s1", "s4"});
}

TEST(SliceOpTest, LargeStridedCopyMatchesReference) {
  Tensor x = Iota<float>(TensorShape({300, 257}));
  Tensor y = Slice(x, {7, 3}, {290, 250});
  ASSERT_EQ(y.shape(), TensorShape({290, 250}));
  for (int64_t i = 0; i < 290; ++i) {
    for (int64_t j = 0; j < 250; ++j) {
      ASSERT_EQ(y.data<float>()[i * 250 + j], x.data<float>()[(i + 7) * 257 + j + 3]);
    }
  }
}

TEST(SliceOpTest, Errors) {
  Tensor x = Iota<float>(TensorShape({3, 4}));
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT32}}, {x, I32({4, 0}), I32({1, 1})},
           {"Slice", "begin[0] = 4", "[3,4]"});
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT32}}, {x, I32({-1, 0}), I32({1, 1})},
           {"Slice", "begin[0] = -1"});
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT32}}, {x, I32({1, 2}), I32({1, 3})},
           {"Slice", "size[1] = 3", "[0, 2]", "[3,4]"});
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT32}}, {x, I32({1, 2}), I32({1, -2})},
           {"Slice", "size[1] = -2"});
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT32}}, {x, I32({1}), I32({1})},
           {"Slice", "[3,4]"});
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT32}},
           {x, Tensor::FromVector<int32_t>({0, 0}, TensorShape({1, 2})), I32({1, 1})},
           {"Slice: begin", "vector", "[1,2]"});
}

struct Masks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

StatusOr<std::vector<Tensor>> RunStridedSlice(const Tensor& x, std::vector<int32_t> begin,
                                              std::vector<int32_t> end,
                                              std::vector<int32_t> strides, Masks m) {
  return RunKernel("StridedSlice",
                   {{"T", x.dtype()},
                    {"Index", DT_INT32},
                    {"begin_mask", m.begin},
                    {"end_mask", m.end},
                    {"ellipsis_mask", m.ellipsis},
                    {"new_axis_mask", m.new_axis},
                    {"shrink_axis_mask", m.shrink}},
                   {x, I32(begin), I32(end), I32(strides)});
}

Tensor StridedSlice(const Tensor& x, std::vector<int32_t> begin, std::vector<int32_t> end,
                    std::vector<int32_t> strides, Masks m = {}) {
  StatusOr<std::vector<Tensor>> out = RunStridedSlice(x, begin, end, strides, m);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// x[i, j, k] = 12 i + 4 j + k.
Tensor X() { return Iota<int32_t>(TensorShape({2, 3, 4})); }

TEST(StridedSliceOpTest, EllipsisThenIndex) {
  // x[..., 1]
  Masks m;
  m.ellipsis = 1;
  m.shrink = 2;
  ExpectTensor<int32_t>(StridedSlice(X(), {0, 1}, {0, 2}, {1, 1}, m), TensorShape({2, 3}),
                        {1, 5, 9, 13, 17, 21});
}

TEST(StridedSliceOpTest, NewAxisIndexEllipsisNegativeStride) {
  // x[newaxis, 0, ..., ::-2]
  Masks m;
  m.new_axis = 1;
  m.shrink = 2;
  m.ellipsis = 4;
  m.begin = 8;
  m.end = 8;
  ExpectTensor<int32_t>(StridedSlice(X(), {0, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 1, -2}, m),
                        TensorShape({1, 3, 2}), {3, 1, 7, 5, 11, 9});
}

TEST(StridedSliceOpTest, RangeEllipsisNewAxisNegativeIndex) {
  // x[1:, ..., newaxis, -1]
  Masks m;
  m.end = 1;
  m.ellipsis = 2;
  m.new_axis = 4;
  m.shrink = 8;
  ExpectTensor<int32_t>(StridedSlice(X(), {1, 0, 0, -1}, {0, 0, 0, 0}, {1, 1, 1, 1}, m),
                        TensorShape({1, 3, 1}), {15, 19, 23});
}

TEST(StridedSliceOpTest, OutOfRangeBeginAndEndAreClamped) {
  // x[-100:100, 5:1:-1, 2:]
  Masks m;
  m.end = 4;
  ExpectTensor<int32_t>(StridedSlice(X(), {-100, 5, 2}, {100, 1, 0}, {1, -1, 1}, m),
                        TensorShape({2, 1, 2}), {10, 11, 22, 23});
  // x[:, -100:-1:2] and x[:, 100:-100:-2]: clamped at both ends.
  ExpectTensor<int32_t>(StridedSlice(X(), {0, -100}, {1, -1}, {1, 2}), TensorShape({1, 1, 4}),
                        {0, 1, 2, 3});
  ExpectTensor<int32_t>(StridedSlice(X(), {0, 100}, {1, -100}, {1, -2}), TensorShape({1, 2, 4}),
                        {8, 9, 10, 11, 0, 1, 2, 3});
}

TEST(StridedSliceOpTest, FullReverseAndEmptyRanges) {
  Masks all;
  all.begin = all.end = 7;
  Tensor r = StridedSlice(X(), {0, 0, 0}, {0, 0, 0}, {-1, -1, -1}, all);
  ASSERT_EQ(r.shape(), TensorShape({2, 3, 4}));
  for (int i = 0; i < 24; ++i) EXPECT_EQ(r.data<int32_t>()[i], 23 - i);
  ExpectTensor<int32_t>(StridedSlice(X(), {2}, {1}, {1}), TensorShape({0, 3, 4}), {});
  ExpectTensor<int32_t>(StridedSlice(X(), {0}, {1}, {-1}), TensorShape({0, 3, 4}), {});
  // A range of an empty dim, and an index into a non-empty dim of an empty
  // tensor.
  Tensor empty(DT_FLOAT, TensorShape({0, 3}));
  Masks shrink1;
  shrink1.shrink = 2;
  shrink1.begin = 1;
  ExpectTensor<float>(StridedSlice(empty, {0, 1}, {0, 2}, {1, 1}, shrink1), TensorShape({0}),
                      {});
}

TEST(StridedSliceOpTest, IndexEveryDimGivesAScalar) {
  Masks m;
  m.shrink = 7;
  ExpectTensor<int32_t>(StridedSlice(X(), {1, 2, 3}, {2, 3, 4}, {1, 1, 1}, m), TensorShape(),
                        {23});
  ExpectTensor<int32_t>(StridedSlice(X(), {-1, -3, -4}, {0, 0, 0}, {1, 1, 1}, m), TensorShape(),
                        {12});
}

TEST(StridedSliceOpTest, ContiguousResultsShareTheBuffer) {
  Tensor x = X();
  Masks m;
  m.new_axis = 1;  // x[newaxis]
  Tensor y = StridedSlice(x, {0}, {0}, {1}, m);
  EXPECT_EQ(y.shape(), TensorShape({1, 2, 3, 4}));
  EXPECT_TRUE(y.SharesBufferWith(x));
  // new_axis wins over shrink on the same entry.
  m.shrink = 1;
  EXPECT_EQ(StridedSlice(x, {0}, {0}, {1}, m).shape(), TensorShape({1, 2, 3, 4}));
  Masks e;
  e.ellipsis = 1;  // x[...]; ellipsis wins over new_axis on the same entry
  e.new_axis = 1;
  Tensor z = StridedSlice(x, {0}, {0}, {1}, e);
  EXPECT_EQ(z.shape(), TensorShape({2, 3, 4}));
  EXPECT_TRUE(z.SharesBufferWith(x));
  Tensor rows = StridedSlice(x, {1}, {2}, {1});  // x[1:2]
  EXPECT_TRUE(rows.SharesBufferWith(x));
  Masks s;
  s.shrink = 1;  // x[0, 1:3]
  Tensor part = StridedSlice(x, {0, 1}, {1, 3}, {1, 1}, s);
  EXPECT_TRUE(part.SharesBufferWith(x));
  ExpectTensor<int32_t>(part, TensorShape({2, 4}), {4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_FALSE(StridedSlice(x, {0, 1}, {2, 2}, {1, 1}).SharesBufferWith(x));  // x[:, 1:2]
}

TEST(StridedSliceOpTest, StringsAndInt64Index) {
  Tensor s = StringIota(TensorShape({2, 3}));
  Masks m;
  m.begin = m.end = 1;
  ExpectTensor<std::string>(StridedSlice(s, {0, 2}, {0, 0}, {1, -2}, m), TensorShape({2, 1}),
                            {"s2", "s5"});
  auto out = RunKernel("StridedSlice", {{"T", DT_INT32}, {"Index", DT_INT64}},
                       {X(), I64({1, 1}), I64({2, 3}), I64({1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[0], TensorShape({1, 2, 4}), {16, 17, 18, 19, 20, 21, 22, 23});
}

TEST(StridedSliceOpTest, Errors) {
  Masks shrink;
  shrink.shrink = 1;
  // A range past the end is clamped (empty); an index past the end is not.
  EXPECT_EQ(StridedSlice(X(), {5}, {6}, {1}).shape(), TensorShape({0, 3, 4}));
  Status s = RunStridedSlice(X(), {5}, {6}, {1}, shrink).status();
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("StridedSlice: slice index 5 of dimension 0 out of bounds"),
            std::string::npos) << s;
  EXPECT_NE(s.message().find("[2,3,4]"), std::string::npos) << s;
  s = RunStridedSlice(X(), {-3}, {0}, {1}, shrink).status();
  EXPECT_NE(s.message().find("slice index -3"), std::string::npos) << s;
  s = RunStridedSlice(X(), {0, 0}, {1, 1}, {1, 0}, {}).status();
  EXPECT_NE(s.message().find("strides[1] is 0"), std::string::npos) << s;
  Masks two_ellipses;
  two_ellipses.ellipsis = 3;
  s = RunStridedSlice(X(), {0, 0}, {1, 1}, {1, 1}, two_ellipses).status();
  EXPECT_NE(s.message().find("more than one ellipsis"), std::string::npos) << s;
  s = RunStridedSlice(X(), {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}, {}).status();
  EXPECT_NE(s.message().find("indexes 4 dims"), std::string::npos) << s;
  s = RunStridedSlice(X(), {0, 0}, {1}, {1, 1}, {}).status();
  EXPECT_NE(s.message().find("same length"), std::string::npos) << s;
}

// Python's slice semantics for one dim, written as an index list.
std::vector<int64_t> SliceIndices(int64_t dim, int64_t b, int64_t e, int64_t s, bool begin_mask,
                                  bool end_mask) {
  std::vector<int64_t> indices;
  if (s > 0) {
    int64_t start = begin_mask ? 0 : b < 0 ? std::max<int64_t>(0, b + dim) : std::min(b, dim);
    int64_t stop = end_mask ? dim : e < 0 ? std::max<int64_t>(0, e + dim) : std::min(e, dim);
    for (int64_t i = start; i < stop; i += s) indices.push_back(i);
  } else {
    int64_t start =
        begin_mask ? dim - 1 : b < 0 ? std::max<int64_t>(-1, b + dim) : std::min(b, dim - 1);
    int64_t stop =
        end_mask ? -1 : e < 0 ? std::max<int64_t>(-1, e + dim) : std::min(e, dim - 1);
    for (int64_t i = start; i > stop; i += s) indices.push_back(i);
  }
  return indices;
}

TEST(StridedSliceOpTest, RandomDenseSlicesMatchReference) {
  std::mt19937 rng(7);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = uniform(1, 3);
    std::vector<int64_t> dims;
    for (int k = 0; k < rank; ++k) dims.push_back(uniform(0, 6));
    const TensorShape shape(dims);
    Tensor x = Iota<int32_t>(shape);
    std::vector<int32_t> begin, end, strides;
    Masks m;
    std::vector<std::vector<int64_t>> picks;
    for (int k = 0; k < rank; ++k) {
      const int d = static_cast<int>(dims[k]);
      begin.push_back(uniform(-d - 2, d + 2));
      end.push_back(uniform(-d - 2, d + 2));
      int s = uniform(1, 3) * (uniform(0, 1) ? 1 : -1);
      strides.push_back(s);
      const bool bm = uniform(0, 3) == 0, em = uniform(0, 3) == 0;
      m.begin |= int64_t{bm} << k;
      m.end |= int64_t{em} << k;
      picks.push_back(SliceIndices(d, begin[k], end[k], s, bm, em));
    }
    std::vector<int64_t> out_dims;
    for (const auto& p : picks) out_dims.push_back(static_cast<int64_t>(p.size()));
    const TensorShape out_shape(out_dims);
    Tensor expected(DT_INT32, out_shape);
    for (int64_t o = 0; o < expected.NumElements(); ++o) {
      std::vector<int64_t> index = Unravel(o, out_shape);
      for (int k = 0; k < rank; ++k) index[k] = picks[k][index[k]];
      expected.data<int32_t>()[o] = x.data<int32_t>()[Ravel(index, shape)];
    }
    Tensor y = StridedSlice(x, begin, end, strides, m);
    ASSERT_TRUE(y.ContentEquals(expected))
        << "shape " << shape << " begin " << StrJoin(begin, ",") << " end " << StrJoin(end, ",")
        << " strides " << StrJoin(strides, ",") << " masks " << m.begin << "/" << m.end
        << ": got " << y.DebugString(50) << " want " << expected.DebugString(50);
  }
}

TEST(StridedSliceOpTest, LargeNegativeStrideCopy) {
  Tensor x = Iota<float>(TensorShape({400, 300}));
  Masks m;
  m.begin = m.end = 3;
  Tensor y = StridedSlice(x, {0, 0}, {0, 0}, {-3, 2}, m);
  ASSERT_EQ(y.shape(), TensorShape({134, 150}));
  for (int64_t i = 0; i < 134; ++i) {
    for (int64_t j = 0; j < 150; ++j) {
      ASSERT_EQ(y.data<float>()[i * 150 + j], x.data<float>()[(399 - 3 * i) * 300 + 2 * j]);
    }
  }
}

}  // namespace
}  // namespace weir
