"""Graphs, operations and tensors (TF1's tf.Graph, tf.Operation, tf.Tensor).

A `Graph` wraps one `_C.Graph`; nodes live only in C++, and Python's
`Operation` / `Tensor` objects are thin views created on demand from node ids
(so nodes the C++ side builds itself, such as gradients or loop frames, are
ordinary Operations too). A Tensor is an endpoint `(node_id, index)`.

Scopes follow TF1 exactly: unique names ("Add", "Add_1"), `name_scope`
nesting ("a/b/"), `name_scope(None)` resets, a name ending in "/" re-enters;
`device` merges partial specs (inner fields win) or calls a device function;
`control_dependencies(None)` clears; `colocate_with` pins new ops to an op's
colocation group and device. Every node records the user's file:line (the
first stack frame outside the weir package) so errors point at model code.
"""
import collections
import contextlib
import os
import re
import sys
import threading

import numpy as np

from weir import _C
from weir.framework import dtypes
from weir.framework import tensor_shape

__all__ = [
    "Graph", "Operation", "Tensor", "GraphKeys", "DeviceSpec", "get_default_graph",
    "reset_default_graph", "name_scope", "device", "control_dependencies", "colocate_with",
    "convert_to_tensor", "convert_n_to_tensor", "register_tensor_conversion_function",
    "add_to_collection", "add_to_collections", "get_collection", "get_collection_ref",
    "get_all_collection_keys", "get_name_scope", "container", "init_scope", "is_tensor",
    "executing_eagerly", "disable_eager_execution", "disable_v2_behavior", "enable_eager_execution",
    "get_default_session", "convert_to_tensor_or_indexed_slices", "op_scope",
]

# --- where the user built a node ---------------------------------------------

_PACKAGE_DIRS = tuple({
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep,
})
_inside_weir = {}  # co_filename -> bool (cache: the walk runs once per node)


def _user_source_location():
    """"file:line" of the first stack frame outside the weir package ("" if none)."""
    frame = sys._getframe(1)
    cache = _inside_weir
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = cache.get(filename)
        if inside is None:
            inside = filename.startswith(_PACKAGE_DIRS) or filename.startswith("<frozen ") \
                or os.path.basename(filename) == "contextlib.py"
            cache[filename] = inside
        if not inside:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


# --- device specs --------------------------------------------------------------

class DeviceSpec:
    """A (partial) device name: /job:<job>/replica:<r>/task:<t>/device:<TYPE>:<index>."""

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = device_type
        self.device_index = device_index  # int, "*" or None

    @classmethod
    def from_string(cls, spec):
        spec_obj = cls()
        if not spec:
            return spec_obj
        for part in spec.split("/"):
            if not part:
                continue
            fields = part.split(":")
            key = fields[0].lower()
            if key == "job" and len(fields) == 2:
                spec_obj.job = fields[1]
            elif key == "replica" and len(fields) == 2:
                spec_obj.replica = int(fields[1])
            elif key == "task" and len(fields) == 2:
                spec_obj.task = int(fields[1])
            elif key == "device" and len(fields) in (2, 3):
                spec_obj.device_type = fields[1].upper() if fields[1] != "*" else None
                if len(fields) == 3:
                    spec_obj.device_index = "*" if fields[2] == "*" else int(fields[2])
            elif len(fields) == 2 and key in ("cpu", "gpu", "tpu"):  # legacy "/cpu:0"
                spec_obj.device_type = key.upper()
                spec_obj.device_index = "*" if fields[1] == "*" else int(fields[1])
            elif len(fields) == 1 and key in ("cpu", "gpu", "tpu"):
                spec_obj.device_type = key.upper()
            else:
                raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
        return spec_obj

    def merge_from(self, other):
        for field in DeviceSpec.__slots__:
            value = getattr(other, field)
            if value is not None:
                setattr(self, field, value)

    def make_merged_spec(self, other):
        merged = DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)
        merged.merge_from(other)
        return merged

    def to_string(self):
        out = []
        if self.job is not None:
            out.append(f"/job:{self.job}")
        if self.replica is not None:
            out.append(f"/replica:{self.replica}")
        if self.task is not None:
            out.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out.append(f"/device:{self.device_type}:{index}")
        elif self.device_index is not None:
            out.append(f"/device:*:{self.device_index}")
        return "".join(out)

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"


def _canonical_device(spec):
    if spec is None:
        return None
    if isinstance(spec, DeviceSpec):
        return spec.to_string()
    return DeviceSpec.from_string(spec).to_string()


class _PendingOp:
    """What a device function sees of an op about to be created (TF calls
    device functions with the Operation; weir places a node when it is added,
    so the function gets this stand-in: type, name, device, node_def)."""

    def __init__(self, op_type, name, device, attrs):
        self.type = op_type
        self.name = name
        self.device = device
        self._attrs = attrs

    @property
    def node_def(self):
        from weir.core import protos
        return protos.NodeDef(name=self.name, op=self.type, device=self.device or "")

    def get_attr(self, name):
        return self._attrs[name]


# --- collections keys ------------------------------------------------------------

class GraphKeys:
    """Standard collection names (TF1's tf.GraphKeys)."""
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES  # TF1's deprecated alias


# --- Tensor ------------------------------------------------------------------------

class Tensor:
    """One output of an Operation: `name` is "op_name:index". Immutable,
    hashable by identity (== is identity, as in TF1 graph mode)."""

    # numpy defers to our reflected operators (np.float32(2) * t -> t.__rmul__).
    __array_priority__ = 100

    __slots__ = ("_op", "_value_index", "_dtype", "_shape_val", "__weakref__")

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape_val = None

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        """The static shape: inferred by the C++ shape functions when the node
        was added, refined by set_shape."""
        if self._shape_val is None:
            self._shape_val = tensor_shape.TensorShape(
                self._op._graph._c_graph.output_shape(self._op._id, self._value_index))
        return self._shape_val

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Merges `shape` into the static shape (ValueError when incompatible);
        the shape functions of nodes added later see the merged shape."""
        shape = tensor_shape.as_shape(shape)
        current = self.shape
        if not current.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {current} is not compatible with supplied shape "
                             f"{shape}")
        merged = current.merge_with(shape)
        self._shape_val = merged
        if merged.ndims is None:
            return  # both unknown-rank: nothing the C++ shape store could learn
        self._op._graph._c_graph.set_output_shape(self._op._id, self._value_index,
                                                  merged._as_c_shape())

    def consumers(self):
        g = self._op._graph
        return [g._op_for_id(dst) for dst, _ in
                g._c_graph.node_outputs(self._op._id)[self._value_index]]

    def eval(self, feed_dict=None, session=None):
        """This tensor's value in `session` (default: the default session)."""
        return _run_using_session([self], feed_dict, self.graph, session)[0]

    def _as_endpoint(self):
        return (self._op._id, self._value_index)

    def _as_node_def_input(self):
        return self._op.name if self._value_index == 0 else self.name

    def _shape_as_list(self):
        shape = self.shape
        return None if shape.ndims is None else shape.as_list()

    @classmethod
    def _override_operator(cls, operator, func):
        """Installs `func` as the operator method `operator` ("__add__")."""
        setattr(cls, operator, func)

    @classmethod
    def _override_binary_operator(cls, op_name, func):
        """Installs __<op_name>__ and __r<op_name>__ from func(x, y): the other
        operand is converted to this tensor's dtype, as TF1 does; the reflected
        form calls func(converted_other, self)."""

        def binary(x, y):
            if not isinstance(y, Tensor) and not _is_convertible(y):
                return NotImplemented
            with name_scope(None, op_name, [x, y]) as scope:
                y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
                return func(x, y, name=scope)

        def reflected(y, x):
            if not _is_convertible(x):
                return NotImplemented
            with name_scope(None, op_name, [x, y]) as scope:
                x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
                return func(x, y, name=scope)

        binary.__name__ = f"__{op_name}__"
        reflected.__name__ = f"__r{op_name}__"
        setattr(cls, f"__{op_name}__", binary)
        setattr(cls, f"__r{op_name}__", reflected)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a `weir.Tensor` as a Python `bool` is not allowed. Use `if t is not "
                        "None:` instead of `if t:` to test if a tensor is defined, and use "
                        "weir ops such as wr.cond to execute subgraphs conditioned on the value "
                        "of a tensor.")

    def __iter__(self):
        raise TypeError("Tensor objects are only iterable when eager execution is enabled (weir "
                        "has graph mode only). To iterate over this tensor use wr.unstack or "
                        "index it.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors. ({self.name}) Please "
                        "call `x.shape` rather than `len(x)` for shape information.")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(f"Cannot convert a symbolic Tensor ({self.name}) to a numpy "
                                  "array: run it in a Session.")

    def __index__(self):
        raise TypeError(f"Tensor {self.name} cannot be used as a Python index; it has no value "
                        "until it runs.")

    def __repr__(self):
        return f"<weir.Tensor '{self.name}' shape={self.shape} dtype={self._dtype.name}>"

    def __str__(self):
        return (f'Tensor("{self.name}", shape={self.shape}, dtype={self._dtype.name}'
                + (f", device={self.device}" if self.device else "") + ")")


def _is_convertible(value):
    """Whether convert_to_tensor could handle `value` (used by the operator
    dispatch to return NotImplemented for foreign types)."""
    if isinstance(value, (Tensor, int, float, complex, bool, str, bytes, np.ndarray, np.generic,
                          list, tuple)):
        return True
    for base_type, _ in _conversion_functions():
        if isinstance(value, base_type):
            return True
    return False


# --- Operation ------------------------------------------------------------------------

class Operation:
    """One node of a Graph (a view over the C++ node with id `_id`)."""

    __slots__ = ("_graph", "_id", "_name", "_type", "_outputs", "__weakref__")

    def __init__(self, graph, node_id):
        self._graph = graph
        self._id = node_id
        c = graph._c_graph
        self._name = c.node_name(node_id)
        self._type = c.node_op(node_id)
        self._outputs = None

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._graph._c_graph.node_device(self._id)

    @property
    def outputs(self):
        if self._outputs is None:
            c = self._graph._c_graph
            self._outputs = [Tensor(self, i, dtypes.as_dtype(c.output_dtype(self._id, i)))
                             for i in range(c.num_outputs(self._id))]
        return self._outputs

    def values(self):
        return tuple(self.outputs)

    @property
    def inputs(self):
        g = self._graph
        return [g._tensor_for(e) for e in g._c_graph.node_inputs(self._id)]

    @property
    def control_inputs(self):
        g = self._graph
        return [g._op_for_id(i) for i in g._c_graph.node_control_inputs(self._id)]

    @property
    def _control_outputs(self):
        g = self._graph
        c = g._c_graph
        return [g._op_for_id(i) for i in range(c.num_node_ids())
                if c.node_exists(i) and self._id in c.node_control_inputs(i)]

    @property
    def _input_types(self):
        c = self._graph._c_graph
        return [dtypes.as_dtype(c.input_dtype(self._id, i))
                for i in range(len(c.node_inputs(self._id)))]

    @property
    def _output_types(self):
        return [t.dtype for t in self.outputs]

    @property
    def node_def(self):
        from weir.core import protos
        return protos.NodeDef.FromString(self._graph._c_graph.node_def(self._id))

    @property
    def op_def(self):
        """The op's declaration, as _C.op_def gives it (a dict)."""
        return _op_def_cached(self._type)

    @property
    def _source_location(self):
        return self._graph._c_graph.node_source_location(self._id)

    @property
    def traceback(self):
        """Where the node was built: [(file, line, "<unknown>", None)] (weir
        keeps only the first frame outside the weir package)."""
        location = self._source_location
        if not location:
            return []
        filename, _, line = location.rpartition(":")
        return [(filename, int(line) if line.isdigit() else 0, "<unknown>", None)]

    def get_attr(self, name):
        """The attr's value as TF returns it: DType for types, bytes for
        strings, TensorShapeProto for shapes, TensorProto for tensors."""
        attrs = self._graph._c_graph.node_attrs(self._id)
        if name not in attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        attr_type = None
        for attr in _op_def_cached(self._type)["attrs"]:
            if attr["name"] == name:
                attr_type = attr["type"]
                break
        return _attr_to_python(attrs[name], attr_type)

    def _get_attr_python(self, name):
        """The attr's raw Python value as _C gives it."""
        return self._graph._c_graph.node_attrs(self._id)[name]

    def colocation_groups(self):
        attrs = self._graph._c_graph.node_attrs(self._id)
        groups = attrs.get("_class")
        if groups:
            groups = [g if isinstance(g, bytes) else str(g).encode() for g in groups]
            groups = [g for g in groups if g.startswith(b"loc:@")]
            if groups:
                return groups
        return [f"loc:@{self._name}".encode()]

    def run(self, feed_dict=None, session=None):
        """Runs this op in `session` (default: the default session)."""
        _run_using_session(self, feed_dict, self.graph, session)

    def __repr__(self):
        return f"<weir.Operation '{self._name}' type={self._type}>"

    def __str__(self):
        return str(self.node_def)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other


def _attr_to_python(value, attr_type):
    if attr_type is None:
        return value
    if attr_type == "type":
        return dtypes.as_dtype(value)
    if attr_type == "list(type)":
        return [dtypes.as_dtype(v) for v in value]
    if attr_type == "shape":
        return tensor_shape.TensorShape(value).as_proto()
    if attr_type == "list(shape)":
        return [tensor_shape.TensorShape(v).as_proto() for v in value]
    if attr_type == "tensor":
        from weir.framework import tensor_util
        return tensor_util.make_tensor_proto(value)
    if attr_type == "list(tensor)":
        from weir.framework import tensor_util
        return [tensor_util.make_tensor_proto(v) for v in value]
    if attr_type == "string" and isinstance(value, str):
        return value.encode()
    if attr_type == "list(string)":
        return [v.encode() if isinstance(v, str) else v for v in value]
    return value


_op_defs = {}


def _op_def_cached(op_type):
    op_def = _op_defs.get(op_type)
    if op_def is None:
        op_def = _C.op_def(op_type)
        _op_defs[op_type] = op_def
    return op_def


def _run_using_session(fetches, feed_dict, graph, session):
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()` / run an operation using "
                             "`run()`: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        if session.graph is not graph:
            raise ValueError("Cannot use the default session to evaluate tensor: the tensor's "
                             "graph is different from the session's graph. Pass an explicit "
                             "session to `eval(session=sess)`.")
    elif session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph is "
                         "different from the session's graph.")
    return session.run(fetches, feed_dict)


def get_default_session():
    """The innermost session entered with `as_default()` (None outside)."""
    from weir.client import session
    return session.get_default_session()


# --- control dependencies ----------------------------------------------------------------

class _ControlDependenciesController:
    def __init__(self, graph, control_op_ids):
        self._graph = graph
        self._control_ids = control_op_ids  # None: clear the outer scopes
        self._new_stack = control_op_ids is None
        self._seen = set()
        self._old_stack = None

    @property
    def control_ids(self):
        return self._control_ids or []

    def __enter__(self):
        g = self._graph
        if self._new_stack:
            self._old_stack = g._control_dependencies_stack
            g._control_dependencies_stack = []
        g._control_dependencies_stack.append(self)

    def __exit__(self, *exc):
        g = self._graph
        g._control_dependencies_stack.pop()
        if self._new_stack:
            g._control_dependencies_stack = self._old_stack
        return False


# --- Graph ----------------------------------------------------------------------------

class Graph:
    """A dataflow graph (tf.Graph). Thread-compatible like TF's: build it from
    one thread at a time; sessions may run it from many."""

    def __init__(self):
        self._c_graph = _C.Graph()
        self._lock = threading.RLock()
        self._ops_by_id = {}
        self._names_in_use = {}
        self._name_stack = ""
        self._device_stack = []  # entries: canonical device string, callable, or None (reset)
        self._control_dependencies_stack = []
        self._colocation_stack = []
        self._collections = {}
        self._finalized = False
        self._seed = None
        self._container = ""
        self._unfeedable = set()
        self._unfetchable = set()
        self._graph_key = f"grap-key-{id(self)}/"
        self._building_function = False
        # Hooks other modules set (variable_scope keeps its store here).
        self._attr_scope_map = {}
        # gradient_override_map: the active op type -> gradient name map, and
        # the name each overridden node was created with (node name -> name).
        self._gradient_override_map = {}
        self._gradient_op_types = {}

    # --- default graph ----------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Makes this the default graph of the current thread in the block."""
        stack = _graph_stack()
        stack.append(self)
        try:
            yield self
        finally:
            # Pop this graph even if an inner block left others on the stack.
            if stack and stack[-1] is self:
                stack.pop()
            else:
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i] is self:
                        del stack[i]
                        break

    # --- state ------------------------------------------------------------
    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, seed):
        self._seed = seed

    @property
    def version(self):
        """Grows with each node added (TF's version: one more than the last node id)."""
        return self._c_graph.num_node_ids()

    @property
    def graph_def_versions(self):
        from weir.core import protos
        return protos.GraphDef.FromString(self._c_graph.to_graph_def(
            self._c_graph.num_node_ids())).versions

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        """Makes the graph read-only: adding a node raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    @property
    def building_function(self):
        return self._building_function

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    # --- ops and tensors --------------------------------------------------
    def _op_for_id(self, node_id):
        op = self._ops_by_id.get(node_id)
        if op is None:
            if not 0 <= node_id < self._c_graph.num_node_ids():
                raise ValueError(f"No node with id {node_id} in this graph")
            op = Operation(self, node_id)
            self._ops_by_id[node_id] = op
            # Names the C++ side chose (gradients, loop frames) are taken.
            self._names_in_use.setdefault(op.name.lower(), 1)
        return op

    def _tensor_for(self, endpoint):
        node_id, index = endpoint
        return self._op_for_id(node_id).outputs[index]

    def get_operations(self):
        c = self._c_graph
        return [self._op_for_id(i) for i in range(c.num_node_ids()) if c.node_exists(i)]

    def _rebind_rewritten(self, start):
        """Points the Operations of nodes that add_gradients expanded in place
        (function calls, If/While/Case) at the nodes that now hold their names
        and outputs, from the `start`-th rewrite on."""
        for _, old_id, new_id in self._c_graph.rewritten_nodes(start):
            op = self._ops_by_id.pop(old_id, None)
            if op is not None:
                op._id = new_id
                op._type = self._c_graph.node_op(new_id)
                self._ops_by_id[new_id] = op

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def _get_operation_by_name_unsafe(self, name):
        node_id = self._c_graph.find_node(name)
        if node_id < 0:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
        return self._op_for_id(node_id)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """The Tensor or Operation `obj` names (a name string, a Tensor, an
        Operation, or an object with `_as_graph_element()`), checked to
        belong to this graph."""
        if allow_tensor and allow_operation:
            types_str = "Tensor or Operation"
        elif allow_tensor:
            types_str = "Tensor"
        else:
            types_str = "Operation"
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None and callable(conv):
            obj = conv()
        if isinstance(obj, str):
            name = obj
            if ":" in name and allow_tensor:
                op_name, _, out_str = name.rpartition(":")
                try:
                    out_index = int(out_str)
                except ValueError:
                    raise ValueError(f"The name {name!r} looks a like a Tensor name, but is not a "
                                     "valid one. Tensor names must be of the form "
                                     "\"<op_name>:<output_index>\".") from None
                node_id = self._c_graph.find_node(op_name)
                if node_id < 0:
                    raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. "
                                   f"The operation, {op_name!r}, does not exist in the graph.")
                op = self._op_for_id(node_id)
                if not 0 <= out_index < len(op.outputs):
                    raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. "
                                   f"The operation, {op_name!r}, exists but only has "
                                   f"{len(op.outputs)} outputs.")
                return op.outputs[out_index]
            if ":" in name and not allow_tensor:
                raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a {types_str}.")
            if not allow_operation:
                if self._c_graph.find_node(name) >= 0:
                    raise ValueError(f"The name {name!r} refers to an Operation, not a "
                                     f"{types_str}. Tensor names must be of the form "
                                     "\"<op_name>:<output_index>\".")
                raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, not "
                                 f"a {types_str}. Tensor names must be of the form "
                                 "\"<op_name>:<output_index>\".")
            return self._get_operation_by_name_unsafe(name)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as a weir.core.protos.GraphDef message (TensorFlow's wire
        format); from_version: only the nodes added since `version` was that."""
        from weir.core import protos
        start = from_version or 0
        graph_def = protos.GraphDef.FromString(self._c_graph.to_graph_def(start))
        if add_shapes:
            for node in graph_def.node:
                op = self._get_operation_by_name_unsafe(node.name)
                if op.outputs:
                    shapes = node.attr["_output_shapes"].list.shape
                    for t in op.outputs:
                        shapes.append(t.shape.as_proto())
        return graph_def

    def _as_graph_def_bytes(self, start_id=0):
        return self._c_graph.to_graph_def(start_id)

    # --- naming -----------------------------------------------------------
    def _name_taken(self, key, name):
        return key in self._names_in_use or self._c_graph.find_node(name) >= 0

    def unique_name(self, name, mark_as_used=True):
        """`name` under the current name scope, made unique with "_N" as TF
        does (case-insensitively, and also against names the C++ side gave)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if i == 0 and self._c_graph.find_node(name) >= 0:
            i = 1  # a node the C++ side created under this name
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base_key = key
            base_name = name
            while True:
                key = f"{base_key}_{i}"
                candidate = f"{base_name}_{i}"
                if not self._name_taken(key, candidate):
                    break
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
                self._names_in_use[base_key] = i + 1
            name = candidate
        return name

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Yields the new scope's name ending in "/" ("" for name None/"")."""
        old_stack = self._name_stack
        if not name:
            new_stack = ""
            returned = ""
        elif name[-1] == "/":
            new_stack = name[:-1]
            returned = name
        else:
            regex = _VALID_SCOPE_NAME if old_stack else _VALID_OP_NAME
            if not regex.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new_stack = self.unique_name(name)
            returned = new_stack + "/"
        self._name_stack = new_stack
        try:
            yield returned
        finally:
            self._name_stack = old_stack

    # --- devices ----------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """New ops get this device: a (partial) name merged over the outer
        scopes, a function op -> device name, or None (no device)."""
        if device_name_or_function is not None and not callable(device_name_or_function):
            entry = _canonical_device(device_name_or_function)
        else:
            entry = device_name_or_function
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _compute_device(self, op_type, name, attrs):
        # As TF applies device scopes: the innermost first, each seeing the device the inner
        # ones chose. A name fills the fields still open (an inner field wins); a function
        # gets the op with that device and returns the op's device (None: none); a None scope
        # hides the scopes around it. So replica_device_setter sees an inner "/job:other".
        device = ""
        for entry in reversed(self._device_stack):
            if entry is None:
                break
            if callable(entry):
                result = entry(_PendingOp(op_type, name, device, attrs))
                device = DeviceSpec.from_string(_canonical_device(result)).to_string() \
                    if result else ""
            else:
                device = DeviceSpec.from_string(entry).make_merged_spec(
                    DeviceSpec.from_string(device)).to_string()
        return device

    # --- colocation -------------------------------------------------------
    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """New ops are colocated with `op` (an Operation, a Tensor, or an
        object with `.op`); ignore_existing drops outer colocations."""
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but ignore_existing is not "
                             "True")
        if op is not None:
            op = _as_operation(op)
        saved_devices = self._device_stack
        self._device_stack = []
        saved_colocation = self._colocation_stack
        if ignore_existing:
            self._colocation_stack = []
        else:
            self._colocation_stack = list(self._colocation_stack)
        if op is not None:
            self._colocation_stack.append(op)
        try:
            yield
        finally:
            self._device_stack = saved_devices
            self._colocation_stack = saved_colocation

    # --- control dependencies ---------------------------------------------
    def control_dependencies(self, control_inputs):
        """New ops run after `control_inputs` (Operations or Tensors); None
        clears the dependencies of the outer blocks."""
        if control_inputs is None:
            return _ControlDependenciesController(self, None)
        ids = []
        for c in control_inputs:
            op = _as_operation(c, for_control_dependencies=True)
            if op.graph is not self:
                raise ValueError(f"Control input {op.name} is not an element of this graph.")
            if op._id not in ids:
                ids.append(op._id)
        return _ControlDependenciesController(self, ids)

    def _control_dependencies_for_inputs(self, input_ids):
        result = []
        for controller in self._control_dependencies_stack:
            # An input built inside this block already follows its control
            # inputs, so the new op needs no extra edge for them.
            if any(i in controller._seen for i in input_ids):
                continue
            for c in controller.control_ids:
                if c not in input_ids and c not in result:
                    result.append(c)
        return result

    # --- containers -------------------------------------------------------
    @contextlib.contextmanager
    def container(self, container_name):
        """Stateful ops created in the block get `container` = container_name."""
        original = self._container
        self._container = container_name
        try:
            yield self._container
        finally:
            self._container = original

    # --- node creation ----------------------------------------------------
    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None, attrs=None,
                  op_def=None, compute_shapes=True, compute_device=True):
        """TF's low-level Graph.create_op: `inputs` is the flat list of input
        tensors, `attrs` a dict of attr values (Python values or AttrValue
        messages). Returns the Operation."""
        del dtypes, input_types, op_def, compute_shapes, compute_device  # inferred by the core
        self._check_not_finalized()
        name = op_type if name is None else name
        if name and name[-1] == "/":
            name = name[:-1]
        else:
            name = self.unique_name(name)
        converted = {}
        for key, value in (attrs or {}).items():
            converted[key] = _attr_value_message_to_python(value)
        flat = [convert_to_tensor(t) for t in inputs]
        structured = _structure_inputs(_op_def_cached(op_type), flat, converted)
        return self._create_op_internal(op_type, structured, converted, name)

    def _create_op_internal(self, op_type, inputs, attrs, name, input_tensors=None):
        """Adds one node named exactly `name`; `inputs` has one entry per
        input arg (an endpoint or a list of endpoints)."""
        self._check_not_finalized()
        input_ids = set()
        for entry in inputs:
            if isinstance(entry, list):
                for e in entry:
                    input_ids.add(e[0])
            else:
                input_ids.add(entry[0])
        control_ids = self._control_dependencies_for_inputs(input_ids) \
            if self._control_dependencies_stack else []
        device = self._compute_device(op_type, name, attrs) if self._device_stack else ""
        colocate = []
        if self._colocation_stack:
            device_set = False
            for col_op in self._colocation_stack:
                for group in col_op.colocation_groups():
                    target = group[len(b"loc:@"):].decode()
                    if target not in colocate:
                        colocate.append(target)
                if not device_set and col_op.device:
                    device = col_op.device
                    device_set = True
        location = _user_source_location()
        with self._lock:
            node_id = self._c_graph.add_node(op_type, name, inputs, attrs, control_ids, device,
                                             colocate, location)
            self._names_in_use.setdefault(name.lower(), 1)
            for controller in self._control_dependencies_stack:
                controller._seen.add(node_id)
            op = Operation(self, node_id)
            self._ops_by_id[node_id] = op
            if op_type in self._gradient_override_map:
                self._gradient_op_types[name] = self._gradient_override_map[op_type]
        return op

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """TF1's Graph.gradient_override_map: ops of a type in `op_type_map`
        created inside use the Python gradient registered (wr.RegisterGradient)
        under the mapped name."""
        if not isinstance(op_type_map, dict):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        for key, value in op_type_map.items():
            if not (isinstance(key, str) and isinstance(value, str)):
                raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # --- feeding and fetching ---------------------------------------------
    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor):
        return tensor not in self._unfeedable

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op):
        if isinstance(tensor_or_op, Tensor):
            return tensor_or_op.op not in self._unfetchable
        return tensor_or_op not in self._unfetchable

    # --- collections ------------------------------------------------------
    def add_to_collection(self, name, value):
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        with self._lock:
            return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        """A copy of the collection; with `scope`, only items whose `.name`
        matches it from the start (re.match)."""
        with self._lock:
            items = self._collections.get(name)
            if items is None:
                return []
            if scope is None:
                return list(items)
            regex = re.compile(scope)
            return [item for item in items
                    if getattr(item, "name", None) is not None and regex.match(item.name)]

    def get_all_collection_keys(self):
        with self._lock:
            return [k for k, v in self._collections.items() if isinstance(k, str)]

    @property
    def collections(self):
        return self.get_all_collection_keys()

    def clear_collection(self, name):
        with self._lock:
            self._collections.pop(name, None)

    def __repr__(self):
        return f"<weir.Graph at {id(self):#x} with {self._c_graph.num_node_ids()} nodes>"


_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


def _attr_value_message_to_python(value):
    """An AttrValue message (TF's create_op takes them) as a Python value."""
    if not hasattr(value, "WhichOneof"):
        return value
    kind = value.WhichOneof("value")
    if kind is None:
        return []
    if kind == "list":
        lst = value.list
        for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
            items = getattr(lst, field)
            if len(items):
                if field == "shape":
                    return [tensor_shape.TensorShape(s)._as_c_shape() for s in items]
                if field == "tensor":
                    from weir.framework import tensor_util
                    return [tensor_util.make_ndarray(t) for t in items]
                if field == "func":
                    return [f.name for f in items]
                return list(items)
        return []
    if kind == "shape":
        return tensor_shape.TensorShape(value.shape)._as_c_shape()
    if kind == "tensor":
        from weir.framework import tensor_util
        return tensor_util.make_ndarray(value.tensor)
    if kind == "func":
        return value.func.name
    return getattr(value, kind)


def _structure_inputs(op_def, flat, attrs):
    """Groups a flat input list by the op's input args (create_op's form)."""
    args = op_def["inputs"]
    sizes = []
    unknown = []
    for i, arg in enumerate(args):
        if arg["number_attr"]:
            n = attrs.get(arg["number_attr"])
            sizes.append(n)
            if n is None:
                unknown.append(i)
        elif arg["type_list_attr"]:
            types = attrs.get(arg["type_list_attr"])
            sizes.append(None if types is None else len(types))
            if types is None:
                unknown.append(i)
        else:
            sizes.append(-1)  # one tensor
    known = sum(1 if s == -1 else s for s in sizes if s is not None)
    if len(unknown) > 1:
        raise ValueError(f"create_op of {op_def['name']}: give the list lengths as attrs")
    if unknown:
        sizes[unknown[0]] = len(flat) - known
    if sum(1 if s == -1 else s for s in sizes) != len(flat):
        raise ValueError(f"create_op of {op_def['name']}: {len(flat)} inputs given, the op takes "
                         f"{sum(1 if s == -1 else s for s in sizes)}")
    out = []
    pos = 0
    for s in sizes:
        if s == -1:
            out.append(flat[pos]._as_endpoint())
            pos += 1
        else:
            out.append([t._as_endpoint() for t in flat[pos:pos + s]])
            pos += s
    return out


def _as_operation(value, for_control_dependencies=False):
    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    conv = getattr(value, "_as_graph_element", None)
    if conv is not None and callable(conv):
        element = conv()
        if isinstance(element, (Tensor, Operation)):
            return _as_operation(element)
    op = getattr(value, "op", None)
    if isinstance(op, Operation):
        return op
    what = "Operation or Tensor" if for_control_dependencies else "Operation"
    raise TypeError(f"Can not convert a {type(value).__name__} into a {what}.")


# --- default graph ------------------------------------------------------------------------

_thread_state = threading.local()
_global_default_graph = None
_global_lock = threading.Lock()


def _graph_stack():
    stack = getattr(_thread_state, "stack", None)
    if stack is None:
        stack = []
        _thread_state.stack = stack
    return stack


def get_default_graph():
    """The innermost graph entered with as_default(), else the global default."""
    stack = _graph_stack()
    if stack:
        return stack[-1]
    global _global_default_graph
    if _global_default_graph is None:
        with _global_lock:
            if _global_default_graph is None:
                _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    """Replaces the global default graph with a new, empty one."""
    if _graph_stack():
        raise AssertionError("Do not use wr.reset_default_graph() to clear nested graphs. If you "
                             "need a cleared graph, exit the nesting and create a new graph.")
    global _global_default_graph
    with _global_lock:
        _global_default_graph = Graph()


def _get_graph_from_inputs(values, graph=None):
    """The graph of the Tensors/Operations among `values` (ValueError when
    they come from different graphs), else `graph` or the default graph."""
    found = graph
    found_from = None
    for v in values:
        g = None
        if isinstance(v, (Tensor, Operation)):
            g = v.graph
        else:
            vg = getattr(v, "graph", None)
            if isinstance(vg, Graph):
                g = vg
        if g is None:
            continue
        if found is None:
            found = g
            found_from = v
        elif g is not found:
            what = found_from if found_from is not None else "the given graph"
            raise ValueError(f"{v} must be from the same graph as {what}.")
    return found if found is not None else get_default_graph()


def _flatten_values(values):
    out = []
    stack = [values]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        else:
            out.append(v)
    return out


# --- scope functions ------------------------------------------------------------------------

class name_scope:  # noqa: N801  (TF's name)
    """TF1's tf.name_scope(name, default_name=None, values=None): enters the
    graph of `values` (or the default graph) and a name scope; yields the
    scope name ending in "/"."""

    def __init__(self, name, default_name=None, values=None):
        self._name = default_name if name is None else name
        self._default_name = default_name
        self._values = values
        self._graph_ctx = None
        self._scope_ctx = None

    @property
    def name(self):
        return self._name

    def __enter__(self):
        values = self._values
        if values:
            g = _get_graph_from_inputs(_flatten_values(values))
        else:
            g = get_default_graph()
        self._graph_ctx = g.as_default()
        self._graph_ctx.__enter__()
        try:
            self._scope_ctx = g.name_scope(self._name)
            return self._scope_ctx.__enter__()
        except BaseException:
            self._graph_ctx.__exit__(*sys.exc_info())
            raise

    def __exit__(self, *exc):
        try:
            self._scope_ctx.__exit__(*exc)
        finally:
            self._graph_ctx.__exit__(*exc)
        return False


def op_scope(values, name, default_name=None):
    """TF1's deprecated op_scope(values, name, default_name)."""
    return name_scope(name, default_name, values)


def get_name_scope():
    return get_default_graph().get_name_scope()


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def container(container_name):
    return get_default_graph().container(container_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op, ignore_existing=False):
    g = get_default_graph() if op is None else _get_graph_from_inputs([op])
    return g.colocate_with(op, ignore_existing)


@contextlib.contextmanager
def init_scope():
    """Lifts op creation out of control-dependency scopes (TF's init_scope,
    for initializers); keeps the name scope and device."""
    with get_default_graph().control_dependencies(None):
        yield


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def get_all_collection_keys():
    return get_default_graph().get_all_collection_keys()


def executing_eagerly():
    """Always False: weir runs graphs (TF1 graph mode)."""
    return False


def disable_eager_execution():
    """A no-op: weir has graph mode only."""


def disable_v2_behavior():
    """A no-op: weir behaves like TensorFlow 1 already."""


def enable_eager_execution(*args, **kwargs):
    raise NotImplementedError("weir has graph mode only (TF1's graph API); there is no eager "
                              "execution")


def is_tensor(x):
    return isinstance(x, Tensor) or getattr(x, "_is_weir_tensor_like", False)


# --- conversion ---------------------------------------------------------------------------------

_conversion_registry = []  # (priority, insertion order, base_type, fn)
_conversion_sorted = []
_conversion_lock = threading.Lock()


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Makes convert_to_tensor accept instances of `base_type` (a type or a
    tuple of types): conversion_func(value, dtype=None, name=None,
    as_ref=False) returns a Tensor (or NotImplemented to pass). Lower
    priority runs first."""
    if not (isinstance(base_type, type) or (isinstance(base_type, tuple)
                                            and all(isinstance(t, type) for t in base_type))):
        raise TypeError("base_type must be a type or a tuple of types.")
    if any(issubclass(t, (str, bytes, int, float, np.ndarray, np.generic)) or t is object
           for t in (base_type if isinstance(base_type, tuple) else (base_type,))):
        raise TypeError("Cannot register conversions for Python numeric types, strings, numpy "
                        "types or object.")
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")
    global _conversion_sorted
    with _conversion_lock:
        _conversion_registry.append((priority, len(_conversion_registry), base_type,
                                     conversion_func))
        _conversion_sorted = [(b, f) for _, _, b, f in sorted(_conversion_registry,
                                                               key=lambda e: (e[0], e[1]))]


def _conversion_functions():
    return _conversion_sorted


def _contains_tensor(value):
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    for base_type, _ in _conversion_sorted:
        if isinstance(value, base_type):
            return True
    return False


def _first_tensor_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype.base_dtype
    if isinstance(value, (list, tuple)):
        for v in value:
            dt = _first_tensor_dtype(v)
            if dt is not None:
                return dt
    elif not isinstance(value, (np.ndarray, np.generic, int, float, bool, str, bytes, complex)):
        dt = getattr(value, "dtype", None)
        if isinstance(dt, dtypes.DType):
            return dt.base_dtype
    return None


def _autopack(value, dtype, name):
    """A (nested) list holding Tensors -> Pack of its converted elements."""
    from weir.framework import op_def_library
    if dtype is None:
        dtype = _first_tensor_dtype(value)
    with name_scope(name, "packed") as scope:
        elems = []
        for i, elem in enumerate(value):
            if isinstance(elem, (list, tuple)) and _contains_tensor(elem):
                elems.append(_autopack(elem, dtype, str(i)))
            else:
                elems.append(convert_to_tensor(elem, dtype=dtype, name=str(i)))
        return op_def_library.apply_op("Pack", name=scope, values=elems, axis=0)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None,
                      as_ref=False):
    """`value` as a Tensor: Tensors pass (a different dtype is a ValueError),
    registered types go through their conversion function, lists holding
    Tensors are packed, anything else becomes a Const. preferred_dtype is
    tried first for Python/numpy values and dropped if it does not fit."""
    if preferred_dtype is None:
        preferred_dtype = dtype_hint
    if isinstance(value, Tensor):
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
            if not dtype.is_compatible_with(value.dtype):
                raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                                 f"dtype {value.dtype.name}: {value!r}")
        return value
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    for base_type, fn in _conversion_sorted:
        if isinstance(value, base_type):
            if dtype is None and preferred_dtype is not None:
                try:
                    ret = fn(value, dtype=dtypes.as_dtype(preferred_dtype), name=name,
                             as_ref=as_ref)
                except (TypeError, ValueError):
                    ret = NotImplemented
                if ret is not NotImplemented and isinstance(ret, Tensor):
                    return ret
            ret = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if ret is NotImplemented:
                continue
            if not isinstance(ret, Tensor):
                raise RuntimeError(f"{fn} of {type(value).__name__} returned a "
                                   f"{type(ret).__name__}, not a Tensor")
            if dtype is not None and not dtype.is_compatible_with(ret.dtype):
                raise RuntimeError(f"{fn} of {type(value).__name__} returned dtype "
                                   f"{ret.dtype.name}, {dtype.name} was requested")
            return ret
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor (target dtype="
                        f"{dtype}, name={name!r}, as_ref={as_ref})")
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        return _autopack(value, dtype, name)
    from weir.framework import constant_op
    if dtype is None and preferred_dtype is not None:
        try:
            return constant_op._constant_for_conversion(value, dtypes.as_dtype(preferred_dtype),
                                                        name, strict=True)
        except (TypeError, ValueError):
            pass
    return constant_op._constant_for_conversion(value, dtype, name)


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None):
    if not isinstance(values, (list, tuple)):
        raise TypeError("values must be a sequence.")
    return [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype,
                              name=None if name is None else f"{name}_{i}")
            for i, v in enumerate(values)]


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    if getattr(value, "_is_indexed_slices", False):
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
