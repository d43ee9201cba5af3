// Training Fashion-MNIST models: the loop behind `weir-fashion-mnist`.
//
// Shuffled minibatches (a fresh permutation per epoch, drawn from the seed
// and the epoch number, so a resumed run sees the same order), Adam,
// a checkpoint at the end of every epoch and every `save_every_seconds`,
// and resumption from the newest checkpoint in `checkpoint_dir`: a run
// killed at any moment continues from where its last checkpoint was taken.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "fashion_mnist_data.h"
#include "model.h"

namespace weir {
namespace fashion_mnist {

struct TrainOptions {
  ModelKind model = ModelKind::kCnn;
  int epochs = 12;
  int batch_size = 100;
  float learning_rate = 1e-3f;
  int64_t seed = 1;
  std::string checkpoint_dir;     // empty: no checkpoints, no resumption
  double save_every_seconds = 60;  // besides every epoch; 0: only per epoch
  int64_t save_every_steps = 0;   // 0: not by steps
  int threads = 0;                // intra-op threads; 0: every core
  // The LSTM's towers (model.h's BuildModel): 0 means one per intra-op
  // thread (`threads`, or every core when that is 0; at most batch_size),
  // since each tower's loop runs at one-thread speed beside the others;
  // the other models take 0 or 1.
  int towers = 0;
  bool progress_bar = true;       // redrawn on stderr
  int64_t train_limit = 0;        // use only the first N examples (0: all)
  int64_t test_limit = 0;
  std::string trace_path;         // if set, a Chrome trace of the 20th step goes here
  // examples_per_sec leaves out each epoch's first N steps (warm-up), as
  // the peers' benchmark scripts do; they still train. An epoch of N steps
  // or fewer is timed whole.
  int64_t untimed_steps = 0;
  // Empty: train on `data`'s training split, fed from memory. Otherwise a
  // directory of TFRecord files (tfrecords.h) read by the graph's input
  // pipeline (input_pipeline.h) with `reader_threads` readers; an epoch is
  // then the files' record count (at most train_limit) over batch_size
  // steps, and a resumed run restarts the pipeline at the start of the
  // checkpoint's epoch (files reshuffled), running that epoch's remaining
  // steps. The test split is `data`'s either way (its training split is then
  // not read and may be empty).
  std::string tfrecord_dir;
  int reader_threads = 2;
  // If set, TensorBoard events go to this directory: the graph, and the
  // batch's loss and accuracy and the epoch's running examples_per_sec every
  // `log_every_steps` steps, test_accuracy every epoch.
  std::string logdir;
  int64_t log_every_steps = 1;
};

struct EpochResult {
  int epoch = 0;  // 1-based
  double loss = 0;
  double train_accuracy = 0;
  double test_accuracy = 0;
  double examples_per_sec = 0;
};

// Trains per `options`, calling `on_epoch` after each epoch (after its
// checkpoint is written). Returns the last epoch's result; an epoch already
// complete in the checkpoint is not run again.
StatusOr<EpochResult> Train(const Dataset& data, const TrainOptions& options,
                            const std::function<void(const EpochResult&)>& on_epoch);

// The towers BuildModel gets for `options` (resolving towers = 0).
int ResolvedTowers(const TrainOptions& options);

// The training state (model, optimizer slots, global step) as a training
// run built from `options` holds it after restoring the checkpoint
// `prefix`, keyed by checkpoint name. For checking resumption.
StatusOr<std::map<std::string, Tensor>> RestoredState(const TrainOptions& options,
                                                      const std::string& prefix);

}  // namespace fashion_mnist
}  // namespace weir
