"""Readers and file ops (TF1's tf.TFRecordReader, tf.TextLineReader,
tf.FixedLengthRecordReader, tf.WholeFileReader, tf.io.matching_files,
tf.io.read_file, tf.io.write_file), and the string op of save graphs,
string_join (tf.strings.join).

A reader pulls file names from a queue of strings (a string_input_producer's,
or any queue whose elements are one scalar string) and produces (key, value)
records: read() one, read_up_to() several. When the filename queue is closed
and drained, a read fails with OutOfRangeError. Keys are TensorFlow's
("<file>:<offset>" for TFRecord, "<file>:<line>" for text lines). A damaged
file is reported (DataLossError naming the file and offset) and dropped.
Readers cannot serialize or restore their state (no ReaderSerializeStateV2).
"""
from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops.data_flow_ops import QueueBase, _as_op

__all__ = [
    "ReaderBase", "TFRecordReader", "TextLineReader", "FixedLengthRecordReader",
    "WholeFileReader", "matching_files", "read_file", "write_file", "string_join",
]


def _queue_ref(queue):
    if isinstance(queue, QueueBase):
        return queue.queue_ref
    return queue


class ReaderBase(object):
    """The ops on a reader handle (TF1's tf.ReaderBase)."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return self._supports_serialize

    def _default_name(self, name, what):
        return name if name is not None else "%s_%s" % (self._reader_ref.op.name.split("/")[-1],
                                                         what)

    def read(self, queue, name=None):
        """The next (key, value) record, taking a new file from `queue` when
        the current one is done. Both are scalar strings."""
        op = _as_op(apply_op("ReaderReadV2", self._default_name(name, "Read"),
                             reader_handle=self._reader_ref, queue_handle=_queue_ref(queue)))
        key, value = op.outputs
        key.set_shape([])
        value.set_shape([])
        return key, value

    def read_up_to(self, queue, num_records, name=None):
        """Up to num_records (key, value) records as two string vectors; fewer
        only at the end of the data (the queue closed and drained)."""
        op = _as_op(apply_op("ReaderReadUpToV2", self._default_name(name, "ReadUpTo"),
                             reader_handle=self._reader_ref, queue_handle=_queue_ref(queue),
                             num_records=ops.convert_to_tensor(num_records,
                                                               dtype=_dtypes.int64)))
        keys, values = op.outputs
        keys.set_shape([None])
        values.set_shape([None])
        return keys, values

    def num_records_produced(self, name=None):
        """The number of records read so far (int64)."""
        return apply_op("ReaderNumRecordsProducedV2",
                        self._default_name(name, "NumRecordsProduced"),
                        reader_handle=self._reader_ref)

    def num_work_units_completed(self, name=None):
        """The number of files finished so far (int64)."""
        return apply_op("ReaderNumWorkUnitsCompletedV2",
                        self._default_name(name, "NumWorkUnitsCompleted"),
                        reader_handle=self._reader_ref)

    def reset(self, name=None):
        """Restores the reader to its initial clean state."""
        return apply_op("ReaderResetV2", self._default_name(name, "Reset"),
                        reader_handle=self._reader_ref)

    def serialize_state(self, name=None):
        raise NotImplementedError("Reader %s does not support serializing its state (weir has no "
                                  "ReaderSerializeStateV2)" % self._reader_ref.op.name)

    def restore_state(self, state, name=None):
        raise NotImplementedError("Reader %s does not support restoring its state (weir has no "
                                  "ReaderRestoreStateV2)" % self._reader_ref.op.name)


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files; options: a TFRecordOptions (or
    compression type) for GZIP / ZLIB files."""

    def __init__(self, name=None, options=None):
        # Imported here: weir.io imports this module.
        from weir.io.tf_record import TFRecordOptions
        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__(apply_op("TFRecordReaderV2", name or "TFRecordReaderV2",
                                  compression_type=compression))


class TextLineReader(ReaderBase):
    """Reads the lines of text files (without the newline), skipping the
    first skip_header_lines of each file."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(apply_op("TextLineReaderV2", name or "TextLineReaderV2",
                                  skip_header_lines=int(skip_header_lines or 0)))


class FixedLengthRecordReader(ReaderBase):
    """Reads records of record_bytes bytes, after header_bytes and before
    footer_bytes of each file; hop_bytes > 0 steps that far between records
    (overlapping or gapped); encoding "" or "ZLIB"/"GZIP"."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(apply_op("FixedLengthRecordReaderV2",
                                  name or "FixedLengthRecordReaderV2",
                                  record_bytes=int(record_bytes),
                                  header_bytes=int(header_bytes or 0),
                                  footer_bytes=int(footer_bytes or 0),
                                  hop_bytes=int(hop_bytes or 0), encoding=encoding or ""))


class WholeFileReader(ReaderBase):
    """Reads each file as one record: key the file name, value its contents."""

    def __init__(self, name=None):
        super().__init__(apply_op("WholeFileReaderV2", name or "WholeFileReaderV2"))


def matching_files(pattern, name=None):
    """The sorted names of the files matching a glob pattern (or a vector of
    patterns)."""
    return apply_op("MatchingFiles", name, pattern=ops.convert_to_tensor(
        pattern, dtype=_dtypes.string))


def read_file(filename, name=None):
    """The contents of a file as a scalar string."""
    return apply_op("ReadFile", name, filename=ops.convert_to_tensor(filename,
                                                                      dtype=_dtypes.string))


def write_file(filename, contents, name=None):
    """Writes contents to filename (replacing it atomically); an Operation."""
    return apply_op("WriteFile", name,
                    filename=ops.convert_to_tensor(filename, dtype=_dtypes.string),
                    contents=ops.convert_to_tensor(contents, dtype=_dtypes.string))


def string_join(inputs, separator="", name=None):
    """The string tensors `inputs` joined elementwise with `separator` between them
    (TF1's tf.string_join, tf.strings.join): scalars apply to every element, the
    others must share one shape, the result's."""
    return apply_op("StringJoin", name or "StringJoin",
                    inputs=[ops.convert_to_tensor(x, dtype=_dtypes.string) for x in inputs],
                    separator=separator)
