"""SparseTensor and IndexedSlices: TF's two composite tensors.

SparseTensor (tf.SparseTensor) is a sparse n-d array: int64 `indices` [N,
rank], `values` [N] and an int64 `dense_shape` [rank]. IndexedSlices
(tf.IndexedSlices) is the gradient of a gather: rows `indices` [n] of a
tensor shaped `dense_shape` hold `values` [n, ...], repeated indices add.

Both are fetched as their *Value namedtuples (Session.run calls the
`_as_fetches()` / `_fetch_result(values)` hooks); a SparseTensor whose parts
are placeholders (wr.compat.v1.sparse_placeholder) is fed a SparseTensorValue
or an (indices, values, dense_shape) tuple. convert_to_tensor densifies an
IndexedSlices with UnsortedSegmentSum, as TF does (refused, as in TF, only
when its dense_shape is unknown); a SparseTensor is not converted (TF raises
too): use wr.sparse.to_dense.
"""
import collections

import numpy as np

from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op

__all__ = ["SparseTensor", "SparseTensorValue", "IndexedSlices", "IndexedSlicesValue",
           "is_sparse", "convert_to_tensor_or_sparse_tensor", "convert_to_tensor_or_indexed_slices"]


class SparseTensorValue(collections.namedtuple("SparseTensorValue",
                                               ["indices", "values", "dense_shape"])):
    """A fetched SparseTensor: numpy indices [N, rank], values [N], dense_shape [rank]."""


class IndexedSlicesValue(collections.namedtuple("IndexedSlicesValue",
                                                ["values", "indices", "dense_shape"])):
    """A fetched IndexedSlices: numpy values [n, ...], indices [n], dense_shape."""


def _static_shape_of(shape_tensor):
    """The static shape a shape vector describes: dims where it is a Const."""
    from weir.framework import tensor_util
    value = tensor_util.constant_value(shape_tensor)
    if value is not None:
        return tensor_shape.TensorShape([None if d < 0 else int(d)
                                         for d in np.asarray(value).reshape(-1)])
    rank = shape_tensor.get_shape()
    if rank.ndims == 1 and rank[0].value is not None:
        return tensor_shape.TensorShape([None] * rank[0].value)
    return tensor_shape.unknown_shape()


class SparseTensor(object):
    """A sparse tensor in the graph: int64 indices [N, rank], values [N] and
    an int64 dense_shape [rank] (TF's tf.SparseTensor)."""

    def __init__(self, indices, values, dense_shape):
        with ops.name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            self._indices = ops.convert_to_tensor(indices, dtype=_dtypes.int64, name="indices")
            self._values = ops.convert_to_tensor(values, name="values")
            self._dense_shape = ops.convert_to_tensor(dense_shape, dtype=_dtypes.int64,
                                                      name="dense_shape")
        indices_shape = self._indices.get_shape()
        values_shape = self._values.get_shape()
        shape_shape = self._dense_shape.get_shape()
        if indices_shape.ndims not in (None, 2):
            raise ValueError("SparseTensor indices must be a matrix, got shape %s" % indices_shape)
        if values_shape.ndims not in (None, 1):
            raise ValueError("SparseTensor values must be a vector, got shape %s" % values_shape)
        if shape_shape.ndims not in (None, 1):
            raise ValueError("SparseTensor dense_shape must be a vector, got shape %s"
                             % shape_shape)
        if indices_shape.ndims == 2 and values_shape.ndims == 1:
            n, m = indices_shape[0].value, values_shape[0].value
            if n is not None and m is not None and n != m:
                raise ValueError("SparseTensor: %d index rows but %d values" % (n, m))
        if indices_shape.ndims == 2 and shape_shape.ndims == 1:
            r, s = indices_shape[1].value, shape_shape[0].value
            if r is not None and s is not None and r != s:
                raise ValueError("SparseTensor: indices of rank %d but dense_shape of %d dims"
                                 % (r, s))

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self):
        """The static dense shape: known dims where dense_shape is a Const
        (or a sparse_placeholder's given shape)."""
        known = getattr(self, "_static_shape", None)
        if known is not None:
            return known
        return _static_shape_of(self._dense_shape)

    def get_shape(self):
        return self.shape

    def with_values(self, new_values):
        return SparseTensor(self._indices, new_values, self._dense_shape)

    # Session.run's hooks: the tensors to fetch (or feed), and the result.
    def _as_fetches(self):
        return [self._indices, self._values, self._dense_shape]

    @staticmethod
    def _fetch_result(values):
        return SparseTensorValue(*values)

    def eval(self, feed_dict=None, session=None):
        from weir.client import session as session_lib
        session = session or session_lib.get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate a SparseTensor without a default session")
        return SparseTensorValue(*session.run(self._as_fetches(), feed_dict))

    def __repr__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (
            self._indices, self._values, self._dense_shape)

    def __mul__(self, other):
        from weir.ops import sparse_ops
        return sparse_ops._cwise("SparseDenseCwiseMul", self, other)

    def __truediv__(self, other):
        from weir.ops import sparse_ops
        return sparse_ops._cwise("SparseDenseCwiseDiv", self, other)

    __div__ = __truediv__


class IndexedSlices(object):
    """Rows `indices` of a tensor of shape `dense_shape` holding `values`
    (TF's tf.IndexedSlices: a gather's gradient; repeated indices add)."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)
    name = property(lambda self: self._values.name)
    device = property(lambda self: self._values.device)

    @property
    def shape(self):
        if self._dense_shape is None:
            return self._values.get_shape()
        return _static_shape_of(self._dense_shape)

    def get_shape(self):
        return self.shape

    def _as_fetches(self):
        parts = [self._values, self._indices]
        if self._dense_shape is not None:
            parts.append(self._dense_shape)
        return parts

    @staticmethod
    def _fetch_result(values):
        return IndexedSlicesValue(values[0], values[1], values[2] if len(values) > 2 else None)

    def __neg__(self):
        return IndexedSlices(apply_op("Neg", None, x=self._values), self._indices,
                             self._dense_shape)

    def __repr__(self):
        return "IndexedSlices(indices=%s, values=%s%s)" % (
            self._indices, self._values,
            "" if self._dense_shape is None else ", dense_shape=%s" % self._dense_shape)


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    """TF's densifying conversion: UnsortedSegmentSum of the rows (repeats add)."""
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError("Tensor conversion requested dtype %s for IndexedSlices with dtype %s"
                         % (dtype.name, value.dtype.name))
    if value.dense_shape is None:
        raise ValueError("Tensor conversion requested for IndexedSlices without dense_shape: %s"
                         % value)
    with ops.name_scope(name, "IndexedSlicesToTensor", [value.values, value.indices]):
        rows = apply_op("StridedSlice", None, input=value.dense_shape,
                        begin=np.array([0], np.int32), end=np.array([1], np.int32),
                        strides=np.array([1], np.int32), shrink_axis_mask=1)
        return apply_op("UnsortedSegmentSum", None, data=value.values, segment_ids=value.indices,
                        num_segments=rows)


ops.register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def is_sparse(x):
    return isinstance(x, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise RuntimeError("Sparse dtype: requested = %s, actual = %s"
                               % (_dtypes.as_dtype(dtype).name, value.dtype.name))
        return value
    return ops.convert_to_tensor(value, dtype=dtype, name=name)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    if isinstance(value, IndexedSlices):
        return value
    return ops.convert_to_tensor(value, dtype=dtype, name=name)
