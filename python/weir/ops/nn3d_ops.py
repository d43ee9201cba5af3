"""3-D convolution and pooling (tf.nn.conv3d, conv3d_transpose, max_pool3d,
avg_pool3d; ops Conv3D, Conv3DBackpropInputV2, MaxPool3D, AvgPool3D) and
patch extraction (tf.image.extract_patches / extract_image_patches; op
ExtractImagePatches). Inputs are NDHWC [batch, planes, rows, cols, channels]
(NCDHW is declared but has no CPU kernel, as in TensorFlow); filters
[planes, rows, cols, in_channels, out_channels]."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["conv3d", "conv3d_transpose", "max_pool3d", "avg_pool3d", "extract_patches",
           "extract_image_patches", "conv3d_backprop_filter_v2"]


def _list5(value, name, data_format):
    """An int, 1, 3 or 5 ints as the 5 values of an NDHWC / NCDHW attr."""
    if value is None:
        return None
    if isinstance(value, int):
        value = [value]
    value = [int(v) for v in value]
    if len(value) == 1:
        value = value * 3
    if len(value) == 3:
        value = ([1, 1] + value) if data_format == "NCDHW" else ([1] + value + [1])
    if len(value) != 5:
        raise ValueError("%s must be an int or a list of 1, 3 or 5 ints, got %r" % (name, value))
    return value


def conv3d(input=None, filter=None, strides=None, padding=None,  # noqa: A002
           data_format="NDHWC", dilations=None, name=None, filters=None):
    """3-D cross-correlation of input [batch, d, h, w, in] with filter [fd, fh, fw, in, out]."""
    filter = filters if filter is None else filter  # noqa: A001
    if input is None or filter is None or strides is None or padding is None:
        raise ValueError("conv3d needs input, filter (or filters), strides and padding")
    return apply_op("Conv3D", name, input=input, filter=filter,
                    strides=_list5(strides, "strides", data_format), padding=padding,
                    data_format=data_format,
                    dilations=_list5(dilations or 1, "dilations", data_format))


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NDHWC", name=None, input=None,
                     filters=None, dilations=None):
    """conv3d's gradient for its input: value [batch, d, h, w, out] to
    output_shape [batch, D, H, W, in] with filter [fd, fh, fw, in, out]."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with ops.name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        sizes = ops.convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        return apply_op("Conv3DBackpropInputV2", scope, input_sizes=sizes, filter=filter,
                        out_backprop=value, strides=_list5(strides, "strides", data_format),
                        padding=padding, data_format=data_format,
                        dilations=_list5(dilations or 1, "dilations", data_format))


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                              data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """conv3d's gradient for its filter (tf.compat.v1.nn.conv3d_backprop_filter_v2)."""
    return apply_op("Conv3DBackpropFilterV2", name, input=input,
                    filter_sizes=ops.convert_to_tensor(filter_sizes, dtype=dtypes.int32),
                    out_backprop=out_backprop, strides=_list5(strides, "strides", data_format),
                    padding=padding, data_format=data_format,
                    dilations=_list5(dilations, "dilations", data_format))


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The maximum of each ksize window of input [batch, d, h, w, c]."""
    return apply_op("MaxPool3D", name, input=input, ksize=_list5(ksize, "ksize", data_format),
                    strides=_list5(strides, "strides", data_format), padding=padding,
                    data_format=data_format)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The mean of each ksize window of input (padding left out of the count)."""
    return apply_op("AvgPool3D", name, input=input, ksize=_list5(ksize, "ksize", data_format),
                    strides=_list5(strides, "strides", data_format), padding=padding,
                    data_format=data_format)


def _list4(value, name):
    value = [int(v) for v in value]
    if len(value) == 2:
        value = [1] + value + [1]
    if len(value) != 4:
        raise ValueError("%s must be 2 or 4 ints, got %r" % (name, value))
    return value


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """The sizes [1, rows, cols, 1] patches of images [batch, h, w, c] in the
    depth: [batch, out_rows, out_cols, rows * cols * c]."""
    return apply_op("ExtractImagePatches", name, images=images, ksizes=_list4(sizes, "sizes"),
                    strides=_list4(strides, "strides"), rates=_list4(rates, "rates"),
                    padding=padding)


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """tf.compat.v1.image.extract_image_patches: extract_patches with ksizes."""
    ksizes = sizes if ksizes is None else ksizes
    return extract_patches(images, ksizes, strides, rates, padding, name=name)
