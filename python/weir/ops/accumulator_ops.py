"""Conditional accumulators (tf.compat.v1.ConditionalAccumulator): the
aggregation point of synchronous replication, over weir's
ResourceConditionalAccumulator ops (src/weir/ops/accumulator_ops.cc).

An accumulator sums the gradients applied for its current global step;
one whose local_step is older is dropped (stale, not an error). take_grad
waits until num_required gradients are in, then gives their mean (or sum,
reduction_type="SUM"), empties the accumulator and advances its step by
one, as TensorFlow's. A waiting take_grad is cancelled by the step's timeout
(RunOptions.timeout_in_ms) or Session.close.
"""
from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator"]


def _int64(value, name):
    from weir.ops import math_ops
    tensor = ops.convert_to_tensor(value, name=name)
    if tensor.dtype.base_dtype != _dtypes.int64:
        tensor = math_ops.cast(tensor, _dtypes.int64)
    return tensor


class ConditionalAccumulatorBase(object):
    """The ops every accumulator kind has, on its handle (accumulator_ref)."""

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
        return apply_op("ResourceAccumulatorNumAccumulated", name, handle=self._accumulator_ref)

    def set_global_step(self, new_global_step, name=None):
        """Sets the accumulator's step: gradients of an older local_step are
        dropped from then on."""
        step = _int64(new_global_step, "new_global_step")
        return apply_op("ResourceAccumulatorSetGlobalStep", name or "AccumulatorSetGlobalStep",
                        handle=self._accumulator_ref, new_global_step=step)


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
