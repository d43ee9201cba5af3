#include "weir/runtime/device_mgr.h"

#include <random>

#include "weir/base/threadpool.h"
#include "weir/framework/device_name.h"
#include "weir/runtime/cpu_device.h"

namespace weir {

std::unique_ptr<DeviceMgr> DeviceMgr::NewCpuDevices(int num_cpu_devices, int intra_op_threads,
                                                    const std::string& job, int task) {
  auto mgr = std::make_unique<DeviceMgr>();
  if (intra_op_threads <= 0) intra_op_threads = NumSchedulableCpus();
  std::random_device random;
  for (int i = 0; i < std::max(1, num_cpu_devices); ++i) {
    mgr->devices_.push_back(
        std::make_unique<CpuDevice>(FullDeviceName(job, 0, task, kDeviceCpu, i), intra_op_threads));
    mgr->incarnations_.push_back((static_cast<uint64_t>(random()) << 32) | random());
  }
  return mgr;
}

StatusOr<Device*> DeviceMgr::Find(const std::string& full_name) const {
  for (const auto& device : devices_) {
    if (device->name() == full_name) return device.get();
  }
  std::vector<std::string> names;
  for (const auto& device : devices_) names.push_back(device->name());
  return errors::NotFound("no device named '", full_name, "'; devices: ", StrJoin(names, ", "));
}

std::vector<DeviceInfo> DeviceMgr::Infos() const {
  std::vector<DeviceInfo> infos;
  for (const auto& device : devices_) {
    DeviceInfo info{device->name(), device->device_type()};
    if (device->intra_op_pool() != nullptr) info.threads = device->intra_op_pool()->NumThreads();
    infos.push_back(std::move(info));
  }
  return infos;
}

uint64_t DeviceMgr::Incarnation(const std::string& full_name) const {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i]->name() == full_name) return incarnations_[i];
  }
  return 0;
}

}  // namespace weir
