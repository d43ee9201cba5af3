"""map_fn, scan, foldl and foldr (TF1's tf.map_fn & co.) as while loops over
TensorArrays: the elements are unstacked along dim 0 into arrays, the loop
reads element i, calls fn and writes (or carries) the result, and the
results are stacked again. `elems` may be a nested structure of tensors
(lists, tuples, namedtuples, dicts) with one dim 0; fn's results may be
nested too (map_fn: give `dtype` where they differ from elems' structure).
Gradients go through the loop and the arrays. back_prop=False adds a
stop_gradient on the results; swap_memory is accepted and ignored.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.ops import array_ops
from weir.ops import control_flow_ops
from weir.ops import tensor_array_ops

__all__ = ["map_fn", "scan", "foldl", "foldr"]

_flatten = control_flow_ops._flatten
_pack_as = control_flow_ops._pack_as
_is_nested = control_flow_ops._is_nested


def _pack(structure, flat):
    return _pack_as(structure, flat) if _is_nested(structure) else flat[0]


def _same_structure(expected, got, what):
    if _is_nested(expected) or _is_nested(got):
        control_flow_ops._assert_same_structure(expected, got, what)


def _elems_flat(elems):
    flat = [ops.convert_to_tensor(e, name="elem") for e in _flatten(elems)]
    if not flat:
        raise ValueError("elems must not be empty")
    for e in flat:
        if e.shape.ndims is not None and e.shape.ndims < 1:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars "
                             "(%s has shape %s)" % (e.name, e.shape))
    return flat


def _leading_dim(elems_flat):
    """n: the static dim 0 where known (all elems must agree), else a tensor."""
    static = tensor_shape.Dimension(None)
    for e in elems_flat:
        d = tensor_shape.as_dimension(e.shape[0]) if e.shape.ndims else tensor_shape.Dimension(None)
        if not static.is_compatible_with(d):
            raise ValueError("Elements in elems must have the same dim 0: %s has %s, another %s"
                             % (e.name, d, static))
        static = static.merge_with(d)
    n = static.value if static.value is not None else array_ops.shape(elems_flat[0])[0]
    return n, static


def _unstacked(elems_flat, n):
    """One array per element tensor, holding its rows."""
    return [tensor_array_ops.TensorArray(dtype=e.dtype, size=n, dynamic_size=False,
                                         infer_shape=True).unstack(e)
            for e in elems_flat]


def _finish(results_flat, n_static, back_prop):
    out = []
    for r in results_flat:
        if r.shape.ndims is not None:
            r.set_shape(tensor_shape.TensorShape([n_static]).concatenate(r.shape[1:]))
        out.append(r if back_prop else array_ops.stop_gradient(r))
    return out


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """[fn(e) for e in unstack(elems)] stacked: fn gets one element (of
    elems' structure) and returns values of `dtype`'s structure and dtypes
    (elems' when dtype is None)."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    if parallel_iterations is None:
        parallel_iterations = 10
    with ops.name_scope(name, "map", _flatten(elems)):
        elems_flat = _elems_flat(elems)
        if dtype is None:
            out_structure = elems
            dtype_flat = [e.dtype.base_dtype for e in elems_flat]
        else:
            out_structure = dtype
            dtype_flat = [dtypes.as_dtype(d) for d in _flatten(dtype)]
        n, n_static = _leading_dim(elems_flat)
        elems_ta = _unstacked(elems_flat, n)
        accs_ta = [tensor_array_ops.TensorArray(dtype=dt, size=n, dynamic_size=False,
                                                infer_shape=infer_shape) for dt in dtype_flat]

        def compute(i, tas):
            packed = _pack(elems, [ta.read(i) for ta in elems_ta])
            result = fn(packed)
            _same_structure(out_structure, result, "map_fn: fn's result and dtype")
            values = _flatten(result)
            if len(values) != len(tas):
                raise ValueError("map_fn: fn returned %d values, dtype names %d" % (
                    len(values), len(tas)))
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, values)]

        _, r_a = control_flow_ops.while_loop(
            lambda i, _: i < n, compute, (0, accs_ta), parallel_iterations=parallel_iterations,
            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        results = _finish([r.stack() for r in r_a], n_static, back_prop)
        return _pack(out_structure, results)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """The running values a_i = fn(a_{i-1}, e_i), stacked; a_0 is
    `initializer`, or the first element (then the result's first row is
    that element). reverse=True runs from the last element to the first."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with ops.name_scope(name, "scan", _flatten(elems)):
        elems_flat = _elems_flat(elems)
        n, n_static = _leading_dim(elems_flat)
        elems_ta = _unstacked(elems_flat, n)
        if initializer is None:
            a_structure = elems
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            start = 1
        else:
            a_structure = initializer
            a_flat = [ops.convert_to_tensor(a) for a in _flatten(initializer)]
            start = 0
        accs_ta = [tensor_array_ops.TensorArray(
            dtype=a.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
            element_shape=a.shape if infer_shape else None) for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i, a_flat, tas):
            packed_elems = _pack(elems, [ta.read(i) for ta in elems_ta])
            a_out = fn(_pack(a_structure, a_flat), packed_elems)
            _same_structure(a_structure, a_out, "scan: fn's result and the accumulator")
            flat_out = [ops.convert_to_tensor(v) for v in _flatten(a_out)]
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_out)]
            return (i - 1 if reverse else i + 1), flat_out, tas

        if reverse:
            initial_i = n - 1 - start

            def condition(i, _1, _2):
                return i >= 0
        else:
            initial_i = start

            def condition(i, _1, _2):
                return i < n
        _, _, r_a = control_flow_ops.while_loop(
            condition, compute, (initial_i, a_flat, accs_ta),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n)
        results = _finish([r.stack() for r in r_a], n_static, back_prop)
        return _pack(a_structure, results)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, default,
          backwards):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with ops.name_scope(name, default, _flatten(elems)):
        elems_flat = _elems_flat(elems)
        n, _ = _leading_dim(elems_flat)
        elems_ta = _unstacked(elems_flat, n)
        if initializer is None:
            first = n - 1 if backwards else 0
            a = _pack(elems, [ta.read(first) for ta in elems_ta])
            i = n - 1 if backwards else 1
        else:
            a = initializer
            i = n if backwards else 0

        def compute(i, a):
            if backwards:
                i = i - 1
            a = fn(a, _pack(elems, [ta.read(i) for ta in elems_ta]))
            return [i if backwards else i + 1, a]

        if backwards:
            def condition(i, a):
                return i > 0
        else:
            def condition(i, a):
                return i < n
        _, r_a = control_flow_ops.while_loop(
            condition, compute, [i, a], parallel_iterations=parallel_iterations,
            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        if not back_prop:
            r_a = _pack(r_a, [array_ops.stop_gradient(t) for t in _flatten(r_a)]) \
                if _is_nested(r_a) else array_ops.stop_gradient(r_a)
        return r_a


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
          name=None):
    """fn(...fn(fn(initializer, e_0), e_1)..., e_{n-1}); without an
    initializer, e_0 starts and the fold runs over the rest."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 "foldl", backwards=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
          name=None):
    """foldl from the last element to the first."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 "foldr", backwards=True)
