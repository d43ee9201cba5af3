#include "weir/distributed/grpc_shutdown.h"

namespace weir {
namespace {

// Counts its call for its lifetime: gRPC creates it when the call arrives
// and destroys it when the call is done.
class CountingInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit CountingInterceptor(InflightCalls* calls) : calls_(calls) { calls_->Add(); }
  ~CountingInterceptor() override { calls_->Remove(); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  InflightCalls* calls_;
};

class CountingFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CountingFactory(InflightCalls* calls) : calls_(calls) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo*) override {
    return new CountingInterceptor(calls_);  // gRPC owns it
  }

 private:
  InflightCalls* calls_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
InflightCalls::MakeFactory() {
  return std::make_unique<CountingFactory>(this);
}

void InflightCalls::Add() {
  std::lock_guard<std::mutex> lock(mu_);
  ++count_;
}

void InflightCalls::Remove() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--count_ == 0) none_.notify_all();
}

int InflightCalls::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

bool InflightCalls::WaitForNone(std::chrono::milliseconds grace) {
  std::unique_lock<std::mutex> lock(mu_);
  return none_.wait_for(lock, grace, [&] { return count_ == 0; });
}

void ShutdownPromptly(grpc::Server* server, InflightCalls* calls, std::chrono::milliseconds grace) {
  calls->WaitForNone(grace);
  // A deadline already past: cancel whatever is left and drop connections.
  server->Shutdown(std::chrono::system_clock::now());
}

}  // namespace weir
