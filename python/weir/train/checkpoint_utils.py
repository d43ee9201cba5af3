"""Reading a checkpoint without a graph (TF1's tf.train.NewCheckpointReader,
load_checkpoint, load_variable, list_variables): the bundle's `.index` file
(an SSTable: data blocks of prefix-compressed keys, an index block, a 48-byte
footer) maps each key to a BundleEntryProto (dtype, shape, shard, offset,
size); the value is read from `<prefix>.data-<shard>-of-<num_shards>`.
Numeric and string tensors are read; a checkpoint saved in slices (a
partitioned variable) is not. Damaged files raise DataLossError.

init_from_checkpoint (TF1's warm start) replaces variables' initializers by a
RestoreV2 of the checkpoint's tensors, so that the initializer built
afterwards (global_variables_initializer) loads them."""
import os
import struct

import numpy as np

from weir.framework import dtypes
from weir.framework import errors
from weir.train import checkpoint_management
from weir.train.saver import _read_varint as _varint  # the protobuf varint reader

__all__ = ["NewCheckpointReader", "load_checkpoint", "load_variable", "list_variables",
           "init_from_checkpoint"]

_TABLE_MAGIC = 0xdb4775248b80fb57


def _block_handle(data, pos):
    offset, pos = _varint(data, pos)
    size, pos = _varint(data, pos)
    return (offset, size), pos


def _block_entries(table, handle):
    """(key, value) of one block of the SSTable bytes `table`."""
    offset, size = handle
    if offset + size + 5 > len(table):
        raise ValueError("a block runs past the end of the file")
    if table[offset + size] != 0:
        raise ValueError("a compressed block (weir reads uncompressed index files only)")
    block = table[offset:offset + size]
    num_restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * num_restarts
    if end < 0:
        raise ValueError("a block's restart array is larger than the block")
    pos, key = 0, b""
    while pos < end:
        shared, pos = _varint(block, pos)
        non_shared, pos = _varint(block, pos)
        value_length, pos = _varint(block, pos)
        if shared > len(key) or pos + non_shared + value_length > end:
            raise ValueError("a malformed block entry")
        key = key[:shared] + block[pos:pos + non_shared]
        pos += non_shared
        yield key, block[pos:pos + value_length]
        pos += value_length


def _read_index(path):
    """{key: serialized BundleEntryProto} and the header of the index `path`."""
    with open(path, "rb") as f:
        table = f.read()
    if len(table) < 48:
        raise ValueError("shorter than an SSTable footer")
    footer = table[-48:]
    if struct.unpack_from("<Q", footer, 40)[0] != _TABLE_MAGIC:
        raise ValueError("not an SSTable (bad magic number)")
    _, pos = _block_handle(footer, 0)  # the metaindex block: unused
    index_handle, _ = _block_handle(footer, pos)
    entries = {}
    for _, handle_bytes in _block_entries(table, index_handle):
        handle, _ = _block_handle(handle_bytes, 0)
        for key, value in _block_entries(table, handle):
            entries[key.decode("utf-8", "replace")] = value
    return entries


class CheckpointReader(object):
    """The tensors of one checkpoint (a prefix, as Saver.save returns)."""

    def __init__(self, prefix):
        from weir.core import protos
        self._prefix = prefix
        index = prefix + ".index"
        if not os.path.exists(index):
            raise errors.NotFoundError(None, None, "Unsuccessful TensorSliceReader constructor: "
                                       "Failed to find any matching files for %s" % prefix)
        try:
            raw = _read_index(index)
        except (ValueError, struct.error) as e:
            raise errors.DataLossError(None, None, "%s is not a readable checkpoint index: %s"
                                       % (index, e)) from None
        header = protos.BundleHeaderProto.FromString(raw.pop("", b""))
        self._num_shards = max(1, header.num_shards)
        self._entries = {key: protos.BundleEntryProto.FromString(value) for key, value in raw.items()}

    def _entry(self, key):
        entry = self._entries.get(key)
        if entry is None:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint" % key)
        return entry

    def has_tensor(self, key):
        return key in self._entries

    def get_variable_to_shape_map(self):
        return {key: [d.size for d in entry.shape.dim] for key, entry in self._entries.items()}

    def get_variable_to_dtype_map(self):
        return {key: dtypes.as_dtype(entry.dtype) for key, entry in self._entries.items()}

    def get_tensor(self, key):
        """The value saved under `key` as a numpy array."""
        entry = self._entry(key)
        if entry.slices:
            raise errors.UnimplementedError(None, None, "%s was saved in slices (a partitioned "
                                            "variable); weir's reader reads whole tensors" % key)
        dtype = dtypes.as_dtype(entry.dtype)
        shape = [d.size for d in entry.shape.dim]
        path = "%s.data-%05d-of-%05d" % (self._prefix, entry.shard_id, self._num_shards)
        with open(path, "rb") as f:
            f.seek(entry.offset)
            data = f.read(entry.size)
        if len(data) != entry.size:
            raise errors.DataLossError(None, None, "%s: the data of %s is truncated" % (path, key))
        if dtype == dtypes.string:
            count = int(np.prod(shape, dtype=np.int64))
            lengths, pos = [], 0
            for _ in range(count):
                n, pos = _varint(data, pos)
                lengths.append(n)
            pos += 4  # the masked crc32c of the lengths
            values = []
            for n in lengths:
                values.append(data[pos:pos + n])
                pos += n
            return np.array(values, dtype=object).reshape(shape)
        np_dtype = np.dtype(dtype.as_numpy_dtype)
        if np_dtype.itemsize * int(np.prod(shape, dtype=np.int64)) != len(data):
            raise errors.DataLossError(None, None, "%s: %s holds %d bytes, not a %s of shape %s"
                                       % (path, key, len(data), dtype.name, shape))
        return np.frombuffer(data, dtype=np_dtype).reshape(shape).copy()

    def debug_string(self):
        return "".join("%s (%s) %s\n" % (key, dtypes.as_dtype(entry.dtype).name,
                                         [d.size for d in entry.shape.dim])
                       for key, entry in sorted(self._entries.items())).encode()


def NewCheckpointReader(filepattern):  # noqa: N802  (TF's name)
    return CheckpointReader(filepattern)


def _prefix(ckpt_dir_or_file):
    prefix = checkpoint_management.latest_checkpoint(ckpt_dir_or_file) \
        if os.path.isdir(ckpt_dir_or_file) else ckpt_dir_or_file
    if prefix is None:
        raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given directory %s"
                         % ckpt_dir_or_file)
    return prefix


def load_checkpoint(ckpt_dir_or_file):
    """A CheckpointReader of the checkpoint, or of a directory's latest."""
    return CheckpointReader(_prefix(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name):
    """The value of `name` ("w" or "w:0") in the checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the checkpoint's tensors, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.get_variable_to_shape_map().items())


def _variable_name(v):
    return v.op.name


def _mapped_pairs(reader, assignment_map):
    """(checkpoint key, Variable) pairs of TF1's assignment_map rules: a
    "scope/" key maps every checkpoint tensor under it onto the variables of
    the value's scope with the same remainder ("/" is the checkpoint's root);
    a name maps one tensor onto a variable (a name or a Variable)."""
    from weir.framework import ops
    variables = {_variable_name(v): v for v in ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)}
    shapes = reader.get_variable_to_shape_map()
    pairs = []
    for key, target in sorted(assignment_map.items(), key=lambda kv: kv[0]):
        if not isinstance(target, str):  # a Variable (or a list of them: a partitioned one)
            if isinstance(target, (list, tuple)):
                raise NotImplementedError("init_from_checkpoint of partitioned variables is not supported")
            if key not in shapes:
                raise ValueError("Tensor %s is not found in %s checkpoint" % (key, reader._prefix))
            pairs.append((key, target))
            continue
        if key.endswith("/") or key == "/":
            ckpt_scope = "" if key == "/" else key
            var_scope = target if target.endswith("/") or not target else target + "/"
            found = False
            for name, v in sorted(variables.items()):
                if var_scope and not name.startswith(var_scope):
                    continue
                ckpt_key = ckpt_scope + name[len(var_scope):]
                if ckpt_key in shapes:
                    pairs.append((ckpt_key, v))
                    found = True
            if not found:
                raise ValueError("Assignment map with scope only name %s should map to scope only %s. "
                                 "No variables matched." % (key, target))
            continue
        if key not in shapes:
            raise ValueError("Tensor %s is not found in %s checkpoint" % (key, reader._prefix))
        v = variables.get(target)
        if v is None:
            raise ValueError("Variable %s not found in the graph (init_from_checkpoint)" % target)
        pairs.append((key, v))
    return pairs


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Makes the mapped variables' initializers load the checkpoint's values
    (TF1's warm start; see _mapped_pairs for assignment_map). Call it before
    building the initializer op."""
    from weir.framework import ops
    from weir.framework.op_def_library import apply_op
    prefix = _prefix(ckpt_dir_or_file)
    reader = CheckpointReader(prefix)
    shapes = reader.get_variable_to_shape_map()
    for key, v in _mapped_pairs(reader, assignment_map):
        if not v.shape.is_compatible_with(shapes[key]):
            raise ValueError("Shape of variable %s (%s) doesn't match with shape of tensor %s (%s) from "
                             "checkpoint reader." % (v.op.name, v.shape, key, shapes[key]))
        with ops.control_dependencies(None), ops.device(v.device), ops.name_scope(
                v.op.name + "/init_from_checkpoint"):
            value = apply_op("RestoreV2", None, prefix=ops.convert_to_tensor(prefix),
                             tensor_names=ops.convert_to_tensor([key]),
                             shape_and_slices=ops.convert_to_tensor([""]), dtypes=[v.dtype])
            if isinstance(value, (list, tuple)):
                value = value[0]
            v._initializer_op = apply_op("AssignVariableOp", None, resource=v.handle, value=value)
            v._initial_value = value
