"""Image codecs, colour adjustments and non-max suppression as tf.image /
tf.io have them: decode_jpeg, decode_png, decode_image, decode_and_crop_jpeg,
encode_jpeg, encode_png, extract_jpeg_shape (ops DecodeJpeg ... ; every
decoder sniffs the format, as TensorFlow 2's do), rgb_to_hsv, hsv_to_rgb,
adjust_hue, adjust_saturation, random_hue, random_saturation,
grayscale_to_rgb, non_max_suppression (V3), non_max_suppression_with_scores
(V5, Soft-NMS) and non_max_suppression_padded (V4, one batch of boxes).
Random draws follow TF1's seed rules with weir's generator (the values differ
from TensorFlow's)."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["decode_jpeg", "decode_bmp", "resize_area", "decode_png", "decode_image", "decode_and_crop_jpeg", "encode_jpeg",
           "encode_png", "extract_jpeg_shape", "rgb_to_hsv", "hsv_to_rgb",
           "adjust_hue", "adjust_saturation", "random_hue", "random_saturation",
           "grayscale_to_rgb", "non_max_suppression", "non_max_suppression_with_scores",
           "non_max_suppression_padded"]


def _wr():
    import weir
    return weir


def _contents(contents):
    return ops.convert_to_tensor(contents, dtype=dtypes.string, name="contents")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG (or PNG) string to a uint8 [height, width, channels] image."""
    return apply_op("DecodeJpeg", name, contents=_contents(contents), channels=channels,
                    ratio=ratio, fancy_upscaling=fancy_upscaling,
                    try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                         name=None):
    """decode_jpeg, then the window crop_window = [y, x, height, width]."""
    return apply_op("DecodeAndCropJpeg", name, contents=_contents(contents),
                    crop_window=ops.convert_to_tensor(crop_window, dtype=dtypes.int32,
                                                      name="crop_window"),
                    channels=channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
                    try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method)


def decode_bmp(contents, channels=0, name=None):
    """An uncompressed 8, 24 or 32-bit BMP (or a JPEG or PNG) string to uint8 [h, w, c]."""
    return apply_op("DecodeBmp", name, contents=_contents(contents), channels=channels)


def resize_area(images, size, align_corners=False, name=None):
    """Resizes images [batch, h, w, c] to size by area averaging (float32 out)."""
    return apply_op("ResizeArea", name, images=images,
                    size=ops.convert_to_tensor(size, dtype=dtypes.int32, name="size"),
                    align_corners=align_corners)


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A PNG (or JPEG) string to a uint8 or uint16 [height, width, channels] image."""
    return apply_op("DecodePng", name, contents=_contents(contents), channels=channels,
                    dtype=dtypes.as_dtype(dtype))


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """A JPEG or PNG string to [height, width, channels] of dtype (uint8 and
    uint16 as stored, floats scaled to [0, 1])."""
    dtype = dtypes.as_dtype(dtype)
    channels = 0 if channels is None else channels
    if dtype in (dtypes.uint8, dtypes.uint16, dtypes.float32):
        return apply_op("DecodeImage", name, contents=_contents(contents), channels=channels,
                        dtype=dtype, expand_animations=expand_animations)
    from weir.ops.image_augment import convert_image_dtype
    with ops.name_scope(name, "decode_image", [contents]):
        wide = apply_op("DecodeImage", None, contents=_contents(contents), channels=channels,
                        dtype=dtypes.uint16, expand_animations=expand_animations)
        return convert_image_dtype(wide, dtype)


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """A uint8 [height, width, 1 or 3] image to a JPEG string."""
    return apply_op("EncodeJpeg", name, image=image, format=format, quality=quality,
                    progressive=progressive, optimize_size=optimize_size,
                    chroma_downsampling=chroma_downsampling, density_unit=density_unit,
                    x_density=x_density, y_density=y_density, xmp_metadata=xmp_metadata)


def encode_png(image, compression=-1, name=None):
    """A uint8 or uint16 [height, width, 1..4] image to a PNG string."""
    return apply_op("EncodePng", name, image=image, compression=compression)


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """[height, width, channels] of a JPEG, from its header."""
    return apply_op("ExtractJpegShape", name, contents=_contents(contents),
                    output_type=dtypes.as_dtype(output_type))


def rgb_to_hsv(images, name=None):
    """RGB in [0, 1] to hue, saturation and value in [0, 1] (last dimension)."""
    return apply_op("RGBToHSV", name, images=images)


def hsv_to_rgb(images, name=None):
    """rgb_to_hsv's inverse."""
    return apply_op("HSVToRGB", name, images=images)


def _through_float(op_type, image, amount, input_name, name, scope):
    """op_type on the image in float32 (float16 and float32 as they are),
    back in the image's dtype, as TensorFlow's adjust_hue / saturation."""
    from weir.ops.image_augment import convert_image_dtype
    with ops.name_scope(name, scope, [image]):
        image = ops.convert_to_tensor(image, name="image")
        dtype = image.dtype.base_dtype
        flt = image if dtype in (dtypes.float16, dtypes.float32) else convert_image_dtype(
            image, dtypes.float32)
        amount = ops.convert_to_tensor(amount, dtype=dtypes.float32, name=input_name)
        out = apply_op(op_type, None, images=flt, **{input_name: amount})
        return convert_image_dtype(out, dtype)


def adjust_hue(image, delta, name=None):
    """Adds delta to the hue of RGB images (the hue wraps around)."""
    return _through_float("AdjustHue", image, delta, "delta", name, "adjust_hue")


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the saturation of RGB images by saturation_factor."""
    return _through_float("AdjustSaturation", image, saturation_factor, "scale", name,
                          "adjust_saturation")


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta uniform in [-max_delta, max_delta), max_delta in [0, 0.5]."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _wr().random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor uniform in [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, _wr().random_uniform([], lower, upper, seed=seed))


def grayscale_to_rgb(images, name=None):
    """Repeats the single channel of grayscale images three times."""
    wr = _wr()
    with ops.name_scope(name, "grayscale_to_rgb", [images]):
        images = ops.convert_to_tensor(images, name="images")
        last = images.shape.dims[-1] if images.shape.ndims else None
        if last is not None and int(last) != 1:
            raise ValueError("grayscale_to_rgb: the last dimension of images %s must be 1"
                             % images.shape)
        rank = wr.rank(images)
        multiples = wr.concat([wr.ones([rank - 1], dtypes.int32), [3]], 0)
        return wr.tile(images, multiples)


def _nms_inputs(boxes, scores, max_output_size):
    boxes = ops.convert_to_tensor(boxes, name="boxes")
    scores = ops.convert_to_tensor(scores, dtype=boxes.dtype.base_dtype, name="scores")
    size = ops.convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
    return boxes, scores, size


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices of at most max_output_size boxes [y1, x1, y2, x2], greedily by
    descending score, none overlapping an earlier one by IoU > iou_threshold,
    all scoring above score_threshold (op NonMaxSuppressionV3)."""
    with ops.name_scope(name, "non_max_suppression", [boxes, scores]):
        boxes, scores, size = _nms_inputs(boxes, scores, max_output_size)
        return apply_op("NonMaxSuppressionV3", None, boxes=boxes, scores=scores,
                        max_output_size=size,
                        iou_threshold=ops.convert_to_tensor(iou_threshold, dtype=dtypes.float32),
                        score_threshold=ops.convert_to_tensor(score_threshold,
                                                              dtype=dtypes.float32))


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """(selected_indices, selected_scores): non_max_suppression with
    Soft-NMS when soft_nms_sigma > 0 (op NonMaxSuppressionV5)."""
    with ops.name_scope(name, "non_max_suppression_with_scores", [boxes, scores]):
        boxes, scores, size = _nms_inputs(boxes, scores, max_output_size)
        dtype = boxes.dtype.base_dtype
        indices, selected_scores, _ = apply_op(
            "NonMaxSuppressionV5", None, boxes=boxes, scores=scores, max_output_size=size,
            iou_threshold=ops.convert_to_tensor(iou_threshold, dtype=dtype),
            score_threshold=ops.convert_to_tensor(score_threshold, dtype=dtype),
            soft_nms_sigma=ops.convert_to_tensor(soft_nms_sigma, dtype=dtype),
            pad_to_max_output_size=False)
        return indices, selected_scores


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False, canonicalized_coordinates=False,
                               tile_size=512):
    """(selected_indices, valid_outputs) for one set of boxes [num_boxes, 4]
    (op NonMaxSuppressionV4): with pad_to_max_output_size the indices are
    padded with zeros to max_output_size. TensorFlow's batched form (boxes
    [batch, num_boxes, 4]) is not supported."""
    del sorted_input, canonicalized_coordinates, tile_size  # hints of the batched algorithm
    with ops.name_scope(name, "non_max_suppression_padded", [boxes, scores]):
        boxes, scores, size = _nms_inputs(boxes, scores, max_output_size)
        if boxes.shape.ndims is not None and boxes.shape.ndims != 2:
            raise ValueError("non_max_suppression_padded: weir supports boxes [num_boxes, 4] "
                             "only, got shape %s" % boxes.shape)
        return tuple(apply_op(
            "NonMaxSuppressionV4", None, boxes=boxes, scores=scores, max_output_size=size,
            iou_threshold=ops.convert_to_tensor(iou_threshold, dtype=dtypes.float32),
            score_threshold=ops.convert_to_tensor(score_threshold, dtype=dtypes.float32),
            pad_to_max_output_size=pad_to_max_output_size))
