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
