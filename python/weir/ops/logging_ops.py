"""Printing ops: TF1's tf.Print (a pass-through that prints) and TF2's
tf.print / tf.strings.format (StringFormat then PrintV2), writing what
TensorFlow writes for the same tensors."""
import sys

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["Print", "print", "string_format"]


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """Returns `input_`; each time it runs (the first `first_n` times when
    given) writes `message` and each tensor of `data` ("[1 2 3...]", the
    first `summarize` entries, default 3, all if negative) to stderr."""
    with ops.name_scope(name, "Print", [input_, data]) as scope:
        items = [d if isinstance(d, ops.Tensor) else ops.convert_to_tensor(d) for d in data]
        return apply_op("Print", scope, input=input_, data=items,
                        message="" if message is None else str(message),
                        first_n=-1 if first_n is None else int(first_n),
                        summarize=3 if summarize is None else int(summarize))


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """A scalar string: `template` with each `placeholder` replaced by the
    next tensor of `inputs` as tf.print shows it (tf.strings.format)."""
    if isinstance(inputs, (list, tuple)):
        inputs = list(inputs)
    else:
        inputs = [inputs]
    with ops.name_scope(name, "StringFormat", inputs) as scope:
        items = [t if isinstance(t, ops.Tensor) else ops.convert_to_tensor(t) for t in inputs]
        return apply_op("StringFormat", scope, inputs=items, template=template,
                        placeholder=placeholder,
                        summarize=-1 if summarize is None else int(summarize))


_STREAMS = ("stderr", "stdout", "log(info)", "log(warning)", "log(error)")


def _stream_name(output_stream):
    """PrintV2's output_stream for tf.print's: sys.stderr, sys.stdout, a
    'file://<path>', or one of PrintV2's own names."""
    if output_stream is sys.stderr:
        return "stderr"
    if output_stream is sys.stdout:
        return "stdout"
    if isinstance(output_stream, str) and (output_stream in _STREAMS
                                           or output_stream.startswith("file://")):
        return output_stream
    raise ValueError("Unsupported output stream %r: use sys.stdout, sys.stderr, 'file://<path>' "
                     "or one of %s" % (output_stream, ", ".join(_STREAMS)))


def _placeholder_for(strings):
    """'{}' unless one of the literal strings holds it."""
    candidate, k = "{}", 0
    while any(candidate in s for s in strings):
        k += 1
        candidate = "{%s%d}" % ("__weir_print_", k)
    return candidate


def print(*inputs, **kwargs):  # noqa: A001  (tf.print's name)
    """tf.print: writes the inputs separated by `sep` and followed by `end`:
    Python strings as they are, tensors as StringFormat shows them, lists
    and dicts in Python's brackets around them. Returns the PrintV2 op (in a
    graph, run it or make something depend on it)."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unrecognized keyword arguments for wr.print: %s" % sorted(kwargs))
    stream = _stream_name(output_stream)
    only = inputs[0] if len(inputs) == 1 else None
    if isinstance(only, ops.Tensor) and only.dtype == dtypes.string and only.shape.rank == 0:
        # One scalar string tensor is written as it is, unquoted (as tf.print).
        with ops.name_scope(name, "PrintV2", [only]) as scope:
            return apply_op("PrintV2", scope, input=only, output_stream=stream, end=end)
    literals = []

    def collect(value):
        if isinstance(value, str):
            literals.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                literals.append(repr(k))
                collect(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                collect(v)

    for value in inputs:
        collect(value)
    placeholder = _placeholder_for(literals + [sep])
    tensors = []

    def template_of(value, top):
        if isinstance(value, str):
            return value if top else repr(value)
        if isinstance(value, dict):
            return "{" + ", ".join("%r: %s" % (k, template_of(v, False))
                                   for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(template_of(v, False) for v in value) + "]"
        if isinstance(value, tuple):
            return "(" + ", ".join(template_of(v, False) for v in value) + ")"
        if isinstance(value, ops.Tensor):
            tensors.append(value)
        elif hasattr(value, "value") and callable(getattr(value, "value")):
            tensors.append(value.value())  # a variable: its value
        else:
            tensors.append(ops.convert_to_tensor(value))
        return placeholder

    template = sep.join(template_of(v, True) for v in inputs)
    with ops.name_scope(name, "PrintV2", tensors) as scope:
        formatted = apply_op("StringFormat", None, inputs=tensors, template=template,
                             placeholder=placeholder,
                             summarize=-1 if summarize is None else int(summarize))
        return apply_op("PrintV2", scope, input=formatted, output_stream=stream, end=end)
