// In-process clusters for tests: one Server per task, all on free loopback
// ports of this process.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weir/distributed/server.h"
#include "weir/runtime/session.h"

namespace weir {

// A loopback port free at the time of the call.
int PickFreePort();

struct TestCluster {
  // {{"worker", 2}, {"ps", 1}}: started servers for every task, each with
  // the message limit `max_message_bytes`.
  static StatusOr<TestCluster> Start(const std::vector<std::pair<std::string, int>>& jobs,
                                     int cpu_devices_per_task = 1,
                                     int64_t max_message_bytes = kDefaultMaxMessageBytes);
  // The same with every server's options (the thread counts are set).
  static StatusOr<TestCluster> StartWithOptions(
      const std::vector<std::pair<std::string, int>>& jobs, const ServerOptions& options);
  // "grpc://127.0.0.1:port" of a task ("/job:worker/replica:0/task:0").
  std::string target(const std::string& task) const;
  Server* server(const std::string& task) const { return servers.at(task).get(); }
  // A grpc:// session on `master_task`'s master with `graph` created in it.
  StatusOr<std::unique_ptr<Session>> NewSession(const std::string& master_task,
                                                const GraphDef& graph) const;
  // Waits (polling, at most 2 s) until no task holds step state; false if
  // one still does then.
  bool NoStepStateAnywhere() const;

  ClusterSpec cluster;
  std::map<std::string, std::unique_ptr<Server>> servers;
};

}  // namespace weir
