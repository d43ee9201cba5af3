#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>

#include "input_pipeline.h"
#include "progress_bar.h"
#include "tfrecords.h"
#include "weir/base/file_system.h"
#include "weir/base/str_util.h"
#include "weir/base/threadpool.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/coordinator.h"
#include "weir/train/event_writer.h"
#include "weir/train/learning_rate.h"
#include "weir/train/optimizers.h"
#include "weir/train/saver.h"

namespace weir {
namespace fashion_mnist {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The first `limit` examples of `split` (all when limit is 0 or larger).
Split Head(const Split& split, int64_t limit) {
  const int64_t n = split.labels.NumElements();
  if (limit <= 0 || limit >= n) return split;
  return Split{split.images.Slice(0, limit), split.labels.Slice(0, limit)};
}

// Rows `order[begin, begin + size)` of `split`, as one batch.
void GatherBatch(const Split& split, const std::vector<int32_t>& order, int64_t begin, int64_t size,
                 Tensor* images, Tensor* labels) {
  *images = Tensor(DT_FLOAT, TensorShape({size, kImageSize}));
  *labels = Tensor(DT_INT32, TensorShape({size}));
  const float* from = split.images.data<float>();
  const int32_t* from_labels = split.labels.data<int32_t>();
  float* to = images->data<float>();
  int32_t* to_labels = labels->data<int32_t>();
  for (int64_t i = 0; i < size; ++i) {
    const int64_t row = order[begin + i];
    std::memcpy(to + i * kImageSize, from + row * kImageSize, kImageSize * sizeof(float));
    to_labels[i] = from_labels[row];
  }
}

// The epoch's order: a permutation drawn from (seed, epoch) alone, so that a
// resumed run replays the interrupted epoch's order.
std::vector<int32_t> EpochOrder(int64_t n, int64_t seed, int epoch) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(static_cast<uint64_t>(seed) * 1000003u + static_cast<uint64_t>(epoch));
  // Fisher-Yates by hand: std::shuffle's draws differ between libraries.
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  }
  return order;
}

// Everything one training run holds: the graph's handles, the session and
// the compiled steps; with TFRecord input also the pipeline and the
// coordinator of its threads.
struct Run {
  Scope root = Scope::NewRootScope();  // owns the graph the Outputs below point into
  Model model;
  Variable global_step;
  std::vector<Variable> state;  // everything a checkpoint holds
  std::unique_ptr<Saver> saver;
  std::string init_target;
  std::string train_target;
  std::optional<TFRecordInput> input;  // set: training reads the pipeline, feeds only the rate
  std::unique_ptr<Session> session;
  CallableHandle train_step = -1;
  CallableHandle eval_step = -1;
  // Declared after the session, so destroyed before it: its destructor
  // stops and joins the pipeline's threads, which run steps on the session.
  std::unique_ptr<Coordinator> coordinator;
};

StatusOr<Run> BuildRun(const TrainOptions& options) {
  Run run;
  const Scope& root = run.root;
  ModelInput model_input;
  if (!options.tfrecord_dir.empty()) {
    TFRecordInputOptions input_options;
    input_options.dir = options.tfrecord_dir;
    input_options.batch_size = options.batch_size;
    input_options.reader_threads = options.reader_threads;
    input_options.seed = options.seed;
    // A small data set needs no larger buffer than itself.
    if (options.train_limit > 0) {
      input_options.min_after_dequeue =
          std::min(input_options.min_after_dequeue, options.train_limit);
    }
    WEIR_ASSIGN_OR_RETURN(run.input, BuildTFRecordInput(root, input_options));
    model_input = {run.input->images, run.input->labels};
  }
  WEIR_ASSIGN_OR_RETURN(
      run.model, BuildModel(root, options.model, options.seed, run.input ? &model_input : nullptr,
                            ResolvedTowers(options)));
  WEIR_ASSIGN_OR_RETURN(run.global_step, CreateGlobalStep(root));

  AdamOptimizer adam(options.learning_rate);
  WEIR_ASSIGN_OR_RETURN(Operation train,
                        adam.Minimize(root, run.model.loss, run.model.variables, &run.global_step));
  run.train_target = train.name();

  // Save the model, the optimizer's slots and the step: all of the state.
  run.state = run.model.variables;
  for (const Variable& v : adam.variables()) run.state.push_back(v);
  run.state.push_back(run.global_step);
  std::vector<SaveableVariable> saveable;
  for (const Variable& v : run.state) saveable.push_back({v.name, v.handle, v.dtype});
  run.init_target = GroupInitializers(root, run.state).name();
  SaverOptions saver_options;
  saver_options.max_to_keep = 3;
  saver_options.keep_best = true;
  WEIR_ASSIGN_OR_RETURN(run.saver, Saver::Create(root, saveable, saver_options));
  WEIR_RETURN_IF_ERROR(root.status());

  SessionOptions session_options;
  session_options.intra_op_threads = options.threads;
  WEIR_ASSIGN_OR_RETURN(run.session, Session::New(session_options));
  WEIR_RETURN_IF_ERROR(run.session->Create(root.ToGraphDef()));
  const std::vector<std::string> feeds = {run.model.images.name(), run.model.labels.name(),
                                          run.model.dropout_rate.name()};
  const std::vector<std::string> train_feeds =
      run.input ? std::vector<std::string>{run.model.dropout_rate.name()} : feeds;
  WEIR_ASSIGN_OR_RETURN(
      run.train_step,
      run.session->MakeCallable(
          {train_feeds, {run.model.loss.name(), run.model.correct.name()}, {run.train_target}}));
  WEIR_ASSIGN_OR_RETURN(run.eval_step,
                        run.session->MakeCallable({feeds, {run.model.correct.name()}, {}}));
  return run;
}

// Restores the newest checkpoint if there is one, else initializes; returns
// the global step.
StatusOr<int64_t> RestoreOrInitialize(Run& run, const TrainOptions& options) {
  std::vector<Tensor> out;
  if (!options.checkpoint_dir.empty()) {
    StatusOr<std::string> latest = Saver::LatestCheckpoint(options.checkpoint_dir);
    if (latest.ok()) {
      WEIR_RETURN_IF_ERROR(run.saver->Restore(run.session.get(), *latest));
      WEIR_RETURN_IF_ERROR(run.session->Run({}, {run.global_step.value.name()}, {}, &out));
      const int64_t step = out[0].scalar<int64_t>();
      std::fprintf(stderr, "resuming from %s (step %lld)\n", latest->c_str(),
                   static_cast<long long>(step));
      return step;
    }
    if (latest.status().code() != Code::kNotFound) return latest.status();
  }
  WEIR_RETURN_IF_ERROR(run.session->Run({}, {}, {run.init_target}, &out));
  return 0;
}

// The training examples per epoch of the TFRecord input: the records of the
// files the pipeline matches, at most `limit` (0: all).
StatusOr<int64_t> CountTrainingRecords(Run& run, const TrainOptions& options) {
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(run.session->Run({}, {run.input->files.name()}, {}, &out));
  int64_t n = 0;
  for (int64_t i = 0; i < out[0].NumElements(); ++i) {
    WEIR_ASSIGN_OR_RETURN(int64_t count, CountRecords(out[0].data<std::string>()[i]));
    n += count;
  }
  if (n == 0) {
    // The readers would wait for records forever.
    return errors::InvalidArgument(
        "no training records in '", TrainFilePattern(options.tfrecord_dir),
        "' (write them with weir-fashion-mnist --write-tfrecords ", options.tfrecord_dir, ")");
  }
  return options.train_limit > 0 ? std::min(n, options.train_limit) : n;
}

// Starts the pipeline's threads: after the variables are initialized or
// restored, so that a restart resets only the pipeline's own state.
Status StartPipeline(Run& run) {
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(run.session->Run({}, {}, {run.input->local_init.name()}, &out));
  run.coordinator = std::make_unique<Coordinator>();
  for (QueueRunner& runner : run.input->runners) {
    WEIR_RETURN_IF_ERROR(runner.Start(run.session.get(), run.coordinator.get()));
  }
  return Status::OK();
}

// Stops the pipeline's threads and waits for them; the first error they
// reported, else `status`. A step that failed because the pipeline did
// (its queue closed under it) reports the pipeline's error.
Status StopPipeline(Run& run, Status status) {
  if (run.coordinator == nullptr) return status;
  run.coordinator->RequestStop();
  Status joined = run.coordinator->Join(std::chrono::seconds(30));
  run.coordinator.reset();
  return joined.ok() ? status : joined;
}

StatusOr<double> Evaluate(Run& run, const Split& split) {
  const int64_t n = split.labels.NumElements();
  constexpr int64_t kBatch = 1000;
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  int64_t correct = 0;
  for (int64_t begin = 0; begin < n; begin += kBatch) {
    Tensor images, labels;
    GatherBatch(split, order, begin, std::min(kBatch, n - begin), &images, &labels);
    std::vector<Tensor> out;
    WEIR_RETURN_IF_ERROR(run.session->RunCallable(
        run.eval_step, {images, labels, Tensor::Scalar<float>(0.0f)}, &out));
    correct += out[0].scalar<int32_t>();
  }
  return n == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(n);
}

// The epochs from the one `step` is in to the last, each reported to
// `on_epoch` after its checkpoint.
StatusOr<EpochResult> TrainEpochs(Run& run, const TrainOptions& options, const Split& train,
                                  const Split& test, int64_t n, int64_t step,
                                  EventFileWriter* events,
                                  const std::function<void(const EpochResult&)>& on_epoch) {
  const int64_t steps_per_epoch = n / options.batch_size;
  CheckpointSchedule schedule(options.save_every_steps, options.save_every_seconds);
  schedule.Saved(step);
  const Tensor rate = Tensor::Scalar<float>(run.model.default_dropout_rate);
  EpochResult result;
  for (int epoch = static_cast<int>(step / steps_per_epoch); epoch < options.epochs; ++epoch) {
    const std::vector<int32_t> order =
        run.input ? std::vector<int32_t>() : EpochOrder(n, options.seed, epoch);
    ProgressBar bar(options.progress_bar, epoch + 1, steps_per_epoch * options.batch_size);
    double loss_sum = 0;
    int64_t correct = 0, seen = 0;
    Clock::time_point start = Clock::now();
    int64_t untimed = 0;  // examples seen before the clock (re)started
    const int64_t first = step % steps_per_epoch;
    for (int64_t i = first; i < steps_per_epoch; ++i) {
      if (i - first == options.untimed_steps && options.untimed_steps > 0) {
        start = Clock::now();
        untimed = seen;
      }
      if (run.coordinator != nullptr && run.coordinator->ShouldStop()) {
        return errors::Aborted("the input pipeline stopped at step ", step);  // Join tells why
      }
      std::vector<Tensor> feeds;
      if (run.input) {
        feeds = {rate};
      } else {
        Tensor images, labels;
        GatherBatch(train, order, i * options.batch_size, options.batch_size, &images, &labels);
        feeds = {images, labels, rate};
      }
      std::vector<Tensor> out;
      // One step traced, late enough that the first-step costs are gone.
      const bool trace = !options.trace_path.empty() && seen == 20 * options.batch_size;
      RunMetadata metadata;
      WEIR_RETURN_IF_ERROR(run.session->RunCallable(run.train_step, feeds, &out,
                                                    RunOptions{.trace = trace}, &metadata));
      if (trace) {
        WEIR_RETURN_IF_ERROR(WriteStringToFileAtomic(options.trace_path, metadata.ChromeTrace()));
      }
      ++step;
      const float loss = out[0].scalar<float>();
      const int32_t batch_correct = out[1].scalar<int32_t>();
      loss_sum += loss * options.batch_size;
      correct += batch_correct;
      seen += options.batch_size;
      const double examples_per_sec = (seen - untimed) / Seconds(start);
      bar.Update((i + 1) * options.batch_size, loss_sum / seen, static_cast<double>(correct) / seen,
                 examples_per_sec);
      if (events != nullptr && step % options.log_every_steps == 0) {
        WEIR_RETURN_IF_ERROR(events->AddScalar("loss", loss, step));
        WEIR_RETURN_IF_ERROR(events->AddScalar(
            "accuracy", static_cast<double>(batch_correct) / options.batch_size, step));
        WEIR_RETURN_IF_ERROR(events->AddScalar("examples_per_sec", examples_per_sec, step));
      }
      if (!options.checkpoint_dir.empty() && i + 1 < steps_per_epoch && schedule.Due(step)) {
        WEIR_RETURN_IF_ERROR(
            run.saver->Save(run.session.get(), options.checkpoint_dir, step).status());
        schedule.Saved(step);
      }
    }
    const double elapsed = Seconds(start);
    bar.Finish();  // the epoch's line below starts a line of its own
    result.epoch = epoch + 1;
    result.loss = seen ? loss_sum / seen : 0;
    result.train_accuracy = seen ? static_cast<double>(correct) / seen : 0;
    result.examples_per_sec = (seen - untimed) / std::max(elapsed, 1e-9);
    WEIR_ASSIGN_OR_RETURN(result.test_accuracy, Evaluate(run, test));
    if (events != nullptr) {
      WEIR_RETURN_IF_ERROR(events->AddScalar("test_accuracy", result.test_accuracy, step));
      WEIR_RETURN_IF_ERROR(events->Flush());
    }
    if (!options.checkpoint_dir.empty()) {
      WEIR_RETURN_IF_ERROR(
          run.saver->Save(run.session.get(), options.checkpoint_dir, step, result.test_accuracy)
              .status());
      schedule.Saved(step);
    }
    if (on_epoch) on_epoch(result);
  }
  return result;
}

}  // namespace

int ResolvedTowers(const TrainOptions& options) {
  if (options.towers != 0) return options.towers;
  if (options.model != ModelKind::kLstm && options.model != ModelKind::kLstmUnrolled) return 1;
  const int threads = options.threads > 0 ? options.threads : NumSchedulableCpus();
  // No more towers than examples in a batch (an empty tower only costs).
  const int64_t most = std::min<int64_t>(kMaxTowers, std::max(options.batch_size, 1));
  return static_cast<int>(std::clamp<int64_t>(threads, 1, most));
}

StatusOr<EpochResult> Train(const Dataset& data, const TrainOptions& options,
                            const std::function<void(const EpochResult&)>& on_epoch) {
  if (options.batch_size <= 0 || options.epochs <= 0 || options.log_every_steps <= 0) {
    return errors::InvalidArgument("batch size (", options.batch_size, "), epochs (",
                                   options.epochs, ") and steps between logs (",
                                   options.log_every_steps, ") must be positive");
  }
  // TFRecord input leaves data.train unused (it may be empty).
  const Split train =
      options.tfrecord_dir.empty() ? Head(data.train, options.train_limit) : Split{};
  const Split test = Head(data.test, options.test_limit);

  WEIR_ASSIGN_OR_RETURN(Run run, BuildRun(options));
  int64_t n = run.input ? 0 : train.labels.NumElements();
  if (run.input) {
    WEIR_ASSIGN_OR_RETURN(n, CountTrainingRecords(run, options));
  }
  if (n / options.batch_size == 0) {
    return errors::InvalidArgument("batch size ", options.batch_size, " exceeds the ", n,
                                   " training examples");
  }
  WEIR_ASSIGN_OR_RETURN(int64_t step, RestoreOrInitialize(run, options));

  std::unique_ptr<EventFileWriter> events;
  if (!options.logdir.empty()) {
    WEIR_ASSIGN_OR_RETURN(events, EventFileWriter::Create(options.logdir));
    WEIR_RETURN_IF_ERROR(events->AddGraph(*run.root.graph()));
  }
  EpochResult result;
  if (step >= n / options.batch_size * options.epochs) {
    // Resumed after the last epoch: nothing to train, so report where it is.
    std::fprintf(stderr, "the checkpoint already holds %d epochs; evaluating only\n",
                 options.epochs);
    result.epoch = options.epochs;
    WEIR_ASSIGN_OR_RETURN(result.test_accuracy, Evaluate(run, test));
  } else {
    if (run.input) WEIR_RETURN_IF_ERROR(StartPipeline(run));
    StatusOr<EpochResult> trained =
        TrainEpochs(run, options, train, test, n, step, events.get(), on_epoch);
    WEIR_RETURN_IF_ERROR(StopPipeline(run, trained.status()));
    result = *trained;
  }
  if (events != nullptr) WEIR_RETURN_IF_ERROR(events->Close());
  return result;
}

StatusOr<std::map<std::string, Tensor>> RestoredState(const TrainOptions& options,
                                                      const std::string& prefix) {
  WEIR_ASSIGN_OR_RETURN(Run run, BuildRun(options));
  WEIR_RETURN_IF_ERROR(run.saver->Restore(run.session.get(), prefix));
  std::vector<std::string> reads;
  for (const Variable& v : run.state) reads.push_back(v.value.name());
  std::vector<Tensor> values;
  WEIR_RETURN_IF_ERROR(run.session->Run({}, reads, {}, &values));
  std::map<std::string, Tensor> state;
  for (size_t i = 0; i < values.size(); ++i) state[run.state[i].name] = values[i];
  return state;
}

}  // namespace fashion_mnist
}  // namespace weir
