#include "weir/distributed/worker_client.h"

#include <grpcpp/grpcpp.h>

#include "proto/worker_service.grpc.pb.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_util.h"

namespace weir {

struct WorkerClient::Impl {
  std::unique_ptr<wire::WorkerService::Stub> stub;
};

WorkerClient::WorkerClient(std::string address, ChannelOptions options)
    : address_(std::move(address)), options_(std::move(options)) {}
WorkerClient::~WorkerClient() = default;

StatusOr<std::unique_ptr<WorkerClient>> WorkerClient::Create(const std::string& address,
                                                             const ChannelOptions& options) {
  if (address.empty() || address.find(':') == std::string::npos) {
    return errors::InvalidArgument("worker address '", address, "' is not host:port");
  }
  StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(address, options);
  if (!channel.ok()) {
    return Status(channel.status().code(),
                  StrCat("client of ", address, ": ", channel.status().message()));
  }
  std::unique_ptr<WorkerClient> client(new WorkerClient(address, options));
  client->impl_ = std::make_unique<Impl>();
  // Calls fail fast on a refused connection rather than waiting for the
  // deadline (the default for calls without wait_for_ready).
  client->impl_->stub = wire::WorkerService::NewStub(*channel);
  return client;
}

StatusOr<std::vector<DeviceAttributes>> WorkerClient::GetStatus(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) {
    return errors::InvalidArgument("GetStatus to ", address_, ": timeout must be positive");
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  wire::GetStatusRequest request;
  wire::GetStatusResponse response;
  grpc::Status status = impl_->stub->GetStatus(&context, request, &response);
  WEIR_RETURN_IF_ERROR(FromGrpcCallStatus(status, StrCat("GetStatus to ", address_), options_));
  std::vector<DeviceAttributes> devices;
  for (const wire::DeviceAttributes& in : response.device_attributes()) {
    DeviceAttributes device;
    device.name = in.name();
    device.device_type = in.device_type();
    device.memory_limit = in.memory_limit();
    device.incarnation = in.incarnation();
    device.physical_device_desc = in.physical_device_desc();
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace weir
