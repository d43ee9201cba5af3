"""weir.signal: tf.signal's transforms, windows, framing and STFT."""
from weir.ops.signal_ops import *  # noqa: F401,F403
from weir.ops.signal_ops import __all__  # noqa: F401
