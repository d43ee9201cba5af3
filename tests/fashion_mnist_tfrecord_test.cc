// End-to-end: Fashion-MNIST through TFRecord files and the graph's input
// pipeline. The converter writes the IDX files' bytes and labels exactly;
// the pipeline's batches are training examples with their own labels,
// pixel for pixel as the in-memory path scales them; training from the
// files learns, resumes at a whole epoch and writes TensorBoard events; the
// pipeline's threads end at shutdown, blocked on a full queue or not; a
// missing or damaged file is an error naming it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "fashion_mnist_data.h"
#include "input_pipeline.h"
#include "proto/event.pb.h"
#include "proto/example.pb.h"
#include "tfrecords.h"
#include "trainer.h"
#include "weir/base/record_reader.h"
#include "weir/base/record_writer.h"
#include "weir/runtime/session.h"
#include "weir/train/coordinator.h"
#include "weir/train/saver.h"

namespace weir {
namespace fashion_mnist {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kTrainExamples = 1000;
constexpr int64_t kTestExamples = 300;
constexpr int kShards = 4;

const Dataset& Data() {
  static const Dataset* data = [] {
    auto loaded = Load();
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new Dataset(loaded.ok() ? std::move(*loaded) : Dataset{});
  }();
  return *data;
}

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

// The TFRecord files of the first kTrainExamples / kTestExamples, written once.
const fs::path& RecordsDir() {
  static const fs::path* dir = [] {
    auto* d = new fs::path(FreshDir("weir_fm_tfrecords"));
    auto written =
        WriteTFRecords(kDefaultDir, d->string(), {kShards, kTrainExamples, kTestExamples});
    EXPECT_TRUE(written.ok()) << written.status();
    return d;
  }();
  return *dir;
}

std::vector<std::string> ReadRecords(const fs::path& path) {
  std::vector<std::string> records;
  auto reader = RecordReader::Open(path.string());
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return records;
  std::string record;
  Status status;
  while ((status = (*reader)->ReadRecord(&record)).ok()) records.push_back(record);
  EXPECT_EQ(status.code(), Code::kOutOfRange) << status;
  return records;
}

TEST(FashionMnistTFRecordTest, FilesHoldTheIdxBytesAndLabelsInOrder) {
  auto images = ReadIdxFile(StrCat(kDefaultDir, "/train-images-idx3-ubyte.gz"));
  auto labels = ReadIdxFile(StrCat(kDefaultDir, "/train-labels-idx1-ubyte.gz"));
  ASSERT_TRUE(images.ok() && labels.ok());
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(RecordsDir())) {
    names.insert(entry.path().filename().string());
  }
  std::set<std::string> expected;
  for (int shard = 0; shard < kShards; ++shard) {
    expected.insert(ShardFileName("train", shard, kShards));
    expected.insert(ShardFileName("test", shard, kShards));
  }
  EXPECT_EQ(names, expected);  // no temporary files left behind either
  EXPECT_EQ(ShardFileName("train", 3, 8), "train-00003-of-00008.tfrecord");

  int64_t index = 0;
  for (int shard = 0; shard < kShards; ++shard) {
    const std::vector<std::string> records =
        ReadRecords(RecordsDir() / ShardFileName("train", shard, kShards));
    EXPECT_EQ(records.size(), static_cast<size_t>(kTrainExamples / kShards));
    for (const std::string& record : records) {
      wire::Example example;
      ASSERT_TRUE(example.ParseFromString(record));
      const auto& features = example.features().feature();
      ASSERT_EQ(features.size(), 2u);
      const auto& image = features.at("image").bytes_list();
      ASSERT_EQ(image.value_size(), 1);
      ASSERT_EQ(image.value(0).size(), static_cast<size_t>(kImageSize));
      EXPECT_EQ(std::memcmp(image.value(0).data(), images->data<uint8_t>() + index * kImageSize,
                            kImageSize),
                0)
          << "example " << index;
      const auto& label = features.at("label").int64_list();
      ASSERT_EQ(label.value_size(), 1);
      EXPECT_EQ(label.value(0), labels->data<uint8_t>()[index]) << "example " << index;
      ++index;
    }
  }
  EXPECT_EQ(index, kTrainExamples);
  int64_t test_records = 0;
  for (int shard = 0; shard < kShards; ++shard) {
    auto count = CountRecords((RecordsDir() / ShardFileName("test", shard, kShards)).string());
    ASSERT_TRUE(count.ok()) << count.status();
    test_records += *count;
  }
  EXPECT_EQ(test_records, kTestExamples);
}

// The example index of every training image, by its float pixels' bytes.
std::map<std::string, int64_t> TrainingImageIndex(int64_t n) {
  std::map<std::string, int64_t> index;
  const float* pixels = Data().train.images.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    index.emplace(std::string(reinterpret_cast<const char*>(pixels + i * kImageSize),
                              kImageSize * sizeof(float)),
                  i);
  }
  return index;
}

TEST(FashionMnistTFRecordTest, PipelineBatchesAreShuffledTrainingExamplesAndItStopsCleanly) {
  Scope root = Scope::NewRootScope();
  TFRecordInputOptions options;
  options.dir = RecordsDir().string();
  options.batch_size = 50;
  options.reader_threads = 3;
  options.records_per_read = 20;
  options.min_after_dequeue = 200;
  auto input = BuildTFRecordInput(root, options);
  ASSERT_TRUE(input.ok()) << input.status();
  auto session = Session::New({});
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {input->local_init.name()}, &out).ok());
  {
    Coordinator coordinator;
    for (QueueRunner& runner : input->runners) {
      ASSERT_TRUE(runner.Start(session->get(), &coordinator).ok());
    }
    const std::map<std::string, int64_t> index = TrainingImageIndex(kTrainExamples);
    const int32_t* true_labels = Data().train.labels.data<int32_t>();
    std::vector<int> times_seen(kTrainExamples, 0);
    std::vector<int64_t> first_batch;
    // Two epochs' worth of batches.
    for (int b = 0; b < 2 * kTrainExamples / options.batch_size; ++b) {
      ASSERT_TRUE((*session)->Run({}, {input->images.name(), input->labels.name()}, {}, &out).ok());
      ASSERT_EQ(out[0].shape(), TensorShape({options.batch_size, kImageSize}));
      ASSERT_EQ(out[1].shape(), TensorShape({options.batch_size}));
      for (int64_t i = 0; i < options.batch_size; ++i) {
        const std::string image(
            reinterpret_cast<const char*>(out[0].data<float>() + i * kImageSize),
            kImageSize * sizeof(float));
        auto found = index.find(image);
        ASSERT_NE(found, index.end()) << "batch " << b << " row " << i << " is no training image";
        EXPECT_EQ(out[1].data<int32_t>()[i], true_labels[found->second]);
        ++times_seen[found->second];
        if (b == 0) first_batch.push_back(found->second);
      }
    }
    // Shuffled: the first batch is not the files' first 50 examples in order.
    std::vector<int64_t> in_order(options.batch_size);
    for (int64_t i = 0; i < options.batch_size; ++i) in_order[i] = i;
    EXPECT_NE(first_batch, in_order);
    // Most examples came by in two epochs (the buffer holds some back).
    EXPECT_GT(std::count_if(times_seen.begin(), times_seen.end(), [](int t) { return t > 0; }),
              kTrainExamples * 3 / 4);
    // The readers are now blocked on the full shuffle queue; stopping ends them.
    coordinator.RequestStop();
    Status joined = coordinator.Join(std::chrono::seconds(20));
    EXPECT_TRUE(joined.ok()) << joined;
    EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
  }
  EXPECT_TRUE((*session)->Close().ok());
}

// Every Event of the one event file in `logdir`.
std::vector<wire::Event> ReadEvents(const fs::path& logdir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(logdir)) {
    if (entry.path().filename().string().starts_with("events.out.tfevents.")) {
      files.push_back(entry.path());
    }
  }
  EXPECT_EQ(files.size(), 1u);
  std::vector<wire::Event> events;
  if (files.size() != 1) return events;
  for (const std::string& record : ReadRecords(files[0])) {
    wire::Event event;
    EXPECT_TRUE(event.ParseFromString(record));
    events.push_back(event);
  }
  return events;
}

TEST(FashionMnistTFRecordTest, TrainsFromTheFilesWritesEventsAndResumesAtAnEpoch) {
  const fs::path checkpoints = FreshDir("weir_fm_tfrecord_ckpt");
  const fs::path logdir = FreshDir("weir_fm_tfrecord_logs");
  TrainOptions options;
  options.model = ModelKind::kMlp;
  options.epochs = 1;
  options.batch_size = 50;
  options.test_limit = kTestExamples;
  options.progress_bar = false;
  options.tfrecord_dir = RecordsDir().string();
  options.reader_threads = 2;
  options.checkpoint_dir = checkpoints.string();
  options.logdir = logdir.string();
  std::vector<EpochResult> epochs;
  auto first = Train(Data(), options, [&](const EpochResult& r) { epochs.push_back(r); });
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(epochs.size(), 1u);
  const int64_t steps_per_epoch = kTrainExamples / options.batch_size;
  EXPECT_GT(first->test_accuracy, 0.4);  // chance is 0.1
  EXPECT_LT(first->loss, 2.0);           // chance is ln(10) = 2.30
  auto latest = Saver::LatestCheckpoint(checkpoints.string());
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(Saver::StepOf(*latest), steps_per_epoch);

  // The events: the file version first, the graph, the per-step scalars and
  // the epoch's test accuracy.
  const std::vector<wire::Event> events = ReadEvents(logdir);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  int graphs = 0;
  std::map<std::string, std::vector<std::pair<int64_t, float>>> scalars;
  for (const wire::Event& event : events) {
    if (event.what_case() == wire::Event::kGraphDef) ++graphs;
    if (event.what_case() != wire::Event::kSummary) continue;
    for (const auto& value : event.summary().value()) {
      scalars[value.tag()].push_back({event.step(), value.simple_value()});
    }
  }
  EXPECT_EQ(graphs, 1);
  for (const char* tag : {"loss", "accuracy", "examples_per_sec"}) {
    ASSERT_EQ(scalars[tag].size(), static_cast<size_t>(steps_per_epoch)) << tag;
    EXPECT_EQ(scalars[tag].front().first, 1) << tag;
    EXPECT_EQ(scalars[tag].back().first, steps_per_epoch) << tag;
  }
  for (const auto& [step, loss] : scalars["loss"]) EXPECT_GT(loss, 0) << step;
  for (const auto& [step, accuracy] : scalars["accuracy"]) {
    EXPECT_GE(accuracy, 0) << step;
    EXPECT_LE(accuracy, 1) << step;
  }
  ASSERT_EQ(scalars["test_accuracy"].size(), 1u);
  EXPECT_EQ(scalars["test_accuracy"][0].first, steps_per_epoch);
  EXPECT_FLOAT_EQ(scalars["test_accuracy"][0].second, first->test_accuracy);

  // Asked for two epochs, the same checkpoint directory runs only the second.
  options.epochs = 2;
  options.logdir.clear();
  epochs.clear();
  auto second = Train(Data(), options, [&](const EpochResult& r) { epochs.push_back(r); });
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_EQ(epochs[0].epoch, 2);
  latest = Saver::LatestCheckpoint(checkpoints.string());
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(Saver::StepOf(*latest), 2 * steps_per_epoch);
  fs::remove_all(checkpoints);
  fs::remove_all(logdir);
}

TEST(FashionMnistTFRecordTest, NoFilesIsAnErrorNamingThePattern) {
  const fs::path empty = FreshDir("weir_fm_no_tfrecords");
  fs::create_directories(empty);
  TrainOptions options;
  options.model = ModelKind::kMlp;
  options.epochs = 1;
  options.test_limit = 10;
  options.progress_bar = false;
  options.tfrecord_dir = empty.string();
  auto result = Train(Data(), options, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find(TrainFilePattern(empty.string())), std::string::npos)
      << result.status();
  fs::remove_all(empty);
}

TEST(FashionMnistTFRecordTest, ADamagedFileIsDataLossNamingIt) {
  const fs::path dir = FreshDir("weir_fm_damaged_tfrecords");
  fs::create_directories(dir);
  for (int shard = 0; shard < kShards; ++shard) {
    fs::copy_file(RecordsDir() / ShardFileName("train", shard, kShards),
                  dir / ShardFileName("train", shard, kShards));
  }
  const fs::path damaged = dir / ShardFileName("train", 2, kShards);
  {
    std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(5000);
    file.put('\x7f');  // inside a record's data: its CRC no longer matches
  }
  TrainOptions options;
  options.model = ModelKind::kMlp;
  options.epochs = 1;
  options.batch_size = 50;
  options.test_limit = 10;
  options.progress_bar = false;
  options.tfrecord_dir = dir.string();
  auto result = Train(Data(), options, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kDataLoss) << result.status();
  EXPECT_NE(result.status().message().find(damaged.string()), std::string::npos) << result.status();
  fs::remove_all(dir);
}

// Records that frame correctly but hold Examples without a label: only the
// pipeline's parse finds out, on its threads, while training waits on the
// shuffle queue. The parse error reaches the caller and nothing hangs.
TEST(FashionMnistTFRecordTest, AnExampleWithoutALabelStopsTrainingWithTheParseError) {
  const fs::path dir = FreshDir("weir_fm_unlabelled_tfrecords");
  fs::create_directories(dir);
  {
    auto writer = RecordWriter::Create((dir / ShardFileName("train", 0, 1)).string());
    ASSERT_TRUE(writer.ok()) << writer.status();
    wire::Example example;
    (*example.mutable_features()->mutable_feature())["image"].mutable_bytes_list()->add_value(
        std::string(kImageSize, '\0'));
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE((*writer)->Write(example.SerializeAsString()).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
  }
  TrainOptions options;
  options.model = ModelKind::kMlp;
  options.epochs = 1;
  options.batch_size = 50;
  options.test_limit = 10;
  options.progress_bar = false;
  options.tfrecord_dir = dir.string();
  auto result = Train(Data(), options, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find("label"), std::string::npos) << result.status();
  fs::remove_all(dir);
}

// The command line: --write-tfrecords, then --input tfrecord:DIR with
// --logdir; the process ends by itself (no pipeline thread keeps it alive).
TEST(FashionMnistTFRecordTest, CommandLineWritesAndTrainsFromTFRecords) {
  const fs::path dir = FreshDir("weir_fm_cli_tfrecords");
  const fs::path logdir = FreshDir("weir_fm_cli_logs");
  const std::string program = WEIR_FASHION_MNIST_PATH;
  const std::string log = dir.string() + ".log";
  const std::string write = "timeout 300 " + program + " --write-tfrecords " + dir.string() +
                            " --shards 2 --train-limit 400 --test-limit 100 > " + log + " 2>&1";
  ASSERT_EQ(std::system(write.c_str()), 0) << write;
  EXPECT_TRUE(fs::exists(dir / "train-00001-of-00002.tfrecord"));
  EXPECT_TRUE(fs::exists(dir / "test-00000-of-00002.tfrecord"));
  const std::string train = "timeout 300 " + program + " --input tfrecord:" + dir.string() +
                            " --model mlp --epochs 1 --batch-size 50 --test-limit 200"
                            " --no-progress --reader-threads 2 --logdir " +
                            logdir.string() + " >> " + log + " 2>&1";
  const int status = std::system(train.c_str());
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("wrote 400 training and 100 test examples in 2+2 files"), std::string::npos)
      << output;
  EXPECT_NE(output.find("epoch 1 loss="), std::string::npos) << output;
  EXPECT_FALSE(ReadEvents(logdir).empty());
  fs::remove_all(dir);
  fs::remove_all(logdir);
  fs::remove(log);
}

}  // namespace
}  // namespace fashion_mnist
}  // namespace weir
