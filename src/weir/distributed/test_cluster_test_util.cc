#include "weir/distributed/test_cluster_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "weir/base/logging.h"
#include "weir/distributed/worker.h"

namespace weir {

int PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  CHECK(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  socklen_t length = sizeof(address);
  CHECK(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  int port = ntohs(address.sin_port);
  close(fd);
  return port;
}

StatusOr<TestCluster> TestCluster::Start(const std::vector<std::pair<std::string, int>>& jobs,
                                         int cpu_devices_per_task, int64_t max_message_bytes) {
  ServerOptions options;
  options.num_cpu_devices = cpu_devices_per_task;
  options.security.max_message_bytes = max_message_bytes;
  return StartWithOptions(jobs, options);
}

StatusOr<TestCluster> TestCluster::StartWithOptions(
    const std::vector<std::pair<std::string, int>>& jobs, const ServerOptions& base) {
  std::map<std::string, ClusterSpec::Tasks> spec;
  for (const auto& [job, tasks] : jobs) {
    for (int t = 0; t < tasks; ++t) spec[job][t] = StrCat("127.0.0.1:", PickFreePort());
  }
  WEIR_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromJobs(spec));
  TestCluster out;
  out.cluster = cluster;
  for (const auto& [job, tasks] : jobs) {
    for (int t = 0; t < tasks; ++t) {
      ClusterConfig config;
      config.cluster = cluster;
      config.job = job;
      config.task = t;
      ServerOptions options = base;
      options.intra_op_threads = 1;
      options.inter_op_threads = 4;
      WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(config, options));
      WEIR_RETURN_IF_ERROR(server->Start());
      out.servers[ClusterSpec::TaskName(job, t)] = std::move(server);
    }
  }
  return out;
}

std::string TestCluster::target(const std::string& task) const {
  return StrCat("grpc://", servers.at(task)->bound_address());
}

StatusOr<std::unique_ptr<Session>> TestCluster::NewSession(const std::string& master_task,
                                                           const GraphDef& graph) const {
  SessionOptions options;
  options.target = target(master_task);
  auto session = Session::New(options);
  if (!session.ok()) return session.status();
  WEIR_RETURN_IF_ERROR((*session)->Create(graph));
  return std::move(*session);
}

bool TestCluster::NoStepStateAnywhere() const {
  for (int i = 0; i < 200; ++i) {
    int steps = 0;
    for (const auto& [name, server] : servers) steps += server->worker()->num_steps();
    if (steps == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace weir
