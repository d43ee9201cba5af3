"""BatchNormalization (tf.compat.v1.layers) and batch_normalization.

Variables: gamma (ones, when scale), beta (zeros, when center) — trainable;
moving_mean (zeros) and moving_variance (ones) — not trainable, in
GLOBAL_VARIABLES. In training the batch's mean and (biased) variance
normalize; the moving averages move by
    moving -= (moving - batch_statistic) * (1 - momentum)
through update ops in UPDATE_OPS (run them with the train op, TF1's pattern:
`with wr.control_dependencies(wr.get_collection(wr.GraphKeys.UPDATE_OPS))`).
In inference the moving statistics normalize. `training` is a Python bool or
a bool tensor (then both are built and the update is a no-op when false).

A 4-D input normalized over its last axis uses the FusedBatchNormV3 op
(`fused=None` or True), like TF: its moving variance update uses the
unbiased batch variance; other inputs (also channels-first ones: weir's CPU
kernel is NHWC only) are composed of moments and batch_normalization (biased
variance, as TF's non-fused path).
"""
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.layers.base import Layer
from weir.layers.core import _training_value
from weir.ops import init_ops
from weir.ops import nn_ops

__all__ = ["BatchNormalization", "BatchNorm", "batch_normalization"]


class BatchNormalization(Layer):
    """Batch normalization over all axes but `axis` (an int or a list)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(),
                 gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                 trainable=True, virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("batch renormalization, virtual batches and adjustment "
                                      "are not supported by weir")
        self.axis = axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center, self.scale = center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.fused = fused
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        dims = input_shape.as_list() if input_shape is not None else None
        if dims is None:
            raise ValueError("Input has undefined rank.")
        rank = len(dims)
        axes = [self.axis] if isinstance(self.axis, numbers.Integral) else list(self.axis)
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError("Invalid axis: %d" % a)
        self._axes = sorted(a % rank for a in axes)
        self._rank = rank
        for a in self._axes:
            if dims[a] is None:
                raise ValueError("Input has undefined `axis` dimension. Input shape: %s" %
                                 (input_shape,))
        param_shape = [dims[a] for a in self._axes]
        self._param_shape = param_shape
        # FusedBatchNormV3 in NHWC (axis 3) or NCHW (axis 1), as TF fuses.
        use_fused = self.fused is not False and rank == 4 and self._axes in ([3], [1])
        if self.fused and not use_fused:
            raise ValueError("fused batch normalization needs a 4-D input and axis 1 or 3")
        self._fused = use_fused
        # Parameters of a half-precision input are float32 (TF's rule).
        param_dtype = self.dtype if self.dtype in (dtypes.float32, dtypes.float64) \
            else dtypes.float32
        self._param_dtype = param_dtype
        if self.scale:
            self.gamma = self.add_weight("gamma", shape=param_shape, dtype=param_dtype,
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, trainable=True)
        if self.center:
            self.beta = self.add_weight("beta", shape=param_shape, dtype=param_dtype,
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, trainable=True)
        self.moving_mean = self.add_weight("moving_mean", shape=param_shape, dtype=param_dtype,
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape=param_shape,
                                               dtype=param_dtype,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        self.built = True

    def _moving_update(self, variable, value, decay):
        with ops.name_scope(None, "AssignMovingAvg"):
            current = ops.convert_to_tensor(variable)
            value = ops.convert_to_tensor(value, dtype=current.dtype)
            delta = apply_op("Mul", None, x=apply_op("Sub", None, x=current, y=value), y=decay)
            return variable.assign_sub(delta)

    def _broadcast(self, vector):
        # [C] -> a shape that broadcasts against the input along self._axes.
        if self._axes == [self._rank - 1]:
            return vector
        shape = [1] * self._rank
        for i, a in enumerate(self._axes):
            shape[a] = self._param_shape[i]
        return apply_op("Reshape", None, tensor=vector,
                        shape=ops.convert_to_tensor(np.array(shape, np.int32)))

    def _fused_call(self, inputs, training):
        data_format = "NCHW" if self._axes == [1] else "NHWC"
        gamma = self.gamma if self.gamma is not None else \
            ops.convert_to_tensor(np.ones(self.moving_mean.shape.as_list(),
                                          self._param_dtype.as_numpy_dtype))
        beta = self.beta if self.beta is not None else \
            ops.convert_to_tensor(np.zeros(self.moving_mean.shape.as_list(),
                                           self._param_dtype.as_numpy_dtype))
        if training:
            return nn_ops.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon,
                                           data_format=data_format, is_training=True)
        y, _, _ = nn_ops.fused_batch_norm(inputs, gamma, beta, mean=self.moving_mean,
                                          variance=self.moving_variance, epsilon=self.epsilon,
                                          data_format=data_format, is_training=False)
        return y, None, None

    def _composed_call(self, inputs, training):
        reduction = [a for a in range(self._rank) if a not in self._axes]
        if training:
            mean, variance = nn_ops.moments(inputs, reduction, keep_dims=False)
        else:
            mean = ops.convert_to_tensor(self.moving_mean)
            variance = ops.convert_to_tensor(self.moving_variance)
        y = nn_ops.batch_normalization(
            inputs, self._broadcast(mean), self._broadcast(variance),
            None if self.beta is None else self._broadcast(ops.convert_to_tensor(self.beta)),
            None if self.gamma is None else self._broadcast(ops.convert_to_tensor(self.gamma)),
            self.epsilon)
        return (y, mean, variance) if training else (y, None, None)

    def call(self, inputs, training=False):
        inputs = ops.convert_to_tensor(inputs)
        compute = self._fused_call if self._fused else self._composed_call
        static, flag = _training_value(training)
        if flag is None and not static:
            return compute(inputs, False)[0]
        y, mean, variance = compute(inputs, True)
        if flag is not None:
            y_inference = compute(inputs, False)[0]
            y = apply_op("SelectV2", None, condition=flag, t=y, e=y_inference)
            # A false flag makes the update a no-op: decay 0.
            decay = apply_op("SelectV2", None, condition=flag,
                             t=np.asarray(1.0 - self.momentum,
                                          self._param_dtype.as_numpy_dtype),
                             e=np.asarray(0.0, self._param_dtype.as_numpy_dtype))
        else:
            decay = ops.convert_to_tensor(
                np.asarray(1.0 - self.momentum, self._param_dtype.as_numpy_dtype))
        mean_update = self._moving_update(self.moving_mean, mean, decay)
        variance_update = self._moving_update(self.moving_variance, variance, decay)
        self.add_update([mean_update, variance_update])
        return y


    def compute_output_shape(self, input_shape):
        return list(input_shape)


BatchNorm = BatchNormalization


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(),
                        gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """BatchNormalization applied to `inputs` (see the module doc for UPDATE_OPS)."""
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _reuse=reuse)
    return layer.apply(inputs, training=training)
