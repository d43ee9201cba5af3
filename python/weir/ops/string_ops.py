"""Regular expressions on string tensors (RE2 syntax), as TensorFlow's
tf.strings.regex_full_match and tf.strings.regex_replace (TF1's
tf.regex_replace): a pattern given as a Python str or bytes is an attr of a
Static* op, compiled once when the graph first runs; a tensor pattern is an
input, compiled when it changes."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["regex_replace"]

_STATIC = (str, bytes)


def _string(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.string, name=name)


def regex_full_match(input, pattern, name=None):  # noqa: A002  (TF's argument name)
    """A bool tensor of `input`'s shape: whether each string matches the RE2
    `pattern` as a whole. An invalid pattern is an InvalidArgumentError naming
    the node and RE2's complaint."""
    if isinstance(pattern, _STATIC):
        return apply_op("StaticRegexFullMatch", name, input=_string(input, "input"),
                        pattern=pattern)
    return apply_op("RegexFullMatch", name, input=_string(input, "input"),
                    pattern=_string(pattern, "pattern"))


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """`input` with the matches of the RE2 `pattern` replaced by `rewrite`
    (\\1..\\9 insert groups, \\0 the whole match): every non-overlapping match,
    or the first one when `replace_global` is False."""
    if isinstance(pattern, _STATIC) and isinstance(rewrite, _STATIC):
        return apply_op("StaticRegexReplace", name, input=_string(input, "input"),
                        pattern=pattern, rewrite=rewrite, replace_global=bool(replace_global))
    return apply_op("RegexReplace", name, input=_string(input, "input"),
                    pattern=_string(pattern, "pattern"), rewrite=_string(rewrite, "rewrite"),
                    replace_global=bool(replace_global))


def string_length(input, name=None, unit="BYTE"):  # noqa: A002
    """The length of each string in bytes (unit="BYTE") or UTF-8 characters
    (unit="UTF8_CHAR"), as int32."""
    return apply_op("StringLength", name, input=_string(input, "input"), unit=unit)


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002  (TF's argument names)
    """input[pos : pos + len] per string, in bytes or UTF-8 characters; a
    negative pos counts from the end, and pos past the end is an error. pos
    and len have one shape and broadcast against input."""
    with ops.name_scope(name, "Substr", [input, pos, len]) as scope:
        pos = ops.convert_to_tensor(pos, name="pos")
        len = ops.convert_to_tensor(len, dtype=pos.dtype.base_dtype, name="len")  # noqa: A001
        return apply_op("Substr", scope, input=_string(input, "input"), pos=pos, len=len,
                        unit=unit)


__all__ += ["string_length", "substr"]
