"""weir.nn.rnn_cell: TF1's tf.nn.rnn_cell (see weir.ops.rnn_cell_impl and
weir.ops.rnn_cell_wrappers)."""
from weir.ops.rnn_cell_impl import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell)
from weir.ops.rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper  # noqa: F401

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "ResidualWrapper", "RNNCell"]
