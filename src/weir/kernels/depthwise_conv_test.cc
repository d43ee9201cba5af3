// DepthwiseConv2dNative and its backprops against the dense Conv2D kernels
// (in double, im2col) with the equivalent block-diagonal filter:
// dense[kh, kw, c, c * M + m] = depthwise[kh, kw, c, m], zero elsewhere.
// NCHW against NHWC on transposed data; half, bfloat16 and float against
// the double results; bad inputs as InvalidArgument naming op and shapes.
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

struct DepthwiseCase {
  int64_t batch, rows, cols, channels, filter_rows, filter_cols, multiplier;
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  std::string padding = "SAME";
  std::vector<int64_t> pads = {0, 0, 0, 0};

  TensorShape input() const { return TensorShape({batch, rows, cols, channels}); }
  TensorShape filter() const {
    return TensorShape({filter_rows, filter_cols, channels, multiplier});
  }
  AttrMap Attrs(DType dtype, bool nchw = false) const {
    auto spatial = [&](int64_t r, int64_t c) {
      return nchw ? std::vector<int64_t>{1, 1, r, c} : std::vector<int64_t>{1, r, c, 1};
    };
    AttrMap attrs = {{"T", dtype},
                     {"strides", spatial(stride_rows, stride_cols)},
                     {"dilations", spatial(dilation_rows, dilation_cols)},
                     {"padding", padding},
                     {"data_format", std::string(nchw ? "NCHW" : "NHWC")}};
    if (padding == "EXPLICIT") {
      attrs["explicit_paddings"] =
          nchw ? std::vector<int64_t>{0, 0, 0, 0, pads[0], pads[1], pads[2], pads[3]}
               : std::vector<int64_t>{0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0};
    }
    return attrs;
  }
};

const std::vector<DepthwiseCase>& Cases() {
  static const std::vector<DepthwiseCase> cases = {
      {2, 5, 6, 3, 3, 3, 1},
      {1, 6, 5, 2, 3, 2, 3, 2, 1},
      {1, 7, 7, 2, 3, 3, 2, 1, 2, 2, 1, "VALID"},
      {2, 5, 5, 3, 2, 3, 2, 2, 2, 1, 2, "SAME"},
      {1, 4, 5, 2, 3, 3, 1, 1, 1, 1, 1, "EXPLICIT", {2, 0, 1, 3}},
      {1, 1, 1, 4, 1, 1, 2},
      // Large enough that float's oneDNN gradients cut the batch into
      // slices (summing the filter gradient's partial sums), and odd sizes
      // with stride 2.
      {16, 32, 32, 32, 3, 3, 2},
      {8, 33, 31, 48, 3, 3, 1, 2, 2, 1, 1, "SAME"},
  };
  return cases;
}

Tensor DenseFilter(const DepthwiseCase& c, const std::vector<double>& f) {
  const int64_t depth = c.channels * c.multiplier;
  std::vector<double> dense(c.filter_rows * c.filter_cols * c.channels * depth, 0.0);
  for (int64_t tap = 0; tap < c.filter_rows * c.filter_cols; ++tap) {
    for (int64_t ch = 0; ch < c.channels; ++ch) {
      for (int64_t m = 0; m < c.multiplier; ++m) {
        dense[(tap * c.channels + ch) * depth + ch * c.multiplier + m] =
            f[(tap * c.channels + ch) * c.multiplier + m];
      }
    }
  }
  return MakeTensor(DT_DOUBLE, TensorShape({c.filter_rows, c.filter_cols, c.channels, depth}),
                    dense);
}

// NHWC <-> NCHW on value vectors.
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
Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v;
  for (int i = 0; i < s.rank(); ++i) v.push_back(static_cast<int32_t>(s.dim_size(i)));
  return Int32Vector(v);
}

TEST(DepthwiseConvTest, MatchesDenseConvolutionWithBlockDiagonalFilter) {
  for (const DepthwiseCase& c : Cases()) {
    SCOPED_TRACE(StrCat("input ", c.input(), " filter ", c.filter(), " ", c.padding));
    const std::vector<double> x = RandomValues(c.input().num_elements(), 1);
    const std::vector<double> f = RandomValues(c.filter().num_elements(), 2);
    AttrMap dense_attrs = c.Attrs(DT_DOUBLE);
    dense_attrs.erase("data_format");
    // The three results through the dense kernels; with `abs`, of |x|,
    // |f| and |g|: the sums of |terms| each tolerance scales with.
    struct Reference {
      std::vector<double> y, dx, df;
    };
    TensorShape out_shape;
    const std::vector<double> g0 = {};
    auto reference = [&](bool abs, const std::vector<double>& g) {
      auto a = [&](std::vector<double> v) {
        if (abs) for (double& e : v) e = std::fabs(e);
        return v;
      };
      const Tensor dense = DenseFilter(c, a(f));
      Reference r;
      auto y = RunKernel("Conv2D", dense_attrs, {MakeTensor(DT_DOUBLE, c.input(), a(x)), dense});
      EXPECT_TRUE(y.ok()) << y.status();
      out_shape = (*y)[0].shape();
      r.y = ToDoubles((*y)[0]);
      if (g.empty()) return r;
      auto dx = RunKernel("Conv2DBackpropInput", dense_attrs,
                          {Sizes(c.input()), dense, MakeTensor(DT_DOUBLE, out_shape, a(g))});
      EXPECT_TRUE(dx.ok()) << dx.status();
      r.dx = ToDoubles((*dx)[0]);
      auto df = RunKernel("Conv2DBackpropFilter", dense_attrs,
                          {MakeTensor(DT_DOUBLE, c.input(), a(x)), Sizes(dense.shape()),
                           MakeTensor(DT_DOUBLE, out_shape, a(g))});
      EXPECT_TRUE(df.ok()) << df.status();
      // The block-diagonal entries of the dense filter gradient.
      const std::vector<double> df_dense = ToDoubles((*df)[0]);
      r.df.resize(f.size());
      const int64_t depth = c.channels * c.multiplier;
      for (int64_t tap = 0; tap < c.filter_rows * c.filter_cols; ++tap)
        for (int64_t ch = 0; ch < c.channels; ++ch)
          for (int64_t m = 0; m < c.multiplier; ++m)
            r.df[(tap * c.channels + ch) * c.multiplier + m] =
                df_dense[(tap * c.channels + ch) * depth + ch * c.multiplier + m];
      return r;
    };
    (void)reference(false, g0);  // sets out_shape
    const std::vector<double> g = RandomValues(out_shape.num_elements(), 3);
    const Reference want = reference(false, g), scale = reference(true, g);
    const std::vector<double>& want_y = want.y;

    for (DType dtype : {DT_DOUBLE, DT_FLOAT, DT_HALF, DT_BFLOAT16}) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(StrCat(dtype, nchw ? " NCHW" : " NHWC"));
        // Tolerances relative to the terms: half (2^-11) and bfloat16
        // (2^-8) round inputs and result; float accumulates in float.
        const double tol = dtype == DT_DOUBLE  ? 1e-12
                           : dtype == DT_FLOAT ? 1e-5
                           : dtype == DT_HALF  ? 2e-3
                                               : 2e-2;
        auto image = [&](const std::vector<double>& v, const TensorShape& s) {
          return nchw ? MakeTensor(DT_DOUBLE, NchwShape(s), ToNchw(v, s)) : MakeTensor(DT_DOUBLE, s, v);
        };
        auto cast = [&](const Tensor& t) {
          auto out = RunKernel("Cast", {{"SrcT", DT_DOUBLE}, {"DstT", dtype}}, {t});
          EXPECT_TRUE(out.ok()) << out.status();
          return (*out)[0];
        };
        const AttrMap attrs = c.Attrs(dtype, nchw);
        auto y = RunKernel("DepthwiseConv2dNative", attrs,
                           {cast(image(x, c.input())), cast(MakeTensor(DT_DOUBLE, c.filter(), f))});
        ASSERT_TRUE(y.ok()) << y.status();
        auto in_layout = [&](const std::vector<double>& v, const TensorShape& shape) {
          return nchw ? ToNchw(v, shape) : v;
        };
        ExpectAllNear((*y)[0], in_layout(want_y, out_shape), tol, "output",
                      in_layout(scale.y, out_shape));
        const TensorShape in_sizes = nchw ? NchwShape(c.input()) : c.input();
        auto dx = RunKernel("DepthwiseConv2dNativeBackpropInput", attrs,
                            {Sizes(in_sizes), cast(MakeTensor(DT_DOUBLE, c.filter(), f)),
                             cast(image(g, out_shape))});
        ASSERT_TRUE(dx.ok()) << dx.status();
        ExpectAllNear((*dx)[0], in_layout(want.dx, c.input()), tol, "input gradient",
                      in_layout(scale.dx, c.input()));
        auto df = RunKernel("DepthwiseConv2dNativeBackpropFilter", attrs,
                            {cast(image(x, c.input())), Sizes(c.filter()), cast(image(g, out_shape))});
        ASSERT_TRUE(df.ok()) << df.status();
        ExpectAllNear((*df)[0], want.df, tol, "filter gradient", scale.df);
      }
    }
  }
}

void ExpectInvalid(const std::string& op, const AttrMap& attrs, std::vector<Tensor> inputs,
                   const std::vector<std::string>& parts) {
  auto out = RunKernel(op, attrs, std::move(inputs));
  ASSERT_FALSE(out.ok()) << op;
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

TEST(DepthwiseConvTest, BadInputsAreInvalidArguments) {
  const DepthwiseCase c{1, 5, 5, 3, 3, 3, 2};
  const AttrMap attrs = c.Attrs(DT_FLOAT);
  auto t = [](std::initializer_list<int64_t> dims) {
    return RandomTensor(DT_FLOAT, TensorShape(dims), 1);
  };
  const char* op = "DepthwiseConv2dNative";
  ExpectInvalid(op, attrs, {t({5, 5, 3}), t({3, 3, 3, 2})}, {op, "[5,5,3]", "rank 4"});
  ExpectInvalid(op, attrs, {t({1, 5, 5, 3}), t({3, 3, 2, 2})},
                {op, "[1,5,5,3]", "[3,3,2,2]", "depth 3"});
  AttrMap valid = attrs;
  valid["padding"] = std::string("VALID");
  ExpectInvalid(op, valid, {t({1, 2, 5, 3}), t({3, 3, 3, 2})}, {op, "rows", "VALID"});
  AttrMap strides = attrs;
  strides["strides"] = std::vector<int64_t>{1, 1, 1, 2};
  ExpectInvalid(op, strides, {t({1, 5, 5, 3}), t({3, 3, 3, 2})}, {op, "strides"});
  AttrMap nchw = c.Attrs(DT_FLOAT, true);
  ExpectInvalid(op, nchw, {t({1, 5, 5, 3}), t({3, 3, 3, 2})}, {op, "NCHW", "depth"});
  ExpectInvalid("DepthwiseConv2dNativeBackpropInput", attrs,
                {Int32Vector({1, 5, 5, 3}), t({3, 3, 3, 2}), t({1, 5, 5, 5})},
                {"DepthwiseConv2dNativeBackpropInput", "out_backprop", "[1,5,5,6]"});
  ExpectInvalid("DepthwiseConv2dNativeBackpropInput", attrs,
                {Int32Vector({1, 5, 5}), t({3, 3, 3, 2}), t({1, 5, 5, 6})},
                {"DepthwiseConv2dNativeBackpropInput", "input_sizes"});
  ExpectInvalid("DepthwiseConv2dNativeBackpropFilter", attrs,
                {t({1, 5, 5, 3}), Int32Vector({3, 3, 3, -2}), t({1, 5, 5, 6})},
                {"DepthwiseConv2dNativeBackpropFilter", "filter_sizes"});
}

}  // namespace
}  // namespace weir
