"""Variables: TensorFlow 1's `tf.Variable` API on weir's resource variables.

A `Variable` is a VarHandleOp (shared_name = the variable's unique name, so
every session names the same state), an initializer (AssignVariableOp of the
initial value) and reads (ReadVariableOp). Unlike TF1's default ref variables
there is no VariableV2: every read is an explicit ReadVariableOp, made anew each
time the variable is converted to a tensor (so a read inside
`control_dependencies` happens after those dependencies, as in TF's resource
variables). The initial value is built under the variable's name scope and
outside any surrounding control dependencies (TF's init_scope).

    w = wr.Variable(np.zeros([3, 2], np.float32), name="w")
    y = wr.matmul(x, w)                      # a ReadVariableOp of w
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        sess.run(w.assign_add(np.ones([3, 2], np.float32)))
"""
import numpy as np

from weir.framework import constant_op
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op

__all__ = [
    "Variable", "VariableV1", "global_variables", "all_variables", "trainable_variables",
    "local_variables", "model_variables", "moving_average_variables",
    "global_variables_initializer", "initialize_all_variables", "variables_initializer",
    "initialize_variables", "local_variables_initializer", "initialize_local_variables",
    "is_variable_initialized", "report_uninitialized_variables", "assert_variables_initialized",
    "enable_resource_variables", "disable_resource_variables", "resource_variables_enabled",
]


# TF1's default: variables behave as reference variables when fetched (see
# Variable); tf.compat.v1.enable_resource_variables() switches new ones.
_use_resource_by_default = False


def enable_resource_variables():
    """New variables are resource variables: a fetched variable's value is
    an unordered read, as in TF2 (TF1's tf.enable_resource_variables)."""
    global _use_resource_by_default
    _use_resource_by_default = True


def disable_resource_variables():
    """New variables behave as TF1's reference variables when fetched: the
    value at the end of the step (the default)."""
    global _use_resource_by_default
    _use_resource_by_default = False


def resource_variables_enabled():
    return _use_resource_by_default


def _group(op_list, name):
    """One NoOp that runs after every op of `op_list` (TF's tf.group)."""
    deps = [o.op if isinstance(o, ops.Tensor) else o for o in op_list if o is not None]
    with ops.control_dependencies(deps):
        return apply_op("NoOp", name)


class Variable:
    """A resource variable with TF1's tf.Variable interface."""

    # numpy defers binary operators to our reflected methods.
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=None, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None,
                 expected_shape=None, import_scope=None, constraint=None, use_resource=None,
                 synchronization=None, aggregation=None, shape=None):
        if variable_def is not None:
            raise NotImplementedError("Variable(variable_def=...) (restoring from a VariableDef "
                                      "proto) is not supported by weir")
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if trainable is None:
            trainable = True
        if collections is None:
            collections = [ops.GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError("collections argument to Variable constructor must be a list, tuple, "
                             "or set. Got %s of type %s" % (collections, type(collections)))
        collections = list(collections)
        if trainable and ops.GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(ops.GraphKeys.TRAINABLE_VARIABLES)
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        self._constraint = constraint
        self._trainable = trainable
        init_from_fn = callable(initial_value)
        graph = ops.get_default_graph()
        self._graph = graph
        # init_scope: the variable's creation does not depend on the ops the
        # caller's control_dependencies name.
        with ops.control_dependencies(None):
            with ops.name_scope(name, "Variable",
                                [] if init_from_fn else [initial_value]) as scope_name:
                handle_name = scope_name[:-1] if scope_name.endswith("/") else scope_name
                # As TF's resource variables: "<name>/Initializer/initial_value",
                # or the callable's ops under "<name>/Initializer/".
                with ops.name_scope("Initializer"):
                    value = initial_value() if init_from_fn else initial_value
                    value = ops.convert_to_tensor(value, dtype=dtype, name="initial_value")
                self._initial_value = value
                self._dtype = value.dtype.base_dtype
                if shape is not None:
                    # An explicit shape may be partial ([None] grows); the value must fit it.
                    var_shape = tensor_shape.as_shape(shape)
                    if validate_shape:
                        value.shape.assert_is_compatible_with(var_shape)
                elif validate_shape:
                    var_shape = value.shape
                else:
                    var_shape = tensor_shape.unknown_shape()
                if expected_shape is not None and validate_shape:
                    var_shape.assert_is_compatible_with(tensor_shape.as_shape(expected_shape))
                if validate_shape and shape is None and not var_shape.is_fully_defined():
                    raise ValueError("initial_value must have a shape specified: %s" % value)
                self._shape = var_shape
                self._handle = apply_op("VarHandleOp", scope_name, dtype=self._dtype,
                                        shape=var_shape, shared_name=handle_name)
                self._handle_name = handle_name
                # The ops on the handle go to the handle's device, as in TF, so that a device
                # function that sends variables to a ps task and other ops to a worker
                # (replica_device_setter) does not split them from it: the initializer and the
                # initialization check exactly there (TF leaves VarIsInitializedOp to the
                # scope; Weir's placer keeps every op on a resource with the resource), the read
                # there with the scopes filling what the handle's device leaves open (TF's).
                with ops.device(None), ops.device(self._handle.device):
                    with ops.name_scope("IsInitialized"):
                        self._is_initialized_op = apply_op("VarIsInitializedOp", None,
                                                           resource=self._handle)
                    self._initializer_op = apply_op("AssignVariableOp", "Assign",
                                                    resource=self._handle, value=value)
                # Fetching a TF1 (reference) variable gives its value at the end of the step
                # (`sess.run([train_op, global_step])` sees the increment); a resource
                # variable's read is unordered, as in TF.
                if use_resource is None:
                    use_resource = _use_resource_by_default
                self._use_resource = bool(use_resource)
                with ops.name_scope("Read"), ops.device(self._handle.device):
                    self._graph_element = apply_op("ReadVariableOp", None,
                                                   resource=self._handle, dtype=self._dtype,
                                                   _fetch_at_step_end=not self._use_resource)
                    # ReadVariableOp's C++ shape function cannot see the handle's shape; TF
                    # carries it as handle data. set_shape gives it to later shape functions.
                    if self._shape.ndims is not None:
                        self._graph_element.set_shape(self._shape)
        graph.add_to_collections(collections, self)
        self._save_slice_info = None

    @classmethod
    def _from_variable_def(cls, fields, graph, prefix=""):
        """The Variable of an imported graph's resource variable, from the
        fields of its VariableDef ({field number: value}; names under
        `prefix`); None for a ref variable (not a VarHandleOp). Its reads and
        updates use the imported nodes (import_meta_graph's collections)."""
        def element(number):
            name = fields.get(number, b"").decode()
            return graph.as_graph_element(prefix + name) if name else None
        handle = element(1)
        if handle is None or handle.op.type != "VarHandleOp":
            return None
        self = cls.__new__(cls)
        self._graph = graph
        self._handle = handle
        self._handle_name = handle.op.name
        self._dtype = dtypes.as_dtype(handle.op.get_attr("dtype")).base_dtype
        self._shape = tensor_shape.as_shape(handle.op.get_attr("shape"))
        self._initializer_op = element(2)
        self._graph_element = element(3)
        if self._graph_element is None:
            with ops.name_scope(self._handle_name + "/Read/"):
                self._graph_element = self._read()
        elif self._shape.ndims is not None:
            self._graph_element.set_shape(self._shape)
        self._initial_value = element(6)
        self._trainable = bool(fields.get(7, 1))
        self._constraint = None
        self._save_slice_info = None
        try:
            self._is_initialized_op = graph.as_graph_element(
                self._handle_name + "/IsInitialized/VarIsInitializedOp")
        except (KeyError, ValueError):
            with ops.device(handle.device):
                self._is_initialized_op = apply_op("VarIsInitializedOp", None, resource=handle)
        return self

    # --- properties -------------------------------------------------------

    @property
    def name(self):
        return self._handle.name

    @property
    def op(self):
        return self._handle.op

    @property
    def handle(self):
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._handle.device

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    def __repr__(self):
        return "<wr.Variable '%s' shape=%s dtype=%s>" % (self.name, self._shape, self._dtype.name)

    def __str__(self):
        return self.__repr__()

    # --- reads -------------------------------------------------------------

    def _read(self, name=None):
        value = apply_op("ReadVariableOp", name, resource=self._handle, dtype=self._dtype)
        if self._shape.ndims is not None:  # nothing to add for an unknown rank
            value.set_shape(self._shape)
        return value

    def value(self):
        """A new read of the variable (ordered after the caller's control deps). As TensorFlow's,
        it sheds the caller's device scope so that the read runs where the variable lives (a
        variable on a ps task read by math under a worker's device scope)."""
        with ops.colocate_with(None, ignore_existing=True):
            return self._read()

    def read_value(self):
        with ops.name_scope("Read"):
            return self._read()

    def _as_graph_element(self):
        return self._graph_element

    def _ref(self):
        return self._graph_element

    def initialized_value(self):
        """The value, or the initial value when not yet initialized (TF1)."""
        from weir.ops import control_flow_ops
        with ops.control_dependencies(None):
            return control_flow_ops.cond(is_variable_initialized(self), self.read_value,
                                         lambda: self._initial_value)

    def sparse_read(self, indices, name=None):
        """The rows `indices` (ResourceGather: its gradient is an IndexedSlices)."""
        out = apply_op("ResourceGather", name or "Gather", resource=self._handle,
                       indices=indices, dtype=self._dtype)
        # The handle carries no shape: the static shape from the variable's.
        rows = out.op.inputs[1].get_shape()
        value_shape = self.get_shape()
        if rows.ndims is not None and value_shape.ndims:
            out.set_shape(rows.concatenate(value_shape[1:]))
        return out

    def eval(self, session=None):
        return self._graph_element.eval(session=session)

    def load(self, value, session=None):
        """Sets the variable to `value` by running its initializer with the
        initial value fed (TF1's Variable.load)."""
        if session is None:
            session = ops.get_default_session()
            if session is None:
                raise ValueError("Either session argument should be provided or default "
                                 "session should be established")
        session.run(self._initializer_op, {self._initial_value: value})

    # --- updates -----------------------------------------------------------

    def _convert_value(self, value):
        return ops.convert_to_tensor(value, dtype=self._dtype)

    def _update(self, op_type, value, name, read_value):
        value = self._convert_value(value)
        if not self._shape.is_compatible_with(value.shape):
            # TF checks when the graph is built (the kernel would only at run time).
            raise ValueError(
                "Cannot assign value to variable ' %s': Shape mismatch.The variable shape %s, "
                "and the assigned value shape %s are incompatible." %
                (self.name, self._shape, value.shape))
        assign = apply_op(op_type, name, resource=self._handle, value=value)
        if not read_value:
            return assign
        with ops.control_dependencies([assign]):
            return self._read()

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._update("AssignVariableOp", value, name, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._update("AssignAddVariableOp", delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._update("AssignSubVariableOp", delta, name, read_value)

    def _scatter(self, op_type, sparse_delta, name):
        return apply_op(op_type, name, resource=self._handle, indices=sparse_delta.indices,
                        updates=ops.convert_to_tensor(sparse_delta.values, dtype=self._dtype))

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """`sparse_delta` has `indices` and `values` (an IndexedSlices)."""
        return self._scatter("ResourceScatterUpdate", sparse_delta, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterAdd", sparse_delta, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterSub", sparse_delta, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterMul", sparse_delta, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterDiv", sparse_delta, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterMin", sparse_delta, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterMax", sparse_delta, name)

    def _scatter_nd(self, op_type, indices, updates, name):
        return apply_op(op_type, name, ref=self._handle, indices=indices,
                        updates=ops.convert_to_tensor(updates, dtype=self._dtype))

    def scatter_nd_update(self, indices, updates, name=None):
        """Overwrites the slices the last axis of `indices` names."""
        return self._scatter_nd("ResourceScatterNdUpdate", indices, updates, name)

    def scatter_nd_add(self, indices, updates, name=None):
        return self._scatter_nd("ResourceScatterNdAdd", indices, updates, name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return self._scatter_nd("ResourceScatterNdSub", indices, updates, name)

    def count_up_to(self, limit):
        return apply_op("ResourceCountUpTo", None, resource=self._handle, limit=limit,
                        T=self._dtype)

    # --- tensor-like behaviour ----------------------------------------------

    def __getitem__(self, slice_spec):
        return self.value()[slice_spec]

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __bool__(self):
        raise TypeError("Using a `wr.Variable` as a Python `bool` is not allowed.")

    def __array__(self, dtype=None):
        raise TypeError("A wr.Variable is a graph value: run it in a Session to get an array.")

    __hash__ = object.__hash__

    def __eq__(self, other):
        # TF1 semantics: identity (variables are used as dict keys).
        return self is other

    def __ne__(self, other):
        return self is not other


VariableV1 = Variable


def _forward(name):
    def method(self, *args):
        return getattr(ops.Tensor, name)(self.value(), *args)
    method.__name__ = name
    return method


# Arithmetic, comparison and logical operators act on a fresh read (looked
# up on Tensor at call time, where weir.ops.math_ops installs them).
for _name in ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
              "__abs__", "__invert__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
              "__rxor__", "__lt__", "__le__", "__gt__", "__ge__"]:
    setattr(Variable, _name, _forward(_name))
del _name


def _variable_to_tensor(value, dtype=None, name=None, as_ref=False):
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if dtype == dtypes.resource:
            return value.handle
        if not dtype.is_compatible_with(value.dtype):
            raise ValueError(
                "Incompatible type conversion requested to type '%s' for variable of type '%s'"
                % (dtype.name, value.dtype.name))
    return value.value()


ops.register_tensor_conversion_function(Variable, _variable_to_tensor)


# --- collections ---------------------------------------------------------------

def global_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables():
    return global_variables()


def trainable_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    key = getattr(ops.GraphKeys, "MOVING_AVERAGE_VARIABLES", "moving_average_variables")
    return ops.get_collection(key, scope)


def variables_initializer(var_list, name="init"):
    """One op that runs the initializers of `var_list` (a NoOp when empty)."""
    if var_list:
        return _group([v.initializer for v in var_list], name)
    return apply_op("NoOp", name)


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name)


def global_variables_initializer():
    return variables_initializer(global_variables())


def initialize_all_variables():
    return global_variables_initializer()


def local_variables_initializer():
    return variables_initializer(local_variables())


def initialize_local_variables():
    return local_variables_initializer()


def is_variable_initialized(variable):
    """A scalar bool tensor: whether `variable` has been assigned."""
    return apply_op("VarIsInitializedOp", None, resource=variable.handle)


def _all_variables_default(var_list):
    if var_list is None:
        var_list = global_variables() + local_variables()
    return list(var_list)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the names (op names) of the uninitialized
    variables of `var_list` (default: all global and local ones)."""
    var_list = _all_variables_default(var_list)
    with ops.name_scope(name) as scope:
        names = np.array([v.op.name.encode() for v in var_list], dtype=object)
        if not var_list:
            return constant_op.constant(np.zeros([0], dtype=object), dtype=dtypes.string,
                                        name=scope)
        with ops.control_dependencies(None):
            initialized = apply_op("Pack", None,
                                   values=[is_variable_initialized(v) for v in var_list])
        uninitialized = apply_op("LogicalNot", None, x=initialized)
        where = apply_op("Where", None, input=uninitialized)
        indices = apply_op("Reshape", None, tensor=where,
                           shape=np.array([-1], dtype=np.int32))
        name_tensor = constant_op.constant(names, dtype=dtypes.string)
        return apply_op("GatherV2", scope, params=name_tensor, indices=indices,
                        axis=np.int32(0))


def assert_variables_initialized(var_list=None):
    """An op failing (InvalidArgument, 'assertion failed') when any variable of
    `var_list` is uninitialized; None when there are no variables."""
    var_list = _all_variables_default(var_list)
    if not var_list:
        return None
    with ops.name_scope("assert_variables_initialized"):
        initialized = apply_op("Pack", None,
                               values=[is_variable_initialized(v) for v in var_list])
        all_initialized = apply_op("All", None, input=initialized,
                                   reduction_indices=np.array([0], dtype=np.int32))
        return apply_op("Assert", "Assert", condition=all_initialized,
                        data=[report_uninitialized_variables(var_list)])
