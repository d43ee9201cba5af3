"""wr.gradients: symbolic derivatives (TF1's tf.gradients) on weir's C++ autodiff.

`gradients(ys, xs, grad_ys)` adds the gradient subgraph with
`_C.Graph.add_gradients` under a fresh name scope ("gradients", "gradients_1",
...) and returns one Tensor per x: d(sum ys)/dx, seeded with `grad_ys` (ones
when None). An x that no gradient reaches gives None (or zeros with
unconnected_gradients="zero"). A Variable x means its value: the C++ autodiff
differentiates through every ReadVariableOp of its handle. As in TF, the
gradient of an x reached only through gathers (wr.gather / embedding_lookup
of a Variable, which read it with ResourceGather) is an IndexedSlices: the
gathered rows, repeated indices meaning add (wr.convert_to_tensor densifies
it).

Not supported (differences from TF): `stop_gradients` (a ValueError; use
wr.stop_gradient in the forward graph), and the gate_gradients /
aggregation_method / colocate_gradients_with_ops knobs, which are accepted and
ignored (the C++ driver sums partial gradients in a fixed order).
"""
import enum

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["gradients", "AggregationMethod", "UnconnectedGradients"]


class AggregationMethod:
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    NONE = "none"
    ZERO = "zero"


def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _is_variable(x):
    from weir.ops import variables
    return isinstance(x, variables.Variable)


def _differentiable(dtype):
    base = dtype.base_dtype
    return base.is_floating or base.is_complex


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """The list of sum(dy/dx) for each x in xs (None where unconnected)."""
    if stop_gradients:
        raise ValueError("wr.gradients: stop_gradients is not supported by weir; wrap the "
                         "tensors in wr.stop_gradient when building the forward graph")
    unconnected = UnconnectedGradients(unconnected_gradients)
    ys = [ops.convert_to_tensor(y) for y in _as_list(ys)]
    xs_given = _as_list(xs)
    if not ys:
        raise ValueError("wr.gradients: ys is empty")
    graph = ys[0].graph
    xs_tensors = []
    for x in xs_given:
        if _is_variable(x):
            xs_tensors.append(x.handle)
        else:
            xs_tensors.append(ops.convert_to_tensor(x))
    for t in ys + xs_tensors:
        if t.graph is not graph:
            raise ValueError("wr.gradients: %s is from a different graph than %s"
                             % (t.name, ys[0].name))
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    else:
        grad_ys = _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
    with graph.as_default():
        seeds = []
        for y, g in zip(ys, grad_ys):
            if g is None:
                seeds.append(None)
                continue
            g = ops.convert_to_tensor(g, dtype=y.dtype)
            seeds.append(g._as_endpoint())
        # TF1: only float and complex values backpropagate; an integer (or
        # bool, string) y contributes nothing and an integer x gets None.
        pairs = [(y, g) for y, g in zip(ys, seeds) if _differentiable(y.dtype)]
        # A resource tensor is a variable's handle: its value's gradient.
        wanted = [i for i, x in enumerate(xs_given)
                  if _differentiable(x.dtype if _is_variable(x) else xs_tensors[i].dtype)
                  or xs_tensors[i].dtype.base_dtype == dtypes.resource]
        with ops.name_scope(name) as scope:
            prefix = scope[:-1] if scope.endswith("/") else scope
            results = [None] * len(xs_given)
            python_found = None
            if pairs and wanted:
                # A Python gradient (RegisterGradient, gradient_override_map,
                # custom_gradient) on the path: weir.ops.custom_gradient drives.
                from weir.ops import custom_gradient as _custom
                python_found = _custom._maybe_python_gradients(
                    [y for y, _ in pairs],
                    [None if g is None else graph._tensor_for(tuple(g)) for _, g in pairs],
                    [xs_tensors[i] for i in wanted], prefix)
            if python_found is not None:
                for i, r in zip(wanted, python_found):
                    results[i] = r
            elif pairs and wanted:
                rewrites = graph._c_graph.num_rewritten()
                try:
                    found = graph._c_graph.add_gradients(
                        [y._as_endpoint() for y, _ in pairs],
                        [xs_tensors[i]._as_endpoint() for i in wanted], [g for _, g in pairs],
                        prefix, ops._user_source_location(), True)
                finally:
                    # Calls and functional control flow on the path were
                    # expanded in place: their nodes have new ids.
                    graph._rebind_rewritten(rewrites)
                for i, r in zip(wanted, found):
                    results[i] = r
            out = []
            for x, r in zip(xs_given, results):
                from weir.framework.sparse_tensor import IndexedSlices
                if isinstance(r, (ops.Tensor, IndexedSlices)):  # the Python driver's
                    out.append(r)
                elif r is not None and len(r) == 3:  # (values, indices, dense_shape)
                    values, indices, dense_shape = (graph._tensor_for(tuple(e)) for e in r)
                    out.append(IndexedSlices(values, indices, dense_shape))
                elif r is not None:
                    out.append(graph._tensor_for(tuple(r)))
                elif unconnected is UnconnectedGradients.ZERO:
                    value = x.value() if _is_variable(x) else ops.convert_to_tensor(x)
                    out.append(apply_op("ZerosLike", None, x=value))
                else:
                    out.append(None)
    return out
