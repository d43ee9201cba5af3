// Device: what a kernel may know about the hardware it runs on. The runtime
// implements it (runtime/cpu_device); kernels see only this interface.
#pragma once

#include <string>

#include "weir/framework/allocator.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace weir {

class ResourceMgr;
class ThreadPool;

inline constexpr char kDeviceCpu[] = "CPU";

class Device {
 public:
  virtual ~Device() = default;

  // Full name, "/job:localhost/replica:0/task:0/device:CPU:0".
  const std::string& name() const { return name_; }
  // "CPU", "GPU": the key kernels are registered under.
  const std::string& device_type() const { return device_type_; }

  virtual Allocator* allocator() = 0;
  // The intra-op pool for kernels that split their own work.
  virtual ThreadPool* intra_op_pool() = 0;
  // Eigen's view of the intra-op pool, for Eigen tensor expressions.
  virtual const Eigen::ThreadPoolDevice* eigen_cpu_device() const = 0;
  // Where this device's variables and queues live; outlives steps.
  virtual ResourceMgr* resource_manager() = 0;

 protected:
  Device(std::string name, std::string device_type)
      : name_(std::move(name)), device_type_(std::move(device_type)) {}

 private:
  std::string name_;
  std::string device_type_;
};

}  // namespace weir
