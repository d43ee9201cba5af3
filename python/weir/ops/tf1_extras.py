"""TF1 API helpers composed in Python of ops weir has (tf1api): the top-level
tf.compat.v1 names (py_function, switch_case, repeat, sort, argsort,
setdiff1d, unravel_index, batch_gather, parallel_stack, hessians, lbeta,
truncatemod, space_to_batch, histogram_fixed_width, ...) and the TF1 mode
switches (the module functions are in tf1_modules). Each follows TF 2.21's
documented semantics; python/tests/test_tf1_api_extras.py checks them against
TensorFlow."""

import numpy as _np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape

__all__ = [
    "py_function", "switch_case", "repeat", "sort", "argsort", "setdiff1d", "unravel_index",
    "batch_gather", "parallel_stack", "hessians", "get_static_value", "dimension_at_index",
    "dimension_value", "is_non_decreasing", "is_strictly_increasing", "lbeta", "truncatemod",
    "enable_v2_behavior", "enable_control_flow_v2", "disable_control_flow_v2",
    "control_flow_v2_enabled", "enable_tensor_equality", "disable_tensor_equality",
    "enable_v2_tensorshape", "disable_v2_tensorshape", "executing_eagerly_outside_functions",
    "get_logger", "grad_pass_through", "recompute_grad", "histogram_fixed_width",
    "histogram_fixed_width_bins", "vectorized_map", "is_symbolic_tensor", "initialize_all_tables",
    "VariableAggregation", "VariableSynchronization", "OpError", "QUANTIZED_DTYPES",
    "load_op_library", "load_library", "load_file_system_library", "GIT_VERSION",
    "COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION", "MONOLITHIC_BUILD",
    "space_to_batch", "batch_to_space", "required_space_to_batch_paddings", "guarantee_const",
    "batch_scatter_update",
]


def _wr():
    import weir
    return weir


def py_function(func, inp, Tout, name=None):  # noqa: N803  (TF's name)
    """tf.py_function in graph mode: runs `func` on the values of `inp` as
    wr.py_func does (stateful); Tout a dtype or a list of dtypes."""
    return _wr().py_func(func, inp, Tout, stateful=True, name=name)


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs branch_fns[branch_index] (a list, or a dict int -> callable);
    an index outside the keys runs `default`, or the last branch if None."""
    wr = _wr()
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
        for key, _ in items:
            if not isinstance(key, int):
                raise TypeError("branch_fns dict keys must be ints, got %r" % (key,))
    elif isinstance(branch_fns, (list, tuple)):
        items = list(enumerate(branch_fns))
        for item in items:
            if isinstance(item[1], tuple) and len(item[1]) == 2:
                items = list(branch_fns)
                break
    else:
        raise TypeError("branch_fns must be a list, tuple, or dict")
    if not items:
        raise ValueError("Must provide at least one item in branch_fns")
    keys = [k for k, _ in items]
    if sorted(keys) != list(range(len(keys))):
        raise ValueError("branch indices (keys) must form contiguous range of [0 to %d) but "
                         "found {%s}" % (len(keys), ",".join(str(k) for k in sorted(keys))))
    for _, fn in items:
        if not callable(fn):
            raise TypeError("fn for key %r must be callable." % (_,))
    with ops.name_scope(name):
        index = ops.convert_to_tensor(branch_index, name="branch_index")
        if index.dtype.base_dtype != dtypes.int32:
            raise TypeError("branch_index must be an int32 tensor, got %s" % index.dtype.name)
        if index.shape.ndims is not None and index.shape.ndims != 0:
            raise ValueError("branch_index must be a scalar, got shape %s" % index.shape)
        if default is None:
            default = items[-1][1]
            items = items[:-1]
        pairs = [(wr.equal(index, key), fn) for key, fn in items]
        if not pairs:
            return default()
        return wr.case(pairs, default=default, exclusive=False)


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Repeats each element of `input` along `axis` (the flattened input when
    axis is None) repeats[i] times (numpy.repeat)."""
    wr = _wr()
    with ops.name_scope(name, "Repeat"):
        x = ops.convert_to_tensor(input, name="input")
        reps = ops.convert_to_tensor(repeats, name="repeats")
        if reps.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("repeats must be int32 or int64, got %s" % reps.dtype.name)
        if reps.dtype.base_dtype == dtypes.int64:
            with ops.control_dependencies([wr.debugging.assert_less_equal(
                    reps, wr.constant(2**31 - 1, dtypes.int64),
                    message="repeat: repeats must fit in int32")]):
                reps = wr.identity(reps)
        reps = wr.cast(reps, dtypes.int32)
        if reps.shape.ndims is not None and reps.shape.ndims > 1:
            raise ValueError("`repeats` must be a scalar or 1-D, got shape %s" % reps.shape)
        if axis is None:
            x = wr.reshape(x, [-1])
            axis = 0
        ndims = x.shape.ndims
        if ndims is None:
            raise ValueError("repeat: input must have a known rank")
        if ndims == 0:
            raise ValueError("axis=%d out of bounds: expected 0 <= axis < 0" % axis)
        if not -ndims <= axis < ndims:
            raise ValueError("axis=%d out of bounds: expected %d <= axis < %d"
                             % (axis, -ndims, ndims))
        axis = axis % ndims
        checks = [wr.debugging.assert_non_negative(reps, message="repeats must be >= 0")]
        with ops.control_dependencies(checks):
            reps = wr.identity(reps)
        n = wr.shape(x)[axis]
        reps = wr.broadcast_to(reps, wr.reshape(n, [1])) if reps.shape.ndims == 0 \
            else reps
        max_rep = wr.maximum(wr.reduce_max(wr.concat([reps, [0]], 0)), 0)
        expanded = wr.expand_dims(x, axis + 1)
        multiples = wr.one_hot(axis + 1, ndims + 1, on_value=max_rep, off_value=1,
                               dtype=dtypes.int32)
        tiled = wr.tile(expanded, multiples)
        mask = wr.sequence_mask(reps, max_rep)
        return wr.boolean_mask(tiled, mask, axis=axis)


def _sort_last_axis(values, axis, direction, want_indices):
    wr = _wr()
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError('Argument `direction` should be one of "ASCENDING" or "DESCENDING". '
                         "Received: direction=%s" % (direction,))
    values = ops.convert_to_tensor(values, name="values")
    ndims = values.shape.ndims
    if ndims is None:
        raise ValueError("sort: values must have a known rank")
    if ndims == 0:
        raise ValueError("sort: values must have rank >= 1, got a scalar")
    if not isinstance(axis, int) or not -ndims <= axis < ndims:
        raise ValueError("axis must be a constant scalar in [-%d, %d), got %r"
                         % (ndims, ndims, axis))
    axis = axis % ndims
    perm = list(range(ndims))
    if axis != ndims - 1:
        perm[axis], perm[-1] = perm[-1], perm[axis]
        values = wr.transpose(values, perm)
    base = values.dtype.base_dtype
    if direction == "ASCENDING":
        if base.is_unsigned or base == dtypes.bool:
            raise TypeError("sort: ascending order of %s is not supported" % base.name)
        keys = -values if not base.is_integer else -values - 1
    else:
        keys = values
    k = wr.shape(values)[-1]
    top, idx = wr.nn.top_k(keys, k, sorted=True)
    out = idx if want_indices else (
        top if direction == "DESCENDING" else (-top if not base.is_integer else -top - 1))
    if axis != ndims - 1:
        out = wr.transpose(out, perm)
    return out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """The values sorted along `axis` (TF's sort: TopKV2 over the axis)."""
    with ops.name_scope(name, "sort"):
        return _sort_last_axis(values, axis, direction, False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort `values` along `axis` (ties keep their
    order, as TopKV2 gives them)."""
    del stable
    with ops.name_scope(name, "argsort"):
        return _sort_last_axis(values, axis, direction, True)


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """(out, idx): the values of 1-D x that are not in 1-D y, in x's order,
    and their positions in x (TF's ListDiff)."""
    wr = _wr()
    with ops.name_scope(name, "ListDiff"):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype)
        for t, what in ((x, "x"), (y, "y")):
            if t.shape.ndims is not None and t.shape.ndims != 1:
                raise ValueError("Shape must be rank 1 but is rank %d for '%s' of ListDiff "
                                 "(%s shape %s)" % (t.shape.ndims, what, what, t.shape))
        index_dtype = dtypes.as_dtype(index_dtype)
        if index_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("setdiff1d: index_dtype must be int32 or int64, got %s"
                            % index_dtype.name)
        x = wr.reshape(x, [-1])
        y = wr.reshape(y, [-1])
        found = wr.reduce_any(wr.equal(wr.expand_dims(x, 1), wr.expand_dims(y, 0)), axis=1)
        keep = wr.logical_not(found)
        out = wr.boolean_mask(x, keep)
        idx = wr.boolean_mask(wr.range(wr.size(x, out_type=index_dtype), dtype=index_dtype),
                              keep)
        return out, idx


def unravel_index(indices, dims, name=None):
    """The coordinates of flat `indices` in an array of shape `dims`: shape
    [len(dims)] + indices.shape. An index outside [0, prod(dims)) fails the
    step with InvalidArgumentError."""
    wr = _wr()
    with ops.name_scope(name, "UnravelIndex"):
        indices = ops.convert_to_tensor(indices, name="indices")
        if indices.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("unravel_index: indices must be int32 or int64, got %s"
                            % indices.dtype.name)
        dims = ops.convert_to_tensor(dims, name="dims", dtype=indices.dtype)
        if dims.shape.ndims is not None and dims.shape.ndims != 1:
            raise ValueError("unravel_index: dims must be 1-D, got shape %s" % dims.shape)
        total = wr.reduce_prod(dims)
        checks = [
            wr.debugging.assert_less_equal(
                wr.rank(indices), 1,
                message="unravel_index: the indices can only be scalar or vector"),
            wr.debugging.assert_positive(dims, message="unravel_index: dims must be positive"),
            wr.debugging.assert_non_negative(
                indices, message="unravel_index: index out of bounds (negative)"),
            wr.debugging.assert_less(indices, total,
                                     message="unravel_index: index out of bounds for dims"),
        ]
        with ops.control_dependencies(checks):
            flat = wr.reshape(indices, [1, -1])
        strides = wr.cumprod(dims, exclusive=True, reverse=True)
        coords = wr.floormod(wr.floordiv(flat, wr.expand_dims(strides, 1)),
                             wr.expand_dims(dims, 1))
        return wr.reshape(coords, wr.concat([wr.shape(dims), wr.shape(indices)], 0))


def batch_gather(params, indices, name=None):
    """TF1's batch_gather: gather with batch_dims = rank(indices) - 1."""
    wr = _wr()
    with ops.name_scope(name, "BatchGather"):
        params = ops.convert_to_tensor(params, name="params")
        indices = ops.convert_to_tensor(indices, name="indices")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        return wr.gather(params, indices, batch_dims=indices.shape.ndims - 1)


def parallel_stack(values, name="parallel_stack"):
    """Stacks the same-shape tensors in `values` along a new first axis
    (their shapes must be fully defined, as TF requires)."""
    wr = _wr()
    with ops.name_scope(name):
        values = [ops.convert_to_tensor(v) for v in values]
        if not values:
            raise ValueError("parallel_stack: values is empty")
        shape = values[0].shape
        if not shape.is_fully_defined():
            raise ValueError("parallel_stack: the shape of values must be fully defined, got %s"
                             % shape)
        for v in values[1:]:
            if not v.shape.is_compatible_with(shape):
                raise ValueError("parallel_stack: shapes %s and %s differ" % (shape, v.shape))
        return wr.stack(values, axis=0)


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """For each x in xs, the Hessian of sum(ys) with respect to x: shape
    x.shape + x.shape. Each x's size must be known (one gradient per
    element)."""
    wr = _wr()
    xs_list = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    out = []
    with ops.name_scope(name):
        grads = wr.gradients(ys, xs_list)
        for x, g in zip(xs_list, grads):
            x = ops.convert_to_tensor(x)
            if g is None:
                out.append(None)
                continue
            if not x.shape.is_fully_defined():
                raise ValueError("hessians: the shape of %s must be fully defined, got %s"
                                 % (x.name, x.shape))
            n = x.shape.num_elements()
            flat = wr.reshape(g, [-1])
            rows = []
            for i in range(n):
                r = wr.gradients(flat[i], x)[0]
                rows.append(wr.zeros_like(x) if r is None else r)
            dims = x.shape.as_list()
            out.append(wr.reshape(wr.stack(rows, 0), dims + dims) if rows
                       else wr.zeros(dims + dims, x.dtype))
    return out


def get_static_value(tensor, partial=False):
    """The numpy value of `tensor` when it can be computed without running the
    graph, else None (tf.get_static_value)."""
    from weir.framework import tensor_util
    if not isinstance(tensor, ops.Tensor):
        try:
            return _np.asarray(tensor) if tensor is not None else None
        except Exception:  # noqa: BLE001
            return None
    del partial
    return tensor_util.constant_value(tensor)


def dimension_value(dimension):
    if isinstance(dimension, tensor_shape.Dimension):
        return dimension.value
    return dimension


def dimension_at_index(shape, index):
    """The Dimension at `index` of `shape` (Dimension(None) when the rank is
    unknown)."""
    shape = tensor_shape.as_shape(shape)
    if shape.dims is None:
        return tensor_shape.Dimension(None)
    dim = shape.dims[index]
    return dim if isinstance(dim, tensor_shape.Dimension) else tensor_shape.Dimension(dim)


def _monotone(x, strict, name, default):
    wr = _wr()
    with ops.name_scope(name, default):
        x = ops.convert_to_tensor(x, name="x")
        if not (x.dtype.is_floating or x.dtype.is_integer):
            raise TypeError("Expected x to be numeric, instead found: %s" % x.dtype.name)
        flat = wr.reshape(x, [-1])
        left, right = flat[:-1], flat[1:]
        cmp = wr.less(left, right) if strict else wr.less_equal(left, right)
        return wr.reduce_all(cmp)


def is_non_decreasing(x, name=None):
    """True when x (flattened) has x[i] <= x[i+1] everywhere (True for fewer
    than 2 elements)."""
    return _monotone(x, False, name, "is_non_decreasing")


def is_strictly_increasing(x, name=None):
    """True when x (flattened) has x[i] < x[i+1] everywhere."""
    return _monotone(x, True, name, "is_strictly_increasing")


def lbeta(x, name=None):
    """log(|Beta(x)|) over the last axis: sum(lgamma(x)) - lgamma(sum(x))."""
    wr = _wr()
    with ops.name_scope(name, "lbeta"):
        x = ops.convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise TypeError("lbeta: x must be floating point, got %s" % x.dtype.name)
        return wr.reduce_sum(wr.lgamma(x), -1) - wr.lgamma(wr.reduce_sum(x, -1))


def truncatemod(x, y, name=None):
    """The remainder of division rounded towards zero (C's fmod): it has the
    sign of x. Built from FloorMod: where x and the floor remainder differ
    in sign, y is taken off again."""
    wr = _wr()
    with ops.name_scope(name, "TruncateMod"):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype)
        r = wr.floormod(x, y)
        zero = wr.zeros_like(r)
        fix = wr.logical_and(wr.not_equal(r, zero),
                             wr.not_equal(wr.less(r, zero), wr.less(x, zero)))
        return wr.where(fix, r - wr.broadcast_to(y, wr.shape(r)), r)


# --- TF1 mode switches ---------------------------------------------------
_control_flow_v2 = [False]


def enable_v2_behavior():
    """Weir runs TF1's graph mode only: TF2 behavior (eager execution) is not
    available, so this raises NotImplementedError."""
    raise NotImplementedError("weir implements TF1 graph mode only: enable_v2_behavior is not "
                              "supported (remove the call; disable_v2_behavior is a no-op)")


def enable_control_flow_v2():
    """Records the choice; weir's cond/while_loop build the same graphs
    either way (control_flow_v2_enabled reports it)."""
    _control_flow_v2[0] = True


def disable_control_flow_v2():
    _control_flow_v2[0] = False


def control_flow_v2_enabled():
    return _control_flow_v2[0]


def enable_tensor_equality():
    """Weir's Tensor == is TF1's (identity); elementwise == is not
    implemented, so this raises NotImplementedError."""
    raise NotImplementedError("weir Tensors compare by identity (TF1); enable_tensor_equality "
                              "is not supported: use wr.equal for elementwise comparison")


def disable_tensor_equality():
    """A no-op: weir's Tensors already compare by identity (TF1)."""


def enable_v2_tensorshape():
    """TensorShape indexing returning ints is not implemented in weir (it
    returns Dimension, as TF1 does): NotImplementedError."""
    raise NotImplementedError("weir's TensorShape[i] returns a Dimension (TF1 behavior); "
                              "enable_v2_tensorshape is not supported")


def disable_v2_tensorshape():
    """A no-op: weir's TensorShape already indexes to Dimension (TF1)."""


def executing_eagerly_outside_functions():
    """False: weir runs graphs only."""
    return False


def get_logger():
    """The Python logger behind wr.logging."""
    from weir import logging as _wr_logging
    return _wr_logging.get_logger()


# --- more TF1 top-level names --------------------------------------------
def grad_pass_through(f):
    """f whose gradient is the identity (y = f(x) in the forward pass,
    dy/dx taken as 1): f's outputs must match its inputs one to one."""
    from weir.ops.custom_gradient import custom_gradient

    @custom_gradient
    def _pass(*args):
        result = f(*args)

        def grad(*dys):
            return list(dys) if len(dys) > 1 else dys[0]
        return result, grad
    return _pass


def recompute_grad(f):
    """tf.recompute_grad: the same values and gradients as f (TF recomputes
    f's activations in the backward pass to save memory; weir keeps them,
    which changes memory use, not results)."""
    return f


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin (0..nbins-1) of each value among nbins equal bins over
    value_range; values outside go to the first or last bin."""
    wr = _wr()
    with ops.name_scope(name, "histogram_fixed_width_bins"):
        values = ops.convert_to_tensor(values, name="values")
        if not (values.dtype.is_floating or values.dtype.is_integer):
            raise TypeError("histogram_fixed_width_bins: values must be numeric, got %s"
                            % values.dtype.name)
        value_range = ops.convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        if value_range.shape.ndims is not None and value_range.shape.as_list() != [2]:
            raise ValueError("value_range must have shape [2], got %s" % value_range.shape)
        nbins_t = ops.convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        dtype = dtypes.as_dtype(dtype)
        checks = [
            wr.debugging.assert_positive(nbins_t, message="nbins should be a positive number"),
            wr.debugging.assert_less(value_range[0], value_range[1],
                                     message="value_range should satisfy value_range[0] < "
                                     "value_range[1]"),
        ]
        with ops.control_dependencies(checks):
            nbins_f = wr.cast(nbins_t, dtypes.float64)
        flat = wr.reshape(values, [-1])
        lo = wr.cast(value_range[0], dtypes.float64)
        hi = wr.cast(value_range[1], dtypes.float64)
        scaled = (wr.cast(flat, dtypes.float64) - lo) / (hi - lo)
        idx = wr.cast(wr.floor(nbins_f * scaled), dtypes.int32)
        idx = wr.clip_by_value(idx, 0, nbins_t - 1)
        return wr.reshape(wr.cast(idx, dtype), wr.shape(values))


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The counts of values in nbins equal bins over value_range (values
    outside go to the first or last bin)."""
    wr = _wr()
    with ops.name_scope(name, "histogram_fixed_width"):
        bins = histogram_fixed_width_bins(values, value_range, nbins, dtypes.int32)
        nbins_t = ops.convert_to_tensor(nbins, dtype=dtypes.int32)
        flat = wr.reshape(bins, [-1])
        counts = wr.unsorted_segment_sum(wr.ones_like(flat), flat, nbins_t)
        return wr.cast(counts, dtype)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """fn applied to each slice of elems along axis 0, stacked: weir runs it
    as map_fn (the results of tf.vectorized_map, without its
    vectorization)."""
    del fallback_to_while_loop, warn
    return _wr().map_fn(fn, elems)


def is_symbolic_tensor(tensor):
    """True for a graph Tensor (every weir Tensor)."""
    return isinstance(tensor, ops.Tensor)


def initialize_all_tables(name="init_all_tables"):
    """The deprecated name of tables_initializer."""
    return _wr().tables_initializer(name=name)


class VariableAggregation:
    """How a distributed variable's updates combine (tf.VariableAggregation)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


class VariableSynchronization:
    """When a distributed variable is synchronized (tf.VariableSynchronization)."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


from weir.framework.errors import OpError  # noqa: E402  (tf.OpError)


QUANTIZED_DTYPES = dtypes.QUANTIZED_DTYPES


def load_op_library(library_filename):
    """Weir cannot load TensorFlow kernel libraries: NotImplementedError."""
    raise NotImplementedError("weir cannot load TensorFlow op libraries (%s): weir's ops are "
                              "registered in C++ at build time" % (library_filename,))


load_library = load_op_library
load_file_system_library = load_op_library

GIT_VERSION = "unknown"
COMPILER_VERSION = "unknown"
CXX11_ABI_FLAG = 1
CXX_VERSION = 201703
MONOLITHIC_BUILD = 0


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's space_to_batch: space_to_batch_nd over the 2 spatial dims of
    an NHWC input with block_shape [block_size, block_size]."""
    if (block_size is None) == (block_shape is None):
        raise ValueError("space_to_batch: give exactly one of block_size and block_shape")
    if block_shape is None:
        block_shape = [int(block_size), int(block_size)]
    return _wr().space_to_batch_nd(input, block_shape, paddings, name=name)


def batch_to_space(input, crops, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's batch_to_space: batch_to_space_nd with block_shape
    [block_size, block_size]."""
    if (block_size is None) == (block_shape is None):
        raise ValueError("batch_to_space: give exactly one of block_size and block_shape")
    if block_shape is None:
        block_shape = [int(block_size), int(block_size)]
    return _wr().batch_to_space_nd(input, block_shape, crops, name=name)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops) that make input_shape (plus base_paddings) divisible
    by block_shape: the extra padding goes at the end, and crops removes it."""
    wr = _wr()
    with ops.name_scope(name, "required_space_to_batch_paddings"):
        input_shape = ops.convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = ops.convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        block_shape.shape.assert_has_rank(1)
        num = block_shape.shape.as_list()[0]
        if num is None:
            raise ValueError("required_space_to_batch_paddings: block_shape must have a known "
                             "length")
        if base_paddings is not None:
            base_paddings = ops.convert_to_tensor(base_paddings, dtype=dtypes.int32,
                                                  name="base_paddings")
        else:
            base_paddings = wr.zeros([num, 2], dtypes.int32)
        checks = [wr.debugging.assert_positive(block_shape,
                                               message="block_shape must be positive")]
        with ops.control_dependencies(checks):
            pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full = input_shape + pad_start + orig_pad_end
        extra = wr.floormod(block_shape - wr.floormod(full, block_shape), block_shape)
        pad_end = orig_pad_end + extra
        paddings = wr.stack([pad_start, pad_end], axis=1, name="paddings")
        crops = wr.stack([wr.zeros_like(extra), extra], axis=1, name="crops")
        return paddings, crops


def guarantee_const(input, name=None):  # noqa: A002
    """The input, unchanged (TF's GuaranteeConst is an identity that promises
    the value is constant; weir builds an Identity)."""
    return _wr().identity(input, name=name or "GuaranteeConst")


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[b..., indices[b..., i]] = updates[b..., i] for a variable `ref`
    of shape batch + [n] + rest and indices of shape batch + [k]: a
    scatter_nd_update with the batch coordinates added."""
    wr = _wr()
    with ops.name_scope(name, "BatchScatterUpdate"):
        indices = ops.convert_to_tensor(indices, name="indices")
        updates = ops.convert_to_tensor(updates, name="updates")
        if indices.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("batch_scatter_update: indices must be int32 or int64, got %s"
                            % indices.dtype.name)
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_scatter_update: indices must have a known rank")
        if ndims == 0:
            raise ValueError("batch_scatter_update: indices must have rank >= 1")
        shape = wr.shape(indices, out_type=indices.dtype)
        coords = []
        for d in range(ndims - 1):
            r = wr.range(shape[d], dtype=indices.dtype)
            view = [1] * ndims
            view[d] = -1
            coords.append(wr.broadcast_to(wr.reshape(r, view), shape))
        coords.append(indices)
        nd_indices = wr.stack(coords, axis=-1)
        return wr.scatter_nd_update(ref, nd_indices, updates, use_locking=use_locking)
