#include "weir/runtime/cpu_device.h"

#define EIGEN_USE_THREADS
#include <map>
#include <mutex>
#include <unsupported/Eigen/CXX11/Tensor>

namespace weir {
namespace {

std::shared_ptr<ResourceMgr> SharedResourceMgr(const std::string& device_name) {
  static std::mutex mu;
  static auto* managers = new std::map<std::string, std::weak_ptr<ResourceMgr>>();
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<ResourceMgr> manager = (*managers)[device_name].lock();
  if (!manager) {
    manager = std::make_shared<ResourceMgr>();
    (*managers)[device_name] = manager;
  }
  return manager;
}

// One allocator per device name for the life of the process (never freed:
// a fetched tensor may be destroyed after its session).
CpuAllocator* ProcessLifetimeAllocator(const std::string& device_name) {
  static std::mutex mu;
  static auto* allocators = new std::map<std::string, CpuAllocator*>();
  std::lock_guard<std::mutex> lock(mu);
  CpuAllocator*& allocator = (*allocators)[device_name];
  if (allocator == nullptr) allocator = new CpuAllocator(device_name);
  return allocator;
}

}  // namespace

CpuDevice::CpuDevice(std::string name, int intra_op_threads)
    : Device(name, kDeviceCpu),
      allocator_(ProcessLifetimeAllocator(name)),
      pool_(name, intra_op_threads),
      eigen_device_(std::make_unique<Eigen::ThreadPoolDevice>(pool_.AsEigenThreadPool(),
                                                               intra_op_threads)),
      resources_(SharedResourceMgr(name)) {}

CpuDevice::~CpuDevice() = default;

}  // namespace weir
