"""weir.compat.v1: weir itself, under the name TF2-era scripts use for the
TF1 API (`tf.compat.v1.nn.rnn_cell.LSTMCell`, `import weir.compat.v1 as tf`)."""
import sys

v1 = sys.modules["weir"]
sys.modules[__name__ + ".v1"] = v1

__all__ = ["v1"]
