// The string family's registration (string_ops.cc), listed in all_ops.cc.
// Declared here rather than in all_ops.h, which nearly every op, kernel and
// graph test includes.
#pragma once

namespace weir {

class OpRegistry;

void RegisterStringOps(OpRegistry* registry);  // regular expressions

}  // namespace weir
