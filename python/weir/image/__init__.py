"""weir.image: tf.compat.v1.image's resizing (see weir.ops.image_ops)."""
from weir.ops.image_ops import (  # noqa: F401
    ResizeMethod, crop_and_resize, resize, resize_bicubic, resize_bilinear, resize_images,
    resize_nearest_neighbor)

__all__ = ["ResizeMethod", "crop_and_resize", "resize", "resize_bicubic", "resize_bilinear", "resize_images",
           "resize_nearest_neighbor"]
