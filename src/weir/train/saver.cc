#include "weir/train/saver.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "weir/base/file_system.h"
#include "weir/base/str_util.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/device_name.h"
#include "weir/ops/const_op.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

constexpr char kStateFile[] = "checkpoint";
// Metrics have no field in TensorFlow's state format (and its parser
// rejects unknown fields), so they live beside it.
constexpr char kMetricsFile[] = "checkpoint_metrics";
constexpr char kDataPattern[] =
    ".data-?????"
    "-of-?????";

// `path` as a glob pattern that matches only itself.
std::string GlobEscape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.starts_with('/')) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The checkpoint state file: lines `model_checkpoint_path: "<p>"` and
// `all_model_checkpoint_paths: "<p>"` (TensorFlow's CheckpointState in text
// format). Returns the `all` paths, oldest first, ending with the newest.
StatusOr<std::vector<std::string>> ParseState(const std::string& path, const std::string& text) {
  std::vector<std::string> all;
  std::string newest;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      return errors::DataLoss("checkpoint state file '", path, "' line ", number,
                              " is not `key: value`: ", line);
    }
    std::string key = line.substr(0, colon);
    key.erase(0, key.find_first_not_of(" \t"));
    // Other CheckpointState fields (timestamps) are ignored.
    if (key != "model_checkpoint_path" && key != "all_model_checkpoint_paths") continue;
    size_t open = line.find('"', colon);
    size_t close = line.rfind('"');
    if (open == std::string::npos || close <= open) {
      return errors::DataLoss("checkpoint state file '", path, "' line ", number,
                              ": ", key, " is not a quoted path: ", line);
    }
    std::string value;
    for (size_t i = open + 1; i < close; ++i) {
      if (line[i] == '\\' && i + 1 < close) ++i;
      value += line[i];
    }
    if (key == "model_checkpoint_path") {
      newest = value;
    } else {
      all.push_back(value);
    }
  }
  if (newest.empty()) return all;
  std::erase(all, newest);
  all.push_back(newest);
  return all;
}

// Deletes what saves killed midway left behind: temporary files
// "<basename>-<step>...tmp.<pid>.<n>" of processes other than this one
// (a save in this process may be under way on another thread).
void RemoveStaleTempFiles(const std::string& dir, const std::string& basename) {
  const std::string own = StrCat(".tmp.", ::getpid(), ".");
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(basename + "-") && name.find(".tmp.") != std::string::npos &&
        name.find(own) == std::string::npos) {
      (void)DeleteFile(entry.path().string());  // best effort: it is garbage either way
    }
  }
}

}  // namespace

StatusOr<std::unique_ptr<Saver>> Saver::Create(const Scope& scope,
                                               std::vector<SaveableVariable> variables,
                                               SaverOptions options) {
  if (variables.empty()) return errors::InvalidArgument("Saver: no variables to save");
  if (options.max_to_keep < 0) {
    return errors::InvalidArgument("Saver: max_to_keep is ", options.max_to_keep,
                                   "; it must be >= 0");
  }
  std::set<std::string> names;
  for (const SaveableVariable& v : variables) {
    if (!v.handle.valid() || v.handle.dtype() != DT_RESOURCE) {
      return errors::InvalidArgument("Saver: '", v.name, "' is not a resource variable handle (",
                                     v.handle.valid() ? v.handle.name() : "<invalid>", " is ",
                                     v.handle.dtype(), ")");
    }
    if (!names.insert(v.name).second) {
      return errors::InvalidArgument("Saver: the checkpoint name '", v.name, "' is used twice");
    }
  }
  // Sorted by name, as TensorFlow's saver orders its tensors.
  std::sort(variables.begin(), variables.end(),
            [](const SaveableVariable& a, const SaveableVariable& b) { return a.name < b.name; });

  // The groups that each get a SaveV2 and a RestoreV2: by device when
  // sharded (sorted by device, as TensorFlow's), else one.
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < variables.size(); ++i) {
    std::string device;
    if (options.sharded) {
      const std::string& requested = variables[i].handle.node()->requested_device();
      StatusOr<DeviceName> parsed = DeviceName::Parse(requested);
      if (!parsed.ok()) {
        return errors::InvalidArgument("Saver: variable '", variables[i].name, "' has device '",
                                       requested, "': ", parsed.status().message());
      }
      device = parsed->ToString();
    }
    groups[device].push_back(i);
  }

  Scope save = scope.NewSubScope("save");
  Output prefix = ops::Placeholder(save.WithOpName("filename"), DT_STRING,
                                   {{"shape", PartialShape(TensorShape({}))}});
  Output temp_prefix, num_shards;
  if (options.sharded) {
    temp_prefix = ops::StringJoin(save.WithOpName("StringJoin"),
                                  {prefix, ops::Const(save.WithOpName("temp_suffix"),
                                                      Tensor::Scalar<std::string>("_temp/part"))});
    num_shards = ops::Const(save.WithOpName("num_shards"),
                            Tensor::Scalar<int32_t>(static_cast<int32_t>(groups.size())));
  }
  std::vector<std::string> restore_outputs(variables.size());
  std::vector<Operation> saves, assigns;
  std::vector<Input> parts;
  std::string last_device;
  for (const auto& [device, members] : groups) {
    // The group's ops on CPU:0 of its device's task (reads and assignments
    // go with their variables).
    Scope on = save;
    if (options.sharded) {
      DeviceName cpu0 = *DeviceName::Parse(device);
      cpu0.has_type = cpu0.has_id = true;
      cpu0.type = "CPU";
      cpu0.id = 0;
      on = save.WithDevice(cpu0.ToString());
      last_device = cpu0.ToString();
    }
    std::vector<std::string> name_list;
    std::vector<Input> values;
    std::vector<DType> dtypes;
    for (size_t i : members) {
      name_list.push_back(variables[i].name);
      values.push_back(ops::ReadVariableOp(save, variables[i].handle, variables[i].dtype));
      dtypes.push_back(variables[i].dtype);
    }
    const TensorShape count({static_cast<int64_t>(members.size())});
    Output tensor_names = ops::Const(on.WithOpName("tensor_names"),
                                     Tensor::FromVector<std::string>(name_list, count));
    Output slices = ops::Const(
        on.WithOpName("shape_and_slices"),
        Tensor::FromVector<std::string>(std::vector<std::string>(members.size()), count));
    Output target = prefix;
    if (options.sharded) {
      const int32_t shard = static_cast<int32_t>(parts.size());
      target = ops::ShardedFilename(on.WithOpName("ShardedFilename"), temp_prefix,
                                    ops::Const(on.WithOpName("shard"), Tensor::Scalar(shard)),
                                    num_shards);
      parts.push_back(target);
    }
    saves.push_back(ops::SaveV2(on, target, tensor_names, slices, values));
    Operation restore = ops::RestoreV2(on, prefix, tensor_names, slices, dtypes);
    for (size_t k = 0; k < members.size(); ++k) {
      const size_t i = members[k];
      assigns.push_back(ops::AssignVariableOp(save, variables[i].handle, restore.output(k)));
      restore_outputs[i] = StrCat(restore.name(), ":", k);
    }
  }
  Operation save_op = saves.front();
  if (options.sharded) {
    Scope last = save.WithDevice(last_device).WithControlDependencies(saves);
    save_op =
        ops::MergeV2Checkpoints(last.WithOpName("MergeV2Checkpoints"),
                                ops::Pack(last.WithOpName("checkpoint_prefixes"), parts), prefix);
  }
  Operation restore_all = ops::NoOp(save.WithOpName("restore_all").WithControlDependencies(assigns));
  WEIR_RETURN_IF_ERROR(save.status());

  // The declared shapes are read now: the graph may be gone by Restore.
  std::vector<PartialShape> declared;
  for (const SaveableVariable& v : variables) {
    PartialShape shape;
    const Node* handle = v.handle.node();
    if (handle->type_string() != "VarHandleOp" ||
        !GetAttr(handle->def().attrs, "shape", &shape).ok()) {
      shape = PartialShape::UnknownRank();
    }
    declared.push_back(shape);
  }
  std::unique_ptr<Saver> saver(new Saver(std::move(variables), std::move(options)));
  saver->declared_shapes_ = std::move(declared);
  saver->filename_feed_ = prefix.name();
  saver->save_target_ = save_op.name();
  saver->restore_target_ = restore_all.name();
  saver->restore_outputs_ = std::move(restore_outputs);
  return saver;
}

std::vector<bool> Saver::Kept(const std::vector<Record>& records) const {
  const int n = static_cast<int>(records.size());
  std::vector<bool> kept(n, false);
  for (int i = 0; i < n; ++i) {
    kept[i] = options_.max_to_keep == 0 || i >= n - options_.max_to_keep;
  }
  if (options_.keep_best) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (!records[i].metric) continue;
      const double m = *records[i].metric;
      if (best < 0 || (options_.higher_metric_is_better ? m > *records[best].metric
                                                        : m < *records[best].metric)) {
        best = i;
      }
    }
    if (best >= 0) kept[best] = true;
  }
  return kept;
}

StatusOr<std::string> Saver::Save(Session* session, const std::string& dir, int64_t step,
                                  std::optional<double> metric) {
  WEIR_RETURN_IF_ERROR(RecursivelyCreateDir(dir));
  const std::string relative = StrCat(options_.basename, "-", step);
  const std::string prefix = JoinPath(dir, relative);
  std::vector<Tensor> unused;
  Status saved = session->Run({{filename_feed_, Tensor::Scalar<std::string>(prefix)}}, {},
                              {save_target_}, &unused);
  if (!saved.ok()) {
    return Status(saved.code(), StrCat("saving checkpoint '", prefix, "': ", saved.message()));
  }

  // The records so far, from the state file and the metrics beside it.
  std::vector<Record> records;
  StatusOr<std::vector<std::string>> listed = ListCheckpoints(dir);
  if (!listed.ok() && listed.status().code() != Code::kNotFound) return listed.status();
  std::map<std::string, double> metrics;
  if (StatusOr<std::string> text = ReadFileToString(JoinPath(dir, kMetricsFile)); text.ok()) {
    std::istringstream lines(*text);
    std::string path;
    double value;
    while (lines >> std::quoted(path) >> value) metrics[path] = value;
  }
  if (listed.ok()) {
    for (const std::string& p : *listed) {
      if (p == prefix || p == relative) continue;  // saved again at the same step
      Record r{p, std::nullopt};
      if (auto it = metrics.find(p); it != metrics.end()) r.metric = it->second;
      records.push_back(r);
    }
  }
  records.push_back(Record{relative, metric});

  std::vector<bool> kept = Kept(records);
  std::string state = StrCat("model_checkpoint_path: ", Quote(relative), "\n");
  std::ostringstream metric_lines;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!kept[i]) continue;
    state += StrCat("all_model_checkpoint_paths: ", Quote(records[i].prefix), "\n");
    if (records[i].metric) {
      metric_lines << std::quoted(records[i].prefix) << " " << *records[i].metric << "\n";
    }
  }
  // Metrics first: a crash between the two writes leaves extra metrics,
  // which are harmless, never a recorded checkpoint without its metric.
  WEIR_RETURN_IF_ERROR(WriteStringToFileAtomic(JoinPath(dir, kMetricsFile), metric_lines.str()));
  WEIR_RETURN_IF_ERROR(WriteStringToFileAtomic(JoinPath(dir, kStateFile), state));
  RemoveStaleTempFiles(dir, options_.basename);
  // Only now, with the state file no longer naming them, delete the dropped.
  for (size_t i = 0; i < records.size(); ++i) {
    if (kept[i]) continue;
    const std::string old = JoinPath(dir, records[i].prefix);
    // Every data file: a sharded checkpoint has several.
    WEIR_ASSIGN_OR_RETURN(std::vector<std::string> files,
                          GetMatchingPaths(GlobEscape(old) + kDataPattern));
    files.push_back(old + ".index");
    for (const std::string& file : files) {
      Status deleted = DeleteFile(file);
      if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
    }
  }
  return prefix;
}

Status Saver::Restore(Session* session, const std::string& prefix) const {
  // Read every value first and check it against its variable's declared
  // shape, so that a wrong checkpoint changes no variable at all.
  const std::vector<std::string>& outputs = restore_outputs_;
  std::vector<Tensor> values;
  Status read = session->Run({{filename_feed_, Tensor::Scalar<std::string>(prefix)}}, outputs, {},
                             &values);
  if (!read.ok()) {
    return Status(read.code(), StrCat("restoring from '", prefix, "': ", read.message()));
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const SaveableVariable& v = variables_[i];
    if (!declared_shapes_[i].IsCompatibleWith(values[i].shape())) {
      return errors::InvalidArgument("restoring from '", prefix, "': '", v.name, "' has shape ",
                                     values[i].shape(), " in the checkpoint but its variable is "
                                     "declared ", declared_shapes_[i]);
    }
    feeds.emplace_back(outputs[i], values[i]);
  }
  std::vector<Tensor> unused;
  return session->Run(feeds, {}, {restore_target_}, &unused);
}

StatusOr<std::vector<std::string>> Saver::ListCheckpoints(const std::string& dir) {
  const std::string path = JoinPath(dir, kStateFile);
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) {
      return errors::NotFound("no checkpoint in '", dir, "' (no '", kStateFile, "' file)");
    }
    return text.status();
  }
  return ParseState(path, *text);
}

StatusOr<std::string> Saver::LatestCheckpoint(const std::string& dir) {
  WEIR_ASSIGN_OR_RETURN(std::vector<std::string> all, ListCheckpoints(dir));
  if (all.empty()) return errors::NotFound("no checkpoint recorded in '", dir, "/", kStateFile, "'");
  return JoinPath(dir, all.back());
}

int64_t Saver::StepOf(const std::string& prefix) {
  size_t dash = prefix.rfind('-');
  if (dash == std::string::npos || dash + 1 == prefix.size()) return -1;
  int64_t step = 0;
  for (size_t i = dash + 1; i < prefix.size(); ++i) {
    if (prefix[i] < '0' || prefix[i] > '9') return -1;
    step = step * 10 + (prefix[i] - '0');
  }
  return step;
}

CheckpointSchedule::CheckpointSchedule(int64_t every_steps, double every_seconds)
    : every_steps_(every_steps),
      every_seconds_(every_seconds),
      last_time_(std::chrono::steady_clock::now()) {}

bool CheckpointSchedule::Due(int64_t step) const {
  if (every_steps_ > 0 && step - last_step_ >= every_steps_) return true;
  if (every_seconds_ > 0) {
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - last_time_;
    if (elapsed.count() >= every_seconds_) return true;
  }
  return false;
}

void CheckpointSchedule::Saved(int64_t step) {
  last_step_ = step;
  last_time_ = std::chrono::steady_clock::now();
}

}  // namespace weir
