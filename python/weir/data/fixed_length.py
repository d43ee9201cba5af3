"""tf.data.FixedLengthRecordDataset (tf1api), read in Python like
TextLineDataset: each file's header_bytes are skipped, then records of
record_bytes are read until footer_bytes are left; a last partial record
(the body not a multiple of record_bytes) is dropped, as TensorFlow drops it."""
import numpy as np

from weir.data.dataset import Dataset, _filename_source
from weir.framework import dtypes
from weir.framework import tensor_shape

__all__ = ["FixedLengthRecordDataset"]


def _count(value, what, minimum):
    if value is None:
        return 0
    try:
        value = int(value)
    except (TypeError, ValueError):
        raise TypeError("FixedLengthRecordDataset: %s must be an integer, got %r"
                        % (what, value)) from None
    if value < minimum:
        raise ValueError("FixedLengthRecordDataset: %s must be %s, got %d"
                         % (what, "greater than zero" if minimum else ">= 0", value))
    return value


def FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None,  # noqa: N802
                             footer_bytes=None, buffer_size=None, compression_type=None,
                             num_parallel_reads=None, name=None):
    """The fixed-length records of the files, as string scalars."""
    record = _count(record_bytes, "record_bytes", 1)
    header = _count(header_bytes, "header_bytes", 0)
    footer = _count(footer_bytes, "footer_bytes", 0)
    if compression_type:
        raise NotImplementedError("FixedLengthRecordDataset(compression_type=...) is not "
                                  "supported by weir")
    inputs, names = _filename_source(filenames)

    def make(values):
        for fname in names(values):
            with open(fname, "rb") as f:
                data = f.read()
            end = len(data) - footer
            body = end - header
            if body < 0 or body % record:
                from weir.framework import errors
                raise errors.InvalidArgumentError(
                    None, None, "Excluding the header (%d bytes) and footer (%d bytes), input "
                    "file \"%s\" has body length %d bytes, which is not an exact multiple of "
                    "the record length (%d bytes)." % (header, footer, fname, body, record))
            pos = header
            while pos + record <= end:
                yield np.array(data[pos:pos + record], dtype=object)
                pos += record
    return Dataset((dtypes.string, tensor_shape.TensorShape([])), inputs, make)
