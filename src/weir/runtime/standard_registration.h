// RegisterStandardOpsAndKernels() fills OpRegistry::Global() with every op
// declaration (ops/all_ops.h) and KernelRegistry::Global() with every kernel
// (kernels/all_kernels.h). The one call a process needs before it builds or
// runs graphs; Session::New makes it. Idempotent and thread-safe.
#pragma once

namespace weir {

void RegisterStandardOpsAndKernels();

}  // namespace weir
