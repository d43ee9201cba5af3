// The Fashion-MNIST LSTM end to end: its WhileLoop graph gives the loss and
// the gradients of the same LSTM unrolled into 28 steps (same seed, same
// variables), and a short run on real data learns.
#include <gtest/gtest.h>

#include <cmath>

#include "fashion_mnist_data.h"
#include "model.h"
#include "trainer.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"

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

// The loss and, `with_gradients`, d loss / d each variable of `kind` on the
// first `batch` training examples, right after initialization.
StatusOr<std::vector<Tensor>> LossAndGradients(ModelKind kind, int64_t batch, bool with_gradients) {
  Scope root = Scope::NewRootScope();
  WEIR_ASSIGN_OR_RETURN(Model model, BuildModel(root, kind, /*seed=*/7));
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

// Expects the looped and the unrolled LSTM to give the same values.
void ExpectLoopMatchesUnrolled(bool with_gradients) {
  auto looped = LossAndGradients(ModelKind::kLstm, 20, with_gradients);
  ASSERT_TRUE(looped.ok()) << looped.status();
  auto unrolled = LossAndGradients(ModelKind::kLstmUnrolled, 20, with_gradients);
  ASSERT_TRUE(unrolled.ok()) << unrolled.status();
  ASSERT_EQ(looped->size(), unrolled->size());
  // The loss; the lstm kernel's and bias', the logits kernel's and bias'.
  ASSERT_EQ(looped->size(), with_gradients ? 5u : 1u);
  EXPECT_GT((*looped)[0].scalar<float>(), 1.5);  // about ln(10) at initialization
  for (size_t k = 0; k < looped->size(); ++k) {
    const Tensor& a = (*looped)[k];
    const Tensor& b = (*unrolled)[k];
    ASSERT_EQ(a.shape(), b.shape()) << k;
    double largest = 0, max_error = 0;
    for (int64_t j = 0; j < a.NumElements(); ++j) {
      largest = std::max(largest, std::abs(double{b.data<float>()[j]}));
      max_error = std::max(max_error, std::abs(double{a.data<float>()[j]} - b.data<float>()[j]));
    }
    EXPECT_GT(largest, 0) << "output " << k << " is all zeros";
    EXPECT_LE(max_error, 1e-5 * (largest + 1)) << "output " << k;
  }
}

TEST(FashionMnistLstmTest, LoopGivesTheUnrolledLoss) { ExpectLoopMatchesUnrolled(false); }

TEST(FashionMnistLstmTest, LoopGivesTheUnrolledGradients) { ExpectLoopMatchesUnrolled(true); }

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
