"""TF1's RNN cell wrappers (tf.nn.rnn_cell): DropoutWrapper, ResidualWrapper,
DeviceWrapper. A wrapper has no variable scope of its own: the wrapped
cell's variables keep their names ("rnn/basic_lstm_cell/kernel").

Not supported (a difference from TF): DropoutWrapper's variational_recurrent
(a NotImplementedError).
"""
from weir.framework import ops
from weir.ops import nn_ops
from weir.ops import rnn_cell_impl
from weir.ops.rnn_cell_impl import LSTMStateTuple, RNNCell

__all__ = ["DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]

_flatten = rnn_cell_impl._flatten
_pack = rnn_cell_impl._pack
_map = rnn_cell_impl._map
_is_nested = rnn_cell_impl._is_nested


class _Wrapper(RNNCell):
    """A cell around another: no scope of its own, the same variables."""

    def __init__(self, cell):
        super().__init__()
        if not (hasattr(cell, "state_size") and hasattr(cell, "output_size") and callable(cell)):
            raise TypeError("The parameter cell is not a RNNCell.")
        self._cell = cell

    def _builds_all_variables(self):
        return type(self) in (DropoutWrapper, ResidualWrapper, DeviceWrapper) and \
            rnn_cell_impl._prebuildable(self._cell)

    def _build_now(self, inputs_shape):
        self._cell._build_now(inputs_shape)

    @property
    def wrapped_cell(self):
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    @property
    def variables(self):
        return self._cell.variables

    @property
    def trainable_variables(self):
        return self._cell.trainable_variables

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped(inputs, state, scope)


def _default_state_filter(substate):
    """Dropout on every state term but an LSTM's memory c."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _keep_prob_is_one(p):
    return isinstance(p, (int, float)) and float(p) == 1.0


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and state (not an LSTM's c)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if variational_recurrent:
            raise NotImplementedError("DropoutWrapper(variational_recurrent=True) is not "
                                      "supported by weir")
        for what, p in (("input_keep_prob", input_keep_prob),
                        ("output_keep_prob", output_keep_prob),
                        ("state_keep_prob", state_keep_prob)):
            if isinstance(p, (int, float)) and not 0.0 < float(p) <= 1.0:
                raise ValueError("Parameter %s must be between 0 and 1: %s" % (what, p))
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor

    def _dropout(self, values, keep_prob, salt, apply=None):
        """Dropout on the leaves of values (those whose `apply` flag is set)."""
        if _keep_prob_is_one(keep_prob):
            return values
        flat = _flatten(values)
        keep = apply if apply is not None else [True] * len(flat)
        seed = None if self._seed is None else self._seed + salt
        out = [nn_ops.dropout(v, keep_prob=keep_prob, seed=seed) if k else v
               for v, k in zip(flat, keep)]
        return _pack(values, out)

    def _state_keep_filter(self, state):
        """One bool per leaf of state: whether state dropout applies to it.
        TF's traversal: the visitor's True on a subtree descends into it
        (a leaf: applies), False skips all of it, a depth-1 structure of
        bools decides per child."""
        visit = self._state_filter or _default_state_filter

        def children(s):
            return [s[k] for k in sorted(s)] if isinstance(s, dict) else list(s)

        def walk(s):
            v = visit(s)
            if isinstance(v, bool):
                if not v:
                    return [False] * len(_flatten(s))
                if not _is_nested(s):
                    return [True]
                return [flag for child in children(s) for flag in walk(child)]
            return [flag for child, take in zip(children(s), children(v))
                    for flag in (walk(child) if take else [False] * len(_flatten(child)))]
        return walk(state)

    def _call_wrapped(self, inputs, state, scope):
        inputs = self._dropout(inputs, self._input_keep_prob, 0)
        output, new_state = self._cell(inputs, state, scope=scope)
        if not _keep_prob_is_one(self._state_keep_prob):
            new_state = self._dropout(new_state, self._state_keep_prob, 1,
                                      self._state_keep_filter(new_state))
        output = self._dropout(output, self._output_keep_prob, 2)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """output = inputs + cell's output (or residual_fn(inputs, output))."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def _call_wrapped(self, inputs, state, scope):
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state

        def add(i, o):
            i.shape.assert_is_compatible_with(o.shape)
            return i + o
        return _map(add, inputs, output), new_state


class DeviceWrapper(_Wrapper):
    """Runs the cell on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with ops.device(self._device):
            return super().zero_state(batch_size, dtype)

    def _call_wrapped(self, inputs, state, scope):
        with ops.device(self._device):
            return self._cell(inputs, state, scope=scope)
