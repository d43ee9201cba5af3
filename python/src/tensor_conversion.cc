// Tensors <-> numpy arrays, without copies where memory allows.
//
// Fetch: the array points into the weir buffer; its base is a capsule
// holding a Tensor (one reference), so the buffer lives as long as the
// array, past the session and graph. The array is writeable only when that
// reference is the buffer's only one (a fresh output); an output that shares
// a Const's, a variable's or a fed array's memory comes back read-only, so
// writing into it cannot change weir's state behind its back.
//
// Feed: a C-contiguous, aligned (for its element type: weir's kernels map
// tensors with Eigen's default, unaligned TensorMap, so the element's own
// alignment is what they need), native-byte-order numeric array is wrapped
// in a borrowed TensorBuffer holding a reference to the array; the
// reference is dropped (GIL taken) when weir's last reference goes. Weir
// never writes into a borrowed buffer (TensorBuffer::RefCountIsOne is false
// for it, so no kernel reuses it in place) and copies it where it keeps a
// value past the step (AssignVariableOp, queue enqueues). Anything else is
// copied with PyArray_CopyInto (strides, byte order and casts handled by
// numpy). Strings: object/bytes/str arrays, always copied.
//
// bfloat16 has no numpy dtype: fetched as float32 (a copy) unless ml_dtypes
// is importable, in which case its bfloat16 dtype is used without a copy.
#define PY_ARRAY_UNIQUE_SYMBOL weir_python_numpy_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>

#include <Eigen/Core>
#include <cstring>

#include "common.h"

namespace weir::python {
namespace {

PyArray_Descr* bfloat16_descr = nullptr;  // from ml_dtypes, when installed

// numpy's type number for a weir dtype; -1 if numpy has none.
int NumpyTypeNum(DType dtype) {
  switch (dtype) {
    case DT_FLOAT: return NPY_FLOAT32;
    case DT_DOUBLE: return NPY_FLOAT64;
    case DT_INT32: return NPY_INT32;
    case DT_UINT8: return NPY_UINT8;
    case DT_INT16: return NPY_INT16;
    case DT_INT8: return NPY_INT8;
    case DT_COMPLEX64: return NPY_COMPLEX64;
    case DT_INT64: return NPY_INT64;
    case DT_BOOL: return NPY_BOOL;
    case DT_UINT16: return NPY_UINT16;
    case DT_COMPLEX128: return NPY_COMPLEX128;
    case DT_HALF: return NPY_FLOAT16;
    case DT_UINT32: return NPY_UINT32;
    case DT_UINT64: return NPY_UINT64;
    case DT_STRING: return NPY_OBJECT;
    default: return -1;
  }
}

// The weir dtype of a numpy array's elements; DT_STRING for object, bytes
// and str arrays; DT_INVALID for what weir lacks.
DType DTypeOfArray(PyArrayObject* array) {
  PyArray_Descr* descr = PyArray_DESCR(array);
  const npy_intp size = PyArray_ITEMSIZE(array);
  switch (descr->kind) {
    case 'b': return DT_BOOL;
    case 'f':
      return size == 4 ? DT_FLOAT : size == 8 ? DT_DOUBLE : size == 2 ? DT_HALF : DT_INVALID;
    case 'i':
      return size == 4 ? DT_INT32 : size == 8 ? DT_INT64 : size == 2 ? DT_INT16
                                               : size == 1 ? DT_INT8 : DT_INVALID;
    case 'u':
      return size == 4 ? DT_UINT32 : size == 8 ? DT_UINT64 : size == 2 ? DT_UINT16
                                                : size == 1 ? DT_UINT8 : DT_INVALID;
    case 'c': return size == 8 ? DT_COMPLEX64 : size == 16 ? DT_COMPLEX128 : DT_INVALID;
    case 'O':
    case 'S':
    case 'U': return DT_STRING;
    default:
      if (bfloat16_descr != nullptr && PyArray_EquivTypes(descr, bfloat16_descr)) {
        return DT_BFLOAT16;
      }
      return DT_INVALID;
  }
}

// A new reference to the numpy descr for `dtype`, or null.
PyArray_Descr* DescrFor(DType dtype) {
  if (dtype == DT_BFLOAT16 && bfloat16_descr != nullptr) {
    Py_INCREF(bfloat16_descr);
    return bfloat16_descr;
  }
  int num = NumpyTypeNum(dtype);
  return num < 0 ? nullptr : PyArray_DescrFromType(num);
}

void DestroyTensorCapsule(PyObject* capsule) {
  delete static_cast<Tensor*>(PyCapsule_GetPointer(capsule, "weir.Tensor"));
}

// The array's reference, dropped when weir's last reference to a borrowed
// buffer goes (on whichever thread that is).
void ReleaseBorrowedArray(void* arg) {
  // At interpreter exit the array is freed with everything else; taking
  // the GIL from a worker thread then could block forever.
  if (!Py_IsInitialized() || IsFinalizing()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(arg));
  PyGILState_Release(state);
}

nb::object StringsToNumpy(const Tensor& tensor) {
  std::vector<npy_intp> dims(tensor.shape().dim_sizes().begin(), tensor.shape().dim_sizes().end());
  PyObject* array = PyArray_SimpleNew(static_cast<int>(dims.size()), dims.data(), NPY_OBJECT);
  if (array == nullptr) throw nb::python_error();
  auto** items = static_cast<PyObject**>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)));
  const std::string* values = tensor.data<std::string>();
  for (int64_t i = 0; i < tensor.NumElements(); ++i) {
    PyObject* bytes = PyBytes_FromStringAndSize(values[i].data(), values[i].size());
    if (bytes == nullptr) {
      Py_DECREF(array);
      throw nb::python_error();
    }
    Py_XDECREF(items[i]);  // PyArray_SimpleNew fills object arrays with None
    items[i] = bytes;
  }
  return nb::steal(array);
}

nb::object Bfloat16AsFloat32(const Tensor& tensor) {
  std::vector<npy_intp> dims(tensor.shape().dim_sizes().begin(), tensor.shape().dim_sizes().end());
  PyObject* array = PyArray_SimpleNew(static_cast<int>(dims.size()), dims.data(), NPY_FLOAT32);
  if (array == nullptr) throw nb::python_error();
  float* out = static_cast<float*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)));
  const Eigen::bfloat16* in = tensor.data<Eigen::bfloat16>();
  for (int64_t i = 0; i < tensor.NumElements(); ++i) out[i] = static_cast<float>(in[i]);
  return nb::steal(array);
}

Tensor StringsFromArray(PyArrayObject* array, const std::string& what) {
  TensorShape shape = Check(TensorShape::FromDims(std::span<const int64_t>(
      reinterpret_cast<const int64_t*>(PyArray_DIMS(array)), PyArray_NDIM(array))));
  Tensor tensor(DT_STRING, shape);
  nb::object flat = nb::steal(PyArray_Flatten(array, NPY_CORDER));
  if (!flat.is_valid()) throw nb::python_error();
  auto* flat_array = reinterpret_cast<PyArrayObject*>(flat.ptr());
  std::string* values = tensor.data<std::string>();
  for (int64_t i = 0; i < tensor.NumElements(); ++i) {
    nb::object item = nb::steal(PyArray_GETITEM(flat_array, static_cast<char*>(PyArray_GETPTR1(flat_array, i))));
    if (!item.is_valid()) throw nb::python_error();
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_Check(item.ptr())) {
      PyBytes_AsStringAndSize(item.ptr(), &data, &size);
    } else if (PyUnicode_Check(item.ptr())) {
      const char* utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
      if (utf8 == nullptr) throw nb::python_error();
      data = const_cast<char*>(utf8);
    } else {
      ThrowInvalidArgument(what + ": a string tensor's elements must be bytes or str, element " +
                           std::to_string(i) + " is " + PyTypeName(item));
    }
    values[i].assign(data, size);
  }
  return tensor;
}

}  // namespace

bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

void InitTensorConversion() {
  if (_import_array() < 0) throw nb::python_error();
  PyObject* ml_dtypes = PyImport_ImportModule("ml_dtypes");
  if (ml_dtypes == nullptr) {
    PyErr_Clear();
    return;
  }
  PyObject* type = PyObject_GetAttrString(ml_dtypes, "bfloat16");
  if (type == nullptr || PyArray_DescrConverter(type, &bfloat16_descr) != NPY_SUCCEED) {
    PyErr_Clear();
    bfloat16_descr = nullptr;
  }
  Py_XDECREF(type);
  Py_DECREF(ml_dtypes);
}

nb::object NumpyDType(DType dtype) {
  PyArray_Descr* descr = DescrFor(dtype);
  if (descr == nullptr) {
    ThrowInvalidArgument("dtype " + std::string(DTypeName(dtype)) + " has no numpy dtype");
  }
  return nb::steal(reinterpret_cast<PyObject*>(descr));
}

nb::object TensorToNumpy(const Tensor& tensor, const std::string& what) {
  if (!tensor.IsInitialized()) {
    ThrowStatus(errors::Internal("'", what, "' came back without a value"));
  }
  if (tensor.dtype() == DT_STRING) return StringsToNumpy(tensor);
  if (tensor.dtype() == DT_BFLOAT16 && bfloat16_descr == nullptr) return Bfloat16AsFloat32(tensor);
  PyArray_Descr* descr = DescrFor(tensor.dtype());
  if (descr == nullptr) {
    ThrowInvalidArgument(StrCat(
        "cannot fetch '", what, "': its dtype ", tensor.dtype(), " has no numpy equivalent (",
        tensor.dtype() == DT_VARIANT
            ? "a TensorList or Optional lives only inside a step; fetch a tensor computed from "
              "it, such as TensorListStack's"
            : "a resource handle lives only in the graph; fetch a value read from it",
        ")"));
  }
  const int ndims = tensor.dims();
  npy_intp dims[TensorShape::kMaxRank];
  for (int i = 0; i < ndims; ++i) dims[i] = tensor.dim_size(i);
  const bool writeable = tensor.RefCountIsOne();
  auto* holder = new Tensor(tensor);
  // Steals `descr`.
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, ndims, dims, nullptr,
                                         holder->raw_data(),
                                         writeable ? NPY_ARRAY_CARRAY : NPY_ARRAY_CARRAY_RO,
                                         nullptr);
  if (array == nullptr) {
    delete holder;
    throw nb::python_error();
  }
  PyObject* capsule = PyCapsule_New(holder, "weir.Tensor", DestroyTensorCapsule);
  if (capsule == nullptr) {
    delete holder;
    Py_DECREF(array);
    throw nb::python_error();
  }
  // Steals `capsule`, also on failure.
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), capsule) < 0) {
    Py_DECREF(array);
    throw nb::python_error();
  }
  return nb::steal(array);
}

Tensor TensorFromPython(nb::handle value, const std::string& what, DType want, bool allow_borrow) {
  nb::object owned;
  PyArrayObject* array = nullptr;
  if (PyArray_Check(value.ptr())) {
    array = reinterpret_cast<PyArrayObject*>(value.ptr());
  } else {
    PyArray_Descr* descr = want == DT_INVALID || want == DT_STRING ? nullptr : DescrFor(want);
    // Steals `descr`.
    owned = nb::steal(PyArray_FromAny(value.ptr(), descr, 0, 0, 0, nullptr));
    if (!owned.is_valid()) throw nb::python_error();
    array = reinterpret_cast<PyArrayObject*>(owned.ptr());
  }
  DType dtype = DTypeOfArray(array);
  if (dtype == DT_INVALID) {
    nb::object name = nb::steal(PyObject_Str(reinterpret_cast<PyObject*>(PyArray_DESCR(array))));
    ThrowInvalidArgument(what + ": numpy dtype " + nb::cast<std::string>(name) +
                         " has no weir dtype");
  }
  if (dtype == DT_STRING) return StringsFromArray(array, what);
  if (want != DT_INVALID && want != dtype) {
    ThrowInvalidArgument(StrCat(what, ": expects ", want, " but the array is ", dtype));
  }
  const int ndims = PyArray_NDIM(array);
  StatusOr<TensorShape> shape = TensorShape::FromDims(std::span<const int64_t>(
      reinterpret_cast<const int64_t*>(PyArray_DIMS(array)), ndims));
  if (!shape.ok()) Check(shape.status().WithContext(what));
  static_assert(sizeof(npy_intp) == sizeof(int64_t));
  if (allow_borrow && shape->num_elements() > 0 && PyArray_IS_C_CONTIGUOUS(array) &&
      PyArray_ISALIGNED(array) && PyArray_ISNOTSWAPPED(array)) {
    PyObject* object = reinterpret_cast<PyObject*>(array);
    Py_INCREF(object);
    return Tensor::Borrow(dtype, *shape, PyArray_DATA(array), &ReleaseBorrowedArray, object);
  }
  Tensor tensor = Check(Tensor::Allocate(DefaultCpuAllocator(), dtype, *shape));
  if (tensor.NumElements() == 0) return tensor;
  PyArray_Descr* descr = DescrFor(dtype);
  npy_intp dims[TensorShape::kMaxRank];
  for (int i = 0; i < ndims; ++i) dims[i] = tensor.dim_size(i);
  nb::object destination = nb::steal(PyArray_NewFromDescr(&PyArray_Type, descr, ndims, dims,
                                                          nullptr, tensor.raw_data(),
                                                          NPY_ARRAY_CARRAY, nullptr));
  if (!destination.is_valid()) throw nb::python_error();
  if (PyArray_CopyInto(reinterpret_cast<PyArrayObject*>(destination.ptr()), array) < 0) {
    throw nb::python_error();
  }
  return tensor;
}

}  // namespace weir::python
