// DeviceMgr: the devices of one process (or one task), looked up by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "weir/framework/device.h"
#include "weir/graph/placer.h"

namespace weir {

class DeviceMgr {
 public:
  // `num_cpu_devices` virtual CPU devices named
  // /job:<job>/replica:0/task:<task>/device:CPU:<i>, each with an intra-op
  // pool of `intra_op_threads` threads (0: one per schedulable core).
  static std::unique_ptr<DeviceMgr> NewCpuDevices(int num_cpu_devices, int intra_op_threads,
                                                  const std::string& job = "localhost",
                                                  int task = 0);

  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  // The device with this full name, or NotFound listing the devices.
  StatusOr<Device*> Find(const std::string& full_name) const;
  // Name, type and intra-op threads of each device, for placement.
  std::vector<DeviceInfo> Infos() const;
  // A random number fixed for the life of the device (rendezvous keys).
  uint64_t Incarnation(const std::string& full_name) const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<uint64_t> incarnations_;
};

}  // namespace weir
