// The bulk-transfer channel on its own (no gRPC): a BulkSender and a
// BulkConnectionPool on loopback, and hand-written senders that misbehave
// (die mid-transfer, stall, announce another size).
#include "weir/distributed/bulk_transfer.h"

#include <arpa/inet.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include "proto/worker_service.pb.h"
#include "weir/base/notification.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/distributed/worker_client.h"
#include "weir/framework/allocator.h"

namespace weir {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Tensor RandomBytes(int64_t bytes, uint32_t seed) {
  StatusOr<Tensor> value = Tensor::Allocate(DefaultCpuAllocator(), DT_UINT8, TensorShape({bytes}));
  CHECK(value.ok());
  std::mt19937 random(seed);
  auto* data = static_cast<uint8_t*>(value->raw_data());
  for (int64_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(random());
  return *value;
}

std::unique_ptr<BulkSender> NewSender(BulkSenderOptions options = {}) {
  auto sender = BulkSender::Create("127.0.0.1", "/job:ps/replica:0/task:0", options);
  CHECK(sender.ok()) << sender.status();
  return std::move(*sender);
}

// A listening socket on loopback that a test drives by hand.
struct FakeSender {
  FakeSender() {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    CHECK(listen(listen_fd, 4) == 0);
    socklen_t length = sizeof(address);
    getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
  }
  ~FakeSender() {
    if (thread.joinable()) thread.join();
    close(listen_fd);
  }
  // Accepts one connection, reads the 20-byte request, then runs `act`.
  void Serve(std::function<void(int fd)> act) {
    thread = std::thread([this, act] {
      int fd = accept(listen_fd, nullptr, nullptr);
      char request[20];
      CHECK(recv(fd, request, sizeof(request), MSG_WAITALL) == 20);
      CHECK(std::memcmp(request, "WBLK", 4) == 0);
      act(fd);
      close(fd);
    });
  }
  static void SendHeader(int fd, uint64_t size) {
    char header[kBulkHeaderBytes] = {};
    for (int i = 0; i < 8; ++i) header[i] = static_cast<char>(size >> (8 * i));
    CHECK(send(fd, header, sizeof(header), MSG_NOSIGNAL) == sizeof(header));
  }
  int listen_fd = -1;
  int port = 0;
  std::thread thread;
};

TEST(BulkTransferTest, AValueCrossesBitIdenticalAndTheConnectionIsReused) {
  auto sender = NewSender();
  BulkConnectionPool pool("127.0.0.1", "task /job:ps/replica:0/task:0");
  const BulkCounts before = GetBulkCounts();
  for (uint32_t round = 0; round < 3; ++round) {
    const int64_t size = (int64_t{3} << 20) + 7 + round;  // not a multiple of anything
    Tensor value = RandomBytes(size, round);
    auto ticket = sender->Offer(value, 1, Clock::now() + 10s);
    ASSERT_TRUE(ticket.ok()) << ticket.status();
    EXPECT_EQ(ticket->size(), kBulkTicketBytes);
    EXPECT_EQ(sender->num_tickets(), 1);
    std::vector<char> out(size);
    Status read = pool.Read(sender->port(), *ticket, size, out.data(), Clock::now() + 10s, nullptr);
    ASSERT_TRUE(read.ok()) << read;
    EXPECT_EQ(std::memcmp(out.data(), value.raw_data(), size), 0);
    EXPECT_EQ(sender->num_tickets(), 0);
  }
  EXPECT_EQ(pool.num_idle(), 1);
  EXPECT_EQ(sender->num_connections(), 1);
  const BulkCounts after = GetBulkCounts();
  const int64_t total = 3 * ((int64_t{3} << 20) + 7) + 0 + 1 + 2;
  EXPECT_EQ(after.received - before.received, total);
  for (int wait = 0; wait < 200 && GetBulkCounts().sent - before.sent < total; ++wait) {
    std::this_thread::sleep_for(5ms);  // the sender counts after its write returned
  }
  EXPECT_EQ(GetBulkCounts().sent - before.sent, total);
}

TEST(BulkTransferTest, TicketsAreDistinct) {
  auto sender = NewSender();
  Tensor value = RandomBytes(16, 1);
  std::set<std::string> tickets;
  for (int i = 0; i < 1000; ++i) {
    auto ticket = sender->Offer(value, 1, Clock::now() + 10s);
    ASSERT_TRUE(ticket.ok());
    tickets.insert(*ticket);
  }
  EXPECT_EQ(tickets.size(), 1000u);
}

TEST(BulkTransferTest, AWrongTicketIsRefusedAndClosesTheConnection) {
  auto sender = NewSender();
  BulkConnectionPool pool("127.0.0.1", "task /job:ps/replica:0/task:0");
  Tensor value = RandomBytes(1 << 20, 2);
  auto ticket = sender->Offer(value, 1, Clock::now() + 10s);
  ASSERT_TRUE(ticket.ok());
  std::string wrong = *ticket;
  wrong[5] ^= 1;
  std::vector<char> out(1 << 20);
  Status read = pool.Read(sender->port(), wrong, 1 << 20, out.data(), Clock::now() + 10s, nullptr);
  EXPECT_EQ(read.code(), Code::kUnavailable) << read;
  EXPECT_NE(read.message().find("refused the ticket"), std::string::npos) << read;
  EXPECT_NE(read.message().find("task /job:ps/replica:0/task:0"), std::string::npos) << read;
  EXPECT_NE(read.message().find(StrCat("127.0.0.1:", sender->port())), std::string::npos) << read;
  EXPECT_EQ(pool.num_idle(), 0);  // not kept
  // The right ticket still works (the wrong one did not consume it).
  read = pool.Read(sender->port(), *ticket, 1 << 20, out.data(), Clock::now() + 10s, nullptr);
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(std::memcmp(out.data(), value.raw_data(), 1 << 20), 0);
}

TEST(BulkTransferTest, AGarbageRequestClosesTheConnectionUnanswered) {
  auto sender = NewSender();
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(sender->port()));
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const char garbage[20] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_EQ(send(fd, garbage, sizeof(garbage), MSG_NOSIGNAL), 20);
  char byte;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  EXPECT_EQ(recv(fd, &byte, 1, 0), 0);  // closed, nothing sent
  close(fd);
}

TEST(BulkTransferTest, AReplayedTicketIsRefused) {
  auto sender = NewSender();
  BulkConnectionPool pool("127.0.0.1", "peer");
  Tensor value = RandomBytes(4096, 3);
  auto ticket = sender->Offer(value, 1, Clock::now() + 10s);
  ASSERT_TRUE(ticket.ok());
  std::vector<char> out(4096);
  ASSERT_TRUE(
      pool.Read(sender->port(), *ticket, 4096, out.data(), Clock::now() + 10s, nullptr).ok());
  Status again = pool.Read(sender->port(), *ticket, 4096, out.data(), Clock::now() + 10s, nullptr);
  EXPECT_EQ(again.code(), Code::kUnavailable) << again;
  EXPECT_NE(again.message().find("refused the ticket"), std::string::npos) << again;
}

TEST(BulkTransferTest, AnExpiredTicketIsRefusedAndItsValueReleased) {
  BulkSenderOptions options;
  options.ticket_lifetime = 50ms;
  auto sender = NewSender(options);
  BulkConnectionPool pool("127.0.0.1", "peer");
  Tensor value = RandomBytes(4096, 4);
  auto ticket = sender->Offer(value, 1, Clock::now() + 10s);
  ASSERT_TRUE(ticket.ok());
  EXPECT_FALSE(value.RefCountIsOne());  // the ticket holds the buffer
  std::this_thread::sleep_for(100ms);
  std::vector<char> out(4096);
  Status read = pool.Read(sender->port(), *ticket, 4096, out.data(), Clock::now() + 10s, nullptr);
  EXPECT_EQ(read.code(), Code::kUnavailable) << read;
  // The listener's sweep (at most a second apart) drops it.
  for (int wait = 0; wait < 300 && sender->num_tickets() > 0; ++wait)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(sender->num_tickets(), 0);
  EXPECT_TRUE(value.RefCountIsOne());
}

TEST(BulkTransferTest, DropStepReleasesItsTicketsOnly) {
  auto sender = NewSender();
  Tensor a = RandomBytes(64, 5);
  Tensor b = RandomBytes(64, 6);
  ASSERT_TRUE(sender->Offer(a, 1, Clock::now() + 10s).ok());
  auto kept = sender->Offer(b, 2, Clock::now() + 10s);
  ASSERT_TRUE(kept.ok());
  sender->DropStep(1);
  EXPECT_EQ(sender->num_tickets(), 1);
  EXPECT_TRUE(a.RefCountIsOne());
  EXPECT_FALSE(b.RefCountIsOne());
  sender->Stop();
  EXPECT_TRUE(b.RefCountIsOne());
  EXPECT_EQ(sender->Offer(a, 3, Clock::now() + 10s).status().code(), Code::kUnavailable);
}

TEST(BulkTransferTest, ASenderThatDiesMidTransferIsUnavailableNamingIt) {
  FakeSender fake;
  const int64_t size = 16 << 20;
  fake.Serve([size](int fd) {
    FakeSender::SendHeader(fd, size);
    std::vector<char> part(1 << 20, 'x');
    send(fd, part.data(), part.size(), MSG_NOSIGNAL);
    // and dies: the socket closes with 15 MiB missing
  });
  BulkConnectionPool pool("127.0.0.1", "task /job:ps/replica:0/task:0");
  std::vector<char> out(size);
  const auto start = Clock::now();
  Status read = pool.Read(fake.port, std::string(16, 't'), size, out.data(), start + 30s, nullptr);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(read.code(), Code::kUnavailable) << read;
  EXPECT_NE(read.message().find("task /job:ps/replica:0/task:0"), std::string::npos) << read;
  EXPECT_NE(read.message().find(StrCat("127.0.0.1:", fake.port)), std::string::npos) << read;
  EXPECT_NE(read.message().find("1048576 of 16777216 bytes"), std::string::npos) << read;
}

// A receiver that sends its ticket, reads the header and then nothing: the
// sender's write blocks on full socket buffers. DropStep, then Stop, break
// it at once and release the value.
int ConnectAndClaim(int port, const std::string& ticket) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  CHECK(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  std::string request = "WBLK" + ticket;
  CHECK(send(fd, request.data(), request.size(), MSG_NOSIGNAL) == 20);
  char header[kBulkHeaderBytes];
  CHECK(recv(fd, header, sizeof(header), MSG_WAITALL) == sizeof(header));
  return fd;
}

// Every value starts at a multiple of kBulkHeaderBytes in the stream (the
// kernel's copies are slow off a cache line): a header with the count then
// zeros, the bytes, zeros up to the next multiple; then the next answer.
TEST(BulkTransferTest, AnswersKeepEveryValueCacheLineAlignedInTheStream) {
  auto sender = NewSender();
  const int64_t sizes[2] = {100, 64};  // 28 bytes of tail, then none
  const int64_t answer_bytes[2] = {64 + 100 + 28, 64 + 64};
  std::vector<Tensor> values;
  std::vector<std::string> tickets;
  for (int i = 0; i < 2; ++i) {
    values.push_back(RandomBytes(sizes[i], 10 + i));
    auto ticket = sender->Offer(values.back(), 1, Clock::now() + 10s);
    ASSERT_TRUE(ticket.ok()) << ticket.status();
    tickets.push_back(*ticket);
  }
  int fd = ConnectAndClaim(sender->port(), tickets[0]);  // reads the first header
  for (int i = 0; i < 2; ++i) {
    std::vector<char> answer(answer_bytes[i]);
    if (i == 0) {  // the header was read by ConnectAndClaim; its count is checked below
      ASSERT_EQ(recv(fd, answer.data() + 64, answer.size() - 64, MSG_WAITALL),
                static_cast<ssize_t>(answer.size() - 64));
    } else {
      std::string request = "WBLK" + tickets[1];
      ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), 20);
      ASSERT_EQ(recv(fd, answer.data(), answer.size(), MSG_WAITALL),
                static_cast<ssize_t>(answer.size()));
      EXPECT_EQ(answer[0], 64);  // the count, little-endian
      EXPECT_TRUE(
          std::all_of(answer.begin() + 1, answer.begin() + 64, [](char c) { return c == 0; }));
    }
    EXPECT_EQ(std::memcmp(answer.data() + 64, values[i].raw_data(), sizes[i]), 0);
    EXPECT_TRUE(
        std::all_of(answer.begin() + 64 + sizes[i], answer.end(), [](char c) { return c == 0; }));
  }
  // Nothing more: the stream ends at the second answer's last byte.
  timeval short_wait{0, 100000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof(short_wait));
  char extra;
  EXPECT_EQ(recv(fd, &extra, 1, 0), -1);
  close(fd);
}

TEST(BulkTransferTest, DropStepAndStopBreakAWriteBlockedOnASlowReader) {
  auto sender = NewSender();
  const int64_t size = int64_t{64} << 20;  // far more than the socket buffers
  StatusOr<Tensor> value = Tensor::Allocate(DefaultCpuAllocator(), DT_UINT8, TensorShape({size}));
  ASSERT_TRUE(value.ok());
  auto ticket = sender->Offer(*value, 7, Clock::now() + 60s);
  ASSERT_TRUE(ticket.ok());
  int fd = ConnectAndClaim(sender->port(), *ticket);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(value->RefCountIsOne());  // the write in flight holds it
  sender->DropStep(7);
  for (int wait = 0; wait < 200 && !value->RefCountIsOne(); ++wait)
    std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(value->RefCountIsOne());
  // Stop with another blocked write: prompt.
  auto second = sender->Offer(*value, 8, Clock::now() + 60s);
  ASSERT_TRUE(second.ok());
  int fd2 = ConnectAndClaim(sender->port(), *second);
  std::this_thread::sleep_for(50ms);
  const auto start = Clock::now();
  sender->Stop();
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_TRUE(value->RefCountIsOne());
  close(fd);
  close(fd2);
}

TEST(BulkTransferTest, AStalledSenderEndsAtTheDeadline) {
  std::atomic<bool> release{false};  // outlives `fake`, whose thread reads it until joined
  FakeSender fake;
  fake.Serve([&](int fd) {
    FakeSender::SendHeader(fd, 1 << 20);
    while (!release) std::this_thread::sleep_for(5ms);
  });
  BulkConnectionPool pool("127.0.0.1", "peer");
  std::vector<char> out(1 << 20);
  const auto start = Clock::now();
  Status read =
      pool.Read(fake.port, std::string(16, 't'), 1 << 20, out.data(), start + 200ms, nullptr);
  const auto took = Clock::now() - start;
  release = true;
  EXPECT_EQ(read.code(), Code::kDeadlineExceeded) << read;
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 2s);
}

TEST(BulkTransferTest, ACancelEndsABlockedReadPromptly) {
  std::atomic<bool> release{false};  // outlives `fake`, whose thread reads it until joined
  FakeSender fake;
  fake.Serve([&](int fd) {
    FakeSender::SendHeader(fd, 1 << 20);
    while (!release) std::this_thread::sleep_for(5ms);
  });
  BulkConnectionPool pool("127.0.0.1", "peer");
  BulkCancel cancel;
  std::vector<char> out(1 << 20);
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel.Cancel();
  });
  const auto start = Clock::now();
  Status read =
      pool.Read(fake.port, std::string(16, 't'), 1 << 20, out.data(), start + 60s, &cancel);
  const auto took = Clock::now() - start;
  canceller.join();
  release = true;
  EXPECT_EQ(read.code(), Code::kCancelled) << read;
  EXPECT_LT(took, 2s);
  // A read after the cancel does not start.
  Status after =
      pool.Read(fake.port, std::string(16, 't'), 1, out.data(), Clock::now() + 60s, &cancel);
  EXPECT_EQ(after.code(), Code::kCancelled) << after;
}

TEST(BulkTransferTest, AnotherAnnouncedSizeIsDataLoss) {
  FakeSender fake;
  fake.Serve([&](int fd) { FakeSender::SendHeader(fd, 999); });
  BulkConnectionPool pool("127.0.0.1", "peer");
  std::vector<char> out(1000);
  Status read =
      pool.Read(fake.port, std::string(16, 't'), 1000, out.data(), Clock::now() + 10s, nullptr);
  EXPECT_EQ(read.code(), Code::kDataLoss) << read;
  EXPECT_NE(read.message().find("999"), std::string::npos) << read;
}

TEST(BulkTransferTest, NoListenerIsUnavailableNamingTheAddress) {
  int port;
  {
    FakeSender closed;  // a port that was free a moment ago
    port = closed.port;
  }
  BulkConnectionPool pool("127.0.0.1", "task /job:ps/replica:0/task:0");
  std::vector<char> out(16);
  Status read = pool.Read(port, std::string(16, 't'), 16, out.data(), Clock::now() + 10s, nullptr);
  EXPECT_EQ(read.code(), Code::kUnavailable) << read;
  EXPECT_NE(read.message().find(StrCat("127.0.0.1:", port)), std::string::npos) << read;
}

TEST(BulkTransferTest, AKeptConnectionTheSenderClosedIsReplacedOnce) {
  BulkSenderOptions options;
  options.idle_timeout = 50ms;
  auto sender = NewSender(options);
  BulkConnectionPool pool("127.0.0.1", "peer");
  Tensor value = RandomBytes(4096, 7);
  std::vector<char> out(4096);
  auto first = sender->Offer(value, 1, Clock::now() + 10s);
  ASSERT_TRUE(
      pool.Read(sender->port(), *first, 4096, out.data(), Clock::now() + 10s, nullptr).ok());
  EXPECT_EQ(pool.num_idle(), 1);
  std::this_thread::sleep_for(200ms);  // the sender closed the idle connection
  auto second = sender->Offer(value, 1, Clock::now() + 10s);
  Status read = pool.Read(sender->port(), *second, 4096, out.data(), Clock::now() + 10s, nullptr);
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(std::memcmp(out.data(), value.raw_data(), 4096), 0);
}

TEST(BulkTransferTest, TooManyConnectionsAreRefused) {
  BulkSenderOptions options;
  options.max_connections = 1;
  auto sender = NewSender(options);
  BulkConnectionPool first("127.0.0.1", "peer");
  BulkConnectionPool second("127.0.0.1", "peer");
  Tensor value = RandomBytes(64, 8);
  std::vector<char> out(64);
  auto a = sender->Offer(value, 1, Clock::now() + 10s);
  ASSERT_TRUE(first.Read(sender->port(), *a, 64, out.data(), Clock::now() + 10s, nullptr).ok());
  auto b = sender->Offer(value, 1, Clock::now() + 10s);
  Status refused = second.Read(sender->port(), *b, 64, out.data(), Clock::now() + 10s, nullptr);
  EXPECT_EQ(refused.code(), Code::kUnavailable) << refused;
  // The ticket was never read, so the first pool's connection can claim it.
  ASSERT_TRUE(first.Read(sender->port(), *b, 64, out.data(), Clock::now() + 10s, nullptr).ok());
}

TEST(BulkTransferTest, BadOptionsAndHostsAreErrors) {
  BulkSenderOptions options;
  options.max_connections = 0;
  EXPECT_EQ(BulkSender::Create("127.0.0.1", "t", options).status().code(), Code::kInvalidArgument);
  auto sender = BulkSender::Create("203.0.113.7", "/job:ps/replica:0/task:0");  // not this host
  EXPECT_EQ(sender.status().code(), Code::kUnavailable);
  EXPECT_NE(sender.status().message().find("/job:ps/replica:0/task:0"), std::string::npos);
  BulkConnectionPool pool("127.0.0.1", "peer");
  std::vector<char> out(8);
  EXPECT_EQ(pool.Read(1, "short", 8, out.data(), Clock::now() + 1s, nullptr).code(),
            Code::kInvalidArgument);
}

// A gRPC server whose every call is answered with one given message: a
// worker that hands out bulk answers pointing wherever a test wants.
class FakeWorker {
 public:
  explicit FakeWorker(grpc::ByteBuffer answer) : service_(std::move(answer)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
    CHECK(server_ != nullptr);
  }
  ~FakeWorker() { server_->Shutdown(std::chrono::system_clock::now()); }
  std::string address() const { return StrCat("127.0.0.1:", port_); }

 private:
  class Service : public grpc::CallbackGenericService {
   public:
    explicit Service(grpc::ByteBuffer answer) : answer_(std::move(answer)) {}
    grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
      class Reactor : public grpc::ServerGenericBidiReactor {
       public:
        explicit Reactor(const grpc::ByteBuffer& answer) : answer_(answer) { StartRead(&request_); }
        void OnReadDone(bool) override {
          StartWriteAndFinish(&answer_, grpc::WriteOptions(), grpc::Status::OK);
        }
        void OnDone() override { delete this; }

       private:
        grpc::ByteBuffer request_;
        grpc::ByteBuffer answer_;
      };
      return new Reactor(answer_);
    }

   private:
    grpc::ByteBuffer answer_;
  };
  Service service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

struct RecvOutcome {
  WorkerClient::RecvTensorResult result;
  std::chrono::steady_clock::duration took;
};

// RecvTensor through a WorkerClient that accepts the bulk channel (or not),
// cancelled after `cancel_after` if positive.
RecvOutcome Recv(const std::string& address, std::chrono::milliseconds timeout,
                 bool accept_bulk = true, std::chrono::milliseconds cancel_after = 0ms) {
  ChannelOptions options;
  options.bulk_min_bytes = accept_bulk ? 1 : 0;
  auto client = WorkerClient::Create(address, options);
  CHECK(client.ok());
  wire::RecvTensorRequest request;
  request.set_step_id(1);
  request.set_rendezvous_key("k");
  Notification done;
  RecvOutcome outcome;
  const auto start = Clock::now();
  WorkerClient::Cancel cancel =
      (*client)->RecvTensorAsync(request, timeout, [&](WorkerClient::RecvTensorResult result) {
        outcome.result = std::move(result);
        outcome.took = Clock::now() - start;
        done.Notify();
      });
  if (cancel_after.count() > 0) {
    std::this_thread::sleep_for(cancel_after);
    cancel();
  }
  done.Wait();
  return outcome;
}

Tensor Floats(int64_t n) {
  Tensor value(DT_FLOAT, TensorShape({n}));
  for (float& v : value.flat<float>()) v = 1.f;
  return value;
}

TEST(BulkRecvTensorTest, ASenderThatDiesMidTransferFailsTheRecvUnavailableNamingIt) {
  FakeSender sender;
  const int64_t n = 4 << 20;
  sender.Serve([n](int fd) {
    FakeSender::SendHeader(fd, n * 4);
    std::vector<char> part(1 << 20, 'x');
    send(fd, part.data(), part.size(), MSG_NOSIGNAL);
  });
  FakeWorker worker(EncodeBulkRecvTensorResponse(Floats(n), std::string(16, 't'), sender.port));
  RecvOutcome outcome = Recv(worker.address(), 30s);
  const Status& status = outcome.result.status;
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_TRUE(outcome.result.bulk_failed);
  EXPECT_NE(status.message().find(worker.address()), std::string::npos) << status;
  EXPECT_NE(status.message().find(StrCat("127.0.0.1:", sender.port)), std::string::npos) << status;
  EXPECT_LT(outcome.took, 5s);
}

TEST(BulkRecvTensorTest, ABlockedReadEndsAtTheDeadlineOrACancel) {
  for (bool by_cancel : {false, true}) {
    std::atomic<bool> release{false};  // outlives `sender`, whose thread reads it until joined
    FakeSender sender;
    sender.Serve([&](int fd) {
      FakeSender::SendHeader(fd, 4096);
      while (!release) std::this_thread::sleep_for(5ms);
    });
    FakeWorker worker(
        EncodeBulkRecvTensorResponse(Floats(1024), std::string(16, 't'), sender.port));
    RecvOutcome outcome =
        by_cancel ? Recv(worker.address(), 60s, true, 300ms) : Recv(worker.address(), 300ms);
    release = true;
    const Status& status = outcome.result.status;
    EXPECT_EQ(status.code(), by_cancel ? Code::kCancelled : Code::kDeadlineExceeded) << status;
    EXPECT_LT(outcome.took, 3s);
  }
}

TEST(BulkRecvTensorTest, HostileBulkAnswersAreRefusedBeforeAnyRead) {
  // A byte count other than the shape's.
  wire::RecvTensorResponse wrong_count;
  wrong_count.mutable_tensor()->set_dtype(wire::DT_FLOAT);
  wrong_count.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(1 << 30);
  wrong_count.mutable_bulk_transfer()->set_ticket(std::string(16, 't'));
  wrong_count.mutable_bulk_transfer()->set_port(1);
  wrong_count.mutable_bulk_transfer()->set_byte_count(16);
  // A short ticket; a string value; a dead value; content as well.
  wire::RecvTensorResponse short_ticket = wrong_count;
  short_ticket.mutable_bulk_transfer()->set_byte_count(int64_t{4} << 30);
  short_ticket.mutable_bulk_transfer()->set_ticket("t");
  wire::RecvTensorResponse strings = short_ticket;
  strings.mutable_tensor()->set_dtype(wire::DT_STRING);
  strings.mutable_bulk_transfer()->set_ticket(std::string(16, 't'));
  wire::RecvTensorResponse dead = short_ticket;
  dead.mutable_bulk_transfer()->set_ticket(std::string(16, 't'));
  dead.set_is_dead(true);
  wire::RecvTensorResponse content;
  content.mutable_tensor()->set_dtype(wire::DT_FLOAT);
  content.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(1);
  content.mutable_tensor()->set_tensor_content(std::string(4, 'x'));
  content.mutable_bulk_transfer()->set_ticket(std::string(16, 't'));
  content.mutable_bulk_transfer()->set_port(1);
  content.mutable_bulk_transfer()->set_byte_count(4);
  for (const wire::RecvTensorResponse* answer :
       {&wrong_count, &short_ticket, &strings, &dead, &content}) {
    grpc::Slice slice(answer->SerializeAsString());
    FakeWorker worker(grpc::ByteBuffer(&slice, 1));
    RecvOutcome outcome = Recv(worker.address(), 10s);
    EXPECT_EQ(outcome.result.status.code(), Code::kInvalidArgument) << outcome.result.status;
    EXPECT_TRUE(outcome.result.malformed);
  }
  // A good bulk answer to a caller that did not ask for one.
  FakeWorker worker(EncodeBulkRecvTensorResponse(Floats(4), std::string(16, 't'), 1));
  RecvOutcome outcome = Recv(worker.address(), 10s, /*accept_bulk=*/false);
  EXPECT_EQ(outcome.result.status.code(), Code::kInvalidArgument) << outcome.result.status;
  EXPECT_NE(outcome.result.status.message().find("nobody asked for"), std::string::npos);
}

}  // namespace
}  // namespace weir
