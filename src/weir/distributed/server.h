// Server: one task of a cluster, serving the worker service and the master
// service over gRPC (distributed/worker.h, distributed/master.h).
// A server binds to loopback unless ServerOptions::host says otherwise; the
// port is that of the task's address in the cluster, and a port of 0 makes
// the system pick a free one, which bound_address() reports and the task's
// own calls to itself use (config() holds it once started); other tasks
// cannot know it, so a session that needs them needs their real port.
//
//   WEIR_ASSIGN_OR_RETURN(auto server, Server::Create(config, ServerOptions()));
//   WEIR_RETURN_IF_ERROR(server->Start());
//   ... server->bound_address() ...
//   server->Stop();   // from any thread; Join() then returns
//
// Thread-safe: Stop may be called from any thread (a signal-handling one),
// any number of times; the destructor stops and joins.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/credentials.h"

namespace weir {

class BulkSender;
class DeviceMgr;
class Master;
class Worker;

namespace wire {
class ServerDef;
}  // namespace wire

struct ServerOptions {
  // The interface to listen on: loopback by default; "0.0.0.0" or "[::]" for
  // every interface, or one address of this host.
  std::string host = "127.0.0.1";
  int num_cpu_devices = 1;
  int inter_op_threads = 0;  // the worker's step pool; 0: one per schedulable core
  int intra_op_threads = 0;  // 0: one per schedulable core
  // TLS, the auth token and message limits (credentials.h); plaintext by
  // default. The task calls its peers with PeerChannelOptions(security).
  ServerSecurity security;
  // The lease of the sessions this task masters on the other tasks: a task
  // that has not heard from this master for this long (it died or was cut
  // off) drops the session and aborts its steps. Renewed by the master's
  // health checks (every 500 ms, 1.5 s timeout), so at least 4000; 0: none.
  int64_t session_lease_ms = 10000;
  // The bulk-transfer channel of RecvTensor (bulk_transfer.h): numeric
  // values of at least bulk_transfer_min_bytes cross tasks over a TCP
  // connection of their own, read straight into the receiver's tensor,
  // when both tasks allow it. Never with TLS (values stay on the encrypted
  // gRPC stream). weir-server --no-bulk-transfer,
  // --bulk-transfer-min-bytes.
  bool bulk_transfer = true;
  int64_t bulk_transfer_min_bytes = int64_t{1} << 20;
  // The lease of this task's master sessions on their clients: a session no
  // call of its client touched for this long (the client died, hung or was
  // cut off) is closed, and its state on every task dropped. Remote clients
  // renew it every quarter of it while they live. At least 400; 0: none.
  int64_t client_session_lease_ms = 60000;
};

// What GetStatus reports of each device (TensorFlow's DeviceAttributes).
struct DeviceAttributes {
  std::string name;         // "/job:worker/replica:0/task:0/device:CPU:0"
  std::string device_type;  // "CPU"
  int64_t memory_limit = 0;
  uint64_t incarnation = 0;
  std::string physical_device_desc;
};

class Server {
 public:
  // A server for task `config.task` of job `config.job`. Creates the task's
  // devices; listens only after Start.
  static StatusOr<std::unique_ptr<Server>> Create(const ClusterConfig& config,
                                                  const ServerOptions& options);
  static StatusOr<std::unique_ptr<Server>> Create(const wire::ServerDef& server_def,
                                                  const ServerOptions& options);
  ~Server();

  // Binds and starts serving. Unavailable if the address cannot be bound
  // (a port in use, or TLS files gRPC rejects); FailedPrecondition if already
  // started or stopped.
  Status Start();
  // Stops accepting calls, finishes the ones in flight, and wakes Join.
  void Stop();
  // Blocks until Stop (returns at once if never started).
  void Join();

  // "127.0.0.1:45123" once started (the picked port when the spec said 0).
  std::string bound_address() const;
  // The cluster and task; once started, this task's port 0 is the bound one.
  const ClusterConfig& config() const { return config_; }
  std::vector<DeviceAttributes> device_attributes() const;
  // The task's worker and master (the logic behind the two services).
  Worker* worker() const;
  Master* master() const;
  // The bulk-transfer sender once started (null: off, TLS, or not started).
  BulkSender* bulk_sender() const;

 private:
  struct Impl;
  Server(ClusterConfig config, ServerOptions options);
  bool bulk_enabled() const { return options_.bulk_transfer && !options_.security.tls(); }

  ClusterConfig config_;
  ServerOptions options_;
  std::unique_ptr<DeviceMgr> devices_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir
