#include "bindings.h"

namespace weir::python {

void DefineAll(nanobind::module_& m) {
  DefineStatusExceptions(m);
  DefineOpDefs(m);
  DefineGraph(m);
  DefineSession(m);
  DefineRecords(m);
  DefineServer(m);
  DefinePyFunc(m);
}

}  // namespace weir::python
