"""The 3-D layers of tf.compat.v1.layers: Conv3D (kernel [kd, kh, kw, in,
filters]), MaxPooling3D and AveragePooling3D, and their functions, over
weir.ops.nn3d_ops.conv3d / max_pool3d / avg_pool3d. kernel_size, strides,
pool_size and dilation_rate are an int or a 3-tuple; data_format
"channels_last" (NDHWC) or "channels_first" (NCDHW, which has no CPU kernel,
as in TensorFlow)."""
import numbers

from weir.framework import ops
from weir.layers.base import Layer
from weir.layers.convolutional import Conv2D, _conv_length, _padding
from weir.ops import init_ops
from weir.ops import nn3d_ops
from weir.ops import nn_ops

__all__ = ["Conv3D", "Convolution3D", "MaxPooling3D", "AveragePooling3D", "MaxPool3D",
           "AvgPool3D", "conv3d", "convolution3d", "max_pooling3d", "average_pooling3d"]


def _triple(value, what):
    if isinstance(value, numbers.Integral):
        return (int(value),) * 3
    value = tuple(int(v) for v in value)
    if len(value) != 3:
        raise ValueError("The `%s` argument must be a tuple of 3 integers. Received: %r" %
                         (what, value))
    return value


def _format_3d(data_format):
    data_format = (data_format or "channels_last").lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of \"channels_first\", "
                         "\"channels_last\". Received: %s" % data_format)
    return "NDHWC" if data_format == "channels_last" else "NCDHW"


def _spatial(data_format):
    return (2, 3, 4, 1) if data_format == "NCDHW" else (1, 2, 3, 4)


class Conv3D(Conv2D):
    """A 3-D convolution layer."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
                 use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, 1, 1, padding=padding, data_format=data_format,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)
        self.kernel_size = _triple(kernel_size, "kernel_size")
        self.strides = _triple(strides, "strides")
        self.dilation_rate = _triple(dilation_rate, "dilation_rate")
        self.data_format_3d = _format_3d(data_format)

    def _channels(self, input_shape):
        dims = input_shape.as_list() if input_shape is not None else None
        if dims is None or len(dims) != 5:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "ndim=5, found ndim=%s." %
                             (self.name, None if dims is None else len(dims)))
        channels = dims[_spatial(self.data_format_3d)[3]]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. "
                             "Found `None`.")
        return channels

    def _kernel_shape(self, channels):
        return list(self.kernel_size) + [channels, self.filters]

    def _convolve(self, inputs):
        return nn3d_ops.conv3d(inputs, self.kernel, strides=list(self.strides),
                               padding=self.padding, data_format=self.data_format_3d,
                               dilations=list(self.dilation_rate))

    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) != 5:
            return None
        axes = _spatial(self.data_format_3d)
        out = [dims[0]] + [None] * 4
        for i in range(3):
            out[axes[i]] = _conv_length(dims[axes[i]], self.kernel_size[i], self.strides[i],
                                        self.padding, self.dilation_rate[i])
        out[axes[3]] = self.filters
        return out

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs, dtype=self.dtype)
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(
                outputs, self.bias, data_format="NCHW" if self.data_format_3d == "NCDHW" else "NHWC")
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


Convolution3D = Conv3D


class _Pooling3D(Layer):
    _pool = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _triple(pool_size, "pool_size")
        self.strides = _triple(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _format_3d(data_format)

    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) != 5:
            return None
        axes = _spatial(self.data_format)
        for i in range(3):
            dims[axes[i]] = _conv_length(dims[axes[i]], self.pool_size[i], self.strides[i],
                                         self.padding)
        return dims

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 5:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "ndim=5, found ndim=%d." % (self.name, inputs.shape.ndims))
        return type(self)._pool(inputs, list(self.pool_size), list(self.strides), self.padding,
                                data_format=self.data_format)


class MaxPooling3D(_Pooling3D):
    """The maximum over each pool_size window."""
    _pool = staticmethod(nn3d_ops.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """The mean over each pool_size window (padding not counted)."""
    _pool = staticmethod(nn3d_ops.avg_pool3d)


MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """The Conv3D layer applied to `inputs` [batch, depth, height, width, channels]."""
    layer = Conv3D(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                   dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                   bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


convolution3d = conv3d


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """MaxPooling3D applied to `inputs`."""
    return MaxPooling3D(pool_size, strides, padding=padding, data_format=data_format,
                        name=name).apply(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """AveragePooling3D applied to `inputs`."""
    return AveragePooling3D(pool_size, strides, padding=padding, data_format=data_format,
                            name=name).apply(inputs)
