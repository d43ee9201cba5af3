// The cluster of a Slurm job step (declared in cluster_spec.h).
#include <cctype>

#include "weir/base/str_util.h"
#include "weir/distributed/cluster_spec.h"

namespace weir {
namespace {

// A host list larger than this is refused rather than expanded.
constexpr size_t kMaxHosts = 1 << 16;

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Appends the expansion of one item ("node[01-03,07]-ib[0-1]", "gpu5").
Status ExpandItem(std::string_view item, std::string_view whole, std::vector<std::string>* out) {
  auto bad = [&](std::string_view why) {
    return errors::InvalidArgument("Slurm node list '", whole, "': '", item, "' ", why,
                                   " (expected e.g. node[01-03,07],gpu5)");
  };
  size_t open = item.find('[');
  if (open == std::string_view::npos) {
    if (item.find(']') != std::string_view::npos) return bad("has ']' without '['");
    if (item.empty()) return bad("is an empty host name");
    out->emplace_back(item);
    return Status::OK();
  }
  size_t close = item.find(']', open);
  if (close == std::string_view::npos) return bad("has '[' without ']'");
  std::string_view prefix = item.substr(0, open);
  std::string_view ranges = item.substr(open + 1, close - open - 1);
  std::string_view rest = item.substr(close + 1);
  if (ranges.empty()) return bad("has an empty range []");
  for (const std::string& range : StrSplit(ranges, ',')) {
    size_t dash = range.find('-');
    std::string lo_text = range.substr(0, dash);
    std::string hi_text = dash == std::string::npos ? lo_text : range.substr(dash + 1);
    int64_t lo, hi;
    if (!AllDigits(lo_text) || !AllDigits(hi_text) || lo_text.size() > 9 || hi_text.size() > 9 ||
        !ParseInt64(lo_text, &lo) || !ParseInt64(hi_text, &hi)) {
      return bad(StrCat("has the range '", range, "', not N or N-M"));
    }
    if (hi < lo) return bad(StrCat("has the range '", range, "', whose end is below its start"));
    if (static_cast<size_t>(hi - lo) >= kMaxHosts) {
      return bad(StrCat("expands to more than ", kMaxHosts, " hosts"));
    }
    // Slurm pads to the width the low end is written with ("01-10").
    size_t width = lo_text.size();
    for (int64_t n = lo; n <= hi; ++n) {
      std::string number = std::to_string(n);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      std::vector<std::string> tails;
      WEIR_RETURN_IF_ERROR(ExpandItem(StrCat(prefix, number, rest), whole, &tails));
      if (out->size() + tails.size() > kMaxHosts) {
        return bad(StrCat("expands to more than ", kMaxHosts, " hosts"));
      }
      for (std::string& tail : tails) out->push_back(std::move(tail));
    }
  }
  return Status::OK();
}

StatusOr<int> EnvInt(const std::function<const char*(const char*)>& getenv, const char* name,
                     bool required, int fallback) {
  const char* value = getenv(name);
  if (value == nullptr) {
    if (required) return errors::InvalidArgument(name, " is not set: not inside a Slurm job step?");
    return fallback;
  }
  int64_t n;
  if (!AllDigits(value) || !ParseInt64(value, &n) || n > INT32_MAX) {
    return errors::InvalidArgument(name, "='", value, "' is not a non-negative integer");
  }
  return static_cast<int>(n);
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandSlurmNodeList(std::string_view node_list) {
  std::vector<std::string> hosts;
  // Split at the commas outside brackets.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= node_list.size(); ++i) {
    char c = i < node_list.size() ? node_list[i] : ',';
    if (c == '[') {
      if (++depth > 1) {
        return errors::InvalidArgument("Slurm node list '", node_list, "' has nested brackets");
      }
    } else if (c == ']') {
      if (--depth < 0) {
        return errors::InvalidArgument("Slurm node list '", node_list, "' has ']' without '['");
      }
    } else if (c == ',' && depth == 0) {
      WEIR_RETURN_IF_ERROR(ExpandItem(node_list.substr(start, i - start), node_list, &hosts));
      start = i + 1;
    }
  }
  if (depth != 0) {
    return errors::InvalidArgument("Slurm node list '", node_list, "' has an unclosed '['");
  }
  return hosts;
}

StatusOr<ClusterConfig> ClusterConfigFromSlurm(
    const std::function<const char*(const char*)>& getenv, const SlurmOptions& options) {
  const char* node_list = getenv("SLURM_STEP_NODELIST");
  if (node_list == nullptr) node_list = getenv("SLURM_JOB_NODELIST");
  if (node_list == nullptr) {
    return errors::InvalidArgument(
        "neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set: not inside a Slurm job?");
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<std::string> nodes, ExpandSlurmNodeList(node_list));
  WEIR_ASSIGN_OR_RETURN(int num_tasks, EnvInt(getenv, "SLURM_NTASKS", true, 0));
  WEIR_ASSIGN_OR_RETURN(int proc_id, EnvInt(getenv, "SLURM_PROCID", true, 0));
  if (num_tasks == 0) return errors::InvalidArgument("SLURM_NTASKS is 0");
  if (proc_id >= num_tasks) {
    return errors::InvalidArgument("SLURM_PROCID=", proc_id,
                                   " is not below SLURM_NTASKS=", num_tasks);
  }
  int per_node = options.tasks_per_node;
  if (per_node < 0) return errors::InvalidArgument("tasks per node ", per_node, " is negative");
  if (per_node == 0) {
    // Absent, or Slurm's "2(x3)" form for uneven steps: spread evenly.
    int even =
        static_cast<int>((static_cast<int64_t>(num_tasks) + nodes.size() - 1) / nodes.size());
    const char* text = getenv("SLURM_NTASKS_PER_NODE");
    int64_t n;
    per_node = text != nullptr && AllDigits(text) && ParseInt64(text, &n) && n > 0 && n <= INT32_MAX
                   ? static_cast<int>(n)
                   : even;
  }
  if (static_cast<int64_t>(per_node) * nodes.size() < num_tasks) {
    return errors::InvalidArgument("SLURM_NTASKS=", num_tasks, " tasks do not fit on ",
                                   nodes.size(), " nodes at ", per_node, " per node (", node_list,
                                   ")");
  }
  if (options.base_port < 1 || static_cast<int64_t>(options.base_port) + per_node - 1 > 65535) {
    return errors::InvalidArgument("base port ", options.base_port, " with ", per_node,
                                   " tasks per node leaves 1..65535");
  }
  std::map<std::string, ClusterSpec::Tasks> jobs;
  ClusterSpec::Tasks& tasks = jobs[options.job];
  for (int i = 0; i < num_tasks; ++i) {
    tasks[i] = StrCat(nodes[i / per_node], ":", options.base_port + i % per_node);
  }
  ClusterConfig config;
  StatusOr<ClusterSpec> spec = ClusterSpec::FromJobs(std::move(jobs));
  if (!spec.ok()) return spec.status().WithContext("Slurm");
  config.cluster = std::move(*spec);
  config.job = options.job;
  config.task = proc_id;
  return config;
}

}  // namespace weir
