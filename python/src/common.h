// Helpers the binding files share: Status -> Python exception, tensors <->
// numpy arrays, attr values <-> Python values, shapes <-> lists.
//
// Values cross the boundary as plain Python objects (see the spec at the top
// of graph_bindings.cc): endpoints are (node_id, index) tuples, dtypes are
// TensorFlow DataType ints, shapes are None or a list of int | None.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/op_def.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"

namespace weir::python {

namespace nb = nanobind;

// Raises the Python exception registered for `status`'s code (set_error_classes),
// as cls(None, None, message); RuntimeError(message) before registration.
// REQUIRES: !status.ok() and the GIL held.
[[noreturn]] void ThrowStatus(const Status& status);
inline void Check(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}
template <typename T>
T Check(StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return std::move(value).value();
}
[[noreturn]] void ThrowInvalidArgument(const std::string& message);

// Whether the interpreter is shutting down (no GIL games then).
bool IsFinalizing();
// Must run once at module init (imports numpy's C API).
void InitTensorConversion();

// A numpy array over `tensor`'s buffer (no copy; the array keeps the buffer
// alive). Strings: an object array of bytes (a copy). Resource and other
// non-numeric dtypes: InvalidArgument naming `what`.
nb::object TensorToNumpy(const Tensor& tensor, const std::string& what);
// `value` (numpy array, or anything numpy.asarray takes) as a tensor. Uses the
// array's memory without a copy when it is C-contiguous, aligned and numeric;
// copies otherwise. With `want` != DT_INVALID, a value of another dtype is
// converted by numpy (asarray(value, dtype)) when it is not an ndarray, and
// an ndarray of another dtype is an InvalidArgument naming `what`.
Tensor TensorFromPython(nb::handle value, const std::string& what, DType want = DT_INVALID,
                        bool allow_borrow = true);
// The numpy dtype object for `dtype` (for conversions done in Python).
nb::object NumpyDType(DType dtype);

nb::object ShapeToPython(const PartialShape& shape);
PartialShape ShapeFromPython(nb::handle value, const std::string& what);

// As the spec's attr values: type -> int, string -> bytes, tensor -> ndarray...
nb::object AttrToPython(const AttrValue& value);
// By the op def's attr type (`type`, "list(int)", ...).
AttrValue AttrFromPython(nb::handle value, const std::string& type, const std::string& what);
// When there is no op def entry (attrs like "_class"): guessed from the value.
AttrValue AttrFromPythonUntyped(nb::handle value, const std::string& what);

nb::dict OpDefToPython(const OpDef& op);

// "int" for Python ints, ... for messages.
std::string PyTypeName(nb::handle value);

}  // namespace weir::python
