"""Special functions and complex numbers: tf.math.{xlogy, xlog1py, xdivy,
igamma, igammac, betainc, zeta, bessel_i0e, bessel_i1e, erfinv, ndtri,
nextafter} and tf.{complex, real, imag, conj, angle} (TF1's names too:
tf.igamma, tf.betainc, tf.zeta, tf.real ...).

Contract: as TensorFlow's. Binary functions convert a Python operand to the
Tensor operand's dtype and broadcast; betainc's a, b and x have one shape or
are scalars. real/imag/conj of a real tensor give it back (real) or zeros
(imag), as TF does; complex() picks complex64 for float32 parts and
complex128 for float64 ones.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops import array_ops
from weir.ops.math_ops import _pair

__all__ = [
    "xlogy", "xlog1py", "xdivy", "igamma", "igammac", "betainc", "zeta", "bessel_i0e",
    "bessel_i1e", "erfinv", "ndtri", "nextafter", "complex", "real", "imag", "conj", "angle",
]


def _binary(op_type, first, second, fn_name):
    def fn(x, y, name=None):
        with ops.name_scope(name, op_type, [x, y]) as scope:
            x, y = _pair(x, y, first, second)
            return apply_op(op_type, scope, **{first: x, second: y})
    fn.__name__ = fn_name
    fn.__doc__ = "Elementwise %s(%s, %s) with NumPy broadcasting (op %s)." % (
        fn_name, first, second, op_type)
    return fn


xlogy = _binary("Xlogy", "x", "y", "xlogy")
xlog1py = _binary("Xlog1py", "x", "y", "xlog1py")
xdivy = _binary("Xdivy", "x", "y", "xdivy")
igamma = _binary("Igamma", "a", "x", "igamma")
igammac = _binary("Igammac", "a", "x", "igammac")
zeta = _binary("Zeta", "x", "q", "zeta")
nextafter = _binary("NextAfter", "x1", "x2", "nextafter")


def _unary(op_type, fn_name):
    def fn(x, name=None):
        return apply_op(op_type, name, x=x)
    fn.__name__ = fn_name
    fn.__doc__ = "Elementwise %s (op %s)." % (fn_name, op_type)
    return fn


bessel_i0e = _unary("BesselI0e", "bessel_i0e")
bessel_i1e = _unary("BesselI1e", "bessel_i1e")
erfinv = _unary("Erfinv", "erfinv")
ndtri = _unary("Ndtri", "ndtri")


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b); a, b, x of one
    shape (or scalars), float32 or float64."""
    with ops.name_scope(name, "Betainc", [a, b, x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        a = ops.convert_to_tensor(a, dtype=x.dtype.base_dtype, name="a")
        b = ops.convert_to_tensor(b, dtype=x.dtype.base_dtype, name="b")
        return apply_op("Betainc", scope, a=a, b=b, x=x)


_PART = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def complex(real, imag, name=None):  # noqa: A001  (TF's name)
    """real + i * imag with broadcasting: complex64 from float32 parts,
    complex128 from float64."""
    with ops.name_scope(name, "Complex", [real, imag]) as scope:
        real, imag = _pair(real, imag, "real", "imag")
        if real.dtype.base_dtype not in _COMPLEX:
            raise TypeError("complex: real and imag must be float32 or float64, not %s" %
                            real.dtype.name)
        return apply_op("Complex", scope, real=real, imag=imag,
                        Tout=_COMPLEX[real.dtype.base_dtype])


def _part(op_type, fn_name, real_value):
    def fn(input, name=None):  # noqa: A002  (TF's argument name)
        with ops.name_scope(name, fn_name, [input]) as scope:
            input = ops.convert_to_tensor(input, name="input")
            dtype = input.dtype.base_dtype
            if dtype not in _PART:
                return real_value(input, scope)
            return apply_op(op_type, scope, input=input, Tout=_PART[dtype])
    fn.__name__ = fn_name
    fn.__doc__ = "The %s of each complex element (op %s)." % (fn_name, op_type)
    return fn


real = _part("Real", "real", lambda x, scope: array_ops.identity(x, name=scope))
imag = _part("Imag", "imag", lambda x, scope: array_ops.zeros_like(x, name=scope))


def angle(input, name=None):  # noqa: A002
    """The argument of each complex element in [-pi, pi]; for a real tensor,
    pi where it is negative and 0 elsewhere (as TF)."""
    with ops.name_scope(name, "Angle", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        dtype = input.dtype.base_dtype
        if dtype in _PART:
            return apply_op("Angle", scope, input=input, Tout=_PART[dtype])
        from weir.ops import math_ops
        return math_ops.atan2(array_ops.zeros_like(input), input, name=scope)


def conj(x, name=None):
    """The complex conjugate; a real tensor is returned unchanged."""
    with ops.name_scope(name, "Conj", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        if x.dtype.base_dtype in _PART:
            return apply_op("Conj", scope, input=x)
        return x


def complex_abs(x, name=None):
    """|x| of a complex tensor (op ComplexAbs), in its parts' dtype."""
    return apply_op("ComplexAbs", name, x=x, Tout=_PART[x.dtype.base_dtype])
