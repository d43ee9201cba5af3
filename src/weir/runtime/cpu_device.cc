#include "weir/runtime/cpu_device.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

namespace weir {

CpuDevice::CpuDevice(std::string name, int intra_op_threads)
    : Device(name, kDeviceCpu),
      allocator_(name),
      pool_(name, intra_op_threads),
      eigen_device_(std::make_unique<Eigen::ThreadPoolDevice>(pool_.AsEigenThreadPool(),
                                                               intra_op_threads)) {}

CpuDevice::~CpuDevice() = default;

}  // namespace weir
