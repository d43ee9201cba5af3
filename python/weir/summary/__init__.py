"""weir.summary (TF1's tf.summary): scalar, histogram, image, text, merge, merge_all and
FileWriter; Summary, Event and SessionLog are the proto classes (loaded with
protobuf on first use)."""
from weir.ops.summary_ops import scalar, histogram, image, merge, merge_all, text  # noqa: F401
from weir.summary.writer import FileWriter, FileWriterCache, summary_iterator  # noqa: F401

# The proto classes are left out of __all__: a star import must not load protobuf.
__all__ = ["scalar", "histogram", "image", "text", "merge", "merge_all", "FileWriter", "FileWriterCache", "summary_iterator"]

_PROTOS = ("Summary", "Event", "SessionLog", "SummaryDescription", "HistogramProto",
           "SummaryMetadata", "TaggedRunMetadata")


def __getattr__(name):
    if name in _PROTOS:
        from weir.core import protos
        return getattr(protos, name)
    raise AttributeError("module 'weir.summary' has no attribute %r" % name)
