// Attr values <-> Python values, and shapes <-> Python lists.
//
// Out of weir: type -> int dtype, int -> int, float -> float, bool -> bool,
// string -> bytes, shape -> None | list[int | None], tensor -> numpy array,
// list(x) -> list of those. Into weir the op def's attr type decides, so a
// caller may pass str for a string, a numpy array / scalar / list for a
// tensor, ints (or objects with `as_datatype_enum`, as TF's DType) for a
// type, and None / list / tuple / TensorShape-like (`ndims`, `as_list()`) for
// a shape. Weir has no function-valued attrs yet: "func" is Unimplemented.
#include <nanobind/stl/string.h>

#include "common.h"

namespace weir::python {
namespace {

[[noreturn]] void WrongType(const std::string& what, const char* expected, nb::handle value) {
  ThrowInvalidArgument(what + " expects " + expected + ", got " + PyTypeName(value) + " " +
                       nb::cast<std::string>(nb::repr(value)));
}

bool IsPyInt(nb::handle value) {
  return !PyBool_Check(value.ptr()) && PyIndex_Check(value.ptr());
}

int64_t IntFromPython(nb::handle value, const std::string& what) {
  if (!IsPyInt(value)) WrongType(what, "an int", value);
  int64_t out = PyLong_AsLongLong(nb::steal(PyNumber_Index(value.ptr())).ptr());
  if (out == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    ThrowInvalidArgument(what + ": " + nb::cast<std::string>(nb::repr(value)) +
                         " does not fit in int64");
  }
  return out;
}

DType DTypeFromPython(nb::handle value, const std::string& what) {
  nb::handle source = value;
  nb::object enum_value;
  if (!IsPyInt(value) && nb::hasattr(value, "as_datatype_enum")) {
    enum_value = value.attr("as_datatype_enum");
    source = enum_value;
  }
  if (!IsPyInt(source)) WrongType(what, "a dtype (DataType int)", value);
  int64_t number = IntFromPython(source, what);
  if (number <= 0 || number > 1000 || !IsValidDType(static_cast<int>(number))) {
    ThrowInvalidArgument(what + ": " + std::to_string(number) + " is not a weir dtype");
  }
  return static_cast<DType>(number);
}

std::string StringFromPython(nb::handle value, const std::string& what) {
  if (PyBytes_Check(value.ptr())) {
    return std::string(PyBytes_AS_STRING(value.ptr()), PyBytes_GET_SIZE(value.ptr()));
  }
  if (PyUnicode_Check(value.ptr())) return nb::cast<std::string>(value);
  WrongType(what, "bytes or str", value);
}

bool IsSequence(nb::handle value) {
  return PyList_Check(value.ptr()) || PyTuple_Check(value.ptr());
}

nb::object AsSequence(nb::handle value, const std::string& what) {
  if (IsSequence(value)) return nb::borrow(value);
  // numpy arrays and other iterables of scalars.
  if (nb::hasattr(value, "tolist")) {
    nb::object list = value.attr("tolist")();
    if (IsSequence(list)) return list;
  }
  WrongType(what, "a list", value);
}

AttrValue ScalarAttr(nb::handle value, const std::string& type, const std::string& what) {
  if (type == "int") return AttrValue(IntFromPython(value, what));
  if (type == "float") {
    if (PyBool_Check(value.ptr()) || !PyNumber_Check(value.ptr())) WrongType(what, "a float", value);
    double f = PyFloat_AsDouble(value.ptr());
    if (f == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return AttrValue(static_cast<float>(f));
  }
  if (type == "bool") {
    if (PyBool_Check(value.ptr())) return AttrValue(value.ptr() == Py_True);
    // numpy.bool_
    if (nb::hasattr(value, "dtype") && nb::cast<std::string>(nb::str(value.attr("dtype"))) == "bool") {
      return AttrValue(PyObject_IsTrue(value.ptr()) == 1);
    }
    WrongType(what, "a bool", value);
  }
  if (type == "string") return AttrValue(StringFromPython(value, what));
  if (type == "type") return AttrValue(DTypeFromPython(value, what));
  if (type == "shape") return AttrValue(ShapeFromPython(value, what));
  if (type == "tensor") return AttrValue(TensorFromPython(value, what, DT_INVALID, false));
  if (type == "func") {
    ThrowStatus(errors::Unimplemented(what, ": function-valued attrs are not supported yet"));
  }
  ThrowInvalidArgument(what + ": unknown attr type '" + type + "'");
}

}  // namespace

std::string PyTypeName(nb::handle value) {
  return nb::cast<std::string>(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(value.ptr())))
                                   .attr("__name__"));
}

nb::object ShapeToPython(const PartialShape& shape) {
  if (!shape.known_rank()) return nb::none();
  nb::list dims;
  for (int64_t d : shape.dim_sizes()) {
    if (d < 0) {
      dims.append(nb::none());
    } else {
      dims.append(nb::int_(d));
    }
  }
  return dims;
}

PartialShape ShapeFromPython(nb::handle value, const std::string& what) {
  if (value.is_none()) return PartialShape();
  nb::object source = nb::borrow(value);
  if (!IsSequence(value) && nb::hasattr(value, "ndims")) {  // a TensorShape
    if (value.attr("ndims").is_none()) return PartialShape();
    source = value.attr("as_list")();
  }
  if (!IsSequence(source)) WrongType(what, "a shape (None or a list of int | None)", value);
  std::vector<int64_t> dims;
  for (nb::handle d : source) {
    nb::object dim = nb::borrow(d);
    if (!dim.is_none() && !IsPyInt(dim) && nb::hasattr(dim, "value")) dim = dim.attr("value");
    if (dim.is_none()) {
      dims.push_back(PartialShape::kUnknown);
      continue;
    }
    int64_t n = IntFromPython(dim, what);
    dims.push_back(n < 0 ? PartialShape::kUnknown : n);
  }
  StatusOr<PartialShape> shape = PartialShape::FromDims(std::move(dims));
  if (!shape.ok()) Check(shape.status().WithContext(what));
  return *shape;
}

nb::object AttrToPython(const AttrValue& value) {
  if (value.is_s()) return nb::bytes(value.s().data(), value.s().size());
  if (value.is_i()) return nb::int_(value.i());
  if (value.is_f()) return nb::float_(value.f());
  if (value.is_b()) return nb::bool_(value.b());
  if (value.is_type()) return nb::int_(static_cast<int>(value.type()));
  if (value.is_shape()) return ShapeToPython(value.shape());
  if (value.is_tensor()) return TensorToNumpy(value.tensor(), "attr value");
  if (value.is_list()) {
    const AttrValue::List& list = value.list();
    nb::list out;
    for (const std::string& s : list.s) out.append(nb::bytes(s.data(), s.size()));
    for (int64_t i : list.i) out.append(nb::int_(i));
    for (float f : list.f) out.append(nb::float_(f));
    for (bool b : list.b) out.append(nb::bool_(b));
    for (DType t : list.type) out.append(nb::int_(static_cast<int>(t)));
    for (const PartialShape& s : list.shape) out.append(ShapeToPython(s));
    for (const Tensor& t : list.tensor) out.append(TensorToNumpy(t, "attr value"));
    return out;
  }
  return nb::none();
}

AttrValue AttrFromPython(nb::handle value, const std::string& type, const std::string& what) {
  if (type.rfind("list(", 0) != 0) return ScalarAttr(value, type, what);
  const std::string element = type.substr(5, type.size() - 6);
  nb::object seq = AsSequence(value, what);
  AttrValue::List list;
  for (nb::handle item : seq) {
    AttrValue v = ScalarAttr(item, element, what);
    if (v.is_s()) list.s.push_back(v.s());
    else if (v.is_i()) list.i.push_back(v.i());
    else if (v.is_f()) list.f.push_back(v.f());
    else if (v.is_b()) list.b.push_back(v.b());
    else if (v.is_type()) list.type.push_back(v.type());
    else if (v.is_shape()) list.shape.push_back(v.shape());
    else if (v.is_tensor()) list.tensor.push_back(v.tensor());
  }
  return AttrValue(std::move(list));
}

AttrValue AttrFromPythonUntyped(nb::handle value, const std::string& what) {
  if (PyBool_Check(value.ptr())) return ScalarAttr(value, "bool", what);
  if (IsPyInt(value)) return ScalarAttr(value, "int", what);
  if (PyFloat_Check(value.ptr())) return ScalarAttr(value, "float", what);
  if (PyBytes_Check(value.ptr()) || PyUnicode_Check(value.ptr())) {
    return ScalarAttr(value, "string", what);
  }
  if (IsSequence(value)) {
    nb::sequence seq = nb::borrow<nb::sequence>(value);
    std::string element = "string";
    if (nb::len(seq) > 0) {
      nb::object first = seq[0];
      element = PyBool_Check(first.ptr()) ? "bool" : IsPyInt(first) ? "int"
                : PyFloat_Check(first.ptr()) ? "float" : "string";
    }
    return AttrFromPython(value, "list(" + element + ")", what);
  }
  return ScalarAttr(value, "tensor", what);
}

}  // namespace weir::python
