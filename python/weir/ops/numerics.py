"""NaN/Inf checks: TF1's tf.check_numerics, tf.verify_tensor_all_finite and
tf.add_check_numerics_ops, and tf.debugging.check_numerics /
assert_all_finite, on the CheckNumerics op.

A CheckNumerics node passes its input through; when the input holds a NaN
or an infinity the step fails with InvalidArgumentError naming the node and
"<message> : Tensor had NaN values" (Inf, Inf and NaN), TensorFlow's text.
Its gradient is checked the same way on the way back."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops import control_flow_ops

__all__ = ["check_numerics", "verify_tensor_all_finite", "add_check_numerics_ops"]

_CHECKED_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_CONTROL_FLOW_OPS = frozenset(["Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                               "RefSwitch", "RefMerge", "RefEnter", "RefExit",
                               "RefNextIteration", "If", "StatelessIf", "While",
                               "StatelessWhile"])


def check_numerics(tensor, message, name=None):
    """`tensor`, checked when it is computed: a NaN or an infinity in it fails
    the step with InvalidArgumentError "<message> : Tensor had ... values"."""
    with ops.name_scope(name, "CheckNumerics", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype not in _CHECKED_DTYPES:
            raise TypeError("check_numerics: %s has dtype %s; CheckNumerics takes float16, "
                            "bfloat16, float32 or float64" % (tensor.name, tensor.dtype.name))
        return apply_op("CheckNumerics", scope, tensor=tensor, message=str(message))


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """TF1's tf.verify_tensor_all_finite (and tf.debugging.assert_all_finite
    with x/message): check_numerics of `t` with `msg`."""
    if t is not None and x is not None:
        raise ValueError("verify_tensor_all_finite: give the tensor as t or x, not both")
    if msg is not None and message is not None:
        raise ValueError("verify_tensor_all_finite: give the message as msg or message, not both")
    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None:
        raise ValueError("verify_tensor_all_finite: a tensor is required")
    with ops.name_scope(name, "VerifyFinite", [t]) as scope:
        t = ops.convert_to_tensor(t, name="t")
        verified = check_numerics(t, message=msg if msg is not None else "")
        return control_flow_ops.with_dependencies([verified], t, name=scope)


def add_check_numerics_ops():
    """One op that runs a CheckNumerics on every float16/bfloat16/float32/
    float64 output of every op in the default graph (one after another), so
    running it fails the step at the first NaN or Inf with a message naming
    the op and output. A graph with control flow (cond, while_loop) is a
    ValueError, as in TensorFlow: the checks cannot follow untaken branches."""
    graph = ops.get_default_graph()
    check_op = None
    for op in graph.get_operations():
        if op.type in _CONTROL_FLOW_OPS:
            raise ValueError("add_check_numerics_ops does not support graphs with control flow "
                             "(op %s is a %s); check tensors with check_numerics instead"
                             % (op.name, op.type))
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype.base_dtype not in _CHECKED_DTYPES:
                continue
            deps = [check_op] if check_op is not None else []
            with ops.control_dependencies(deps):
                message = "%s:%d" % (op.name, output.value_index)
                check_op = apply_op("CheckNumerics", None, tensor=output, message=message)
    if check_op is None:
        return control_flow_ops.no_op(name="CheckNumerics")
    return control_flow_ops.group(check_op, name="CheckNumerics")
