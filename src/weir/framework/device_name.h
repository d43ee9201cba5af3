// Device names and partial device specifications.
//
// A full name: "/job:localhost/replica:0/task:0/device:CPU:0". A user's
// request may give any subset: "/device:CPU:1", "/cpu:1", "CPU:1",
// "/job:worker/task:3", "/device:CPU:*". Parsing is strict: a malformed
// spec is an InvalidArgument that quotes it.
#pragma once

#include <string>

#include "weir/base/status.h"

namespace weir {

struct DeviceName {
  bool has_job = false;
  std::string job;
  bool has_replica = false;
  int replica = 0;
  bool has_task = false;
  int task = 0;
  bool has_type = false;
  std::string type;  // upper case: "CPU", "GPU"
  bool has_id = false;
  int id = 0;

  static StatusOr<DeviceName> Parse(std::string_view spec);
  // True if every field this spec sets agrees with `full`.
  bool Matches(const DeviceName& full) const;
  // "/job:j/replica:r/task:t/device:TYPE:id", fields left out when unset.
  std::string ToString() const;
};

// "/job:<job>/replica:<replica>/task:<task>/device:<type>:<id>".
std::string FullDeviceName(const std::string& job, int replica, int task,
                           const std::string& type, int id);

}  // namespace weir
