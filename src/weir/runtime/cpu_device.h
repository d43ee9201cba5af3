// CpuDevice: a host CPU device with its own allocator, intra-op thread pool
// and resource manager. Several can live in one process (virtual devices),
// which is how multi-device placement is tested on one machine.
#pragma once

#include <memory>
#include <string>

#include "weir/base/threadpool.h"
#include "weir/framework/allocator.h"
#include "weir/framework/device.h"
#include "weir/framework/resource_mgr.h"

namespace weir {

class CpuDevice final : public Device {
 public:
  // `name` is the full device name; `intra_op_threads` >= 1.
  CpuDevice(std::string name, int intra_op_threads);
  ~CpuDevice() override;

  Allocator* allocator() override { return allocator_; }
  ThreadPool* intra_op_pool() override { return &pool_; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return eigen_device_.get(); }
  ResourceMgr* resource_manager() override { return resources_.get(); }

 private:
  // Lives for the whole process: tensors a client fetched may outlive the
  // session and its devices, and they return their buffers here.
  CpuAllocator* allocator_;
  ThreadPool pool_;
  std::unique_ptr<Eigen::ThreadPoolDevice> eigen_device_;
  // Shared by every CpuDevice of this name in the process, so sessions that
  // name the same container share its state.
  std::shared_ptr<ResourceMgr> resources_;
};

}  // namespace weir
