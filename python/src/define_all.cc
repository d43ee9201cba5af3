#include "bindings.h"

namespace weir::python {

void DefineAll(nanobind::module_& m) {}

}  // namespace weir::python
