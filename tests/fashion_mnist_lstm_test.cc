// The Fashion-MNIST LSTM end to end: its WhileLoop graph gives the loss and
// the gradients of the same LSTM unrolled into 28 steps (same seed, same
// variables), the batch split into towers gives the same loss, gradients and
// Adam steps as one loop, and a short run on real data learns.
#include <gtest/gtest.h>

#include <cmath>

#include "fashion_mnist_data.h"
#include "model.h"
#include "trainer.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"
#include "weir/train/optimizers.h"

namespace weir {
namespace fashion_mnist {
namespace {

const Dataset& Data() {
  static const Dataset* data = [] {
    auto loaded = Load();
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new Dataset(loaded.ok() ? std::move(*loaded) : Dataset{});
  }();
  return *data;
}

// The loss and, `with_gradients`, d loss / d each variable of `kind` (in
// `towers`) on the first `batch` training examples, right after
// initialization.
StatusOr<std::vector<Tensor>> LossAndGradients(ModelKind kind, int64_t batch, bool with_gradients,
                                               int towers = 1) {
  Scope root = Scope::NewRootScope();
  WEIR_ASSIGN_OR_RETURN(Model model, BuildModel(root, kind, /*seed=*/7, /*input=*/nullptr, towers));
  std::vector<std::string> fetches = {model.loss.name()}, init;
  if (with_gradients) {
    std::vector<Output> values;
    for (const Variable& v : model.variables) values.push_back(v.value);
    std::vector<Output> grads;
    WEIR_RETURN_IF_ERROR(AddSymbolicGradients(root, {model.loss}, values, &grads));
    for (const Output& g : grads) fetches.push_back(g.name());
  }
  for (const Variable& v : model.variables) init.push_back(v.initializer.name());
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions{}));
  WEIR_RETURN_IF_ERROR(session->Create(root.ToGraphDef()));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, {}, init, &out));
  const Split& train = Data().train;
  WEIR_RETURN_IF_ERROR(session->Run({{model.images.name(), train.images.Slice(0, batch)},
                                     {model.labels.name(), train.labels.Slice(0, batch)},
                                     {model.dropout_rate.name(), Tensor::Scalar<float>(0)}},
                                    fetches, {}, &out));
  return out;
}

// Expects `a` and the reference `b` to hold the same float tensors, each
// to 1e-5 of its largest magnitude (plus 1e-5 absolute), none all zeros.
void ExpectSameTensors(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].shape(), b[k].shape()) << k;
    double largest = 0, max_error = 0;
    for (int64_t j = 0; j < a[k].NumElements(); ++j) {
      largest = std::max(largest, std::abs(double{b[k].data<float>()[j]}));
      max_error =
          std::max(max_error, std::abs(double{a[k].data<float>()[j]} - b[k].data<float>()[j]));
    }
    EXPECT_GT(largest, 0) << "output " << k << " is all zeros";
    EXPECT_LE(max_error, 1e-5 * (largest + 1)) << "output " << k;
  }
}

// Expects the looped and the unrolled LSTM to give the same values.
void ExpectLoopMatchesUnrolled(bool with_gradients) {
  auto looped = LossAndGradients(ModelKind::kLstm, 20, with_gradients);
  ASSERT_TRUE(looped.ok()) << looped.status();
  auto unrolled = LossAndGradients(ModelKind::kLstmUnrolled, 20, with_gradients);
  ASSERT_TRUE(unrolled.ok()) << unrolled.status();
  // The loss; the lstm kernel's and bias', the logits kernel's and bias'.
  ASSERT_EQ(looped->size(), with_gradients ? 5u : 1u);
  EXPECT_GT((*looped)[0].scalar<float>(), 1.5);  // about ln(10) at initialization
  ExpectSameTensors(*looped, *unrolled);
}

TEST(FashionMnistLstmTest, LoopGivesTheUnrolledLoss) { ExpectLoopMatchesUnrolled(false); }

TEST(FashionMnistLstmTest, LoopGivesTheUnrolledGradients) { ExpectLoopMatchesUnrolled(true); }

// Towers of unequal slices (20 examples in 3: 6, 7, 7) give the one loop's
// loss and gradients; so does the unrolled graph in towers.
TEST(FashionMnistLstmTest, TowersGiveTheOneLoopGradients) {
  auto one = LossAndGradients(ModelKind::kLstm, 20, true);
  ASSERT_TRUE(one.ok()) << one.status();
  for (int towers : {2, 3}) {
    SCOPED_TRACE(towers);
    auto split = LossAndGradients(ModelKind::kLstm, 20, true, towers);
    ASSERT_TRUE(split.ok()) << split.status();
    ExpectSameTensors(*split, *one);
  }
  auto unrolled = LossAndGradients(ModelKind::kLstmUnrolled, 20, true, 3);
  ASSERT_TRUE(unrolled.ok()) << unrolled.status();
  ExpectSameTensors(*unrolled, *one);
}

// A batch smaller than the towers leaves a tower empty: still the same loss.
TEST(FashionMnistLstmTest, EmptyTowerGivesTheSameLoss) {
  auto one = LossAndGradients(ModelKind::kLstm, 1, true);
  ASSERT_TRUE(one.ok()) << one.status();
  auto split = LossAndGradients(ModelKind::kLstm, 1, true, 2);
  ASSERT_TRUE(split.ok()) << split.status();
  ExpectSameTensors(*split, *one);
}

// The variables after `steps` Adam steps (learning rate 1e-3) of `towers` on
// the first 100 training examples, then the loss there; in the model's
// variable order.
StatusOr<std::vector<Tensor>> AfterAdamSteps(int towers, int steps) {
  Scope root = Scope::NewRootScope();
  WEIR_ASSIGN_OR_RETURN(Model model, BuildModel(root, ModelKind::kLstm, /*seed=*/7,
                                                /*input=*/nullptr, towers));
  AdamOptimizer adam(1e-3);
  WEIR_ASSIGN_OR_RETURN(Operation train, adam.Minimize(root, model.loss, model.variables));
  std::vector<Variable> state = model.variables;
  for (const Variable& v : adam.variables()) state.push_back(v);
  const std::string init = GroupInitializers(root, state).name();
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions{}));
  WEIR_RETURN_IF_ERROR(session->Create(root.ToGraphDef()));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, {}, {init}, &out));
  const Split& train_split = Data().train;
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {model.images.name(), train_split.images.Slice(0, 100)},
      {model.labels.name(), train_split.labels.Slice(0, 100)},
      {model.dropout_rate.name(), Tensor::Scalar<float>(0)}};
  for (int i = 0; i < steps; ++i) {
    WEIR_RETURN_IF_ERROR(session->Run(feeds, {}, {train.name()}, &out));
  }
  std::vector<std::string> fetches;
  for (const Variable& v : model.variables) fetches.push_back(v.value.name());
  fetches.push_back(model.loss.name());
  WEIR_RETURN_IF_ERROR(session->Run(feeds, fetches, {}, &out));
  return out;
}

// Training in two towers is batch-100 training: the same variables and loss
// after three Adam steps as one loop over the batch.
TEST(FashionMnistLstmTest, TwoTowersTrainAsOneLoop) {
  auto one = AfterAdamSteps(1, 3);
  ASSERT_TRUE(one.ok()) << one.status();
  auto two = AfterAdamSteps(2, 3);
  ASSERT_TRUE(two.ok()) << two.status();
  ExpectSameTensors(*two, *one);
  // The steps moved the variables: the loss is below the initial one's.
  auto initial = AfterAdamSteps(1, 0);
  ASSERT_TRUE(initial.ok()) << initial.status();
  EXPECT_LT(one->back().scalar<float>(), initial->back().scalar<float>() - 0.01);
}

TEST(FashionMnistLstmTest, RejectsBadTowers) {
  for (int towers : {0, -1, kMaxTowers + 1}) {
    Scope root = Scope::NewRootScope();
    EXPECT_EQ(BuildModel(root, ModelKind::kLstm, 7, nullptr, towers).status().code(),
              Code::kInvalidArgument)
        << towers;
  }
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(BuildModel(root, ModelKind::kMlp, 7, nullptr, 2).status().code(),
            Code::kInvalidArgument);
}

TEST(FashionMnistLstmTest, SmallLstmLearns) {
  TrainOptions options;
  options.model = ModelKind::kLstm;
  options.epochs = 1;
  options.batch_size = 50;
  options.train_limit = 3000;
  options.test_limit = 1000;
  options.progress_bar = false;
  auto last = Train(Data(), options, nullptr);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_LT(last->loss, 1.6);  // chance is ln(10) = 2.30
  EXPECT_GT(last->test_accuracy, 0.55);
}

}  // namespace
}  // namespace fashion_mnist
}  // namespace weir
