// The gRPC faces of the worker and master services, for server.cc. Internal
// to the distributed layer's .cc files that speak gRPC (it names gRPC types).
#pragma once

#include <grpcpp/impl/service_type.h>

#include <functional>
#include <memory>
#include <vector>

#include "weir/distributed/server.h"

namespace weir {

class BulkSender;
class Master;
class Worker;

// The worker service (proto/worker_service.proto) over `worker`; GetStatus
// answers `devices()`. Both borrowed: they must outlive the service.
// RecvTensor sends no message larger than `max_message_bytes` (the
// server's limit) nor than the caller's limit in its request. With `bulk`
// (borrowed, may be null), a numeric value of at least `bulk_min_bytes` and
// of the caller's RecvTensorRequest.bulk_min_bytes (non-zero) goes over the
// bulk-transfer channel (bulk_transfer.h).
std::unique_ptr<grpc::Service> NewGrpcWorkerService(
    Worker* worker, std::function<std::vector<DeviceAttributes>()> devices,
    int64_t max_message_bytes, BulkSender* bulk = nullptr, int64_t bulk_min_bytes = 0);

// The master service (proto/master_service.proto) over `master` (borrowed).
std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master);

}  // namespace weir
