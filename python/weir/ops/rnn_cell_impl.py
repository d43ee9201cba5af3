"""TF1's RNN cells (tf.nn.rnn_cell): RNNCell, BasicRNNCell, BasicLSTMCell,
LSTMCell, GRUCell, MultiRNNCell and LSTMStateTuple (the wrappers are in
rnn_cell_wrappers), with TF1's math, variable names and initializers, so
checkpoints interoperate.

A cell is called as `output, new_state = cell(inputs, state)`. On its first
call (or first `_build_in_scope`) it opens a variable scope named after the
cell (`name`, else its class in snake case: "basic_lstm_cell") under the
current one, uniquified, and creates its variables there with
wr.get_variable: "rnn/basic_lstm_cell/kernel", ".../bias"; later calls
reuse that scope and those variables. dynamic_rnn builds the cell before
its while loop, so the variables live outside the loop (their gradients
need that). A user subclass implements state_size, output_size and
call(inputs, state) (and build(inputs_shape) to make variables); one that
overrides __call__ and calls get_variable itself works with static_rnn, and
with dynamic_rnn where its variables exist before the loop.

Not supported (differences from TF): LSTMCell's num_unit_shards /
num_proj_shards (accepted when None or 1).
"""
import collections
import re

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework import tensor_util
from weir.ops import array_ops
from weir.ops import clip_ops
from weir.ops import control_flow_ops
from weir.ops import init_ops
from weir.ops import math_ops
from weir.ops import nn_ops
from weir.ops import variable_scope as vs

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "LSTMStateTuple"]

_flatten = control_flow_ops._flatten
_pack_as = control_flow_ops._pack_as
_is_nested = control_flow_ops._is_nested


def _pack(structure, flat):
    return _pack_as(structure, flat) if _is_nested(structure) else flat[0]


def _map(fn, *structures):
    flats = [_flatten(s) for s in structures]
    return _pack(structures[0], [fn(*xs) for xs in zip(*flats)])


def _snake_case(name):
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell state c and the output h, in that order."""
    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError("Inconsistent internal state: %s vs %s" % (c.dtype, h.dtype))
        return c.dtype


def _concat_shape(prefix, suffix, static=False):
    """[prefix] + suffix (an int, a list or a TensorShape) as a static shape
    or as a 1-D int32 tensor."""
    if isinstance(suffix, ops.Tensor):
        raise TypeError("state sizes must be ints or shapes, got a Tensor")
    suffix = tensor_shape.as_shape([suffix] if isinstance(suffix, int) else suffix)
    if static:
        p = tensor_util.constant_value(prefix) if isinstance(prefix, ops.Tensor) else prefix
        p = None if p is None else int(p)
        return tensor_shape.TensorShape([p]).concatenate(suffix)
    if not suffix.is_fully_defined():
        raise ValueError("Provided a suffix with unknown dims: %s" % suffix)
    if isinstance(prefix, ops.Tensor):
        return array_ops.concat([array_ops.reshape(prefix, [1]),
                                 ops.convert_to_tensor(suffix.as_list(), dtype=dtypes.int32)], 0)
    return [int(prefix)] + suffix.as_list()


def _zero_state_tensors(state_size, batch_size, dtype):
    def make(s):
        z = array_ops.zeros(_concat_shape(batch_size, s), dtype=dtype)
        z.set_shape(_concat_shape(batch_size, s, static=True))
        return z
    return _map(make, state_size)


class RNNCell:
    """The abstract RNN cell: state_size, output_size, zero_state, and
    __call__(inputs, state) -> (output, new_state) in the cell's variable scope."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        self._reuse = kwargs.pop("_reuse", None)
        if kwargs:
            raise TypeError("Unknown keyword arguments: %s" % ", ".join(sorted(kwargs)))
        self._name = name
        self._base_name = name or _snake_case(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._trainable = trainable
        self._scope = None
        self.built = False
        self._variables = []

    @property
    def name(self):
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def dtype(self):
        return self._dtype

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def variables(self):
        return list(self._variables)

    @property
    def weights(self):
        return self.variables

    @property
    def trainable_variables(self):
        return list(self._variables) if self._trainable else []

    trainable_weights = trainable_variables

    def build(self, inputs_shape):
        """Creates the variables (under the cell's scope); called once."""
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    def add_variable(self, name, shape, dtype=None, initializer=None, trainable=True, **kwargs):
        """A variable of this cell, made with wr.get_variable in its scope."""
        v = vs.get_variable(name, shape=shape, dtype=dtype or self._dtype or dtypes.float32,
                            initializer=initializer, trainable=trainable and self._trainable)
        self._variables.append(v)
        return v

    add_weight = add_variable

    def _set_scope(self, scope=None):
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) as s:
                    self._scope = s
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as s:
                    self._scope = s

    def _builds_all_variables(self):
        """Whether build() makes every variable the cell uses."""
        return type(self) in _OWN_CELLS

    def _build_now(self, inputs_shape):
        self._build_in_scope(inputs_shape)

    def _build_in_scope(self, inputs_shape):
        """Creates the variables now (dynamic_rnn calls it before its loop)."""
        self._set_scope()
        if not self.built:
            with vs.variable_scope(self._scope, reuse=self._reuse, auxiliary_name_scope=False):
                self.build(inputs_shape if isinstance(inputs_shape, list) and inputs_shape and
                           isinstance(inputs_shape[0], tensor_shape.TensorShape)
                           else tensor_shape.as_shape(inputs_shape))
                self.built = True

    def __call__(self, inputs, state, scope=None):
        self._set_scope(scope)
        inputs_flat = [ops.convert_to_tensor(x) for x in _flatten(inputs)]
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False):
            with ops.name_scope(self._scope.name.split("/")[-1]):
                if not self.built:
                    shape = inputs_flat[0].shape if len(inputs_flat) == 1 else \
                        [x.shape for x in inputs_flat]
                    self.build(shape)
                    self.built = True
                inputs = _pack(inputs, inputs_flat)
                return self.call(inputs, state)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = ops.convert_to_tensor(inputs)
            if batch_size is None:
                batch_size = inputs.shape[0]
                batch_size = batch_size.value if hasattr(batch_size, "value") else batch_size
                if batch_size is None:
                    batch_size = array_ops.shape(inputs)[0]
            if dtype is None:
                dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError("get_initial_state needs inputs, or batch_size and dtype")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros of state_size's structure, each [batch_size, size]."""
        with ops.name_scope(type(self).__name__ + "ZeroState"):
            return _zero_state_tensors(self.state_size, batch_size, dtype)


def _input_depth(inputs_shape, cell):
    shape = tensor_shape.as_shape(inputs_shape)
    if shape.ndims is None or shape.ndims < 1 or shape.as_list()[-1] is None:
        raise ValueError("Expected inputs.shape[-1] to be known, saw shape: %s (cell %s)" % (
            shape, type(cell).__name__))
    return shape.as_list()[-1]


def _linear(args, kernel, bias):
    return nn_ops.bias_add(math_ops.matmul(array_ops.concat(args, 1), kernel), bias)


class _NumUnitsCell(RNNCell):
    """A cell whose state and output are both num_units wide, with an
    activation (tanh by default)."""

    def __init__(self, num_units, activation, reuse, name, dtype, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units


class BasicRNNCell(_NumUnitsCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(num_units, activation, reuse, name, dtype, **kwargs)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units],
                                       initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        output = self._activation(_linear([inputs, state], self._kernel, self._bias))
        return output, output


class BasicLSTMCell(RNNCell):
    """The LSTM without peepholes or projection: gates i, j, f, o from one
    matmul of [inputs, h]; c' = c sigmoid(f + forget_bias) + sigmoid(i) act(j),
    h' = act(c') sigmoid(o)."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(state, 2, axis=1)
        gates = _linear([inputs, h], self._kernel, self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        forget_bias = ops.convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = c * math_ops.sigmoid(f + forget_bias) + \
            math_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


class LSTMCell(RNNCell):
    """The LSTM with optional peepholes (w_f_diag, w_i_diag, w_o_diag), cell
    clipping and an output projection (num_proj, "projection/kernel")."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards not in (None, 1) or num_proj_shards not in (None, 1):
            raise ValueError("LSTMCell: num_unit_shards and num_proj_shards (partitioned "
                             "variables) are not supported by weir")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        out = self._num_proj or self._num_units
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, out)
        return self._num_units + out

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        h_depth = self._num_proj or n
        self._kernel = self.add_variable("kernel", [depth + h_depth, 4 * n],
                                         initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            with vs.variable_scope("projection"):
                self._proj_kernel = self.add_variable("kernel", [n, self._num_proj],
                                                      initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, self._num_proj or n])
        lstm_matrix = _linear([inputs, m_prev], self._kernel, self._bias)
        i, j, f, o = array_ops.split(lstm_matrix, 4, axis=1)
        forget_bias = ops.convert_to_tensor(self._forget_bias, dtype=f.dtype)
        if self._use_peepholes:
            c = math_ops.sigmoid(f + forget_bias + self._w_f_diag * c_prev) * c_prev + \
                math_ops.sigmoid(i + self._w_i_diag * c_prev) * self._activation(j)
        else:
            c = math_ops.sigmoid(f + forget_bias) * c_prev + \
                math_ops.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = math_ops.sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = math_ops.sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            return m, LSTMStateTuple(c, m)
        return m, array_ops.concat([c, m], 1)


class GRUCell(_NumUnitsCell):
    """The GRU: r, u = sigmoid(W_g [inputs, h] + b_g) ("gates/", bias 1.0 by
    default); c = act(W_c [inputs, r h] + b_c) ("candidate/");
    h' = u h + (1 - u) c."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(num_units, activation, reuse, name, dtype, **kwargs)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n],
            initializer=self._bias_initializer or init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n], initializer=self._bias_initializer or init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        value = math_ops.sigmoid(_linear([inputs, state], self._gate_kernel, self._gate_bias))
        r, u = array_ops.split(value, 2, axis=1)
        c = self._activation(_linear([inputs, r * state], self._candidate_kernel,
                                     self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked: cell i reads cell i-1's output, under scope "cell_i"."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not isinstance(cells, (list, tuple)):
            raise TypeError("cells must be a list or tuple, but saw: %s." % (cells,))
        if len(set(id(c) for c in cells)) < len(cells):
            import warnings
            warnings.warn("At least two cells provided to MultiRNNCell are the same object and "
                          "will share weights.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(_is_nested(c.state_size) for c in cells):
            raise ValueError("Some cells return tuples of states, but the flag "
                             "state_is_tuple is not set.  State sizes are: %s" % (
                                 [c.state_size for c in cells],))

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return super().zero_state(batch_size, dtype)

    def _builds_all_variables(self):
        return type(self) is MultiRNNCell and all(_prebuildable(c) for c in self._cells)

    @property
    def variables(self):
        return [v for c in self._cells for v in c.variables]

    @property
    def trainable_variables(self):
        return [v for c in self._cells for v in c.trainable_variables]

    def build(self, inputs_shape):
        shape = tensor_shape.as_shape(inputs_shape)
        for i, cell in enumerate(self._cells):
            with vs.variable_scope("cell_%d" % i):
                _build_cell(cell, shape)
            shape = tensor_shape.TensorShape(shape.dims[:-1] + [cell.output_size])
        self.built = True

    def call(self, inputs, state):
        cur_inp = inputs
        new_states = []
        start = 0
        for i, cell in enumerate(self._cells):
            with vs.variable_scope("cell_%d" % i):
                if self._state_is_tuple:
                    if not _is_nested(state):
                        raise ValueError("Expected state to be a tuple of length %d, but received: "
                                         "%s" % (len(self.state_size), state))
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, start], [-1, cell.state_size])
                    start += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return cur_inp, tuple(new_states)
        return cur_inp, array_ops.concat(new_states, 1)


# Weir's own cells: their build makes every variable they use.
_OWN_CELLS = (BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell)


def _prebuildable(cell):
    """Whether _build_cell makes all of the cell's variables (weir's own
    cells, stacked or wrapped); a user's cell may make more when called."""
    return isinstance(cell, RNNCell) and cell._builds_all_variables()


def _build_cell(cell, inputs_shape):
    """Creates a cell's variables now, in its scope under the current one,
    where they are all made by build (weir's own cells); a user's cell
    makes its variables on its first call."""
    if _prebuildable(cell):
        cell._build_now(inputs_shape)
