// The reader ops in a session (in runtime/, so the threads run under TSan
// too): each reader kind against records computed independently, file-name
// queues and their end, errors naming the reader, file and offset, waiting
// without a thread (timeout, Close, a wake-up by enqueue), and many threads
// sharing one reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "weir/base/file_system.h"
#include "weir/base/record_writer.h"
#include "weir/base/zlib_stream.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

Tensor Strings(const std::vector<std::string>& values) { return Tensor::FromVector(values); }

std::vector<std::string> StringValues(const Tensor& t) {
  return {t.data<std::string>(), t.data<std::string>() + t.NumElements()};
}

// A graph with a string FIFO queue "q" fed by "enqueue" (placeholder
// "names") and closed by "close", and the reader `make` builds as "reader"
// with "read", "read_up_to" (placeholder "n"), "produced", "completed",
// "reset".
class ReaderGraph {
 public:
  explicit ReaderGraph(const std::function<Output(const Scope&)>& make,
                       DType queue_dtype = DT_STRING) {
    Scope s = root_;
    Output queue = ops::FIFOQueueV2(s.WithOpName("q"), {queue_dtype});
    Output names = ops::Placeholder(s.WithOpName("names"), queue_dtype);
    ops::QueueEnqueueManyV2(s.WithOpName("enqueue"), queue, {names});
    ops::QueueCloseV2(s.WithOpName("close"), queue);
    Output reader = make(s.WithOpName("reader"));
    ops::ReaderReadV2(s.WithOpName("read"), reader, queue);
    Output n = ops::Placeholder(s.WithOpName("n"), DT_INT64);
    ops::ReaderReadUpToV2(s.WithOpName("read_up_to"), reader, queue, n);
    ops::ReaderNumRecordsProducedV2(s.WithOpName("produced"), reader);
    ops::ReaderNumWorkUnitsCompletedV2(s.WithOpName("completed"), reader);
    ops::ReaderResetV2(s.WithOpName("reset"), reader);
    EXPECT_TRUE(root_.ok()) << root_.status();
    SessionOptions options;
    options.inter_op_threads = 4;
    session_ = std::move(Session::New(options)).value();
    Status created = session_->Create(root_.ToGraphDef());
    EXPECT_TRUE(created.ok()) << created;
  }

  Status Enqueue(const std::vector<std::string>& names) {
    std::vector<Tensor> out;
    return session_->Run({{"names", Strings(names)}}, {}, {"enqueue"}, &out);
  }
  Status Close() {
    std::vector<Tensor> out;
    return session_->Run({}, {}, {"close"}, &out);
  }
  // One ReaderReadV2: key and value.
  Status Read(std::string* key, std::string* value, const RunOptions& options = {}) {
    std::vector<Tensor> out;
    WEIR_RETURN_IF_ERROR(session_->Run({}, {"read:0", "read:1"}, {}, &out, options));
    EXPECT_EQ(out[0].shape().rank(), 0);
    *key = out[0].scalar<std::string>();
    *value = out[1].scalar<std::string>();
    return Status::OK();
  }
  Status ReadUpTo(int64_t n, std::vector<std::string>* keys, std::vector<std::string>* values) {
    std::vector<Tensor> out;
    WEIR_RETURN_IF_ERROR(session_->Run({{"n", Tensor::Scalar<int64_t>(n)}},
                                       {"read_up_to:0", "read_up_to:1"}, {}, &out));
    *keys = StringValues(out[0]);
    *values = StringValues(out[1]);
    return Status::OK();
  }
  // Every value until the first error, which is returned.
  Status ReadAll(std::vector<std::string>* keys, std::vector<std::string>* values) {
    while (true) {
      std::string key, value;
      Status s = Read(&key, &value);
      if (!s.ok()) return s;
      keys->push_back(key);
      values->push_back(value);
    }
  }
  int64_t Count(const std::string& node) {
    std::vector<Tensor> out;
    Status s = session_->Run({}, {node}, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    return s.ok() ? out[0].scalar<int64_t>() : -1;
  }
  Session* session() { return session_.get(); }

 private:
  Scope root_ = Scope::NewRootScope();
  std::unique_ptr<Session> session_;
};

Output MakeTFRecordReader(const Scope& s) { return ops::TFRecordReaderV2(s); }

class ReaderOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_reader_ops_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string WriteRecords(const std::string& name, const std::vector<std::string>& records,
                           RecordCompression compression = RecordCompression::kNone) {
    auto writer = RecordWriter::Create(Path(name), {.compression = compression});
    EXPECT_TRUE(writer.ok());
    for (const std::string& r : records) EXPECT_TRUE((*writer)->Write(r).ok());
    EXPECT_TRUE((*writer)->Close().ok());
    return Path(name);
  }
  std::string WriteText(const std::string& name, const std::string& contents) {
    EXPECT_TRUE(WriteStringToFileAtomic(Path(name), contents).ok());
    return Path(name);
  }

  std::string dir_;
};

TEST_F(ReaderOpsTest, TFRecordReaderReadsEveryFileOfTheQueueThenOutOfRange) {
  std::string a = WriteRecords("a", {"a0", "", "a2"});
  std::string b = WriteRecords("b", {std::string("\0\xff", 2)});
  std::string empty = WriteRecords("empty", {});
  ReaderGraph g(MakeTFRecordReader);
  ASSERT_TRUE(g.Enqueue({a, empty, b}).ok());
  ASSERT_TRUE(g.Close().ok());
  std::vector<std::string> keys, values;
  Status s = g.ReadAll(&keys, &values);
  EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
  // TensorFlow's keys: "<file>:<byte offset of the record>".
  EXPECT_EQ(keys, (std::vector<std::string>{a + ":0", a + ":18", a + ":34", b + ":0"}));
  EXPECT_EQ(values, (std::vector<std::string>{"a0", "", "a2", std::string("\0\xff", 2)}));
  EXPECT_EQ(g.Count("produced"), 4);
  EXPECT_EQ(g.Count("completed"), 3);
  // The end stays the end.
  std::string key, value;
  EXPECT_EQ(g.Read(&key, &value).code(), Code::kOutOfRange);
}

TEST_F(ReaderOpsTest, TFRecordReaderCompressed) {
  for (RecordCompression c : {RecordCompression::kZlib, RecordCompression::kGzip}) {
    std::string name(RecordCompressionName(c));
    std::string file = WriteRecords(name, {"x", std::string(10000, 'y'), "z"}, c);
    ReaderGraph g([&](const Scope& s) {
      return ops::TFRecordReaderV2(s, {{"compression_type", name}});
    });
    ASSERT_TRUE(g.Enqueue({file}).ok());
    ASSERT_TRUE(g.Close().ok());
    std::vector<std::string> keys, values;
    EXPECT_EQ(g.ReadAll(&keys, &values).code(), Code::kOutOfRange);
    EXPECT_EQ(values, (std::vector<std::string>{"x", std::string(10000, 'y'), "z"}));
    EXPECT_EQ(keys.back(), file + ":" + std::to_string(17 + 10016));
  }
}

TEST_F(ReaderOpsTest, ReadUpToGivesBatchesAndASmallerLastOne) {
  std::vector<std::string> records;
  for (int i = 0; i < 7; ++i) records.push_back(StrCat("r", i));
  std::string a = WriteRecords("a", {records.begin(), records.begin() + 4});
  std::string b = WriteRecords("b", {records.begin() + 4, records.end()});
  ReaderGraph g(MakeTFRecordReader);
  ASSERT_TRUE(g.Enqueue({a, b}).ok());
  ASSERT_TRUE(g.Close().ok());
  std::vector<std::string> all, keys, values;
  ASSERT_TRUE(g.ReadUpTo(3, &keys, &values).ok());
  EXPECT_EQ(values, (std::vector<std::string>{"r0", "r1", "r2"}));
  // The queue still holds b: the batch continues into it.
  ASSERT_TRUE(g.ReadUpTo(3, &keys, &values).ok());
  EXPECT_EQ(values, (std::vector<std::string>{"r3", "r4", "r5"}));
  EXPECT_EQ(keys[1], b + ":0");
  ASSERT_TRUE(g.ReadUpTo(3, &keys, &values).ok());
  EXPECT_EQ(values, std::vector<std::string>{"r6"});
  Status s = g.ReadUpTo(3, &keys, &values);
  EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
  for (int64_t bad : {int64_t{0}, int64_t{-2}}) {
    s = g.ReadUpTo(bad, &keys, &values);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
    EXPECT_TRUE(Mentions(s, "num_records")) << s;
  }
  // A huge num_records costs nothing up front.
  ReaderGraph g2(MakeTFRecordReader);
  ASSERT_TRUE(g2.Enqueue({a}).ok());
  ASSERT_TRUE(g2.Close().ok());
  ASSERT_TRUE(g2.ReadUpTo(int64_t{1} << 62, &keys, &values).ok());
  EXPECT_EQ(values.size(), 4u);
}

// The records FixedLengthRecordReader must give, computed directly (the
// rule TensorFlow 2.21's reader follows, checked on these cases with it).
std::vector<std::string> FixedLengthRecords(const std::string& file, int64_t header, int64_t record,
                                            int64_t footer, int64_t hop) {
  std::vector<std::string> out;
  int64_t step = hop > 0 ? hop : record;
  for (int64_t start = header; start + record + footer <= int64_t(file.size()); start += step) {
    out.push_back(file.substr(start, record));
  }
  return out;
}

TEST_F(ReaderOpsTest, FixedLengthRecordReaderAsTensorFlow) {
  std::string contents;
  for (int i = 0; i < 103; ++i) contents.push_back(static_cast<char>(i * 7));
  struct Case {
    int64_t header, record, footer, hop;
  };
  for (Case c : {Case{0, 10, 0, 0}, Case{5, 10, 3, 0}, Case{2, 8, 0, 3}, Case{1, 4, 2, 9},
                 Case{200, 4, 0, 0}, Case{0, 103, 0, 0}, Case{0, 104, 0, 0}}) {
    SCOPED_TRACE(testing::Message()
                 << c.header << " " << c.record << " " << c.footer << " " << c.hop);
    for (std::string encoding : {"", "GZIP"}) {
      std::string file = Path("fixed" + encoding);
      if (encoding.empty()) {
        WriteText("fixed", contents);
      } else {
        std::string compressed;
        auto z = ZlibCompressor::Create(RecordCompression::kGzip, [&](std::string_view b) {
          compressed.append(b);
          return Status::OK();
        });
        ASSERT_TRUE((*z)->Append(contents).ok());
        ASSERT_TRUE((*z)->Finish().ok());
        WriteText("fixedGZIP", compressed);
      }
      ReaderGraph g([&](const Scope& s) {
        return ops::FixedLengthRecordReaderV2(s, c.record,
                                              {{"header_bytes", c.header},
                                               {"footer_bytes", c.footer},
                                               {"hop_bytes", c.hop},
                                               {"encoding", encoding}});
      });
      ASSERT_TRUE(g.Enqueue({file}).ok());
      ASSERT_TRUE(g.Close().ok());
      std::vector<std::string> keys, values;
      EXPECT_EQ(g.ReadAll(&keys, &values).code(), Code::kOutOfRange);
      std::vector<std::string> expected =
          FixedLengthRecords(contents, c.header, c.record, c.footer, c.hop);
      EXPECT_EQ(values, expected);
      if (!keys.empty()) {
        EXPECT_EQ(keys.back(), file + ":" + std::to_string(keys.size() - 1));
      }
    }
  }
}

TEST_F(ReaderOpsTest, TextLineReaderSkipsHeadersAndNumbersLines) {
  std::string a = WriteText("a.csv", "h1\nh2\nx,1\r\n\ny,2");
  std::string b = WriteText("b.csv", "only header\n");
  std::string c = WriteText("c.csv", "h\nz\n");
  ReaderGraph g([](const Scope& s) {
    return ops::TextLineReaderV2(s, {{"skip_header_lines", 2}});
  });
  ASSERT_TRUE(g.Enqueue({a, b, c}).ok());
  ASSERT_TRUE(g.Close().ok());
  std::vector<std::string> keys, values;
  EXPECT_EQ(g.ReadAll(&keys, &values).code(), Code::kOutOfRange);
  EXPECT_EQ(values, (std::vector<std::string>{"x,1", "", "y,2"}));
  // Line numbers count from 1 and include the skipped header lines.
  EXPECT_EQ(keys, (std::vector<std::string>{a + ":3", a + ":4", a + ":5"}));
}

TEST_F(ReaderOpsTest, WholeFileReader) {
  std::string a = WriteText("a", std::string("whole\0file", 10));
  std::string e = WriteText("e", "");
  ReaderGraph g([](const Scope& s) { return ops::WholeFileReaderV2(s); });
  ASSERT_TRUE(g.Enqueue({a, e}).ok());
  ASSERT_TRUE(g.Close().ok());
  std::vector<std::string> keys, values;
  EXPECT_EQ(g.ReadAll(&keys, &values).code(), Code::kOutOfRange);
  EXPECT_EQ(keys, (std::vector<std::string>{a, e}));
  EXPECT_EQ(values, (std::vector<std::string>{std::string("whole\0file", 10), ""}));
}

TEST_F(ReaderOpsTest, ResetDropsTheFileAndTheCounts) {
  std::string a = WriteRecords("a", {"a0", "a1", "a2"});
  std::string b = WriteRecords("b", {"b0"});
  ReaderGraph g(MakeTFRecordReader);
  ASSERT_TRUE(g.Enqueue({a, b}).ok());
  std::string key, value;
  ASSERT_TRUE(g.Read(&key, &value).ok());
  EXPECT_EQ(g.Count("produced"), 1);
  std::vector<Tensor> out;
  ASSERT_TRUE(g.session()->Run({}, {}, {"reset"}, &out).ok());
  EXPECT_EQ(g.Count("produced"), 0);
  EXPECT_EQ(g.Count("completed"), 0);
  ASSERT_TRUE(g.Read(&key, &value).ok());
  EXPECT_EQ(value, "b0");  // the rest of a was dropped
}

TEST_F(ReaderOpsTest, BadFilesAreErrorsNamingReaderFileAndOffsetThenSkipped) {
  std::string good = WriteRecords("good", {"g0"});
  std::string corrupt = WriteRecords("corrupt", {"c0", "c1"});
  std::string bytes = *ReadFileToString(corrupt);
  bytes[18 + 12] ^= 1;  // c1's data
  WriteText("corrupt", bytes);
  ReaderGraph g(MakeTFRecordReader);
  ASSERT_TRUE(g.Enqueue({corrupt, Path("missing"), good}).ok());
  ASSERT_TRUE(g.Close().ok());
  std::string key, value;
  ASSERT_TRUE(g.Read(&key, &value).ok());
  EXPECT_EQ(value, "c0");
  Status s = g.Read(&key, &value);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_TRUE(Mentions(s, "node 'read'")) << s;
  EXPECT_TRUE(Mentions(s, "reader 'reader'")) << s;
  EXPECT_TRUE(Mentions(s, "byte offset 18 of '" + corrupt + "'")) << s;
  s = g.Read(&key, &value);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(Mentions(s, Path("missing"))) << s;
  ASSERT_TRUE(g.Read(&key, &value).ok());
  EXPECT_EQ(value, "g0");
  EXPECT_EQ(g.Read(&key, &value).code(), Code::kOutOfRange);
}

TEST_F(ReaderOpsTest, BadAttrsAndMisuse) {
  std::vector<Tensor> out;
  auto run_reader = [&](const std::function<Output(const Scope&)>& make) {
    ReaderGraph g(make);
    return g.session()->Run({}, {"reader"}, {}, &out);
  };
  Status s = run_reader([](const Scope& s) {
    return ops::TFRecordReaderV2(s, {{"compression_type", "gzip"}});
  });
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Mentions(s, "compression_type")) << s;
  s = run_reader([](const Scope& s) { return ops::FixedLengthRecordReaderV2(s, 0); });
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Mentions(s, "record_bytes")) << s;
  s = run_reader([](const Scope& s) {
    return ops::FixedLengthRecordReaderV2(s, 4, {{"hop_bytes", int64_t{-1}}});
  });
  EXPECT_TRUE(Mentions(s, "hop_bytes")) << s;
  s = run_reader([](const Scope& s) {
    return ops::FixedLengthRecordReaderV2(s, 4, {{"encoding", "LZ4"}});
  });
  EXPECT_TRUE(Mentions(s, "encoding")) << s;
  s = run_reader([](const Scope& s) {
    return ops::TextLineReaderV2(s, {{"skip_header_lines", int64_t{-1}}});
  });
  EXPECT_TRUE(Mentions(s, "skip_header_lines")) << s;

  // One shared name, two kinds of reader.
  Scope root = Scope::NewRootScope();
  ops::TFRecordReaderV2(root.WithOpName("r1"), {{"shared_name", "shared"}});
  ops::TextLineReaderV2(root.WithOpName("r2"), {{"shared_name", "shared"}});
  auto session = std::move(Session::New({})).value();
  ASSERT_TRUE(session->Create(root.ToGraphDef()).ok());
  ASSERT_TRUE(session->Run({}, {"r1"}, {}, &out).ok());
  s = session->Run({}, {"r2"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Mentions(s, "TFRecordReaderV2")) << s;

  // A queue of something other than file names.
  ReaderGraph ints(MakeTFRecordReader, DT_INT32);
  ASSERT_TRUE(ints.session()
                  ->Run({{"names", Tensor::FromVector<int32_t>({1})}}, {}, {"enqueue"}, &out)
                  .ok());
  std::string key, value;
  s = ints.Read(&key, &value);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Mentions(s, "string file names")) << s;

  // Handles swapped: a queue where the reader goes, a reader for the queue.
  Scope swapped = Scope::NewRootScope();
  Output queue = ops::FIFOQueueV2(swapped.WithOpName("q"), {DT_STRING});
  Output reader = ops::TFRecordReaderV2(swapped.WithOpName("reader"));
  ops::ReaderReadV2(swapped.WithOpName("read"), queue, reader);
  ops::ReaderNumRecordsProducedV2(swapped.WithOpName("produced"), queue);
  auto session2 = std::move(Session::New({})).value();
  ASSERT_TRUE(session2->Create(swapped.ToGraphDef()).ok());
  for (const char* node : {"read", "produced"}) {
    s = session2->Run({}, {StrCat(node, ":0")}, {}, &out);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
    EXPECT_TRUE(Mentions(s, "expected a Reader")) << s;
  }
}

TEST_F(ReaderOpsTest, WaitingReadsEndOnTimeoutAndClose) {
  std::string a = WriteRecords("a", {"a0"});
  ReaderGraph g(MakeTFRecordReader);
  std::string key, value;
  // Nothing queued: the read waits, and the step's timeout ends it.
  RunOptions timeout;
  timeout.timeout_ms = 50;
  Status s = g.Read(&key, &value, timeout);
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;

  // One read waits on the queue; a second waits in line behind it and
  // leaves on its own timeout; an enqueue from another step wakes the first.
  std::atomic<bool> first_done{false};
  Status first;
  std::string first_value;
  std::thread waiter([&] {
    std::string k;
    first = g.Read(&k, &first_value);
    first_done = true;
  });
  ::usleep(20000);  // (if the second read comes first, the roles swap; the checks hold)
  s = g.Read(&key, &value, timeout);
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;
  EXPECT_FALSE(first_done);
  ASSERT_TRUE(g.Enqueue({a}).ok());
  waiter.join();
  ASSERT_TRUE(first.ok()) << first;
  EXPECT_EQ(first_value, "a0");

  // Closing the queue ends a waiting read with OutOfRange.
  std::thread closer([&] {
    ::usleep(20000);
    EXPECT_TRUE(g.Close().ok());
  });
  s = g.Read(&key, &value);
  closer.join();
  EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
}

TEST_F(ReaderOpsTest, SessionCloseEndsWaitingReads) {
  ReaderGraph g(MakeTFRecordReader);
  Status results[2];
  std::thread readers[2];
  for (int i = 0; i < 2; ++i) {
    readers[i] = std::thread([&, i] {
      std::string key, value;
      results[i] = g.Read(&key, &value);
    });
  }
  ::usleep(50000);
  ASSERT_TRUE(g.session()->Close().ok());
  for (auto& t : readers) t.join();
  for (const Status& s : results) EXPECT_EQ(s.code(), Code::kCancelled) << s;
}

// Threads sharing one reader see every record exactly once.
TEST_F(ReaderOpsTest, ThreadsSharingAReaderLoseAndDuplicateNothing) {
  std::vector<std::string> files;
  std::set<std::string> expected;
  for (int f = 0; f < 8; ++f) {
    std::vector<std::string> records;
    for (int r = 0; r < 150; ++r) records.push_back(StrCat("file", f, "-record", r));
    expected.insert(records.begin(), records.end());
    files.push_back(WriteRecords(StrCat("f", f), records));
  }
  ReaderGraph g(MakeTFRecordReader);
  ASSERT_TRUE(g.Enqueue(files).ok());
  ASSERT_TRUE(g.Close().ok());
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> seen(kThreads);
  std::vector<Status> ends(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (true) {
        std::vector<std::string> keys, values;
        Status s = (t % 2 == 0) ? g.ReadUpTo(7, &keys, &values) : [&] {
          std::string k, v;
          Status r = g.Read(&k, &v);
          values.push_back(v);
          return r;
        }();
        if (!s.ok()) {
          ends[t] = s;
          return;
        }
        seen[t].insert(seen[t].end(), values.begin(), values.end());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::multiset<std::string> all;
  for (const auto& v : seen) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), expected.size());
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), expected);
  for (const Status& s : ends) EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
  EXPECT_EQ(g.Count("produced"), 1200);
  EXPECT_EQ(g.Count("completed"), 8);
}

TEST_F(ReaderOpsTest, MatchingFilesReadFileWriteFile) {
  WriteText("x-2", "");
  WriteText("x-1", "");
  WriteText("y-1", "");
  Scope root = Scope::NewRootScope();
  Output pattern = ops::Placeholder(root.WithOpName("pattern"), DT_STRING);
  ops::MatchingFiles(root.WithOpName("match"), pattern);
  Output filename = ops::Placeholder(root.WithOpName("filename"), DT_STRING);
  Output contents = ops::Placeholder(root.WithOpName("contents"), DT_STRING);
  ops::WriteFile(root.WithOpName("write"), filename, contents);
  ops::ReadFile(root.WithOpName("read"), filename);
  ASSERT_TRUE(root.ok()) << root.status();
  auto session = std::move(Session::New({})).value();
  ASSERT_TRUE(session->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(
      session->Run({{"pattern", Tensor::Scalar<std::string>(Path("x-*"))}}, {"match"}, {}, &out)
          .ok());
  EXPECT_EQ(StringValues(out[0]), (std::vector<std::string>{Path("x-1"), Path("x-2")}));
  // Several patterns: one sorted list.
  ASSERT_TRUE(
      session->Run({{"pattern", Strings({Path("y-*"), Path("x-2")})}}, {"match"}, {}, &out).ok());
  EXPECT_EQ(StringValues(out[0]), (std::vector<std::string>{Path("x-2"), Path("y-1")}));
  ASSERT_TRUE(
      session->Run({{"pattern", Tensor::Scalar<std::string>(Path("none-*"))}}, {"match"}, {}, &out)
          .ok());
  EXPECT_EQ(out[0].NumElements(), 0);
  EXPECT_EQ(out[0].shape().rank(), 1);

  std::string target = Path("new/dir/file");
  std::string data("bytes\0here", 10);
  ASSERT_TRUE(session
                  ->Run({{"filename", Tensor::Scalar<std::string>(target)},
                         {"contents", Tensor::Scalar<std::string>(data)}},
                        {}, {"write"}, &out)
                  .ok());
  EXPECT_EQ(*ReadFileToString(target), data);
  ASSERT_TRUE(
      session->Run({{"filename", Tensor::Scalar<std::string>(target)}}, {"read"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<std::string>(), data);
  Status s = session->Run({{"filename", Tensor::Scalar<std::string>(Path("missing"))}}, {"read"},
                          {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_TRUE(Mentions(s, Path("missing"))) << s;
  s = session->Run({{"filename", Strings({"a", "b"})}}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
}

}  // namespace
}  // namespace weir
