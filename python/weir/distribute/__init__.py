"""weir.distribute: clusters and servers (TensorFlow's tf.distribute.Server and
tf.train.ClusterSpec)."""
from weir.distribute.cluster_spec import ClusterSpec  # noqa: F401
from weir.distribute.remote_session import RemoteSessionOptions  # noqa: F401
from weir.distribute.server_lib import Server  # noqa: F401
