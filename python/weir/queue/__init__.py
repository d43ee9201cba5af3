"""weir.queue: tf.queue (TF1's queue classes, from weir.ops.data_flow_ops)."""
from weir.ops.data_flow_ops import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
