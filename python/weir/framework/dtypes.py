"""Element types (tf.dtypes). A `DType` is one of TensorFlow's `DataType` enum
values (the numbering weir's C++ core and GraphDefs use); `as_dtype` accepts a
DType, an enum int, a numpy dtype or type, or a name ("float32", "float").
Reference types (enum + 100) exist so imported graphs' attrs read back, but
weir's Python API builds resource variables only.
"""
import builtins as _builtins

import numpy as np

_builtin_float = _builtins.float
_builtin_int = _builtins.int
_builtin_bool = _builtins.bool
_builtin_str = _builtins.str

__all__ = [
    "DType", "as_dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "string",
    "complex64", "complex128", "resource", "variant", "qint8", "quint8", "qint32", "qint16",
    "quint16",
]

try:  # bfloat16 as a numpy type, where the package that defines one is installed.
    import ml_dtypes as _ml_dtypes
    _np_bfloat16 = np.dtype(_ml_dtypes.bfloat16).type
except ImportError:  # pragma: no cover - depends on the environment
    _np_bfloat16 = None

# enum -> (name, numpy type or None, size in bytes)
_INFO = {
    0: ("invalid", None, 0),
    1: ("float32", np.float32, 4),
    2: ("float64", np.float64, 8),
    3: ("int32", np.int32, 4),
    4: ("uint8", np.uint8, 1),
    5: ("int16", np.int16, 2),
    6: ("int8", np.int8, 1),
    7: ("string", np.object_, 8),
    8: ("complex64", np.complex64, 8),
    9: ("int64", np.int64, 8),
    10: ("bool", np.bool_, 1),
    11: ("qint8", None, 1),
    12: ("quint8", None, 1),
    13: ("qint32", None, 4),
    14: ("bfloat16", _np_bfloat16, 2),
    15: ("qint16", None, 2),
    16: ("quint16", None, 2),
    17: ("uint16", np.uint16, 2),
    18: ("complex128", np.complex128, 16),
    19: ("float16", np.float16, 2),
    20: ("resource", None, 8),
    21: ("variant", None, 8),
    22: ("uint32", np.uint32, 4),
    23: ("uint64", np.uint64, 8),
}

_FLOATING = {1, 2, 14, 19}
_COMPLEX = {8, 18}
_SIGNED_INT = {3, 5, 6, 9}
_UNSIGNED_INT = {4, 17, 22, 23}
_QUANTIZED = {11, 12, 13, 15, 16}


class DType:
    """One element type; compare with == against DTypes, enum ints or names."""

    __slots__ = ("_enum",)

    def __init__(self, type_enum):
        type_enum = int(type_enum)
        if type_enum % 100 not in _INFO or type_enum in (100, 200) or type_enum >= 200:
            raise TypeError(f"{type_enum} does not correspond to a valid weir/TensorFlow DataType")
        self._enum = type_enum

    @property
    def _type_enum(self):
        return self._enum

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def is_ref_dtype(self):
        return self._enum > 100

    @property
    def base_dtype(self):
        return _BY_ENUM[self._enum - 100] if self._enum > 100 else self

    @property
    def _as_ref(self):
        return self if self._enum > 100 else _BY_ENUM[self._enum + 100]

    @property
    def real_dtype(self):
        base = self.base_dtype
        if base._enum == 8:
            return float32
        if base._enum == 18:
            return float64
        return base

    @property
    def name(self):
        base = _INFO[self._enum % 100][0]
        return base + "_ref" if self._enum > 100 else base

    @property
    def as_numpy_dtype(self):
        return _INFO[self._enum % 100][1]

    @property
    def is_floating(self):
        return self.base_dtype._enum in _FLOATING

    @property
    def is_complex(self):
        return self.base_dtype._enum in _COMPLEX

    @property
    def is_integer(self):
        return self.base_dtype._enum in _SIGNED_INT or self.base_dtype._enum in _UNSIGNED_INT

    @property
    def is_unsigned(self):
        return self.base_dtype._enum in _UNSIGNED_INT

    @property
    def is_bool(self):
        return self.base_dtype._enum == 10

    @property
    def is_quantized(self):
        return self.base_dtype._enum in _QUANTIZED

    @property
    def is_numpy_compatible(self):
        return self.as_numpy_dtype is not None

    @property
    def size(self):
        return _INFO[self._enum % 100][2]

    @property
    def min(self):
        """The smallest value of the type (TypeError for types without one)."""
        base = self.base_dtype
        if base.is_floating and base.as_numpy_dtype is not None:
            return _builtin_float(np.finfo(base.as_numpy_dtype).min)
        if base.is_integer:
            return int(np.iinfo(base.as_numpy_dtype).min)
        if base.is_bool:
            return False
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self):
        """The largest value of the type (TypeError for types without one)."""
        base = self.base_dtype
        if base.is_floating and base.as_numpy_dtype is not None:
            return _builtin_float(np.finfo(base.as_numpy_dtype).max)
        if base.is_integer:
            return int(np.iinfo(base.as_numpy_dtype).max)
        if base.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self}.")

    @property
    def limits(self):
        return self.min, self.max

    def is_compatible_with(self, other):
        """True when a value of `other` may be used where this type is wanted
        (equal types, or this is the base type of a ref `other`)."""
        other = as_dtype(other)
        return self._enum in (other.base_dtype._enum, other._enum) if not self.is_ref_dtype \
            else self._enum == other._enum

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._enum == other._enum
        if other is None:
            return False
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._enum

    def __int__(self):
        return self._enum

    def __reduce__(self):
        return as_dtype, (self.name,)

    def __repr__(self):
        return f"weir.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"


_BY_ENUM = {}
for _e in _INFO:
    if _e:
        _BY_ENUM[_e] = DType(_e)
        _BY_ENUM[_e + 100] = DType(_e + 100)

float16 = _BY_ENUM[19]
half = float16
bfloat16 = _BY_ENUM[14]
float32 = _BY_ENUM[1]
float = float32  # noqa: A001  (TF's alias)
float64 = _BY_ENUM[2]
double = float64
int8 = _BY_ENUM[6]
int16 = _BY_ENUM[5]
int32 = _BY_ENUM[3]
int64 = _BY_ENUM[9]
uint8 = _BY_ENUM[4]
uint16 = _BY_ENUM[17]
uint32 = _BY_ENUM[22]
uint64 = _BY_ENUM[23]
bool = _BY_ENUM[10]  # noqa: A001  (TF's name)
string = _BY_ENUM[7]
complex64 = _BY_ENUM[8]
complex128 = _BY_ENUM[18]
resource = _BY_ENUM[20]
variant = _BY_ENUM[21]
qint8 = _BY_ENUM[11]
quint8 = _BY_ENUM[12]
qint32 = _BY_ENUM[13]
qint16 = _BY_ENUM[15]
quint16 = _BY_ENUM[16]

_BY_NAME = {dt.name: dt for dt in _BY_ENUM.values()}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})

_BY_NUMPY = {}
for _e, (_n, _np_type, _s) in _INFO.items():
    if _np_type is not None and _np_type is not np.object_:
        _BY_NUMPY[np.dtype(_np_type)] = _BY_ENUM[_e]


def as_dtype(type_value):
    """The DType of `type_value`: a DType, an enum int, a numpy dtype or
    scalar type (object/str/bytes -> string), a Python type (float ->
    float32 as TF does, int -> int32, bool, str/bytes), or a name."""
    if isinstance(type_value, DType):
        return type_value
    if type(type_value) is _builtin_int:  # the common case: an enum from _C
        dt = _BY_ENUM.get(type_value)
        if dt is not None:
            return dt
    if isinstance(type_value, (_builtin_int, np.integer)) and not isinstance(type_value, _builtin_bool):
        dt = _BY_ENUM.get(int(type_value))
        if dt is None:
            raise TypeError(f"Cannot convert value {type_value!r} to a weir DType.")
        return dt
    if isinstance(type_value, str):
        dt = _BY_NAME.get(type_value)
        if dt is None:
            raise TypeError(f"Cannot convert value {type_value!r} to a weir DType.")
        return dt
    if type_value is _builtin_float:
        return float32
    if type_value is _builtin_int:
        return int32
    if type_value is _builtin_bool:
        return bool
    if type_value in (_builtin_str, bytes, np.str_, np.bytes_, np.object_):
        return string
    try:
        np_dtype = np.dtype(type_value)
    except TypeError:
        np_dtype = None
    if np_dtype is not None:
        if np_dtype.kind in "OSU":
            return string
        dt = _BY_NUMPY.get(np_dtype)
        if dt is not None:
            return dt
        if _np_bfloat16 is not None and np_dtype == np.dtype(_np_bfloat16):
            return bfloat16
    if hasattr(type_value, "as_datatype_enum"):  # another framework's DType (TensorFlow's)
        return as_dtype(int(type_value.as_datatype_enum))
    if hasattr(type_value, "dtype") and not isinstance(type_value, type):
        return as_dtype(type_value.dtype)
    raise TypeError(f"Cannot convert value {type_value!r} to a weir DType.")



QUANTIZED_DTYPES = frozenset([t for base in (qint8, quint8, qint16, quint16, qint32)
                              for t in (base, base._as_ref)])


def __getattr__(name):
    # tf.dtypes.cast / saturate_cast (tf1api): the array ops, looked up on use
    # (this module is imported before them).
    if name in ("cast", "saturate_cast"):
        from weir.ops import array_ops, math_ops
        return getattr(math_ops, name, None) or getattr(array_ops, name)
    raise AttributeError("module 'weir.framework.dtypes' has no attribute %r" % name)
