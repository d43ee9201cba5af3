"""The global step (TF1's tf.train.get_global_step and friends).

The global step is a scalar int64 variable named "global_step" in the
GLOBAL_STEP and GLOBAL_VARIABLES collections, zero-initialized and not
trainable; Optimizer.apply_gradients(global_step=...) adds 1 to it after its
updates.
"""

from weir.framework import dtypes
from weir.framework import ops

__all__ = ["get_global_step", "create_global_step", "get_or_create_global_step",
           "global_step", "assert_global_step"]


def _graph(graph):
    return graph if graph is not None else ops.get_default_graph()


def get_global_step(graph=None):
    """The global step variable of `graph`, or None when it has none."""
    graph = _graph(graph)
    found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    return None


def create_global_step(graph=None):
    """Creates the global step; ValueError if the graph already has one."""
    graph = _graph(graph)
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    from weir.ops import init_ops
    from weir.ops import variable_scope
    with graph.as_default(), ops.name_scope(None):
        return variable_scope.get_variable(
            ops.GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(), trainable=False,
            collections=[ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = _graph(graph)
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def global_step(sess, global_step_tensor):
    """The global step's current value as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    """TypeError unless `global_step_tensor` is a scalar integer Variable or Tensor."""
    from weir.ops import variables
    if not isinstance(global_step_tensor, (variables.Variable, ops.Tensor)):
        raise TypeError("Existing \"global_step\" must be a Variable or Tensor: %s."
                        % global_step_tensor)
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s"
                        % global_step_tensor.dtype)
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError("Existing \"global_step\" is not scalar: %s" % shape)
