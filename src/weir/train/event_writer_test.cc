// EventFileWriter: file naming, the first event, every kind of event read
// back through the TFRecord reader, flushing by timer, on Flush and on Close
// (records visible while the file is still open), Close's idempotence, and
// bad arguments. TensorBoard's own reader is checked in tests/tensorboard_test.
#include "weir/train/event_writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <regex>
#include <thread>

#include "proto/event.pb.h"
#include "weir/base/file_system.h"
#include "weir/base/record_reader.h"
#include "weir/graph/graph_def_io.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

std::string NewTempDir() {
  std::string pattern = ::testing::TempDir() + "/event_writer_test.XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// Every complete record of the file, in order.
std::vector<wire::Event> ReadEvents(const std::string& path) {
  std::vector<wire::Event> events;
  auto reader = RecordReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return events;
  std::string record;
  Status status;
  while ((status = (*reader)->ReadRecord(&record)).ok()) {
    wire::Event event;
    EXPECT_TRUE(event.ParseFromString(record)) << "record " << events.size() << " of " << path;
    events.push_back(std::move(event));
  }
  EXPECT_EQ(status.code(), Code::kOutOfRange) << status;
  return events;
}

EventFileWriterOptions FlushEvery(double seconds) {
  EventFileWriterOptions options;
  options.flush_secs = seconds;
  return options;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(EventFileWriterTest, FileNameAndFirstEvent) {
  const std::string logdir = NewTempDir() + "/run/a";  // created by the writer
  const double before = Now();
  EventFileWriterOptions options;
  options.filename_suffix = ".v2";
  auto writer = EventFileWriter::Create(logdir, options);
  const double after = Now();
  ASSERT_TRUE(writer.ok()) << writer.status();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string& path = (*writer)->path();
  std::smatch match;
  ASSERT_TRUE(std::regex_match(
      path, match,
      std::regex(logdir + R"(/events\.out\.tfevents\.(\d{10})\.)" + std::string(host) + R"(\.v2)")))
      << path;
  const int64_t seconds = std::stoll(match[1]);
  EXPECT_GE(seconds, static_cast<int64_t>(before));
  EXPECT_LE(seconds, static_cast<int64_t>(after));

  // The file_version event is readable before anything else is written.
  std::vector<wire::Event> events = ReadEvents(path);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GE(events[0].wall_time(), before - 1);
  EXPECT_LE(events[0].wall_time(), after + 1);
  EXPECT_TRUE((*writer)->Close().ok());
}

TEST(EventFileWriterTest, WritersInOneSecondGetTheirOwnFiles) {
  const std::string logdir = NewTempDir();
  std::vector<std::unique_ptr<EventFileWriter>> writers;
  for (int i = 0; i < 3; ++i) {
    auto writer = EventFileWriter::Create(logdir);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->AddScalar("writer", i, i).ok());
    writers.push_back(std::move(writer).value());
  }
  EXPECT_NE(writers[0]->path(), writers[1]->path());
  EXPECT_NE(writers[1]->path(), writers[2]->path());
  EXPECT_NE(writers[0]->path(), writers[2]->path());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(writers[i]->Close().ok());
    std::vector<wire::Event> events = ReadEvents(writers[i]->path());
    ASSERT_EQ(events.size(), 2u) << i;
    EXPECT_EQ(events[1].summary().value(0).simple_value(), i);
  }
}

// Writers created at once (racing for one name) still get a file each.
TEST(EventFileWriterTest, WritersCreatedConcurrentlyGetTheirOwnFiles) {
  const std::string logdir = NewTempDir();
  constexpr int kWriters = 8;
  std::vector<std::unique_ptr<EventFileWriter>> writers(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      auto writer = EventFileWriter::Create(logdir);
      if (writer.ok()) writers[i] = std::move(writer).value();
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::string> paths;
  for (int i = 0; i < kWriters; ++i) {
    ASSERT_NE(writers[i], nullptr) << i;
    ASSERT_TRUE(writers[i]->AddScalar("writer", i, i).ok());
    ASSERT_TRUE(writers[i]->Close().ok());
    paths.push_back(writers[i]->path());
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(std::unique(paths.begin(), paths.end()), paths.end());
  for (int i = 0; i < kWriters; ++i) {
    std::vector<wire::Event> events = ReadEvents(writers[i]->path());
    ASSERT_EQ(events.size(), 2u) << i;
    EXPECT_EQ(events[1].summary().value(0).simple_value(), i);
  }
}

TEST(EventFileWriterTest, ScalarsSummariesAndTheGraph) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto scalars =
      ops::ScalarSummary(root.WithOpName("scalars"),
                         ops::Const(root, Tensor::FromVector<std::string>({"loss", "acc"})), x);
  auto histogram = ops::HistogramSummary(
      root.WithOpName("histogram"), ops::Const(root, Tensor::Scalar<std::string>("x_values")), x);
  ops::MergeSummary(root.WithOpName("merged"), {scalars, histogram});
  ASSERT_TRUE(root.status().ok()) << root.status();
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());

  auto writer = EventFileWriter::Create(NewTempDir());
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->AddGraph(*root.graph()).ok());
  for (int64_t step = 1; step <= 3; ++step) {
    std::vector<Tensor> outputs;
    Tensor values = Tensor::FromVector<float>({0.5f / step, 0.25f * step});
    ASSERT_TRUE((*session)->Run({{"x", values}}, {"merged"}, {}, &outputs).ok());
    ASSERT_TRUE((*writer)->AddSummary(outputs[0].scalar<std::string>(), step).ok());
    ASSERT_TRUE((*writer)->AddScalar("examples_per_second", 1000.0 * step, step).ok());
  }
  ASSERT_TRUE((*writer)->Close().ok());

  std::vector<wire::Event> events = ReadEvents((*writer)->path());
  ASSERT_EQ(events.size(), 1u + 1 + 3 * 2);
  auto graph = ParseGraphDef(events[1].graph_def());
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<std::string> names;
  for (const NodeDef& node : graph->nodes) names.push_back(node.name);
  for (const char* name : {"x", "scalars", "histogram", "merged"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  for (int64_t step = 1; step <= 3; ++step) {
    const wire::Event& merged = events[2 * step];
    EXPECT_EQ(merged.step(), step);
    ASSERT_EQ(merged.summary().value_size(), 3);
    EXPECT_EQ(merged.summary().value(0).tag(), "loss");
    EXPECT_EQ(merged.summary().value(0).simple_value(), 0.5f / step);
    EXPECT_EQ(merged.summary().value(1).tag(), "acc");
    EXPECT_EQ(merged.summary().value(1).simple_value(), 0.25f * step);
    EXPECT_EQ(merged.summary().value(2).tag(), "x_values");
    EXPECT_EQ(merged.summary().value(2).histo().num(), 2);
    EXPECT_EQ(merged.summary().value(2).histo().sum(),
              static_cast<double>(0.5f / step) + static_cast<double>(0.25f * step));
    const wire::Event& scalar = events[2 * step + 1];
    EXPECT_EQ(scalar.step(), step);
    ASSERT_EQ(scalar.summary().value_size(), 1);
    EXPECT_EQ(scalar.summary().value(0).tag(), "examples_per_second");
    EXPECT_EQ(scalar.summary().value(0).simple_value(), 1000.0f * step);
    EXPECT_GE(scalar.wall_time(), merged.wall_time());
  }
}

TEST(EventFileWriterTest, FlushMakesEventsReadableWhileOpen) {
  auto writer = EventFileWriter::Create(NewTempDir(), FlushEvery(1e9));
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int step = 0; step < 5; ++step) ASSERT_TRUE((*writer)->AddScalar("s", step, step).ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  std::vector<wire::Event> events = ReadEvents((*writer)->path());
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[5].step(), 4);
  ASSERT_TRUE((*writer)->AddScalar("s", 5, 5).ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  EXPECT_EQ(ReadEvents((*writer)->path()).size(), 7u);
}

TEST(EventFileWriterTest, BackgroundThreadFlushesOnItsTimer) {
  auto writer = EventFileWriter::Create(NewTempDir(), FlushEvery(0.05));
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->AddScalar("timer", 42, 7).ok());
  // No Flush: the timer must make the event readable. A generous deadline,
  // only so that a broken timer fails instead of hanging.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<wire::Event> events;
  while ((events = ReadEvents((*writer)->path())).size() < 2 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].step(), 7);
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 42);
}

TEST(EventFileWriterTest, CloseIsIdempotentAndEndsTheWriter) {
  // A timer that would not fire for decades: Close must not wait for it.
  auto writer = EventFileWriter::Create(NewTempDir(), FlushEvery(1e300));
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->AddScalar("last", 1, 1).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  EXPECT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadEvents((*writer)->path()).size(), 2u);  // Close flushed
  EXPECT_EQ((*writer)->AddScalar("late", 2, 2).code(), Code::kFailedPrecondition);
  EXPECT_EQ((*writer)->AddSummary("", 2).code(), Code::kFailedPrecondition);
  EXPECT_EQ((*writer)->Flush().code(), Code::kFailedPrecondition);
  EXPECT_EQ(ReadEvents((*writer)->path()).size(), 2u);
}

TEST(EventFileWriterTest, DestructorClosesAndFlushes) {
  std::string path;
  {
    auto writer = EventFileWriter::Create(NewTempDir(), FlushEvery(1e9));
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->AddScalar("unflushed", 3, 3).ok());
    path = (*writer)->path();
  }
  std::vector<wire::Event> events = ReadEvents(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].summary().value(0).tag(), "unflushed");
}

TEST(EventFileWriterTest, ConcurrentWritersLoseNoEvent) {
  auto writer = EventFileWriter::Create(NewTempDir(), FlushEvery(0.001));
  ASSERT_TRUE(writer.ok()) << writer.status();
  constexpr int kThreads = 4, kEvents = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEvents; ++i) {
        EXPECT_TRUE((*writer)->AddScalar(StrCat("t", t), i, t * kEvents + i).ok());
        if (i % 50 == 0) {
          EXPECT_TRUE((*writer)->Flush().ok());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE((*writer)->Close().ok());
  std::vector<wire::Event> events = ReadEvents((*writer)->path());
  ASSERT_EQ(events.size(), 1u + kThreads * kEvents);
  std::vector<bool> seen(kThreads * kEvents, false);
  for (size_t i = 1; i < events.size(); ++i) {
    const int64_t step = events[i].step();
    ASSERT_TRUE(step >= 0 && step < kThreads * kEvents) << step;
    EXPECT_FALSE(seen[step]) << step;
    seen[step] = true;
    EXPECT_EQ(events[i].summary().value(0).simple_value(), step % kEvents);
  }
}

TEST(EventFileWriterTest, BadArguments) {
  const std::string dir = NewTempDir();
  for (double flush_secs : {0.0, -1.0, std::nan("")}) {
    auto writer = EventFileWriter::Create(dir, FlushEvery(flush_secs));
    EXPECT_EQ(writer.status().code(), Code::kInvalidArgument) << flush_secs;
  }
  EXPECT_EQ(EventFileWriter::Create("").status().code(), Code::kInvalidArgument);
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/file", "not a directory").ok());
  auto writer = EventFileWriter::Create(dir + "/file");
  EXPECT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find(dir + "/file"), std::string::npos) << writer.status();

  auto good = EventFileWriter::Create(dir);
  ASSERT_TRUE(good.ok()) << good.status();
  Status status = (*good)->AddSummary("\xff\xff not a summary", 9);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("step 9"), std::string::npos) << status;
  ASSERT_TRUE((*good)->Close().ok());
  EXPECT_EQ(ReadEvents((*good)->path()).size(), 1u);  // the bad summary was not written
}

}  // namespace
}  // namespace weir
