"""AdamOptimizer (TF1): m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2;
var -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)
(ResourceApplyAdam). As in TF1, beta1^t and beta2^t are the non-slot variables
"beta1_power" and "beta2_power" (colocated with the first variable by name),
multiplied by beta1 and beta2 after each step's updates; the slots are
"<var>/Adam" (m) and "<var>/Adam_1" (v)."""
import numpy as np

from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["AdamOptimizer"]


class AdamOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self):
        graph = ops.get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=graph),
                self._get_non_slot_variable("beta2_power", graph=graph))

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(initial_value=float(self._beta1), name="beta1_power",
                                       colocate_with=first_var)
        self._create_non_slot_variable(initial_value=float(self._beta2), name="beta2_power",
                                       colocate_with=first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        def tensor(value, name):
            return ops.convert_to_tensor(self._call_if_callable(value), name=name)
        self._lr_t = tensor(self._lr, "learning_rate")
        self._beta1_t = tensor(self._beta1, "beta1")
        self._beta2_t = tensor(self._beta2, "beta2")
        self._epsilon_t = tensor(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        return apply_op("ResourceApplyAdam", None, var=var.handle,
                        m=self.get_slot(var, "m").handle, v=self.get_slot(var, "v").handle,
                        beta1_power=self._cast(beta1_power.value(), dtype),
                        beta2_power=self._cast(beta2_power.value(), dtype),
                        lr=self._cast(self._lr_t, dtype), beta1=self._cast(self._beta1_t, dtype),
                        beta2=self._cast(self._beta2_t, dtype),
                        epsilon=self._cast(self._epsilon_t, dtype), grad=grad,
                        use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        # TF1's sparse Adam: m and v decay everywhere, the gradient rows are
        # scattered in, and var moves everywhere by lr_t * m / (sqrt(v) + eps).
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        b1p = self._cast(beta1_power.value(), dtype)
        b2p = self._cast(beta2_power.value(), dtype)
        lr_t = self._cast(self._lr_t, dtype)
        beta1 = self._cast(self._beta1_t, dtype)
        beta2 = self._cast(self._beta2_t, dtype)
        eps = self._cast(self._epsilon_t, dtype)

        def op(name, **kw):
            return apply_op(name, None, **kw)
        one = ops.convert_to_tensor(np.ones([], dtype.as_numpy_dtype))
        lr = op("RealDiv", x=op("Mul", x=lr_t, y=op("Sqrt", x=op("Sub", x=one, y=b2p))),
                y=op("Sub", x=one, y=b1p))
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        m_decay = op("AssignVariableOp", resource=m.handle, value=op("Mul", x=m.value(), y=beta1))
        with ops.control_dependencies([m_decay]):
            m_add = op("ResourceScatterAdd", resource=m.handle, indices=indices,
                       updates=op("Mul", x=grad, y=op("Sub", x=one, y=beta1)))
        v_decay = op("AssignVariableOp", resource=v.handle, value=op("Mul", x=v.value(), y=beta2))
        with ops.control_dependencies([v_decay]):
            v_add = op("ResourceScatterAdd", resource=v.handle, indices=indices,
                       updates=op("Mul", x=op("Square", x=grad), y=op("Sub", x=one, y=beta2)))
        with ops.control_dependencies([m_add, v_add]):
            m_t = op("ReadVariableOp", resource=m.handle, dtype=dtype)
            v_t = op("ReadVariableOp", resource=v.handle, dtype=dtype)
            step = op("RealDiv", x=op("Mul", x=lr, y=m_t),
                      y=op("AddV2", x=op("Sqrt", x=v_t), y=eps))
            return op("AssignSubVariableOp", resource=var.handle, value=step)

    def _finish(self, update_ops, name_scope):
        with ops.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with ops.colocate_with(beta1_power.op):
                b1 = self._cast(self._beta1_t, beta1_power.dtype)
                b2 = self._cast(self._beta2_t, beta2_power.dtype)
                update_beta1 = apply_op("AssignVariableOp", None, resource=beta1_power.handle,
                                        value=apply_op("Mul", None, x=beta1_power.value(), y=b1))
                update_beta2 = apply_op("AssignVariableOp", None, resource=beta2_power.handle,
                                        value=apply_op("Mul", None, x=beta2_power.value(), y=b2))
        return optimizer._group(list(update_ops) + [update_beta1, update_beta2], name_scope)
