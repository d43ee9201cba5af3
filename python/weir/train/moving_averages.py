"""Exponential moving averages of variables (TensorFlow 1's
tf.train.ExponentialMovingAverage), written from its documented semantics.

    ema = wr.train.ExponentialMovingAverage(0.999, num_updates=global_step)
    with wr.control_dependencies([train_op]):
        train_op = ema.apply([w, b])      # shadow = shadow - (1 - decay) * (shadow - var)
    ...
    saver = wr.train.Saver(ema.variables_to_restore())  # evaluate with the averages

Each averaged variable `v` gets a shadow variable `v/ExponentialMovingAverage`
(not trainable, in GLOBAL_VARIABLES, on v's device and colocated with it),
initialized to v's initial value, and v joins MOVING_AVERAGE_VARIABLES. With
`num_updates` the decay of a step is min(decay, (1 + n) / (10 + n)). Tensors
may be averaged too: their shadow starts at zero and, with zero_debias=True,
is corrected for that start as Adam's bias correction does (two more
variables, `<shadow>/biased` and `<shadow>/local_step`); zero_debias does not
change the averages of variables, as in TensorFlow.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import control_flow_ops
from weir.ops import init_ops
from weir.ops import math_ops
from weir.ops import variable_scope
from weir.ops import variables

__all__ = ["ExponentialMovingAverage"]

_AVERAGED_DTYPES = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)
_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _op_name(value):
    """"w" for a variable or tensor named "w:0"."""
    return value.name[:-len(":0")] if value.name.endswith(":0") else value.op.name


def _shadow_variable(primary, initializer, name, shape, dtype, colocate):
    """A non-trainable variable `<primary>/<name>` (made unique as TF's
    variable scopes are), on primary's device and colocated with it when
    `colocate`, initialized from `initializer` (a tensor, or an initializer
    called with the shape)."""
    with variable_scope.variable_scope(None, primary.op.name + "/" + name):
        if colocate:
            scope = ops.colocate_with(primary.op)
        else:
            scope = ops.colocate_with(None, ignore_existing=True)
        with scope:
            if callable(initializer):
                return variable_scope.get_variable("", shape=shape, dtype=dtype,
                                                   initializer=initializer, trainable=False)
            return variable_scope.get_variable("", initializer=initializer, trainable=False)


def _assign_moving_average(average, value, decay, zero_debias):
    """average -= (average - value) * (1 - decay); with zero_debias, the
    update of a biased twin divided by 1 - decay^t."""
    with ops.name_scope(None, "AssignMovingAvg", [average, value, decay]) as scope:
        one_minus_decay = ops.convert_to_tensor(1.0 - decay, name="decay")
        if one_minus_decay.dtype != average.dtype.base_dtype:
            one_minus_decay = math_ops.cast(one_minus_decay, average.dtype.base_dtype)
        if zero_debias:
            return _zero_debiased_update(average, value, one_minus_decay)
        # The update runs where the average lives (TF's default strategy's update).
        with ops.colocate_with(average.op):
            return average.assign_sub((average - value) * one_minus_decay,
                                      name=scope)


def _zero_debiased_update(average, value, one_minus_decay):
    with variable_scope.variable_scope(_op_name(average)):
        with ops.colocate_with(average.op):
            biased = variable_scope.get_variable(
                _unique_in_scope("biased"), shape=average.get_shape(),
                dtype=average.dtype.base_dtype, initializer=init_ops.zeros_initializer(),
                trainable=False)
            local_step = variable_scope.get_variable(
                _unique_in_scope("local_step"), shape=[], dtype=average.dtype.base_dtype,
                initializer=init_ops.zeros_initializer(), trainable=False)
            update_biased = biased.assign_sub((biased - value) * one_minus_decay)
            update_step = local_step.assign_add(1)
            bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_step)
            return average.assign(update_biased / bias_factor)


def _unique_in_scope(name):
    """`name`, or `name_N` when the scope already has a global variable so
    named (TF's: a second debiased update of one shadow gets its own twins)."""
    scope = variable_scope.get_variable_scope().name
    taken = {v.op.name for v in variables.global_variables()}
    full = scope + "/" + name if scope else name
    if full not in taken:
        return name
    i = 1
    while "%s_%d" % (full, i) in taken:
        i += 1
    return "%s_%d" % (name, i)


class ExponentialMovingAverage(object):
    """Maintains shadow variables holding exponential moving averages."""

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        """decay: a float (or float tensor), usually close to 1.
        num_updates: optional count of updates (the global step): the decay
        of a step is then min(decay, (1 + num_updates) / (10 + num_updates)).
        zero_debias: debias the averages of tensors (which start at zero).
        name: the name of the shadow variables' suffix and of apply's op."""
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}  # variable or tensor -> its shadow variable

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Creates the shadow variables of `var_list` (default: the trainable
        variables) not yet averaged, and returns an op that moves every
        shadow of `var_list` towards its variable's current value. TypeError
        for a dtype other than bfloat16, half, float or double."""
        if var_list is None:
            var_list = variables.trainable_variables()
        var_list = list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _AVERAGED_DTYPES:
                raise TypeError("The variables must be half, float, or double: %s" % var.name)
        debiased = set()
        for var in var_list:
            if var in self._averages:
                continue
            with ops.init_scope():
                if isinstance(var, variables.Variable):
                    with ops.device(var.device):
                        initial = var.initialized_value()
                    average = _shadow_variable(var, initial, self._name, None, None, True)
                    ops.add_to_collection(ops.GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    shape = var.get_shape()
                    if not shape.is_fully_defined():
                        raise ValueError("ExponentialMovingAverage: the shape of tensor %s must "
                                         "be fully defined, got %s" % (var.name, shape))
                    average = _shadow_variable(var, init_ops.zeros_initializer(), self._name,
                                               shape.as_list(), var.dtype.base_dtype,
                                               var.op.type in _VARIABLE_OPS)
                    if self._zero_debias:
                        debiased.add(average)
            self._averages[var] = average
        with ops.name_scope(self._name) as scope:
            decay = ops.convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32,
                                            name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                average = self._averages[var]
                updates.append(_assign_moving_average(average, var, decay,
                                                      average in debiased))
            return control_flow_ops.group(*updates, name=scope)

    def average(self, var):
        """The shadow variable of `var`, or None when `var` is not averaged."""
        return self._averages.get(var, None)

    def average_name(self, var):
        """The name of `var`'s shadow variable: the existing one's, else the
        one apply() would give it ("<var>/<name>", made unique)."""
        if var in self._averages:
            return _op_name(self._averages[var])
        return ops.get_default_graph().unique_name(_op_name(var) + "/" + self._name,
                                                   mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """A {checkpoint name: variable} map for a Saver that loads each
        variable of `moving_avg_variables` (default: the trainable and the
        moving-average variables) from its shadow's name, and every other
        global variable from its own name."""
        if moving_avg_variables is None:
            moving_avg_variables = (variables.trainable_variables() +
                                    variables.moving_average_variables())
        unique = []
        for v in moving_avg_variables:
            if not any(v is u for u in unique):
                unique.append(v)
        name_map = {}
        for v in unique:
            name_map[self.average_name(v)] = v
        averaged_names = {v.name for v in unique}
        for v in variables.global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
