"""MaxPooling2D and AveragePooling2D (tf.compat.v1.layers) and their functions.

pool_size and strides are an int or a pair; padding "valid" or "same";
data_format "channels_last" (NHWC) or "channels_first" (NCHW). No variables.
"""
from weir.framework import ops
from weir.layers.base import Layer
from weir.layers.convolutional import _conv_length, _format, _padding, _pair, _spatial_axes
from weir.ops import nn_ops

__all__ = ["MaxPooling2D", "AveragePooling2D", "MaxPool2D", "AvgPool2D", "max_pooling2d",
           "average_pooling2d"]


class _Pooling2D(Layer):
    _pool = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _format(data_format)

    def compute_output_shape(self, input_shape):
        dims = list(input_shape)
        if len(dims) != 4:
            return None
        h, w, _ = _spatial_axes(self.data_format)
        out = list(dims)
        out[h] = _conv_length(dims[h], self.pool_size[0], self.strides[0], self.padding)
        out[w] = _conv_length(dims[w], self.pool_size[1], self.strides[1], self.padding)
        return out

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 4:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "ndim=4, found ndim=%d." % (self.name, inputs.shape.ndims))
        return type(self)._pool(inputs, list(self.pool_size), list(self.strides), self.padding,
                                 data_format=self.data_format)


class MaxPooling2D(_Pooling2D):
    """The maximum over each pool_size window."""
    _pool = staticmethod(nn_ops.max_pool)


class AveragePooling2D(_Pooling2D):
    """The mean over each pool_size window (padding not counted)."""
    _pool = staticmethod(nn_ops.avg_pool)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """MaxPooling2D applied to `inputs`."""
    return MaxPooling2D(pool_size, strides, padding=padding, data_format=data_format,
                        name=name).apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """AveragePooling2D applied to `inputs`."""
    return AveragePooling2D(pool_size, strides, padding=padding, data_format=data_format,
                            name=name).apply(inputs)
