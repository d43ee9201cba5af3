"""Saver: TF1's tf.train.Saver on the SaveV2/RestoreV2 ops (TensorFlow's bundle format).

The graph part, built under the scope "save" (or `name`): a filename
constant ("save/Const", fed with the path at each save/restore), one SaveV2 of
every variable's value under its checkpoint key, "save/control_dependency"
(the path, after the save) and "save/restore_all" (RestoreV2 + one
AssignVariableOp per variable). Keys are the variables' op names ("w", not
"w:0"), or the keys of a dict var_list, so TensorFlow reads weir's checkpoints
and weir reads TensorFlow's. A restored value must match the variable's
declared shape and dtype (InvalidArgumentError naming the variable); a key
missing from the checkpoint is a NotFoundError naming it.

save() writes `<save_path>-<global_step>.index` / `.data-00000-of-00001`
(SaveV2 writes temporaries and renames them), then the directory's
"checkpoint" state file (checkpoint_management, atomic), then deletes the
checkpoints beyond `max_to_keep` (keeping one per
`keep_checkpoint_every_n_hours`). With write_meta_graph, `<prefix>.meta` is a
MetaGraphDef: the GraphDef, the SaverDef and the collections TF serializes
(node lists, VariableDefs, strings and numbers; see export_meta_graph);
import_meta_graph reads such a file (or TensorFlow's: signatures, assets and
the collections of queue runners and control-flow contexts are skipped) back
into a graph with its collections (resource variables become Variables again,
so tf.global_variables() and a new Saver() work) and returns a Saver over its
save/restore nodes (its stripped_op_list is import_graph_def's
producer_op_list).

Saver(sharded=True), as TensorFlow's: the variables are grouped by their
device (one group per distinct variable device, in sorted order), and each
group is saved by its own SaveV2 on CPU:0 of that device's task
(/job:ps/task:1/device:CPU:0), into `<path>_temp/part-<i>-of-<n>`
(StringJoin and ShardedFilename build the names at run time); then
MergeV2Checkpoints on the last group's device joins the parts into one
checkpoint at `<path>` (`.data-<i>-of-<n>`, one index) and removes the
temporary directory. So on a cluster each ps task writes its own variables
(no variable crosses the network) and the checkpoint directory must be one
file system that every task sees. Restore runs one RestoreV2 per group on
the same devices. SaverDef.sharded is true in the .meta file.
"""
import os
import time

import numpy as np

from weir.framework import constant_op
from weir.framework import dtypes
from weir.framework import errors
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops import array_ops
from weir.ops import variables
from weir.train import checkpoint_management
from weir.train import training_util

__all__ = ["Saver", "export_meta_graph", "import_meta_graph"]


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):
    return _varint((number << 3) | 2) + _varint(len(payload)) + payload


def _saver_def_bytes(filename_tensor_name, save_tensor_name, restore_op_name, max_to_keep,
                     keep_hours, sharded=False):
    import struct
    out = _field(1, filename_tensor_name.encode())
    out += _field(2, save_tensor_name.encode())
    out += _field(3, restore_op_name.encode())
    out += _varint(4 << 3) + _varint(max(0, int(max_to_keep or 0)))
    if sharded:
        out += _varint(5 << 3) + _varint(1)
    out += _varint((6 << 3) | 5) + struct.pack("<f", float(keep_hours))
    out += _varint(7 << 3) + _varint(2)  # CheckpointFormatVersion V2
    return out


# Collections whose items are Variables, stored as VariableDef protos (as TF does).
_VARIABLE_COLLECTIONS = frozenset(["variables", "trainable_variables", "local_variables",
                                   "model_variables", "moving_average_variables", "global_step",
                                   "metric_variables"])
# Collections of TF's other registered protos (queue runners, control-flow
# contexts, savers): skipped on import, as weir does not rebuild them.
_SKIPPED_PROTO_COLLECTIONS = frozenset(["queue_runners", "cond_context", "while_context", "savers"])


def _variable_def_bytes(variable):
    """TF's VariableDef of a weir (resource) Variable: variable_name (the
    handle), initializer_name, snapshot_name (the read), is_resource,
    initial_value_name, trainable."""
    out = _field(1, variable.handle.name.encode())
    out += _field(2, variable.initializer.name.encode())
    out += _field(3, variable._graph_element.name.encode())
    out += _varint(5 << 3) + _varint(1)
    if isinstance(variable._initial_value, ops.Tensor):
        out += _field(6, variable._initial_value.name.encode())
    out += _varint(7 << 3) + _varint(1 if variable.trainable else 0)
    return out


def _collection_def(items):
    """A CollectionDef (a weir.core.protos message) of a collection's items,
    or None when they are not all of one kind TF serializes."""
    from weir.core import protos
    collection = protos.CollectionDef()
    if not items:
        return None
    if all(isinstance(item, (ops.Tensor, ops.Operation)) for item in items):
        collection.node_list.value.extend(item.name for item in items)
    elif all(isinstance(item, variables.Variable) for item in items):
        collection.bytes_list.value.extend(_variable_def_bytes(item) for item in items)
    elif all(isinstance(item, (str, bytes)) for item in items):
        collection.bytes_list.value.extend(item.encode() if isinstance(item, str) else item
                                           for item in items)
    elif all(isinstance(item, (int, np.integer)) and not isinstance(item, bool) for item in items):
        collection.int64_list.value.extend(int(item) for item in items)
    elif all(isinstance(item, (float, np.floating)) for item in items):
        collection.float_list.value.extend(float(item) for item in items)
    else:
        return None
    return collection


def export_meta_graph(filename=None, graph=None, saver_def=None, collection_list=None,
                      clear_devices=False, **unused):
    """TF's tf.train.export_meta_graph: a MetaGraphDef (a weir.core.protos
    message) holding `graph`'s GraphDef, the SaverDef (a proto or its bytes),
    and the collections named by `collection_list` (default: all) whose items
    TF serializes (tensors and operations as node names, variables as
    VariableDefs, strings, ints, floats; others are left out, as TF warns);
    written to `filename` (atomically) when given."""
    from weir.core import protos
    graph = graph or ops.get_default_graph()
    meta = protos.MetaGraphDef()
    meta.meta_info_def.meta_graph_version = "v1"
    meta.graph_def.ParseFromString(graph._c_graph.to_graph_def())
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    if saver_def:
        if hasattr(saver_def, "SerializeToString"):
            saver_def = saver_def.SerializeToString()
        meta.saver_def.ParseFromString(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in sorted(keys):
        collection = _collection_def(graph.get_collection(key))
        if collection is not None:
            meta.collection_def[key].CopyFrom(collection)
    if filename:
        data = meta.SerializeToString()
        tmp = filename + ".tmp%d" % os.getpid()
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, filename)
    return meta


def _import_collections(data, graph, prefix):
    """Adds the MetaGraphDef `data`'s collections to `graph` (names under
    `prefix`): node lists as tensors/operations, VariableDefs of resource
    variables as Variables (one object per variable across collections),
    other bytes, ints and floats as they are."""
    from weir.core import protos
    try:
        meta = protos.MetaGraphDef.FromString(data)
    except Exception:  # a MetaGraphDef from a newer producer: the graph imported, collections skipped
        return
    variables_by_name = {}
    for key in sorted(meta.collection_def):
        if key in _SKIPPED_PROTO_COLLECTIONS:
            continue
        collection = meta.collection_def[key]
        kind = collection.WhichOneof("kind")
        if kind == "node_list":
            for name in collection.node_list.value:
                try:
                    graph.add_to_collection(key, graph.as_graph_element(prefix + name))
                except (KeyError, ValueError):
                    pass  # a node the producer stripped
        elif kind == "bytes_list" and key in _VARIABLE_COLLECTIONS:
            for value in collection.bytes_list.value:
                fields = {n: v for n, _, v in _fields(value)}
                name = fields.get(1, b"").decode()
                variable = variables_by_name.get(name)
                if variable is None:
                    variable = variables.Variable._from_variable_def(fields, graph, prefix)
                    if variable is None:
                        continue  # a ref variable (VariableV2): no weir Variable object
                    variables_by_name[name] = variable
                graph.add_to_collection(key, variable)
        elif kind == "bytes_list":
            for value in collection.bytes_list.value:
                graph.add_to_collection(key, value)
        elif kind == "int64_list":
            for value in collection.int64_list.value:
                graph.add_to_collection(key, int(value))
        elif kind == "float_list":
            for value in collection.float_list.value:
                graph.add_to_collection(key, float(value))


def _read_varint(data, pos):
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(data):
    """(field number, wire type, value) of a serialized message's fields."""
    import struct
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value = struct.unpack("<d", data[pos:pos + 8])[0]
            pos += 8
        elif wire == 2:
            n, pos = _read_varint(data, pos)
            value = bytes(data[pos:pos + n])
            if len(value) != n:
                raise ValueError("truncated field %d" % number)
            pos += n
        elif wire == 5:
            value = struct.unpack("<f", data[pos:pos + 4])[0]
            pos += 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        yield number, wire, value


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **unused):
    """Imports a MetaGraphDef's graph into the default graph; returns a Saver
    over its SaverDef's nodes (None when it has no SaverDef)."""
    from weir.framework import importer
    if isinstance(meta_graph_or_file, (bytes, bytearray)):
        data = bytes(meta_graph_or_file)
    elif hasattr(meta_graph_or_file, "SerializeToString"):
        data = meta_graph_or_file.SerializeToString()
    else:
        with open(meta_graph_or_file, "rb") as f:
            data = f.read()
    graph_def = None
    saver_fields = None
    stripped_op_list = None  # meta_info_def.stripped_op_list: the producer's OpDefs
    try:
        for number, wire, value in _fields(data):
            if number == 1 and wire == 2:
                for n, w, v in _fields(value):
                    if n == 2 and w == 2:
                        stripped_op_list = v
            elif number == 2 and wire == 2:
                graph_def = value
            elif number == 3 and wire == 2:
                saver_fields = {n: v for n, _, v in _fields(value)}
    except ValueError as e:
        raise errors.DataLossError(None, None, "%s is not a MetaGraphDef: %s"
                                   % (meta_graph_or_file if isinstance(meta_graph_or_file, str)
                                      else "the data", e))
    if graph_def is None:
        raise ValueError("The MetaGraphDef has no graph_def")
    if clear_devices:
        from weir.core import protos
        message = protos.GraphDef()
        message.ParseFromString(graph_def)
        for node in message.node:
            node.device = ""
        graph_def = message.SerializeToString()
    importer.import_graph_def(graph_def, name=import_scope or "",
                              producer_op_list=stripped_op_list)
    prefix = (import_scope + "/") if import_scope else ""
    graph = ops.get_default_graph()
    _import_collections(data, graph, prefix)
    if not saver_fields:
        return None

    def element(field):
        name = saver_fields.get(field, b"").decode()
        return graph.as_graph_element(prefix + name)
    saver = Saver.__new__(Saver)
    Saver.__init__(saver, var_list=[], allow_empty=True, defer_build=True,
                   max_to_keep=saver_fields.get(4, 5), sharded=bool(saver_fields.get(5, 0)))
    saver._is_built = True
    saver._is_empty = False
    saver._graph = graph
    saver._filename_tensor = element(1)
    saver._save_tensor = element(2)
    saver._restore_op = element(3)
    return saver


def _cpu0(device):
    """CPU:0 of `device`'s task: where a sharded save's ops for the variables
    on `device` run ("" -> "/device:CPU:0")."""
    spec = ops.DeviceSpec.from_string(device or "")
    spec.device_type = "CPU"
    spec.device_index = 0
    return spec.to_string()


def _group_by_device(items):
    """`items` ((key, variable), sorted by key) grouped by the variable's
    device: [(device, items)], sorted by device."""
    groups = {}
    for key, v in items:
        device = ops.DeviceSpec.from_string(v.device or "").to_string()
        groups.setdefault(device, []).append((key, v))
    return sorted(groups.items())


class Saver:
    """Saves and restores variables (TF1 signature)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        if saver_def is not None or builder is not None:
            raise NotImplementedError("Saver(saver_def=..., builder=...) is not supported by "
                                      "weir")
        if write_version not in (2, None):
            raise ValueError("weir writes V2 checkpoints only (write_version=%r)" % write_version)
        self._var_list = var_list
        self._sharded = bool(sharded)
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._last_checkpoints = []
        self._checkpoints_to_be_deleted = []
        self._is_built = False
        self._is_empty = False
        if not defer_build:
            self.build()

    # --- graph ---------------------------------------------------------------

    def _saveables(self):
        var_list = self._var_list
        if var_list is None:
            var_list = variables.global_variables()
            saveable_key = getattr(ops.GraphKeys, "SAVEABLE_OBJECTS", "saveable_objects")
            var_list = var_list + [v for v in ops.get_collection(saveable_key)
                                   if v not in var_list]
        if isinstance(var_list, dict):
            items = sorted(var_list.items())
        else:
            items = []
            seen = {}
            for v in var_list:
                if not isinstance(v, variables.Variable):
                    raise TypeError("Saver: var_list entries must be wr.Variable objects, got %r"
                                    % (v,))
                key = v.op.name
                if key in seen:
                    if seen[key] is v:
                        continue
                    raise ValueError("At least two variables have the same name: %s" % key)
                seen[key] = v
                items.append((key, v))
            items.sort(key=lambda kv: kv[0])
        for key, v in items:
            if not isinstance(v, variables.Variable):
                raise TypeError("Saver: the value of key %r must be a wr.Variable, got %r"
                                % (key, v))
        return items

    def build(self):
        if self._is_built:
            return
        self._is_built = True
        items = self._saveables()
        if not items:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        graph = items[0][1].graph
        self._graph = graph
        self._keys = [k for k, _ in items]
        self._vars = [v for _, v in items]
        with graph.as_default(), ops.control_dependencies(None), \
                ops.name_scope(self._name, "save") as scope:
            self._filename_tensor = constant_op.constant(self._filename or "model",
                                                         dtype=dtypes.string)
            if self._sharded:
                groups = _group_by_device(items)
                self._save_tensor = self._add_sharded_save_ops(groups)
                self._restore_op = self._add_sharded_restore_ops(groups)
            else:
                save = self._add_save_op(self._filename_tensor, items)
                with ops.control_dependencies([save]):
                    self._save_tensor = apply_op("Identity", "control_dependency",
                                                 input=self._filename_tensor)
                assigns = self._add_restore_ops(items, 0)
                with ops.control_dependencies(assigns):
                    self._restore_op = apply_op("NoOp", "restore_all")
            self._scope = scope

    @staticmethod
    def _names_and_slices(keys):
        names = constant_op.constant(np.array([k.encode() for k in keys], object),
                                     dtype=dtypes.string, name="tensor_names")
        slices = constant_op.constant(np.array([b""] * len(keys), object),
                                      dtype=dtypes.string, name="shape_and_slices")
        return names, slices

    def _add_save_op(self, prefix, items):
        """One SaveV2 of `items` ((key, variable) pairs) into `prefix`."""
        names, slices = self._names_and_slices([k for k, _ in items])
        values = []
        for _, v in items:
            with ops.colocate_with(v.op):
                values.append(v.value())
        return apply_op("SaveV2", "SaveV2", prefix=prefix, tensor_names=names,
                        shape_and_slices=slices, tensors=values)

    def _add_restore_ops(self, items, first_index):
        """One RestoreV2 of `items` from the fed filename and an assignment per
        variable (named Assign_<first_index + i>); returns the assignments."""
        names, slices = self._names_and_slices([k for k, _ in items])
        restored = apply_op("RestoreV2", "RestoreV2", prefix=self._filename_tensor,
                            tensor_names=names, shape_and_slices=slices,
                            dtypes=[v.dtype for _, v in items])
        if isinstance(restored, ops.Tensor):
            restored = [restored]
        assigns = []
        for i, ((_, v), value) in enumerate(zip(items, restored)):
            index = first_index + i
            with ops.colocate_with(v.op):
                assigns.append(apply_op("AssignVariableOp",
                                        "Assign" if index == 0 else "Assign_%d" % index,
                                        resource=v.handle, value=value))
        return assigns

    def _add_sharded_save_ops(self, groups):
        """TensorFlow's sharded save: a SaveV2 per device group into
        <prefix>_temp/part-<i>-of-<n>, then MergeV2Checkpoints into <prefix>;
        returns the prefix, after the merge."""
        suffix = constant_op.constant("_temp/part", dtype=dtypes.string)
        temp_prefix = apply_op("StringJoin", "StringJoin", inputs=[self._filename_tensor, suffix])
        num_shards = constant_op.constant(len(groups), dtype=dtypes.int32, name="num_shards")
        parts, saves = [], []
        for shard, (device, items) in enumerate(groups):
            with ops.device(_cpu0(device)):
                part = apply_op("ShardedFilename", "ShardedFilename", basename=temp_prefix,
                                shard=constant_op.constant(shard, dtype=dtypes.int32),
                                num_shards=num_shards)
                save = self._add_save_op(part, items)
                with ops.control_dependencies([save]):
                    saves.append(apply_op("Identity", "control_dependency", input=part))
                parts.append(part)
        last_device = groups[-1][0]
        with ops.control_dependencies([t.op for t in saves]), ops.device(_cpu0(last_device)):
            merge = apply_op("MergeV2Checkpoints", "MergeV2Checkpoints",
                             checkpoint_prefixes=array_ops.stack(parts,
                                                                 name="checkpoint_prefixes"),
                             destination_prefix=self._filename_tensor, delete_old_dirs=True)
            with ops.control_dependencies([merge]):
                return apply_op("Identity", "Identity", input=self._filename_tensor)

    def _add_sharded_restore_ops(self, groups):
        """A RestoreV2 per device group on that device's CPU:0; returns the
        op that runs them all (restore_all)."""
        shards = []
        first_index = 0
        for device, items in groups:
            with ops.device(_cpu0(device)):
                assigns = self._add_restore_ops(items, first_index)
                with ops.control_dependencies(assigns):
                    shards.append(apply_op("NoOp", "restore_shard"))
            first_index += len(items)
        with ops.control_dependencies(shards):
            return apply_op("NoOp", "restore_all")

    @property
    def saver_def(self):
        """The SaverDef's fields as a dict (weir has no SaverDef message class)."""
        if self._is_empty:
            return None
        return {"filename_tensor_name": self._filename_tensor.name,
                "save_tensor_name": self._save_tensor.name,
                "restore_op_name": self._restore_op.name, "max_to_keep": self._max_to_keep,
                "keep_checkpoint_every_n_hours": self._keep_checkpoint_every_n_hours,
                "sharded": self._sharded, "version": 2}

    # --- bookkeeping of checkpoints ---------------------------------------------

    @property
    def last_checkpoints(self):
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        self._last_checkpoints = [(p, None) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Resumes keep-N bookkeeping from existing checkpoints (e.g. those of
        get_checkpoint_state(...).all_model_checkpoint_paths)."""
        existing = [p for p in checkpoint_paths if checkpoint_management.checkpoint_exists(p)]
        mtimes = checkpoint_management.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, mtimes)))

    def _record_last_checkpoint(self, path):
        if not self._max_to_keep:
            # Keep all: no deletion, but remember the list for the state file.
            self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
            self._last_checkpoints.append((path, time.time()))
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        while len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _delete_old_checkpoints(self, meta_graph_suffix):
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if (self._keep_checkpoint_every_n_hours and stamp is not None
                    and stamp > self._next_checkpoint_time):
                self._next_checkpoint_time += self._keep_checkpoint_every_n_hours * 3600
                continue
            checkpoint_management.remove_checkpoint(path, meta_graph_suffix=meta_graph_suffix)

    # --- save / restore -----------------------------------------------------------

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint; returns its prefix ("<save_path>-<step>")."""
        if not self._is_built:
            self.build()
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = training_util.global_step(sess, global_step)
            fmt = "%s-%08d" if self._pad_step_number else "%s-%d"
            checkpoint_file = fmt % (save_path, global_step)
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename:
                raise ValueError("'latest_filename' collides with 'save_path': '%s' and '%s'"
                                 % (latest_filename, save_path))
        save_dir = os.path.dirname(save_path)
        if self._is_empty:
            return None
        try:
            result = sess.run(self._save_tensor, {self._filename_tensor: checkpoint_file})
        except errors.OpError:
            # As TF: SaveV2 creates the last directory level; a deeper missing
            # parent is the caller's mistake, said plainly.
            if save_dir and not os.path.isdir(save_dir):
                raise ValueError("Parent directory of %s doesn't exist, can't save."
                                 % save_path) from None
            raise
        path = result.item() if hasattr(result, "item") else result
        if isinstance(path, bytes):
            path = path.decode()
        if write_state:
            self._record_last_checkpoint(path)
            recorded = self.last_checkpoints
            stamps = [t for _, t in self._last_checkpoints]
            if self._save_relative_paths:
                path_in_state = os.path.basename(path)
                recorded = [os.path.basename(p) for p in recorded]
            else:
                path_in_state = path
            checkpoint_management.update_checkpoint_state(
                save_dir or ".", path_in_state, recorded, latest_filename=latest_filename,
                all_model_checkpoint_timestamps=stamps if None not in stamps else None)
            self._delete_old_checkpoints(meta_graph_suffix)
        if write_meta_graph:
            saver_def = _saver_def_bytes(self._filename_tensor.name, self._save_tensor.name,
                                         self._restore_op.name, self._max_to_keep,
                                         self._keep_checkpoint_every_n_hours,
                                         sharded=self._sharded)
            export_meta_graph(path + "." + meta_graph_suffix, graph=self._graph,
                              saver_def=saver_def)
        return path

    def restore(self, sess, save_path):
        """Assigns every variable its value in the checkpoint `save_path`."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not checkpoint_management.checkpoint_exists(save_path):
            # TF1's Saver (since 1.13, and TF 2.21's compat.v1): a ValueError.
            raise ValueError("The passed save_path is not a valid checkpoint: %s (no %s.index)"
                             % (save_path, save_path))
        sess.run(self._restore_op, {self._filename_tensor: save_path})

    def as_saver_def(self):
        return self.saver_def

    def export_meta_graph(self, filename=None, **unused):
        saver_def = _saver_def_bytes(self._filename_tensor.name, self._save_tensor.name,
                                     self._restore_op.name, self._max_to_keep,
                                     self._keep_checkpoint_every_n_hours,
                                     sharded=self._sharded)
        return export_meta_graph(filename, graph=self._graph, saver_def=saver_def)
