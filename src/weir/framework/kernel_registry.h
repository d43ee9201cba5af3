// KernelRegistry: which kernel implements which op on which device type for
// which dtypes. Kernels are registered by explicit Register...() functions
// (kernels/all_kernels.h), never by static initializers.
//
//   registry->Register(KernelBuilder("MatMul").Device(kDeviceCpu)
//                          .TypeConstraint<float>("T"),
//                      MakeKernel<MatMulOp<float>>);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "weir/framework/op_kernel.h"

namespace weir {

using KernelFactory = std::function<std::unique_ptr<OpKernel>(OpKernelConstruction*)>;

template <typename Kernel>
std::unique_ptr<OpKernel> MakeKernel(OpKernelConstruction* context) {
  return std::make_unique<Kernel>(context);
}

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string op) : op_(std::move(op)) {}
  KernelBuilder& Device(std::string device_type) {
    device_type_ = std::move(device_type);
    return *this;
  }
  // The node's type attr `attr` must be `dtype` (or, for a list(type)
  // attr, every element must be).
  KernelBuilder& TypeConstraint(const std::string& attr, DType dtype) {
    constraints_[attr].push_back(dtype);
    return *this;
  }
  template <typename T>
  KernelBuilder& TypeConstraint(const std::string& attr) {
    return TypeConstraint(attr, kDTypeOf<T>);
  }

  const std::string& op() const { return op_; }
  const std::string& device_type() const { return device_type_; }
  const std::map<std::string, std::vector<DType>>& constraints() const { return constraints_; }

 private:
  std::string op_;
  std::string device_type_ = kDeviceCpu;
  std::map<std::string, std::vector<DType>> constraints_;
};

class KernelRegistry {
 public:
  static KernelRegistry* Global();

  // CHECK-fails if an identical (op, device, constraints) entry exists.
  void Register(const KernelBuilder& builder, KernelFactory factory);

  // Instantiates the kernel for `node` on `device`. NotFound lists the
  // dtypes and devices that do have kernels for the op.
  StatusOr<std::unique_ptr<OpKernel>> CreateKernel(Device* device, const NodeDef& node,
                                                   const OpDef& op) const;
  // True if some kernel of `device_type` matches `node`'s attrs.
  bool HasKernel(const std::string& device_type, const NodeDef& node) const;
  // "T=float on CPU" lines, for error messages and docs.
  std::vector<std::string> DescribeKernels(const std::string& op) const;
  // Ops that have at least one kernel.
  std::vector<std::string> ListOps() const;

 private:
  struct Entry {
    KernelBuilder builder;
    KernelFactory factory;
  };
  const Entry* Find(const std::string& device_type, const NodeDef& node) const;

  mutable std::shared_mutex mu_;
  std::multimap<std::string, Entry> kernels_;  // by op name
};

}  // namespace weir
