// FunctionLibrary: the functions a Graph's nodes may call, by name, and the
// gradient function of each (a GraphDef's FunctionDefLibrary in memory).
// Entries are immutable and shared between copies of a library, so a
// function's signature OpDef keeps its address while any copy holds it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "weir/base/status.h"
#include "weir/framework/node_def.h"

namespace weir {

class FunctionLibrary {
 public:
  // Adds `def` under its signature's name. AlreadyExists naming the
  // function if the name is taken by another function.
  Status AddFunction(FunctionDef def);
  // Records that `def.gradient_func` computes the gradient of
  // `def.function_name`. AlreadyExists if another gradient is recorded.
  Status AddGradient(GradientDef def);

  // Null when there is no function of that name.
  const FunctionDef* Find(std::string_view name) const;
  // The gradient function's name, or "" when none is recorded.
  std::string FindGradient(std::string_view name) const;

  bool empty() const { return functions_.empty() && gradients_.empty(); }
  size_t num_functions() const { return functions_.size(); }
  // Functions and gradients in name order.
  FunctionDefLibrary ToLibrary() const;

 private:
  std::map<std::string, std::shared_ptr<const FunctionDef>, std::less<>> functions_;
  std::map<std::string, std::string, std::less<>> gradients_;
};

}  // namespace weir
