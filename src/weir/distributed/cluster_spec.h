// ClusterSpec: the tasks of a cluster, job name -> task index -> "host:port",
// and the ways launchers describe one: TF_CONFIG (Kubernetes training
// operators and other launchers), a flags string, Slurm's environment, and
// the ClusterDef/ServerDef wire messages (TensorFlow's field numbers).
//
// Every constructor validates: job names are [A-Za-z][A-Za-z0-9_-]*, each job
// has at least one task, indices are non-negative and may be sparse,
// addresses are "host:port" (or "[v6]:port") with a port in 0..65535, and no
// two tasks share an address (port 0, "pick a free port", is exempt). A bad
// spec is an InvalidArgument naming the field at fault.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"

namespace weir {

namespace wire {
class ClusterDef;
class ServerDef;
}  // namespace wire

class ClusterSpec {
 public:
  using Tasks = std::map<int, std::string>;  // task index -> "host:port"

  ClusterSpec() = default;

  // A validated spec from its jobs.
  static StatusOr<ClusterSpec> FromJobs(std::map<std::string, Tasks> jobs);
  // "worker=localhost:2222,localhost:2223;ps=localhost:2224": jobs separated
  // by ';', each "NAME=ADDRESS,ADDRESS...", tasks numbered from 0.
  static StatusOr<ClusterSpec> ParseFlags(std::string_view text);
  // The "cluster" object of TF_CONFIG as JSON text: each job a list of
  // addresses ({"worker": ["h:p", ...]}) or a dict of index -> address
  // ({"worker": {"1": "h:p"}}).
  static StatusOr<ClusterSpec> ParseJson(std::string_view json);
  static StatusOr<ClusterSpec> FromProto(const wire::ClusterDef& proto);

  const std::map<std::string, Tasks>& jobs() const { return jobs_; }
  bool empty() const { return jobs_.empty(); }
  // Job names, sorted.
  std::vector<std::string> job_names() const;
  // The tasks of `job`, or NotFound listing the jobs.
  StatusOr<const Tasks*> job_tasks(std::string_view job) const;
  // The address of one task, or NotFound naming the job and its tasks.
  StatusOr<std::string> task_address(std::string_view job, int task) const;
  int num_tasks(std::string_view job) const;

  // The cluster object of TF_CONFIG: dense jobs (indices 0..n-1) as lists,
  // sparse ones as dicts. ParseJson(ToJson()) gives an equal spec.
  std::string ToJson() const;
  void ToProto(wire::ClusterDef* proto) const;

  // "/job:<job>/replica:0/task:<task>", the prefix of its devices' names.
  static std::string TaskName(std::string_view job, int task);
  // The full names of `num_devices` devices of `type` on every task, in job
  // and task order: "/job:ps/replica:0/task:0/device:CPU:0", ...
  std::vector<std::string> DeviceNames(std::string_view type, int num_devices) const;

  bool operator==(const ClusterSpec& other) const { return jobs_ == other.jobs_; }

 private:
  std::map<std::string, Tasks> jobs_;
};

// A cluster and the task of it that this process is.
struct ClusterConfig {
  ClusterSpec cluster;
  std::string job;
  int task = 0;

  // InvalidArgument unless `job`/`task` name a task of `cluster`.
  Status Validate() const;
};

// TF_CONFIG: {"cluster": {...}, "task": {"type": "worker", "index": 0}}.
// Other keys ("rpc_layer", "environment") are ignored. The task is required
// and must be one of the cluster's.
StatusOr<ClusterConfig> ParseTfConfig(std::string_view json);
// The TF_CONFIG text of `config`; ParseTfConfig(ToTfConfig(c)) gives `c`.
std::string ToTfConfig(const ClusterConfig& config);

// --cluster SPEC --job JOB --task N, as weir-server takes them.
StatusOr<ClusterConfig> ClusterConfigFromFlags(std::string_view cluster, std::string_view job,
                                               int task);

// ServerDef <-> ClusterConfig. The protocol must be empty or "grpc".
StatusOr<ClusterConfig> ClusterConfigFromServerDef(const wire::ServerDef& server_def);
void ToServerDef(const ClusterConfig& config, wire::ServerDef* server_def);

// Slurm's compressed host lists: "node[01-03,07],gpu5" -> node01 node02
// node03 node07 gpu5 (zero padding kept). Errors name the malformed part.
StatusOr<std::vector<std::string>> ExpandSlurmNodeList(std::string_view node_list);

struct SlurmOptions {
  std::string job = "worker";  // every task belongs to this job
  int base_port = 8888;        // task k of a node listens on base_port + k
  // Tasks per node; 0 reads SLURM_NTASKS_PER_NODE, else SLURM_NTASKS spread
  // evenly over the nodes.
  int tasks_per_node = 0;
};
// The cluster of a Slurm job step from its environment (SLURM_JOB_NODELIST
// or SLURM_STEP_NODELIST, SLURM_NTASKS, SLURM_PROCID, SLURM_NTASKS_PER_NODE):
// task i runs on node i / tasks_per_node, as Slurm's block distribution
// places it. `getenv` returns nullptr for a missing variable.
StatusOr<ClusterConfig> ClusterConfigFromSlurm(
    const std::function<const char*(const char*)>& getenv, const SlurmOptions& options);

}  // namespace weir
