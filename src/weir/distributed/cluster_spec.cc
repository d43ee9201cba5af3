#include "weir/distributed/cluster_spec.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "proto/cluster.pb.h"
#include "proto/server.pb.h"
#include "weir/base/str_util.h"
#include "weir/framework/device_name.h"

namespace weir {
namespace {

using json = nlohmann::json;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status CheckJobName(std::string_view job) {
  if (job.empty()) return errors::InvalidArgument("empty job name");
  bool ok = std::isalpha(static_cast<unsigned char>(job[0]));
  for (char c : job) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  }
  if (!ok) {
    return errors::InvalidArgument("job name '", job,
                                   "' must be a letter followed by letters, digits, '_' or '-'");
  }
  return Status::OK();
}

// Splits "host:port" or "[v6]:port"; the port is returned in *port.
Status CheckAddress(std::string_view address, int* port) {
  auto bad = [&](std::string_view why) {
    return errors::InvalidArgument("address '", address, "' ", why,
                                   " (expected host:port, e.g. localhost:2222 or [::1]:2222)");
  };
  std::string_view host, port_text;
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return bad("has a malformed [IPv6] host");
    }
    host = address.substr(1, close - 1);
    port_text = address.substr(close + 2);
    if (host.empty()) return bad("has an empty host");
    for (char c : host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return bad("has a malformed [IPv6] host");
      }
    }
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return bad("has no port");
    host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
    if (host.empty()) return bad("has an empty host");
    for (char c : host) {
      if (c == ':') return bad("has an IPv6 host without [brackets]");
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
        return bad(StrCat("has the character '", std::string(1, c), "' in its host"));
      }
    }
  }
  int64_t value;
  if (!AllDigits(port_text) || port_text.size() > 5 || !ParseInt64(port_text, &value) ||
      value > 65535) {
    return bad(StrCat("has port '", port_text, "', not a number in 0..65535"));
  }
  *port = static_cast<int>(value);
  return Status::OK();
}

// A task index from TF_CONFIG/JSON: an integer (or, as a dict key, its
// decimal text) in 0..INT32_MAX.
StatusOr<int> ParseIndex(std::string_view text, std::string_view what) {
  int64_t value;
  if (!AllDigits(text) || text.size() > 10 || !ParseInt64(text, &value) || value > INT32_MAX) {
    return errors::InvalidArgument(what, " '", text, "' is not a task index (0..2147483647)");
  }
  return static_cast<int>(value);
}

StatusOr<int> JsonIndex(const json& value, std::string_view what) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v <= static_cast<uint64_t>(INT32_MAX)) return static_cast<int>(v);
  } else if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v >= 0 && v <= INT32_MAX) return static_cast<int>(v);
  }
  return errors::InvalidArgument(what, " is ", value.dump(),
                                 ", not a task index (an integer in 0..2147483647)");
}

StatusOr<ClusterSpec> FromJsonObject(const json& cluster) {
  if (!cluster.is_object()) {
    return errors::InvalidArgument("the cluster must be a JSON object of job -> addresses, not ",
                                   cluster.type_name());
  }
  std::map<std::string, ClusterSpec::Tasks> jobs;
  for (const auto& [job, tasks] : cluster.items()) {
    ClusterSpec::Tasks& out = jobs[job];
    std::string where = StrCat("job '", job, "'");
    if (tasks.is_array()) {
      for (size_t i = 0; i < tasks.size(); ++i) {
        if (!tasks[i].is_string()) {
          return errors::InvalidArgument(where, " task ", i, ": the address must be a string, not ",
                                         tasks[i].dump());
        }
        out[static_cast<int>(i)] = tasks[i].get<std::string>();
      }
    } else if (tasks.is_object()) {
      for (const auto& [key, address] : tasks.items()) {
        WEIR_ASSIGN_OR_RETURN(int index, ParseIndex(key, StrCat(where, " task key")));
        if (!address.is_string()) {
          return errors::InvalidArgument(where, " task ", index,
                                         ": the address must be a string, not ", address.dump());
        }
        if (!out.emplace(index, address.get<std::string>()).second) {
          return errors::InvalidArgument(where, " names task ", index, " twice");
        }
      }
    } else {
      return errors::InvalidArgument(where, " must be a list of addresses or a dict of index -> ",
                                     "address, not ", tasks.dump());
    }
  }
  return ClusterSpec::FromJobs(std::move(jobs));
}

json ToJsonObject(const ClusterSpec& spec) {
  json cluster = json::object();
  for (const auto& [job, tasks] : spec.jobs()) {
    bool dense = tasks.rbegin()->first + 1 == static_cast<int64_t>(tasks.size());
    if (dense) {
      json list = json::array();
      for (const auto& [index, address] : tasks) list.push_back(address);
      cluster[job] = std::move(list);
    } else {
      json dict = json::object();
      for (const auto& [index, address] : tasks) dict[std::to_string(index)] = address;
      cluster[job] = std::move(dict);
    }
  }
  return cluster;
}

}  // namespace

StatusOr<ClusterSpec> ClusterSpec::FromJobs(std::map<std::string, Tasks> jobs) {
  std::map<std::string, std::string> owner;  // address -> "job 'j' task t"
  for (const auto& [job, tasks] : jobs) {
    WEIR_RETURN_IF_ERROR(CheckJobName(job));
    if (tasks.empty()) return errors::InvalidArgument("job '", job, "' has no tasks");
    for (const auto& [index, address] : tasks) {
      std::string where = StrCat("job '", job, "' task ", index);
      if (index < 0) return errors::InvalidArgument(where, ": negative task index");
      int port = 0;
      WEIR_RETURN_IF_ERROR(CheckAddress(address, &port).WithContext(where));
      if (port == 0) continue;  // each picks its own free port
      auto [it, inserted] = owner.emplace(address, where);
      if (!inserted) {
        return errors::InvalidArgument(where, " has the address '", address, "' of ", it->second,
                                       ": two tasks cannot listen on one address");
      }
    }
  }
  ClusterSpec spec;
  spec.jobs_ = std::move(jobs);
  return spec;
}

StatusOr<ClusterSpec> ClusterSpec::ParseFlags(std::string_view text) {
  std::map<std::string, Tasks> jobs;
  if (Trim(text).empty()) return errors::InvalidArgument("--cluster: empty cluster specification");
  for (const std::string& part : StrSplit(text, ';')) {
    std::string_view job_text = Trim(part);
    if (job_text.empty()) continue;  // a trailing ';'
    size_t eq = job_text.find('=');
    if (eq == std::string_view::npos) {
      return errors::InvalidArgument("--cluster: '", job_text,
                                     "' must be JOB=ADDRESS[,ADDRESS...], e.g. "
                                     "worker=localhost:2222,localhost:2223;ps=localhost:2224");
    }
    std::string job(Trim(job_text.substr(0, eq)));
    WEIR_RETURN_IF_ERROR(CheckJobName(job).WithContext("--cluster"));
    if (jobs.count(job)) return errors::InvalidArgument("--cluster: job '", job, "' given twice");
    Tasks& tasks = jobs[job];
    std::string_view addresses = Trim(job_text.substr(eq + 1));
    if (addresses.empty())
      return errors::InvalidArgument("--cluster: job '", job, "' has no tasks");
    int index = 0;
    for (const std::string& address : StrSplit(addresses, ',')) {
      tasks[index++] = std::string(Trim(address));
    }
  }
  StatusOr<ClusterSpec> spec = FromJobs(std::move(jobs));
  if (!spec.ok()) return spec.status().WithContext("--cluster");
  return spec;
}

StatusOr<ClusterSpec> ClusterSpec::ParseJson(std::string_view text) {
  json cluster = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (cluster.is_discarded()) return errors::InvalidArgument("the cluster is not valid JSON");
  return FromJsonObject(cluster);
}

StatusOr<ClusterSpec> ClusterSpec::FromProto(const wire::ClusterDef& proto) {
  std::map<std::string, Tasks> jobs;
  for (const wire::JobDef& job : proto.job()) {
    if (jobs.count(job.name())) {
      return errors::InvalidArgument("ClusterDef: job '", job.name(), "' appears twice");
    }
    Tasks& tasks = jobs[job.name()];
    for (const auto& [index, address] : job.tasks()) tasks[index] = address;
  }
  StatusOr<ClusterSpec> spec = FromJobs(std::move(jobs));
  if (!spec.ok()) return spec.status().WithContext("ClusterDef");
  return spec;
}

std::vector<std::string> ClusterSpec::job_names() const {
  std::vector<std::string> names;
  for (const auto& [job, tasks] : jobs_) names.push_back(job);
  return names;
}

StatusOr<const ClusterSpec::Tasks*> ClusterSpec::job_tasks(std::string_view job) const {
  auto it = jobs_.find(std::string(job));
  if (it == jobs_.end()) {
    return errors::NotFound("no job '", job, "' in the cluster (jobs: ", StrJoin(job_names(), ", "),
                            ")");
  }
  return &it->second;
}

StatusOr<std::string> ClusterSpec::task_address(std::string_view job, int task) const {
  WEIR_ASSIGN_OR_RETURN(const Tasks* tasks, job_tasks(job));
  auto it = tasks->find(task);
  if (it == tasks->end()) {
    std::vector<int> indices;
    for (const auto& [index, address] : *tasks) indices.push_back(index);
    return errors::NotFound("job '", job, "' has no task ", task,
                            " (its tasks: ", StrJoin(indices, ", "), ")");
  }
  return it->second;
}

int ClusterSpec::num_tasks(std::string_view job) const {
  auto it = jobs_.find(std::string(job));
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

std::string ClusterSpec::ToJson() const { return ToJsonObject(*this).dump(); }

void ClusterSpec::ToProto(wire::ClusterDef* proto) const {
  proto->Clear();
  for (const auto& [job, tasks] : jobs_) {
    wire::JobDef* job_def = proto->add_job();
    job_def->set_name(job);
    for (const auto& [index, address] : tasks) (*job_def->mutable_tasks())[index] = address;
  }
}

std::string ClusterSpec::TaskName(std::string_view job, int task) {
  return StrCat("/job:", job, "/replica:0/task:", task);
}

std::vector<std::string> ClusterSpec::DeviceNames(std::string_view type, int num_devices) const {
  std::vector<std::string> names;
  for (const auto& [job, tasks] : jobs_) {
    for (const auto& [index, address] : tasks) {
      for (int id = 0; id < num_devices; ++id) {
        names.push_back(FullDeviceName(job, 0, index, std::string(type), id));
      }
    }
  }
  return names;
}

Status ClusterConfig::Validate() const {
  Status found = cluster.task_address(job, task).status();
  // The caller named a task the cluster lacks: a bad argument, not a lookup.
  if (!found.ok()) return errors::InvalidArgument(found.message());
  return Status::OK();
}

StatusOr<ClusterConfig> ParseTfConfig(std::string_view text) {
  auto bad = [](auto&&... args) { return errors::InvalidArgument("TF_CONFIG: ", args...); };
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return bad(
        "not valid JSON; expected {\"cluster\": {\"worker\": [\"host:port\", ...]}, "
        "\"task\": {\"type\": \"worker\", \"index\": 0}}");
  }
  if (!root.is_object()) return bad("must be a JSON object, not ", root.type_name());
  auto cluster = root.find("cluster");
  if (cluster == root.end()) return bad("missing 'cluster'");
  ClusterConfig config;
  StatusOr<ClusterSpec> spec = FromJsonObject(*cluster);
  if (!spec.ok()) return spec.status().WithContext("TF_CONFIG: cluster");
  config.cluster = std::move(*spec);
  auto task = root.find("task");
  if (task == root.end()) return bad("missing 'task' ({\"type\": JOB, \"index\": N})");
  if (!task->is_object()) return bad("'task' must be an object, not ", task->dump());
  auto type = task->find("type");
  if (type == task->end() || !type->is_string()) {
    return bad("'task.type' (the job name, a string) is missing or not a string");
  }
  config.job = type->get<std::string>();
  auto index = task->find("index");
  if (index == task->end()) return bad("missing 'task.index'");
  StatusOr<int> task_index = JsonIndex(*index, "'task.index'");
  if (!task_index.ok()) return task_index.status().WithContext("TF_CONFIG");
  config.task = *task_index;
  Status valid = config.Validate();
  if (!valid.ok()) return bad("'task' is not a task of the cluster: ", valid.message());
  return config;
}

std::string ToTfConfig(const ClusterConfig& config) {
  json root = json::object();
  root["cluster"] = ToJsonObject(config.cluster);
  root["task"] = {{"type", config.job}, {"index", config.task}};
  return root.dump();
}

StatusOr<ClusterConfig> ClusterConfigFromFlags(std::string_view cluster, std::string_view job,
                                               int task) {
  ClusterConfig config;
  WEIR_ASSIGN_OR_RETURN(config.cluster, ClusterSpec::ParseFlags(cluster));
  config.job = std::string(job);
  config.task = task;
  if (job.empty()) return errors::InvalidArgument("--job: missing (the job of this task)");
  if (task < 0) return errors::InvalidArgument("--task: ", task, " is negative");
  WEIR_RETURN_IF_ERROR(config.Validate().WithContext("--job/--task"));
  return config;
}

StatusOr<ClusterConfig> ClusterConfigFromServerDef(const wire::ServerDef& server_def) {
  if (!server_def.protocol().empty() && server_def.protocol() != "grpc") {
    return errors::InvalidArgument("ServerDef: protocol '", server_def.protocol(),
                                   "' is not supported (only \"grpc\")");
  }
  ClusterConfig config;
  WEIR_ASSIGN_OR_RETURN(config.cluster, ClusterSpec::FromProto(server_def.cluster()));
  config.job = server_def.job_name();
  config.task = server_def.task_index();
  WEIR_RETURN_IF_ERROR(config.Validate().WithContext("ServerDef job_name/task_index"));
  return config;
}

void ToServerDef(const ClusterConfig& config, wire::ServerDef* server_def) {
  server_def->Clear();
  config.cluster.ToProto(server_def->mutable_cluster());
  server_def->set_job_name(config.job);
  server_def->set_task_index(config.task);
  server_def->set_protocol("grpc");
}

}  // namespace weir
