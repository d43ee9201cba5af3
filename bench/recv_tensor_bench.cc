// RecvTensor throughput (issue 16) for float tensors of 1-256 MiB, against
// two references on the same loopback:
//   BM_WeirRecvTensor: a step of a grpc:// session whose only large work is
//     one RecvTensor: a variable of N bytes on task ps is read (the read
//     shares the variable's buffer) and received by task worker, which
//     fetches its first element. Both tasks are Servers in this process,
//     each with its own gRPC server; the step's fixed cost (RunGraph to two
//     tasks, about 1 ms) is included.
//     The servers use the bulk-transfer channel (ServerOptions::
//     bulk_transfer, the default): values of 1 MiB and more cross on a TCP
//     connection of their own, read straight into the received tensor.
//   BM_WeirRecvTensorStream: the same with the channel off (the gRPC
//     stream, copied once on the receiver).
//   BM_BareGrpcStream: a generic gRPC service in this process streams the
//     same N bytes in 4 MiB messages that reference one buffer; the client
//     copies each message into an aligned buffer (what Weir's receiver does).
//   BM_RawTcp: write() of N bytes on a loopback TCP connection, read() into
//     a buffer on another thread: the ceiling.
// Throughput is bytes/second of wall time (UseRealTime); proc_cpu_ms is the
// CPU time of the whole process (every thread: sender, receiver, gRPC's)
// per transfer. Weir's recv_ms is the transfer alone: the receiving _Recv
// kernel's time in traced steps run after the timed ones (median). BM_WeirRecvTensor/MiB:0 moves
// one float: the step's fixed cost.
//
//   build/release/bench/recv_tensor_bench --benchmark_min_time=1
//
// To compare builds, run each family in its own process
// (--benchmark_filter=WeirRecvTensor, then 'RawTcp|BareGrpc'): when the
// references free their 64-256 MiB buffers, glibc raises its malloc
// thresholds for the rest of the process, which hides a build's receiver
// page faults (docs/performance.md, "RecvTensor throughput").
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "weir/base/logging.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/server.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr size_t kChunkBytes = 4 << 20;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

struct AlignedBuffer {
  explicit AlignedBuffer(size_t size)
      : data(static_cast<char*>(std::aligned_alloc(64, (size + 63) / 64 * 64))), size(size) {
    std::memset(data, 1, size);  // touched, as a tensor's buffer would be
  }
  ~AlignedBuffer() { std::free(data); }
  char* data;
  size_t size;
};

double ProcessCpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Process CPU time per iteration, from `start_ms`.
void ReportCpu(benchmark::State& state, double start_ms) {
  state.counters["proc_cpu_ms"] = benchmark::Counter(
      (ProcessCpuMs() - start_ms) / static_cast<double>(std::max<int64_t>(state.iterations(), 1)));
}

// ---- Weir --------------------------------------------------------------

// `bulk_transfer`: the servers' ServerOptions::bulk_transfer (values of
// 1 MiB and more cross on the bulk channel; off: on the gRPC stream).
void WeirRecvTensor(benchmark::State& state, bool bulk_transfer) {
  const int64_t elements = std::max<int64_t>(state.range(0) * kMiB / 4, 1);
  RegisterStandardOpsAndKernels();
  RegisterGrpcSessionFactory();
  ClusterSpec cluster = ClusterSpec::FromJobs({{"worker", {{0, StrCat("127.0.0.1:", FreePort())}}},
                                               {"ps", {{0, StrCat("127.0.0.1:", FreePort())}}}})
                            .value();
  std::vector<std::unique_ptr<Server>> servers;
  for (const char* job : {"worker", "ps"}) {
    ServerOptions options;
    options.intra_op_threads = 1;
    options.inter_op_threads = 2;
    options.bulk_transfer = bulk_transfer;
    auto server = Server::Create(ClusterConfig{cluster, job, 0}, options).value();
    CHECK(server->Start().ok());
    servers.push_back(std::move(server));
  }
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto var = ops::VarHandleOp(ps.WithOpName("v"), DT_FLOAT, PartialShape({elements}));
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  ops::AssignVariableOp(ps.WithOpName("init"), var, ops::Fill(ps, dims, 1.f));
  auto read = ops::ReadVariableOp(ps.WithOpName("read"), var, DT_FLOAT);
  auto received = ops::Identity(wk.WithOpName("received"), read);
  ops::Slice(wk.WithOpName("first"), received, {0}, {1});
  SessionOptions options;
  options.target = StrCat("grpc://", servers[0]->bound_address());
  auto session = Session::New(options).value();
  CHECK(session->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Tensor dims_value = Tensor::FromVector(std::vector<int32_t>{static_cast<int32_t>(elements)});
  CHECK(session->Run({{"dims", dims_value}}, {}, {"init"}, &out).ok());
  for (int warm = 0; warm < 2; ++warm) CHECK(session->Run({}, {"first"}, {}, &out).ok());
  const double cpu_start = ProcessCpuMs();
  for (auto _ : state) {
    Status s = session->Run({}, {"first"}, {}, &out);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  ReportCpu(state, cpu_start);
  CHECK(out[0].flat<float>()[0] == 1.f);
  state.SetBytesProcessed(state.iterations() * elements * 4);
  // The transfer itself, without the step around it: the receiving _Recv
  // kernel's time (the RecvTensor call and the bytes) in traced steps run
  // after the timed ones; the median of 9.
  std::vector<double> recv_ms;
  for (int traced = 0; traced < 9; ++traced) {
    RunOptions run_options;
    run_options.trace = true;
    RunMetadata metadata;
    CHECK(session->Run({}, {"first"}, {}, &out, run_options, &metadata).ok());
    for (const NodeExecStats& node : metadata.step_stats.nodes) {
      if (node.op == "_Recv" && node.device.find("/job:worker") != std::string::npos &&
          node.end_micros - node.start_micros > 0) {
        recv_ms.push_back((node.end_micros - node.start_micros) / 1e3);
      }
    }
  }
  if (!recv_ms.empty()) {
    std::nth_element(recv_ms.begin(), recv_ms.begin() + recv_ms.size() / 2, recv_ms.end());
    state.counters["recv_ms"] = benchmark::Counter(recv_ms[recv_ms.size() / 2]);
  }
  session.reset();
}

void BM_WeirRecvTensor(benchmark::State& state) { WeirRecvTensor(state, true); }
void BM_WeirRecvTensorStream(benchmark::State& state) { WeirRecvTensor(state, false); }

// ---- Bare gRPC streaming -----------------------------------------------

// Streams the buffer in kChunkBytes messages that reference it.
class StreamReactor final : public grpc::ServerGenericBidiReactor {
 public:
  explicit StreamReactor(const AlignedBuffer* source) : source_(source) { StartRead(&request_); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
      return;
    }
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok || offset_ == source_->size) {
      Finish(grpc::Status::OK);
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    const size_t size = std::min(kChunkBytes, source_->size - offset_);
    grpc::Slice slice(source_->data + offset_, size, grpc::Slice::STATIC_SLICE);
    message_ = grpc::ByteBuffer(&slice, 1);
    offset_ += size;
    StartWrite(&message_);
  }
  const AlignedBuffer* source_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  size_t offset_ = 0;
};

class StreamService final : public grpc::CallbackGenericService {
 public:
  explicit StreamService(const AlignedBuffer* source) : source_(source) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    return new StreamReactor(source_);
  }

 private:
  const AlignedBuffer* source_;
};

// Reads the stream into `target`, copying each message once.
class StreamClient final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamClient(grpc::GenericStub* stub, AlignedBuffer* target) : target_(target) {
    grpc::Slice slice(std::string("go"));
    request_ = grpc::ByteBuffer(&slice, 1);
    stub->PrepareBidiStreamingCall(&context_, "/bench.Stream/Get", grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&message_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    std::vector<grpc::Slice> slices;
    CHECK(message_.Dump(&slices).ok());
    for (const grpc::Slice& slice : slices) {
      CHECK(offset_ + slice.size() <= target_->size);
      std::memcpy(target_->data + offset_, slice.begin(), slice.size());
      offset_ += slice.size();
    }
    StartRead(&message_);
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }
  size_t Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    CHECK(status_.ok()) << status_.error_message();
    return offset_;
  }

 private:
  AlignedBuffer* target_;
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  size_t offset_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
};

void BM_BareGrpcStream(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0) * kMiB);
  AlignedBuffer source(bytes);
  AlignedBuffer target(bytes);
  StreamService service(&source);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  builder.SetMaxSendMessageSize(-1);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(StrCat("127.0.0.1:", port),
                                           grpc::InsecureChannelCredentials(), args);
  grpc::GenericStub stub(channel);
  const double cpu_start = ProcessCpuMs();
  for (auto _ : state) {
    StreamClient client(&stub, &target);
    CHECK(client.Wait() == bytes);
  }
  ReportCpu(state, cpu_start);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  server->Shutdown();
}

// ---- Raw loopback TCP ----------------------------------------------------

void BM_RawTcp(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0) * kMiB);
  AlignedBuffer source(bytes);
  AlignedBuffer target(bytes);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  CHECK(listen(listener, 1) == 0);
  socklen_t length = sizeof(address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  int writer = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(connect(writer, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  int reader = accept(listener, nullptr, nullptr);
  CHECK(reader >= 0);
  int one = 1;
  setsockopt(writer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // The writer thread sends one buffer per request byte from the reader.
  std::thread sender([&] {
    char go;
    while (read(writer, &go, 1) == 1) {
      size_t sent = 0;
      while (sent < bytes) {
        ssize_t n = write(writer, source.data + sent, bytes - sent);
        CHECK(n > 0);
        sent += static_cast<size_t>(n);
      }
    }
  });
  const double cpu_start = ProcessCpuMs();
  for (auto _ : state) {
    CHECK(write(reader, "g", 1) == 1);
    size_t got = 0;
    while (got < bytes) {
      ssize_t n = read(reader, target.data + got, bytes - got);
      CHECK(n > 0);
      got += static_cast<size_t>(n);
    }
  }
  ReportCpu(state, cpu_start);
  shutdown(reader, SHUT_WR);
  sender.join();
  close(reader);
  close(writer);
  close(listener);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int mib : {1, 4, 16, 64, 256}) b->Arg(mib);
  b->ArgName("MiB")->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_RawTcp)->Apply(Sizes);
BENCHMARK(BM_BareGrpcStream)->Apply(Sizes);
BENCHMARK(BM_WeirRecvTensor)->Arg(0)->Apply(Sizes);
BENCHMARK(BM_WeirRecvTensorStream)->Apply(Sizes);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
