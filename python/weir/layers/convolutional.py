"""Conv2D and Conv2DTranspose (tf.compat.v1.layers) and their functions.

conv2d: activation(conv(inputs, kernel) + bias), kernel [kh, kw, in, filters];
conv2d_transpose: its transpose, kernel [kh, kw, filters, in]. kernel_size,
strides and dilation_rate are an int or a pair; padding "valid" or "same"
(either case); data_format "channels_last" (NHWC) or "channels_first" (NCHW).
"""
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.layers.base import Layer
from weir.ops import init_ops
from weir.ops import nn_ops

__all__ = ["Conv2D", "Conv2DTranspose", "Convolution2D", "Convolution2DTranspose", "conv2d",
           "conv2d_transpose", "convolution2d", "convolution2d_transpose"]


def _pair(value, what):
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError("The `%s` argument must be a tuple of 2 integers. Received: %r" %
                         (what, value))
    return value


def _format(data_format):
    data_format = (data_format or "channels_last").lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of \"channels_first\", "
                         "\"channels_last\". Received: %s" % data_format)
    return "NHWC" if data_format == "channels_last" else "NCHW"


def _padding(padding):
    padding = padding.upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError("The `padding` argument must be one of \"valid\", \"same\". "
                         "Received: %s" % padding)
    return padding


class Conv2D(Layer):
    """A 2-D convolution layer."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _format(data_format)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
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

    def _channels(self, input_shape):
        dims = input_shape.as_list() if input_shape is not None else None
        if dims is None or len(dims) != 4:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "ndim=4, found ndim=%s." %
                             (self.name, None if dims is None else len(dims)))
        channels = dims[1] if self.data_format == "NCHW" else dims[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. "
                             "Found `None`.")
        return channels

    def _kernel_shape(self, channels):
        return list(self.kernel_size) + [channels, self.filters]

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.kernel = self.add_weight("kernel", shape=self._kernel_shape(channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.filters],
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, trainable=True)
        self.built = True

    def _convolve(self, inputs):
        # One Conv2D in the layer's data format, as TensorFlow builds it.
        return nn_ops.conv2d(inputs, self.kernel, strides=list(self.strides),
                             padding=self.padding, dilations=list(self.dilation_rate),
                             data_format=self.data_format)

    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) != 4:
            return None
        h, w, c = _spatial_axes(self.data_format)
        out = [dims[0], None, None, None]
        out[h] = self._length(dims[h], 0)
        out[w] = self._length(dims[w], 1)
        out[c] = self.filters
        return out

    def _length(self, size, i):
        return _conv_length(size, self.kernel_size[i], self.strides[i], self.padding,
                            self.dilation_rate[i])

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs, dtype=self.dtype)
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=self.data_format)
        if self.activation is not None:
            outputs = self.activation(outputs)
        static = getattr(self, "_static_output", None)
        if static is not None:
            # The C++ shape functions do not see a Python-side set_shape: set it last.
            outputs.set_shape(static)
        return outputs


def _conv_length(size, kernel, stride, padding, dilation=1):
    if size is None:
        return None
    if padding == "SAME":
        return -(-size // stride)
    return max(-(-(size - (kernel - 1) * dilation) // stride), 0)


def _spatial_axes(data_format):
    return (2, 3, 1) if data_format == "NCHW" else (1, 2, 3)


def _transposed_length(size, kernel, stride, padding, dilation):
    if size is None:
        return None
    kernel = (kernel - 1) * dilation + 1
    if padding == "VALID":
        return size * stride + max(kernel - stride, 0)
    return size * stride


class Conv2DTranspose(Conv2D):
    """The transpose of Conv2D (a "deconvolution"): kernel [kh, kw, filters, in]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)

    def _kernel_shape(self, channels):
        return list(self.kernel_size) + [self.filters, channels]

    def _length(self, size, i):
        return _transposed_length(size, self.kernel_size[i], self.strides[i], self.padding,
                                  self.dilation_rate[i])

    def _convolve(self, inputs):
        static = inputs.shape.as_list()
        h_axis, w_axis = (2, 3) if self.data_format == "NCHW" else (1, 2)
        out_h = _transposed_length(static[h_axis], self.kernel_size[0], self.strides[0],
                                   self.padding, self.dilation_rate[0])
        out_w = _transposed_length(static[w_axis], self.kernel_size[1], self.strides[1],
                                   self.padding, self.dilation_rate[1])
        if out_h is None or out_w is None:
            raise ValueError("conv2d_transpose needs the spatial dims of its input known, got %s"
                             % inputs.shape)
        c_axis = 1 if self.data_format == "NCHW" else 3
        sizes = [None] * 4
        sizes[h_axis], sizes[w_axis], sizes[c_axis] = out_h, out_w, self.filters
        if static[0] is not None:
            output_shape = np.array([static[0]] + sizes[1:], np.int32)
        else:
            shape = apply_op("Shape", None, input=inputs, out_type=dtypes.int32)
            batch = apply_op("GatherV2", None, params=shape, indices=np.int32(0),
                             axis=np.int32(0))
            parts = [batch] + [ops.convert_to_tensor(np.int32(d)) for d in sizes[1:]]
            output_shape = apply_op("Pack", None, values=parts, axis=0)
        outputs = nn_ops.conv2d_transpose(inputs, self.kernel, output_shape,
                                          strides=list(self.strides), padding=self.padding,
                                          data_format=self.data_format)
        self._static_output = [static[0]] + sizes[1:]
        return outputs


Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """The Conv2D layer applied to `inputs`."""
    layer = Conv2D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                     reuse=None):
    """The Conv2DTranspose layer applied to `inputs`."""
    layer = Conv2DTranspose(filters, kernel_size, strides=strides, padding=padding,
                            data_format=data_format, activation=activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer,
                            bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer,
                            bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer,
                            kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                            trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


convolution2d = conv2d
convolution2d_transpose = conv2d_transpose
