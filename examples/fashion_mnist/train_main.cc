// weir-fashion-mnist: trains the MLP, the convnet or the LSTM on Fashion-MNIST.
//
//   weir-fashion-mnist --model cnn --epochs 12 --checkpoint-dir ckpt/cnn
//
// Besides the progress bar (stderr, on a terminal) it prints one line per
// epoch on stdout for scripts:
//   epoch N loss=… train_accuracy=… test_accuracy=… examples_per_sec=…
// Run it again with the same --checkpoint-dir to continue an interrupted run.
//
//   weir-fashion-mnist --write-tfrecords data/fm      # IDX files -> TFRecord shards, then exits
//   weir-fashion-mnist --input tfrecord:data/fm --reader-threads 2 --logdir runs/cnn
#include <CLI/CLI.hpp>
#include <cstdio>

#include "fashion_mnist_data.h"
#include "tfrecords.h"
#include "trainer.h"

int main(int argc, char** argv) {
  using namespace weir::fashion_mnist;
  TrainOptions options;
  std::string model = "cnn";
  std::string data_dir = kDefaultDir;
  bool no_progress = false;
  std::string input = "memory";
  std::string write_tfrecords;
  int shards = 8;

  CLI::App app{"weir-fashion-mnist: train an MLP, a convnet or an LSTM on Fashion-MNIST with Weir"};
  // A later flag overrides an earlier one, so wrappers (scripts/main.sh) can
  // pass defaults that the user's arguments replace.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--model", model, "mlp, cnn or lstm")
      ->check(CLI::IsMember({"mlp", "cnn", "lstm"}));
  app.add_option("--epochs", options.epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", options.batch_size, "examples per step")
      ->check(CLI::PositiveNumber);
  app.add_option("--learning-rate", options.learning_rate, "Adam's learning rate");
  app.add_option("--checkpoint-dir", options.checkpoint_dir,
                 "where to save checkpoints and resume from (empty: none)");
  app.add_option("--seed", options.seed, "seed of initialization, dropout and shuffling");
  app.add_option("--save-every-seconds", options.save_every_seconds,
                 "also checkpoint this often within an epoch (0: only per epoch)");
  app.add_option("--save-every-steps", options.save_every_steps,
                 "also checkpoint every N steps (0: not by steps)");
  app.add_option("--threads", options.threads, "intra-op threads (0: every core)");
  app.add_option("--towers", options.towers,
                 "lstm only: split each batch into N slices, each read by its own loop over the "
                 "same weights, run side by side (0: one per intra-op thread)")
      ->check(CLI::Range(0, kMaxTowers));
  app.add_option("--data-dir", data_dir, "directory of the Fashion-MNIST IDX files");
  app.add_option(
      "--train-limit", options.train_limit,
      "use only the first N training examples (with --input tfrecord: epochs of N examples)");
  app.add_option("--test-limit", options.test_limit, "use only the first N test examples");
  app.add_flag("--no-progress", no_progress, "no progress bar");
  app.add_option("--untimed-steps", options.untimed_steps,
                 "leave each epoch's first N steps out of examples/s (benchmark warm-up)");
  app.add_option("--trace", options.trace_path,
                 "write a Chrome trace (chrome://tracing, Perfetto) of one training step here");
  app.add_option("--input", input,
                 "memory (the IDX files, fed from memory) or tfrecord:DIR (DIR's train-*.tfrecord "
                 "files, read by the graph's input pipeline)");
  app.add_option("--reader-threads", options.reader_threads,
                 "with --input tfrecord: readers, each with its own thread")
      ->check(CLI::PositiveNumber);
  app.add_option(
      "--logdir", options.logdir,
      "write TensorBoard events here (loss, accuracy, examples/s, test accuracy, graph)");
  app.add_option("--log-every-steps", options.log_every_steps,
                 "with --logdir: steps between the per-step scalars")
      ->check(CLI::PositiveNumber);
  app.add_option("--write-tfrecords", write_tfrecords,
                 "write the IDX files (--train-limit/--test-limit of them) as sharded TFRecord "
                 "files of tf.train.Example to this directory, then exit");
  app.add_option("--shards", shards, "with --write-tfrecords: files per split")
      ->check(CLI::Range(1, 99999));
  CLI11_PARSE(app, argc, argv);
  options.model = *ParseModelKind(model);  // CLI11 has checked the name
  options.progress_bar = !no_progress;

  if (!write_tfrecords.empty()) {
    auto written = WriteTFRecords(data_dir, write_tfrecords,
                                  {shards, options.train_limit, options.test_limit});
    if (!written.ok()) {
      std::fprintf(stderr, "error: %s\n", written.status().ToString().c_str());
      return 1;
    }
    std::printf("wrote %lld training and %lld test examples in %d+%d files to %s\n",
                static_cast<long long>(written->train_examples),
                static_cast<long long>(written->test_examples), shards, shards,
                write_tfrecords.c_str());
    return 0;
  }
  constexpr std::string_view kTFRecordPrefix = "tfrecord:";
  if (input.starts_with(kTFRecordPrefix) && input.size() > kTFRecordPrefix.size()) {
    options.tfrecord_dir = input.substr(kTFRecordPrefix.size());
  } else if (input != "memory") {
    std::fprintf(stderr, "error: --input must be memory or tfrecord:DIR, got '%s'\n",
                 input.c_str());
    return 1;
  }

  // Training from TFRecord files reads only the IDX test split (the in-memory
  // training split would be 188 MB of floats nobody reads).
  weir::StatusOr<Dataset> data = Dataset{};
  if (options.tfrecord_dir.empty()) {
    data = Load(data_dir);
  } else {
    weir::StatusOr<Split> test = LoadTestSplit(data_dir);
    if (test.ok()) {
      data->test = std::move(*test);
    } else {
      data = test.status();
    }
  }
  if (!data.ok()) {
    std::fprintf(stderr, "error: %s\n", data.status().ToString().c_str());
    return 1;
  }
  auto result = Train(*data, options, [](const EpochResult& r) {
    std::printf("epoch %d loss=%.4f train_accuracy=%.4f test_accuracy=%.4f examples_per_sec=%.1f\n",
                r.epoch, r.loss, r.train_accuracy, r.test_accuracy, r.examples_per_sec);
    std::fflush(stdout);
  });
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.status().ToString().c_str());
    return 1;
  }
  return 0;
}
