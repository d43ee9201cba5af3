"""Variable scopes and get_variable (TF1's tf.variable_scope / tf.get_variable).

Variables made by `get_variable` live in a per-graph store keyed by their full
name ("<scope>/<name>"), independent of name scopes. Reuse follows TF1:
reuse=None inherits the enclosing scope's flag, reuse=True requires the
variable to exist, AUTO_REUSE creates it when missing and shares it
otherwise; a clash or a miss raises TF's ValueError messages. The default
initializer is glorot_uniform for floating dtypes and zeros for integers and
bools (weir.ops.init_ops, imported when first needed).

    with wr.variable_scope("layer1"):
        w = wr.get_variable("w", [3, 4])          # "layer1/w:0"
    with wr.variable_scope("layer1", reuse=True):
        assert wr.get_variable("w", [3, 4]) is w
"""
import contextlib
import enum
import weakref

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.ops import variables

__all__ = ["variable_scope", "get_variable", "get_local_variable", "get_variable_scope",
           "VariableScope", "AUTO_REUSE", "no_regularizer", "variable_op_scope"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_):
    """A regularizer that adds no loss (TF1's tf.no_regularizer)."""
    return None


class VariableScope:
    """The settings get_variable uses under one variable_scope."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def dtype(self):
        return self._dtype

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def partitioner(self):
        return self._partitioner

    @property
    def custom_getter(self):
        return self._custom_getter

    @property
    def use_resource(self):
        return True

    @property
    def constraint(self):
        return self._constraint

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_dtype(self, dtype):
        self._dtype = dtype

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource):
        pass

    def global_variables(self):
        return ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, self._name)

    def trainable_variables(self):
        return ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, self._name)

    def local_variables(self):
        return ops.get_collection(ops.GraphKeys.LOCAL_VARIABLES, self._name)

    def get_collection(self, name):
        return ops.get_collection(name, self._name)

    def get_variable(self, name, shape=None, dtype=None, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None,
                     partitioner=None, validate_shape=True, use_resource=None,
                     custom_getter=None, constraint=None, synchronization=None,
                     aggregation=None):
        full_name = self._name + "/" + name if self._name else name
        if reuse is None:
            reuse = self._reuse
        if initializer is not None and not callable(initializer):
            # A value initializer decides the dtype (TF: an int32 for 3, a
            # float64 for np.float64(1)); an explicit dtype must agree with it.
            init_dtype = _value_dtype(initializer)
            if dtype is not None and dtypes.as_dtype(dtype).base_dtype != init_dtype:
                raise ValueError("Initializer type '%s' and explicit dtype '%s' don't match."
                                 % (init_dtype, dtypes.as_dtype(dtype).base_dtype))
            dtype = init_dtype
        if dtype is None:
            dtype = self._dtype
        if initializer is None:
            initializer = self._initializer
        if regularizer is None:
            regularizer = self._regularizer
        if constraint is None:
            constraint = self._constraint
        if partitioner is None:
            partitioner = self._partitioner
        if partitioner is not None:
            raise ValueError("get_variable: partitioned variables (partitioner=) are not "
                             "supported by weir (variable %s)" % full_name)
        if use_resource is None:
            use_resource = self._use_resource
        getter = custom_getter if custom_getter is not None else self._custom_getter
        store = _store()
        kwargs = dict(shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, reuse=reuse, trainable=trainable,
                      collections=collections, validate_shape=validate_shape,
                      constraint=constraint, use_resource=use_resource)
        # Variable names depend on the variable scope only, not on name scopes.
        with ops.name_scope(None):
            if getter is not None:
                return getter(store.get_variable, full_name, **kwargs)
            return store.get_variable(full_name, **kwargs)


class _VariableStore:
    def __init__(self):
        self.vars = {}
        self.scope_counts = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     validate_shape=True, constraint=None, use_resource=None, **unused):
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
        if shape is not None:
            shape = tensor_shape.as_shape(shape)
        init_is_value = initializer is not None and not callable(initializer)
        if name in self.vars:
            if reuse is False or reuse is None:
                raise ValueError(
                    "Variable %s already exists, disallowed. Did you mean to set reuse=True or "
                    "reuse=tf.AUTO_REUSE in VarScope?" % name)
            found = self.vars[name]
            if shape is not None and not init_is_value and \
                    not shape.is_compatible_with(found.get_shape()):
                raise ValueError("Trying to share variable %s, but specified shape %s and found "
                                 "shape %s." % (name, shape, found.get_shape()))
            if dtype != found.dtype.base_dtype and not init_is_value:
                raise ValueError("Trying to share variable %s, but specified dtype %s and found "
                                 "dtype %s." % (name, dtype.name, found.dtype.base_dtype.name))
            return found
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?" % name)
        if init_is_value:
            value = initializer
            if shape is not None:  # TF: even a compatible shape is refused
                raise ValueError("If initializer is a constant, do not specify shape.")
            initial_value = value
            var_dtype = None if isinstance(value, (ops.Tensor, variables.Variable)) else dtype
        else:
            if shape is None:  # TF1: no scalar default; the shape must be given
                shape = tensor_shape.unknown_shape()
            if not shape.is_fully_defined():
                raise ValueError("Shape of a new variable (%s) must be fully defined, but "
                                 "instead was %s." % (name, shape))
            if initializer is None:
                initializer = _default_initializer(name, dtype)
            init = initializer
            dims = shape.as_list()

            def initial_value():
                try:
                    return init(dims, dtype=dtype, partition_info=None)
                except TypeError:
                    return init(dims, dtype=dtype)
            var_dtype = dtype
        v = variables.Variable(initial_value, trainable=trainable, collections=collections,
                               validate_shape=validate_shape, name=name, dtype=var_dtype,
                               constraint=constraint, use_resource=use_resource)
        self.vars[name] = v
        if regularizer is not None:
            with ops.name_scope(name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _value_dtype(value):
    """The dtype convert_to_tensor gives `value`, without adding a node."""
    if isinstance(value, (ops.Tensor, variables.Variable)):
        return value.dtype.base_dtype
    from weir.framework import tensor_util
    arr = tensor_util.to_numpy(value)
    return dtypes.string if arr.dtype.kind in "OSU" else dtypes.as_dtype(arr.dtype)


def _default_initializer(name, dtype):
    from weir.ops import init_ops
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError("An initializer for variable %s of %s is required" % (name, dtype.name))


# Per graph: the variable store and the current variable scope.
_graph_state = weakref.WeakKeyDictionary()


class _GraphState:
    def __init__(self):
        self.store = _VariableStore()
        self.scope = VariableScope(False)


def _state():
    graph = ops.get_default_graph()
    state = _graph_state.get(graph)
    if state is None:
        state = _GraphState()
        _graph_state[graph] = state
    return state


def _store():
    return _state().store


def get_variable_scope():
    """The current VariableScope of the default graph."""
    return _state().scope


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Gets an existing variable "<scope>/<name>" or creates it (TF1 rules)."""
    return get_variable_scope().get_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, caching_device=None, partitioner=None,
                       validate_shape=True, use_resource=None, custom_getter=None,
                       constraint=None):
    collections = list(collections or []) + [ops.GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False, collections=collections,
                        validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint)


def variable(initial_value=None, trainable=None, collections=None, validate_shape=True,
             caching_device=None, name=None, dtype=None, constraint=None, use_resource=None,
             **kwargs):
    """TF1's variable_scope.variable: a plain Variable."""
    return variables.Variable(initial_value, trainable=trainable, collections=collections,
                              validate_shape=validate_shape, name=name, dtype=dtype,
                              constraint=constraint, use_resource=use_resource)


def _unique_scope_name(state, name):
    """`name`, or the first of `name_1`, `name_2`, ... whose scope under the
    current one is not open in this graph (TF's default_name rule)."""
    parent = state.scope.name
    full = parent + "/" + name if parent else name
    counts = state.store.scope_counts
    if counts.get(full, 0) == 0:
        return name
    i = 1
    while counts.get("%s_%d" % (full, i), 0) > 0:
        i += 1
    return "%s_%d" % (name, i)


def _current_name_scope():
    current = ops.get_name_scope()
    return current + "/" if current else ""


@contextlib.contextmanager
def _pure_variable_scope(state, name_or_scope, old_name_scope, reuse, settings):
    """Sets the current VariableScope (no name scope). Entering a scope counts
    it as open; leaving a scope given by name closes (resets the counts of)
    its sub-scopes, so default names restart when a scope is entered again,
    as TF does; leaving a re-entered scope object restores the counts."""
    old = state.scope
    counts = state.store.scope_counts
    if isinstance(name_or_scope, VariableScope):
        base = name_or_scope
        new_name = name_or_scope.name
        new_reuse = reuse if reuse else name_or_scope.reuse
        name_scope = name_or_scope.original_name_scope
    else:
        base = old
        new_name = old.name + "/" + name_or_scope if old.name else name_or_scope
        new_reuse = reuse or old.reuse
        name_scope = old_name_scope
    counts[new_name] = counts.get(new_name, 0) + 1
    snapshot = dict(counts) if isinstance(name_or_scope, VariableScope) else None

    def pick(key, current):
        value = settings.get(key)
        return value if value is not None else current
    scope = VariableScope(
        new_reuse, name=new_name, initializer=pick("initializer", base.initializer),
        regularizer=pick("regularizer", base.regularizer),
        caching_device=pick("caching_device", base.caching_device),
        partitioner=pick("partitioner", base.partitioner),
        custom_getter=_compose_getters(settings.get("custom_getter"), base.custom_getter),
        name_scope=name_scope or "", dtype=pick("dtype", base.dtype),
        use_resource=pick("use_resource", base.use_resource),
        constraint=pick("constraint", base.constraint))
    state.scope = scope
    try:
        yield scope
    finally:
        state.scope = old
        if snapshot is not None:
            state.store.scope_counts = snapshot
        else:
            # The store's counts now (an inner re-entered scope object may have put back a
            # snapshot of them): closing must reset those, as TF's close_variable_subscopes.
            prefix = new_name + "/"
            live = state.store.scope_counts
            for key in live:
                if key.startswith(prefix):
                    live[key] = 0


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """Opens a variable scope and (unless auxiliary_name_scope=False) a name
    scope: the given name, a scope object's last name component, or
    default_name, made unique as name scopes are; the variable scope of a
    default_name is made unique among variable scopes. Yields the VariableScope."""
    if default_name is None and name_or_scope is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    if reuse is False:
        reuse = None  # TF1: scopes cannot turn reuse off; False means "inherit"
    if values is not None and not isinstance(values, (list, tuple)):
        raise TypeError("The values parameter to variable_scope must be a list or tuple.")
    settings = dict(initializer=initializer, regularizer=regularizer,
                    caching_device=caching_device, partitioner=partitioner,
                    custom_getter=custom_getter, dtype=dtype, use_resource=use_resource,
                    constraint=constraint)
    graph = None
    for v in values or []:
        g = getattr(v, "graph", None)
        if g is not None:
            graph = g
            break
    graph_context = graph.as_default() if graph is not None else contextlib.nullcontext()
    with graph_context:
        state = _state()
        if name_or_scope is not None:
            if isinstance(name_or_scope, str):
                short = name_or_scope
            else:
                short = name_or_scope.name.split("/")[-1]
            if auxiliary_name_scope and short:
                name_ctx = ops.name_scope(short)
            else:
                name_ctx = contextlib.nullcontext(_current_name_scope())
            with name_ctx as opened:
                with _pure_variable_scope(state, name_or_scope, opened, reuse,
                                          settings) as scope:
                    yield scope
        else:
            if reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            name_ctx = ops.name_scope(default_name) if auxiliary_name_scope else \
                contextlib.nullcontext(_current_name_scope())
            with name_ctx as opened:
                unique = _unique_scope_name(state, default_name)
                with _pure_variable_scope(state, unique, opened, reuse, settings) as scope:
                    yield scope


def _compose_getters(new, old):
    if new is None:
        return old
    if old is None:
        return new

    def composed(getter, *args, **kwargs):
        return new(lambda *a, **k: old(getter, *a, **k), *args, **kwargs)
    return composed


@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """Deprecated TF1 alias of variable_scope with `values` first."""
    with variable_scope(name_or_scope, default_name=default_name, values=values,
                        initializer=initializer, regularizer=regularizer,
                        caching_device=caching_device, partitioner=partitioner,
                        custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                        constraint=constraint) as scope:
        yield scope
