// The Fashion-MNIST models as Weir graphs.
//
//   mlp:  784 -> 512 relu -> 512 relu -> 10
//   cnn:  the TensorFlow layers tutorial's convnet: conv 5x5x32 relu,
//         max-pool 2x2, conv 5x5x64 relu, max-pool 2x2, dense 1024 relu,
//         dropout, dense 10
//   lstm: a 128-unit LSTM reading each image as 28 rows of 28 pixels, one
//         row per step of a WhileLoop (TensorFlow's LSTMBlockCell, gate
//         order i, ci, f, o, forget bias 1, no clipping or peepholes), then
//         dense 10 on the last h. kLstmUnrolled is the same graph with the
//         28 steps unrolled instead of looped: a test-only reference (same
//         variables, same values), not a command-line choice.
//
// Both take a feed of images (float [batch, 784] in [0, 1]), labels (int32
// [batch]) and a dropout rate (float scalar: the training rate while
// training, 0 to evaluate), and give the mean cross-entropy loss and the
// number of correct predictions. Weights are Glorot-uniform (the LSTM's
// recurrent ones orthogonal, as Keras does) and biases zero, from a fixed
// seed, so a run is reproducible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/train/variables.h"

namespace weir {
namespace fashion_mnist {

enum class ModelKind { kMlp, kCnn, kLstm, kLstmUnrolled };

StatusOr<ModelKind> ParseModelKind(const std::string& name);

// Tensors of the graph the model reads its examples from instead of
// placeholders (an input pipeline's dequeued batch): float [batch, 784] and
// int32 [batch].
struct ModelInput {
  Output images;
  Output labels;
};

struct Model {
  Output images;        // Placeholder "images" (Identity "images" of a ModelInput)
  Output labels;        // Placeholder "labels" (Identity "labels" of a ModelInput)
  Output dropout_rate;  // Placeholder "dropout_rate"
  Output logits;        // float [batch, 10]
  Output loss;          // float scalar: mean cross-entropy over the batch
  Output correct;       // int32 scalar: predictions equal to the label
  std::vector<Variable> variables;  // weights and biases, in layer order
  float default_dropout_rate = 0;   // the rate training uses
};

// The most towers BuildModel accepts.
inline constexpr int kMaxTowers = 64;

// With `input`, a step that feeds nothing reads `input`, and one that feeds
// "images" and "labels" (evaluation) does not run it: a fed tensor's
// producers are pruned.
//
// `towers` (the LSTM only; the others take 1) splits each batch into that
// many slices of nearly equal rows (a slice may be empty when the batch is
// smaller than towers), each run through its own WhileLoop over the same
// variables, side by side on the executor's inter-op threads: the same
// loss and gradients as one loop (up to float rounding), the same variables
// and checkpoints, with the parallelism between whole loops instead of
// inside each small product. InvalidArgument outside [1, kMaxTowers].
StatusOr<Model> BuildModel(const Scope& scope, ModelKind kind, int64_t seed,
                           const ModelInput* input = nullptr, int towers = 1);

}  // namespace fashion_mnist
}  // namespace weir
