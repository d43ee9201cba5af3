"""Conditional accumulators (tf.compat.v1.ConditionalAccumulator and
SparseConditionalAccumulator): the aggregation point of synchronous
replication, over weir's ResourceConditionalAccumulator and
SparseConditionalAccumulator ops (src/weir/ops/accumulator_ops.cc).

An accumulator sums the gradients applied for its current global step;
one whose local_step is older is dropped (stale, not an error). take_grad
waits until num_required gradients are in, then gives their mean (or sum,
reduction_type="SUM"), empties the accumulator and advances its step by
one, as TensorFlow's. A waiting take_grad is cancelled by the step's timeout
(RunOptions.timeout_in_ms) or Session.close.

The sparse accumulator takes IndexedSlices (indices, values with one row per
index, optional dense shape) and gives back (indices, values, shape) with
the indices in increasing order; MEAN divides each row by the number of
gradients that touched it (TensorFlow's rule). Its handle is a [2] string
(TensorFlow's ref handle), so the ops on it are colocated with it.
"""
import collections

from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator",
           "SparseConditionalAccumulator"]

# What SparseConditionalAccumulator.take_grad gives (TF's namedtuple).
SparseAccumulatorTakeGradient = collections.namedtuple("SparseAccumulatorTakeGradient",
                                                       ["indices", "values", "shape"])


def _int64(value, name):
    from weir.ops import math_ops
    tensor = ops.convert_to_tensor(value, name=name)
    if tensor.dtype.base_dtype != _dtypes.int64:
        tensor = math_ops.cast(tensor, _dtypes.int64)
    return tensor


class ConditionalAccumulatorBase(object):
    """The ops every accumulator kind has, on its handle (accumulator_ref)."""

    # The ops on the handle: the Resource* forms, or the string-handle forms.
    _OP_PREFIX = "Resource"

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = tensor_shape.as_shape(shape) if shape is not None else (
            tensor_shape.unknown_shape())
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name

    @property
    def accumulator_ref(self):
        """The accumulator's resource handle."""
        return self._accumulator_ref

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """The number of gradients accumulated for the current step (int32)."""
        if name is None:
            name = "%s_NumAccumulated" % self._name
        with self._colocated():
            return apply_op(self._OP_PREFIX + "AccumulatorNumAccumulated", name,
                            handle=self._accumulator_ref)

    def set_global_step(self, new_global_step, name=None):
        """Sets the accumulator's step: gradients of an older local_step are
        dropped from then on."""
        step = _int64(new_global_step, "new_global_step")
        with self._colocated():
            return apply_op(self._OP_PREFIX + "AccumulatorSetGlobalStep",
                            name or "AccumulatorSetGlobalStep", handle=self._accumulator_ref,
                            new_global_step=step)

    def _colocated(self):
        """Resource handles are colocated by the placer; a string handle's
        users are colocated here."""
        if self._OP_PREFIX:
            return _no_scope()
        return ops.colocate_with(self._accumulator_ref.op)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of one dtype and shape."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        dtype = _dtypes.as_dtype(dtype)
        shape = tensor_shape.as_shape(shape) if shape is not None else (
            tensor_shape.unknown_shape())
        if reduction_type not in ("MEAN", "SUM"):
            raise ValueError("reduction_type must be 'MEAN' or 'SUM', got %r" % (reduction_type,))
        handle = apply_op("ResourceConditionalAccumulator", name, dtype=dtype,
                          shape=shape,
                          shared_name=shared_name if shared_name is not None else "",
                          reduction_type=reduction_type)
        super().__init__(dtype, shape, handle)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds grad for local_step (dropped when local_step is older than
        the accumulator's step). ValueError if grad's static shape cannot be
        the accumulator's."""
        grad = ops.convert_to_tensor(grad, self._dtype)
        grad.get_shape().assert_is_compatible_with(self._shape)
        local_step = _int64(local_step, "local_step")
        return apply_op("ResourceAccumulatorApplyGradient", name or "AccumulatorApplyGradient",
                        handle=self._accumulator_ref, local_step=local_step, gradient=grad)

    def take_grad(self, num_required, name=None):
        """Waits until num_required gradients are in, then gives their mean
        (or sum); the accumulator is emptied and its step advanced by one."""
        out = apply_op("ResourceAccumulatorTakeGradient", name or "AccumulatorTakeGradient",
                       handle=self._accumulator_ref, num_required=num_required,
                       dtype=self._dtype)
        out.set_shape(out.get_shape().merge_with(self._shape))
        return out


class _NoScope(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _no_scope():
    return _NoScope()


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates IndexedSlices gradients (of embeddings, gathers) of one
    dtype and dense shape."""

    _OP_PREFIX = ""

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        dtype = _dtypes.as_dtype(dtype)
        shape = tensor_shape.as_shape(shape) if shape is not None else (
            tensor_shape.unknown_shape())
        if reduction_type not in ("MEAN", "SUM"):
            raise ValueError("reduction_type must be 'MEAN' or 'SUM', got %r" % (reduction_type,))
        handle = apply_op("SparseConditionalAccumulator", name, dtype=dtype, shape=shape,
                          shared_name=shared_name if shared_name is not None else "",
                          reduction_type=reduction_type)
        super().__init__(dtype, shape, handle)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """apply_grad of an IndexedSlices-like grad (.indices, .values,
        .dense_shape, which may be None)."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds the rows grad_values (one per index of grad_indices) for
        local_step, or drops them when local_step is stale. grad_shape, when
        given, is the gradient's dense shape: indices must be below its dim 0."""
        from weir.ops import math_ops
        local_step = _int64(local_step, "local_step")
        indices = ops.convert_to_tensor(grad_indices)
        if indices.dtype.base_dtype != _dtypes.int64:
            indices = math_ops.cast(indices, _dtypes.int64)
        values = ops.convert_to_tensor(grad_values, self._dtype)
        shape = _int64(grad_shape if grad_shape is not None else [], "gradient_shape")
        with self._colocated():
            return apply_op("SparseAccumulatorApplyGradient",
                            name or "SparseAccumulatorApplyGradient",
                            handle=self._accumulator_ref, local_step=local_step,
                            gradient_indices=indices, gradient_values=values,
                            gradient_shape=shape, has_known_shape=grad_shape is not None)

    def take_grad(self, num_required, name=None):
        """Waits for num_required gradients; gives (indices, values, shape)."""
        with self._colocated():
            op = apply_op("SparseAccumulatorTakeGradient", name or "SparseAccumulatorTakeGradient",
                          handle=self._accumulator_ref, num_required=num_required,
                          dtype=self._dtype)
        outputs = list(op.outputs) if isinstance(op, ops.Operation) else list(op[0].op.outputs)
        if self._shape.ndims is not None:
            outputs[1].set_shape(tensor_shape.TensorShape([None]).concatenate(self._shape[1:]))
        return SparseAccumulatorTakeGradient(*outputs)

    def take_indexed_slices_grad(self, num_required, name=None):
        """take_grad as an IndexedSlices (values, indices, dense_shape)."""
        from weir.framework.sparse_tensor import IndexedSlices
        taken = self.take_grad(num_required, name)
        return IndexedSlices(values=taken.values, indices=taken.indices, dense_shape=taken.shape)
