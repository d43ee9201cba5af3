#include "weir/ops/gradients/gradient_registry.h"

#include <mutex>

#include "weir/ops/all_ops.h"

namespace weir {

GradientRegistry* GradientRegistry::Global() {
  static GradientRegistry* const registry = new GradientRegistry();
  return registry;
}

void GradientRegistry::Register(const std::string& op, GradientFunction fn) {
  CHECK(fn) << "use RegisterNoGradient for " << op;
  std::unique_lock<std::shared_mutex> lock(mu_);
  CHECK(functions_.emplace(op, std::move(fn)).second) << "gradient of " << op << " registered twice";
}

void GradientRegistry::RegisterNoGradient(const std::string& op) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  CHECK(functions_.emplace(op, GradientFunction()).second) << "gradient of " << op << " registered twice";
}

void GradientRegistry::RegisterSparse(const std::string& op, SparseGradientFunction fn) {
  CHECK(fn) << "empty sparse gradient function for " << op;
  std::unique_lock<std::shared_mutex> lock(mu_);
  CHECK(sparse_functions_.emplace(op, std::move(fn)).second)
      << "sparse gradient of " << op << " registered twice";
}

const SparseGradientFunction* GradientRegistry::LookupSparse(const std::string& op) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = sparse_functions_.find(op);
  return it == sparse_functions_.end() ? nullptr : &it->second;
}

StatusOr<const GradientFunction*> GradientRegistry::Lookup(const std::string& op) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = functions_.find(op);
  if (it == functions_.end()) {
    return errors::NotFound("no gradient is defined for op ", op);
  }
  return it->second ? &it->second : nullptr;
}

bool GradientRegistry::HasEntry(const std::string& op) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return functions_.count(op) > 0;
}

// sparse_grad.cc (declared here so that adding the family rebuilds one file).
void RegisterSparseGradients(GradientRegistry* registry);
void RegisterLinalgGradients(GradientRegistry* registry);  // linalg_grad.cc
// Declared here rather than in the header, so that adding a family does not
// rebuild every gradient file.
void RegisterSpecialGradients(GradientRegistry* registry);     // special_grad.cc
void RegisterComplexGradients(GradientRegistry* registry);     // complex_grad.cc
void RegisterArrayExtraGradients(GradientRegistry* registry);  // array_extra_grad.cc
void RegisterSignalGradients(GradientRegistry* registry);      // signal_grad.cc

void RegisterAllGradients() {
  RegisterAllOps();
  static std::once_flag once;
  std::call_once(once, [] {
    GradientRegistry* registry = GradientRegistry::Global();
    RegisterMathGradients(registry);
    RegisterLinalgGradients(registry);
    RegisterEinsumGradient(registry);
    RegisterUnaryGradients(registry);
    RegisterArrayGradients(registry);
    RegisterReductionGradients(registry);
    RegisterSegmentGradients(registry);
    RegisterSparseGradients(registry);
    RegisterNnGradients(registry);
    RegisterImageGradients(registry);
    RegisterRnnGradients(registry);
    RegisterStatefulGradients(registry);
    RegisterDataFlowGradients(registry);
    RegisterListGradients(registry);
    RegisterControlFlowGradients(registry);
    RegisterSpecialGradients(registry);
    RegisterComplexGradients(registry);
    RegisterArrayExtraGradients(registry);
    RegisterSignalGradients(registry);
  });
}

}  // namespace weir
