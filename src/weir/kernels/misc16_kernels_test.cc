// Kernels of the special, complex, FFT, stateless random and extra array
// and string families on exact values and hostile inputs (values against
// TensorFlow are in python/tests/test_misc16_ops.py).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

Tensor I64(std::vector<int64_t> values) { return Tensor::FromVector(values); }

// A [1, 1] int32 index tensor.
Tensor Index(int32_t value) {
  Tensor t;
  EXPECT_TRUE(t.CopyFrom(Tensor::FromVector<int32_t>({value}), TensorShape({1, 1})));
  return t;
}

TEST(Misc16KernelsTest, RollReducesHugeShiftsExactly) {
  // 2^62 + (2^62 + 1) = 1 (mod 5), computed without overflow.
  auto out = RunKernel(
      "Roll", {{"T", DT_INT32}, {"Tshift", DT_INT64}, {"Taxis", DT_INT64}},
      {I32({1, 2, 3, 4, 5}), I64({int64_t{1} << 62, (int64_t{1} << 62) + 1}), I64({0, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  // 2^62 = 4 (mod 5), so the total is 4 + 0 = 4.
  ExpectTensor<int32_t>((*out)[0], TensorShape({5}), {2, 3, 4, 5, 1});
  RunError("Roll", {{"T", DT_INT32}, {"Tshift", DT_INT32}, {"Taxis", DT_INT32}},
           {I32({1, 2}), I32({1}), I32({4})}, {"Roll", "axis 4"});
}

TEST(Misc16KernelsTest, HostileSizesAreErrors) {
  RunError("Bitcast", {{"T", DT_FLOAT}, {"type", DT_DOUBLE}},
           {Tensor::FromVector<float>({1, 2, 3})}, {"Bitcast", "last dim must be 2"});
  RunError("DenseBincount", {{"T", DT_FLOAT}, {"Tidx", DT_INT64}},
           {I64({1, 2}), Tensor::Scalar<int64_t>(int64_t{1} << 40), Tensor::FromVector<float>({})},
           {"DenseBincount", "bins"});
  RunError("Bincount", {{"T", DT_INT32}},
           {I32({1, -1}), Tensor::Scalar<int32_t>(3), Tensor::FromVector<int32_t>({})},
           {"Bincount", "negative"});
  RunError("RFFT", {{"Treal", DT_FLOAT}, {"Tcomplex", DT_COMPLEX64}},
           {Tensor::FromVector<float>({1, 2}), I32({1 << 30})}, {"RFFT", "points"});
  RunError("TensorScatterUpdate", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
           {Tensor::FromVector<float>({1, 2, 3}), Index(3), Tensor::FromVector<float>({9})},
           {"TensorScatterUpdate", "[3]"});
  RunError("Substr", {{"T", DT_INT32}},
           {Tensor::FromVector<std::string>({"abc"}), I32({4}), I32({1})}, {"Substr", "pos 4"});
}

TEST(Misc16KernelsTest, KeyCounterAndUniformMatchTensorFlow) {
  // TensorFlow 2.21: StatelessRandomGetKeyCounter(seed=[1, 2]) and
  // StatelessRandomUniformFullIntV2 (uint32) from them.
  auto kc = RunKernel("StatelessRandomGetKeyCounter", {{"Tseed", DT_INT64}}, {I64({1, 2})});
  ASSERT_TRUE(kc.ok()) << kc.status();
  EXPECT_EQ((*kc)[0].data<uint64_t>()[0], 10413732777507651514ull);
  EXPECT_EQ((*kc)[1].data<uint64_t>()[1], 17830669156045600267ull);
  auto bits =
      RunKernel("StatelessRandomUniformFullIntV2", {{"dtype", DT_UINT32}, {"Tshape", DT_INT32}},
                {I32({6}), (*kc)[0], (*kc)[1], Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(bits.ok()) << bits.status();
  ExpectTensor<uint32_t>(
      (*bits)[0], TensorShape({6}),
      {1105988140u, 1738052849u, 3959391294u, 370444179u, 10670227u, 4048756165u});
}

TEST(Misc16KernelsTest, FftOfAnImpulseIsFlat) {
  auto out = RunKernel("FFT", {{"Tcomplex", DT_COMPLEX64}},
                       {Tensor::FromVector<complex64>({{1, 0}, {0, 0}, {0, 0}})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Length 3 goes through Bluestein's algorithm: float rounding only.
  for (int i = 0; i < 3; ++i) {
    EXPECT_LT(std::abs((*out)[0].data<complex64>()[i] - complex64(1, 0)), 1e-6f) << i;
  }
}

}  // namespace
}  // namespace weir
