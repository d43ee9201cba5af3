"""Clipping: TF1's clip_by_value, clip_by_norm, global_norm and
clip_by_global_norm. As in TF, an IndexedSlices (a gather's gradient) is
clipped through its values and stays an IndexedSlices, and the global norm
counts its values as they are (rows of repeated indices separately, not
summed first); None entries of a list pass through as None."""
from weir.framework import ops
from weir.framework.constant_op import constant
from weir.framework.sparse_tensor import IndexedSlices
from weir.ops import array_ops
from weir.ops import math_ops

__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm",
           "clip_by_average_norm"]


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """t with values below clip_value_min raised to it and above clip_value_max
    lowered to it (bounds broadcast against t)."""
    with ops.name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        if isinstance(t, IndexedSlices):
            values = clip_by_value(t.values, clip_value_min, clip_value_max, "values")
            return IndexedSlices(array_ops.identity(values, name=scope), t.indices,
                                 t.dense_shape)
        t = ops.convert_to_tensor(t, name="t")
        t_min = math_ops.minimum(t, clip_value_max)
        if t_min.shape.is_fully_defined() and t.shape.is_fully_defined() and t_min.shape != t.shape:
            raise ValueError("clip_by_value: bounds must not broadcast t's shape %s to %s" % (
                t.shape, t_min.shape))
        return math_ops.maximum(t_min, clip_value_min, name=scope)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t, axes), clip_norm): t unchanged when its L2
    norm (over axes, default all) is at most clip_norm, else scaled to it."""
    with ops.name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        if isinstance(t, IndexedSlices):
            values = clip_by_norm(t.values, clip_norm, axes, "values")
            return IndexedSlices(array_ops.identity(values, name=scope), t.indices,
                                 t.dense_shape)
        t = ops.convert_to_tensor(t, name="t")
        clip_norm = ops.convert_to_tensor(clip_norm, dtype=t.dtype.base_dtype, name="clip_norm")
        l2sum = math_ops.reduce_sum(math_ops.square(t), axes, keepdims=True)
        positive = math_ops.greater(l2sum, array_ops.zeros_like(l2sum))
        # sqrt's gradient at 0 is inf; take it at 1 where the sum is 0.
        safe = array_ops.where_v2(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where_v2(positive, math_ops.sqrt(safe), l2sum)
        scaled = math_ops.multiply(t, clip_norm)
        return array_ops.identity(math_ops.truediv(scaled, math_ops.maximum(l2norm, clip_norm)),
                                  name=scope)


def clip_by_average_norm(t, clip_norm, name=None):
    """clip_by_norm with the norm divided by the number of elements."""
    with ops.name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = ops.convert_to_tensor(t, name="t")
        n = math_ops.cast(array_ops.size(t), t.dtype)
        l2norm_inv = math_ops.rsqrt(math_ops.reduce_sum(math_ops.square(t)))
        factor = math_ops.minimum(math_ops.multiply(math_ops.multiply(clip_norm, l2norm_inv), n),
                                  constant(1.0, dtype=t.dtype.as_numpy_dtype))
        return math_ops.multiply(t, factor, name=scope)


def global_norm(t_list, name=None):
    """sqrt(sum of squares of every element of every tensor in t_list); None entries are skipped."""
    if isinstance(t_list, ops.Tensor) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    with ops.name_scope(name, "global_norm", t_list) as scope:
        sums = []
        for i, t in enumerate(t_list):
            if t is None:
                continue
            if isinstance(t, IndexedSlices):
                t = t.values
            t = ops.convert_to_tensor(t, name="t_%d" % i)
            sums.append(math_ops.reduce_sum(math_ops.square(t)))
        if not sums:
            return constant(0.0, name=scope)
        dtype = sums[0].dtype
        sums = [math_ops.cast(s, dtype) for s in sums]
        return math_ops.sqrt(math_ops.add_n(sums), name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(list_clipped, global_norm): each t * clip_norm / max(global_norm,
    clip_norm). An infinite or NaN global norm makes every entry NaN, as in TF."""
    if isinstance(t_list, ops.Tensor) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    with ops.name_scope(name, "clip_by_global_norm", t_list + [clip_norm]) as scope:
        norm = global_norm(t_list, "global_norm") if use_norm is None else ops.convert_to_tensor(
            use_norm, name="use_norm")
        clip_norm = ops.convert_to_tensor(clip_norm, dtype=norm.dtype.base_dtype, name="clip_norm")
        one = constant(1.0, dtype=norm.dtype.as_numpy_dtype)
        # clip_norm * min(1 / norm, 1 / clip_norm): 1 / 0 = inf keeps a zero norm unscaled.
        scale = math_ops.multiply(clip_norm, math_ops.minimum(
            math_ops.truediv(one, norm), math_ops.truediv(one, clip_norm)))
        out = []
        for i, t in enumerate(t_list):
            if t is None:
                out.append(None)
                continue
            sparse = t if isinstance(t, IndexedSlices) else None
            t = ops.convert_to_tensor(t.values if sparse is not None else t, name="t_%d" % i)
            s = scale if t.dtype.base_dtype == scale.dtype.base_dtype else math_ops.cast(scale, t.dtype)
            clipped = array_ops.identity(math_ops.multiply(t, s), name="_%d" % i)
            if sparse is not None:
                clipped = IndexedSlices(clipped, sparse.indices, sparse.dense_shape)
            out.append(clipped)
        return out, norm
