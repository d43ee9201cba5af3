"""weir.compat: tf.compat — v1 (everything weir exports, so that
`import weir.compat.v1 as tf` and `wr.compat.v1.X` work) and the string
helpers TF1 scripts use (as_bytes, as_text, as_str, as_str_any, path_to_str)."""
import os as _os

from weir.compat import v1  # noqa: F401

__all__ = ["v1", "as_bytes", "as_text", "as_str", "as_str_any", "path_to_str", "bytes_or_text_types"]

bytes_or_text_types = (bytes, str)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """bytes as they are, str encoded; anything else is a TypeError."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def as_text(bytes_or_text, encoding="utf-8"):
    """str as it is, bytes decoded; anything else is a TypeError."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    return as_text(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    return _os.fspath(path) if isinstance(path, _os.PathLike) else path
