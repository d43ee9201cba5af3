// LSTMBlockCell and LSTMBlockCellGrad against the cell written out here as
// plain loops in double (tolerance 2e-6 relative for float), against values
// TensorFlow 2.21's tf.raw_ops gave for the same inputs, and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

struct Config {
  int64_t batch, input, cell;
  bool use_peephole;
  double cell_clip, forget_bias;
};

// Inputs 0-7 of both ops, as doubles: x, cs_prev, h_prev, w, wci, wcf, wco, b.
std::vector<std::vector<double>> CellInputs(const Config& c, int seed) {
  const int64_t gates = 4 * c.cell;
  return {RandomValues(c.batch * c.input, seed, -1, 1),
          RandomValues(c.batch * c.cell, seed + 1, -2, 2),
          RandomValues(c.batch * c.cell, seed + 2, -1, 1),
          RandomValues((c.input + c.cell) * gates, seed + 3, -0.5, 0.5),
          RandomValues(c.cell, seed + 4, -1, 1),
          RandomValues(c.cell, seed + 5, -1, 1),
          RandomValues(c.cell, seed + 6, -1, 1),
          RandomValues(gates, seed + 7, -1, 1)};
}

std::vector<Tensor> ToTensors(const Config& c, const std::vector<std::vector<double>>& v) {
  const int64_t gates = 4 * c.cell;
  const std::vector<TensorShape> shapes = {
      {c.batch, c.input}, {c.batch, c.cell}, {c.batch, c.cell}, {c.input + c.cell, gates},
      {c.cell},           {c.cell},          {c.cell},          {gates},
  };
  std::vector<Tensor> t;
  for (size_t k = 0; k < v.size(); ++k) {
    t.push_back(
        MakeTensor(DT_FLOAT, k < shapes.size() ? shapes[k] : TensorShape({c.batch, c.cell}), v[k]));
  }
  return t;
}

double Sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// The forward cell, one element at a time: i, cs, f, o, ci, co, h.
std::vector<std::vector<double>> ReferenceCell(const Config& c,
                                               const std::vector<std::vector<double>>& in) {
  const auto& [x, cs_prev, h_prev, w, wci, wcf, wco, b] =
      std::tie(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]);
  const int64_t n = c.cell, gates = 4 * n;
  std::vector<std::vector<double>> out(7, std::vector<double>(c.batch * n));
  for (int64_t r = 0; r < c.batch; ++r) {
    std::vector<double> pre(b.begin(), b.end());
    for (int64_t g = 0; g < gates; ++g) {
      for (int64_t k = 0; k < c.input; ++k) pre[g] += x[r * c.input + k] * w[k * gates + g];
      for (int64_t k = 0; k < n; ++k) pre[g] += h_prev[r * n + k] * w[(c.input + k) * gates + g];
    }
    for (int64_t j = 0; j < n; ++j) {
      const double cp = cs_prev[r * n + j];
      const double peep = c.use_peephole ? 1 : 0;
      const double i = Sigmoid(pre[j] + peep * wci[j] * cp);
      const double ci = std::tanh(pre[n + j]);
      const double f = Sigmoid(pre[2 * n + j] + c.forget_bias + peep * wcf[j] * cp);
      double cs = ci * i + cp * f;
      if (c.cell_clip > 0) cs = std::clamp(cs, -c.cell_clip, c.cell_clip);
      const double o = Sigmoid(pre[3 * n + j] + peep * wco[j] * cs);
      const double co = std::tanh(cs);
      const double values[7] = {i, cs, f, o, ci, co, co * o};
      for (int k = 0; k < 7; ++k) out[k][r * n + j] = values[k];
    }
  }
  return out;
}

// The gradient cell by the chain rule, written per element: cs_prev_grad,
// dicfo, wci_grad, wcf_grad, wco_grad.
std::vector<std::vector<double>> ReferenceGrad(const Config& c,
                                               const std::vector<std::vector<double>>& in,
                                               const std::vector<std::vector<double>>& fwd,
                                               const std::vector<double>& cs_grad,
                                               const std::vector<double>& h_grad) {
  const int64_t n = c.cell;
  std::vector<std::vector<double>> out = {
      std::vector<double>(c.batch * n), std::vector<double>(c.batch * 4 * n),
      std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  const double peep = c.use_peephole ? 1 : 0;
  for (int64_t r = 0; r < c.batch; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t e = r * n + j;
      const double i = fwd[0][e], cs = fwd[1][e], f = fwd[2][e], o = fwd[3][e], ci = fwd[4][e],
                   co = fwd[5][e], cp = in[1][e];
      // h = o * tanh(cs); o's pre-activation also sees cs through wco.
      const double d_o = h_grad[e] * co * o * (1 - o);
      const double dcs = cs_grad[e] + h_grad[e] * o * (1 - co * co) + peep * d_o * in[6][j];
      const double di = dcs * ci * i * (1 - i);
      const double dci = dcs * i * (1 - ci * ci);
      const double df = dcs * cp * f * (1 - f);
      out[0][e] = dcs * f + peep * (di * in[4][j] + df * in[5][j]);
      double* g = &out[1][r * 4 * n];
      g[j] = di;
      g[n + j] = dci;
      g[2 * n + j] = df;
      g[3 * n + j] = d_o;
      out[2][j] += peep * di * cp;
      out[3][j] += peep * df * cp;
      out[4][j] += peep * d_o * cs;
    }
  }
  return out;
}

AttrMap CellAttrs(const Config& c) {
  return {{"T", DT_FLOAT},
          {"use_peephole", c.use_peephole},
          {"cell_clip", static_cast<float>(c.cell_clip)},
          {"forget_bias", static_cast<float>(c.forget_bias)}};
}

const Config kConfigs[] = {
    {1, 1, 1, false, 3, 1},    {2, 3, 2, true, 0.5, 1},     {5, 7, 3, true, -1, 0.5},
    {37, 28, 16, false, 3, 1}, {100, 28, 128, false, 3, 1}, {100, 28, 128, true, 0.8, 1},
    {9, 0, 4, true, 3, 1},  // no input features: only h_prev feeds the gates
    {0, 4, 3, false, 3, 1},    {4, 2, 0, false, 3, 1},
};

std::string Describe(const Config& c) {
  return StrCat("batch ", c.batch, " input ", c.input, " cell ", c.cell, " peephole ",
                c.use_peephole, " clip ", c.cell_clip, " forget_bias ", c.forget_bias);
}

TEST(LSTMBlockCellTest, MatchesTheCellWrittenOut) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(Describe(c));
    const auto in = CellInputs(c, 11);
    auto out = RunKernel("LSTMBlockCell", CellAttrs(c), ToTensors(c, in));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 7u);
    // The kernel reads float inputs: the reference starts from those.
    std::vector<std::vector<double>> rounded;
    for (const auto& v : in) rounded.push_back(RoundTo(DT_FLOAT, v));
    const auto expected = ReferenceCell(c, rounded);
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "h"};
    for (int k = 0; k < 7; ++k) {
      EXPECT_EQ((*out)[k].shape(), TensorShape({c.batch, c.cell})) << names[k];
      ExpectAllNear((*out)[k], expected[k], 2e-6, names[k]);
    }
    if (c.cell_clip > 0) {
      for (double v : ToDoubles((*out)[1])) EXPECT_LE(std::abs(v), static_cast<float>(c.cell_clip));
    }
  }
}

TEST(LSTMBlockCellGradTest, MatchesTheChainRuleWrittenOut) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(Describe(c));
    auto in = CellInputs(c, 23);
    for (auto& v : in) v = RoundTo(DT_FLOAT, v);
    auto fwd = RunKernel("LSTMBlockCell", CellAttrs(c), ToTensors(c, in));
    ASSERT_TRUE(fwd.ok()) << fwd.status();
    std::vector<std::vector<double>> grad_in = in, forward;
    for (const Tensor& t : std::vector<Tensor>(fwd->begin(), fwd->end() - 1)) {
      forward.push_back(ToDoubles(t));
      grad_in.push_back(forward.back());
    }
    const auto cs_grad = RoundTo(DT_FLOAT, RandomValues(c.batch * c.cell, 5, -1, 1));
    const auto h_grad = RoundTo(DT_FLOAT, RandomValues(c.batch * c.cell, 6, -1, 1));
    grad_in.push_back(cs_grad);
    grad_in.push_back(h_grad);
    auto out = RunKernel("LSTMBlockCellGrad", {{"T", DT_FLOAT}, {"use_peephole", c.use_peephole}},
                         ToTensors(c, grad_in));
    ASSERT_TRUE(out.ok()) << out.status();
    const auto expected = ReferenceGrad(c, in, forward, cs_grad, h_grad);
    EXPECT_EQ((*out)[1].shape(), TensorShape({c.batch, 4 * c.cell}));
    const char* names[] = {"cs_prev_grad", "dicfo", "wci_grad", "wcf_grad", "wco_grad"};
    for (int k = 0; k < 5; ++k) {
      // Peephole sums grow with the batch; compare them on that scale.
      const double scale = k >= 2 ? static_cast<double>(c.batch) : 0;
      ExpectAllNear(
          (*out)[k], expected[k], 2e-6, names[k],
          k >= 2 ? std::vector<double>(expected[k].size(), scale) : std::vector<double>{});
    }
  }
}

// The values TensorFlow 2.21 gives (tf.raw_ops.LSTMBlockCell and
// LSTMBlockCellGrad, forget_bias 0.5, cell_clip 0.5, use_peephole) for
// inputs made by the formula below.
TEST(LSTMBlockCellTest, GivesTensorFlowsValues) {
  const Config c{2, 3, 2, true, 0.5, 0.5};
  auto values = [](int64_t n, int k, double scale = 1) {
    std::vector<double> v(n);
    for (int64_t j = 0; j < n; ++j) v[j] = scale * (((j * 37 + k * 11) % 23) / 11.5 - 1.0);
    return v;
  };
  std::vector<std::vector<double>> in = {values(6, 1), values(4, 2, 2), values(4, 3), values(40, 4),
                                         values(2, 5), values(2, 6),    values(2, 7), values(8, 8)};
  const std::map<std::string, std::vector<double>> tf = {
      {"i", {0.5160625, 0.64764321, 0.77026886, 0.22706604}},
      {"cs", {0.5, 0.5, -0.5, 0.5}},
      {"f", {0.6929186, 0.71188092, 0.20422187, 0.81616056}},
      {"o", {0.66195589, 0.59500331, 0.54266536, 0.30869269}},
      {"ci", {-0.026458941, 0.56675017, -0.8800934, 0.44028944}},
      {"co", {0.46211714, 0.46211714, -0.46211714, 0.46211714}},
      {"h", {0.30590117, 0.27496123, -0.25077495, 0.14265218}},
      {"cs_prev_grad", {-0.11272547, 0.40746498, -0.034041613, -0.48775771}},
      {"dicfo",
       {0.00075888023, 0.090825267, -0.05922531, 0.30872411, -0.044623785, 0.037575036, 0.058448043,
        -0.024208343, 0.065129839, -0.051524695, -0.072619602, -0.12205289, 0.088649586,
        -0.11309473, 0.11468808, 0.021438368}},
      {"wci_grad", {-0.083566189, -0.034551755}},
      {"wcf_grad", {-0.19711681, -0.11804403}},
      {"wco_grad", {-0.02812002, -0.0013849875}},
  };
  auto fwd = RunKernel("LSTMBlockCell", CellAttrs(c), ToTensors(c, in));
  ASSERT_TRUE(fwd.ok()) << fwd.status();
  const char* names[] = {"i", "cs", "f", "o", "ci", "co", "h"};
  for (int k = 0; k < 7; ++k) {
    ExpectAllNear((*fwd)[k], tf.at(names[k]), 1e-6, names[k]);
    if (k < 6) in.push_back(ToDoubles((*fwd)[k]));
  }
  in.push_back(values(4, 9));
  in.push_back(values(4, 10));
  auto grad =
      RunKernel("LSTMBlockCellGrad", {{"T", DT_FLOAT}, {"use_peephole", true}}, ToTensors(c, in));
  ASSERT_TRUE(grad.ok()) << grad.status();
  const char* grad_names[] = {"cs_prev_grad", "dicfo", "wci_grad", "wcf_grad", "wco_grad"};
  for (int k = 0; k < 5; ++k) ExpectAllNear((*grad)[k], tf.at(grad_names[k]), 1e-6, grad_names[k]);
}

TEST(LSTMBlockCellTest, EmptyPeepholeWeightsWithoutPeepholes) {
  // TensorFlow accepts (and never reads) empty peephole weights then.
  const Config c{3, 4, 5, false, 3, 1};
  auto in = CellInputs(c, 3);
  std::vector<Tensor> t = ToTensors(c, in);
  for (int k = 4; k <= 6; ++k) t[k] = Tensor(DT_FLOAT, TensorShape({0}));
  auto out = RunKernel("LSTMBlockCell", CellAttrs(c), t);
  ASSERT_TRUE(out.ok()) << out.status();
  for (auto& v : in) v = RoundTo(DT_FLOAT, v);
  ExpectAllNear((*out)[6], ReferenceCell(c, in)[6], 2e-6, "h");
}

TEST(LSTMBlockCellTest, BadShapesAreErrorsThatNameThem) {
  const Config c{3, 4, 5, true, 3, 1};
  const std::vector<Tensor> good = ToTensors(c, CellInputs(c, 3));
  struct Case {
    int input;
    TensorShape shape;
  };
  for (const Case& bad : {Case{0, {3}}, Case{1, {3, 6}}, Case{2, {2, 5}}, Case{3, {9, 21}},
                          Case{3, {8, 20}}, Case{4, {4}}, Case{7, {19}}}) {
    std::vector<Tensor> t = good;
    t[bad.input] = Tensor(DT_FLOAT, bad.shape);
    auto out = RunKernel("LSTMBlockCell", CellAttrs(c), t);
    ASSERT_FALSE(out.ok()) << "input " << bad.input << " " << bad.shape;
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find("LSTM"), std::string::npos) << out.status();
  }
  // A gradient input of the wrong shape.
  std::vector<Tensor> t = good;
  for (int k = 0; k < 8; ++k) t.push_back(Tensor(DT_FLOAT, TensorShape({3, 5})));
  t[15] = Tensor(DT_FLOAT, TensorShape({3, 4}));
  auto out = RunKernel("LSTMBlockCellGrad", {{"T", DT_FLOAT}, {"use_peephole", true}}, t);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("h_grad"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace weir
