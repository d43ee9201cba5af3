"""The 1-D layers of tf.compat.v1.layers: Conv1D (kernel [kw, in, filters]),
MaxPooling1D and AveragePooling1D, and their functions, over
weir.ops.nn_ops.conv1d / max_pool1d / avg_pool1d (2-D ops over a height of
1). kernel_size, strides, pool_size and dilation_rate are an int or a
1-tuple; data_format "channels_last" (NWC) or "channels_first" (NCW)."""
import numbers

from weir.framework import ops
from weir.layers.base import Layer
from weir.layers.convolutional import Conv2D, _conv_length, _padding
from weir.ops import init_ops
from weir.ops import nn_ops

__all__ = ["Conv1D", "Convolution1D", "MaxPooling1D", "AveragePooling1D", "MaxPool1D", "AvgPool1D",
           "conv1d", "convolution1d", "max_pooling1d", "average_pooling1d"]


def _single(value, what):
    if isinstance(value, numbers.Integral):
        return int(value)
    value = tuple(int(v) for v in value)
    if len(value) != 1:
        raise ValueError("The `%s` argument must be a tuple of 1 integer. Received: %r" % (what, value))
    return value[0]


def _format_1d(data_format):
    data_format = (data_format or "channels_last").lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of \"channels_first\", "
                         "\"channels_last\". Received: %s" % data_format)
    return "NWC" if data_format == "channels_last" else "NCW"


class Conv1D(Conv2D):
    """A 1-D convolution layer."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, (1, _single(kernel_size, "kernel_size")), (1, _single(strides, "strides")),
                         padding=padding, data_format=data_format,
                         dilation_rate=(1, _single(dilation_rate, "dilation_rate")), activation=activation,
                         use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)
        self.data_format_1d = _format_1d(data_format)

    def _channels(self, input_shape):
        dims = input_shape.as_list() if input_shape is not None else None
        if dims is None or len(dims) != 3:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected ndim=3, "
                             "found ndim=%s." % (self.name, None if dims is None else len(dims)))
        channels = dims[1] if self.data_format_1d == "NCW" else dims[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return channels

    def _kernel_shape(self, channels):
        return [self.kernel_size[1], channels, self.filters]

    def _convolve(self, inputs):
        return nn_ops.conv1d(inputs, self.kernel, stride=self.strides[1], padding=self.padding,
                             data_format=self.data_format_1d, dilations=self.dilation_rate[1])

    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) != 3:
            return None
        w, c = (2, 1) if self.data_format_1d == "NCW" else (1, 2)
        out = [dims[0], None, None]
        out[w] = self._length(dims[w], 1)
        out[c] = self.filters
        return out

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs, dtype=self.dtype)
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=self.data_format_1d)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


Convolution1D = Conv1D


class _Pooling1D(Layer):
    _pool = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None,
                 **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _single(pool_size, "pool_size")
        self.strides = _single(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _format_1d(data_format)

    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) != 3:
            return None
        w = 2 if self.data_format == "NCW" else 1
        dims[w] = _conv_length(dims[w], self.pool_size, self.strides, self.padding)
        return dims

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 3:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected ndim=3, "
                             "found ndim=%d." % (self.name, inputs.shape.ndims))
        return type(self)._pool(inputs, self.pool_size, self.strides, self.padding,
                                data_format=self.data_format)


class MaxPooling1D(_Pooling1D):
    """The maximum over each pool_size window along the width."""
    _pool = staticmethod(nn_ops.max_pool1d)


class AveragePooling1D(_Pooling1D):
    """The mean over each pool_size window along the width (padding not counted)."""
    _pool = staticmethod(nn_ops.avg_pool1d)


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
           dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
           name=None, reuse=None):
    """The Conv1D layer applied to `inputs` [batch, width, channels]."""
    layer = Conv1D(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                   dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                   bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


convolution1d = conv1d


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """MaxPooling1D applied to `inputs`."""
    return MaxPooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """AveragePooling1D applied to `inputs`."""
    return AveragePooling1D(pool_size, strides, padding=padding, data_format=data_format,
                            name=name).apply(inputs)
