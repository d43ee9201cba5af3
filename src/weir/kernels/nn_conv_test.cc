// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter against direct loops
// in double written here (with their own padding arithmetic), and the
// backprops against central differences of the forward kernel.
//
// Tolerances: |got - want| <= tol * (sum of |terms| + 1), tol 1e-5 for
// float (oneDNN, FMA order differs from the loops), 1e-12 for double and
// 1e-2 for bfloat16 (float accumulation, then one rounding to an 8-bit
// significand: relative 2^-8). Inputs are rounded to the dtype before the
// loops see them, so the reference is exact for what the kernel reads.
// Finite differences in double are exact for these linear maps up to
// rounding: tol 1e-7 with step 1e-3.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

struct ConvCase {
  int64_t batch, rows, cols, in_depth;
  int64_t filter_rows, filter_cols, out_depth;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  std::string padding = "SAME";
  std::vector<int64_t> pads = {0, 0, 0, 0};  // top, bottom, left, right for EXPLICIT

  TensorShape input() const { return TensorShape({batch, rows, cols, in_depth}); }
  TensorShape filter() const {
    return TensorShape({filter_rows, filter_cols, in_depth, out_depth});
  }
  AttrMap Attrs(DType dtype) const {
    AttrMap attrs = {{"T", dtype},
                     {"strides", std::vector<int64_t>{1, stride_rows, stride_cols, 1}},
                     {"dilations", std::vector<int64_t>{1, dilation_rows, dilation_cols, 1}},
                     {"padding", padding}};
    if (padding == "EXPLICIT") {
      attrs["explicit_paddings"] =
          std::vector<int64_t>{0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0};
    }
    return attrs;
  }
  std::string Name() const {
    return StrCat("input ", input(), " filter ", filter(), " strides ", stride_rows, "x",
                  stride_cols, " dilations ", dilation_rows, "x", dilation_cols, " ", padding);
  }
};

// Output size and leading padding of one dim, by TensorFlow's documented
// rules.
struct RefDim {
  int64_t out, pad;
};
RefDim Reference(const ConvCase& c, int64_t in, int64_t k, int64_t s, int64_t d, int64_t before,
                 int64_t after) {
  const int64_t effective = (k - 1) * d + 1;
  if (c.padding == "VALID") return {(in - effective) / s + 1, 0};
  if (c.padding == "EXPLICIT") return {(in + before + after - effective) / s + 1, before};
  const int64_t out = (in + s - 1) / s;
  return {out, std::max<int64_t>(0, (out - 1) * s + effective - in) / 2};
}

// The direct convolution: each output element, its sum of |terms|, and the
// index maps the backprops reuse.
struct Reference2D {
  ConvCase c;
  RefDim r, q;

  explicit Reference2D(const ConvCase& cc)
      : c(cc),
        r(Reference(cc, cc.rows, cc.filter_rows, cc.stride_rows, cc.dilation_rows, cc.pads[0],
                    cc.pads[1])),
        q(Reference(cc, cc.cols, cc.filter_cols, cc.stride_cols, cc.dilation_cols, cc.pads[2],
                    cc.pads[3])) {}

  TensorShape output() const { return TensorShape({c.batch, r.out, q.out, c.out_depth}); }

  // fn(input index, filter index, output index) for every term.
  template <typename Fn>
  void ForEachTerm(const Fn& fn) const {
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t oh = 0; oh < r.out; ++oh)
        for (int64_t ow = 0; ow < q.out; ++ow)
          for (int64_t kh = 0; kh < c.filter_rows; ++kh)
            for (int64_t kw = 0; kw < c.filter_cols; ++kw) {
              const int64_t h = oh * c.stride_rows - r.pad + kh * c.dilation_rows;
              const int64_t w = ow * c.stride_cols - q.pad + kw * c.dilation_cols;
              if (h < 0 || h >= c.rows || w < 0 || w >= c.cols) continue;
              for (int64_t i = 0; i < c.in_depth; ++i)
                for (int64_t o = 0; o < c.out_depth; ++o) {
                  fn(((n * c.rows + h) * c.cols + w) * c.in_depth + i,
                     ((kh * c.filter_cols + kw) * c.in_depth + i) * c.out_depth + o,
                     ((n * r.out + oh) * q.out + ow) * c.out_depth + o);
                }
            }
  }

  void Forward(const std::vector<double>& x, const std::vector<double>& f, std::vector<double>* out,
               std::vector<double>* scale) const {
    out->assign(output().num_elements(), 0);
    scale->assign(out->size(), 0);
    ForEachTerm([&](int64_t xi, int64_t fi, int64_t oi) {
      (*out)[oi] += x[xi] * f[fi];
      (*scale)[oi] += std::abs(x[xi] * f[fi]);
    });
  }
  void BackwardInput(const std::vector<double>& f, const std::vector<double>& g,
                     std::vector<double>* dx, std::vector<double>* scale) const {
    dx->assign(c.input().num_elements(), 0);
    scale->assign(dx->size(), 0);
    ForEachTerm([&](int64_t xi, int64_t fi, int64_t oi) {
      (*dx)[xi] += g[oi] * f[fi];
      (*scale)[xi] += std::abs(g[oi] * f[fi]);
    });
  }
  void BackwardFilter(const std::vector<double>& x, const std::vector<double>& g,
                      std::vector<double>* df, std::vector<double>* scale) const {
    df->assign(c.filter().num_elements(), 0);
    scale->assign(df->size(), 0);
    ForEachTerm([&](int64_t xi, int64_t fi, int64_t oi) {
      (*df)[fi] += g[oi] * x[xi];
      (*scale)[fi] += std::abs(g[oi] * x[xi]);
    });
  }
};

Tensor Sizes(const TensorShape& shape) {
  std::vector<int32_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  return Int32Vector(dims);
}

// All three passes of `c` in `dtype` against the direct loops.
void CheckAgainstLoops(const ConvCase& c, DType dtype) {
  SCOPED_TRACE(StrCat(c.Name(), " ", dtype));
  const double tolerance = dtype == DT_FLOAT ? 1e-5 : dtype == DT_BFLOAT16 ? 1e-2 : 1e-12;
  const Reference2D ref(c);
  const std::vector<double> x = RoundTo(dtype, RandomValues(c.input().num_elements(), 1));
  const std::vector<double> f = RoundTo(dtype, RandomValues(c.filter().num_elements(), 2));
  const std::vector<double> g = RoundTo(dtype, RandomValues(ref.output().num_elements(), 3));
  std::vector<double> want, scale;

  auto out = RunKernel("Conv2D", c.Attrs(dtype),
                       {MakeTensor(dtype, c.input(), x), MakeTensor(dtype, c.filter(), f)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), ref.output());
  ref.Forward(x, f, &want, &scale);
  ExpectAllNear((*out)[0], want, tolerance, "Conv2D", scale);

  out = RunKernel(
      "Conv2DBackpropInput", c.Attrs(dtype),
      {Sizes(c.input()), MakeTensor(dtype, c.filter(), f), MakeTensor(dtype, ref.output(), g)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), c.input());
  ref.BackwardInput(f, g, &want, &scale);
  ExpectAllNear((*out)[0], want, tolerance, "Conv2DBackpropInput", scale);

  out = RunKernel(
      "Conv2DBackpropFilter", c.Attrs(dtype),
      {MakeTensor(dtype, c.input(), x), Sizes(c.filter()), MakeTensor(dtype, ref.output(), g)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), c.filter());
  ref.BackwardFilter(x, g, &want, &scale);
  ExpectAllNear((*out)[0], want, tolerance, "Conv2DBackpropFilter", scale);
}

// Odd sizes, every padding mode, strides 1 and 2, dilations 1 and 2,
// batch 1 and 3, channels 1 and 5.
std::vector<ConvCase> SmallCases() {
  std::vector<ConvCase> cases;
  for (const char* padding : {"SAME", "VALID", "EXPLICIT"}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t dilation : {1, 2}) {
        for (int64_t batch : {1, 3}) {
          for (auto [in, out] : {std::pair<int64_t, int64_t>{1, 5}, {5, 1}}) {
            ConvCase c{batch, 7, 6, in, 3, 2, out};
            c.stride_rows = c.stride_cols = stride;
            c.dilation_rows = c.dilation_cols = dilation;
            c.padding = padding;
            if (c.padding == "EXPLICIT") c.pads = {1, 2, 0, 3};
            cases.push_back(c);
          }
        }
      }
    }
  }
  // Different strides and dilations per dim.
  ConvCase mixed{2, 9, 8, 3, 3, 3, 4};
  mixed.stride_rows = 2, mixed.dilation_cols = 2;
  cases.push_back(mixed);
  mixed.padding = "VALID";
  cases.push_back(mixed);
  return cases;
}

TEST(ConvTest, FloatMatchesDirectLoops) {
  for (const ConvCase& c : SmallCases()) CheckAgainstLoops(c, DT_FLOAT);
}

TEST(ConvTest, DoubleMatchesDirectLoops) {
  for (const ConvCase& c : SmallCases()) CheckAgainstLoops(c, DT_DOUBLE);
}

TEST(ConvTest, BFloat16MatchesDirectLoops) {
  for (const ConvCase& c : SmallCases()) CheckAgainstLoops(c, DT_BFLOAT16);
}

// Batches large enough that the float kernels split them over the pool
// (uneven slices included) and the double ones use several patch blocks.
TEST(ConvTest, LargerShapesSplitAcrossThreads) {
  const ConvCase cases[] = {
      {8, 28, 28, 4, 5, 5, 16}, {7, 14, 14, 32, 5, 5, 64}, {3, 17, 15, 16, 3, 3, 24}};
  for (const ConvCase& c : cases) {
    CheckAgainstLoops(c, DT_FLOAT);
    CheckAgainstLoops(c, DT_DOUBLE);
    CheckAgainstLoops(c, DT_BFLOAT16);
  }
  ConvCase strided{5, 20, 20, 8, 3, 3, 8};
  strided.stride_rows = strided.stride_cols = 2;
  CheckAgainstLoops(strided, DT_FLOAT);
}

// The same in NCHW (the kernels transpose the images around the NHWC
// computation).
std::vector<double> ToNchw(const std::vector<double>& v, const TensorShape& nhwc) {
  const int64_t n = nhwc.dim_size(0), h = nhwc.dim_size(1), w = nhwc.dim_size(2),
                c = nhwc.dim_size(3);
  std::vector<double> out(v.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k)
          out[((a * c + k) * h + y) * w + x] = v[((a * h + y) * w + x) * c + k];
  return out;
}

TensorShape NchwShape(const TensorShape& s) {
  return TensorShape({s.dim_size(0), s.dim_size(3), s.dim_size(1), s.dim_size(2)});
}

void CheckNchwAgainstLoops(const ConvCase& c, DType dtype) {
  SCOPED_TRACE(StrCat(c.Name(), " NCHW ", dtype));
  const double tolerance = dtype == DT_FLOAT ? 1e-5 : dtype == DT_BFLOAT16 ? 1e-2 : 1e-12;
  const Reference2D ref(c);
  const std::vector<double> x = RoundTo(dtype, RandomValues(c.input().num_elements(), 4));
  const std::vector<double> f = RoundTo(dtype, RandomValues(c.filter().num_elements(), 5));
  const std::vector<double> g = RoundTo(dtype, RandomValues(ref.output().num_elements(), 6));
  AttrMap attrs = c.Attrs(dtype);
  attrs["data_format"] = std::string("NCHW");
  auto spatial = [](int64_t r, int64_t cc) { return std::vector<int64_t>{1, 1, r, cc}; };
  attrs["strides"] = spatial(c.stride_rows, c.stride_cols);
  attrs["dilations"] = spatial(c.dilation_rows, c.dilation_cols);
  if (c.padding == "EXPLICIT") {
    attrs["explicit_paddings"] =
        std::vector<int64_t>{0, 0, 0, 0, c.pads[0], c.pads[1], c.pads[2], c.pads[3]};
  }
  const Tensor x_nchw = MakeTensor(dtype, NchwShape(c.input()), ToNchw(x, c.input()));
  const Tensor g_nchw = MakeTensor(dtype, NchwShape(ref.output()), ToNchw(g, ref.output()));
  std::vector<double> want, scale;

  auto out = RunKernel("Conv2D", attrs, {x_nchw, MakeTensor(dtype, c.filter(), f)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), NchwShape(ref.output()));
  ref.Forward(x, f, &want, &scale);
  ExpectAllNear((*out)[0], ToNchw(want, ref.output()), tolerance, "Conv2D",
                ToNchw(scale, ref.output()));

  out = RunKernel("Conv2DBackpropInput", attrs,
                  {Sizes(NchwShape(c.input())), MakeTensor(dtype, c.filter(), f), g_nchw});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), NchwShape(c.input()));
  ref.BackwardInput(f, g, &want, &scale);
  ExpectAllNear((*out)[0], ToNchw(want, c.input()), tolerance, "Conv2DBackpropInput",
                ToNchw(scale, c.input()));

  out = RunKernel("Conv2DBackpropFilter", attrs, {x_nchw, Sizes(c.filter()), g_nchw});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), c.filter());
  ref.BackwardFilter(x, g, &want, &scale);
  ExpectAllNear((*out)[0], want, tolerance, "Conv2DBackpropFilter", scale);
}

TEST(ConvTest, NchwMatchesDirectLoops) {
  std::vector<ConvCase> cases = SmallCases();
  cases.push_back({7, 14, 14, 32, 5, 5, 64});  // sliced over the pool
  cases.push_back({3, 17, 15, 16, 3, 3, 24});
  for (const ConvCase& c : cases) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16}) CheckNchwAgainstLoops(c, dtype);
  }
}

// _FusedConv2D: the direct loops, plus the bias, then Relu if asked.
void CheckFusedAgainstLoops(const ConvCase& c, DType dtype, bool relu) {
  SCOPED_TRACE(StrCat(c.Name(), " ", dtype, relu ? " BiasAdd+Relu" : " BiasAdd"));
  const double tolerance = dtype == DT_FLOAT ? 1e-5 : dtype == DT_BFLOAT16 ? 1e-2 : 1e-12;
  const Reference2D ref(c);
  const std::vector<double> x = RoundTo(dtype, RandomValues(c.input().num_elements(), 7));
  const std::vector<double> f = RoundTo(dtype, RandomValues(c.filter().num_elements(), 8));
  const std::vector<double> bias = RoundTo(dtype, RandomValues(c.out_depth, 9));
  AttrMap attrs = c.Attrs(dtype);
  attrs["num_args"] = int64_t{1};
  attrs["fused_ops"] =
      relu ? std::vector<std::string>{"BiasAdd", "Relu"} : std::vector<std::string>{"BiasAdd"};
  auto out = RunKernel("_FusedConv2D", attrs,
                       {MakeTensor(dtype, c.input(), x), MakeTensor(dtype, c.filter(), f),
                        MakeTensor(dtype, TensorShape({c.out_depth}), bias)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), ref.output());
  std::vector<double> want, scale;
  ref.Forward(x, f, &want, &scale);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] += bias[i % c.out_depth];
    scale[i] += std::abs(bias[i % c.out_depth]);
    if (relu) want[i] = std::max(want[i], 0.0);
  }
  ExpectAllNear((*out)[0], want, tolerance, "_FusedConv2D", scale);
}

TEST(ConvTest, FusedConvBiasReluMatchesDirectLoops) {
  std::vector<ConvCase> cases = SmallCases();
  cases.push_back({8, 28, 28, 1, 5, 5, 32});  // split over the pool
  cases.push_back({7, 14, 14, 32, 5, 5, 64});
  for (const ConvCase& c : cases) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16}) {
      CheckFusedAgainstLoops(c, dtype, /*relu=*/true);
      CheckFusedAgainstLoops(c, dtype, /*relu=*/false);
    }
  }
}

// The shapes the float forward pass computes by Winograd's F(2x2, 5x5)
// (5x5 windows, stride 1, 16+ channels in and out; conv_winograd.h): every
// padding mode, outputs of odd size (partial 2x2 tiles) and as small as
// one element, depths that are not a multiple of the vector width, and
// enough tiles for several blocks, some partial, over several threads.
// Same tolerance as the direct convolution: the transforms' rounding stays
// within 1e-5 of the sum of |terms|.
// Each case's batch is raised to give the 64 tiles the path needs.
std::vector<ConvCase> WinogradCases() {
  std::vector<ConvCase> cases;
  for (const char* padding : {"SAME", "VALID", "EXPLICIT"}) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{7, 6}, {5, 5}, {6, 9}}) {
      ConvCase c{1, rows, cols, 16, 5, 5, 17};
      c.padding = padding;
      if (c.padding == "EXPLICIT") c.pads = {1, 3, 0, 2};
      cases.push_back(c);
    }
  }
  cases.push_back({1, 1, 1, 16, 5, 5, 16});     // SAME: one output, the rest padding
  cases.push_back({3, 13, 11, 20, 5, 5, 33});   // odd outputs, depths past a vector
  cases.push_back({9, 14, 14, 32, 5, 5, 64});   // the convnet's layer: many blocks
  cases.push_back({5, 28, 28, 16, 5, 5, 16});   // many tiles per image
  for (ConvCase& c : cases) {
    const Reference2D ref(c);
    const int64_t tiles = c.batch * ((ref.r.out + 1) / 2) * ((ref.q.out + 1) / 2);
    if (tiles < 64) c.batch = (64 * c.batch + tiles - 1) / tiles;
  }
  return cases;
}

TEST(ConvTest, WinogradShapesMatchDirectLoops) {
  for (const ConvCase& c : WinogradCases()) {
    CheckAgainstLoops(c, DT_FLOAT);
    CheckFusedAgainstLoops(c, DT_FLOAT, /*relu=*/true);
    CheckFusedAgainstLoops(c, DT_FLOAT, /*relu=*/false);
  }
}

// The same shapes with large values of one sign, so that no cancellation
// hides the transforms' error, against a relative tolerance on the result:
// F(2x2, 5x5)'s transforms multiply by at most 5 and 4/6, so the error is a
// few float ulps of the largest partial sum.
TEST(ConvTest, WinogradErrorIsSmallRelativeToTheResult) {
  for (ConvCase c : {ConvCase{2, 14, 14, 32, 5, 5, 64}, ConvCase{1, 9, 7, 16, 5, 5, 16}}) {
    SCOPED_TRACE(c.Name());
    const Reference2D ref(c);
    std::vector<double> x = RoundTo(DT_FLOAT, RandomValues(c.input().num_elements(), 11));
    std::vector<double> f = RoundTo(DT_FLOAT, RandomValues(c.filter().num_elements(), 12));
    for (double& v : x) v = std::abs(v) * 100 + 1;
    for (double& v : f) v = std::abs(v) + 0.5;
    auto out = RunKernel("Conv2D", c.Attrs(DT_FLOAT),
                         {MakeTensor(DT_FLOAT, c.input(), x), MakeTensor(DT_FLOAT, c.filter(), f)});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<double> want, scale;
    ref.Forward(x, f, &want, &scale);
    const float* got = (*out)[0].data<float>();
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 2e-6 * want[i]) << "at " << i;
    }
  }
}

TEST(ConvTest, FusedConvRejectsBadBiasAndUnknownFusions) {
  const ConvCase c{2, 5, 5, 3, 3, 3, 4};
  AttrMap attrs = c.Attrs(DT_FLOAT);
  attrs["num_args"] = int64_t{1};
  attrs["fused_ops"] = std::vector<std::string>{"BiasAdd", "Relu"};
  const Tensor x = MakeTensor(DT_FLOAT, c.input(), RandomValues(c.input().num_elements(), 1));
  const Tensor f = MakeTensor(DT_FLOAT, c.filter(), RandomValues(c.filter().num_elements(), 2));
  auto out = RunKernel("_FusedConv2D", attrs,
                       {x, f, MakeTensor(DT_FLOAT, TensorShape({5}), RandomValues(5, 3))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
  EXPECT_NE(out.status().message().find("bias [5] must be [4]"), std::string::npos) << out.status();
  attrs["fused_ops"] = std::vector<std::string>{"BiasAdd", "Elu"};
  out = RunKernel("_FusedConv2D", attrs,
                  {x, f, MakeTensor(DT_FLOAT, TensorShape({4}), RandomValues(4, 3))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kUnimplemented);
  EXPECT_NE(out.status().message().find("[BiasAdd, Elu]"), std::string::npos) << out.status();
}

// The backprops are the gradients of sum(Conv2D(x, f) * g).
void CheckFiniteDifferences(const ConvCase& c) {
  SCOPED_TRACE(c.Name());
  const Reference2D ref(c);
  const std::vector<double> x = RandomValues(c.input().num_elements(), 4);
  const std::vector<double> f = RandomValues(c.filter().num_elements(), 5);
  const std::vector<double> g = RandomValues(ref.output().num_elements(), 6);
  auto loss = [&](const std::vector<double>& xv, const std::vector<double>& fv) {
    auto out =
        RunKernel("Conv2D", c.Attrs(DT_DOUBLE),
                  {MakeTensor(DT_DOUBLE, c.input(), xv), MakeTensor(DT_DOUBLE, c.filter(), fv)});
    CHECK(out.ok()) << out.status();
    return Dot((*out)[0], g);
  };
  const std::vector<double> dx =
      NumericGradient([&](const std::vector<double>& v) { return loss(v, f); }, x, 1e-3);
  const std::vector<double> df =
      NumericGradient([&](const std::vector<double>& v) { return loss(x, v); }, f, 1e-3);
  auto out = RunKernel("Conv2DBackpropInput", c.Attrs(DT_DOUBLE),
                       {Sizes(c.input()), MakeTensor(DT_DOUBLE, c.filter(), f),
                        MakeTensor(DT_DOUBLE, ref.output(), g)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear((*out)[0], dx, 1e-7, "Conv2DBackpropInput vs finite differences");
  out = RunKernel("Conv2DBackpropFilter", c.Attrs(DT_DOUBLE),
                  {MakeTensor(DT_DOUBLE, c.input(), x), Sizes(c.filter()),
                   MakeTensor(DT_DOUBLE, ref.output(), g)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear((*out)[0], df, 1e-7, "Conv2DBackpropFilter vs finite differences");
}

TEST(ConvTest, BackpropsMatchFiniteDifferences) {
  ConvCase same{2, 5, 4, 2, 3, 3, 3};
  same.stride_rows = same.stride_cols = 2;
  CheckFiniteDifferences(same);
  ConvCase valid{1, 6, 5, 3, 2, 2, 2};
  valid.padding = "VALID";
  valid.dilation_rows = valid.dilation_cols = 2;
  CheckFiniteDifferences(valid);
  ConvCase explicit_pads{2, 4, 4, 1, 3, 2, 2};
  explicit_pads.padding = "EXPLICIT";
  explicit_pads.pads = {2, 0, 1, 1};
  CheckFiniteDifferences(explicit_pads);
}

TEST(ConvTest, EmptyAndTinyImages) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16}) {
    CheckAgainstLoops({0, 5, 5, 2, 3, 3, 4}, dtype);  // empty batch
    CheckAgainstLoops({2, 1, 1, 3, 1, 1, 4}, dtype);  // 1x1 images
    CheckAgainstLoops({2, 1, 1, 3, 3, 3, 4}, dtype);  // window larger than the image, SAME
    CheckAgainstLoops({2, 4, 4, 0, 3, 3, 4}, dtype);  // no input channels: zeros
    CheckAgainstLoops({2, 4, 4, 3, 3, 3, 0}, dtype);  // no output channels
  }
}

TEST(ConvTest, BackpropInputTakesRowsAndColsOnly) {
  const ConvCase c{2, 5, 5, 3, 3, 3, 4};
  const Reference2D ref(c);
  auto out = RunKernel("Conv2DBackpropInput", c.Attrs(DT_FLOAT),
                       {Int32Vector({5, 5}), RandomTensor(DT_FLOAT, c.filter(), 1),
                        RandomTensor(DT_FLOAT, ref.output(), 2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), c.input());
}

// One kernel serves several shapes (its primitive cache) from several
// threads at once.
TEST(ConvTest, OneKernelRunsConcurrentlyOnManyShapes) {
  const ConvCase base{1, 24, 24, 16, 3, 3, 32};  // batches of 4 and 5 are sliced
  for (const char* op : {"Conv2D", "Conv2DBackpropFilter"}) {
    const bool forward = std::string(op) == "Conv2D";
    auto kernel = CreateTestKernel(op, base.Attrs(DT_FLOAT), forward ? 2 : 3);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    std::vector<std::thread> threads;
    std::mutex mu;
    std::vector<std::string> failures;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        for (int repeat = 0; repeat < 3; ++repeat) {
          ConvCase c = base;
          c.batch = 1 + (t + repeat) % 5;  // slices of one or two sizes
          const Reference2D ref(c);
          const std::vector<double> x = RandomValues(c.input().num_elements(), t);
          const std::vector<double> f = RandomValues(c.filter().num_elements(), t + 1);
          const std::vector<double> g = RandomValues(ref.output().num_elements(), t + 2);
          std::vector<double> want, scale;
          std::vector<Tensor> inputs;
          if (forward) {
            inputs = {MakeTensor(DT_FLOAT, c.input(), x), MakeTensor(DT_FLOAT, c.filter(), f)};
            ref.Forward(x, f, &want, &scale);
          } else {
            inputs = {MakeTensor(DT_FLOAT, c.input(), x), Sizes(c.filter()),
                      MakeTensor(DT_FLOAT, ref.output(), g)};
            ref.BackwardFilter(x, g, &want, &scale);
          }
          auto out = RunCreatedKernel(kernel->get(), inputs);
          std::lock_guard<std::mutex> lock(mu);
          if (!out.ok()) {
            failures.push_back(out.status().ToString());
            continue;
          }
          const std::vector<double> got = ToDoubles((*out)[0]);
          for (size_t i = 0; i < got.size(); ++i) {
            if (std::abs(got[i] - want[i]) > 1e-5 * (scale[i] + 1)) {
              failures.push_back(StrCat(op, " batch ", c.batch, " element ", i));
              break;
            }
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_TRUE(failures.empty()) << StrJoin(failures, "\n");
  }
}

// The status of running `op` with `attrs`, which must fail with `code`
// and a message containing each of `parts`.
void ExpectError(const std::string& op, const AttrMap& attrs, std::vector<Tensor> inputs, Code code,
                 const std::vector<std::string>& parts) {
  auto out = RunKernel(op, attrs, std::move(inputs));
  ASSERT_FALSE(out.ok()) << op;
  EXPECT_EQ(out.status().code(), code) << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

TEST(ConvTest, BadShapesAreInvalidArguments) {
  const ConvCase c{1, 5, 5, 3, 3, 3, 4};
  const AttrMap attrs = c.Attrs(DT_FLOAT);
  auto input = [](std::initializer_list<int64_t> dims) {
    return RandomTensor(DT_FLOAT, TensorShape(dims), 1);
  };
  ExpectError("Conv2D", attrs, {input({5, 5, 3}), input({3, 3, 3, 4})}, Code::kInvalidArgument,
              {"Conv2D", "[5,5,3]", "[3,3,3,4]", "rank 4"});
  ExpectError("Conv2D", attrs, {input({1, 5, 5, 3}), input({3, 3, 2, 4})}, Code::kInvalidArgument,
              {"Conv2D", "[1,5,5,3]", "[3,3,2,4]", "depth 3"});
  // Depth 6 over filters of 3 is a grouped convolution of 2 groups, whose
  // out_channels must divide by 2.
  ExpectError("Conv2D", attrs, {input({1, 5, 5, 6}), input({3, 3, 3, 5})}, Code::kInvalidArgument,
              {"Conv2D", "[1,5,5,6]", "[3,3,3,5]", "divisible"});
  AttrMap valid = attrs;
  valid["padding"] = std::string("VALID");
  ExpectError("Conv2D", valid, {input({1, 2, 5, 3}), input({3, 3, 3, 4})}, Code::kInvalidArgument,
              {"Conv2D", "[1,2,5,3]", "VALID", "larger"});
  ExpectError("Conv2DBackpropInput", attrs,
              {Int32Vector({1, 5, 5, 3}), input({3, 3, 3, 4}), input({1, 4, 5, 4})},
              Code::kInvalidArgument, {"Conv2DBackpropInput", "[1,4,5,4]", "[1,5,5,4]"});
  ExpectError("Conv2DBackpropInput", attrs,
              {Int32Vector({1, 5, 5}), input({3, 3, 3, 4}), input({1, 5, 5, 4})},
              Code::kInvalidArgument, {"Conv2DBackpropInput", "input_sizes"});
  ExpectError("Conv2DBackpropFilter", attrs,
              {input({1, 5, 5, 3}), Int32Vector({3, 3, 3}), input({1, 5, 5, 4})},
              Code::kInvalidArgument, {"Conv2DBackpropFilter", "filter_sizes"});
  ExpectError("Conv2DBackpropFilter", attrs,
              {input({1, 5, 5, 3}), Int32Vector({3, 3, 3, 4}), input({2, 5, 5, 4})},
              Code::kInvalidArgument, {"Conv2DBackpropFilter", "[2,5,5,4]"});
}

TEST(ConvTest, BadAttrsAreRejected) {
  const ConvCase c{1, 5, 5, 3, 3, 3, 4};
  const std::vector<Tensor> inputs = {RandomTensor(DT_FLOAT, c.input(), 1),
                                      RandomTensor(DT_FLOAT, c.filter(), 2)};
  AttrMap attrs = c.Attrs(DT_FLOAT);
  attrs["strides"] = std::vector<int64_t>{1, 1, 1};
  ExpectError("Conv2D", attrs, inputs, Code::kInvalidArgument, {"Conv2D", "strides [1,1,1]"});
  attrs["strides"] = std::vector<int64_t>{2, 1, 1, 1};
  ExpectError("Conv2D", attrs, inputs, Code::kInvalidArgument,
              {"Conv2D", "strides [2,1,1,1]", "batch"});
  attrs = c.Attrs(DT_FLOAT);
  attrs["dilations"] = std::vector<int64_t>{1, 1, 1, 2};
  ExpectError("Conv2D", attrs, inputs, Code::kInvalidArgument, {"Conv2D", "dilations"});
  attrs = c.Attrs(DT_FLOAT);
  attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0};
  ExpectError("Conv2D", attrs, inputs, Code::kInvalidArgument,
              {"Conv2D", "explicit_paddings", "EXPLICIT"});
  attrs["padding"] = std::string("EXPLICIT");
  attrs["explicit_paddings"] = std::vector<int64_t>{1, 1, 1, 1, 1, 1, 0, 0};
  ExpectError("Conv2D", attrs, inputs, Code::kInvalidArgument,
              {"Conv2D", "explicit_paddings", "batch"});
  // NCHW reads the channels from dim 1: 5 there, not the filter's 3.
  attrs = c.Attrs(DT_FLOAT);
  attrs["data_format"] = std::string("NCHW");
  ExpectError("Conv2D", attrs, inputs, Code::kInvalidArgument, {"Conv2D", "NCHW", "depth"});
}

#if defined(__linux__)
int ThreadsInProcess() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// oneDNN's OpenMP must not start a second pool next to the device's.
TEST(ConvTest, StartsNoThreadsOfItsOwn) {
  CheckAgainstLoops({1, 3, 3, 1, 1, 1, 1}, DT_FLOAT);  // the test device exists now
  const int before = ThreadsInProcess();
  const ConvCase c{8, 16, 16, 16, 3, 3, 16};
  auto out =
      RunKernel("Conv2D", c.Attrs(DT_FLOAT),
                {RandomTensor(DT_FLOAT, c.input(), 1), RandomTensor(DT_FLOAT, c.filter(), 2)});
  ASSERT_TRUE(out.ok()) << out.status();
  out = RunKernel("Conv2DBackpropFilter", c.Attrs(DT_FLOAT),
                  {RandomTensor(DT_FLOAT, c.input(), 1), Sizes(c.filter()), (*out)[0]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ThreadsInProcess(), before);
}
#endif

}  // namespace
}  // namespace weir
