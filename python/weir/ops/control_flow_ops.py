"""Control flow: TF1's cond, while_loop, case, group, tuple,
with_dependencies, no_op and Assert.

cond and while_loop build TensorFlow control flow v1's dataflow (Switch,
Merge, Enter, Exit, NextIteration, LoopCond) through the C++ builders
(`_C.Graph.cond` / `_C.Graph.while_loop`): the Python branch and body
functions build their nodes in the default graph under the construct's name
scope ("cond/...", "while/..."), and tensors from outside are captured by the
C++ side. Loop variables and branch results may be nested lists, tuples,
namedtuples and dicts of Tensors (and Python values, converted).
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op
from weir.ops import array_ops

__all__ = ["no_op", "group", "tuple", "with_dependencies", "cond", "while_loop", "case", "Assert"]

_builtin_tuple = tuple


# ---- nested structures (lists, tuples, namedtuples, dicts sorted by key) ----

def _is_nested(x):
    return isinstance(x, (list, _builtin_tuple, dict))


def _flatten(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k])]
    if isinstance(x, (list, _builtin_tuple)):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


def _pack_as(structure, flat):
    flat = list(flat)

    def build(s):
        if isinstance(s, dict):
            return type(s)((k, build(s[k])) for k in sorted(s))
        if isinstance(s, (list, _builtin_tuple)):
            items = [build(item) for item in s]
            if hasattr(s, "_fields"):  # namedtuple
                return type(s)(*items)
            return type(s)(items)
        return flat.pop(0)

    out = build(structure)
    if flat:
        raise ValueError("Structure %r has fewer leaves than the %d values given" % (
            structure, len(flat) + len(_flatten(structure))))
    return out


def _assert_same_structure(a, b, what):
    def shape_of(s):
        if isinstance(s, dict):
            return ("dict", _builtin_tuple((k, shape_of(s[k])) for k in sorted(s)))
        if isinstance(s, (list, _builtin_tuple)):
            return ("seq", _builtin_tuple(shape_of(i) for i in s))
        return "leaf"
    if shape_of(a) != shape_of(b):
        raise ValueError("%s: the two structures don't have the same nested structure: %r and %r" % (
            what, a, b))


# ---- grouping ----

def no_op(name=None):
    """An op that does nothing; a target for control dependencies."""
    return apply_op("NoOp", name)


def _as_op(x):
    if isinstance(x, ops.Operation):
        return x
    if isinstance(x, ops.Tensor):
        return x.op
    return ops.convert_to_tensor(x).op


def group(*inputs, **kwargs):
    """An op that runs after all of `inputs` (Operations or Tensors, nested
    lists allowed) and has no output."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs))
    deps = [_as_op(x) for x in _flatten(list(inputs)) if x is not None]
    with ops.name_scope(name, "group_deps", []) as scope:
        with ops.control_dependencies(deps):
            return no_op(name=scope)


def with_dependencies(dependencies, output_tensor, name=None):
    """output_tensor, but only after `dependencies` ran (an Identity with
    control inputs; for an Operation, a group)."""
    with ops.name_scope(name, "control_dependency", list(dependencies) + [output_tensor]) as scope:
        with ops.colocate_with(output_tensor):
            with ops.control_dependencies(dependencies):
                if isinstance(output_tensor, ops.Operation):
                    return group(output_tensor, name=scope)
                return array_ops.identity(ops.convert_to_tensor(output_tensor), name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001  (TF's name)
    """The tensors, each made available only after all of them (and
    control_inputs) are computed; None entries stay None."""
    with ops.name_scope(name, "tuple", tensors) as scope:
        present = [t for t in tensors if t is not None]
        gating = present + list(control_inputs or [])
        gate = group(*gating)
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
            elif isinstance(t, ops.Operation):
                with ops.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(with_dependencies([gate], t))
        del scope
        return out


def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TF's name)
    """An op that fails the step with InvalidArgumentError listing `data` (the
    first `summarize` entries of each) when the scalar `condition` is false."""
    with ops.name_scope(name, "Assert", [condition, data]) as scope:
        items = [d if isinstance(d, ops.Tensor) else ops.convert_to_tensor(d) for d in data]
        return apply_op("Assert", scope, condition=condition, data=items,
                        summarize=3 if summarize is None else int(summarize))


# ---- cond ----

def _branch_flat(result, what):
    """Flattens a branch result to endpoints; an Operation becomes a bool
    tensor that depends on it, a Python value a constant."""
    flat = []
    for leaf in _flatten(result):
        if leaf is None:
            raise ValueError("%s returned None; branches must return Tensors (or Operations)" % what)
        leaf = _flow_of(leaf)
        if isinstance(leaf, ops.Operation):
            with ops.control_dependencies([leaf]):
                leaf = array_ops.identity(ops.convert_to_tensor(True))
        else:
            leaf = ops.convert_to_tensor(leaf)
        flat.append(leaf)
    return flat


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """true_fn() where the scalar bool `pred` is true at run time, else
    false_fn(); only the taken branch's ops run. Both return the same nested
    structure of same-dtype tensors. Non-strict (TF1's default): a one-element
    list/tuple result comes back as the element."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    with ops.name_scope(name, "cond", [pred]) as scope:
        graph = ops.get_default_graph()
        pred = ops.convert_to_tensor(pred, name="pred")
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError("pred must be a bool tensor, got %s (%s)" % (pred.name, pred.dtype.name))
        structures = {}

        def make(fn, key):
            def run():
                result = fn()
                if structures:  # the other branch ran first: compare now, with TF's error
                    (other_key, other), = structures.items()
                    _assert_same_structure(other, result, "cond: %s and %s" % (other_key, key))
                structures[key] = result
                return [t._as_endpoint() for t in _branch_flat(result, key)]
            return run

        endpoints = graph._c_graph.cond(pred._as_endpoint(), make(true_fn, "true_fn"),
                                        make(false_fn, "false_fn"), scope.rstrip("/"))
        t_struct, f_struct = structures["true_fn"], structures["false_fn"]
        _assert_same_structure(t_struct, f_struct, "cond: true_fn and false_fn")
        outs = [_rewrap(v, graph._tensor_for(_ep(e)))
                for v, e in zip(_flatten(t_struct), endpoints)]
        result = _pack_as(t_struct, outs) if _is_nested(t_struct) else outs[0]
        if not strict and isinstance(result, (list, _builtin_tuple)) and len(result) == 1 and not isinstance(
                t_struct, dict):
            result = result[0]
        return result


def _ep(e):
    return (int(e[0]), int(e[1]))


# ---- case ----

def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The fn of the first pair whose pred is true, else default(), as nested
    conds. exclusive=True adds a check that at most one pred is true. With no
    default the last pair's fn is the fallback (TF errors when none holds)."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    if not pairs:
        if default is None:
            raise ValueError("case: pred_fn_pairs is empty and no default was given")
        return default()
    for p, f in pairs:
        if not callable(f):
            raise TypeError("case: fn for pred %s must be callable" % (p,))
    with ops.name_scope(name, "case", [p for p, _ in pairs]) as scope:
        if default is None:
            default = pairs[-1][1]
            pairs = pairs[:-1]
            if not pairs:
                return default()

        def chain(i):
            if i == len(pairs):
                return default
            p, f = pairs[i]
            return lambda: cond(p, f, chain(i + 1), strict=strict)

        if exclusive:
            from weir.ops import math_ops  # noqa: PLC0415  (math_ops imports this module's users)
            preds = array_ops.stack([ops.convert_to_tensor(p) for p, _ in pred_fn_pairs])
            ok = math_ops.less_equal(math_ops.count_nonzero(preds), 1)
            check = Assert(ok, ["Input error: exclusive=True but more than 1 conditions are true"])
            with ops.control_dependencies([check]):
                return chain(0)()
        del scope
        return chain(0)()


# ---- while_loop ----

def _shape_list(s):
    s = tensor_shape.as_shape(s)
    return None if s.ndims is None else s.as_list()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,  # noqa: F811
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `body` while `cond` holds: cond(*vars) -> bool scalar,
    body(*vars) -> next vars (same structure and dtypes). Returns the final
    vars; a single loop var (or a one-element list, unless
    return_same_structure) comes back as a Tensor. shape_invariants relax the
    shapes a var may take across iterations; maximum_iterations bounds the trip
    count. back_prop and swap_memory are accepted and ignored (gradients go
    through the C++ loop gradient)."""
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    with ops.name_scope(name, "while", _flatten(loop_vars)) as scope:
        graph = ops.get_default_graph()
        single = not _is_nested(loop_vars)
        structure = [loop_vars] if single else loop_vars
        # A TensorArray leaf travels as its flow and is rebuilt around it.
        leaves = _flatten(structure)
        flat = [ops.convert_to_tensor(_flow_of(v)) for v in leaves]
        if not flat:
            raise ValueError("No loop variables provided")
        invariants = None
        if shape_invariants is not None:
            inv_struct = [shape_invariants] if single else shape_invariants
            inv_flat = _flatten_shapes(inv_struct, structure)
            invariants = [_shape_list(s) for s in inv_flat]
        max_ep = None
        if maximum_iterations is not None:
            mi = ops.convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if mi.dtype.base_dtype != dtypes.int32:
                mi = array_ops.cast(mi, dtypes.int32)
            max_ep = mi._as_endpoint()

        def packed(vars_eps):
            ts = [_rewrap(v, graph._tensor_for(_ep(e))) for v, e in zip(leaves, vars_eps)]
            p = _pack_as(structure, ts)
            return p

        def call(fn, p):
            if single:
                return fn(p[0])
            if hasattr(p, "_fields") or isinstance(p, (list, _builtin_tuple)):
                return fn(*p)
            return fn(p)

        def cond_fn(vars_eps):
            c = ops.convert_to_tensor(call(cond, packed(vars_eps)))
            if c.dtype.base_dtype != dtypes.bool or c.shape.ndims not in (0, None):
                raise TypeError("while_loop: cond must return a bool scalar, got %s %s" % (
                    c.dtype.name, c.shape))
            return c._as_endpoint()

        def body_fn(vars_eps):
            result = call(body, packed(vars_eps))
            if single or not _is_nested(result):
                result = [result] if not (isinstance(result, (list, _builtin_tuple)) and single) else result
            res_flat = _flatten(result)
            if len(res_flat) != len(flat):
                raise ValueError("while_loop: body returned %d values for %d loop variables" % (
                    len(res_flat), len(flat)))
            out = []
            for v, r in zip(flat, res_flat):
                r = _flow_of(r)
                if isinstance(r, ops.Operation):
                    raise TypeError("while_loop: body returned an Operation, not a Tensor")
                r = ops.convert_to_tensor(r, dtype=v.dtype.base_dtype) if not isinstance(
                    r, ops.Tensor) else r
                out.append(r._as_endpoint())
            return out

        endpoints = graph._c_graph.while_loop(
            cond_fn, body_fn, [t._as_endpoint() for t in flat],
            parallel_iterations=int(parallel_iterations), maximum_iterations=max_ep,
            shape_invariants=invariants, name=scope.rstrip("/"))
        outs = [_rewrap(v, graph._tensor_for(_ep(e))) for v, e in zip(leaves, endpoints)]
        result = _pack_as(structure, outs)
        if single:
            return result[0]
        if not return_same_structure and isinstance(result, (list, _builtin_tuple)) and len(result) == 1:
            return result[0]
        return result


def _flow_of(x):
    """A TensorArray's flow (the tensor that stands for it in a loop); else x."""
    return x.flow if hasattr(x, "_with_flow") else x


def _rewrap(template, tensor):
    """`tensor` as the loop-carried form of `template`: a TensorArray with
    that flow where the template is one, else the tensor."""
    return template._with_flow(tensor) if hasattr(template, "_with_flow") else tensor


def _flatten_shapes(inv_struct, var_struct):
    """Flattens shape invariants alongside the loop vars: a shape (TensorShape,
    list of ints/None, None) is a leaf where the var is a leaf."""
    if isinstance(var_struct, dict):
        return [s for k in sorted(var_struct) for s in _flatten_shapes(inv_struct[k], var_struct[k])]
    if isinstance(var_struct, (list, _builtin_tuple)):
        if len(inv_struct) != len(var_struct):
            raise ValueError("shape_invariants %r do not match loop_vars %r" % (inv_struct, var_struct))
        return [s for i, v in zip(inv_struct, var_struct) for s in _flatten_shapes(i, v)]
    return [inv_struct]

