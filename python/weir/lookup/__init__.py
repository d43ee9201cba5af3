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
`MutableHashTable` has insert, remove and export. Not here: tables of
non-scalar values, StaticVocabularyTable (out-of-vocabulary hash buckets),
and saving a MutableHashTable in checkpoints.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex",
           "StaticHashTable", "MutableHashTable"]


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
