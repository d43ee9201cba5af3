#include "weir/graph/function_library.h"

namespace weir {

Status FunctionLibrary::AddFunction(FunctionDef def) {
  std::string name = def.signature.name;
  if (functions_.count(name) > 0) {
    return errors::AlreadyExists("the function library already has a function named '", name,
                                 "'");
  }
  functions_.emplace(std::move(name), std::make_shared<const FunctionDef>(std::move(def)));
  return Status::OK();
}

Status FunctionLibrary::AddGradient(GradientDef def) {
  auto it = gradients_.find(def.function_name);
  if (it != gradients_.end() && it->second != def.gradient_func) {
    return errors::AlreadyExists("function '", def.function_name, "' already has gradient '",
                                 it->second, "', not '", def.gradient_func, "'");
  }
  gradients_[def.function_name] = def.gradient_func;
  return Status::OK();
}

const FunctionDef* FunctionLibrary::Find(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second.get();
}

std::string FunctionLibrary::FindGradient(std::string_view name) const {
  auto it = gradients_.find(name);
  return it == gradients_.end() ? std::string() : it->second;
}

FunctionDefLibrary FunctionLibrary::ToLibrary() const {
  FunctionDefLibrary library;
  for (const auto& [name, def] : functions_) library.functions.push_back(*def);
  for (const auto& [name, gradient] : gradients_) library.gradients.push_back({name, gradient});
  return library;
}

}  // namespace weir
