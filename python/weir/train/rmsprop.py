"""RMSPropOptimizer (TF1): ms = decay * ms + (1 - decay) * grad^2;
mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom. With
centered=True, mg = decay * mg + (1 - decay) * grad and the denominator is
sqrt(ms - mg^2 + epsilon). Slots as TF1 makes them: "rms" (ones, "<var>/RMSProp"),
"mg" when centered, then "momentum" (zeros); ResourceApply(Centered)RMSProp."""
import numpy as np

from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["RMSPropOptimizer"]


class RMSPropOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                v, np.ones([], dtype.as_numpy_dtype), v.get_shape(), dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        def tensor(value, name):
            return ops.convert_to_tensor(self._call_if_callable(value), name=name)
        self._learning_rate_tensor = tensor(self._learning_rate, "learning_rate")
        self._decay_tensor = tensor(self._decay, "decay")
        self._momentum_tensor = tensor(self._momentum, "momentum")
        self._epsilon_tensor = tensor(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)

    def _apply(self, grad, var, indices=None):
        """ResourceApply[Centered]RMSProp, or its Sparse form on rows `indices`."""
        sparse = {} if indices is None else {"indices": indices}
        prefix = "ResourceApply" if indices is None else "ResourceSparseApply"
        dtype = var.dtype.base_dtype
        args = dict(var=var.handle, ms=self.get_slot(var, "rms").handle,
                    mom=self.get_slot(var, "momentum").handle,
                    lr=self._cast(self._learning_rate_tensor, dtype),
                    rho=self._cast(self._decay_tensor, dtype),
                    momentum=self._cast(self._momentum_tensor, dtype),
                    epsilon=self._cast(self._epsilon_tensor, dtype), grad=grad,
                    use_locking=self._use_locking, **sparse)
        if self._centered:
            return apply_op(prefix + "CenteredRMSProp", None,
                            mg=self.get_slot(var, "mg").handle, **args)
        return apply_op(prefix + "RMSProp", None, **args)
