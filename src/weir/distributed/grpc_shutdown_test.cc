// ShutdownPromptly with a real gRPC server whose GetStatus is slow: a call in
// flight still gets its response; one longer than the grace is cancelled;
// an idle connected client does not hold the stop up.
#include "weir/distributed/grpc_shutdown.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "proto/worker_service.grpc.pb.h"

namespace weir {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class SlowWorkerService final : public wire::WorkerService::Service {
 public:
  explicit SlowWorkerService(std::chrono::milliseconds delay) : delay_(delay) {}
  grpc::Status GetStatus(grpc::ServerContext* context, const wire::GetStatusRequest*,
                         wire::GetStatusResponse* response) override {
    started_ = true;
    auto end = Clock::now() + delay_;
    while (Clock::now() < end && !context->IsCancelled()) std::this_thread::sleep_for(5ms);
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    response->add_device_attributes()->set_name("slow");
    return grpc::Status::OK;
  }
  std::atomic<bool> started_{false};

 private:
  std::chrono::milliseconds delay_;
};

struct Fixture {
  explicit Fixture(std::chrono::milliseconds delay) : service(delay) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> factories;
    factories.push_back(calls.MakeFactory());
    builder.experimental().SetInterceptorCreators(std::move(factories));
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                  grpc::InsecureChannelCredentials());
    stub = wire::WorkerService::NewStub(channel);
  }
  grpc::Status Call() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    wire::GetStatusRequest request;
    wire::GetStatusResponse response;
    grpc::Status status = stub->GetStatus(&context, request, &response);
    if (status.ok() && (response.device_attributes_size() != 1 ||
                        response.device_attributes(0).name() != "slow")) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "wrong response");
    }
    return status;
  }
  // Starts a call on another thread and waits until the service has it.
  void StartCall() {
    caller = std::thread([this] { result = Call(); });
    while (!service.started_) std::this_thread::sleep_for(1ms);
  }

  InflightCalls calls;  // outlives the server
  SlowWorkerService service;
  std::unique_ptr<grpc::Server> server;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<wire::WorkerService::Stub> stub;
  std::thread caller;
  grpc::Status result;
};

TEST(ShutdownPromptlyTest, ACallInFlightStillGetsItsResponse) {
  Fixture f(300ms);
  f.StartCall();
  EXPECT_EQ(f.calls.count(), 1);
  auto start = Clock::now();
  ShutdownPromptly(f.server.get(), &f.calls, 5s);
  auto took = Clock::now() - start;
  f.caller.join();
  EXPECT_TRUE(f.result.ok()) << f.result.error_message();
  EXPECT_LT(took, 2s);  // the call's 300 ms, not the 5 s grace
  EXPECT_EQ(f.calls.count(), 0);
}

TEST(ShutdownPromptlyTest, ACallLongerThanTheGraceIsCancelled) {
  Fixture f(20s);
  f.StartCall();
  auto start = Clock::now();
  ShutdownPromptly(f.server.get(), &f.calls, 200ms);
  auto took = Clock::now() - start;
  f.caller.join();
  EXPECT_FALSE(f.result.ok());
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 3s);
}

TEST(ShutdownPromptlyTest, AnIdleConnectedClientDoesNotHoldItUp) {
  Fixture f(0ms);
  ASSERT_TRUE(f.Call().ok());  // connected, and the channel stays open
  // The server finishes its side of the call just after the client has
  // the response.
  EXPECT_TRUE(f.calls.WaitForNone(1s));
  auto start = Clock::now();
  ShutdownPromptly(f.server.get(), &f.calls, 5s);
  EXPECT_LT(Clock::now() - start, 500ms);
}

}  // namespace
}  // namespace weir
