"""Summary ops (TF1's tf.summary.scalar / histogram / merge / merge_all): each
returns a scalar string tensor, a serialized Summary proto, which
FileWriter.add_summary writes to an event file for TensorBoard.

As TF1: the tag is the op's name scope (family, if given, prefixed again), so
two scalar("loss") in one graph are tagged "loss" and "loss_1"; summaries go in
the SUMMARIES collection (or `collections`), which merge_all merges.
"""
import contextlib
import re

from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = []  # reached as weir.summary.<name>, as TF1's tf.summary

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    """name with characters TensorBoard does not take replaced by "_" (and
    no leading "/"), as TF does."""
    if name is None:
        return None
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    return new_name


@contextlib.contextmanager
def summary_scope(name, family=None, default_name=None, values=None):
    """Yields (tag, scope) for a summary op: its name scope and tag."""
    name = _clean_tag(name)
    family = _clean_tag(family)
    scope_base_name = name if family is None else "%s/%s" % (family, name)
    with ops.name_scope(scope_base_name, default_name, values) as scope:
        if family is None:
            tag = scope.rstrip("/")
        else:
            tag = "%s/%s" % (family, scope.rstrip("/"))
        yield tag, scope


def _collect(summary, collections, default):
    for key in (collections if collections is not None else default):
        ops.add_to_collection(key, summary)


def scalar(name, tensor, collections=None, family=None):
    """A Summary with one simple_value: `tensor` (a real scalar) tagged with
    the summary's name scope."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = apply_op("ScalarSummary", scope, tags=tag, values=tensor)
    _collect(summary, collections, [ops.GraphKeys.SUMMARIES])
    return summary


def histogram(name, values, collections=None, family=None):
    """A Summary with a histogram of `values` (any shape; NaN or Inf is an
    InvalidArgumentError when it runs), TensorBoard's bucket layout."""
    with summary_scope(name, family, values=[values]) as (tag, scope):
        summary = apply_op("HistogramSummary", scope, tag=tag, values=values)
    _collect(summary, collections, [ops.GraphKeys.SUMMARIES])
    return summary


def merge(inputs, collections=None, name=None):
    """One Summary holding the values of every summary in `inputs`
    (InvalidArgumentError at run time if a tag repeats)."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("merge: no summaries to merge")
    summary = apply_op("MergeSummary", name, inputs=inputs)
    _collect(summary, collections, [])
    return summary


def merge_all(key=ops.GraphKeys.SUMMARIES, scope=None, name=None):
    """merge of every summary in collection `key` (of `scope`), or None when
    there is none."""
    summaries = ops.get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


# --- image and text summaries: Summary protos built in Python (a py_func) -----------------
# Weir has no ImageSummary / TensorSummaryV2 kernel: these run in the process that
# built the graph, as any py_func.

def _png(pixels):
    """PNG bytes of a [height, width, channels] uint8 array (channels 1, 3 or 4)."""
    import struct
    import zlib
    height, width, channels = pixels.shape
    color_type = {1: 0, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + pixels[row].tobytes() for row in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def _to_uint8(image):
    """TF's ImageSummary normalization of one float image: non-negative
    values scaled so the largest is 255; with negatives, 0 shifted to 128
    and the largest magnitude to 127 away from it; non-finite pixels red."""
    import numpy as np
    image = image.astype(np.float64)
    finite = np.isfinite(image)
    values = image[finite]
    low = values.min() if values.size else 0.0
    high = values.max() if values.size else 0.0
    if low < 0:
        bound = max(abs(low), abs(high))
        scale, offset = (127.0 / bound if bound >= 1e-6 else 0.0), 128.0
    else:
        scale, offset = (255.0 / high if high >= 1e-6 else 0.0), 0.0
    out = np.clip(np.where(finite, image, 0.0) * scale + offset, 0, 255).astype(np.uint8)
    bad = ~finite.all(axis=-1)
    if bad.any():
        out[bad] = np.array([255, 0, 0, 255], np.uint8)[:image.shape[-1]]  # TF's bad_color (grayscale: 255)
    return out


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A Summary of up to `max_outputs` images of `tensor` ([batch, height,
    width, channels], channels 1, 3 or 4; uint8, or floats normalized per
    image as TF does), PNG-encoded, tagged "<tag>/image/<i>" ("<tag>/image"
    when max_outputs is 1)."""
    from weir.ops import script_ops
    import numpy as np
    if max_outputs < 1:
        raise ValueError("max_outputs must be positive, got %r" % (max_outputs,))
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = ops.convert_to_tensor(tensor)
        if tensor.shape.ndims is not None and (tensor.shape.ndims != 4 or tensor.shape.as_list()[3] not in
                                               (None, 1, 3, 4)):
            raise ValueError("image summary %r needs a [batch, height, width, 1, 3 or 4] tensor, got %s"
                             % (tag, tensor.shape))

        def build(images):
            from weir.core import protos
            if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
                raise ValueError("image summary %r: the tensor must be [batch, height, width, 1, 3 or 4], "
                                 "got shape %s" % (tag, list(images.shape)))
            summary = protos.Summary()
            for i in range(min(images.shape[0], max_outputs)):
                pixels = images[i] if images.dtype == np.uint8 else _to_uint8(images[i])
                value = summary.value.add(tag="%s/image/%d" % (tag, i) if max_outputs > 1 else tag + "/image")
                value.image.height, value.image.width = pixels.shape[0], pixels.shape[1]
                value.image.colorspace = pixels.shape[2]
                value.image.encoded_image_string = _png(np.ascontiguousarray(pixels))
            return np.array(summary.SerializeToString(), dtype=object)
        summary = script_ops.py_func(build, [tensor], _string_dtype(), stateful=False, name=scope)
        summary.set_shape([])
    _collect(summary, collections, [ops.GraphKeys.SUMMARIES])
    return summary


def text(name, tensor, collections=None):
    """A Summary of the string tensor `tensor` for TensorBoard's text plugin
    (tagged with the summary's name scope)."""
    from weir.ops import script_ops
    import numpy as np
    with summary_scope(name, None, values=[tensor]) as (tag, scope):
        tensor = ops.convert_to_tensor(tensor)
        if tensor.dtype.base_dtype != _string_dtype():
            raise ValueError("text summary %r needs a string tensor, got %s" % (tag, tensor.dtype.name))

        def build(values):
            from weir.core import protos
            from weir.framework import tensor_util
            summary = protos.Summary()
            value = summary.value.add(tag=tag)
            value.metadata.plugin_data.plugin_name = "text"
            value.tensor.CopyFrom(tensor_util.make_tensor_proto(values))
            return np.array(summary.SerializeToString(), dtype=object)
        summary = script_ops.py_func(build, [tensor], _string_dtype(), stateful=False, name=scope)
        summary.set_shape([])
    _collect(summary, collections, [ops.GraphKeys.SUMMARIES])
    return summary


def _string_dtype():
    from weir.framework import dtypes
    return dtypes.string
