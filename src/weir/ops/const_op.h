// Hand-written builders for Const: a literal or a Tensor becomes a node.
//
//   auto w = ops::Const(scope, {{1.f, 2.f}, {3.f, 4.f}});  // float [2,2]
//   auto n = ops::Const(scope, 3);                         // int32 scalar
#pragma once

#include <source_location>

#include "weir/graph/scope.h"

namespace weir {
namespace ops {

Output Const(const Scope& scope, const Input& value,
             std::source_location location = std::source_location::current());

}  // namespace ops
}  // namespace weir
