// TFRecord read throughput from the page cache, in MB/s of the file (or of
// the uncompressed stream for GZIP), against a plain sequential read(2) of
// the same bytes in 256 KiB pieces: the ceiling any reader of the file has.
// The file: 100,000 records of 1,000 bytes (Fashion-MNIST-like: about half
// zeros), ~101.6 MB, written once to $WEIR_TFRECORD_BENCH_DIR (default
// /tmp/weir_tfrecord_bench) and kept, so bench/peers/tfrecord_peers.py reads
// the very same file with TensorFlow.
//
//   build/release/bench/tfrecord_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "weir/base/crc32c.h"
#include "weir/base/file_system.h"
#include "weir/base/logging.h"
#include "weir/base/record_reader.h"
#include "weir/base/record_writer.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

constexpr int kRecords = 100000;
constexpr int kRecordBytes = 1000;

std::string BenchDir() {
  const char* dir = std::getenv("WEIR_TFRECORD_BENCH_DIR");
  return dir != nullptr ? dir : "/tmp/weir_tfrecord_bench";
}

// The bench file in `compression`, written on first use (and read once, so
// it is in the page cache).
const std::string& BenchFile(RecordCompression compression) {
  static std::string paths[3];
  std::string& path = paths[static_cast<int>(compression)];
  if (!path.empty()) return path;
  CHECK_OK(RecursivelyCreateDir(BenchDir()));
  path = BenchDir() + (compression == RecordCompression::kNone   ? "/records.tfrecord"
                       : compression == RecordCompression::kGzip ? "/records.tfrecord.gz"
                                                                 : "/records.tfrecord.zz");
  if (!FileExists(path)) {
    std::mt19937 rng(1);
    auto writer = RecordWriter::Create(path, {.compression = compression});
    CHECK_OK(writer.status());
    std::string record(kRecordBytes, '\0');
    for (int i = 0; i < kRecords; ++i) {
      for (char& c : record) c = (rng() & 1) ? static_cast<char>(rng()) : '\0';
      CHECK_OK((*writer)->Write(record));
    }
    CHECK_OK((*writer)->Close());
  }
  CHECK_OK(ReadFileToString(path).status());
  return path;
}

constexpr int64_t kStreamBytes = int64_t{kRecords} * (kRecordBytes + 16);

void BM_SequentialRead(benchmark::State& state) {
  const std::string& path = BenchFile(RecordCompression::kNone);
  std::vector<char> buffer(256 * 1024);
  const bool crc = state.range(0) != 0;
  uint32_t sum = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    auto file = SequentialFile::Open(path);
    CHECK_OK(file.status());
    while (true) {
      StatusOr<size_t> got = (*file)->Read(buffer.data(), buffer.size());
      CHECK_OK(got.status());
      if (*got == 0) break;
      if (crc) sum = crc32c::Extend(sum, buffer.data(), *got);
      bytes += static_cast<int64_t>(*got);
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_SequentialRead)
    ->ArgName("crc32c")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RecordReader(benchmark::State& state) {
  const auto compression = static_cast<RecordCompression>(state.range(0));
  const std::string& path = BenchFile(compression);
  std::string record;
  int64_t records = 0;
  for (auto _ : state) {
    auto reader = RecordReader::Open(path, compression);
    CHECK_OK(reader.status());
    Status s;
    while ((s = (*reader)->ReadRecord(&record)).ok()) ++records;
    CHECK(s.code() == Code::kOutOfRange) << s;
  }
  CHECK(records == int64_t{kRecords} * state.iterations());
  state.SetBytesProcessed(kStreamBytes * state.iterations());
  state.SetItemsProcessed(records);
}
BENCHMARK(BM_RecordReader)
    ->ArgName("compression")  // 0 none, 1 ZLIB, 2 GZIP
    ->Arg(static_cast<int>(RecordCompression::kNone))
    ->Arg(static_cast<int>(RecordCompression::kGzip))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Through the graph: a file-name queue, TFRecordReaderV2 and
// ReaderReadUpToV2(batch) run by Session::Run until the file is done.
void BM_ReaderOps(benchmark::State& state) {
  const std::string& path = BenchFile(RecordCompression::kNone);
  const int64_t batch = state.range(0);
  Scope root = Scope::NewRootScope();
  Output queue = ops::FIFOQueueV2(root.WithOpName("queue"), {DT_STRING});
  ops::QueueEnqueueV2(root.WithOpName("enqueue"), queue, {Tensor::Scalar<std::string>(path)});
  Output reader = ops::TFRecordReaderV2(root.WithOpName("reader"));
  ops::ReaderReadUpToV2(root.WithOpName("read"), reader, queue, batch);
  CHECK_OK(root.status());
  SessionOptions options;
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  auto session = std::move(Session::New(options)).value();
  CHECK_OK(session->Create(root.ToGraphDef()));
  std::vector<Tensor> out;
  int64_t records = 0;
  for (auto _ : state) {
    CHECK_OK(session->Run({}, {}, {"enqueue"}, &out));
    for (int64_t done = 0; done < kRecords; done += out[0].NumElements()) {
      CHECK_OK(session->Run({}, {"read:1"}, {}, &out));
    }
    records += kRecords;
  }
  state.SetBytesProcessed(kStreamBytes * state.iterations());
  state.SetItemsProcessed(records);
}
BENCHMARK(BM_ReaderOps)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
