// _C.set_error_classes and the raising of a Status as a Python exception.
//
// The classes come from weir.framework.errors (TF's OpError subclasses);
// each is called as cls(None, None, message), TF's (node_def, op, message)
// order, and raised. Before registration a RuntimeError carries the message.
#include <nanobind/stl/string.h>

#include <array>

#include "bindings.h"
#include "common.h"

namespace weir::python {
namespace {

constexpr int kNumCodes = 17;  // OK .. UNAUTHENTICATED
// Strong references, never released: they live as long as the module.
std::array<PyObject*, kNumCodes> error_classes{};

void SetErrorClasses(nb::dict classes) {
  for (auto [key, value] : classes) {
    int code = nb::cast<int>(key);
    if (code <= 0 || code >= kNumCodes) {
      ThrowInvalidArgument("set_error_classes: code " + std::to_string(code) +
                           " is not a status code (1..16)");
    }
    if (!PyType_Check(value.ptr())) {
      ThrowInvalidArgument("set_error_classes: the class for code " + std::to_string(code) +
                           " is not a type");
    }
    Py_XDECREF(error_classes[code]);
    error_classes[code] = value.ptr();
    Py_INCREF(value.ptr());
  }
}

}  // namespace

void ThrowStatus(const Status& status) {
  const std::string& message = status.message();
  int code = static_cast<int>(status.code());
  PyObject* cls = code > 0 && code < kNumCodes ? error_classes[code] : nullptr;
  if (cls == nullptr) {
    // Codes the registry lacks (or before registration): as TF, UNKNOWN's class.
    cls = error_classes[static_cast<int>(Code::kUnknown)];
  }
  // Messages may quote user bytes (string values, paths): never fail on them.
  nb::object text = nb::steal(PyUnicode_DecodeUTF8(message.data(), message.size(), "replace"));
  if (!text.is_valid()) throw nb::python_error();
  if (cls == nullptr) {
    PyErr_SetObject(PyExc_RuntimeError, text.ptr());
    throw nb::python_error();
  }
  PyObject* instance = PyObject_CallFunctionObjArgs(cls, Py_None, Py_None, text.ptr(), nullptr);
  if (instance == nullptr) throw nb::python_error();  // the class's own error
  PyErr_SetObject(cls, instance);
  Py_DECREF(instance);
  throw nb::python_error();
}

void ThrowInvalidArgument(const std::string& message) {
  ThrowStatus(errors::InvalidArgument(message));
}

void DefineStatusExceptions(nb::module_& m) {
  m.def("set_error_classes", &SetErrorClasses, nb::arg("classes"),
        "Registers the exception class raised for each status code (TF numbering).");
}

}  // namespace weir::python
