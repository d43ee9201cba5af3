"""wr.TensorArray: TF1's graph-mode TensorArray over the TensorArrayV3 ops.

A TensorArray is a step-local list of tensors behind a resource handle. The
Python object holds the handle and a scalar float `flow` tensor: every write
(write, scatter, unstack, split) returns a new TensorArray whose flow is the
op's flow_out, and every read (read, gather, stack, concat, size) takes the
flow as input, so the graph orders the ops on one array by data dependencies.
Inside `wr.while_loop` a TensorArray may be a loop variable (its flow is).

Static shapes: with infer_shape (the default) every element must have the
same static shape, merged over the writes (a mismatch is a ValueError at
graph build); arrays made from one another (writes, identity, loop
variables, grad) share that record. Gradients: wr.gradients through reads,
writes, gather/scatter and concat/split goes through the C++ gradient
functions (a gradient array per forward array, TensorArrayGradV3).

Differences from TF: colocate_with_first_write_call is accepted and ignored
(ops on an array are colocated with its handle by the placer).
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework import tensor_util
from weir.framework.op_def_library import apply_op

__all__ = ["TensorArray"]


class TensorArray:
    """A list of `dtype` tensors written and read by index inside one step."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot construct with both handle and tensor_array_name")
        if handle is not None and not isinstance(handle, ops.Tensor):
            raise TypeError("Handle must be a Tensor")
        if handle is None and size is None:
            raise ValueError("Size must be provided if handle is not provided")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a handle and size at the same time")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both a handle and element_shape at the same time")
        if handle is not None and dynamic_size is not None:
            raise ValueError("Cannot provide both a handle and dynamic_size at the same time")
        if handle is not None and clear_after_read is not None:
            raise ValueError("Cannot provide both a handle and clear_after_read at the same time")
        if handle is not None and flow is None:
            raise ValueError("flow must be provided with handle")
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        # A list shared with the arrays made from this one (a mutable record).
        if element_shape is None:
            self._infer_shape = bool(infer_shape)
            self._element_shape = []
        else:
            self._infer_shape = True
            self._element_shape = [tensor_shape.as_shape(element_shape)]
        self._size = None  # the size tensor, where this object made the array
        if handle is not None:
            self._handle = handle
            self._flow = flow
            return
        clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        with ops.name_scope(name, "TensorArray", [size, flow]) as scope:
            size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
            self._size = size
            attrs = dict(dtype=self._dtype, dynamic_size=self._dynamic_size,
                         clear_after_read=clear_after_read,
                         identical_element_shapes=self._infer_shape,
                         tensor_array_name=tensor_array_name or "")
            if self._element_shape:
                attrs["element_shape"] = self._element_shape[0]
            out = apply_op("TensorArrayV3", scope, size=size, **attrs)
            self._handle = out.handle
            self._flow = out.flow if flow is None else flow

    # ---- properties ----

    @property
    def flow(self):
        """The flow tensor: what orders the ops on this array."""
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        return self._handle

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def element_shape(self):
        """The static shape every element has (unknown until known)."""
        return self._element_shape[0] if self._element_shape else tensor_shape.unknown_shape()

    def _with_flow(self, flow):
        """This array with another flow (a write's result, a loop variable)."""
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow,
                         infer_shape=self._infer_shape)
        ta._element_shape = self._element_shape
        ta._dynamic_size = self._dynamic_size
        ta._size = self._size
        return ta

    def _merge_element_shape(self, shape):
        """Merges `shape` into the shape record (infer_shape only)."""
        shape = tensor_shape.as_shape(shape)
        if not self._infer_shape:
            return
        if not self._element_shape:
            self._element_shape.append(shape)
            return
        if not shape.is_compatible_with(self._element_shape[0]):
            raise ValueError("Inconsistent shapes: saw %s but expected %s " % (
                shape, self._element_shape[0]))
        self._element_shape[0] = self._element_shape[0].merge_with(shape)

    def _check_dtype(self, value):
        if value.dtype.base_dtype != self._dtype:
            raise ValueError("TensorArray dtype is %s but Op is trying to write dtype %s " % (
                self._dtype.name, value.dtype.base_dtype.name))

    def _value(self, value):
        if isinstance(value, ops.Tensor):
            v = value
        else:
            v = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
        self._check_dtype(v)
        return v

    # ---- reads ----

    def identity(self):
        """This array with an Identity of its flow (for control dependencies)."""
        from weir.ops import array_ops
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        """The gradient array of this array for the gradient computation `source`."""
        if flow is None:
            flow = self._flow
        with ops.name_scope(name, "TensorArrayGrad", [self._handle]) as scope:
            out = apply_op("TensorArrayGradV3", scope, handle=self._handle, flow_in=flow,
                           source=source)
        g = TensorArray(self._dtype, handle=out.grad_handle, flow=out.flow_out,
                        infer_shape=self._infer_shape)
        g._element_shape = self._element_shape
        return g

    def read(self, index, name=None):
        """The element at `index` (a scalar int32)."""
        with ops.name_scope(name, "TensorArrayRead", [self._handle, index]) as scope:
            value = apply_op("TensorArrayReadV3", scope, handle=self._handle,
                             index=ops.convert_to_tensor(index, dtype=dtypes.int32),
                             flow_in=self._flow, dtype=self._dtype)
        if self._element_shape:
            value.set_shape(self._element_shape[0])
        return value

    def gather(self, indices, name=None):
        """The elements at `indices` (an int32 vector), stacked on a new dim 0."""
        with ops.name_scope(name, "TensorArrayGather", [self._handle, indices]) as scope:
            attrs = {}
            if self._element_shape and self._element_shape[0].ndims is not None:
                attrs["element_shape"] = self._element_shape[0]
            value = apply_op("TensorArrayGatherV3", scope, handle=self._handle,
                             indices=ops.convert_to_tensor(indices, dtype=dtypes.int32),
                             flow_in=self._flow, dtype=self._dtype, **attrs)
        if self._element_shape and self._element_shape[0].ndims is not None:
            value.set_shape([None] + self._element_shape[0].as_list())
        return value

    def stack(self, name=None):
        """Every element, in order, stacked on a new dim 0."""
        from weir.ops import math_ops
        with ops.name_scope(name, "TensorArrayStack", [self._handle]) as scope:
            value = self.gather(math_ops.range(0, self.size()), name=scope)
        # A fixed size known at graph build is the stack's dim 0.
        if self._size is not None and not self._dynamic_size and self._element_shape:
            known = tensor_util.constant_value(self._size)
            if known is not None and self._element_shape[0].ndims is not None:
                value.set_shape([int(known)] + self._element_shape[0].as_list())
        return value

    def concat(self, name=None):
        """Every element, in order, concatenated along dim 0."""
        with ops.name_scope(name, "TensorArrayConcat", [self._handle]) as scope:
            attrs = {}
            shape = self.element_shape
            if shape.ndims is not None and shape.ndims >= 1:
                attrs["element_shape_except0"] = tensor_shape.TensorShape(shape.dims[1:])
            out = apply_op("TensorArrayConcatV3", scope, handle=self._handle, flow_in=self._flow,
                           dtype=self._dtype, **attrs)
        if shape.ndims is not None and shape.ndims >= 1:
            out.value.set_shape([None] + shape.as_list()[1:])
        return out.value

    def size(self, name=None):
        """The number of elements (an int32 scalar)."""
        with ops.name_scope(name, "TensorArraySize", [self._handle]) as scope:
            return apply_op("TensorArraySizeV3", scope, handle=self._handle, flow_in=self._flow)

    def close(self, name=None):
        """Frees the elements; returns the Operation."""
        with ops.name_scope(name, "TensorArrayClose", [self._handle]) as scope:
            return apply_op("TensorArrayCloseV3", scope, handle=self._handle)

    # ---- writes (each returns the new array) ----

    def write(self, index, value, name=None):
        """`value` at `index`; returns the array after the write."""
        with ops.name_scope(name, "TensorArrayWrite", [self._handle, index, value]) as scope:
            value = self._value(value)
            self._merge_element_shape(value.shape)
            flow = apply_op("TensorArrayWriteV3", scope, handle=self._handle,
                            index=ops.convert_to_tensor(index, dtype=dtypes.int32),
                            value=value, flow_in=self._flow)
        return self._with_flow(flow)

    def scatter(self, indices, value, name=None):
        """Row i of `value` at indices[i]; returns the array after the writes."""
        with ops.name_scope(name, "TensorArrayScatter", [self._handle, indices, value]) as scope:
            value = self._value(value)
            if value.shape.ndims is not None:
                if value.shape.ndims < 1:
                    raise ValueError("TensorArray.scatter: value must have rank >= 1, got "
                                     "shape %s" % value.shape)
                self._merge_element_shape(tensor_shape.TensorShape(value.shape.dims[1:]))
            flow = apply_op("TensorArrayScatterV3", scope, handle=self._handle,
                            indices=ops.convert_to_tensor(indices, dtype=dtypes.int32),
                            value=value, flow_in=self._flow)
        return self._with_flow(flow)

    def unstack(self, value, name=None):
        """Row i of `value` at index i; returns the array after the writes."""
        from weir.ops import array_ops
        from weir.ops import math_ops
        with ops.name_scope(name, "TensorArrayUnstack", [self._handle, value]) as scope:
            value = self._value(value)
            num = array_ops.shape(value)[0]
            return self.scatter(math_ops.range(0, num), value, name=scope)

    def split(self, value, lengths, name=None):
        """`value` cut along dim 0 into pieces of `lengths` rows, piece i at
        index i; returns the array after the writes."""
        with ops.name_scope(name, "TensorArraySplit", [self._handle, value, lengths]) as scope:
            value = self._value(value)
            lengths_t = ops.convert_to_tensor(lengths, dtype=dtypes.int64, name="lengths")
            if value.shape.ndims is not None:
                if value.shape.ndims < 1:
                    raise ValueError("TensorArray.split: value must have rank >= 1, got "
                                     "shape %s" % value.shape)
                rows = None
                known = tensor_util.constant_value(lengths_t)
                if known is not None and known.size and known.max() == known.min():
                    rows = int(known[0])
                self._merge_element_shape(tensor_shape.TensorShape([rows] + value.shape.dims[1:]))
            flow = apply_op("TensorArraySplitV3", scope, handle=self._handle, value=value,
                            lengths=lengths_t, flow_in=self._flow)
        return self._with_flow(flow)
