"""weir.manip: tf.manip (TF1's aliases of array ops). roll is added when
weir has it."""
import weir as _wr

batch_to_space_nd = _wr.batch_to_space_nd
gather_nd = _wr.gather_nd
reshape = _wr.reshape
reverse = _wr.reverse
scatter_nd = _wr.scatter_nd
space_to_batch_nd = _wr.space_to_batch_nd
tile = _wr.tile
if hasattr(_wr, "roll"):
    roll = _wr.roll

__all__ = [n for n in dir() if not n.startswith("_")]
