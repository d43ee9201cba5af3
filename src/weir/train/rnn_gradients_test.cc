// LSTMBlockCell's gradient function (LSTMBlockCellGrad plus the products
// back through [x, h_prev] * w + b) against finite differences, for one
// cell and for two chained cells (gradients through cs_prev and h_prev).
// Float with step 1e-2: the error measured is 2e-5 to 3e-5, checked at 2e-4.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

// Float values in [-scale, scale), scrambled, distinct.
Tensor Scrambled(TensorShape shape, int seed, double scale) {
  Tensor t(DT_FLOAT, shape);
  float* v = t.data<float>();
  for (int64_t j = 0; j < t.NumElements(); ++j) {
    v[j] = static_cast<float>(scale * (((j * 37 + seed * 11) % 101) / 50.5 - 1.0));
  }
  return t;
}

constexpr int64_t kBatch = 3, kInput = 4, kCell = 5;

// x, cs_prev, h_prev, w, wci, wcf, wco, b.
std::vector<Tensor> CellValues() {
  return {Scrambled({kBatch, kInput}, 1, 1), Scrambled({kBatch, kCell}, 2, 1.5),
          Scrambled({kBatch, kCell}, 3, 1),  Scrambled({kInput + kCell, 4 * kCell}, 4, 0.6),
          Scrambled({kCell}, 5, 0.8),        Scrambled({kCell}, 6, 0.8),
          Scrambled({kCell}, 7, 0.8),        Scrambled({4 * kCell}, 8, 0.5)};
}

Operation Cell(const Scope& s, const std::vector<Output>& in, const Output& x,
               const Output& cs_prev, const Output& h_prev, bool use_peephole) {
  // cell_clip -1: clipping is not differentiated (as in TensorFlow), so
  // finite differences must not cross it.
  return ops::LSTMBlockCell(
      s, x, cs_prev, h_prev, in[3], in[4], in[5], in[6], in[7],
      {{"use_peephole", use_peephole}, {"cell_clip", -1.0f}, {"forget_bias", 0.7f}});
}

TEST(RnnGradientsTest, LSTMBlockCell) {
  for (bool use_peephole : {false, true}) {
    SCOPED_TRACE(use_peephole ? "peephole" : "no peephole");
    ExpectFloatGradientsMatch(
        CellValues(),
        [&](const Scope& s, const std::vector<Output>& in) {
          Operation cell = Cell(s, in, in[0], in[1], in[2], use_peephole);
          // Both differentiable outputs: h and cs.
          return ops::AddV2(s, cell.output(6), ops::Mul(s, cell.output(1), 0.7f));
        },
        2e-4);
  }
}

TEST(RnnGradientsTest, TwoChainedCells) {
  std::vector<Tensor> values = CellValues();
  values.push_back(Scrambled({kBatch, kInput}, 9, 1));  // the second step's x
  for (bool use_peephole : {false, true}) {
    SCOPED_TRACE(use_peephole ? "peephole" : "no peephole");
    ExpectFloatGradientsMatch(
        values,
        [&](const Scope& s, const std::vector<Output>& in) {
          Operation first = Cell(s, in, in[0], in[1], in[2], use_peephole);
          Operation second = Cell(s, in, in[8], first.output(1), first.output(6), use_peephole);
          return second.output(6);  // only h: the last cs gets no gradient
        },
        2e-4);
  }
}

TEST(RnnGradientsTest, GateOutputsCarryNoGradient) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> in;
  for (const Tensor& t : CellValues()) in.push_back(ops::Const(root, t));
  Operation cell = Cell(root, in, in[0], in[1], in[2], false);
  Output loss = ops::Sum(root, cell.output(3), {0, 1});  // the output gate o
  std::vector<Output> grads;
  Status status = AddSymbolicGradients(root, {loss}, {in[3]}, &grads);
  EXPECT_EQ(status.code(), Code::kUnimplemented) << status;
  EXPECT_NE(status.message().find("cs and h"), std::string::npos) << status;
}

}  // namespace
}  // namespace weir
