"""tf.image functions TensorFlow composes of other ops, composed the same way
here: rot90, transpose, resize_with_pad, adjust_gamma,
the YIQ/YUV colour spaces, image_gradients, sobel_edges, total_variation, psnr,
is_jpeg. Images are [height, width, channels] or a batch of them."""
import numpy as np

from weir.framework import dtypes
from weir.framework import ops

__all__ = ["rot90", "transpose", "transpose_image", "resize_with_crop_or_pad",
           "resize_with_pad", "resize_image_with_pad",
           "adjust_gamma", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb",
           "image_gradients", "sobel_edges", "total_variation", "psnr", "is_jpeg"]


def _wr():
    import weir
    return weir


def _image(image, name="image"):
    image = ops.convert_to_tensor(image, name=name)
    rank = image.shape.ndims
    if rank not in (3, 4):
        raise ValueError("'image' (shape %s) must have either 3 or 4 dimensions." % image.shape)
    return image, rank == 4


def rot90(image, k=1, name=None):
    """`image` rotated counter-clockwise by k * 90 degrees."""
    wr = _wr()
    with ops.name_scope(name, "rot90", [image]):
        image, batched = _image(image)
        k = int(k) % 4
        h, w = (1, 2) if batched else (0, 1)
        perm = list(range(image.shape.ndims))
        perm[h], perm[w] = perm[w], perm[h]
        if k == 0:
            return wr.identity(image)
        if k == 1:
            return wr.transpose(wr.reverse(image, [w]), perm)
        if k == 2:
            return wr.reverse(image, [h, w])
        return wr.reverse(wr.transpose(image, perm), [w])


def transpose(image, name=None):
    """`image` with height and width swapped."""
    wr = _wr()
    with ops.name_scope(name, "transpose", [image]):
        image, batched = _image(image)
        return wr.transpose(image, [0, 2, 1, 3] if batched else [1, 0, 2])


transpose_image = transpose


def resize_with_crop_or_pad(image, target_height, target_width):
    """TF2's name of resize_image_with_crop_or_pad (image_augment.py)."""
    from weir.ops import image_augment
    return image_augment.resize_image_with_crop_or_pad(image, target_height, target_width)


_V2_RESIZE = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor",
              "bicubic": "ResizeBicubic", "area": "ResizeArea"}


def _resize_v2(images, height, width, method):
    """TF2's tf.image.resize (half-pixel centres; float32 out, nearest keeps the dtype)."""
    from weir.framework.op_def_library import apply_op
    wr = _wr()
    op_type = _V2_RESIZE.get(str(getattr(method, "value", method)).lower())
    if op_type is None:
        raise NotImplementedError("resize method %r is not supported by weir (bilinear, "
                                  "nearest, bicubic, area are)" % (method,))
    size = ops.convert_to_tensor([height, width], dtypes.int32, name="size")
    attrs = {} if op_type == "ResizeArea" else {"half_pixel_centers": True}
    out = apply_op(op_type, None, images=images, size=size, align_corners=False, **attrs)
    return out if op_type == "ResizeNearestNeighbor" else wr.cast(out, dtypes.float32)


def _resize_with_pad(image, target_height, target_width, resize):
    wr = _wr()
    image, batched = _image(image)
    if not batched:
        image = wr.expand_dims(image, 0)
    if target_height <= 0 or target_width <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    height, width = int(image.shape[1]), int(image.shape[2])
    ratio = max(width / target_width, height / target_height)
    resized_height = int(np.floor(height / ratio))
    resized_width = int(np.floor(width / ratio))
    # TF's offsets come from the unrounded resized size.
    pad_h = max(int(np.floor((target_height - height / ratio) / 2)), 0)
    pad_w = max(int(np.floor((target_width - width / ratio) / 2)), 0)
    resized = resize(image, resized_height, resized_width)
    out = wr.image.pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
    return out if batched else wr.squeeze(out, [0])


def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """TF2's: resizes `image` keeping its aspect ratio (TF2's resize: half-pixel
    centres), then zero-pads it to the target size."""
    if antialias:
        raise NotImplementedError("resize_with_pad(antialias=True) is not supported by weir")
    with ops.name_scope(None, "resize_image_with_pad", [image]):
        return _resize_with_pad(image, target_height, target_width,
                                lambda x, h, w: _resize_v2(x, h, w, method))


def resize_image_with_pad(image, target_height, target_width, method="bilinear",
                          align_corners=False):
    """TF1's (tf.compat.v1.image.resize_image_with_pad): as resize_with_pad with TF1's
    resize (tf.compat.v1.image.resize_images)."""
    wr = _wr()
    method = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}.get(method, method)
    with ops.name_scope(None, "resize_image_with_pad", [image]):
        return _resize_with_pad(
            image, target_height, target_width,
            lambda x, h, w: wr.image.resize_images(x, [h, w], method=method,
                                                   align_corners=align_corners))


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma, in the image's dtype (integers scaled through [0, 1])."""
    wr = _wr()
    with ops.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = ops.convert_to_tensor(image, name="image")
        dtype = image.dtype.base_dtype
        if dtype.is_integer:
            flt = wr.image.convert_image_dtype(image, dtypes.float32)
            return wr.image.convert_image_dtype(gain * flt ** gamma, dtype, saturate=True)
        if gamma < 0 if isinstance(gamma, (int, float)) else False:
            raise ValueError("Gamma should be a non-negative real number.")
        return gain * image ** wr.cast(gamma, dtype)


_YIQ = np.array([[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
                 [0.114, -0.32134392, 0.31119955]], np.float32)
_YUV = np.array([[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                 [0.114, 0.43601035, -0.10001026]], np.float32)
# The inverses as TF writes them (rounded: not np.linalg.inv of the above).
_YIQ_INVERSE = np.array([[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
                         [0.6208248, -0.64720424, 1.70423049]], np.float32)
_YUV_INVERSE = np.array([[1, 1, 1], [0, -0.394642334, 2.03206185],
                         [1.13988303, -0.58062185, 0]], np.float32)


def _colour(images, matrix, name):
    wr = _wr()
    with ops.name_scope(None, name, [images]):
        images = ops.convert_to_tensor(images, name="images")
        kernel = ops.convert_to_tensor(matrix.astype(images.dtype.as_numpy_dtype), name="kernel")
        return wr.tensordot(images, kernel, axes=[[images.shape.ndims - 1], [0]])


def rgb_to_yiq(images):
    return _colour(images, _YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    return _colour(images, _YIQ_INVERSE, "yiq_to_rgb")


def rgb_to_yuv(images):
    return _colour(images, _YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    return _colour(images, _YUV_INVERSE, "yuv_to_rgb")


def image_gradients(image):
    """(dy, dx): forward differences of a [batch, h, w, c] image, zero in the last
    row / column, as TF's."""
    wr = _wr()
    image = ops.convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError("image_gradients expects a 4D tensor [batch_size, h, w, d], not %s."
                         % image.shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = wr.concat([dy, wr.zeros_like(image[:, :1, :, :])], 1)
    dx = wr.concat([dx, wr.zeros_like(image[:, :, :1, :])], 2)
    return dy, dx


def sobel_edges(image):
    """[batch, h, w, c, 2]: the Sobel dy and dx of each channel (reflect padding)."""
    wr = _wr()
    image = ops.convert_to_tensor(image, name="image")
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                        [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]], np.float64)
    # [3, 3, 1, 2] filters, one depthwise pass per channel.
    filters = np.transpose(kernels, (1, 2, 0))[:, :, np.newaxis, :]
    channels = int(image.shape[-1])
    filters = np.tile(filters, [1, 1, channels, 1]).astype(image.dtype.as_numpy_dtype)
    padded = wr.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = wr.nn.depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    shape = wr.concat([wr.shape(image), [2]], 0)
    return wr.reshape(out, shape)


def total_variation(images, name=None):
    """The sum of absolute differences of neighbouring pixels (per image of a batch)."""
    wr = _wr()
    with ops.name_scope(name, "total_variation", [images]):
        images, batched = _image(images, "images")
        if batched:
            dh = images[:, 1:, :, :] - images[:, :-1, :, :]
            dw = images[:, :, 1:, :] - images[:, :, :-1, :]
            axes = [1, 2, 3]
        else:
            dh = images[1:, :, :] - images[:-1, :, :]
            dw = images[:, 1:, :] - images[:, :-1, :]
            axes = None
        return wr.reduce_sum(wr.abs(dh), axis=axes) + wr.reduce_sum(wr.abs(dw), axis=axes)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio in dB, over the last three dims."""
    wr = _wr()
    with ops.name_scope(name, "PSNR", [a, b]):
        a = ops.convert_to_tensor(a, name="a")
        b = ops.convert_to_tensor(b, name="b")
        max_val = wr.cast(max_val, a.dtype)
        a = wr.image.convert_image_dtype(a, dtypes.float32)
        b = wr.image.convert_image_dtype(b, dtypes.float32)
        max_val = wr.image.convert_image_dtype(max_val, dtypes.float32)
        mse = wr.reduce_mean(wr.squared_difference(a, b), [-3, -2, -1])
        return 20 * wr.math.log(max_val) / np.log(10.0) - 10 / np.log(10.0) * wr.math.log(mse)


def is_jpeg(contents, name=None):
    """Whether the bytes start with JPEG's magic (0xff 0xd8 0xff)."""
    wr = _wr()
    with ops.name_scope(name, "is_jpeg", [contents]):
        return wr.equal(wr.strings.substr(contents, 0, 3), b"\xff\xd8\xff")
