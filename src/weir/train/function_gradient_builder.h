// The gradient builder that graph/ expands SymbolicGradient with
// (graph/symbolic_gradient.h): AddSymbolicGradients, installed by an
// explicit call. The programs that compile user graphs make it where they
// register the standard ops and kernels (the Python package, the weir tool,
// the SavedModel loader), and AddSymbolicGradients makes it too; a C++
// program that runs SymbolicGradient nodes through its own Session calls it
// once first (without it, compiling one is FailedPrecondition saying so).
#pragma once

namespace weir {

// Installs the builder; idempotent and thread-safe.
void RegisterFunctionGradients();

}  // namespace weir
