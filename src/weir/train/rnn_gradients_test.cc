// LSTMBlockCell's gradient function (LSTMBlockCellGrad plus the products
// back through [x, h_prev] * w + b) against finite differences, for one
// cell, for two chained cells (gradients through cs_prev and h_prev) and for
// a cell in a while loop (whose weight gradient the session fuses).
// Float with step 1e-2: the error measured is 2e-5 to 3e-5, checked at 2e-4.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
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

// An LSTM cell in a while loop, three iterations over one x: the loop's
// gradient sums w's [x, h_prev]^T * dicfo each iteration, which the
// session's fusion pass runs as one _MatMulAccumulate (x and h_prev as its
// pieces, graph/fuse_ops.h).
Output LstmLoop(const Scope& s, const std::vector<Output>& in) {
  std::vector<Output> out;
  Status status = ops::WhileLoop(
      s, {ops::Const(s, 0), in[1], in[2]},
      [&](const Scope& b, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(b, v[0], 3);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        Operation cell = Cell(b, in, in[0], v[1], v[2], false);
        *next = {ops::Add(b, v[0], 1), cell.output(1), cell.output(6)};
        return Status::OK();
      },
      &out);
  EXPECT_TRUE(status.ok()) << status;
  return ops::AddV2(s, out[2], ops::Mul(s, out[1], 0.7f));
}

TEST(RnnGradientsTest, CellInAWhileLoop) {
  ExpectFloatGradientsMatch(CellValues(), LstmLoop, 2e-4);
}

// The same loop's gradients with the fusion and without: the fused graph
// runs _MatMulAccumulate and gives the unfused graph's values.
TEST(RnnGradientsTest, CellInAWhileLoopFusedAsUnfused) {
  Scope root = Scope::NewRootScope();
  const std::vector<Tensor> values = CellValues();
  std::vector<Output> in;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    in.push_back(ops::Placeholder(root.WithOpName(name), DT_FLOAT));
    feeds.push_back({name, values[k]});
  }
  Output loss = ops::Sum(root, LstmLoop(root, in), {0, 1});
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {loss}, {in[0], in[1], in[2], in[3], in[7]}, &grads).ok());
  std::vector<std::string> fetches;
  for (const Output& g : grads) fetches.push_back(g.name());
  auto run = [&](bool fuse, int* fused_nodes) {
    SessionOptions options;
    options.compile.fuse_kernels = fuse;
    auto session = Session::New(options);
    EXPECT_TRUE(session.ok()) << session.status();
    EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
    RunOptions run_options;
    run_options.trace = true;
    RunMetadata metadata;
    std::vector<Tensor> out;
    Status s = (*session)->Run(feeds, fetches, {}, &out, run_options, &metadata);
    EXPECT_TRUE(s.ok()) << s;
    *fused_nodes = 0;
    for (const NodeExecStats& stats : metadata.step_stats.nodes) {
      *fused_nodes += stats.op == "_MatMulAccumulate";
    }
    return out;
  };
  int fused_runs = 0, unfused_runs = 0;
  const std::vector<Tensor> fused = run(true, &fused_runs);
  const std::vector<Tensor> unfused = run(false, &unfused_runs);
  EXPECT_EQ(fused_runs, 3);  // once per iteration
  EXPECT_EQ(unfused_runs, 0);
  ASSERT_EQ(fused.size(), grads.size());
  ASSERT_EQ(unfused.size(), grads.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    SCOPED_TRACE(fetches[i]);
    ASSERT_EQ(fused[i].shape(), unfused[i].shape());
    for (int64_t j = 0; j < fused[i].NumElements(); ++j) {
      EXPECT_NEAR(fused[i].data<float>()[j], unfused[i].data<float>()[j],
                  1e-6 * (1 + std::abs(unfused[i].data<float>()[j])))
          << j;
    }
  }
}

}  // namespace
}  // namespace weir
