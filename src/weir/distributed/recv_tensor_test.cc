// RecvTensor between in-process servers on loopback: the copies a value
// takes between tasks, values over a small message limit (split into
// several messages), dead values, strings and empty tensors across it.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "proto/worker_service.pb.h"
#include "weir/base/notification.h"
#include "weir/base/sanitizers.h"
#include "weir/distributed/bulk_transfer.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/test_cluster_test_util.h"
#include "weir/distributed/tls_test_util.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/distributed/worker.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/allocator.h"
#include "weir/framework/rendezvous.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using namespace std::chrono_literals;
const char kWorker0[] = "/job:worker/replica:0/task:0";
const char kPs0[] = "/job:ps/replica:0/task:0";

// This process's thread count (Linux).
int Threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

class RecvTensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    RegisterGrpcSessionFactory();
  }
  // The stream path's tests turn the bulk channel off (their values are
  // 1 MiB and more); the bulk channel's turn it on.
  void StartCluster(int64_t max_message_bytes, bool bulk_transfer = false) {
    ServerOptions options;
    options.security.max_message_bytes = max_message_bytes;
    options.bulk_transfer = bulk_transfer;
    auto cluster = TestCluster::StartWithOptions({{"worker", 1}, {"ps", 1}}, options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  std::unique_ptr<Session> Remote(const Scope& root) {
    EXPECT_TRUE(root.ok()) << root.status();
    auto session = cluster_.NewSession(kWorker0, root.ToGraphDef());
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }

  TestCluster cluster_;
};

Tensor Int32Vector(std::vector<int32_t> values) { return Tensor::FromVector(values); }

// Counted: bytes of tensor values that Weir's code copies on the RecvTensor
// path (wire_tensor.h GetWireCopyCounts), both tasks being in this process.
// A 16 MiB float tensor made on ps and received on worker: the sender copies
// none of its bytes (its message references the tensor's buffer), the
// receiver copies each once, from gRPC's buffers into the new tensor.
TEST_F(RecvTensorTest, A16MiBTensorIsCopiedOnceAcrossTasks) {
  StartCluster(kDefaultMaxMessageBytes);
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  // Fed dims keep constant folding from making the tensor a Const.
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  auto x = ops::Fill(ps.WithOpName("x"), dims, 1.5f);
  auto y = ops::Identity(wk.WithOpName("y"), x);
  ops::Sum(wk.WithOpName("sum"), y, 0);
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  const int32_t n = 4 << 20;
  const WireCopyCounts before = GetWireCopyCounts();
  std::vector<Tensor> out;
  Status s = remote->Run({{"dims", Int32Vector({n})}}, {"sum"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 1.5f * n);  // exact: multiples of 0.5 below 2^23
  const WireCopyCounts after = GetWireCopyCounts();
  EXPECT_EQ(after.sender - before.sender, 0);
  EXPECT_EQ(after.receiver - before.receiver, int64_t{n} * 4);
}

// A received value is the receiving device's memory: the worker device's
// allocator counts the 16 MiB tensor (its peak rises by its bytes during the
// step, and the count of allocations by one at least), and the default
// allocator, which the receiver used before, does not see it.
TEST_F(RecvTensorTest, TheReceivedTensorComesFromTheReceivingDevicesAllocator) {
  StartCluster(kDefaultMaxMessageBytes);
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  auto x = ops::Fill(ps.WithOpName("x"), dims, 3.f);
  auto y = ops::Identity(wk.WithOpName("y"), x);
  ops::Slice(wk.WithOpName("first"), y, {0}, {1});
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  StatusOr<Device*> device =
      cluster_.server(kWorker0)->worker()->devices()->Find(StrCat(kWorker0, "/device:CPU:0"));
  ASSERT_TRUE(device.ok()) << device.status();
  Allocator* allocator = (*device)->allocator();
  const int32_t n = 4 << 20;
  allocator->ResetPeak();
  DefaultCpuAllocator()->ResetPeak();
  const AllocatorStats before = allocator->GetStats();
  const AllocatorStats default_before = DefaultCpuAllocator()->GetStats();
  std::vector<Tensor> out;
  Status s = remote->Run({{"dims", Int32Vector({n})}}, {"first"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out[0].flat<float>()[0], 3.f);
  const AllocatorStats after = allocator->GetStats();
  EXPECT_GE(after.peak_bytes_in_use - before.bytes_in_use, int64_t{n} * 4);
  EXPECT_GE(after.num_allocs - before.num_allocs, 1);
  EXPECT_GE(after.largest_alloc_size, int64_t{n} * 4);
  // Freed once the step's state is dropped (CleanupGraph, after Run returns).
  for (int wait = 0; wait < 500 && allocator->GetStats().bytes_in_use != before.bytes_in_use;
       ++wait) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(allocator->GetStats().bytes_in_use, before.bytes_in_use);
  EXPECT_LT(DefaultCpuAllocator()->GetStats().peak_bytes_in_use - default_before.bytes_in_use,
            int64_t{n} * 4);
}

// The receiver's memory is reused from step to step: after four warm-up
// steps, eight more steps that each receive a 16 MiB tensor fault in fewer
// than half a tensor's pages each (minor faults of this process, which
// holds both tasks). Without the malloc settings of credentials.cc, glibc
// gave gRPC's freed read buffers back to the kernel after every message,
// and each step faulted most of its 4096 pages in again as the bytes
// landed (3700 a step measured; the rest lands in reused memory anyway).
TEST_F(RecvTensorTest, RepeatedStepsDoNotFaultTheReceivedBytesInAgain) {
#if defined(WEIR_ADDRESS_SANITIZER)
  GTEST_SKIP() << "ASan's allocator does not cache freed tensors (allocator.h)";
#endif
  StartCluster(kDefaultMaxMessageBytes);
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  auto x = ops::Fill(ps.WithOpName("x"), dims, 2.f);
  auto y = ops::Identity(wk.WithOpName("y"), x);
  ops::Slice(wk.WithOpName("first"), y, {0}, {1});
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  const int32_t n = 4 << 20;
  const int64_t pages = int64_t{n} * 4 / 4096;
  std::vector<Tensor> out;
  for (int warm = 0; warm < 4; ++warm) {
    ASSERT_TRUE(remote->Run({{"dims", Int32Vector({n})}}, {"first"}, {}, &out).ok());
  }
  const int steps = 8;
  rusage before;
  getrusage(RUSAGE_SELF, &before);
  for (int step = 0; step < steps; ++step) {
    Status s = remote->Run({{"dims", Int32Vector({n})}}, {"first"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out[0].flat<float>()[0], 2.f);
  }
  rusage after;
  getrusage(RUSAGE_SELF, &after);
  const int64_t faults = after.ru_minflt - before.ru_minflt;
  EXPECT_LT(faults, steps * pages / 2)
      << faults << " minor faults in " << steps << " steps of " << pages << " pages each";
}

// Every server (and so every peer channel) refuses messages over 64 KiB:
// 1 MiB values cross in pieces and arrive whole.
TEST_F(RecvTensorTest, ValuesOverTheMessageLimitAreSplitAndReassembled) {
  constexpr int64_t kLimit = 64 << 10;
  StartCluster(kLimit);
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto n = ops::Placeholder(ps.WithOpName("n"), DT_INT32);
  auto n_on_worker = ops::Identity(wk.WithOpName("n_worker"), n);
  // 1 MiB of int32 0, 1, 2...: compared on worker with its own copy.
  auto sent = ops::Range(ps.WithOpName("sent"), 0, n, 1);
  auto expected = ops::Range(wk.WithOpName("expected"), 0, n_on_worker, 1);
  ops::All(wk.WithOpName("ints_equal"), ops::Equal(wk, ops::Identity(wk, sent), expected), 0);
  // n strings of 100 bytes (4096: 400 KiB), "000...01.5", parsed on worker.
  const Tensor text = Tensor::Scalar<std::string>(std::string(97, '0') + "1.5");
  auto strings = ops::Fill(ps.WithOpName("strings"), ops::Reshape(ps, n, {1}), text);
  ops::Sum(wk.WithOpName("strings_sum"), ops::StringToNumber(wk, ops::Identity(wk, strings)), 0);
  // An empty tensor.
  auto empty = ops::Fill(ps.WithOpName("empty"), ops::Reshape(ps, ops::Sub(ps, n, n), {1}), 2.f);
  ops::Size(wk.WithOpName("empty_size"), ops::Identity(wk, empty));
  // A dead 1 MiB value and a live one, through Switch and Merge.
  auto pred = ops::Placeholder(ps.WithOpName("pred"), DT_BOOL);
  auto data = ops::Cast(ps, sent, DT_FLOAT);
  auto sw = ops::Switch(ps.WithOpName("switch"), data, pred);
  auto if_false = ops::Sum(wk.WithOpName("if_false"), Output(sw.node(), 0), 0);
  auto if_true = ops::Sum(wk.WithOpName("if_true"), ops::Mul(wk, Output(sw.node(), 1), 2.f), 0);
  ops::Merge(wk.WithOpName("merge"), {if_false, if_true});
  auto remote = Remote(root);
  ASSERT_TRUE(remote);

  const int32_t count = 1 << 18;  // 1 MiB of int32
  Tensor t(DT_BOOL, TensorShape({}));
  for (bool branch : {false, true}) {
    t.scalar<bool>() = branch;
    std::vector<Tensor> out;
    Status s = remote->Run({{"n", Tensor::Scalar<int32_t>(count)}, {"pred", t}},
                           {"ints_equal", "empty_size", "merge", "merge:1"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_TRUE(out[0].scalar<bool>());
    EXPECT_EQ(out[1].scalar<int32_t>(), 0);
    // 0 + 1 + ... in float: within float's rounding of the exact sum.
    const double sum = static_cast<double>(count) * (count - 1) / 2;
    EXPECT_NEAR(out[2].scalar<float>(), branch ? 2 * sum : sum, sum * 1e-5);
    EXPECT_EQ(out[3].scalar<int32_t>(), branch ? 1 : 0);
  }
  std::vector<Tensor> out;
  Status s =
      remote->Run({{"n", Tensor::Scalar<int32_t>(4096)}, {"pred", t}}, {"strings_sum"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 1.5f * 4096);
}

// Limits that differ: ps may send 2 GiB messages, but worker (the
// receiver) accepts 64 KiB; the RecvTensor request says so and ps splits to
// it. (Without that, gRPC on worker would refuse ps's 1 MiB message.)
TEST_F(RecvTensorTest, TheSenderSplitsToTheReceiversSmallerLimit) {
  std::map<std::string, ClusterSpec::Tasks> spec;
  spec["worker"][0] = StrCat("127.0.0.1:", PickFreePort());
  spec["ps"][0] = StrCat("127.0.0.1:", PickFreePort());
  auto cluster = ClusterSpec::FromJobs(spec);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  cluster_.cluster = *cluster;
  for (const auto& [job, limit] :
       {std::pair<std::string, int64_t>{"worker", 64 << 10},
        std::pair<std::string, int64_t>{"ps", kDefaultMaxMessageBytes}}) {
    ServerOptions options;
    options.intra_op_threads = 1;
    options.security.max_message_bytes = limit;
    options.bulk_transfer = false;  // the stream's limits are under test
    auto server = Server::Create(ClusterConfig{*cluster, job, 0}, options);
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->Start().ok());
    cluster_.servers[ClusterSpec::TaskName(job, 0)] = std::move(*server);
  }
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto n = ops::Placeholder(ps.WithOpName("n"), DT_INT32);
  auto sent = ops::Range(ps.WithOpName("sent"), 0, n, 1);
  auto expected = ops::Range(wk.WithOpName("expected"), 0, ops::Identity(wk, n), 1);
  ops::All(wk.WithOpName("equal"), ops::Equal(wk, ops::Identity(wk, sent), expected), 0);
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  std::vector<Tensor> out;
  Status s = remote->Run({{"n", Tensor::Scalar<int32_t>(1 << 18)}}, {"equal"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(out[0].scalar<bool>());
}

// The bulk-transfer channel (bulk_transfer.h): the same 16 MiB value is
// written from ps's tensor and read into worker's new tensor by the kernel:
// Weir copies none of its bytes on either side, and the side channel
// counts them once each way.
TEST_F(RecvTensorTest, A16MiBTensorCrossesTheBulkChannelWithNoCopy) {
  StartCluster(kDefaultMaxMessageBytes, /*bulk_transfer=*/true);
  ASSERT_NE(cluster_.server(kPs0)->bulk_sender(), nullptr);
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  auto x = ops::Fill(ps.WithOpName("x"), dims, 1.5f);
  auto y = ops::Identity(wk.WithOpName("y"), x);
  ops::Sum(wk.WithOpName("sum"), y, 0);
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  const int32_t n = 4 << 20;
  for (int step = 0; step < 3; ++step) {  // the connection is reused
    const WireCopyCounts before = GetWireCopyCounts();
    std::vector<Tensor> out;
    Status s = remote->Run({{"dims", Int32Vector({n})}}, {"sum"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].scalar<float>(), 1.5f * n);
    const WireCopyCounts after = GetWireCopyCounts();
    EXPECT_EQ(after.sender - before.sender, 0);
    EXPECT_EQ(after.receiver - before.receiver, 0);
    EXPECT_EQ(after.bulk_received - before.bulk_received, int64_t{n} * 4);
  }
  EXPECT_EQ(cluster_.server(kPs0)->bulk_sender()->num_tickets(), 0);
  EXPECT_EQ(cluster_.server(kPs0)->bulk_sender()->num_connections(), 1);
}

// Every numeric dtype crosses the bulk channel bit-identical: a fed value
// of random bytes (bool: 0 and 1) of 1 MiB and a bit goes to ps, crosses
// to worker and comes back as the fetch; small values take the stream.
TEST_F(RecvTensorTest, EveryNumericDtypeCrossesTheBulkChannelBitIdentical) {
  StartCluster(kDefaultMaxMessageBytes, /*bulk_transfer=*/true);
  std::mt19937 random(16);
  for (DType dtype :
       {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_COMPLEX64, DT_INT64, DT_BOOL,
        DT_BFLOAT16, DT_UINT16, DT_COMPLEX128, DT_HALF, DT_UINT32, DT_UINT64}) {
    SCOPED_TRACE(StrCat(dtype));
    Scope root = Scope::NewRootScope();
    Scope ps = root.WithDevice("/job:ps/task:0");
    Scope wk = root.WithDevice("/job:worker/task:0");
    auto fed = ops::Placeholder(ps.WithOpName("fed"), dtype);
    auto on_ps = ops::Identity(ps.WithOpName("on_ps"), fed);
    ops::Identity(wk.WithOpName("on_worker"), on_ps);
    auto remote = Remote(root);
    ASSERT_TRUE(remote);
    for (int64_t bytes : {int64_t{64}, (int64_t{1} << 20) + 16}) {
      const int64_t elements = bytes / static_cast<int64_t>(DTypeSize(dtype));
      Tensor value(dtype, TensorShape({elements}));
      auto* data = static_cast<uint8_t*>(value.raw_data());
      for (size_t i = 0; i < value.TotalBytes(); ++i) {
        data[i] = dtype == DT_BOOL ? random() & 1 : static_cast<uint8_t>(random());
      }
      const WireCopyCounts before = GetWireCopyCounts();
      std::vector<Tensor> out;
      Status s = remote->Run({{"fed", value}}, {"on_worker"}, {}, &out);
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_EQ(out[0].dtype(), dtype);
      ASSERT_EQ(out[0].shape(), value.shape());
      EXPECT_EQ(std::memcmp(out[0].raw_data(), value.raw_data(), value.TotalBytes()), 0);
      const int64_t bulk = GetWireCopyCounts().bulk_received - before.bulk_received;
      EXPECT_EQ(bulk, bytes >= (1 << 20) ? static_cast<int64_t>(value.TotalBytes()) : 0);
    }
  }
}

// A sender whose bulk channel stopped (as a stopping server's does) offers
// no ticket: the value takes the stream, and the step succeeds.
TEST_F(RecvTensorTest, AStoppedBulkSenderFallsBackToTheStream) {
  StartCluster(kDefaultMaxMessageBytes, /*bulk_transfer=*/true);
  cluster_.server(kPs0)->bulk_sender()->Stop();
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  ops::Sum(wk.WithOpName("sum"), ops::Identity(wk, ops::Fill(ps, dims, 0.25f)), 0);
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  const WireCopyCounts before = GetWireCopyCounts();
  std::vector<Tensor> out;
  Status s = remote->Run({{"dims", Int32Vector({1 << 20})}}, {"sum"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 0.25f * (1 << 20));
  const WireCopyCounts after = GetWireCopyCounts();
  EXPECT_EQ(after.bulk_received - before.bulk_received, 0);
  EXPECT_EQ(after.receiver - before.receiver, int64_t{4} << 20);
}

// Off (ServerOptions::bulk_transfer = false, weir-server
// --no-bulk-transfer): no listener, and values take the stream.
TEST_F(RecvTensorTest, WithTheBulkChannelOffValuesTakeTheStream) {
  StartCluster(kDefaultMaxMessageBytes, /*bulk_transfer=*/false);
  EXPECT_EQ(cluster_.server(kPs0)->bulk_sender(), nullptr);
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope wk = root.WithDevice("/job:worker/task:0");
  auto dims = ops::Placeholder(ps.WithOpName("dims"), DT_INT32);
  ops::Sum(wk.WithOpName("sum"), ops::Identity(wk, ops::Fill(ps, dims, 0.5f)), 0);
  auto remote = Remote(root);
  ASSERT_TRUE(remote);
  const WireCopyCounts before = GetWireCopyCounts();
  std::vector<Tensor> out;
  ASSERT_TRUE(remote->Run({{"dims", Int32Vector({1 << 20})}}, {"sum"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 0.5f * (1 << 20));
  const WireCopyCounts after = GetWireCopyCounts();
  EXPECT_EQ(after.bulk_received - before.bulk_received, 0);
  EXPECT_EQ(after.receiver - before.receiver, int64_t{4} << 20);
}

// RecvTensor waits for its value without a server thread: 200 calls
// waiting at once on a step that never runs add no thread per call (a
// synchronous handler held one each), and each ends at its deadline (or at
// once when its caller cancels it), leaving no step state behind.
TEST_F(RecvTensorTest, WaitingCallsHoldNoServerThread) {
  StartCluster(kDefaultMaxMessageBytes);
  auto client = WorkerClient::Create(cluster_.server(kPs0)->bound_address());
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string device = StrCat(kPs0, "/device:CPU:0");
  const int kCalls = 200;
  std::mutex mu;
  std::condition_variable all_done;
  int done = 0;
  std::vector<Status> statuses(kCalls);
  std::vector<WorkerClient::Cancel> cancels;
  // Warm the channel and gRPC's thread pools first.
  ASSERT_TRUE((*client)->GetStatus(10s).ok());
  const int threads_before = Threads();
  for (int i = 0; i < kCalls; ++i) {
    wire::RecvTensorRequest request;
    request.set_step_id(1000 + i);
    request.set_rendezvous_key(
        Rendezvous::CreateKey(device, 1, StrCat(kWorker0, "/device:CPU:0"), "edge", {}));
    cancels.push_back((*client)->RecvTensorAsync(request, i % 2 == 0 ? 1500ms : 60s,
                                                 [&, i](WorkerClient::RecvTensorResult result) {
                                                   std::lock_guard<std::mutex> lock(mu);
                                                   statuses[i] = result.status;
                                                   if (++done == kCalls) all_done.notify_all();
                                                 }));
  }
  // Every call has reached the server (each made its step's state).
  for (int wait = 0; wait < 500 && cluster_.server(kPs0)->worker()->num_steps() < kCalls; ++wait) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(cluster_.server(kPs0)->worker()->num_steps(), kCalls);
  const int threads_added = Threads() - threads_before;
  RecordProperty("threads_added", threads_added);
  EXPECT_LT(threads_added, kCalls / 4) << "threads before: " << threads_before;
  // The odd calls are cancelled by their caller; the even ones time out.
  for (int i = 1; i < kCalls; i += 2) cancels[i]();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(all_done.wait_for(lock, 30s, [&] { return done == kCalls; }));
  }
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(statuses[i].code(), i % 2 == 0 ? Code::kDeadlineExceeded : Code::kCancelled)
        << i << ": " << statuses[i];
  }
  // The server forgets the steps its callers gave up on.
  for (int wait = 0; wait < 500 && cluster_.server(kPs0)->worker()->num_steps() > 0; ++wait) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(cluster_.server(kPs0)->worker()->num_steps(), 0);
}

// A request that is not a RecvTensorRequest is InvalidArgument, and the
// server goes on serving.
TEST_F(RecvTensorTest, AGarbageRequestIsRefused) {
  StartCluster(kDefaultMaxMessageBytes);
  const std::string address = cluster_.server(kPs0)->bound_address();
  grpc::GenericStub stub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue queue;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  grpc::Slice garbage(std::string("\xff\xff\xff\xff", 4));
  grpc::ByteBuffer request(&garbage, 1);
  auto call =
      stub.PrepareUnaryCall(&context, "/weir.wire.WorkerService/RecvTensor", request, &queue);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag;
  bool ok;
  ASSERT_TRUE(queue.Next(&tag, &ok));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("not a RecvTensorRequest"), std::string::npos)
      << status.error_message();
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  auto client = WorkerClient::Create(address);
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE((*client)->GetStatus(10s).ok());
}

// RecvTensor goes through the generic stub: it must carry the channel's
// TLS and token like every other call. With them, a RecvTensor for a step
// that never runs reaches the handler and waits until its deadline; without
// the token it is refused before any handler runs.
TEST_F(RecvTensorTest, CallsCarryTheChannelsTlsAndToken) {
  auto certs = MakeTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  auto config = ClusterConfigFromFlags("worker=localhost:0", "worker", 0);
  ASSERT_TRUE(config.ok()) << config.status();
  ServerOptions options;
  options.intra_op_threads = 1;
  options.security.tls_cert_file = certs->server_cert;
  options.security.tls_key_file = certs->server_key;
  options.security.auth_token = "recv-token";
  auto server = Server::Create(*config, options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->Start().ok());
  // With TLS the values stay on the encrypted stream: no bulk listener, and
  // the task never asks its peers for the bulk channel.
  EXPECT_TRUE(options.bulk_transfer);
  EXPECT_EQ((*server)->bulk_sender(), nullptr);
  EXPECT_EQ((*server)->worker()->peer_options().bulk_min_bytes, 0);
  const std::string device = StrCat(kWorker0, "/device:CPU:0");
  wire::RecvTensorRequest request;
  request.set_step_id(77);
  request.set_rendezvous_key(Rendezvous::CreateKey(device, 1, device, "edge", {}));
  auto recv = [&](const std::string& token) {
    ChannelOptions channel;
    channel.tls_ca_file = certs->ca_cert;
    channel.auth_token = token;
    auto client = WorkerClient::Create((*server)->bound_address(), channel);
    EXPECT_TRUE(client.ok()) << client.status();
    Notification done;
    Status status;
    (*client)->RecvTensorAsync(request, 300ms, [&](WorkerClient::RecvTensorResult result) {
      status = result.status;
      done.Notify();
    });
    done.Wait();
    return status;
  };
  Status with_token = recv("recv-token");
  EXPECT_EQ(with_token.code(), Code::kDeadlineExceeded) << with_token;
  Status without = recv("wrong-token");
  EXPECT_EQ(without.code(), Code::kUnauthenticated) << without;
  EXPECT_NE(without.message().find("auth token is wrong"), std::string::npos) << without;
  server->reset();
  std::filesystem::remove_all(certs->dir);
}

}  // namespace
}  // namespace weir
