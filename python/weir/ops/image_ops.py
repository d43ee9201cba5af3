"""Image resizing (tf.compat.v1.image): resize_bilinear, resize_bicubic,
resize_nearest_neighbor and resize (v1's resize_images, with `method`), on the
ResizeBilinear, ResizeBicubic and ResizeNearestNeighbor ops. Images are [batch, height, width, channels] or
one [height, width, channels] image; size is [new_height, new_width].
"""
import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = []


class ResizeMethod(object):
    """tf.compat.v1.image.ResizeMethod's values."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _size_tensor(size):
    return ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Resize `images` [batch, h, w, c] to `size` by bilinear interpolation; float32 out."""
    return apply_op("ResizeBilinear", name, images=images, size=_size_tensor(size),
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """Resize `images` [batch, h, w, c] to `size` by copying the nearest pixel."""
    return apply_op("ResizeNearestNeighbor", name, images=images, size=_size_tensor(size),
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Resize `images` [batch, h, w, c] to `size` by Keys' cubic convolution
    (TensorFlow's ResizeBicubic); float32 out."""
    return apply_op("ResizeBicubic", name, images=images, size=_size_tensor(size),
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0.0, name=None, box_indices=None):
    """For each box b (normalized [y1, x1, y2, x2]) of image box_indices[b], the
    box resampled to crop_size [rows, cols] by bilinear interpolation or the
    nearest pixel, float32 [num_boxes, rows, cols, depth]; samples outside the
    image are extrapolation_value (tf.image.crop_and_resize; op CropAndResize)."""
    if box_ind is not None and box_indices is not None:
        raise ValueError("crop_and_resize: give box_ind or box_indices, not both")
    box_ind = box_indices if box_ind is None else box_ind
    if box_ind is None or crop_size is None:
        raise TypeError("crop_and_resize needs box_indices (box_ind) and crop_size")
    with ops.name_scope(name, "crop_and_resize", [image, boxes, box_ind]) as scope:
        return apply_op("CropAndResize", scope, image=image,
                        boxes=ops.convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes"),
                        box_ind=ops.convert_to_tensor(box_ind, dtype=dtypes.int32,
                                                      name="box_ind"),
                        crop_size=_size_tensor(crop_size), method=method,
                        extrapolation_value=float(extrapolation_value))


_METHODS = {
    ResizeMethod.BILINEAR: "ResizeBilinear",
    ResizeMethod.NEAREST_NEIGHBOR: "ResizeNearestNeighbor",
    ResizeMethod.BICUBIC: "ResizeBicubic",
    ResizeMethod.AREA: "ResizeArea",
    "bilinear": "ResizeBilinear",
    "nearest": "ResizeNearestNeighbor",
    "bicubic": "ResizeBicubic",
    "area": "ResizeArea",
}


def _static_size(size):
    """size as two Python ints when it is a constant, else None."""
    if isinstance(size, ops.Tensor):
        return None
    values = np.asarray(size).ravel()
    if values.size != 2:
        raise ValueError("'size' must be a 1-D int32 Tensor of 2 elements: new_height, "
                         "new_width, got %r" % (size,))
    return [int(v) for v in values]


def resize(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
           preserve_aspect_ratio=False, name=None):
    """tf.compat.v1.image.resize (resize_images): `method` BILINEAR,
    NEAREST_NEIGHBOR, BICUBIC or AREA. The result is float32 for bilinear,
    bicubic and area, the images' dtype for nearest; a size equal to the images'
    static size returns them unchanged, as TF1 does."""
    op_type = _METHODS.get(method)
    if op_type is None:
        raise NotImplementedError("resize method %r is not supported by weir (BILINEAR, "
                                  "NEAREST_NEIGHBOR, BICUBIC and AREA are)" % (method,))
    with ops.name_scope(name, "resize", [images, size]) as scope:
        images = ops.convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        if rank is None or rank not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions, got %s" %
                             (images.shape,))
        batched = rank == 4
        if not batched:
            images = apply_op("ExpandDims", None, input=images,
                              dim=ops.convert_to_tensor(np.int32(0)))
        height, width = images.shape.as_list()[1:3]
        static = _static_size(size)
        if preserve_aspect_ratio:
            if static is None or height is None or width is None:
                raise NotImplementedError("preserve_aspect_ratio needs static image and "
                                          "target sizes in weir")
            scale = min(static[0] / float(height), static[1] / float(width))
            static = [int(np.float32(scale) * np.float32(height)),
                      int(np.float32(scale) * np.float32(width))]
            size = static
        if static is not None and static == [height, width]:
            result = images
        else:
            result = apply_op(op_type, None, images=images, size=_size_tensor(size),
                              align_corners=align_corners)
        if not batched:
            return apply_op("Squeeze", scope, input=result, squeeze_dims=[0])
        return apply_op("Identity", scope, input=result)


resize_images = resize
