"""Sparse ops (TF1's tf.sparse_* names; wr.sparse has the tf.sparse ones).

Each takes SparseTensors (or SparseTensorValues) and returns SparseTensors or
dense Tensors as TF's do, on the C++ sparse kernels (src/weir/kernels/
sparse_*.cc), which check every index against its dense shape: a hostile
index, a negative or overflowing dense shape is an InvalidArgument naming
the op and the offending entry, never a crash.
"""
import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op
from weir.framework.sparse_tensor import (SparseTensor, SparseTensorValue, IndexedSlices,
                                          IndexedSlicesValue,
                                          convert_to_tensor_or_sparse_tensor)
from weir.ops import array_ops
from weir.ops import math_ops

__all__ = [
    "SparseTensor", "SparseTensorValue", "IndexedSlices", "IndexedSlicesValue",
    "sparse_placeholder", "sparse_to_dense", "sparse_tensor_to_dense", "sparse_tensor_dense_matmul",
    "sparse_transpose", "sparse_add", "sparse_reduce_sum",
    "sparse_reduce_sum_sparse",
    "sparse_softmax", "sparse_concat", "sparse_reorder", "sparse_reshape", "sparse_slice",
    "sparse_fill_empty_rows", "sparse_retain", "sparse_to_indicator", "sparse_expand_dims",
    "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_merge",
    "convert_to_tensor_or_sparse_tensor",
]


def _sparse(sp_input, what="sp_input"):
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("%s must be a SparseTensor, got %r" % (what, type(sp_input).__name__))
    return sp_input


def _int64(x, name):
    return ops.convert_to_tensor(x, dtype=dtypes.int64, name=name)


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor whose three parts are fed (TF1's tf.sparse_placeholder):
    feed it a SparseTensorValue or an (indices, values, dense_shape) tuple.
    With `shape`, the dense_shape defaults to it (None / -1 dims feed -1)."""
    dtype = dtypes.as_dtype(dtype)
    shape_name = (name + "/shape") if name is not None else None
    if shape is None:
        rank = None
        dense_shape = array_ops.placeholder(dtypes.int64, [None], name=shape_name)
    else:
        if isinstance(shape, ops.Tensor):
            rank = shape.get_shape()[0].value
            default = shape
        else:
            shape = tensor_shape.as_shape(shape)
            rank = shape.ndims
            default = ops.convert_to_tensor(
                np.array([-1 if d.value is None else d.value for d in shape.dims], np.int64),
                name=(name + "/shape_default") if name is not None else None)
        dense_shape = array_ops.placeholder_with_default(default, [rank], name=shape_name)
    values = array_ops.placeholder(dtype, [None],
                                   name=(name + "/values") if name is not None else None)
    indices = array_ops.placeholder(dtypes.int64, [None, rank],
                                    name=(name + "/indices") if name is not None else None)
    result = SparseTensor(indices, values, dense_shape)
    if shape is not None and not isinstance(shape, ops.Tensor):
        result._static_shape = shape
    return result


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """A dense tensor of output_shape: sparse_values at sparse_indices
    (sorted, unique when validate_indices), default_value elsewhere."""
    with ops.name_scope(name, "SparseToDense", [sparse_indices, output_shape, sparse_values]) as n:
        sparse_values = ops.convert_to_tensor(sparse_values, name="sparse_values")
        sparse_indices = ops.convert_to_tensor(sparse_indices, name="sparse_indices")
        if sparse_indices.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("sparse_indices must be int32 or int64, got %s"
                            % sparse_indices.dtype.name)
        output_shape = ops.convert_to_tensor(output_shape, dtype=sparse_indices.dtype,
                                             name="output_shape")
        default_value = ops.convert_to_tensor(default_value, dtype=sparse_values.dtype,
                                              name="default_value")
        return apply_op("SparseToDense", n, sparse_indices=sparse_indices,
                        output_shape=output_shape, sparse_values=sparse_values,
                        default_value=default_value, validate_indices=validate_indices)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense form of a SparseTensor (entries not given are default_value, 0 by default)."""
    sp_input = _sparse(sp_input)
    if default_value is None:
        default_value = np.zeros([], sp_input.dtype.as_numpy_dtype) \
            if sp_input.dtype != dtypes.string else b""
    with ops.name_scope(name, "SparseToDense", [sp_input.indices, sp_input.values]) as n:
        default_value = ops.convert_to_tensor(default_value, dtype=sp_input.dtype,
                                              name="default_value")
        out = apply_op("SparseToDense", n, sparse_indices=sp_input.indices,
                       output_shape=sp_input.dense_shape, sparse_values=sp_input.values,
                       default_value=default_value, validate_indices=validate_indices)
    static = sp_input.shape
    if static.ndims is not None:
        out.set_shape(static)
    return out


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The dense product op(sp_a) op(b) of a rank-2 SparseTensor and a matrix."""
    sp_a = _sparse(sp_a, "sp_a")
    with ops.name_scope(name, "SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, b]) as n:
        b = ops.convert_to_tensor(b, name="b", dtype=sp_a.dtype)
        return apply_op("SparseTensorDenseMatMul", n, a_indices=sp_a.indices,
                        a_values=sp_a.values, a_shape=sp_a.dense_shape, b=b,
                        adjoint_a=adjoint_a, adjoint_b=adjoint_b)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """tf.sparse.sparse_dense_matmul: either operand may be the SparseTensor
    (dense x sparse is computed as (op(b)^T op(a)^T)^T; real dtypes)."""
    if isinstance(sp_a, (SparseTensor, SparseTensorValue)):
        return sparse_tensor_dense_matmul(sp_a, b, adjoint_a, adjoint_b, name)
    b = _sparse(b, "b")
    with ops.name_scope(name, "SparseTensorDenseMatMul", [sp_a, b.indices]) as n:
        a = ops.convert_to_tensor(sp_a, dtype=b.dtype, name="a")
        product = sparse_tensor_dense_matmul(b, a, adjoint_a=not adjoint_b,
                                             adjoint_b=not adjoint_a)
        return array_ops.transpose(product, name=n)


def sparse_transpose(sp_input, perm=None, name=None):
    """The SparseTensor with its dims permuted (reversed by default), reordered."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseTranspose", [sp_input.indices]) as n:
        if perm is None:
            rank = apply_op("Size", None, input=sp_input.dense_shape, out_type=dtypes.int32)
            perm = apply_op("Range", None, start=rank - 1, limit=np.int32(-1),
                            delta=np.int32(-1))
        perm = ops.convert_to_tensor(perm, dtype=dtypes.int32, name="perm")
        indices = apply_op("GatherV2", None, params=sp_input.indices, indices=perm,
                           axis=np.int32(1))
        shape = apply_op("GatherV2", None, params=sp_input.dense_shape, indices=perm,
                         axis=np.int32(0))
        return sparse_reorder(SparseTensor(indices, sp_input.values, shape), name=n)




def sparse_add(a, b, threshold=None, thresh=None):
    """a + b: a SparseTensor when both are sparse (sums below `threshold` in
    magnitude dropped), a dense Tensor when one of them is dense."""
    if threshold is None:
        threshold = 0 if thresh is None else thresh
    a_sparse = isinstance(a, (SparseTensor, SparseTensorValue))
    b_sparse = isinstance(b, (SparseTensor, SparseTensorValue))
    if not a_sparse and not b_sparse:
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if a_sparse and b_sparse:
        a, b = _sparse(a), _sparse(b)
        with ops.name_scope(None, "SparseAdd", [a.indices, b.indices]) as n:
            real = a.dtype.real_dtype if hasattr(a.dtype, "real_dtype") else a.dtype
            thresh_t = ops.convert_to_tensor(threshold, dtype=real, name="threshold")
            out = apply_op("SparseAdd", n, a_indices=a.indices, a_values=a.values,
                           a_shape=a.dense_shape, b_indices=b.indices, b_values=b.values,
                           b_shape=b.dense_shape, thresh=thresh_t)
            return SparseTensor(out.sum_indices, out.sum_values, out.sum_shape)
    if b_sparse:
        a, b = b, a
    a = _sparse(a)
    b = ops.convert_to_tensor(b, dtype=a.dtype, name="b")
    return apply_op("SparseTensorDenseAdd", None, a_indices=a.indices, a_values=a.values,
                    a_shape=a.dense_shape, b=b)


def _axes(axis, reduction_axes):
    if axis is None:
        axis = reduction_axes
    if axis is None:
        return np.zeros([0], np.int32)
    return ops.convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_axes")


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None,
                      name=None):
    """The dense sum of a SparseTensor over `axis` (all when None)."""
    sp_input = _sparse(sp_input)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops.name_scope(name, "SparseReduceSum", [sp_input.indices, sp_input.values]) as n:
        return apply_op("SparseReduceSum", n, input_indices=sp_input.indices,
                        input_values=sp_input.values, input_shape=sp_input.dense_shape,
                        reduction_axes=_axes(axis, reduction_axes), keep_dims=keep)


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None, name=None):
    """As sparse_reduce_sum, the result a SparseTensor."""
    sp_input = _sparse(sp_input)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops.name_scope(name, "SparseReduceSumSparse", [sp_input.indices]) as n:
        out = apply_op("SparseReduceSumSparse", n, input_indices=sp_input.indices,
                       input_values=sp_input.values, input_shape=sp_input.dense_shape,
                       reduction_axes=_axes(axis, reduction_axes), keep_dims=keep)
        return SparseTensor(out.output_indices, out.output_values, out.output_shape)


def sparse_softmax(sp_input, name=None):
    """Softmax over each innermost row's entries of a canonically ordered SparseTensor."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseSoftmax", [sp_input.indices, sp_input.values]) as n:
        values = apply_op("SparseSoftmax", n, sp_indices=sp_input.indices,
                          sp_values=sp_input.values, sp_shape=sp_input.dense_shape)
        return SparseTensor(sp_input.indices, values, sp_input.dense_shape)


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """SparseTensors joined along `axis`, in canonical order."""
    if concat_dim is not None:
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    if expand_nonconcat_dim:
        raise NotImplementedError("sparse_concat: expand_nonconcat_dim is not supported by weir")
    sp_inputs = [_sparse(s, "sp_inputs") for s in sp_inputs]
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    with ops.name_scope(name, "SparseConcat", [s.indices for s in sp_inputs]) as n:
        out = apply_op("SparseConcat", n, indices=[s.indices for s in sp_inputs],
                       values=[s.values for s in sp_inputs],
                       shapes=[s.dense_shape for s in sp_inputs], concat_dim=int(axis))
        return SparseTensor(out.output_indices, out.output_values, out.output_shape)


def sparse_reorder(sp_input, name=None):
    """The SparseTensor with its entries in row-major order."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseReorder", [sp_input.indices, sp_input.values]) as n:
        out = apply_op("SparseReorder", n, input_indices=sp_input.indices,
                       input_values=sp_input.values, input_shape=sp_input.dense_shape)
        return SparseTensor(out.output_indices, out.output_values, sp_input.dense_shape)


def sparse_reshape(sp_input, shape, name=None):
    """The SparseTensor for a new dense shape of as many elements (one dim may be -1)."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseReshape", [sp_input.indices]) as n:
        out = apply_op("SparseReshape", n, input_indices=sp_input.indices,
                       input_shape=sp_input.dense_shape, new_shape=_int64(shape, "shape"))
        return SparseTensor(out.output_indices, array_ops.identity(sp_input.values),
                            out.output_shape)


def sparse_slice(sp_input, start, size, name=None):
    """The entries inside [start, start + size), indices relative to start."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseSlice", [sp_input.indices]) as n:
        out = apply_op("SparseSlice", n, indices=sp_input.indices, values=sp_input.values,
                       shape=sp_input.dense_shape, start=_int64(start, "start"),
                       size=_int64(size, "size"))
        return SparseTensor(out.output_indices, out.output_values, out.output_shape)


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """(SparseTensor with (row, 0, ...) = default_value added for each empty
    row, the bool vector of which rows were empty)."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseFillEmptyRows", [sp_input.indices]) as n:
        default_value = ops.convert_to_tensor(default_value, dtype=sp_input.dtype,
                                              name="default_value")
        out = apply_op("SparseFillEmptyRows", n, indices=sp_input.indices,
                       values=sp_input.values, dense_shape=sp_input.dense_shape,
                       default_value=default_value)
        return (SparseTensor(out.output_indices, out.output_values, sp_input.dense_shape),
                out.empty_row_indicator)


def sparse_retain(sp_input, to_retain):
    """The entries of sp_input where the bool vector to_retain is True."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(None, "SparseRetain", [sp_input.indices, to_retain]):
        to_retain = ops.convert_to_tensor(to_retain, dtype=dtypes.bool, name="to_retain")
        if to_retain.get_shape().ndims not in (None, 1):
            raise ValueError("to_retain must be a vector, got shape %s" % to_retain.get_shape())
        where = array_ops.reshape(array_ops.where(to_retain), [-1])
        return SparseTensor(array_ops.gather(sp_input.indices, where),
                            array_ops.gather(sp_input.values, where), sp_input.dense_shape)


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """The SparseTensor with the ids as its new last dim (TF1's sparse_merge)."""
    sp_ids, sp_values = _sparse(sp_ids), _sparse(sp_values)
    with ops.name_scope(name, "SparseMerge", [sp_ids.indices, sp_values.values]):
        ids = math_ops.cast(sp_ids.values, dtypes.int64)
        rank = array_ops.size(sp_ids.dense_shape)
        outer = array_ops.slice(sp_ids.indices, [0, 0],
                                array_ops.stack([-1, rank - 1]))
        indices = array_ops.concat([outer, array_ops.expand_dims(ids, 1)], 1)
        outer_shape = array_ops.slice(sp_ids.dense_shape, [0], array_ops.reshape(rank - 1, [1]))
        shape = array_ops.concat([outer_shape, _int64(np.reshape(vocab_size, [1]), "vocab")], 0)
        result = SparseTensor(indices, sp_values.values, shape)
        return result if already_sorted else sparse_reorder(result)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor [..., vocab_size]: True at each id of each row."""
    sp_input = _sparse(sp_input)
    with ops.name_scope(name, "SparseToIndicator", [sp_input.indices]) as n:
        true = array_ops.fill(array_ops.reshape(array_ops.shape(sp_input.values)[0], [1]), True)
        merged = sparse_merge(sp_input, SparseTensor(sp_input.indices, true,
                                                     sp_input.dense_shape), vocab_size)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False,
                                      name=n)


def sparse_expand_dims(sp_input, axis=None, name=None):
    """The SparseTensor with a new dim of size 1 at `axis` (negative from the end)."""
    sp_input = _sparse(sp_input)
    axis = -1 if axis is None else int(axis)
    with ops.name_scope(name, "ExpandDims", [sp_input.indices]):
        def i64(v):
            return ops.convert_to_tensor(np.asarray(v, np.int64))

        def slice_(x, begin, size):
            return apply_op("Slice", None, input=x, begin=begin, size=size)
        rank = apply_op("Size", None, input=sp_input.dense_shape, out_type=dtypes.int64)
        where = i64(axis) if axis >= 0 else apply_op("AddV2", None, x=rank, y=i64(axis + 1))
        where1 = apply_op("Reshape", None, tensor=where, shape=i64([1]))
        n = apply_op("Shape", None, input=sp_input.values, out_type=dtypes.int64)
        zeros = apply_op("Fill", None, dims=apply_op("ConcatV2", None, values=[n, i64([1])],
                                                     axis=0), value=i64(0))
        left = slice_(sp_input.indices, i64([0, 0]),
                      apply_op("ConcatV2", None, values=[i64([-1]), where1], axis=0))
        right = slice_(sp_input.indices,
                       apply_op("ConcatV2", None, values=[i64([0]), where1], axis=0),
                       i64([-1, -1]))
        indices = apply_op("ConcatV2", None, values=[left, zeros, right], axis=1)
        shape = apply_op("ConcatV2", None, values=[
            slice_(sp_input.dense_shape, i64([0]), where1), i64([1]),
            slice_(sp_input.dense_shape, where1, i64([-1]))], axis=0)
        return SparseTensor(indices, sp_input.values, shape)


def _segment(op, data, indices, segment_ids, num_segments, name, sparse_gradient=False):
    with ops.name_scope(name, op, [data, indices, segment_ids]) as n:
        args = dict(data=data, indices=indices, segment_ids=segment_ids,
                    sparse_gradient=bool(sparse_gradient))
        if num_segments is not None:
            return apply_op(op + "WithNumSegments", n, num_segments=num_segments, **args)
        return apply_op(op, n, **args)


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None,
                       sparse_gradient=False):
    """output[s] = sum of data[indices[i]] over the i with (sorted) segment_ids[i] == s."""
    return _segment("SparseSegmentSum", data, indices, segment_ids, num_segments, name,
                    sparse_gradient)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None,
                        sparse_gradient=False):
    """As sparse_segment_sum, divided by each segment's row count."""
    return _segment("SparseSegmentMean", data, indices, segment_ids, num_segments, name,
                    sparse_gradient)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None,
                          sparse_gradient=False):
    """As sparse_segment_sum, divided by the square root of each segment's row count."""
    return _segment("SparseSegmentSqrtN", data, indices, segment_ids, num_segments, name,
                    sparse_gradient)


def _cwise(op, sp, dense):
    sp = _sparse(sp)
    dense = ops.convert_to_tensor(dense, dtype=sp.dtype, name="dense")
    values = apply_op(op, None, sp_indices=sp.indices, sp_values=sp.values,
                      sp_shape=sp.dense_shape, dense=dense)
    return SparseTensor(sp.indices, values, sp.dense_shape)
