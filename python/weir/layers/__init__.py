"""weir.layers: tf.compat.v1.layers — Layer, Dense, Conv1D, Conv2D, Conv2DTranspose,
MaxPooling1D, AveragePooling1D (weir.layers.one_d), Conv3D, MaxPooling3D,
AveragePooling3D (weir.layers.three_d),
MaxPooling2D, AveragePooling2D, Flatten, Dropout, BatchNormalization and the
functions dense, conv2d, conv2d_transpose, max_pooling2d, average_pooling2d,
flatten, dropout, batch_normalization. Variables come from get_variable
under the layer's variable scope ("dense/kernel", "dense_1/kernel", ...)."""
from weir.layers.base import InputSpec, Layer  # noqa: F401
from weir.layers.convolutional import (  # noqa: F401
    Conv2D, Conv2DTranspose, Convolution2D, Convolution2DTranspose, conv2d, conv2d_transpose,
    convolution2d, convolution2d_transpose)
from weir.layers.one_d import (  # noqa: F401
    AveragePooling1D, AvgPool1D, Conv1D, Convolution1D, MaxPool1D, MaxPooling1D, average_pooling1d, conv1d,
    convolution1d, max_pooling1d)
from weir.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten  # noqa: F401
from weir.layers.normalization import (  # noqa: F401
    BatchNorm, BatchNormalization, batch_normalization)
from weir.layers.three_d import (  # noqa: F401
    AveragePooling3D, AvgPool3D, Conv3D, Convolution3D, MaxPool3D, MaxPooling3D,
    average_pooling3d, conv3d, convolution3d, max_pooling3d)
from weir.layers.pooling import (  # noqa: F401
    AveragePooling2D, AvgPool2D, MaxPool2D, MaxPooling2D, average_pooling2d, max_pooling2d)

__all__ = [
    "AveragePooling2D", "AvgPool2D", "BatchNorm", "BatchNormalization", "Conv2D",
    "Conv2DTranspose", "Convolution2D", "Convolution2DTranspose", "Dense", "Dropout", "Flatten",
    "InputSpec", "Layer", "MaxPool2D", "MaxPooling2D", "average_pooling2d", "batch_normalization",
    "conv2d", "conv2d_transpose", "convolution2d", "convolution2d_transpose", "dense", "dropout",
    "flatten", "max_pooling2d", "AveragePooling1D", "AvgPool1D", "Conv1D", "Convolution1D", "MaxPool1D",
    "MaxPooling1D", "average_pooling1d", "conv1d", "convolution1d", "max_pooling1d",
    "AveragePooling3D", "AvgPool3D", "Conv3D", "Convolution3D", "MaxPool3D", "MaxPooling3D",
    "average_pooling3d", "conv3d", "convolution3d", "max_pooling3d",
]
