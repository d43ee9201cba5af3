// MaxPool, AvgPool and their gradients against loops in double written
// here, and the gradients against central differences of the forward
// kernels. Tolerances: 1e-6 relative for float (one rounding per element
// plus a short sum), 1e-13 for double; finite differences 1e-7 (MaxPool
// inputs are distinct enough that a step of 1e-5 never changes a maximum).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

struct PoolCase {
  int64_t batch, rows, cols, depth;
  int64_t window_rows, window_cols, stride_rows, stride_cols;
  std::string padding;

  TensorShape input() const { return TensorShape({batch, rows, cols, depth}); }
  AttrMap Attrs(DType dtype) const {
    return {{"T", dtype},
            {"ksize", std::vector<int64_t>{1, window_rows, window_cols, 1}},
            {"strides", std::vector<int64_t>{1, stride_rows, stride_cols, 1}},
            {"padding", padding}};
  }
  std::string Name() const {
    return StrCat("input ", input(), " window ", window_rows, "x", window_cols, " strides ",
                  stride_rows, "x", stride_cols, " ", padding);
  }
};

// Pooling by definition: each output's window, clipped to the image.
struct PoolReference {
  PoolCase c;
  int64_t out_rows, out_cols, pad_top, pad_left;

  explicit PoolReference(const PoolCase& cc) : c(cc) {
    auto dim = [&](int64_t in, int64_t k, int64_t s, int64_t* out, int64_t* pad) {
      if (c.padding == "VALID") {
        *out = (in - k) / s + 1;
        *pad = 0;
      } else {
        *out = (in + s - 1) / s;
        *pad = std::max<int64_t>(0, (*out - 1) * s + k - in) / 2;
      }
    };
    dim(c.rows, c.window_rows, c.stride_rows, &out_rows, &pad_top);
    dim(c.cols, c.window_cols, c.stride_cols, &out_cols, &pad_left);
  }

  TensorShape output() const { return TensorShape({c.batch, out_rows, out_cols, c.depth}); }

  // fn(output index, input indices of the window in row-major order).
  template <typename Fn>
  void ForEachWindow(const Fn& fn) const {
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t oh = 0; oh < out_rows; ++oh)
        for (int64_t ow = 0; ow < out_cols; ++ow)
          for (int64_t k = 0; k < c.depth; ++k) {
            std::vector<int64_t> window;
            for (int64_t h = oh * c.stride_rows - pad_top;
                 h < oh * c.stride_rows - pad_top + c.window_rows; ++h)
              for (int64_t w = ow * c.stride_cols - pad_left;
                   w < ow * c.stride_cols - pad_left + c.window_cols; ++w)
                if (h >= 0 && h < c.rows && w >= 0 && w < c.cols)
                  window.push_back(((n * c.rows + h) * c.cols + w) * c.depth + k);
            fn(((n * out_rows + oh) * out_cols + ow) * c.depth + k, window);
          }
  }

  std::vector<double> Max(const std::vector<double>& x) const {
    std::vector<double> out(output().num_elements());
    ForEachWindow([&](int64_t o, const std::vector<int64_t>& window) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i : window) m = std::isnan(x[i]) || std::isnan(m) ? NAN : std::max(m, x[i]);
      out[o] = m;
    });
    return out;
  }
  std::vector<double> Average(const std::vector<double>& x) const {
    std::vector<double> out(output().num_elements());
    ForEachWindow([&](int64_t o, const std::vector<int64_t>& window) {
      double sum = 0;
      for (int64_t i : window) sum += x[i];
      out[o] = sum / window.size();
    });
    return out;
  }
  // The gradient goes to the first maximal element of each window.
  std::vector<double> MaxGrad(const std::vector<double>& x, const std::vector<double>& g) const {
    std::vector<double> dx(c.input().num_elements(), 0);
    ForEachWindow([&](int64_t o, const std::vector<int64_t>& window) {
      int64_t best = window[0];
      for (int64_t i : window)
        if (x[i] > x[best]) best = i;
      dx[best] += g[o];
    });
    return dx;
  }
  std::vector<double> AverageGrad(const std::vector<double>& g) const {
    std::vector<double> dx(c.input().num_elements(), 0);
    ForEachWindow([&](int64_t o, const std::vector<int64_t>& window) {
      for (int64_t i : window) dx[i] += g[o] / window.size();
    });
    return dx;
  }
};

std::vector<PoolCase> Cases() {
  std::vector<PoolCase> cases;
  for (const char* padding : {"SAME", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t batch : {1, 3}) {
        for (int64_t depth : {1, 5}) {
          cases.push_back({batch, 7, 6, depth, 3, 2, stride, stride, padding});
          cases.push_back({batch, 5, 5, depth, 2, 2, stride, 1, padding});
        }
      }
    }
    // Windows that do not overlap but leave rows and columns no window
    // covers (MaxPoolGrad's one-pass path must zero them).
    cases.push_back({2, 5, 5, 3, 2, 2, 2, 2, padding});
    cases.push_back({2, 7, 8, 3, 2, 2, 3, 3, padding});
  }
  cases.push_back({2, 28, 28, 32, 2, 2, 2, 2, "SAME"});  // the Fashion-MNIST CNN's pools
  cases.push_back({4, 14, 14, 64, 3, 3, 2, 2, "VALID"});
  cases.push_back({3, 1, 1, 4, 1, 1, 1, 1, "VALID"});  // 1x1 images
  cases.push_back({2, 2, 3, 4, 5, 5, 1, 1, "SAME"});   // window larger than the image
  cases.push_back({0, 4, 4, 3, 2, 2, 2, 2, "SAME"});   // empty batch
  return cases;
}

Tensor Sizes(const TensorShape& shape) {
  std::vector<int32_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  return Int32Vector(dims);
}

void CheckCase(const PoolCase& c, DType dtype) {
  SCOPED_TRACE(StrCat(c.Name(), " ", dtype));
  const double tolerance = dtype == DT_FLOAT ? 1e-6 : 1e-13;
  const PoolReference ref(c);
  const std::vector<double> x = RandomValues(c.input().num_elements(), 1);
  const std::vector<double> g = RandomValues(ref.output().num_elements(), 2);
  const Tensor input = MakeTensor(dtype, c.input(), x);
  auto max = RunKernel("MaxPool", c.Attrs(dtype), {input});
  ASSERT_TRUE(max.ok()) << max.status();
  ASSERT_EQ((*max)[0].shape(), ref.output());
  // Inputs round to float before pooling; the maximum is exact.
  ExpectAllNear((*max)[0], ref.Max(ToDoubles(input)), 0, "MaxPool");
  auto avg = RunKernel("AvgPool", c.Attrs(dtype), {input});
  ASSERT_TRUE(avg.ok()) << avg.status();
  ExpectAllNear((*avg)[0], ref.Average(x), tolerance, "AvgPool");

  const Tensor grad = MakeTensor(dtype, ref.output(), g);
  auto max_grad = RunKernel("MaxPoolGrad", c.Attrs(dtype), {input, (*max)[0], grad});
  ASSERT_TRUE(max_grad.ok()) << max_grad.status();
  ExpectAllNear((*max_grad)[0], ref.MaxGrad(ToDoubles(input), ToDoubles(grad)), tolerance,
                "MaxPoolGrad");
  // The fused ReluGrad keeps the gradient where the input (the Relu's
  // output) is > 0; the inputs include negatives, so some windows' maxima
  // are too.
  AttrMap fused_attrs = c.Attrs(dtype);
  fused_attrs["fused_ops"] = std::vector<std::string>{"ReluGrad"};
  auto fused_grad = RunKernel("_FusedMaxPoolGrad", fused_attrs, {input, (*max)[0], grad});
  ASSERT_TRUE(fused_grad.ok()) << fused_grad.status();
  std::vector<double> masked = ref.MaxGrad(ToDoubles(input), ToDoubles(grad));
  const std::vector<double> rounded = ToDoubles(input);
  for (size_t i = 0; i < masked.size(); ++i) masked[i] = rounded[i] > 0 ? masked[i] : 0;
  ExpectAllNear((*fused_grad)[0], masked, tolerance, "_FusedMaxPoolGrad");
  auto avg_grad = RunKernel("AvgPoolGrad", c.Attrs(dtype), {Sizes(c.input()), grad});
  ASSERT_TRUE(avg_grad.ok()) << avg_grad.status();
  ExpectAllNear((*avg_grad)[0], ref.AverageGrad(g), tolerance, "AvgPoolGrad");
}

TEST(PoolingTest, FloatMatchesLoops) {
  for (const PoolCase& c : Cases()) CheckCase(c, DT_FLOAT);
}

TEST(PoolingTest, DoubleMatchesLoops) {
  for (const PoolCase& c : Cases()) CheckCase(c, DT_DOUBLE);
}

TEST(PoolingTest, GradientsMatchFiniteDifferences) {
  for (const PoolCase& c :
       {PoolCase{2, 5, 4, 3, 3, 2, 2, 1, "SAME"}, PoolCase{1, 6, 6, 2, 2, 3, 2, 2, "VALID"}}) {
    SCOPED_TRACE(c.Name());
    const PoolReference ref(c);
    // A shuffled ramp: distinct values 0.01 apart.
    std::vector<double> x(c.input().num_elements());
    const std::vector<double> order = RandomValues(x.size(), 7);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] =
          0.01 * std::count_if(order.begin(), order.end(), [&](double v) { return v < order[i]; });
    }
    const std::vector<double> g = RandomValues(ref.output().num_elements(), 8);
    const Tensor grad = MakeTensor(DT_DOUBLE, ref.output(), g);
    for (const char* op : {"MaxPool", "AvgPool"}) {
      auto loss = [&](const std::vector<double>& v) {
        auto out = RunKernel(op, c.Attrs(DT_DOUBLE), {MakeTensor(DT_DOUBLE, c.input(), v)});
        CHECK(out.ok()) << out.status();
        return Dot((*out)[0], g);
      };
      const std::vector<double> numeric = NumericGradient(loss, x, 1e-5);
      const Tensor input = MakeTensor(DT_DOUBLE, c.input(), x);
      auto out = std::string(op) == "MaxPool"
                     ? RunKernel("MaxPoolGrad", c.Attrs(DT_DOUBLE),
                                 {input, (*RunKernel(op, c.Attrs(DT_DOUBLE), {input}))[0], grad})
                     : RunKernel("AvgPoolGrad", c.Attrs(DT_DOUBLE), {Sizes(c.input()), grad});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectAllNear((*out)[0], numeric, 1e-7, StrCat(op, " gradient vs finite differences"));
    }
  }
}

TEST(PoolingTest, MaxPoolPropagatesNaNAndInfinity) {
  const PoolCase c{1, 2, 4, 2, 2, 2, 2, 2, "VALID"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Pixels (channel 0, channel 1), row by row; window 0 is the left 2x2,
  // window 1 the right. Window 0: channel 0 has a NaN after larger values,
  // channel 1 only -inf. Window 1: channel 0 starts with a NaN, channel 1
  // has +inf.
  const std::vector<double> x = {5,   -inf, 7, -inf, nan, 1,   9,   2,
                                 nan, -inf, 3, -inf, 2,   inf, nan, 0};
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    const Tensor input = MakeTensor(dtype, c.input(), x);
    auto out = RunKernel("MaxPool", c.Attrs(dtype), {input});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> got = ToDoubles((*out)[0]);
    EXPECT_TRUE(std::isnan(got[0])) << got[0];
    EXPECT_EQ(got[1], -inf);
    EXPECT_TRUE(std::isnan(got[2])) << got[2];
    EXPECT_EQ(got[3], inf);
    // The gradient goes to the first NaN, or the first of equal maxima.
    const Tensor grad = MakeTensor(dtype, TensorShape({1, 1, 2, 2}), {1, 2, 3, 4});
    auto dx = RunKernel("MaxPoolGrad", c.Attrs(dtype), {input, (*out)[0], grad});
    ASSERT_TRUE(dx.ok()) << dx.status();
    EXPECT_EQ(ToDoubles((*dx)[0]),
              (std::vector<double>{0, 2, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 4, 0, 0}));
  }
}

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

TEST(PoolingTest, FusedMaxPoolGradTakesReluGradOnly) {
  const PoolCase c{1, 4, 4, 2, 2, 2, 2, 2, "VALID"};
  AttrMap attrs = c.Attrs(DT_FLOAT);
  attrs["fused_ops"] = std::vector<std::string>{"Relu6Grad"};
  const Tensor input = MakeTensor(DT_FLOAT, c.input(), RandomValues(c.input().num_elements(), 1));
  const Tensor pooled = MakeTensor(DT_FLOAT, TensorShape({1, 2, 2, 2}), RandomValues(8, 2));
  auto out = RunKernel("_FusedMaxPoolGrad", attrs, {input, pooled, pooled});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kUnimplemented);
  EXPECT_NE(out.status().message().find("[Relu6Grad]"), std::string::npos) << out.status();
}

TEST(PoolingTest, BadInputsAndAttrs) {
  const PoolCase c{1, 4, 4, 3, 2, 2, 2, 2, "VALID"};
  const Tensor input = RandomTensor(DT_FLOAT, c.input(), 1);
  for (const char* op : {"MaxPool", "AvgPool"}) {
    ExpectError(op, c.Attrs(DT_FLOAT), {RandomTensor(DT_FLOAT, TensorShape({4, 4, 3}), 1)},
                Code::kInvalidArgument, {op, "[4,4,3]", "rank 4"});
    // A window larger than the image is an error with VALID, fine with SAME.
    PoolCase big = c;
    big.window_rows = 5;
    ExpectError(op, big.Attrs(DT_FLOAT), {input}, Code::kInvalidArgument,
                {op, "[1,4,4,3]", "VALID"});
    big.padding = "SAME";
    EXPECT_TRUE(RunKernel(op, big.Attrs(DT_FLOAT), {input}).ok());
    AttrMap attrs = c.Attrs(DT_FLOAT);
    attrs["ksize"] = std::vector<int64_t>{1, 2, 2, 1, 1};
    ExpectError(op, attrs, {input}, Code::kInvalidArgument, {op, "ksize [1,2,2,1,1]"});
    attrs["ksize"] = std::vector<int64_t>{2, 2, 2, 1};
    ExpectError(op, attrs, {input}, Code::kInvalidArgument, {op, "ksize [2,2,2,1]", "batch"});
    attrs = c.Attrs(DT_FLOAT);
    attrs["strides"] = std::vector<int64_t>{2, 2, 2, 1};
    ExpectError(op, attrs, {input}, Code::kInvalidArgument, {op, "strides [2,2,2,1]"});
    attrs = c.Attrs(DT_FLOAT);
    attrs["data_format"] = std::string("NCHW");
    ExpectError(op, attrs, {input}, Code::kInvalidArgument, {op, "NCHW", "batch and channel"});
  }
  const Tensor grad = RandomTensor(DT_FLOAT, TensorShape({1, 2, 2, 3}), 2);
  const Tensor wrong = RandomTensor(DT_FLOAT, TensorShape({1, 3, 2, 3}), 2);
  ExpectError("MaxPoolGrad", c.Attrs(DT_FLOAT), {input, grad, wrong}, Code::kInvalidArgument,
              {"MaxPoolGrad", "[1,3,2,3]", "[1,2,2,3]"});
  ExpectError("AvgPoolGrad", c.Attrs(DT_FLOAT), {Sizes(c.input()), wrong}, Code::kInvalidArgument,
              {"AvgPoolGrad", "[1,3,2,3]", "[1,2,2,3]"});
  ExpectError("AvgPoolGrad", c.Attrs(DT_FLOAT), {Int32Vector({1, 4, 4}), grad},
              Code::kInvalidArgument, {"AvgPoolGrad", "orig_input_shape"});
}

}  // namespace
}  // namespace weir
