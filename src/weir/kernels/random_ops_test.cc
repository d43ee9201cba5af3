#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/philox.h"
#include "weir/runtime/cpu_device.h"

namespace weir {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// Known-answer vectors of Philox4x32-10 from the Random123 distribution
// (kat_vectors): counter and key in, four words out.
TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(PhiloxBlock({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(PhiloxBlock({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                        {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  // The digits of pi.
  EXPECT_EQ(PhiloxBlock({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                        {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PhiloxTest, BlocksAndStreamsFollowTheCounterLayout) {
  const PhiloxKey key = {0x01234567, 0x89abcdef};
  const uint64_t position = 0x0000000500000007ull;
  // Sub-counters that carry from the low word into the next.
  const uint64_t first_sub = 0xfffffffaull;
  uint32_t words[4 * 16];
  PhiloxBlocks<16>(key, position, first_sub, words);
  for (int i = 0; i < 16; ++i) {
    const uint64_t sub = first_sub + i;
    PhiloxCounter expected = PhiloxBlock(
        {static_cast<uint32_t>(sub), static_cast<uint32_t>(sub >> 32), 7, 5}, key);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(words[4 * i + w], expected[w]) << i << " " << w;
  }
  PhiloxStream stream(key, position, first_sub);
  for (int i = 0; i < 16; ++i) {
    for (int w = 0; w < 4; ++w) ASSERT_EQ(stream.NextUint32(), words[4 * i + w]);
  }
  // The next batch continues at sub-counter first_sub + 16.
  PhiloxCounter next = PhiloxBlock({static_cast<uint32_t>(first_sub + 16), 1, 7, 5}, key);
  EXPECT_EQ(stream.NextUint64(), uint64_t{next[0]} | uint64_t{next[1]} << 32);
}

// CPU devices with a given intra-op thread count, made once per test binary.
Device* DeviceWithThreads(int threads) {
  static auto* devices = new std::map<int, std::unique_ptr<CpuDevice>>;
  std::unique_ptr<CpuDevice>& device = (*devices)[threads];
  if (device == nullptr) {
    device = std::make_unique<CpuDevice>(
        StrCat("/job:localhost/replica:0/task:0/device:CPU:", threads), threads);
  }
  return device.get();
}

// `runs` outputs of one kernel of `op`, created on a device with `threads`
// intra-op threads and run repeatedly on the same inputs.
std::vector<Tensor> RunRepeatedly(const std::string& op, AttrMap attrs,
                                  const std::vector<Tensor>& inputs, int threads, int runs = 2) {
  Device* device = DeviceWithThreads(threads);
  auto kernel = CreateTestKernelOn(device, op, attrs, static_cast<int>(inputs.size()));
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  std::vector<Tensor> results;
  if (!kernel.ok()) return results;
  for (int i = 0; i < runs; ++i) {
    auto out = ComputeTestKernel(kernel->get(), device, inputs);
    EXPECT_TRUE(out.ok()) << op << ": " << out.status();
    if (!out.ok()) return results;
    results.push_back((*out)[0]);
  }
  return results;
}

struct RandomCase {
  std::string op;
  AttrMap attrs;
  std::vector<Tensor> inputs;
};

// Every random op with a large output, not a multiple of any unit size.
std::vector<RandomCase> AllRandomCases() {
  Tensor shape = Tensor::FromVector<int32_t>({1001, 97});
  Tensor logits = Tensor::FromVector<float>({0, 1, 2, -1, 0.5, 3}, TensorShape({2, 3}));
  Tensor rows = Tensor::FromVector<float>(std::vector<float>(3 * 5000, 0), TensorShape({5000, 3}));
  std::iota(rows.data<float>(), rows.data<float>() + rows.NumElements(), 0.f);
  return {
      {"RandomUniform", {{"dtype", DT_FLOAT}, {"T", DT_INT32}}, {shape}},
      {"RandomUniform", {{"dtype", DT_DOUBLE}, {"T", DT_INT32}}, {shape}},
      {"RandomStandardNormal", {{"dtype", DT_FLOAT}, {"T", DT_INT32}}, {shape}},
      {"RandomStandardNormal", {{"dtype", DT_DOUBLE}, {"T", DT_INT32}}, {shape}},
      {"TruncatedNormal", {{"dtype", DT_FLOAT}, {"T", DT_INT32}}, {shape}},
      {"TruncatedNormal", {{"dtype", DT_DOUBLE}, {"T", DT_INT32}}, {shape}},
      {"RandomUniformInt",
       {{"Tout", DT_INT32}, {"T", DT_INT32}},
       {shape, Tensor::Scalar<int32_t>(-5), Tensor::Scalar<int32_t>(1000)}},
      {"RandomUniformInt",
       {{"Tout", DT_INT64}, {"T", DT_INT32}},
       {shape, Tensor::Scalar<int64_t>(-5), Tensor::Scalar<int64_t>(int64_t{1} << 50)}},
      {"Multinomial", {{"T", DT_FLOAT}}, {logits, Tensor::Scalar<int32_t>(50001)}},
      {"RandomShuffle", {{"T", DT_FLOAT}}, {rows}},
  };
}

// Fixed seeds: the same numbers on every kernel instance and any thread
// count, continuing across Computes.
TEST(RandomOpsTest, FixedSeedsAreDeterministicAcrossThreadCounts) {
  for (RandomCase& c : AllRandomCases()) {
    c.attrs["seed"] = int64_t{87654321};
    c.attrs["seed2"] = int64_t{12};
    std::vector<Tensor> one = RunRepeatedly(c.op, c.attrs, c.inputs, 1);
    std::vector<Tensor> two = RunRepeatedly(c.op, c.attrs, c.inputs, 2);
    std::vector<Tensor> five = RunRepeatedly(c.op, c.attrs, c.inputs, 5);
    ASSERT_EQ(one.size(), 2u);
    ASSERT_EQ(two.size(), 2u);
    ASSERT_EQ(five.size(), 2u);
    for (int run = 0; run < 2; ++run) {
      EXPECT_TRUE(one[run].ContentEquals(two[run])) << c.op << " run " << run;
      EXPECT_TRUE(one[run].ContentEquals(five[run])) << c.op << " run " << run;
    }
    // The second Compute continues the sequence.
    EXPECT_FALSE(one[0].ContentEquals(one[1])) << c.op;
  }
}

TEST(RandomOpsTest, SeedsSelectTheSequence) {
  for (RandomCase& c : AllRandomCases()) {
    // Unseeded: each kernel instance seeds itself at random.
    std::vector<Tensor> a = RunRepeatedly(c.op, c.attrs, c.inputs, 2, 1);
    std::vector<Tensor> b = RunRepeatedly(c.op, c.attrs, c.inputs, 2, 1);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_FALSE(a[0].ContentEquals(b[0])) << c.op;
    // seed and seed2 both matter.
    c.attrs["seed"] = int64_t{1};
    std::vector<Tensor> seed_only = RunRepeatedly(c.op, c.attrs, c.inputs, 2, 1);
    c.attrs["seed2"] = int64_t{1};
    std::vector<Tensor> both = RunRepeatedly(c.op, c.attrs, c.inputs, 2, 1);
    c.attrs["seed"] = int64_t{0};
    std::vector<Tensor> seed2_only = RunRepeatedly(c.op, c.attrs, c.inputs, 2, 1);
    ASSERT_EQ(seed_only.size() + both.size() + seed2_only.size(), 3u);
    EXPECT_FALSE(seed_only[0].ContentEquals(both[0])) << c.op;
    EXPECT_FALSE(seed2_only[0].ContentEquals(both[0])) << c.op;
    EXPECT_FALSE(seed_only[0].ContentEquals(seed2_only[0])) << c.op;
  }
}

struct Moments {
  double mean = 0, variance = 0, min = 0, max = 0;
};

Moments MomentsOf(const Tensor& t) {
  std::vector<double> v = ToDoubles(t);
  Moments m;
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= v.size();
  return m;
}

Tensor Draw(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  attrs["seed"] = int64_t{2024};
  attrs["seed2"] = int64_t{7};
  auto out = RunKernel(op, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(RandomOpsTest, UniformStatistics) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    Tensor t = Draw("RandomUniform", {{"dtype", dtype}, {"T", DT_INT64}},
                    {Tensor::FromVector<int64_t>({1000, 1000})});
    ASSERT_EQ(t.shape(), TensorShape({1000, 1000}));
    ASSERT_EQ(t.dtype(), dtype);
    Moments m = MomentsOf(t);
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
    EXPECT_LT(m.min, 1e-4);
    EXPECT_GT(m.max, 1 - 1e-4);
    EXPECT_NEAR(m.mean, 0.5, 0.005);
    EXPECT_NEAR(m.variance, 1.0 / 12, 0.01 / 12);
  }
}

TEST(RandomOpsTest, NormalStatistics) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    Tensor t = Draw("RandomStandardNormal", {{"dtype", dtype}, {"T", DT_INT32}},
                    {Tensor::FromVector<int32_t>({1000, 1000})});
    Moments m = MomentsOf(t);
    // 10^6 draws: the standard errors are 0.001 (mean) and 0.0014
    // (variance), so 1% is many of them.
    EXPECT_NEAR(m.mean, 0.0, 0.01);
    EXPECT_NEAR(m.variance, 1.0, 0.01);
    std::vector<double> v = ToDoubles(t);
    const double within_one =
        std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x) < 1; }) /
        static_cast<double>(v.size());
    EXPECT_NEAR(within_one, 0.682689, 0.005);
    EXPECT_GT(m.max, 4);
    EXPECT_LT(m.min, -4);
  }
}

TEST(RandomOpsTest, TruncatedNormalStatistics) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    Tensor t = Draw("TruncatedNormal", {{"dtype", dtype}, {"T", DT_INT32}},
                    {Tensor::FromVector<int32_t>({1000, 1000})});
    Moments m = MomentsOf(t);
    EXPECT_GT(m.min, -2.0);
    EXPECT_LT(m.max, 2.0);
    EXPECT_LT(m.min, -1.99);
    EXPECT_GT(m.max, 1.99);
    EXPECT_NEAR(m.mean, 0.0, 0.01);
    // The variance of a standard normal truncated to (-2, 2):
    // 1 - 4 phi(2) / (Phi(2) - Phi(-2)).
    EXPECT_NEAR(m.variance, 0.773741, 0.0077);
  }
}

template <typename T>
void CheckUniformInt(T low, T high, bool check_frequencies) {
  Tensor t = Draw("RandomUniformInt", {{"Tout", kDTypeOf<T>}, {"T", DT_INT32}},
                  {Tensor::FromVector<int32_t>({200000}), Tensor::Scalar<T>(low),
                   Tensor::Scalar<T>(high)});
  ASSERT_EQ(t.dtype(), kDTypeOf<T>);
  const T* v = t.data<T>();
  const T min = *std::min_element(v, v + t.NumElements());
  const T max = *std::max_element(v, v + t.NumElements());
  EXPECT_GE(min, low);
  EXPECT_LT(max, high);
  if (!check_frequencies) return;
  EXPECT_EQ(min, low);
  EXPECT_EQ(max, high - 1);
  const int64_t range = static_cast<int64_t>(high) - low;
  std::vector<int64_t> counts(range);
  for (int64_t i = 0; i < t.NumElements(); ++i) ++counts[v[i] - low];
  const double expected = static_cast<double>(t.NumElements()) / range;
  double chi_square = 0;
  for (int64_t c : counts) chi_square += (c - expected) * (c - expected) / expected;
  // df = range - 1; the threshold is beyond a one-in-a-million p-value.
  EXPECT_LT(chi_square, range + 10 * std::sqrt(2.0 * range) + 20) << low << " " << high;
}

TEST(RandomOpsTest, UniformIntBoundsAndFrequencies) {
  CheckUniformInt<int32_t>(-5, 5, true);
  CheckUniformInt<int32_t>(7, 8, true);
  CheckUniformInt<int64_t>(-1000000000000, -999999999990, true);
  CheckUniformInt<int32_t>(0, 1000, true);
  CheckUniformInt<int32_t>(std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max(), false);
  CheckUniformInt<int64_t>(std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max(), false);
  CheckUniformInt<int64_t>(-3, int64_t{1} << 62, false);
}

TEST(RandomOpsTest, MultinomialFrequenciesFollowSoftmax) {
  const float inf = std::numeric_limits<float>::infinity();
  // Row 1 has a class that can never be drawn.
  std::vector<float> logits = {0.0f, 1.0f, 2.0f, -1.0f, 3.0f, -inf, 1.5f, 0.5f};
  for (DType out_type : {DT_INT32, DT_INT64}) {
    Tensor samples = Draw("Multinomial", {{"T", DT_FLOAT}, {"output_dtype", out_type}},
                          {Tensor::FromVector(logits, TensorShape({2, 4})),
                           Tensor::Scalar<int32_t>(100000)});
    ASSERT_EQ(samples.shape(), TensorShape({2, 100000}));
    ASSERT_EQ(samples.dtype(), out_type);
    std::vector<double> drawn = ToDoubles(samples);
    for (int row = 0; row < 2; ++row) {
      std::vector<double> p(4);
      double total = 0;
      for (int j = 0; j < 4; ++j) total += p[j] = std::exp(double{logits[row * 4 + j]});
      std::vector<int64_t> counts(4);
      for (int s = 0; s < 100000; ++s) {
        const double j = drawn[row * 100000 + s];
        ASSERT_TRUE(j >= 0 && j < 4) << j;
        ++counts[static_cast<int>(j)];
      }
      double chi_square = 0;
      for (int j = 0; j < 4; ++j) {
        const double expected = 100000 * p[j] / total;
        if (expected == 0) {
          EXPECT_EQ(counts[j], 0) << "class " << j << " has probability 0";
        } else {
          chi_square += (counts[j] - expected) * (counts[j] - expected) / expected;
        }
      }
      // At most 3 degrees of freedom: p < 1e-6 beyond ~30.
      EXPECT_LT(chi_square, 30) << "row " << row;
    }
  }
}

TEST(RandomOpsTest, ShuffleIsAPermutationOfRows) {
  const int64_t rows = 1000;
  std::vector<int32_t> values(rows * 3);
  for (int64_t i = 0; i < rows * 3; ++i) values[i] = static_cast<int32_t>(i);
  Tensor x = Tensor::FromVector(values, TensorShape({rows, 3}));
  Tensor y = Draw("RandomShuffle", {{"T", DT_INT32}}, {x});
  ASSERT_EQ(y.shape(), x.shape());
  std::vector<int32_t> firsts;
  int moved = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int32_t* row = y.data<int32_t>() + i * 3;
    // Rows move whole.
    EXPECT_EQ(row[0] % 3, 0);
    EXPECT_EQ(row[1], row[0] + 1);
    EXPECT_EQ(row[2], row[0] + 2);
    firsts.push_back(row[0] / 3);
    moved += row[0] / 3 != i;
  }
  std::sort(firsts.begin(), firsts.end());
  for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(firsts[i], i);
  EXPECT_GT(moved, rows - 20);  // about one row in `rows` stays put

  // Any dtype, strings included.
  Tensor words(DT_STRING, TensorShape({4}));
  const char* names[] = {"a", "bb", "ccc", "dddd"};
  for (int i = 0; i < 4; ++i) words.data<std::string>()[i] = names[i];
  Tensor shuffled = Draw("RandomShuffle", {{"T", DT_STRING}}, {words});
  std::vector<std::string> got(shuffled.data<std::string>(), shuffled.data<std::string>() + 4);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "bb", "ccc", "dddd"}));

  // Nothing to shuffle: scalars, one row, no rows.
  for (const Tensor& same : {Tensor::Scalar<float>(3), Tensor(DT_FLOAT, TensorShape({1, 5})),
                             Tensor(DT_FLOAT, TensorShape({0, 2}))}) {
    Tensor out = Draw("RandomShuffle", {{"T", DT_FLOAT}}, {same});
    EXPECT_EQ(out.shape(), same.shape());
  }
}

TEST(RandomOpsTest, EmptyShapes) {
  Tensor t = Draw("RandomStandardNormal", {{"dtype", DT_FLOAT}, {"T", DT_INT32}},
                  {Tensor::FromVector<int32_t>({3, 0})});
  EXPECT_EQ(t.shape(), TensorShape({3, 0}));
  t = Draw("RandomUniform", {{"dtype", DT_DOUBLE}, {"T", DT_INT32}},
           {Tensor::FromVector<int32_t>({})});
  EXPECT_EQ(t.shape(), TensorShape());  // a scalar
  // An empty output needs no valid range.
  t = Draw("RandomUniformInt", {{"Tout", DT_INT32}, {"T", DT_INT32}},
           {Tensor::FromVector<int32_t>({0}), Tensor::Scalar<int32_t>(5),
            Tensor::Scalar<int32_t>(5)});
  EXPECT_EQ(t.shape(), TensorShape({0}));
  t = Draw("Multinomial", {{"T", DT_DOUBLE}},
           {Tensor(DT_DOUBLE, TensorShape({0, 3})), Tensor::Scalar<int32_t>(4)});
  EXPECT_EQ(t.shape(), TensorShape({0, 4}));
}

TEST(RandomOpsTest, BadInputs) {
  AttrMap uniform = {{"dtype", DT_FLOAT}, {"T", DT_INT32}};
  auto out = RunKernel("RandomUniform", uniform,
                       {Tensor::FromVector<int32_t>({2, 3}, TensorShape({1, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "RandomUniform")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "[1,2]")) << out.status();
  out = RunKernel("TruncatedNormal", uniform, {Tensor::Scalar<int32_t>(3)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "vector")) << out.status();
  out = RunKernel("RandomStandardNormal", uniform, {Tensor::FromVector<int32_t>({2, -1})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "negative")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "[2,-1]")) << out.status();

  AttrMap ints = {{"Tout", DT_INT64}, {"T", DT_INT32}};
  for (auto [low, high] : {std::pair<int64_t, int64_t>{5, 5}, {6, 5}}) {
    out = RunKernel("RandomUniformInt", ints,
                    {Tensor::FromVector<int32_t>({4}), Tensor::Scalar<int64_t>(low),
                     Tensor::Scalar<int64_t>(high)});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_TRUE(Contains(out.status(), "minval < maxval")) << out.status();
  }
  out = RunKernel("RandomUniformInt", ints,
                  {Tensor::FromVector<int32_t>({4}), Tensor::FromVector<int64_t>({0}),
                   Tensor::Scalar<int64_t>(3)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "scalar")) << out.status();

  AttrMap multinomial = {{"T", DT_FLOAT}};
  out = RunKernel("Multinomial", multinomial,
                  {Tensor::FromVector<float>({1, 2}), Tensor::Scalar<int32_t>(3)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "matrix")) << out.status();
  out = RunKernel("Multinomial", multinomial,
                  {Tensor::FromVector<float>({1, 2}, TensorShape({1, 2})),
                   Tensor::Scalar<int32_t>(-1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "non-negative")) << out.status();
  const float inf = std::numeric_limits<float>::infinity();
  out = RunKernel("Multinomial", multinomial,
                  {Tensor::FromVector<float>({1, 2, -inf, std::nanf("")}, TensorShape({2, 2})),
                   Tensor::Scalar<int32_t>(3)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "row 1")) << out.status();
  out = RunKernel("Multinomial", multinomial,
                  {Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor::Scalar<int32_t>(3)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "classes")) << out.status();
}

}  // namespace
}  // namespace weir
