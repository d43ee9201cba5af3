// End-to-end training on real Fashion-MNIST: a small run learns (the loss
// falls, accuracy passes a threshold), and a run killed with SIGKILL while
// it checkpoints continues, on restart, from an intact checkpoint holding
// exactly the variables it saved.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "fashion_mnist_data.h"
#include "trainer.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/train/saver.h"

namespace weir {
namespace fashion_mnist {
namespace {

namespace fs = std::filesystem;

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

TEST(FashionMnistTrainTest, SmallMlpLearns) {
  TrainOptions options;
  options.model = ModelKind::kMlp;
  options.epochs = 3;
  options.batch_size = 50;
  options.train_limit = 5000;
  options.test_limit = 2000;
  options.progress_bar = false;
  std::vector<EpochResult> epochs;
  auto last = Train(Data(), options, [&](const EpochResult& r) { epochs.push_back(r); });
  ASSERT_TRUE(last.ok()) << last.status();
  ASSERT_EQ(epochs.size(), 3u);
  EXPECT_LT(epochs[2].loss, epochs[0].loss);
  EXPECT_LT(epochs[2].loss, 0.7);  // chance is ln(10) = 2.30
  EXPECT_GT(epochs[2].test_accuracy, 0.75);
  EXPECT_GT(epochs[2].examples_per_sec, 0);
}

TEST(FashionMnistTrainTest, SmallCnnLearns) {
  TrainOptions options;
  options.model = ModelKind::kCnn;
  options.epochs = 1;
  options.batch_size = 50;
  options.train_limit = 2000;
  options.test_limit = 1000;
  options.progress_bar = false;
  auto last = Train(Data(), options, nullptr);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_LT(last->loss, 1.5);
  EXPECT_GT(last->test_accuracy, 0.6);
}

// The step of the newest checkpoint in `dir`, or -1.
int64_t LatestStep(const fs::path& dir) {
  auto latest = Saver::LatestCheckpoint(dir.string());
  return latest.ok() ? Saver::StepOf(*latest) : -1;
}

// Runs weir-fashion-mnist with `args`; returns its pid.
pid_t Spawn(const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) ::_exit(126);
    std::vector<char*> argv;
    std::string program = WEIR_FASHION_MNIST_PATH;
    argv.push_back(program.data());
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

std::string ReadAll(const fs::path& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return "";
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

TEST(FashionMnistTrainTest, KilledDuringASaveResumesFromAnIntactCheckpoint) {
  const fs::path dir = FreshDir("weir_resume_test");
  // Saving after every step, the program spends most of its time in saves,
  // so the kill lands in one (or between a save and its state update).
  const std::vector<std::string> args = {
      "--model", "mlp", "--epochs", "2", "--batch-size", "50", "--train-limit", "3000",
      "--test-limit", "500", "--save-every-steps", "1", "--no-progress", "--checkpoint-dir",
      dir.string()};
  const pid_t pid = Spawn(args, dir.string() + ".log1");
  ASSERT_GT(pid, 0);
  // Wait for a few checkpoints, then kill without warning.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (LatestStep(dir) < 5 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(37));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << ReadAll(dir.string() + ".log1");

  // The newest recorded checkpoint is whole: every tensor reads back with a
  // matching checksum.
  auto latest = Saver::LatestCheckpoint(dir.string());
  ASSERT_TRUE(latest.ok()) << latest.status();
  const int64_t step = Saver::StepOf(*latest);
  ASSERT_GE(step, 5);
  auto reader = BundleReader::Open(*latest);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::map<std::string, Tensor> saved;
  for (const BundleTensorInfo& info : (*reader)->ListTensors()) {
    auto t = (*reader)->Lookup(info.name);
    ASSERT_TRUE(t.ok()) << t.status();
    saved[info.name] = *t;
  }
  EXPECT_EQ(saved.at("global_step").scalar<int64_t>(), step);

  // A training run restoring it holds exactly those values.
  TrainOptions options;
  options.model = ModelKind::kMlp;
  auto restored = RestoredState(options, *latest);
  ASSERT_TRUE(restored.ok()) << restored.status();
  ASSERT_EQ(restored->size(), saved.size());
  for (const auto& [name, value] : saved) {
    ASSERT_TRUE(restored->count(name)) << name;
    EXPECT_TRUE(restored->at(name).ContentEquals(value)) << name;
  }

  // The restart continues from there and finishes both epochs.
  const pid_t again = Spawn(args, dir.string() + ".log2");
  ASSERT_EQ(::waitpid(again, &status, 0), again);
  const std::string log = ReadAll(dir.string() + ".log2");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  EXPECT_NE(log.find("resuming from " + *latest + " (step " + std::to_string(step) + ")"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("epoch 2 loss="), std::string::npos) << log;
  auto final_checkpoint = Saver::LatestCheckpoint(dir.string());
  ASSERT_TRUE(final_checkpoint.ok());
  EXPECT_EQ(Saver::StepOf(*final_checkpoint), 2 * 3000 / 50);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fashion_mnist
}  // namespace weir
