"""Version numbers (TF1's tf.VERSION, tf.GRAPH_DEF_VERSION, ...): the
package's version and the GraphDef versions weir writes and accepts
(src/weir/graph/graph_constructor.h: kGraphDefVersion, kGraphDefMinProducer)."""
__all__ = ["VERSION", "GRAPH_DEF_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER",
           "GRAPH_DEF_VERSION_MIN_PRODUCER"]

VERSION = "0.1.0"
GRAPH_DEF_VERSION = 2000
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
