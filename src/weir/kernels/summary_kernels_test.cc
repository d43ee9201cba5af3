// ScalarSummary, HistogramSummary and MergeSummary: the protos they emit,
// checked field by field against values computed here, and byte for byte
// against what TensorFlow 2.21's kernels emit for the same inputs.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "proto/summary.pb.h"
#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/summary_histogram.h"

namespace weir {
namespace {

// Serialized Summaries from TensorFlow 2.21 (tf.raw_ops in eager mode):
//   kTfScalar:    ScalarSummary(tags=["loss","accuracy","lr"], values=float64 [0.25, 0.875, 1e-3])
//   kTfHistFloat: HistogramSummary("w", float32 [[-3.5, 0, 1e-13, 2], [2, 7.25, -1e-12, 1e30]])
//   kTfHistInt:   HistogramSummary("counts", int32 [1, 1, 2, 3, 5, 8, -13])
//   kTfHistEmpty: HistogramSummary("none", float32 [0])
//   kTfMerge:     MergeSummary([kTfScalar, stack([kTfHistInt, kTfHistEmpty])])
constexpr char kTfScalar[] =
    "0a0b0a046c6f7373150000803e0a0f0a086163637572616379150000603f0a090a026c72156f12833a";
constexpr char kTfHistFloat[] =
    "0ae7010a01772ae101090000000000000cc01100000040593e29461900000000000020402100000040593e2946"
    "2980ecd0eee4e9634c325881444bf80ba70ec075f872caaddd0bc011ea2d81999771bd00000000000000001"
    "1ea2d819997713ddc94cd2e8d75ff3fe011f10c744d01402988ead0c2261b40612f354cd6dd1d404c549f02"
    "23831544ffffffffffffef7f3a580000000000000000000000000000f03f0000000000000000000000000000"
    "f03f0000000000000040000000000000000000000000000000400000000000000000000000000000f03f0000"
    "000000000000000000000000f03f";
constexpr char kTfHistInt[] =
    "0a8c020a06636f756e74732a8102090000000000002ac0110000000000002040190000000000001c40210000"
    "000000001c402900000000001071403268d603898d88742ac065a6d93ad90c28c008996919155aed3f2b14fa"
    "cdbe24f03fdc94cd2e8d75ff3fe011f10c744d014068bc10359a0707400d9cc5a02955094021d10e9a768b12"
    "40d8b276a935661440612f354cd6dd1d4076401ddd356d2040ffffffffffffef7f3a68000000000000000000"
    "0000000000f03f000000000000000000000000000000400000000000000000000000000000f03f0000000000"
    "000000000000000000f03f0000000000000000000000000000f03f0000000000000000000000000000f03f00"
    "00000000000000";
constexpr char kTfHistEmpty[] =
    "0a2e0a046e6f6e652a2609ffffffffffffef7f11ffffffffffffefff3208ffffffffffffef7f3a08000000000"
    "0000000";

std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

wire::Summary Parse(const Tensor& serialized) {
  EXPECT_EQ(serialized.dtype(), DT_STRING);
  EXPECT_EQ(serialized.dims(), 0);
  wire::Summary summary;
  EXPECT_TRUE(summary.ParseFromString(serialized.scalar<std::string>()));
  return summary;
}

Tensor Strings(std::vector<std::string> values, TensorShape shape) {
  return Tensor::FromVector<std::string>(values, shape);
}

StatusOr<std::vector<Tensor>> Histogram(const std::string& tag, const Tensor& values) {
  return RunKernel("HistogramSummary", {{"T", values.dtype()}},
                   {Tensor::Scalar<std::string>(tag), values});
}

TEST(ScalarSummaryTest, OneSimpleValuePerTag) {
  auto out =
      RunKernel("ScalarSummary", {{"T", DT_INT64}},
                {Strings({"a", "b", "c", "d"}, TensorShape({2, 2})),
                 Tensor::FromVector<int64_t>({1, -2, 3, int64_t{1} << 40}, TensorShape({2, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  wire::Summary summary = Parse((*out)[0]);
  ASSERT_EQ(summary.value_size(), 4);
  const float expected[] = {1.0f, -2.0f, 3.0f, 1099511627776.0f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(summary.value(i).tag(), std::string(1, static_cast<char>('a' + i)));
    ASSERT_TRUE(summary.value(i).has_simple_value());
    EXPECT_EQ(summary.value(i).simple_value(), expected[i]);
  }
}

TEST(ScalarSummaryTest, ScalarTagAndHalfValue) {
  Tensor value(DT_HALF, TensorShape({}));
  value.data<Eigen::half>()[0] = Eigen::half(0.5f);
  auto out =
      RunKernel("ScalarSummary", {{"T", DT_HALF}}, {Tensor::Scalar<std::string>("x"), value});
  ASSERT_TRUE(out.ok()) << out.status();
  wire::Summary summary = Parse((*out)[0]);
  ASSERT_EQ(summary.value_size(), 1);
  EXPECT_EQ(summary.value(0).simple_value(), 0.5f);
}

TEST(ScalarSummaryTest, SameBytesAsTensorFlow) {
  auto out = RunKernel("ScalarSummary", {{"T", DT_DOUBLE}},
                       {Strings({"loss", "accuracy", "lr"}, TensorShape({3})),
                        Tensor::FromVector<double>({0.25, 0.875, 1e-3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<std::string>(), FromHex(kTfScalar));
}

TEST(ScalarSummaryTest, ShapeMismatchNamesBothShapes) {
  auto out = RunKernel("ScalarSummary", {{"T", DT_FLOAT}},
                       {Strings({"only"}, TensorShape({1})), Tensor::FromVector<float>({1, 2})});
  ASSERT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find("[1] and [2]"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("'only'"), std::string::npos) << out.status();
  // A vector of one tag is not a scalar tag.
  out = RunKernel("ScalarSummary", {{"T", DT_FLOAT}},
                  {Strings({"v"}, TensorShape({1})), Tensor::Scalar<float>(1)});
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
}

// The bucket a value falls in, found by a linear scan of the limits.
size_t BucketOf(const std::vector<double>& limits, double value) {
  for (size_t i = 0; i < limits.size(); ++i) {
    if (value < limits[i]) return i;
  }
  return limits.size() - 1;
}

TEST(SummaryHistogramTest, DefaultLimitsAreTensorFlows) {
  const std::vector<double>& limits = SummaryHistogram::DefaultLimits();
  // 1e-12 * 1.1^k stays below 1e20 for k < 774, plus DBL_MAX, both signs, and 0.
  ASSERT_EQ(limits.size(), 2 * 775 + 1);
  EXPECT_EQ(limits.front(), -DBL_MAX);
  EXPECT_EQ(limits.back(), DBL_MAX);
  EXPECT_EQ(limits[775], 0.0);
  EXPECT_EQ(limits[776], 1e-12);
  EXPECT_EQ(limits[774], -1e-12);
  for (size_t i = 1; i < limits.size(); ++i) ASSERT_LT(limits[i - 1], limits[i]) << i;
  for (size_t i = 777; i + 1 < limits.size(); ++i) {
    EXPECT_NEAR(limits[i] / limits[i - 1], 1.1, 1e-12) << i;
    EXPECT_EQ(limits[i], -limits[limits.size() - 1 - i]) << i;
  }
  EXPECT_LT(limits[limits.size() - 2], 1e20);
  EXPECT_GE(limits[limits.size() - 2] * 1.1, 1e20);
}

TEST(HistogramSummaryTest, StatisticsAndBucketsOfManyValues) {
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) {
    values.push_back(std::sin(i * 0.37) * std::pow(10.0, (i % 25) - 12));
  }
  values.push_back(0.0);
  values.push_back(-0.0);
  values.push_back(1e-12);  // exactly a limit: in the bucket above it
  values.push_back(3e25);   // past the last finite limit
  auto out = Histogram("many", Tensor::FromVector<double>(values));
  ASSERT_TRUE(out.ok()) << out.status();
  wire::Summary summary = Parse((*out)[0]);
  ASSERT_EQ(summary.value_size(), 1);
  EXPECT_EQ(summary.value(0).tag(), "many");
  ASSERT_TRUE(summary.value(0).has_histo());
  const wire::HistogramProto& histo = summary.value(0).histo();

  double sum = 0, sum_squares = 0;
  for (double v : values) {
    sum += v;
    sum_squares += v * v;
  }
  EXPECT_EQ(histo.num(), values.size());
  EXPECT_EQ(histo.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(histo.max(), 3e25);
  EXPECT_EQ(histo.sum(), sum);
  EXPECT_EQ(histo.sum_squares(), sum_squares);

  // Expected counts per limit, by linear scan; the proto lists non-empty
  // buckets with their counts, and each run of empty ones as one 0.
  const std::vector<double>& limits = SummaryHistogram::DefaultLimits();
  std::vector<double> counts(limits.size(), 0);
  for (double v : values) counts[BucketOf(limits, v)] += 1;
  ASSERT_EQ(histo.bucket_size(), histo.bucket_limit_size());
  double total = 0;
  size_t next = 0;  // index into limits
  for (int i = 0; i < histo.bucket_size(); ++i) {
    total += histo.bucket(i);
    if (histo.bucket(i) > 0) {
      EXPECT_EQ(histo.bucket_limit(i), limits[next]) << i;
      EXPECT_EQ(histo.bucket(i), counts[next]) << i;
      ++next;
    } else {
      if (i > 0) {
        EXPECT_GT(histo.bucket(i - 1), 0) << "two empty runs in a row at " << i;
      }
      while (next < limits.size() && counts[next] == 0) ++next;
      EXPECT_EQ(histo.bucket_limit(i), limits[next - 1]) << i;
    }
  }
  EXPECT_EQ(next, limits.size());
  EXPECT_EQ(total, values.size());
}

TEST(HistogramSummaryTest, ExtremesLandInTheOuterBuckets) {
  auto out = Histogram("edges", Tensor::FromVector<double>({-DBL_MAX, DBL_MAX, DBL_MAX}));
  ASSERT_TRUE(out.ok()) << out.status();
  const wire::Summary summary = Parse((*out)[0]);
  const wire::HistogramProto& histo = summary.value(0).histo();
  const std::vector<double>& limits = SummaryHistogram::DefaultLimits();
  // -DBL_MAX is not below limit 0 (-DBL_MAX), so it counts in bucket 1; DBL_MAX
  // in the last bucket. Between them one run of empty buckets.
  ASSERT_EQ(histo.bucket_size(), 4);
  EXPECT_EQ(histo.bucket(0), 0);
  EXPECT_EQ(histo.bucket_limit(0), -DBL_MAX);
  EXPECT_EQ(histo.bucket(1), 1);
  EXPECT_EQ(histo.bucket_limit(1), limits[1]);
  EXPECT_EQ(histo.bucket(2), 0);
  EXPECT_EQ(histo.bucket_limit(2), limits[limits.size() - 2]);
  EXPECT_EQ(histo.bucket(3), 2);
  EXPECT_EQ(histo.bucket_limit(3), DBL_MAX);
  EXPECT_EQ(histo.min(), -DBL_MAX);
  EXPECT_EQ(histo.max(), DBL_MAX);
}

TEST(HistogramSummaryTest, SameBytesAsTensorFlow) {
  auto floats =
      Histogram("w", Tensor::FromVector<float>({-3.5f, 0, 1e-13f, 2, 2, 7.25f, -1e-12f, 1e30f},
                                               TensorShape({2, 4})));
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_EQ((*floats)[0].scalar<std::string>(), FromHex(kTfHistFloat));
  auto ints = Histogram("counts", Tensor::FromVector<int32_t>({1, 1, 2, 3, 5, 8, -13}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ((*ints)[0].scalar<std::string>(), FromHex(kTfHistInt));
  auto empty = Histogram("none", Tensor(DT_FLOAT, TensorShape({0})));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].scalar<std::string>(), FromHex(kTfHistEmpty));
}

TEST(HistogramSummaryTest, EveryRealType) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64,
                      DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64}) {
    auto out = RunKernel("Cast", {{"SrcT", DT_INT32}, {"DstT", dtype}},
                         {Tensor::FromVector<int32_t>({3, 1, 4, 1, 5})});
    Tensor values;
    if (out.ok()) {
      values = (*out)[0];
    } else {  // dtypes Cast lacks: fill directly
      values = Tensor(dtype, TensorShape({5}));
      const uint32_t v[] = {3, 1, 4, 1, 5};
      for (int i = 0; i < 5; ++i) {
        if (dtype == DT_UINT16) values.data<uint16_t>()[i] = v[i];
        if (dtype == DT_UINT32) values.data<uint32_t>()[i] = v[i];
        if (dtype == DT_UINT64) values.data<uint64_t>()[i] = v[i];
      }
    }
    auto histo_out = Histogram("h", values);
    ASSERT_TRUE(histo_out.ok()) << dtype << ": " << histo_out.status();
    const wire::Summary summary = Parse((*histo_out)[0]);
    const wire::HistogramProto& histo = summary.value(0).histo();
    EXPECT_EQ(histo.num(), 5) << dtype;
    EXPECT_EQ(histo.min(), 1) << dtype;
    EXPECT_EQ(histo.max(), 5) << dtype;
    EXPECT_EQ(histo.sum(), 14) << dtype;
    EXPECT_EQ(histo.sum_squares(), 52) << dtype;
  }
}

TEST(HistogramSummaryTest, NonFiniteValuesAreRefused) {
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    auto out = Histogram("weights", Tensor::FromVector<double>({1.0, 2.0, bad}));
    ASSERT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find(std::isnan(bad) ? "NaN" : "Infinity"), std::string::npos)
        << out.status();
    EXPECT_NE(out.status().message().find("'weights'"), std::string::npos) << out.status();
    EXPECT_NE(out.status().message().find("index 2"), std::string::npos) << out.status();
  }
  auto out = RunKernel("HistogramSummary", {{"T", DT_FLOAT}},
                       {Strings({"a", "b"}, TensorShape({2})), Tensor::FromVector<float>({1})});
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
}

TEST(MergeSummaryTest, ConcatenatesValuesInOrder) {
  Tensor scalar = Tensor::Scalar<std::string>(FromHex(kTfScalar));
  Tensor histograms = Strings({FromHex(kTfHistInt), FromHex(kTfHistEmpty)}, TensorShape({2}));
  auto out = RunKernel("MergeSummary", {{"N", 2}}, {scalar, histograms});
  ASSERT_TRUE(out.ok()) << out.status();
  wire::Summary merged = Parse((*out)[0]);
  ASSERT_EQ(merged.value_size(), 5);
  const char* tags[] = {"loss", "accuracy", "lr", "counts", "none"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(merged.value(i).tag(), tags[i]);
  // TensorFlow's MergeSummary of the same inputs: the concatenation.
  EXPECT_EQ((*out)[0].scalar<std::string>(),
            FromHex(kTfScalar) + FromHex(kTfHistInt) + FromHex(kTfHistEmpty));
}

TEST(MergeSummaryTest, DuplicateTagsAndGarbageAreRefused) {
  Tensor scalar = Tensor::Scalar<std::string>(FromHex(kTfScalar));
  auto out = RunKernel("MergeSummary", {{"N", 2}}, {scalar, scalar});
  ASSERT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find("duplicate tag 'loss'"), std::string::npos) << out.status();
  out = RunKernel("MergeSummary", {{"N", 1}}, {Tensor::Scalar<std::string>("\xff\xff\xff")});
  ASSERT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find("not a serialized Summary"), std::string::npos)
      << out.status();
  // Untagged values are never duplicates of each other.
  wire::Summary untagged;
  untagged.add_value()->set_simple_value(1);
  Tensor twice = Tensor::Scalar<std::string>(untagged.SerializeAsString());
  out = RunKernel("MergeSummary", {{"N", 2}}, {twice, twice});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Parse((*out)[0]).value_size(), 2);
}

TEST(SummaryOpsTest, OutputsAreScalars) {
  for (const char* op : {"ScalarSummary", "HistogramSummary"}) {
    auto shapes = InferShapes(op, {{"T", DT_FLOAT}}, {PartialShape({3}), PartialShape({3})});
    ASSERT_TRUE(shapes.ok()) << op << ": " << shapes.status();
    EXPECT_EQ((*shapes)[0], PartialShape(std::vector<int64_t>{})) << op;
  }
  auto shapes = InferShapes("MergeSummary", {{"N", 3}},
                            {PartialShape({}), PartialShape({2}), PartialShape::UnknownRank()});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape(std::vector<int64_t>{}));
}

}  // namespace
}  // namespace weir
