"""weir.nn.rnn_cell: TF1's tf.nn.rnn_cell (see weir.ops.rnn_cell_impl)."""
from weir.ops.rnn_cell_impl import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DeviceWrapper, DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple,
    MultiRNNCell, ResidualWrapper, RNNCell)

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "ResidualWrapper", "RNNCell"]
