"""TFRecord files from Python (tf.io.TFRecordWriter, tf.compat.v1.io.tf_record_iterator,
TFRecordOptions, TFRecordCompressionType), on weir's C++ RecordWriter and
RecordReader: the same framing as TensorFlow (length, masked crc32c of the
length, data, masked crc32c of the data), optionally one GZIP or ZLIB stream.

A writer is atomic: its records appear at `path` (renamed over it) when it is
closed, so a reader never sees half a file. A corrupt or truncated record is a
DataLossError naming the file and the record's byte offset.
"""

__all__ = ["TFRecordWriter", "tf_record_iterator", "TFRecordOptions", "TFRecordCompressionType"]


class TFRecordCompressionType(object):
    """The compression of a TFRecord file (TF1's enum)."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
               TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions(object):
    """Options of a TFRecord file: its compression_type, a
    TFRecordCompressionType or "" / "ZLIB" / "GZIP" (None: none). Weir does
    not take zlib tuning options; any given are refused."""

    compression_type_map = dict(_TYPE_NAMES)

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        tuning = [flush_mode, input_buffer_size, output_buffer_size, window_bits,
                  compression_level, compression_method, mem_level, compression_strategy]
        if any(option is not None for option in tuning):
            raise ValueError("TFRecordOptions: weir takes only compression_type (zlib tuning "
                             "options are not supported)")
        self.compression_type = _type_name(compression_type)

    @classmethod
    def get_compression_type_string(cls, options):
        """"" / "ZLIB" / "GZIP" for options (a TFRecordOptions, an enum value,
        a string or None)."""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return _type_name(options)


def _type_name(compression_type):
    if compression_type is None:
        return ""
    if isinstance(compression_type, TFRecordOptions):
        return compression_type.compression_type
    if isinstance(compression_type, int):
        if compression_type not in _TYPE_NAMES:
            raise ValueError("Unknown TFRecord compression type %r" % compression_type)
        return _TYPE_NAMES[compression_type]
    if isinstance(compression_type, str) and compression_type.upper() in ("", "ZLIB", "GZIP"):
        return compression_type.upper()
    raise ValueError("Unknown TFRecord compression type %r (expected '', 'ZLIB' or 'GZIP')"
                     % (compression_type,))


def _path(path):
    import os
    return os.fspath(path) if not isinstance(path, bytes) else path.decode()


class TFRecordWriter(object):
    """Writes records (bytes) to a TFRecord file; a context manager."""

    def __init__(self, path, options=None):
        from weir import _C
        self._writer = _C.RecordWriter(_path(path), _type_name(options))

    def write(self, record):
        """Appends one record (bytes; a str is written as UTF-8)."""
        if isinstance(record, str):
            record = record.encode()
        self._writer.write(bytes(record))

    def flush(self):
        """Pushes the buffered records to the (temporary) file."""
        self._writer.flush()

    def close(self):
        """Finishes the file (renamed to its path). Idempotent."""
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()


def tf_record_iterator(path, options=None):
    """The records of a TFRecord file, as bytes, in order."""
    from weir import _C
    reader = _C.RecordReader(_path(path), _type_name(options))
    while True:
        record = reader.read()
        if record is None:
            return
        yield record
