"""TF1's image preprocessing and augmentation (tf.image.*, tf.random_crop),
composed of weir's ops: per_image_standardization, flips (fixed and random,
one image [h, w, c] or a batch [n, h, w, c], a batch's images flipped apart),
random_crop, brightness and contrast (fixed and random), convert_image_dtype.
Random draws follow TF1's seed rules with weir's generator (the values differ
from TensorFlow's)."""
import numpy as np

from weir.framework import dtypes
from weir.framework import ops

__all__ = ["per_image_standardization", "flip_left_right", "flip_up_down", "random_flip_left_right",
           "random_flip_up_down", "random_crop", "adjust_brightness", "random_brightness",
           "adjust_contrast", "random_contrast", "convert_image_dtype"]


def _wr():
    import weir
    return weir


def _image(image, name="image"):
    image = ops.convert_to_tensor(image, name=name)
    ndims = image.shape.ndims
    if ndims is None or ndims not in (3, 4):
        raise ValueError("'image' (shape %s) must be three-dimensional [height, width, channels] or "
                         "four-dimensional [batch, height, width, channels]" % image.shape)
    return image


def per_image_standardization(image):
    """(image - mean) / max(stddev, 1/sqrt(N)) per image (N its element
    count), as float32."""
    wr = _wr()
    with ops.name_scope(None, "per_image_standardization", [image]):
        image = _image(image)
        if image.dtype.base_dtype != dtypes.float32:
            image = wr.cast(image, wr.float32)
        axes = [-1, -2, -3]
        count = wr.cast(wr.reduce_prod(wr.shape(image)[-3:]), wr.float32)
        mean = wr.reduce_mean(image, axis=axes, keepdims=True)
        stddev = wr.sqrt(wr.reduce_mean(wr.square(image - mean), axis=axes, keepdims=True))
        return (image - mean) / wr.maximum(stddev, wr.rsqrt(count))


def _flip(image, width_axis, name):
    wr = _wr()
    with ops.name_scope(None, name, [image]):
        image = _image(image)
        axis = width_axis + (1 if image.shape.ndims == 4 else 0)
        return wr.reverse(image, [axis])


def flip_left_right(image):
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, width_axis, seed, name):
    wr = _wr()
    with ops.name_scope(None, name, [image]):
        image = _image(image)
        batched = image.shape.ndims == 4
        axis = width_axis + (1 if batched else 0)
        flipped = wr.reverse(image, [axis])
        if not batched:
            return wr.cond(wr.random_uniform([], seed=seed) < 0.5, lambda: flipped, lambda: image)
        n = wr.shape(image)[0]
        mask = wr.reshape(wr.random_uniform([n], seed=seed) < 0.5, [-1, 1, 1, 1])
        return wr.where(wr.broadcast_to(mask, wr.shape(image)), flipped, image)


def random_flip_left_right(image, seed=None):
    """The image mirrored across its width with probability 1/2 (each image of a batch apart)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """The image mirrored across its height with probability 1/2 (each image of a batch apart)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def random_crop(value, size, seed=None, name=None):
    """A slice of `value` of shape `size` at a uniformly random offset
    (InvalidArgumentError when `size` exceeds value's shape)."""
    wr = _wr()
    with ops.name_scope(name, "random_crop", [value, size]):
        value = ops.convert_to_tensor(value, name="value")
        size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = wr.shape(value)
        check = wr.Assert(wr.reduce_all(shape >= size), ["Need value.shape >= size, got ", shape, size],
                          summarize=1000)
        with ops.control_dependencies([check]):
            limit = shape - size + 1
        offset = wr.random_uniform(wr.shape(shape), dtype=wr.int32, maxval=2 ** 31 - 1, seed=seed) % limit
        return wr.slice(value, offset, size)


def adjust_brightness(image, delta):
    """image + delta (in the image's float dtype; integers through float32)."""
    wr = _wr()
    with ops.name_scope(None, "adjust_brightness", [image, delta]):
        image = ops.convert_to_tensor(image, name="image")
        if image.dtype.is_floating:
            return image + wr.cast(delta, image.dtype)
        return convert_image_dtype(convert_image_dtype(image, wr.float32) + delta, image.dtype, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta uniform in [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _wr().random_uniform([], -max_delta, max_delta, seed=seed))


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, the mean of each channel over
    the image's height and width (integer images through float32 in [0, 1],
    as adjust_brightness)."""
    wr = _wr()
    with ops.name_scope(None, "adjust_contrast", [images, contrast_factor]):
        images = _image(images, "images")
        dtype = images.dtype.base_dtype
        x = images if dtype.is_floating else convert_image_dtype(images, wr.float32)
        mean = wr.reduce_mean(x, axis=[-3, -2], keepdims=True)
        out = (x - mean) * wr.cast(contrast_factor, x.dtype) + mean
        return out if dtype.is_floating else convert_image_dtype(out, dtype, saturate=True)


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor uniform in [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, _wr().random_uniform([], lower, upper, seed=seed))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """The image in another dtype, rescaled: integers span [0, max], floats
    [0, 1] (uint8 -> float32 divides by 255; float32 -> uint8 multiplies by
    255.5 and truncates, as TF)."""
    wr = _wr()
    with ops.name_scope(name, "convert_image", [image]):
        image = ops.convert_to_tensor(image, name="image")
        dtype = dtypes.as_dtype(dtype).base_dtype
        source = image.dtype.base_dtype
        if source == dtype:
            return wr.identity(image)
        if source.is_integer and dtype.is_integer:
            scale_in, scale_out = source.max + 1, dtype.max + 1
            if scale_in > scale_out:
                return wr.cast(wr.floordiv(image, scale_in // scale_out), dtype)
            return wr.cast(image, dtype) * (scale_out // scale_in)
        if source.is_floating and dtype.is_floating:
            return wr.cast(image, dtype)
        if source.is_integer:
            return wr.cast(image, dtype) * np.float64(1.0 / source.max).astype(dtype.as_numpy_dtype)
        scaled = image * (dtype.max + 0.5)
        if saturate:
            scaled = wr.clip_by_value(scaled, 0.0, float(dtype.max))
        return wr.cast(scaled, dtype)


def _static_or_dynamic_hwc(image):
    """(height, width, channels) of an image or a batch's images: ints where
    the shape is known, scalar tensors otherwise."""
    wr = _wr()
    dims = image.shape.as_list()[-3:]
    dynamic = wr.shape(image)
    rank = image.shape.ndims
    return [d if d is not None else dynamic[rank - 3 + i] for i, d in enumerate(dims)]


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """image[offset_height : offset_height + target_height, offset_width : ... + target_width]
    (InvalidArgumentError when the box leaves the image)."""
    wr = _wr()
    with ops.name_scope(None, "crop_to_bounding_box", [image]):
        image = _image(image)
        height, width, _ = _static_or_dynamic_hwc(image)
        checks = [wr.assert_non_negative(offset_height, message="offset_height must be >= 0"),
                  wr.assert_non_negative(offset_width, message="offset_width must be >= 0"),
                  wr.assert_less_equal(offset_height + target_height, height,
                                       message="height must be >= target + offset."),
                  wr.assert_less_equal(offset_width + target_width, width,
                                       message="width must be >= target + offset.")]
        with ops.control_dependencies(checks):
            image = wr.identity(image)
        if image.shape.ndims == 3:
            return image[offset_height:offset_height + target_height, offset_width:offset_width + target_width]
        return image[:, offset_height:offset_height + target_height, offset_width:offset_width + target_width]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The image placed at (offset_height, offset_width) in a zero image of
    target_height x target_width (InvalidArgumentError when it does not fit)."""
    wr = _wr()
    with ops.name_scope(None, "pad_to_bounding_box", [image]):
        image = _image(image)
        height, width, _ = _static_or_dynamic_hwc(image)
        after_h = target_height - offset_height - height
        after_w = target_width - offset_width - width
        checks = [wr.assert_non_negative(offset_height, message="offset_height must be >= 0"),
                  wr.assert_non_negative(offset_width, message="offset_width must be >= 0"),
                  wr.assert_non_negative(after_h, message="height must be <= target - offset"),
                  wr.assert_non_negative(after_w, message="width must be <= target - offset")]
        with ops.control_dependencies(checks):
            paddings = wr.stack([wr.stack([offset_height, after_h]), wr.stack([offset_width, after_w]), [0, 0]])
            if image.shape.ndims == 4:
                paddings = wr.concat([[[0, 0]], paddings], 0)
            padded = wr.pad(image, paddings)
        if isinstance(target_height, int) and isinstance(target_width, int):
            shape = [target_height, target_width, image.shape.as_list()[-1]]
            padded.set_shape(image.shape.as_list()[:1] + shape if image.shape.ndims == 4 else shape)
        return padded


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """The image centrally cropped and/or zero-padded to target_height x
    target_width (TF's offsets: the crop's and the pad's halves rounded down)."""
    wr = _wr()
    for value, what in ((target_height, "target_height"), (target_width, "target_width")):
        if isinstance(value, int) and value <= 0:
            raise ValueError("%s must be > 0." % what)  # TF's check of static sizes
    with ops.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = _image(image)
        height, width, _ = _static_or_dynamic_hwc(image)

        def max_(a, b):
            return max(a, b) if isinstance(a, int) and isinstance(b, int) else wr.maximum(a, b)

        def min_(a, b):
            return min(a, b) if isinstance(a, int) and isinstance(b, int) else wr.minimum(a, b)
        diff_w, diff_h = target_width - width, target_height - height
        crop_w, crop_h = max_(-diff_w // 2, 0), max_(-diff_h // 2, 0)
        pad_w, pad_h = max_(diff_w // 2, 0), max_(diff_h // 2, 0)
        cropped = crop_to_bounding_box(image, crop_h, crop_w, min_(target_height, height),
                                       min_(target_width, width))
        return pad_to_bounding_box(cropped, pad_h, pad_w, target_height, target_width)


def central_crop(image, central_fraction):
    """The central `central_fraction` (0, 1] of the image's height and width."""
    wr = _wr()
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    with ops.name_scope(None, "central_crop", [image]):
        image = _image(image)
        if central_fraction == 1.0:
            return image
        height, width, _ = image.shape.as_list()[-3:]
        if height is None or width is None:
            raise NotImplementedError("central_crop needs the image's height and width known "
                                      "when the graph is built in weir")
        start_h = int((height - height * central_fraction) / 2)
        start_w = int((width - width * central_fraction) / 2)
        return crop_to_bounding_box(image, start_h, start_w, height - 2 * start_h, width - 2 * start_w)


def rgb_to_grayscale(images, name=None):
    """The luma of RGB images (0.2989 R + 0.5870 G + 0.1140 B) with a last
    dimension of 1, in the images' dtype."""
    wr = _wr()
    with ops.name_scope(name, "rgb_to_grayscale", [images]):
        images = ops.convert_to_tensor(images, name="images")
        dtype = images.dtype.base_dtype
        flt = convert_image_dtype(images, wr.float32)
        gray = wr.reduce_sum(flt * [0.2989, 0.5870, 0.1140], axis=-1, keepdims=True)
        return convert_image_dtype(gray, dtype)


__all__ += ["crop_to_bounding_box", "pad_to_bounding_box", "resize_image_with_crop_or_pad", "central_crop",
            "rgb_to_grayscale"]
