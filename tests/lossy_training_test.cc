// Training with lossy transfers: a two-layer classifier split over two
// devices (activations cross forward, their gradients back, as bfloat16)
// learns, and its loss tracks the float32 run step by step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "weir/ops/const_op.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/optimizers.h"
#include "weir/train/variables.h"

namespace weir {
namespace {

constexpr int kBatch = 64, kInputs = 16, kHidden = 32, kClasses = 4;

// A fixed batch whose labels a linear teacher gives.
std::pair<Tensor, Tensor> TeacherBatch() {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> teacher(kInputs * kClasses);
  for (float& w : teacher) w = normal(rng);
  Tensor x(DT_FLOAT, TensorShape({kBatch, kInputs}));
  Tensor labels(DT_INT32, TensorShape({kBatch}));
  for (int i = 0; i < kBatch; ++i) {
    float best = -1e30f;
    for (int k = 0; k < kInputs; ++k) x.data<float>()[i * kInputs + k] = normal(rng);
    for (int c = 0; c < kClasses; ++c) {
      float score = 0;
      for (int k = 0; k < kInputs; ++k)
        score += x.data<float>()[i * kInputs + k] * teacher[k * kClasses + c];
      if (score > best) {
        best = score;
        labels.data<int32_t>()[i] = c;
      }
    }
  }
  return {x, labels};
}

Tensor Uniform(std::mt19937* rng, int rows, int cols) {
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = u(*rng);
  return t;
}

std::vector<float> Losses(bool lossy, int steps) {
  Scope root = Scope::NewRootScope();
  Scope first = root.WithDevice("/device:CPU:0");
  Scope second = root.WithDevice("/device:CPU:1");
  std::mt19937 rng(5);
  Output x = ops::Placeholder(first.WithOpName("x"), DT_FLOAT);
  Output labels = ops::Placeholder(second.WithOpName("labels"), DT_INT32);
  auto w1 = Variable::Create(first, "w1", ops::Const(first, Uniform(&rng, kInputs, kHidden)));
  auto w2 = Variable::Create(second, "w2", ops::Const(second, Uniform(&rng, kHidden, kClasses)));
  EXPECT_TRUE(w1.ok() && w2.ok());
  if (!w1.ok() || !w2.ok()) return {};
  Output hidden = ops::Relu(first, ops::MatMul(first, x, w1->value));
  Output logits = ops::MatMul(second, hidden, w2->value);
  Operation xent = ops::SparseSoftmaxCrossEntropyWithLogits(second, logits, labels);
  Output loss = ops::Mean(second.WithOpName("loss"), xent.output(0), ops::Const(second, {0}));
  GradientDescentOptimizer sgd(0.5);
  auto train = sgd.Minimize(root, loss, {*w1, *w2});
  EXPECT_TRUE(train.ok()) << train.status();
  Operation init = GroupInitializers(root, {*w1, *w2});
  EXPECT_TRUE(root.ok()) << root.status();
  if (!train.ok() || !root.ok()) return {};

  SessionOptions options;
  options.num_cpu_devices = 2;
  options.compile.lossy_transfers = lossy;
  auto session = Session::New(options);
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  EXPECT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
  auto [images, classes] = TeacherBatch();
  RunOptions run;
  run.timeout_ms = 20000;
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    Status s =
        (*session)->Run({{"x", images}, {"labels", classes}}, {"loss"}, {train->name()}, &out, run);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return losses;
    losses.push_back(out[0].scalar<float>());
  }
  return losses;
}

TEST(LossyTrainingTest, LossTracksTheFloat32Run) {
  const int steps = 60;
  std::vector<float> exact = Losses(false, steps);
  std::vector<float> lossy = Losses(true, steps);
  ASSERT_EQ(exact.size(), static_cast<size_t>(steps));
  ASSERT_EQ(lossy.size(), static_cast<size_t>(steps));
  // Both learn.
  EXPECT_LT(exact.back(), 0.5f * exact.front());
  EXPECT_LT(lossy.back(), 0.5f * lossy.front());
  // The first step's loss sees rounded activations only; later steps also
  // rounded gradients. bfloat16 keeps 8 bits (0.4% per value at worst);
  // the losses measured differ by 0.3% at most.
  EXPECT_NE(exact[0], lossy[0]);  // the transfers were lossy
  for (int i = 0; i < steps; ++i) {
    EXPECT_NEAR(lossy[i], exact[i], 0.02 * exact[i]) << "step " << i;
  }
}

}  // namespace
}  // namespace weir
