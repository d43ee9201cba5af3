"""Math ops: TF1's elementwise arithmetic, comparisons, logic, matrix
products, reductions and sequences, plus the Tensor operators
(+ - * / // % ** @, unary -, abs, ~ & | ^, < <= > >=; not ==, as in TF1).

Contract: names, signatures (TF1's `keep_dims`, `reduction_indices`,
`dimension` aliases included) and dtype rules follow tf.compat.v1:
- `/` and `truediv` turn integers into floats (8/16-bit -> float32, 32/64-bit
  -> float64) before dividing; `//` is floor division, `%` floor modulo.
- An operator's Python operand converts to the Tensor operand's dtype
  (`x + 1` stays float32 for a float32 x; `i + 0.5` for an int32 i is an
  error, as in TF).
- Reductions with axis=None reduce every dim; negative axes count from the end.
"""
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.constant_op import constant
from weir.framework.op_def_library import apply_op
from weir.ops import array_ops

__all__ = [
    "add", "add_v2", "subtract", "multiply", "divide", "div", "truediv", "realdiv", "floordiv",
    "floor_div", "mod", "floormod", "truncatediv", "pow", "negative", "abs", "sign", "square", "sqrt",
    "rsqrt", "exp", "expm1", "log", "log1p", "sigmoid", "tanh", "sin", "cos", "erf", "erfc", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "maximum",
    "minimum", "squared_difference", "matmul", "tensordot", "add_n", "accumulate_n",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all",
    "reduce_any", "reduce_logsumexp", "reduce_euclidean_norm", "argmax", "argmin", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_not", "logical_xor", "range", "linspace", "lin_space", "cumsum", "round", "floor",
    "cumprod", "unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_max",
    "unsorted_segment_min", "segment_sum",
    "ceil", "reciprocal", "count_nonzero", "scalar_mul", "is_nan", "is_inf", "is_finite", "trace",
    "log_sigmoid", "softplus", "sub", "mul", "neg", "to_float", "cast", "reduce_variance",
    "reduce_std", "rint", "l2_normalize", "arg_max", "arg_min", "div_no_nan", "norm",
]

_builtin_range = range
_builtin_tuple = tuple
_builtin_abs = abs
_builtin_pow = pow
_builtin_round = round

cast = array_ops.cast
to_float = array_ops.to_float


def _op(op_type, name, **kw):
    return apply_op(op_type, name, **kw)


def _pair(x, y, name_x="x", name_y="y"):
    """Converts x and y to Tensors of one dtype: a non-Tensor takes the other's
    dtype (TF's operator rule), two non-Tensors convert on their own."""
    if isinstance(x, ops.Tensor) and not isinstance(y, ops.Tensor):
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name=name_y)
    elif isinstance(y, ops.Tensor) and not isinstance(x, ops.Tensor):
        x = ops.convert_to_tensor(x, dtype=y.dtype.base_dtype, name=name_x)
    else:
        x = ops.convert_to_tensor(x, name=name_x)
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name=name_y) if not isinstance(
            y, ops.Tensor) else y
    return x, y


def _binary(op_type, default_name):
    def fn(x, y, name=None):
        with ops.name_scope(name, default_name, [x, y]) as scope:
            x, y = _pair(x, y)
            return _op(op_type, scope, x=x, y=y)
    fn.__name__ = default_name
    fn.__doc__ = "Elementwise %s with NumPy broadcasting (op %s)." % (default_name, op_type)
    return fn


def _unary(op_type, fn_name, arg="x"):
    def fn(x, name=None):
        return _op(op_type, name, **{arg: x})
    fn.__name__ = fn_name
    fn.__doc__ = "Elementwise %s (op %s)." % (fn_name, op_type)
    return fn


# ---- elementwise arithmetic ----

def add(x, y, name=None):
    """x + y with NumPy broadcasting (strings concatenate)."""
    with ops.name_scope(name, "Add", [x, y]) as scope:
        x, y = _pair(x, y)
        return _op("Add" if x.dtype == dtypes.string else "AddV2", scope, x=x, y=y)


add_v2 = add
subtract = _binary("Sub", "Sub")
sub = subtract
multiply = _binary("Mul", "Mul")
mul = multiply
maximum = _binary("Maximum", "Maximum")
minimum = _binary("Minimum", "Minimum")
squared_difference = _binary("SquaredDifference", "SquaredDifference")
floordiv = _binary("FloorDiv", "floordiv")
floor_div = floordiv
floormod = _binary("FloorMod", "mod")
mod = floormod
truncatediv = _binary("Div", "truncatediv")
realdiv = _binary("RealDiv", "RealDiv")


def pow(x, y, name=None):  # noqa: A001  (TF's name)
    """x ** y elementwise with broadcasting."""
    with ops.name_scope(name, "Pow", [x, y]) as scope:
        x, y = _pair(x, y)
        return _op("Pow", scope, x=x, y=y)


_TRUEDIV_FLOAT = {
    dtypes.int8: dtypes.float32, dtypes.uint8: dtypes.float32, dtypes.int16: dtypes.float32,
    dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.uint32: dtypes.float64,
    dtypes.int64: dtypes.float64, dtypes.uint64: dtypes.float64,
}


def truediv(x, y, name=None):
    """x / y, integers first cast to float (8/16-bit to float32, wider to float64)."""
    with ops.name_scope(name, "truediv", [x, y]) as scope:
        x, y = _pair(x, y)
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError("x and y must have the same dtype, got %r != %r" % (
                x.dtype.name, y.dtype.name))
        target = _TRUEDIV_FLOAT.get(x.dtype.base_dtype)
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        return _op("RealDiv", scope, x=x, y=y)


def divide(x, y, name=None):
    """x / y with Python 3 semantics (truediv)."""
    if name is not None:
        return truediv(x, y, name=name)
    return truediv(x, y)


def div(x, y, name=None):
    """TF1's Python 2 division: floor division for integers, real division for floats."""
    with ops.name_scope(name, "div", [x, y]) as scope:
        x, y = _pair(x, y)
        if x.dtype.is_floating or x.dtype.is_complex:
            return _op("RealDiv", scope, x=x, y=y)
        return _op("FloorDiv", scope, x=x, y=y)


negative = _unary("Neg", "negative")
neg = negative
sign = _unary("Sign", "sign")
square = _unary("Square", "square")
sqrt = _unary("Sqrt", "sqrt")
rsqrt = _unary("Rsqrt", "rsqrt")
exp = _unary("Exp", "exp")
expm1 = _unary("Expm1", "expm1")
log = _unary("Log", "log")
log1p = _unary("Log1p", "log1p")
sigmoid = _unary("Sigmoid", "sigmoid")
tanh = _unary("Tanh", "tanh")
sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")
erf = _unary("Erf", "erf")
erfc = _unary("Erfc", "erfc")
tan = _unary("Tan", "tan")
asin = _unary("Asin", "asin")
acos = _unary("Acos", "acos")
atan = _unary("Atan", "atan")
sinh = _unary("Sinh", "sinh")
cosh = _unary("Cosh", "cosh")
asinh = _unary("Asinh", "asinh")
acosh = _unary("Acosh", "acosh")
atanh = _unary("Atanh", "atanh")
floor = _unary("Floor", "floor")
ceil = _unary("Ceil", "ceil")
reciprocal = _unary("Reciprocal", "reciprocal")
is_nan = _unary("IsNan", "is_nan")
is_inf = _unary("IsInf", "is_inf")
is_finite = _unary("IsFinite", "is_finite")
softplus = _unary("Softplus", "softplus", arg="features")
lgamma = _unary("Lgamma", "lgamma")
digamma = _unary("Digamma", "digamma")


def atan2(y, x, name=None):
    """The angle of the point (x, y) in [-pi, pi], elementwise with broadcasting."""
    with ops.name_scope(name, "Atan2", [y, x]) as scope:
        y, x = _pair(y, x, "y", "x")
        return _op("Atan2", scope, y=y, x=x)


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (a a whole number >= 0), with broadcasting."""
    with ops.name_scope(name, "Polygamma", [a, x]) as scope:
        a, x = _pair(a, x, "a", "x")
        return _op("Polygamma", scope, a=a, x=x)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation of one or two tensors ('ij,jk->ik', '...ij->...ji',
    'ii->i'); without '->' the output is NumPy's implicit one."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("einsum: unexpected keyword arguments %s" % sorted(kwargs))
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    if not inputs:
        raise ValueError("einsum needs at least one operand")
    with ops.name_scope(name, "einsum", list(inputs)) as scope:
        first = ops.convert_to_tensor(inputs[0])
        tensors = [first] + [ops.convert_to_tensor(x, dtype=first.dtype.base_dtype)
                             for x in inputs[1:]]
        return _op("Einsum", scope, inputs=tensors, equation=equation.replace(" ", ""))


__all__ += ["lgamma", "digamma", "atan2", "polygamma", "einsum"]


def abs(x, name=None):  # noqa: A001
    """|x| elementwise; of a complex tensor, its magnitude in the parts' dtype
    (op ComplexAbs)."""
    x = ops.convert_to_tensor(x, name="x")
    if x.dtype.base_dtype in (dtypes.complex64, dtypes.complex128):
        part = dtypes.float32 if x.dtype.base_dtype == dtypes.complex64 else dtypes.float64
        return _op("ComplexAbs", name, x=x, Tout=part)
    return _op("Abs", name, x=x)


def round(x, name=None):  # noqa: A001
    """x rounded to the nearest integer, halves to even (banker's rounding); integers unchanged."""
    x = ops.convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return _op("Round", name, x=x)


rint = round


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    with ops.name_scope(name, "LogSigmoid", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        return _op("Neg", scope, x=softplus(_op("Neg", None, x=x)))


def scalar_mul(scalar, x, name=None):
    """scalar * x, for a scalar (0-d) `scalar`."""
    with ops.name_scope(name, "scalar_mul", [scalar, x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        scalar = ops.convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
        if scalar.shape.ndims not in (0, None):
            raise ValueError("Only scalar multiply works, got shape %s" % scalar.shape)
        return _op("Mul", scope, x=scalar, y=x)


# ---- comparisons and logic ----

def equal(x, y, name=None):
    with ops.name_scope(name, "Equal", [x, y]) as scope:
        x, y = _pair(x, y)
        return _op("Equal", scope, x=x, y=y)


def not_equal(x, y, name=None):
    with ops.name_scope(name, "NotEqual", [x, y]) as scope:
        x, y = _pair(x, y)
        return _op("NotEqual", scope, x=x, y=y)


less = _binary("Less", "Less")
less_equal = _binary("LessEqual", "LessEqual")
greater = _binary("Greater", "Greater")
greater_equal = _binary("GreaterEqual", "GreaterEqual")


def logical_and(x, y, name=None):
    return _op("LogicalAnd", name, x=x, y=y)


def logical_or(x, y, name=None):
    return _op("LogicalOr", name, x=x, y=y)


def logical_not(x, name=None):
    return _op("LogicalNot", name, x=x)


def logical_xor(x, y, name="LogicalXor"):
    """(x | y) & ~(x & y), with broadcasting."""
    with ops.name_scope(name, "LogicalXor", [x, y]) as scope:
        x = ops.convert_to_tensor(x, dtype=dtypes.bool, name="x")
        y = ops.convert_to_tensor(y, dtype=dtypes.bool, name="y")
        return _op("LogicalAnd", scope, x=logical_or(x, y),
                   y=logical_not(logical_and(x, y)))


# ---- matrix products ----

def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """The matrix product of the last two dims; rank-2 operands use MatMul,
    higher ranks BatchMatMulV2 (batch dims broadcast)."""
    with ops.name_scope(name, "MatMul", [a, b]) as scope:
        if transpose_a and adjoint_a:
            raise ValueError("Only one of transpose_a and adjoint_a can be True.")
        if transpose_b and adjoint_b:
            raise ValueError("Only one of transpose_b and adjoint_b can be True.")
        a, b = _pair(a, b, "a", "b")
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra == 2 and rb == 2 and not a.dtype.is_complex:
            return _op("MatMul", scope, a=a, b=b, transpose_a=bool(transpose_a or adjoint_a),
                       transpose_b=bool(transpose_b or adjoint_b))
        if ra is not None and ra < 2 or rb is not None and rb < 2:
            raise ValueError("matmul needs operands of rank >= 2, got shapes %s and %s" % (
                a.shape, b.shape))
        if a.dtype.is_complex and (transpose_a or transpose_b):
            # adj_x conjugates; a plain transpose of a complex batch is not one attr.
            if transpose_a:
                a = array_ops.matrix_transpose(a)
                transpose_a = False
            if transpose_b:
                b = array_ops.matrix_transpose(b)
                transpose_b = False
        return _op("BatchMatMulV2", scope, x=a, y=b, adj_x=bool(transpose_a or adjoint_a),
                   adj_y=bool(transpose_b or adjoint_b))


def tensordot(a, b, axes, name=None):
    """Sums a's `axes[0]` dims against b's `axes[1]` (an int N means a's last N
    with b's first N), by transposing and reshaping both into one matmul.
    Needs the contracted and free dims statically known."""
    with ops.name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a, b = _pair(a, b, "a", "b")
        if a.shape.ndims is None or b.shape.ndims is None:
            raise ValueError("tensordot needs operands of known rank, got %s and %s" % (a.shape, b.shape))
        ra, rb = a.shape.ndims, b.shape.ndims
        if isinstance(axes, (numbers.Integral, np.integer)):
            n = int(axes)
            if n < 0 or n > min(ra, rb):
                raise ValueError("'axes' must be at most %d, got %d" % (min(ra, rb), n))
            a_axes, b_axes = list(_builtin_range(ra - n, ra)), list(_builtin_range(n))
        else:
            a_axes, b_axes = axes
            a_axes = [a_axes] if isinstance(a_axes, (numbers.Integral, np.integer)) else list(a_axes)
            b_axes = [b_axes] if isinstance(b_axes, (numbers.Integral, np.integer)) else list(b_axes)
            if len(a_axes) != len(b_axes):
                raise ValueError("Different number of contraction axes 'a' and 'b', %d != %d" % (
                    len(a_axes), len(b_axes)))
            a_axes = [int(x) % ra for x in a_axes]
            b_axes = [int(x) % rb for x in b_axes]
        ad, bd = a.shape.as_list(), b.shape.as_list()
        for i, j in zip(a_axes, b_axes):
            if ad[i] is not None and bd[j] is not None and ad[i] != bd[j]:
                raise ValueError("tensordot: contracted dims differ: a dim %d is %d, b dim %d is %d" % (
                    i, ad[i], j, bd[j]))
        a_free = [i for i in _builtin_range(ra) if i not in a_axes]
        b_free = [i for i in _builtin_range(rb) if i not in b_axes]
        if any(ad[i] is None for i in a_axes + a_free) or any(bd[i] is None for i in b_axes + b_free):
            raise ValueError("tensordot needs static shapes here, got %s and %s" % (a.shape, b.shape))
        k = int(np.prod([ad[i] for i in a_axes], dtype=np.int64))
        a2 = array_ops.reshape(array_ops.transpose(a, a_free + a_axes),
                               [int(np.prod([ad[i] for i in a_free], dtype=np.int64)), k])
        b2 = array_ops.reshape(array_ops.transpose(b, b_axes + b_free),
                               [k, int(np.prod([bd[i] for i in b_free], dtype=np.int64))])
        prod = matmul(a2, b2)
        return array_ops.reshape(prod, [ad[i] for i in a_free] + [bd[i] for i in b_free], name=scope)


def trace(x, name=None):
    """The sum of each innermost matrix's main diagonal."""
    with ops.name_scope(name, "Trace", [x]) as scope:
        return reduce_sum(array_ops.matrix_diag_part(x), [-1], name=scope)


# ---- sums of many ----

def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one shape and dtype."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of Tensors")
    inputs = [ops.convert_to_tensor(x) for x in inputs]
    if len(inputs) == 1:
        return array_ops.identity(inputs[0], name=name)
    return _op("AddN", name, inputs=list(inputs))


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """As add_n (Weir has no temporary-variable accumulation; the result is the same)."""
    return add_n(inputs, name=name)


# ---- reductions ----

def _axes(x, axis):
    """The reduction-indices tensor: all dims for None (a Const when the rank is known)."""
    if axis is None:
        r = x.shape.ndims
        if r is not None:
            return constant(list(_builtin_range(r)), dtype=dtypes.int32, name="Const")
        return _op("Range", None, start=0, limit=array_ops.rank(x), delta=1)
    if isinstance(axis, ops.Tensor):
        return axis
    if isinstance(axis, (numbers.Integral, np.integer)):
        return constant(int(axis), dtype=dtypes.int32, name="Const")
    return constant([int(a) for a in axis], dtype=dtypes.int32, name="Const")


def _keep(keepdims, keep_dims):
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    return bool(keepdims)


def _reduction(op_type, default_name, cast_bool=False):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        axis = array_ops._get_axis(axis, reduction_indices, "reduction_indices")
        keep = _keep(keepdims, keep_dims)
        with ops.name_scope(name, default_name, [input_tensor]) as scope:
            dtype = dtypes.bool if cast_bool else None
            x = ops.convert_to_tensor(input_tensor, dtype=dtype, name="input_tensor")
            out = _op(op_type, scope, input=x, reduction_indices=_axes(x, axis), keep_dims=keep)
            if axis is None and not keep:  # a scalar even when x's rank is unknown, as in TF
                out.set_shape([])
            return out
    fn.__name__ = "reduce_" + op_type.lower()
    fn.__doc__ = ("%s of input_tensor over `axis` (all dims for None; negative counts from the "
                  "end); reduced dims are dropped, or kept as 1 with keepdims." % op_type)
    return fn


reduce_sum = _reduction("Sum", "Sum")
reduce_mean = _reduction("Mean", "Mean")
reduce_max = _reduction("Max", "Max")
reduce_min = _reduction("Min", "Min")
reduce_prod = _reduction("Prod", "Prod")
reduce_all = _reduction("All", "All", cast_bool=True)
reduce_any = _reduction("Any", "Any", cast_bool=True)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """log(sum(exp(x))) over `axis`, computed around the maximum so large
    values do not overflow (an all -inf slice gives -inf)."""
    axis = array_ops._get_axis(axis, reduction_indices, "reduction_indices")
    keep = _keep(keepdims, keep_dims)
    with ops.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = ops.convert_to_tensor(input_tensor, name="input_tensor")
        m = reduce_max(x, axis, keepdims=True)
        # A non-finite max (all -inf, or inf) would make x - m NaN; shift by 0 there.
        m = array_ops.stop_gradient(array_ops.where_v2(is_finite(m), m, array_ops.zeros_like(m)))
        s = reduce_sum(exp(subtract(x, m)), axis, keepdims=keep)
        shift = m if keep else reduce_sum(m, axis, keepdims=False)
        return add(log(s), shift, name=scope)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    with ops.name_scope(name, "reduce_variance", [input_tensor]) as scope:
        x = ops.convert_to_tensor(input_tensor, name="input_tensor")
        mean = reduce_mean(x, axis, keepdims=True)
        return reduce_mean(squared_difference(x, mean), axis, keepdims=keepdims, name=scope)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    with ops.name_scope(name, "reduce_std", [input_tensor]) as scope:
        return sqrt(reduce_variance(input_tensor, axis, keepdims), name=scope)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    with ops.name_scope(name, "reduce_euclidean_norm", [input_tensor]) as scope:
        x = ops.convert_to_tensor(input_tensor, name="input_tensor")
        return sqrt(reduce_sum(square(x), axis, keepdims=keepdims), name=scope)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """The number of non-zero elements over `axis`, as `dtype`."""
    if input_tensor is None:
        input_tensor = input
    axis = array_ops._get_axis(axis, reduction_indices, "reduction_indices")
    keep = _keep(keepdims, keep_dims)
    with ops.name_scope(name, "count_nonzero", [input_tensor]) as scope:
        x = ops.convert_to_tensor(input_tensor, name="input_tensor")
        if x.dtype == dtypes.bool:
            nonzero = x
        elif x.dtype == dtypes.string:
            nonzero = not_equal(x, constant(b"", dtype=dtypes.string))
        else:
            nonzero = not_equal(x, array_ops.zeros_like(x))
        counts = reduce_sum(cast(nonzero, dtypes.int64), axis, keepdims=keep)
        return cast(counts, dtype, name=scope)


def _arg_reduction(op_type):
    def fn(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
        axis = array_ops._get_axis(axis, dimension, "dimension", default=0)
        return _op(op_type, name, input=input, dimension=axis,
                   output_type=dtypes.as_dtype(output_type))
    fn.__name__ = op_type.lower()
    fn.__doc__ = ("Index of the %s value along `axis` (default 0), as output_type (int64); "
                  "ties give the first index." % ("largest" if op_type == "ArgMax" else "smallest"))
    return fn


argmax = _arg_reduction("ArgMax")
argmin = _arg_reduction("ArgMin")


def arg_max(input, dimension, name=None, output_type=dtypes.int64):  # noqa: A002
    """TF1's deprecated arg_max(input, dimension)."""
    return argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, name=None, output_type=dtypes.int64):  # noqa: A002
    """TF1's deprecated arg_min(input, dimension)."""
    return argmin(input, axis=dimension, name=name, output_type=output_type)


def div_no_nan(x, y, name=None):
    """x / y, but 0 where y is 0 (even for x = 0 or inf): op DivNoNan for
    floating and complex dtypes; integers divide as truediv."""
    with ops.name_scope(name, "div_no_nan", [x, y]) as scope:
        x, y = _pair(x, y)
        if x.dtype.base_dtype.is_floating or x.dtype.base_dtype.is_complex:
            return _op("DivNoNan", scope, x=x, y=y)
        zero = array_ops.zeros_like(y)
        y_zero = equal(y, zero)
        # Divide by 1 where y is 0 so no inf/NaN is made (and none reaches a gradient).
        safe_y = array_ops.where_v2(y_zero, array_ops.ones_like(y), y)
        return array_ops.where_v2(y_zero, array_ops.zeros_like(truediv(x, safe_y)),
                                  truediv(x, safe_y), name=scope)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """Vector norms over `axis` (an int, or None for the whole tensor as one
    vector): ord "euclidean"/2, 1, or np.inf; with a pair of axes, the
    Frobenius norm ("fro"/"euclidean"). Matrix 1/inf/2-norms are not supported."""
    keep = _keep(keepdims, keep_dims)
    with ops.name_scope(name, "norm", [tensor]) as scope:
        x = ops.convert_to_tensor(tensor, name="tensor")
        pair = isinstance(axis, (list, _builtin_tuple)) and len(axis) == 2
        if pair and ord not in ("fro", "euclidean"):
            raise ValueError("norm: matrix ord %r is not supported (only 'fro'/'euclidean')" % (ord,))
        if not pair and ord == "fro":
            raise ValueError("norm: 'fro' needs a pair of axes")
        if ord in ("euclidean", "fro", 2, 2.0):
            return sqrt(reduce_sum(square(x), axis, keepdims=keep), name=scope)
        if ord in (1, 1.0):
            return reduce_sum(abs(x), axis, keepdims=keep, name=scope)
        if ord == np.inf:
            return reduce_max(abs(x), axis, keepdims=keep, name=scope)
        if isinstance(ord, (numbers.Real, np.floating)) and ord > 0:
            p = constant(float(ord), dtype=x.dtype)
            return pow(reduce_sum(pow(abs(x), p), axis, keepdims=keep), 1.0 / float(ord), name=scope)
        raise ValueError("norm: ord must be 'euclidean', 'fro', a positive number or np.inf, got %r" % (ord,))


# ---- sequences ----

_RANGE_ORDER = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """[start, start + delta, ...) up to but not including limit; range(n) is
    0 .. n-1. The dtype is the widest of the arguments' (int32 < int64 <
    float32 < float64) unless given."""
    if limit is None:
        start, limit = 0, start
    with ops.name_scope(name, "Range", [start, limit, delta]) as scope:
        vals = []
        for v, n in ((start, "start"), (limit, "limit"), (delta, "delta")):
            vals.append(v if isinstance(v, ops.Tensor) else ops.convert_to_tensor(
                v, dtype=dtype, name=n))
        if dtype is None:
            inferred = max((t.dtype.base_dtype for t in vals),
                           key=lambda d: _RANGE_ORDER.index(d) if d in _RANGE_ORDER else -1)
        else:
            inferred = dtypes.as_dtype(dtype)
        vals = [cast(t, inferred) for t in vals]
        return _op("Range", scope, start=vals[0], limit=vals[1], delta=vals[2])


def linspace(start, stop, num, name=None, axis=0):
    """num evenly spaced values from start to stop, both included (num = 1
    gives [start]): op LinSpace. Scalar start and stop only."""
    with ops.name_scope(name, "LinSpace", [start, stop, num]) as scope:
        start = ops.convert_to_tensor(start, name="start")
        stop = ops.convert_to_tensor(stop, dtype=start.dtype.base_dtype, name="stop")
        num = ops.convert_to_tensor(num, name="num")
        if start.shape.ndims not in (0, None) or stop.shape.ndims not in (0, None):
            raise ValueError("linspace here takes scalar start and stop, got %s and %s" % (
                start.shape, stop.shape))
        if axis not in (0, -1):
            raise ValueError("linspace: axis must be 0 (or -1) for scalar start and stop")
        return _op("LinSpace", scope, start=start, stop=stop, num=num)


lin_space = linspace


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis` (a Python int or an int32/int64 scalar tensor):
    out[i] = x[0] + ... + x[i]; `exclusive` stops before x[i], `reverse` runs
    from the end."""
    with ops.name_scope(name, "Cumsum", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        return _op("Cumsum", scope, x=x, axis=_axis_tensor(axis), exclusive=bool(exclusive),
                   reverse=bool(reverse))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis`, with cumsum's `exclusive` and `reverse`."""
    with ops.name_scope(name, "Cumprod", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        return _op("Cumprod", scope, x=x, axis=_axis_tensor(axis), exclusive=bool(exclusive),
                   reverse=bool(reverse))


def _axis_tensor(axis):
    if isinstance(axis, ops.Tensor):
        return axis
    return ops.convert_to_tensor(axis, dtype=dtypes.int32, name="axis")


def _segment_ids(segment_ids):
    if isinstance(segment_ids, ops.Tensor):
        return segment_ids
    return ops.convert_to_tensor(segment_ids, dtype=dtypes.int32, name="segment_ids")


def _num_segments(num_segments):
    if isinstance(num_segments, ops.Tensor):
        return num_segments
    return ops.convert_to_tensor(num_segments, dtype=dtypes.int32, name="num_segments")


def _unsorted_segment(op_type, data, segment_ids, num_segments, name):
    with ops.name_scope(name, op_type, [data, segment_ids, num_segments]) as scope:
        return _op(op_type, scope, data=ops.convert_to_tensor(data, name="data"),
                   segment_ids=_segment_ids(segment_ids),
                   num_segments=_num_segments(num_segments))


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """output[s] = sum of data[i] over the i with segment_ids[i] == s; segment_ids
    shapes a prefix of data, negative ids are dropped, empty segments are 0."""
    return _unsorted_segment("UnsortedSegmentSum", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """unsorted_segment_sum with a product; empty segments are 1."""
    return _unsorted_segment("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """unsorted_segment_sum with a maximum; empty segments are the dtype's lowest value."""
    return _unsorted_segment("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """unsorted_segment_sum with a minimum; empty segments are the dtype's highest value."""
    return _unsorted_segment("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def segment_sum(data, segment_ids, name=None):
    """output[s] = sum of the rows data[i] with segment_ids[i] == s, for sorted
    (non-decreasing, non-negative) ids; last id + 1 rows."""
    with ops.name_scope(name, "SegmentSum", [data, segment_ids]) as scope:
        return _op("SegmentSum", scope, data=ops.convert_to_tensor(data, name="data"),
                   segment_ids=_segment_ids(segment_ids))


def _builtin_range_tensor(n):
    return _op("Range", None, start=constant(0, dtype=n.dtype), limit=n,
               delta=constant(1, dtype=n.dtype))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x^2, axis), epsilon))."""
    axis = array_ops._get_axis(axis, dim, "dim")
    with ops.name_scope(name, "l2_normalize", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        sq = reduce_sum(square(x), axis, keepdims=True)
        inv = rsqrt(maximum(sq, constant(epsilon, dtype=x.dtype)))
        return multiply(x, inv, name=scope)


# ---- Tensor operators ----

def _binary_operator(fn, op_name):
    # As TF: the op is named op_name ("add", "add_1") and a converted
    # operand lives under it ("add/y").
    def forward(x, y):
        if not isinstance(y, ops.Tensor) and not ops._is_convertible(y):
            return NotImplemented  # let y's own reflected operator try
        with ops.name_scope(None, op_name, [x, y]) as scope:
            if not isinstance(y, ops.Tensor):
                y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
            return fn(x, y, name=scope)

    def reverse(y, x):
        # x (the left operand) is not a Tensor: it takes y's dtype.
        if not ops._is_convertible(x):
            return NotImplemented
        with ops.name_scope(None, op_name, [x, y]) as scope:
            x = ops.convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return fn(x, y, name=scope)

    forward.__name__ = "__%s__" % op_name
    reverse.__name__ = "__r%s__" % op_name
    return forward, reverse


def _and(x, y, name=None):
    return logical_and(x, y, name=name)


def _or(x, y, name=None):
    return logical_or(x, y, name=name)


def _xor(x, y, name=None):
    return logical_xor(x, y, name=name)


def _invert(x, name=None):
    if x.dtype.base_dtype != dtypes.bool:
        raise TypeError("~ is defined for bool tensors only (Weir has no Invert op), got %s"
                        % x.dtype.name)
    return logical_not(x, name=name)


def _register_operators():
    for name, fn in (("add", add), ("sub", subtract), ("mul", multiply), ("truediv", truediv),
                     ("floordiv", floordiv), ("mod", floormod), ("pow", pow), ("matmul", matmul),
                     ("and", _and), ("or", _or), ("xor", _xor)):
        fwd, rev = _binary_operator(fn, name)
        ops.Tensor._override_operator("__%s__" % name, fwd)
        ops.Tensor._override_operator("__r%s__" % name, rev)
    for name, fn in (("lt", less), ("le", less_equal), ("gt", greater), ("ge", greater_equal)):
        ops.Tensor._override_operator("__%s__" % name, (lambda f: lambda x, y: f(x, y))(fn))
    ops.Tensor._override_operator("__neg__", lambda x: negative(x))
    ops.Tensor._override_operator("__abs__", lambda x: abs(x))
    ops.Tensor._override_operator("__invert__", _invert)


_register_operators()
