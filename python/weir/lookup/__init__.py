"""weir.lookup: hash tables (TF's tf.lookup / tf.compat.v1.lookup) on the C++
table ops (HashTableV2, LookupTableFindV2...; src/weir/ops/lookup_ops.cc).

    table = wr.lookup.StaticHashTable(
        wr.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2], value_dtype=wr.int64), -1)
    ids = table.lookup(wr.constant(["b", "z"]))          # [2, -1]
    with wr.Session() as sess:
        sess.run(wr.tables_initializer())
        sess.run(ids)

A static table's initializer joins the TABLE_INITIALIZERS collection, which
`wr.tables_initializer()` runs, as in TF1. `TextFileInitializer` reads a
vocabulary file (a column per entry, the whole line, or the line number).
`MutableHashTable` has insert, remove and export. `StaticVocabularyTable`
gives missing keys one of `num_oov_buckets` ids after the vocabulary's, by
TensorFlow's hash (FarmHash Fingerprint64 of the key's text), so the ids are
TensorFlow's. Not here: tables of non-scalar values, and saving a
MutableHashTable in checkpoints.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex",
           "StaticHashTable", "StaticVocabularyTable", "MutableHashTable"]


class TextFileIndex:
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class _Initializer:
    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype


class KeyValueTensorInitializer(_Initializer):
    """Fills a table with `keys[i] -> values[i]` (tensors or values of one shape)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with ops.name_scope(name, "key_value_init", [keys, values]):
            self._keys = ops.convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = ops.convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        with ops.name_scope(self._name, "table_init", [table.resource_handle]):
            return apply_op("InitializeTableV2", None, table_handle=table.resource_handle,
                            keys=self._keys, values=self._values)


class TextFileInitializer(_Initializer):
    """Fills a table from a text file, an entry per line: the key and the value are
    column `key_index` / `value_index` split by `delimiter`, the whole line
    (TextFileIndex.WHOLE_LINE) or the line number (TextFileIndex.LINE_NUMBER, plus
    `value_index_offset`). `vocab_size` reads that many lines (the file must have them)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None,
                 delimiter="\t", name=None, value_index_offset=0):
        if key_index < -2 or value_index < -2:
            raise ValueError("Invalid key_index %s or value_index %s (each >= -2)"
                             % (key_index, value_index))
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError("Invalid vocab_size %s." % vocab_size)
        if key_index == TextFileIndex.LINE_NUMBER and \
                dtypes.as_dtype(key_dtype) not in (dtypes.int64, dtypes.int32):
            raise ValueError("Signature mismatch. Keys must be dtype int64, got %s."
                             % dtypes.as_dtype(key_dtype).name)
        if key_index == TextFileIndex.WHOLE_LINE and dtypes.as_dtype(key_dtype) != dtypes.string:
            raise ValueError("Signature mismatch. Keys must be dtype string, got %s."
                             % dtypes.as_dtype(key_dtype).name)
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._offset = value_index_offset
        self._name = name
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        with ops.name_scope(self._name, "text_file_init", [table.resource_handle]):
            filename = ops.convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            init = apply_op("InitializeTableFromTextFileV2", None,
                            table_handle=table.resource_handle, filename=filename,
                            key_index=self._key_index, value_index=self._value_index,
                            vocab_size=-1 if self._vocab_size is None else self._vocab_size,
                            delimiter=self._delimiter, offset=self._offset)
        if isinstance(self._filename, str) or isinstance(filename, ops.Tensor):
            ops.add_to_collection(ops.GraphKeys.ASSET_FILEPATHS, filename)
        return init


class _Table:
    def __init__(self, op_type, key_dtype, value_dtype, name):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._handle = apply_op(op_type, name, key_dtype=self._key_dtype,
                                value_dtype=self._value_dtype)
        self._name = self._handle.op.name

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def name(self):
        return self._name

    @property
    def resource_handle(self):
        return self._handle

    def size(self, name=None):
        """The number of entries (an int64 scalar)."""
        with ops.name_scope(name, "%s_Size" % self._name, [self._handle]):
            return apply_op("LookupTableSizeV2", None, table_handle=self._handle)

    def export(self, name=None):
        """(keys, values): every entry, as two vectors in no order."""
        with ops.name_scope(name, "%s_Export" % self._name, [self._handle]):
            return apply_op("LookupTableExportV2", None, table_handle=self._handle,
                            Tkeys=self._key_dtype, Tvalues=self._value_dtype)

    def _keys(self, keys):
        keys = ops.convert_to_tensor(keys, name="keys")
        if keys.dtype.base_dtype != self._key_dtype:
            raise TypeError("Signature mismatch. Keys must be dtype %s, got %s."
                            % (self._key_dtype.name, keys.dtype.base_dtype.name))
        return keys

    def lookup(self, keys, name=None):
        """The value of each key, the table's default for a missing one (the keys' shape)."""
        with ops.name_scope(name, "%s_Lookup" % self._name, [self._handle]):
            keys = self._keys(keys)
            values = apply_op("LookupTableFindV2", None, table_handle=self._handle, keys=keys,
                              default_value=self._default_value)
            values.set_shape(keys.shape)
            return values


class StaticHashTable(_Table):
    """A table filled once by `initializer` (KeyValueTensorInitializer or
    TextFileInitializer) and read-only after; `default_value` for missing keys."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        del experimental_is_anonymous
        super().__init__("HashTableV2", initializer.key_dtype, initializer.value_dtype,
                         name or "hash_table")
        self._default_value = ops.convert_to_tensor(default_value, dtype=self._value_dtype,
                                                    name=self._name + "_default_value")
        self._init_op = initializer.initialize(self)
        ops.add_to_collection(ops.GraphKeys.TABLE_INITIALIZERS, self._init_op)

    @property
    def default_value(self):
        return self._default_value

    @property
    def initializer(self):
        return self._init_op


class MutableHashTable(_Table):
    """A table changed by insert, remove and import; `default_value` for missing keys."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False):
        del checkpoint, experimental_is_anonymous  # (not saved in checkpoints: see above)
        super().__init__("MutableHashTableV2", key_dtype, value_dtype, name)
        self._default_value = ops.convert_to_tensor(default_value, dtype=self._value_dtype,
                                                    name=self._name + "_default_value")

    @property
    def default_value(self):
        return self._default_value

    def insert(self, keys, values, name=None):
        with ops.name_scope(name, "%s_lookup_table_insert" % self._name, [self._handle]):
            keys = self._keys(keys)
            values = ops.convert_to_tensor(values, self._value_dtype, name="values")
            return apply_op("LookupTableInsertV2", None, table_handle=self._handle, keys=keys,
                            values=values)

    def remove(self, keys, name=None):
        with ops.name_scope(name, "%s_lookup_table_remove" % self._name, [self._handle]):
            return apply_op("LookupTableRemoveV2", None, table_handle=self._handle,
                            keys=self._keys(keys))

    def import_(self, keys, values, name=None):
        """Replaces every entry by these (TF's MutableHashTable import)."""
        with ops.name_scope(name, "%s_lookup_table_import" % self._name, [self._handle]):
            keys = self._keys(keys)
            values = ops.convert_to_tensor(values, self._value_dtype, name="values")
            return apply_op("LookupTableImportV2", None, table_handle=self._handle, keys=keys,
                            values=values)


class StaticVocabularyTable:
    """Ids of a vocabulary (an initializer of int64 values) and, for a key not in
    it, `table size + hash(key) % num_oov_buckets` (TensorFlow's hash, so the same
    ids as TensorFlow). `lookup_key_dtype` int32 keys are looked up as int64."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        del experimental_is_anonymous
        if num_oov_buckets < 0:
            raise ValueError("num_oov_buckets must be >= 0, got %d." % num_oov_buckets)
        if initializer is not None and initializer.value_dtype != dtypes.int64:
            raise TypeError("Invalid value dtype, expected int64 but got %s."
                            % initializer.value_dtype.name)
        key_dtype = initializer.key_dtype if initializer is not None else dtypes.string
        self._lookup_key_dtype = dtypes.as_dtype(lookup_key_dtype or key_dtype)
        if self._lookup_key_dtype not in (key_dtype, dtypes.int32):
            raise TypeError("Invalid lookup_key_dtype %s for keys of %s."
                            % (self._lookup_key_dtype.name, key_dtype.name))
        self._num_oov_buckets = num_oov_buckets
        self._key_dtype = key_dtype
        self._name = name or "hash_table"
        self._table = StaticHashTable(initializer, -1, name=self._name) \
            if initializer is not None else None

    @property
    def key_dtype(self):
        return self._lookup_key_dtype

    @property
    def value_dtype(self):
        return dtypes.int64

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    def size(self, name=None):
        """The vocabulary's size plus num_oov_buckets."""
        from weir.ops import math_ops
        with ops.name_scope(name, "%s_Size" % self._name):
            if self._table is None:
                return ops.convert_to_tensor(self._num_oov_buckets, dtypes.int64)
            return math_ops.add(self._table.size(), self._num_oov_buckets)

    def lookup(self, keys, name=None):
        from weir.ops import array_ops, math_ops
        from weir.ops import string_convert_ops
        with ops.name_scope(name, "%s_Lookup" % self._name):
            keys = ops.convert_to_tensor(keys, name="keys")
            if keys.dtype.base_dtype != self._lookup_key_dtype:
                raise TypeError("Signature mismatch. Keys must be dtype %s, got %s."
                                % (self._lookup_key_dtype.name, keys.dtype.base_dtype.name))
            if self._lookup_key_dtype != self._key_dtype:
                keys = math_ops.cast(keys, self._key_dtype)
            if self._num_oov_buckets == 0:
                return self._table.lookup(keys)
            text = keys if keys.dtype == dtypes.string else string_convert_ops.as_string(keys)
            buckets = string_convert_ops.string_to_hash_bucket_fast(
                text, self._num_oov_buckets, name="hash_bucket")
            if self._table is None:
                return buckets
            ids = self._table.lookup(keys)
            buckets = math_ops.add(buckets, self._table.size())
            return array_ops.where(math_ops.not_equal(ids, -1), ids, buckets)
