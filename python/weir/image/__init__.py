"""weir.image: tf.compat.v1.image's codecs, colour ops and non-max suppression
(weir.ops.image_codec_ops), resizing (see weir.ops.image_ops) and
preprocessing (standardization, flips, crops, brightness, contrast, dtype
conversion: weir.ops.image_augment)."""
from weir.ops.image_ops import (  # noqa: F401
    ResizeMethod, crop_and_resize, resize, resize_bicubic, resize_bilinear, resize_images,
    resize_nearest_neighbor)
from weir.ops.image_augment import (  # noqa: F401
    adjust_brightness, adjust_contrast, convert_image_dtype, flip_left_right, flip_up_down,
    per_image_standardization, random_brightness, random_contrast, random_crop,
    random_flip_left_right, random_flip_up_down, crop_to_bounding_box, pad_to_bounding_box,
    resize_image_with_crop_or_pad, central_crop, rgb_to_grayscale)
from weir.ops.image_codec_ops import (  # noqa: F401
    decode_jpeg, decode_png, decode_image, decode_and_crop_jpeg, encode_jpeg, encode_png,
    extract_jpeg_shape, rgb_to_hsv, hsv_to_rgb, adjust_hue, adjust_saturation, random_hue,
    random_saturation, grayscale_to_rgb, non_max_suppression, non_max_suppression_with_scores,
    non_max_suppression_padded, decode_bmp, resize_area)
from weir.ops import image_codec_ops as _codec
from weir.ops.nn3d_ops import extract_image_patches, extract_patches  # noqa: F401

__all__ = ["ResizeMethod", "crop_and_resize", "resize", "resize_bicubic", "resize_bilinear",
           "resize_images", "resize_nearest_neighbor", "adjust_brightness", "adjust_contrast",
           "convert_image_dtype", "flip_left_right", "flip_up_down", "per_image_standardization",
           "random_brightness", "random_contrast", "random_crop", "random_flip_left_right",
           "random_flip_up_down", "crop_to_bounding_box", "pad_to_bounding_box",
           "resize_image_with_crop_or_pad", "central_crop", "rgb_to_grayscale"] + _codec.__all__ + ["extract_image_patches", "extract_patches"]
from weir.ops.image_extra_ops import *  # noqa: F401,F403,E402  (TF's composed tf.image functions)
