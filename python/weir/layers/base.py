"""The layer base class (tf.compat.v1.layers.Layer).

A layer creates its variables on its first call, through get_variable under a
variable scope named after the layer: the name given, or a unique default
("dense", "dense_1", ... per graph and enclosing scope, TF1's rule), so
variables are "<scope>/kernel", "<scope>/bias". Later calls reuse the same
variables and re-enter the first call's name scope ("dense/MatMul_1").
A layer built with `name=` and `_reuse=True` (the functions' `reuse=True`)
picks up the variables of an earlier layer of that name instead.

Regularizer losses go to the REGULARIZATION_LOSSES collection (once per
variable, not again on reuse) and to `layer.losses`; update ops (batch
normalization's moving averages) to UPDATE_OPS and `layer.updates`.
"""
from weir.framework import dtypes
from weir.framework import ops

__all__ = ["Layer", "InputSpec"]


class InputSpec(object):
    """The rank an input must have (only what the layers here check)."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype, self.shape, self.ndim = dtype, shape, ndim
        self.max_ndim, self.min_ndim, self.axes = max_ndim, min_ndim, axes or {}


def _variable_scope_module():
    # Imported on use: weir.ops.variable_scope imports the initializers, which
    # must not need the layers.
    from weir.ops import variable_scope
    return variable_scope


class Layer(object):
    """Base class: subclasses define build(input_shape) and call(inputs, ...)."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        allowed = {"_scope", "_reuse", "input_shape", "batch_input_shape", "activity_regularizer",
                   "dynamic", "autocast"}
        for key in kwargs:
            if key not in allowed:
                raise TypeError("Keyword argument not understood:", key)
        self.trainable = trainable
        self.built = False
        self._given_name = name
        self._base_name = name or _snake_case(type(self).__name__)
        self._name = name or self._base_name
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._reuse = kwargs.get("_reuse")
        self._scope = kwargs.get("_scope")
        self._name_scope = None
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._losses = []
        self._updates = []
        self.input_spec = None
        self._activity_regularizer = kwargs.get("activity_regularizer")

    # --- properties of TF's Layer ---

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self):
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer \"%s\" has "
                             "not been used yet." % self._name)
        return self._scope.name if hasattr(self._scope, "name") else str(self._scope)

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def losses(self):
        return list(self._losses)

    @property
    def updates(self):
        return list(self._updates)

    def add_loss(self, losses, inputs=None):
        losses = losses if isinstance(losses, (list, tuple)) else [losses]
        for loss in losses:
            self._losses.append(loss)
            ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, updates, inputs=None):
        updates = updates if isinstance(updates, (list, tuple)) else [updates]
        for update in updates:
            self._updates.append(update)
            ops.add_to_collection(ops.GraphKeys.UPDATE_OPS, update)

    # --- variables ---

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None, **kwargs):
        """A variable of this layer: get_variable(name, ...) in the layer's scope."""
        vs = _variable_scope_module()
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        existing = {v.name for v in ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)}
        extra = {}
        if constraint is not None:
            extra["constraint"] = constraint
        variable = vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                   trainable=trainable and self.trainable, **extra)
        if trainable and self.trainable:
            if variable not in self._trainable_weights:
                self._trainable_weights.append(variable)
        elif variable not in self._non_trainable_weights:
            self._non_trainable_weights.append(variable)
        if regularizer is not None and variable.name not in existing:
            # Once per variable: a reused variable's loss is already collected.
            with ops.name_scope(variable.op.name + "/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                self.add_loss(loss)
        return variable

    add_variable = add_weight  # TF1's older name

    # --- calling ---

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def _scope_context(self):
        vs = _variable_scope_module()
        if self._scope is not None:
            return vs.variable_scope(self._scope, reuse=self._reuse)
        if self._given_name is not None:
            return vs.variable_scope(self._given_name, reuse=self._reuse)
        return vs.variable_scope(None, default_name=self._base_name, reuse=self._reuse)

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)) and not isinstance(inputs, ops.Tensor):
            inputs = ops.convert_to_tensor(inputs)  # once, not in build and again in call
        if not self.built:
            return self._first_call(inputs, *args, **kwargs)
        with ops.name_scope(self._name_scope):
            outputs = self.call(inputs, *args, **kwargs)
            self._set_static_shape(inputs, outputs)
            self._activity_loss(outputs)
            return outputs

    def _first_call(self, inputs, *args, **kwargs):
        with self._scope_context() as scope:
            self._scope = scope
            scope_name = scope.name if hasattr(scope, "name") else str(scope)
            self._name = scope_name.split("/")[-1]
            self._name_scope = getattr(scope, "original_name_scope", None) or scope_name + "/"
            first = _first_tensor(inputs)
            if self._dtype is None and first is not None and first.dtype.is_floating:
                self._dtype = first.dtype.base_dtype
            shape = first.shape if first is not None else None
            self.build(shape)
            self.built = True
            outputs = self.call(inputs, *args, **kwargs)
            self._set_static_shape(inputs, outputs)
            self._activity_loss(outputs)
            return outputs

    def _set_static_shape(self, inputs, outputs):
        # The output's static shape from the input's (TF's compute_output_shape),
        # for what C++ shape inference cannot see (a Python-side set_shape).
        if not isinstance(inputs, ops.Tensor) or not isinstance(outputs, ops.Tensor):
            return
        dims = inputs.shape.as_list()
        if dims is None:
            return
        try:
            shape = self.compute_output_shape(list(dims))
        except NotImplementedError:
            return
        if shape is not None:
            outputs.set_shape(shape)

    def _activity_loss(self, outputs):
        if self._activity_regularizer is None:
            return
        with ops.name_scope("ActivityRegularizer"):
            loss = self._activity_regularizer(outputs)
        if loss is not None:
            self.add_loss(loss)

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape):
        raise NotImplementedError

    def count_params(self):
        total = 0
        for weight in self.weights:
            total += int(weight.shape.num_elements())
        return total

    def get_config(self):
        return {"name": self._name, "trainable": self.trainable,
                "dtype": None if self._dtype is None else self._dtype.name}


def _first_tensor(inputs):
    if isinstance(inputs, (list, tuple)):
        inputs = inputs[0] if inputs else None
    if inputs is None:
        return None
    return ops.convert_to_tensor(inputs)


def _snake_case(name):
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and (not name[i - 1].isupper() or
                                        (i + 1 < len(name) and name[i + 1].islower())):
            if not name[i - 1].isdigit():
                out.append("_")
        out.append(ch.lower())
    return "".join(out)
