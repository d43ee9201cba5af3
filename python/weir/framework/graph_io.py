"""write_graph: a GraphDef to a file, as TF's tf.train.write_graph /
tf.io.write_graph (atomically: a temporary file renamed into place)."""
import os
import tempfile

from weir.framework import ops

__all__ = ["write_graph"]


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the graph (a Graph or a GraphDef message) to logdir/name, as
    protobuf text (as_text, which TF's text_format parses) or wire bytes;
    creates logdir when missing; returns the path."""
    if isinstance(graph_or_graph_def, ops.Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    else:
        graph_def = graph_or_graph_def
        if not hasattr(graph_def, "SerializeToString"):
            raise TypeError("write_graph: expected a Graph or a GraphDef, got %s"
                            % type(graph_or_graph_def).__name__)
    logdir = os.fspath(logdir)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, os.fspath(name))
    if as_text:
        from google.protobuf import text_format
        data = text_format.MessageToString(graph_def).encode("utf-8")
    else:
        data = graph_def.SerializeToString(deterministic=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp_" + os.path.basename(path), dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path
