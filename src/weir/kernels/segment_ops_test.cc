// The segment reductions against a reference loop in double, for every
// reducer and several dtypes and id types; TensorFlow's rules for negative
// ids (dropped), ids out of range and unsorted ids (errors), empty segments
// (the reducer's identity), and hostile shapes.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

template <typename T>
Tensor Make(const std::vector<double>& values, const TensorShape& shape) {
  std::vector<T> converted;
  for (double v : values) converted.push_back(static_cast<T>(v));
  return Tensor::FromVector<T>(converted, shape);
}

enum class Kind { kSum, kProd, kMax, kMin };

// out[s, j] combining data[r, j] over rows r with ids[r] == s.
std::vector<double> Reference(Kind kind, const std::vector<double>& data,
                              const std::vector<int64_t>& ids, int64_t segments, int64_t inner,
                              double lowest, double highest) {
  const double init = kind == Kind::kSum    ? 0
                      : kind == Kind::kProd ? 1
                      : kind == Kind::kMax  ? lowest
                                            : highest;
  std::vector<double> out(segments * inner, init);
  for (size_t r = 0; r < ids.size(); ++r) {
    if (ids[r] < 0) continue;
    for (int64_t j = 0; j < inner; ++j) {
      double& o = out[ids[r] * inner + j];
      const double v = data[r * inner + j];
      switch (kind) {
        case Kind::kSum: o += v; break;
        case Kind::kProd: o *= v; break;
        case Kind::kMax: o = std::max(o, v); break;
        case Kind::kMin: o = std::min(o, v); break;
      }
    }
  }
  return out;
}

const char* OpName(Kind kind) {
  switch (kind) {
    case Kind::kSum: return "UnsortedSegmentSum";
    case Kind::kProd: return "UnsortedSegmentProd";
    case Kind::kMax: return "UnsortedSegmentMax";
    case Kind::kMin: return "UnsortedSegmentMin";
  }
  return "";
}

template <typename T, typename Index>
void CheckUnsorted(Kind kind) {
  // ids [2, 3] over data [2, 3, 4]: 6 rows of 4 into 4 segments, one
  // dropped (-1) and segment 2 empty.
  const std::vector<int64_t> ids = {0, 3, -1, 0, 1, 3};
  std::vector<double> data;
  for (int i = 0; i < 24; ++i) data.push_back((i * 7) % 11 - 4);
  std::vector<Index> typed_ids(ids.begin(), ids.end());
  for (DType num_type : {DT_INT32, DT_INT64}) {
    Tensor num = num_type == DT_INT32 ? Tensor::Scalar<int32_t>(4) : Tensor::Scalar<int64_t>(4);
    auto out =
        RunKernel(OpName(kind),
                  {{"T", kDTypeOf<T>}, {"Tindices", kDTypeOf<Index>}, {"Tnumsegments", num_type}},
                  {Make<T>(data, TensorShape({2, 3, 4})),
                   Tensor::FromVector<Index>(typed_ids, TensorShape({2, 3})), num});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({4, 4}));
    const double lowest = static_cast<double>(Eigen::NumTraits<T>::lowest());
    const double highest = static_cast<double>(Eigen::NumTraits<T>::highest());
    EXPECT_EQ(ToDoubles((*out)[0]), Reference(kind, data, ids, 4, 4, lowest, highest))
        << OpName(kind) << " " << kDTypeOf<T>;
  }
}

TEST(UnsortedSegmentTest, EveryReducerAgainstAReference) {
  for (Kind kind : {Kind::kSum, Kind::kProd, Kind::kMax, Kind::kMin}) {
    CheckUnsorted<float, int32_t>(kind);
    CheckUnsorted<double, int64_t>(kind);
    CheckUnsorted<int32_t, int32_t>(kind);
    CheckUnsorted<int64_t, int64_t>(kind);
    CheckUnsorted<Eigen::half, int32_t>(kind);
    CheckUnsorted<Eigen::bfloat16, int64_t>(kind);
    CheckUnsorted<int8_t, int32_t>(kind);
  }
  CheckUnsorted<float, int16_t>(Kind::kSum);
}

TEST(UnsortedSegmentTest, LargeRowsRunInParallelBands) {
  const int64_t rows = 50, inner = 3000, segments = 7;
  std::vector<double> data(rows * inner);
  std::vector<int64_t> ids(rows);
  for (int64_t i = 0; i < rows * inner; ++i) data[i] = (i * 13) % 17 - 8;
  for (int64_t r = 0; r < rows; ++r) ids[r] = (r * 5) % segments;
  auto out = RunKernel("UnsortedSegmentSum", {{"T", DT_DOUBLE}, {"Tindices", DT_INT64}},
                       {Make<double>(data, TensorShape({rows, inner})), Tensor::FromVector(ids),
                        Tensor::Scalar<int32_t>(segments)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), Reference(Kind::kSum, data, ids, segments, inner, 0, 0));
}

TEST(UnsortedSegmentTest, NanWinsMaxAndMin) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"UnsortedSegmentMax", "UnsortedSegmentMin"}) {
    auto out = RunKernel(op, {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
                         {Tensor::FromVector<float>({1, nan, 3, 2}),
                          Tensor::FromVector<int32_t>({0, 0, 1, 1}), Tensor::Scalar<int32_t>(2)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(std::isnan((*out)[0].data<float>()[0])) << op;
    EXPECT_EQ((*out)[0].data<float>()[1], std::string(op) == "UnsortedSegmentMax" ? 3 : 2);
  }
}

TEST(UnsortedSegmentTest, BadInputsAreInvalidArgument) {
  const Tensor data = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  const AttrMap attrs = {{"T", DT_FLOAT}, {"Tindices", DT_INT32}};
  auto expect_error = [&](const std::vector<Tensor>& inputs, const std::string& part) {
    auto out = RunKernel("UnsortedSegmentSum", attrs, inputs);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
  };
  expect_error({data, Tensor::FromVector<int32_t>({0, 5, 1}), Tensor::Scalar<int32_t>(3)},
               "segment_ids[1] = 5 is out of range [0, 3)");
  expect_error({data, Tensor::FromVector<int32_t>({0, 1}), Tensor::Scalar<int32_t>(3)},
               "does not start with segment_ids shape [2]");
  expect_error({data, Tensor::FromVector<int32_t>({0, 1, 1}), Tensor::Scalar<int32_t>(-1)},
               "num_segments = -1 must not be negative");
  expect_error({data, Tensor::FromVector<int32_t>({0, 1, 1}), Tensor::FromVector<int32_t>({3})},
               "num_segments must be a scalar");
  // [2^62, 2, 2] elements overflow int64: an error, never an allocation.
  expect_error({Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({2, 2, 2})),
                Tensor::FromVector<int32_t>({0, 1}), Tensor::Scalar<int64_t>(int64_t{1} << 62)},
               "UnsortedSegmentSum");
}

TEST(SegmentSumTest, SortedIdsWithGaps) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}) {
    const std::vector<double> data = {1, 2, 3, 4, 5, 6, 7, 8};
    Tensor input = dtype == DT_FLOAT    ? Make<float>(data, TensorShape({4, 2}))
                   : dtype == DT_DOUBLE ? Make<double>(data, TensorShape({4, 2}))
                   : dtype == DT_INT32  ? Make<int32_t>(data, TensorShape({4, 2}))
                                        : Make<int64_t>(data, TensorShape({4, 2}));
    auto out = RunKernel("SegmentSum", {{"T", dtype}, {"Tindices", DT_INT64}},
                         {input, Tensor::FromVector<int64_t>({0, 0, 2, 3})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({4, 2}));
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{4, 6, 0, 0, 5, 6, 7, 8})) << dtype;
  }
  auto empty =
      RunKernel("SegmentSum", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
                {Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor(DT_INT32, TensorShape({0}))});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].shape(), TensorShape({0, 3}));
}

TEST(SegmentSumTest, BadIdsAreInvalidArgument) {
  const Tensor data = Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}));
  auto run = [&](const std::vector<int32_t>& ids) {
    return RunKernel("SegmentSum", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
                     {data, Tensor::FromVector<int32_t>(ids)});
  };
  auto out = run({1, 0, 2});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("not sorted"), std::string::npos) << out.status();
  out = run({0, -1, 2});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("segment_ids[1] = -1 is negative"), std::string::npos)
      << out.status();
  out = run({0, 1});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("one id per row"), std::string::npos) << out.status();
  out = RunKernel("SegmentSum", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
                  {data, Tensor::FromVector<int32_t>({0, 0, 1}, TensorShape({1, 3}))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("must be a vector"), std::string::npos) << out.status();
  // The last id + 1 rows: INT64_MAX + 1 is an overflow error.
  out = RunKernel("SegmentSum", {{"T", DT_FLOAT}, {"Tindices", DT_INT64}},
                  {data, Tensor::FromVector<int64_t>({0, 0, std::numeric_limits<int64_t>::max()})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
}

}  // namespace
}  // namespace weir
