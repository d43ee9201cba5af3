// The worked example of docs/optimizers.md, compiled: a user-written
// optimizer (sign-SGD with momentum) in a dozen lines of graph code.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/optimizer.h"

namespace weir {
namespace {

// --- begin docs example
// m = beta * m + (1 - beta) * grad; var -= lr * sign(m). One slot,
// "<var>/SignSGD".
class SignSGDOptimizer final : public Optimizer {
 public:
  SignSGDOptimizer(Input learning_rate, double beta)
      : Optimizer("SignSGD", OptimizerOptions{}),
        learning_rate_(std::move(learning_rate)),
        beta_(beta) {}

 protected:
  int num_slots() const override { return 1; }
  StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                              const std::vector<Output>& slots, DType dtype) override {
    Output m = ops::AddV2(scope, ops::Mul(scope, slots[0], Hyper(scope, beta_, dtype)),
                          ops::Mul(scope, grad, Hyper(scope, 1.0 - beta_, dtype)));
    Output delta = ops::Mul(scope, ops::Sign(scope, m), Hyper(scope, learning_rate_, dtype));
    return Step{{m}, delta};  // new slot values, and what to subtract from var
  }

 private:
  Input learning_rate_;
  double beta_;
};
// --- end docs example

TEST(CustomOptimizerTest, SignSGDStepsBySignAndNamesItsSlot) {
  Scope root = Scope::NewRootScope();
  auto w = Variable::Create(root, "w", ops::Const(root, {1.f, -1.f, 0.5f}));
  ASSERT_TRUE(w.ok()) << w.status();
  Output loss = ops::Mul(root, w->value, w->value);  // gradient 2w: signs (+, -, +)
  SignSGDOptimizer sign_sgd(0.25f, 0.5);
  auto train = sign_sgd.Minimize(root, loss, {*w});
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_EQ(sign_sgd.variables().size(), 1u);
  EXPECT_EQ(sign_sgd.variables()[0].name, "w/SignSGD");
  Operation init = GroupInitializers(root, {*w, sign_sgd.variables()[0]});
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {}, {train->name()}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {w->value.name()}, {}, &out).ok());
  EXPECT_EQ(out[0].data<float>()[0], 0.75f);
  EXPECT_EQ(out[0].data<float>()[1], -0.75f);
  EXPECT_EQ(out[0].data<float>()[2], 0.25f);
}

}  // namespace
}  // namespace weir
