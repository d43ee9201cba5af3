// The parts of weir._C, one Define function per binding file.
#pragma once

#include <nanobind/nanobind.h>

namespace weir::python {

void DefineAll(nanobind::module_& m);

}  // namespace weir::python
