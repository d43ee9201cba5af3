"""Optimizer: TF1's tf.train.Optimizer base class, as graph code on resource variables.

`minimize(loss)` = `compute_gradients` (wr.gradients with respect to each
variable) + `apply_gradients`, which creates the slot variables on first use
(ordinary non-trainable variables in GLOBAL_VARIABLES named "<var>/<Name>",
"<var>/<Name>_1", ... as TF names them, so global_variables_initializer()
made after minimize initializes them), calls `_prepare()`, then one
`_resource_apply_dense(grad, var)` per variable under the scope
"<name>/update_<var>", then `_finish(update_ops, ...)`, and finally adds 1 to
`global_step` when given. The returned Operation is also added to the
TRAIN_OP collection.

A subclass written in Python overrides `_create_slots(var_list)`,
`_prepare()`, and `_apply_dense(grad, var)` (or `_resource_apply_dense(grad,
handle)`; here both receive the wr.Variable, whose `.handle` is the resource
tensor): the default `_resource_apply_dense` calls `_apply_dense`, so a TF1
style optimizer that only writes `_apply_dense` works. An IndexedSlices
gradient (a gather's: embeddings) goes, as in TF, to
`_resource_apply_sparse_duplicate_indices(values, var, indices)`, which sums
the rows of repeated indices (Unique + UnsortedSegmentSum) and calls
`_resource_apply_sparse(values, var, unique_indices)`: the built-in
optimizers update only those rows (ResourceSparseApply*, ResourceScatterAdd);
a subclass without a sparse update gets `_apply_sparse(IndexedSlices, var)`
when it defines one, else its dense update of the densified gradient.
"""
import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.framework.sparse_tensor import IndexedSlices
from weir.ops import gradients_impl
from weir.ops import variables

__all__ = ["Optimizer"]


def _group(op_list, name):
    deps = [o.op if isinstance(o, ops.Tensor) else o for o in op_list if o is not None]
    with ops.control_dependencies(deps):
        return apply_op("NoOp", name)


def _cast(x, dtype):
    x = ops.convert_to_tensor(x)
    if x.dtype.base_dtype == dtype:
        return x
    return apply_op("Cast", None, x=x, DstT=dtype)


def _deduplicate_indexed_slices(values, indices):
    """(summed values, unique indices): the rows of each repeated index added (TF's)."""
    unique = apply_op("Unique", None, x=indices, out_idx=dtypes.int32)
    count = apply_op("Shape", None, input=unique.y, out_type=dtypes.int32)[0]
    summed = apply_op("UnsortedSegmentSum", None, data=values, segment_ids=unique.idx,
                      num_segments=count)
    return summed, unique.y


def _var_key(var):
    return (var.graph, var.op.name)


class Optimizer:
    """Base class of the optimizers (TF1 interface)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # slot name -> {var key: slot Variable}
        self._slots = {}
        # (name, graph) -> Variable (e.g. Adam's beta1_power)
        self._non_slot_dict = {}

    def get_name(self):
        return self._name

    # --- the public steps ------------------------------------------------------

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                "support gradients, between variables %s and loss %s."
                % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """A list of (gradient or None, variable) pairs, one per variable."""
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             "Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not %s" % gate_gradients)
        loss = ops.convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            grad_loss = ops.convert_to_tensor(grad_loss, dtype=loss.dtype)
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = variables.trainable_variables()
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, variables.Variable):
                raise TypeError("Trying to optimize unsupported type %r (weir optimizes "
                                "wr.Variable objects)" % (v,))
        grads = gradients_impl.gradients(
            loss, var_list, grad_ys=None if grad_loss is None else [grad_loss],
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            gate_gradients=(gate_gradients == Optimizer.GATE_OP))
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The Operation that applies the gradients (then increments global_step)."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = ops.convert_to_tensor(g)
                except (TypeError, ValueError) as e:
                    raise TypeError("Gradient must be convertible to a Tensor or None: %s (%s)"
                                    % (g, e))
            if not isinstance(v, variables.Variable):
                raise TypeError("Trying to optimize unsupported type %r" % (v,))
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: %s."
                             % ([str(v) for _, v in converted],))
        with ops.control_dependencies(None):
            self._create_slots(var_list)
        update_ops = []
        with ops.name_scope(name, self._name) as scope:
            self._prepare()
            for grad, var in converted:
                if grad is None:
                    continue
                with ops.name_scope("update_" + var.op.name), ops.colocate_with(var.op):
                    if isinstance(grad, IndexedSlices):
                        update_ops.append(self._resource_apply_sparse_duplicate_indices(
                            grad.values, var, grad.indices))
                    else:
                        update_ops.append(self._resource_apply_dense(grad, var))
            if global_step is None:
                train_op = self._finish(update_ops, scope)
            else:
                with ops.control_dependencies([self._finish(update_ops, "update")]):
                    with ops.colocate_with(global_step.op):
                        one = ops.convert_to_tensor(
                            np.ones([], global_step.dtype.as_numpy_dtype))
                        train_op = apply_op("AssignAddVariableOp", scope,
                                            resource=global_step.handle, value=one)
        if isinstance(train_op, ops.Tensor):
            train_op = train_op.op
        collection = ops.get_collection_ref(ops.GraphKeys.TRAIN_OP)
        if train_op not in collection:
            collection.append(train_op)
        return train_op

    # --- slots ------------------------------------------------------------------

    def get_slot_names(self):
        return sorted(self._slots.keys())

    def get_slot(self, var, name):
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def variables(self):
        """Every variable this optimizer created in the default graph, by name."""
        graph = ops.get_default_graph()
        result = [v for (n, g), v in self._non_slot_dict.items() if g is graph]
        for per_var in self._slots.values():
            result.extend(v for v in per_var.values() if v.graph is graph)
        return sorted(result, key=lambda v: v.name)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _make_slot_variable(self, var, initial_value, op_name, dtype=None):
        # Slot names are absolute ("<var op name>/<op_name>"), uniquified the
        # way name scopes are: the second slot of one optimizer is "..._1".
        with ops.name_scope(None), ops.control_dependencies(None), \
                ops.colocate_with(var.op):
            return variables.Variable(initial_value, trainable=False,
                                      name=var.op.name + "/" + op_name, dtype=dtype)

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = self._make_slot_variable(var, val, op_name)
        return named[key]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
            dtype = dtypes.as_dtype(dtype)
            if callable(initializer):
                def value():
                    try:
                        return initializer(dims, dtype=dtype, partition_info=None)
                    except TypeError:
                        return initializer(dims, dtype=dtype)
            else:
                value = np.broadcast_to(np.asarray(initializer, dtype.as_numpy_dtype),
                                        dims).copy()
            named[key] = self._make_slot_variable(var, value, op_name, dtype=dtype)
        return named[key]

    def _zeros_slot(self, var, slot_name, op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            dims = var.get_shape().as_list()
            zeros = np.zeros(dims, var.dtype.base_dtype.as_numpy_dtype)
            named[key] = self._make_slot_variable(var, zeros, op_name)
        return named[key]

    def _get_non_slot_variable(self, name, graph=None):
        if graph is None:
            graph = ops.get_default_graph()
        return self._non_slot_dict.get((name, graph))

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), ops.control_dependencies(None), \
                    ops.colocate_with(colocate_with.op):
                v = variables.Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _non_slot_variables(self):
        return list(self._non_slot_dict.values())

    # --- hooks --------------------------------------------------------------------

    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError("%s implements neither _apply_dense nor "
                                  "_resource_apply_dense" % type(self).__name__)

    def _resource_apply_dense(self, grad, handle):
        """`handle` is the wr.Variable (its .handle is the resource tensor)."""
        return self._apply_dense(grad, handle)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError()

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
        """Rows of repeated indices summed, then _resource_apply_sparse."""
        summed, unique = _deduplicate_indexed_slices(grad, indices)
        return self._resource_apply_sparse(summed, handle, unique)

    def _resource_apply_sparse(self, grad, handle, indices):
        """`grad` rows for the unique `indices` of the wr.Variable `handle`.
        This default serves subclasses without a sparse update."""
        if type(self)._apply_sparse is not Optimizer._apply_sparse:
            shape = apply_op("Shape", None, input=handle.value(), out_type=dtypes.int32)
            return self._apply_sparse(IndexedSlices(grad, indices, shape), handle)
        rows = apply_op("Shape", None, input=handle.value(), out_type=dtypes.int32)[0]
        dense = apply_op("UnsortedSegmentSum", None, data=grad, segment_ids=indices,
                         num_segments=rows)
        return self._resource_apply_dense(dense, handle)

    def _finish(self, update_ops, name_scope):
        return _group(update_ops, name_scope)

    # --- helpers --------------------------------------------------------------------

    def _valid_dtypes(self):
        return (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)

    def _assert_valid_dtypes(self, tensors):
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError("Invalid type %r for %s, expected: %s."
                                 % (dtype, t.name, [v for v in valid]))

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    @staticmethod
    def _cast(x, dtype):
        return _cast(x, dtype)
