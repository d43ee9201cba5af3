#include "weir/framework/kernel_registry.h"

#include <algorithm>
#include <mutex>

#include "weir/framework/node_def_util.h"
#include "weir/framework/op_def.h"

namespace weir {
namespace {

bool Matches(const KernelBuilder& builder, const NodeDef& node) {
  for (const auto& [attr, allowed] : builder.constraints()) {
    auto it = node.attrs.find(attr);
    if (it == node.attrs.end()) return false;
    std::vector<DType> types;
    if (it->second.is_type()) types.push_back(it->second.type());
    else if (it->second.is_list()) types = it->second.list().type;
    else return false;
    for (DType d : types) {
      if (std::find(allowed.begin(), allowed.end(), d) == allowed.end()) return false;
    }
  }
  return true;
}

}  // namespace

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* const registry = new KernelRegistry();
  return registry;
}

void KernelRegistry::Register(const KernelBuilder& builder, KernelFactory factory) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto range = kernels_.equal_range(builder.op());
  for (auto it = range.first; it != range.second; ++it) {
    CHECK(!(it->second.builder.device_type() == builder.device_type() &&
            it->second.builder.constraints() == builder.constraints()))
        << "kernel for " << builder.op() << " on " << builder.device_type()
        << " registered twice";
  }
  kernels_.emplace(builder.op(), Entry{builder, std::move(factory)});
}

const KernelRegistry::Entry* KernelRegistry::Find(const std::string& device_type,
                                                  const NodeDef& node) const {
  auto range = kernels_.equal_range(node.op);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.builder.device_type() == device_type && Matches(it->second.builder, node)) {
      return &it->second;
    }
  }
  return nullptr;
}

bool KernelRegistry::HasKernel(const std::string& device_type, const NodeDef& node) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return Find(device_type, node) != nullptr;
}

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(Device* device,
                                                                 const NodeDef& node,
                                                                 const OpDef& op) const {
  const Entry* entry;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    entry = Find(device->device_type(), node);
  }
  if (entry == nullptr) {
    std::vector<std::string> type_attrs;
    for (const AttrDef& attr : op.attrs) {
      auto it = node.attrs.find(attr.name);
      if (attr.type == "type" && it != node.attrs.end()) {
        type_attrs.push_back(StrCat(attr.name, "=", it->second.DebugString()));
      }
    }
    std::vector<std::string> available = DescribeKernels(node.op);
    return errors::NotFound(
        "no ", device->device_type(), " kernel for node ", node.Describe(),
        type_attrs.empty() ? "" : StrCat(" with ", StrJoin(type_attrs, ", ")),
        available.empty() ? "; the op has no kernels at all"
                          : StrCat("; kernels exist for: ", StrJoin(available, "; ")));
  }
  std::vector<DType> input_types, output_types;
  WEIR_RETURN_IF_ERROR(InOutTypesForNode(op, node, &input_types, &output_types));
  OpKernelConstruction construction(device, &node, &op, std::move(input_types),
                                    std::move(output_types));
  std::unique_ptr<OpKernel> kernel = entry->factory(&construction);
  WEIR_RETURN_IF_ERROR(construction.status());
  return kernel;
}

std::vector<std::string> KernelRegistry::DescribeKernels(const std::string& op) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  auto range = kernels_.equal_range(op);
  for (auto it = range.first; it != range.second; ++it) {
    std::vector<std::string> parts;
    for (const auto& [attr, types] : it->second.builder.constraints()) {
      parts.push_back(StrCat(attr, " in {", StrJoin(types, ","), "}"));
    }
    out.push_back(StrCat(it->second.builder.device_type(),
                         parts.empty() ? "" : StrCat(" (", StrJoin(parts, ", "), ")")));
  }
  return out;
}

std::vector<std::string> KernelRegistry::ListOps() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [op, entry] : kernels_) {
    if (out.empty() || out.back() != op) out.push_back(op);
  }
  return out;
}

}  // namespace weir
