// The parts of weir._C, one Define function per binding file.
#pragma once

#include <nanobind/nanobind.h>

namespace weir {
class Graph;
}  // namespace weir

namespace weir::python {

void DefineAll(nanobind::module_& m);

void DefineStatusExceptions(nanobind::module_& m);  // status_exceptions.cc
void DefineOpDefs(nanobind::module_& m);            // op_def_bindings.cc
void DefineGraph(nanobind::module_& m);             // graph_bindings.cc
void DefineSession(nanobind::module_& m);           // session_bindings.cc
void DefineRecords(nanobind::module_& m);           // records.cc (H6)
void DefineServer(nanobind::module_& m);            // server_bindings.cc
void DefinePyFunc(nanobind::module_& m);            // py_func.cc

// The weir Graph inside a _C.Graph (for binding files that take one).
Graph* GraphOf(nanobind::handle py_graph);

}  // namespace weir::python
