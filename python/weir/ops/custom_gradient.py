"""Python gradients (TF1's tf.RegisterGradient, tf.NotDifferentiable,
Graph.gradient_override_map and tf.custom_gradient) on top of weir's C++
autodiff.

A gradient registered here is used for a node when the node was created under
`gradient_override_map({op_type: name})` with a registered `name`, or when its
op type itself was registered (an op type the C++ autodiff has no gradient for).
When no such node lies between ys and xs, wr.gradients is the C++ autodiff
unchanged. Otherwise `_python_gradients` walks the nodes between xs and ys in
reverse creation order: a Python gradient runs as TF's does (`fn(op, *grads)`
returns one gradient or None per input), every other node gets its C++
gradient (one `add_gradients` call per node), and the partial gradients of a
tensor are summed with AddN. Gradients come back dense (weir has no
IndexedSlices).
"""
import functools

from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["RegisterGradient", "NotDifferentiable", "NoGradient", "no_gradient",
           "custom_gradient"]

# gradient name (an op type, or a name used in gradient_override_map) -> the
# function, or None for "not differentiable".
_registry = {}


class RegisterGradient:
    """Decorator: `@wr.RegisterGradient("MySquare")` registers `fn(op, grad)`
    under that name. Registering a name twice is a KeyError, as in TF."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        if self._op_type in _registry:
            raise KeyError("Registering two gradient with name '%s'! (Previous registration "
                           "was in %s)" % (self._op_type, getattr(_registry[self._op_type],
                                                                  "__module__", "?")))
        _registry[self._op_type] = f
        return f


def NotDifferentiable(op_type):  # noqa: N802  (TF's name)
    """Marks `op_type` as having no gradient: nothing flows back through it."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in _registry:
        raise KeyError("Registering two gradient with name '%s'!" % op_type)
    _registry[op_type] = None


NoGradient = NotDifferentiable
no_gradient = NotDifferentiable


def _python_gradient_name(op):
    """The registered name whose gradient `op` uses, or None (C++ gradient)."""
    name = op.graph._gradient_op_types.get(op.name)
    if name is not None:
        if name not in _registry:
            raise LookupError("No gradient defined for operation '%s' (op type: %s): "
                              "gradient_override_map names '%s', which is not registered"
                              % (op.name, op.type, name))
        return name
    if op.type in _registry:
        return op.type
    return None


def _differentiable(t):
    from weir.framework import dtypes
    base = t.dtype.base_dtype
    return base.is_floating or base.is_complex or base == dtypes.resource


def _path_ops(ys, xs):
    """The ops between xs and ys (ancestors of ys that depend on an x),
    ordered by creation (a topological order)."""
    graph = ys[0].graph
    ancestors = {}
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op._id in ancestors:
            continue
        ancestors[op._id] = op
        stack.extend(t.op for t in op.inputs)
    x_set = set(xs)
    on_path = {}
    for node_id in sorted(ancestors):
        op = ancestors[node_id]
        if any(t in x_set or t.op._id in on_path for t in op.inputs):
            on_path[node_id] = op
    del graph
    return [on_path[i] for i in sorted(on_path)]


def _maybe_python_gradients(ys, seeds, xs, prefix):
    """None when no Python gradient is on the path (use the C++ autodiff);
    else the list of gradient Tensors (None where unconnected) for xs."""
    if not _registry and not ys[0].graph._gradient_op_types:
        return None  # nothing registered: no walk over the graph
    path = _path_ops(ys, xs)
    if not any(_python_gradient_name(op) is not None for op in path):
        return None
    return _python_gradients(ys, seeds, xs, path, prefix)


def _sum(tensors):
    if len(tensors) == 1:
        return tensors[0]
    return apply_op("AddN", None, inputs=list(tensors))


def _python_gradients(ys, seeds, xs, path, prefix):
    graph = ys[0].graph
    partials = {}  # Tensor -> list of gradient Tensors
    for y, seed in zip(ys, seeds):
        if seed is None:
            seed = apply_op("OnesLike", None, x=y)
        partials.setdefault(y, []).append(seed)
    x_set = set(xs)
    path_ids = {op._id for op in path}
    for op in reversed(path):
        out_grads = [_sum(partials[t]) if partials.get(t) else None for t in op.outputs]
        if all(g is None for g in out_grads):
            continue
        wanted = [t for t in op.inputs
                  if (t in x_set or t.op._id in path_ids) and _differentiable(t)]
        if not wanted:
            continue
        gname = _python_gradient_name(op)
        with ops.name_scope(prefix + "/" + op.name.replace("/", "_") + "_grad/"):
            if gname is not None:
                fn = _registry[gname]
                if fn is None:
                    continue
                filled = [g if g is not None else apply_op("ZerosLike", None, x=t)
                          for g, t in zip(out_grads, op.outputs)]
                in_grads = fn(op, *filled)
                if not isinstance(in_grads, (list, tuple)):
                    in_grads = [in_grads]
                if len(in_grads) != len(op.inputs):
                    raise ValueError("Num gradients %d generated for op %s do not match num "
                                     "inputs %d" % (len(in_grads), op.node_def, len(op.inputs)))
                for t, g in zip(op.inputs, in_grads):
                    if g is not None and t in wanted:
                        partials.setdefault(t, []).append(
                            ops.convert_to_tensor(g, dtype=t.dtype
                                                  if t.dtype.base_dtype.name != "resource"
                                                  else None))
                continue
            unique = list(dict.fromkeys(wanted))
            given = [(t, g) for t, g in zip(op.outputs, out_grads) if g is not None]
            scope = ops.get_name_scope()
            rewrites = graph._c_graph.num_rewritten()
            try:
                found = graph._c_graph.add_gradients(
                    [t._as_endpoint() for t, _ in given], [t._as_endpoint() for t in unique],
                    [g._as_endpoint() for _, g in given], scope, ops._user_source_location())
            finally:
                graph._rebind_rewritten(rewrites)
            for t, r in zip(unique, found):
                if r is not None:
                    partials.setdefault(t, []).append(graph._tensor_for(tuple(r)))
    with ops.name_scope(prefix + "/"):
        return [_sum(partials[x]) if partials.get(x) else None for x in xs]


_custom_counter = [0]


def custom_gradient(f=None):
    """TF1's @tf.custom_gradient in graph mode: `f(*x)` returns `(y, grad_fn)`;
    y's gradient with respect to x is `grad_fn(*dy)` instead of the
    derivative of the ops inside f. Built as TF builds it: an IdentityN over
    y and x whose gradient (registered under a fresh name) calls grad_fn.
    `grad_fn` that takes `variables` (variables used inside f) is not
    supported: a TypeError names it."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        import inspect
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords "
                             "arguments only when eager execution is enabled.")
        args = [ops.convert_to_tensor(a) for a in args]
        result, grad_fn = f(*args)
        params = inspect.signature(grad_fn).parameters
        if "variables" in params:
            raise TypeError("wr.custom_gradient: grad_fn with a `variables` argument is not "
                            "supported by weir (pass the variables' values as inputs)")
        flat = list(result) if isinstance(result, (list, tuple)) else [result]
        flat = [ops.convert_to_tensor(t) for t in flat]
        _custom_counter[0] += 1
        name = "CustomGradient-%d" % _custom_counter[0]
        while name in _registry:
            _custom_counter[0] += 1
            name = "CustomGradient-%d" % _custom_counter[0]
        n_out = len(flat)

        def _grad(op, *grads):
            in_grads = grad_fn(*grads[:n_out])
            if not isinstance(in_grads, (list, tuple)):
                in_grads = [in_grads]
            in_grads = list(in_grads)
            if len(in_grads) != len(args):
                raise ValueError("custom_gradient function expected to return %d gradients, "
                                 "but returned %d instead." % (len(args), len(in_grads)))
            return [None] * n_out + in_grads

        _registry[name] = _grad
        graph = ops.get_default_graph()
        with graph.gradient_override_map({"IdentityN": name}):
            op = apply_op("IdentityN", "IdentityN", input=flat + args)
        outs = op if isinstance(op, (list, tuple)) else op.outputs
        outs = list(outs)[:n_out]
        if isinstance(result, (list, tuple)):
            return type(result)(outs) if isinstance(result, tuple) else outs
        return outs[0]

    return decorated
