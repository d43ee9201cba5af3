#include "weir/framework/device_name.h"

#include <cctype>

namespace weir {
namespace {

bool ParseNonNegative(std::string_view text, int* out) {
  int64_t value;
  if (!ParseInt64(text, &value) || value < 0 || value > INT32_MAX) return false;
  *out = static_cast<int>(value);
  return true;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Parses "TYPE:id" or "TYPE:*" or "TYPE".
bool ParseTypeAndId(std::string_view text, DeviceName* name) {
  size_t colon = text.find(':');
  std::string_view type = text.substr(0, colon);
  if (type.empty()) return false;
  for (char c : type) {
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  name->has_type = true;
  name->type = Upper(type);
  if (colon == std::string_view::npos) return true;
  std::string_view id = text.substr(colon + 1);
  if (id == "*") return true;
  if (!ParseNonNegative(id, &name->id)) return false;
  name->has_id = true;
  return true;
}

}  // namespace

StatusOr<DeviceName> DeviceName::Parse(std::string_view spec) {
  DeviceName name;
  auto bad = [&] {
    return errors::InvalidArgument(
        "malformed device specification '", spec,
        "': expected e.g. '/job:localhost/replica:0/task:0/device:CPU:0', '/device:CPU:1' or "
        "'/cpu:0'");
  };
  if (spec.empty()) return name;
  if (spec[0] != '/') {
    // A bare "CPU:1".
    if (!ParseTypeAndId(spec, &name)) return bad();
    return name;
  }
  std::vector<std::string> parts = StrSplit(spec.substr(1), '/');
  for (const std::string& part : parts) {
    if (StartsWith(part, "job:")) {
      name.has_job = true;
      name.job = part.substr(4);
      if (name.job.empty()) return bad();
    } else if (StartsWith(part, "replica:")) {
      if (!ParseNonNegative(std::string_view(part).substr(8), &name.replica)) return bad();
      name.has_replica = true;
    } else if (StartsWith(part, "task:")) {
      if (!ParseNonNegative(std::string_view(part).substr(5), &name.task)) return bad();
      name.has_task = true;
    } else if (StartsWith(part, "device:")) {
      if (!ParseTypeAndId(std::string_view(part).substr(7), &name)) return bad();
    } else if (!part.empty() && !name.has_type && ParseTypeAndId(part, &name)) {
      // The legacy "/cpu:0" form.
    } else {
      return bad();
    }
  }
  return name;
}

bool DeviceName::Matches(const DeviceName& full) const {
  if (has_job && (!full.has_job || job != full.job)) return false;
  if (has_replica && (!full.has_replica || replica != full.replica)) return false;
  if (has_task && (!full.has_task || task != full.task)) return false;
  if (has_type && (!full.has_type || type != full.type)) return false;
  if (has_id && (!full.has_id || id != full.id)) return false;
  return true;
}

std::string DeviceName::ToString() const {
  std::string out;
  if (has_job) out += "/job:" + job;
  if (has_replica) out += StrCat("/replica:", replica);
  if (has_task) out += StrCat("/task:", task);
  if (has_type) out += "/device:" + type + (has_id ? StrCat(":", id) : ":*");
  return out;
}

std::string FullDeviceName(const std::string& job, int replica, int task,
                           const std::string& type, int id) {
  return StrCat("/job:", job, "/replica:", replica, "/task:", task, "/device:", type, ":", id);
}

}  // namespace weir
