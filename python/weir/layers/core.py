"""Dense, Flatten, Dropout (tf.compat.v1.layers core layers) and their functions.

dense: outputs = activation(inputs @ kernel + bias), kernel [in, units]
(default initializer: the variable scope's, else glorot_uniform), bias
[units] (zeros); inputs of rank > 2 are multiplied along their last dim.
flatten: [batch, ...] -> [batch, prod(...)]. dropout: only when `training`
(a Python bool or a bool tensor; default False, as TF).
"""
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.layers.base import Layer
from weir.ops import init_ops
from weir.ops import nn_ops

__all__ = ["Dense", "Flatten", "Dropout", "dense", "flatten", "dropout"]


def _const(value, dtype=dtypes.int32):
    return ops.convert_to_tensor(np.asarray(value, dtype=dtypes.as_dtype(dtype).as_numpy_dtype))


def _training_value(training):
    """(python_bool, tensor): one of them is None."""
    if isinstance(training, (bool, np.bool_)) or training is None:
        return bool(training), None
    if isinstance(training, numbers.Integral):
        return bool(training), None
    tensor = ops.convert_to_tensor(training, dtype=dtypes.bool, name="training")
    return None, tensor


def _select_training(training_tensor, train_fn, infer_fn):
    """train_fn() where the bool tensor is true, else infer_fn() (both built)."""
    return apply_op("SelectV2", None, condition=training_tensor, t=train_fn(), e=infer_fn())


class Dense(Layer):
    """A densely connected layer: activation(inputs @ kernel + bias)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        dims = input_shape.as_list() if input_shape is not None else None
        if dims is None or len(dims) < 2:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "min_ndim=2, found ndim=%s." %
                             (self.name, None if dims is None else len(dims)))
        if dims[-1] is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self.kernel = self.add_weight("kernel", shape=[dims[-1], self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units],
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, trainable=True)
        self.built = True

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs, dtype=self.dtype)
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = apply_op("MatMul", None, a=inputs, b=self.kernel)
        else:
            # [..., in] -> [N, in] @ kernel -> [..., units]
            if rank is None:
                raise ValueError("Dense needs inputs of known rank, got %s" % inputs.name)
            in_dim = self.kernel.shape.as_list()[0]
            flat = apply_op("Reshape", None, tensor=inputs, shape=_const([-1, in_dim]))
            product = apply_op("MatMul", None, a=flat, b=self.kernel)
            static = inputs.shape.as_list()
            if all(d is not None for d in static[:-1]):
                shape = _const(static[:-1] + [self.units])
            else:
                shape_of = apply_op("Shape", None, input=inputs, out_type=dtypes.int32)
                leading = apply_op("Slice", None, input=shape_of, begin=_const([0]),
                                   size=_const([rank - 1]))
                shape = apply_op("ConcatV2", None, values=[leading, _const([self.units])],
                                 axis=_const(0))
            outputs = apply_op("Reshape", None, tensor=product, shape=shape)
        if self.use_bias:
            outputs = apply_op("BiasAdd", None, value=outputs, bias=self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        if rank is not None and rank > 2:
            # The C++ shape functions do not see a Python-side set_shape: set it last.
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        return outputs

    def compute_output_shape(self, input_shape):
        return list(input_shape)[:-1] + [self.units]


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """The Dense layer applied to `inputs` (see Dense)."""
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                  bias_constraint=bias_constraint, trainable=trainable, name=name,
                  _reuse=reuse)
    return layer.apply(inputs)


class Flatten(Layer):
    """[batch, d1, ..., dn] -> [batch, d1 * ... * dn] (channels_first input is moved to
    channels_last first, so the element order matches TF's)."""

    def __init__(self, data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is not None and rank < 1:
            raise ValueError("flatten needs inputs of rank >= 1, got %s" % inputs.shape)
        if self.data_format == "channels_first" and rank is not None and rank > 2:
            perm = [0] + list(range(2, rank)) + [1]
            inputs = apply_op("Transpose", None, x=inputs, perm=_const(perm))
        dims = inputs.shape.as_list()
        if dims is not None and len(dims) == 1:
            return apply_op("ExpandDims", None, input=inputs, dim=_const(1))
        if dims is not None and all(d is not None for d in dims[1:]):
            inner = int(np.prod(dims[1:]))
            outputs = apply_op("Reshape", None, tensor=inputs, shape=_const([-1, inner]))
            outputs.set_shape([dims[0], inner])
            return outputs
        batch = apply_op("Slice", None,
                         input=apply_op("Shape", None, input=inputs, out_type=dtypes.int32),
                         begin=_const([0]), size=_const([1]))
        shape = apply_op("ConcatV2", None, values=[batch, _const([-1])], axis=_const(0))
        return apply_op("Reshape", None, tensor=inputs, shape=shape)


    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) == 1:
            return [dims[0], 1]
        inner = dims[1:]
        return [dims[0], int(np.prod(inner)) if all(d is not None for d in inner) else None]


def flatten(inputs, name=None, data_format="channels_last"):
    """Flatten applied to `inputs`."""
    return Flatten(data_format=data_format, name=name).apply(inputs)


class Dropout(Layer):
    """nn.dropout(inputs, rate) when training, else inputs unchanged."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=False):
        inputs = ops.convert_to_tensor(inputs)
        static, tensor = _training_value(training)
        if tensor is None:
            if not static:
                return apply_op("Identity", None, input=inputs)
            return nn_ops.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                                  rate=self.rate)
        return _select_training(
            tensor,
            lambda: nn_ops.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                                   rate=self.rate),
            lambda: inputs)


    def compute_output_shape(self, input_shape):
        return list(input_shape)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout applied to `inputs`; nothing is dropped unless `training`."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name).apply(inputs,
                                                                            training=training)
