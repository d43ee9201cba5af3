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


_CONTROL_FLOW = frozenset(["Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter",
                           "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"])


class _UnionFind:
    def __init__(self, keys):
        self.parent = {k: k for k in keys}

    def find(self, a):
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


_FRAME_START = frozenset(["Switch", "RefSwitch", "Enter", "RefEnter"])
_FRAME_END = frozenset(["Merge", "RefMerge", "Exit", "RefExit", "NextIteration",
                        "RefNextIteration"])


def _units(path):
    """The path's nodes as units, ordered so that every unit comes after the
    units it consumes: one node each (its C++ gradient, or its Python one),
    except the nodes of a control-flow construct (cond or while_loop:
    between its Switch/Enter and its Merge/Exit nodes), differentiated
    together by one C++ add_gradients call. A Python gradient inside such a
    construct, or between two of its inputs, is a NotImplementedError."""
    ops_by_id = {op._id: op for op in path}
    consumers = {i: [] for i in ops_by_id}
    for i, op in ops_by_id.items():
        for t in op.inputs:
            if t.op._id in ops_by_id:
                consumers[t.op._id].append(i)
    starts = [i for i, op in ops_by_id.items() if op.type in _FRAME_START]
    ends = [i for i, op in ops_by_id.items() if op.type in _FRAME_END]
    after_start = set()
    stack = list(starts)
    while stack:
        i = stack.pop()
        if i not in after_start:
            after_start.add(i)
            stack.extend(consumers[i])
    before_end = set()
    stack = list(ends)
    while stack:
        i = stack.pop()
        if i not in before_end:
            before_end.add(i)
            stack.extend(t.op._id for t in ops_by_id[i].inputs if t.op._id in ops_by_id)
    inside = {i for i in after_start & before_end}
    inside |= {i for i in ops_by_id if ops_by_id[i].type in _CONTROL_FLOW}
    for i in inside:
        if _python_gradient_name(ops_by_id[i]) is not None:
            raise NotImplementedError(
                "wr.gradients: '%s' (%s) has a Python gradient (RegisterGradient / "
                "gradient_override_map / custom_gradient) inside a cond or while_loop; weir "
                "applies Python gradients outside control flow only"
                % (ops_by_id[i].name, ops_by_id[i].type))
    units = _UnionFind(list(ops_by_id))
    for i in inside:
        for t in ops_by_id[i].inputs:
            if t.op._id in inside:
                units.union(i, t.op._id)
    members = {}
    for i in sorted(ops_by_id):
        members.setdefault(units.find(i), []).append(ops_by_id[i])
    succ = {u: set() for u in members}
    indegree = {u: 0 for u in members}
    for i, op in ops_by_id.items():
        for t in op.inputs:
            if t.op._id not in ops_by_id:
                continue
            a, b = units.find(t.op._id), units.find(i)
            if a != b and b not in succ[a]:
                succ[a].add(b)
                indegree[b] += 1
    ready = sorted(u for u, d in indegree.items() if d == 0)
    order = []
    while ready:
        u = ready.pop(0)
        order.append(u)
        for v in sorted(succ[u]):
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    if len(order) != len(members):
        raise NotImplementedError(
            "wr.gradients: a Python gradient (RegisterGradient / gradient_override_map / "
            "custom_gradient) lies between two parts of one cond or while_loop")
    result = []
    for u in order:
        unit = members[u]
        if len(unit) > 1:
            _check_independent_inputs(unit, ops_by_id)
        result.append((unit, len(unit) == 1 and _python_gradient_name(unit[0]) is not None))
    return result


def _check_independent_inputs(unit, ops_by_id):
    """A construct's C++ call gives each input's gradient by every path to
    it, so one input must not depend on another outside the construct (the
    nodes between them would be differentiated twice)."""
    inside = {op._id for op in unit}
    inputs = {t.op._id for op in unit for t in op.inputs
              if t.op._id in ops_by_id and t.op._id not in inside}
    for start in inputs:
        seen = set()
        stack = [t.op._id for t in ops_by_id[start].inputs if t.op._id in ops_by_id]
        while stack:
            i = stack.pop()
            if i in seen or i in inside:
                continue
            if i in inputs:
                raise NotImplementedError(
                    "wr.gradients: with a Python gradient on the path, the inputs of a cond "
                    "or while_loop must not depend on each other outside it ('%s' depends on "
                    "'%s')" % (ops_by_id[start].name, ops_by_id[i].name))
            seen.add(i)
            stack.extend(t.op._id for t in ops_by_id[i].inputs if t.op._id in ops_by_id)


def _python_gradients(ys, seeds, xs, path, prefix):
    graph = ys[0].graph
    partials = {}  # Tensor -> list of gradient Tensors
    for y, seed in zip(ys, seeds):
        if seed is None:
            seed = apply_op("OnesLike", None, x=y)
        partials.setdefault(y, []).append(seed)
    x_set = set(xs)
    path_ids = {op._id for op in path}
    for unit, python in reversed(_units(path)):
        if python:
            _python_node_gradient(unit[0], partials, x_set, path_ids, prefix)
        else:
            _cpp_unit_gradient(graph, unit, partials, x_set, path_ids, prefix)
    with ops.name_scope(prefix + "/"):
        return [_sum(partials[x]) if partials.get(x) else None for x in xs]


def _python_node_gradient(op, partials, x_set, path_ids, prefix):
    out_grads = [_sum(partials[t]) if partials.get(t) else None for t in op.outputs]
    if all(g is None for g in out_grads):
        return
    wanted = [t for t in op.inputs if (t in x_set or t.op._id in path_ids) and _differentiable(t)]
    fn = _registry[_python_gradient_name(op)]
    if fn is None or not wanted:
        return
    with ops.name_scope(prefix + "/" + op.name.replace("/", "_") + "_grad/"):
        filled = [g if g is not None else apply_op("ZerosLike", None, x=t)
                  for g, t in zip(out_grads, op.outputs)]
        in_grads = fn(op, *filled)
        if not isinstance(in_grads, (list, tuple)):
            in_grads = [in_grads]
        if len(in_grads) != len(op.inputs):
            raise ValueError("Num gradients %d generated for op %s do not match num inputs %d"
                             % (len(in_grads), op.node_def, len(op.inputs)))
        for t, g in zip(op.inputs, in_grads):
            if g is not None and t in wanted:
                dtype = None if t.dtype.base_dtype.name == "resource" else t.dtype
                partials.setdefault(t, []).append(ops.convert_to_tensor(g, dtype=dtype))


def _cpp_unit_gradient(graph, unit, partials, x_set, path_ids, prefix):
    """One add_gradients call from the unit's outputs that have gradients to
    its inputs from outside it (and the xs produced inside it)."""
    inside = {op._id for op in unit}
    given = []
    for op in unit:
        for t in op.outputs:
            if partials.get(t):
                given.append((t, _sum(partials[t])))
    if not given:
        return
    wanted = []
    for op in unit:
        for t in op.inputs:
            if (t.op._id not in inside and (t in x_set or t.op._id in path_ids)
                    and _differentiable(t)):
                wanted.append(t)
        for t in op.outputs:
            if t in x_set:
                wanted.append(t)
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        return
    with ops.name_scope(prefix + "/" + unit[-1].name.replace("/", "_") + "_grad/") as scope:
        rewrites = graph._c_graph.num_rewritten()
        try:
            found = graph._c_graph.add_gradients(
                [t._as_endpoint() for t, _ in given], [t._as_endpoint() for t in wanted],
                [g._as_endpoint() for _, g in given], scope.rstrip("/"),
                ops._user_source_location())
        finally:
            graph._rebind_rewritten(rewrites)
    for t, r in zip(wanted, found):
        g = graph._tensor_for(tuple(r)) if r is not None else None
        if t.op._id in inside:
            # An x inside the unit: the call's result is its whole gradient
            # (its outside consumers' part came in as a seed).
            partials[t] = [g] if g is not None else []
        elif g is not None:
            partials.setdefault(t, []).append(g)


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
        graph = ops.get_default_graph()
        first_new = graph._c_graph.num_node_ids()
        result, grad_fn = f(*args)
        params = inspect.signature(grad_fn).parameters
        if "variables" in params:
            raise TypeError("wr.custom_gradient: grad_fn with a `variables` argument is not "
                            "supported by weir (pass the variables' values as inputs)")
        # f reading a variable from outside: its gradient would silently be
        # None, so refuse it as TF does when grad_fn takes no `variables`.
        for node_id in range(first_new, graph._c_graph.num_node_ids()):
            op = graph._op_for_id(node_id)
            if op.type == "ReadVariableOp" and op.inputs and op.inputs[0].op._id < first_new:
                raise TypeError("If using @custom_gradient with a function that uses variables, "
                                "then grad_fn must accept a keyword argument 'variables'. (f "
                                "reads %s; weir does not support that form: pass the "
                                "variable's value to f instead)" % op.inputs[0].op.name)
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
        with graph.gradient_override_map({"IdentityN": name}):
            op = apply_op("IdentityN", "IdentityN", input=flat + args)
        outs = op if isinstance(op, (list, tuple)) else op.outputs
        outs = list(outs)[:n_out]
        if isinstance(result, (list, tuple)):
            return type(result)(outs) if isinstance(result, tuple) else outs
        return outs[0]

    return decorated
