"""weir.sparse: tf.sparse (SparseTensor ops under their TF2 names; the TF1
tf.sparse_* names are in weir itself, from weir.ops.sparse_ops)."""
from weir.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: F401
from weir.ops.sparse_ops import (  # noqa: F401
    sparse_add as add, sparse_concat as concat, sparse_expand_dims as expand_dims,
    sparse_fill_empty_rows as fill_empty_rows, sparse_placeholder as placeholder,
    sparse_reduce_sum as reduce_sum, sparse_reduce_sum_sparse as reduce_sum_sparse,
    sparse_reorder as reorder, sparse_reshape as reshape, sparse_retain as retain,
    sparse_segment_mean as segment_mean, sparse_segment_sqrt_n as segment_sqrt_n,
    sparse_segment_sum as segment_sum, sparse_slice as slice,  # noqa: A001
    sparse_softmax as softmax, sparse_dense_matmul, sparse_dense_matmul as matmul,
    sparse_transpose as transpose, sparse_tensor_to_dense as to_dense,
    sparse_to_indicator as to_indicator, sparse_merge as merge)
from weir.ops import sparse_ops as _sparse_ops
from weir.ops import array_ops as _array_ops
from weir.framework import ops as _ops
from weir.framework import dtypes as _dtypes

__all__ = ["SparseTensor", "SparseTensorValue", "add", "concat", "expand_dims",
           "fill_empty_rows", "placeholder", "reduce_sum", "reduce_sum_sparse", "reorder",
           "reshape", "retain", "segment_mean", "segment_sqrt_n", "segment_sum", "slice",
           "softmax", "sparse_dense_matmul", "matmul", "to_dense", "to_indicator", "merge", "transpose",
           "from_dense"]


def from_dense(tensor, name=None):
    """The SparseTensor of the entries of `tensor` that are not zero (or b"")."""
    with _ops.name_scope(name, "dense_to_sparse", [tensor]):
        tensor = _ops.convert_to_tensor(tensor, name="tensor")
        zero = _array_ops.zeros_like(tensor)
        indices = _array_ops.where(_ops.convert_to_tensor(
            _sparse_ops.math_ops.not_equal(tensor, zero)))
        values = _array_ops.gather_nd(tensor, indices)
        shape = _array_ops.shape(tensor, out_type=_dtypes.int64)
        return SparseTensor(indices, values, shape)
