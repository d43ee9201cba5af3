"""MomentumOptimizer: accum = momentum * accum + grad; var -= lr * accum, or with
use_nesterov var -= lr * (grad + momentum * accum) (ResourceApplyMomentum).
The slot "momentum" is named "<var>/Momentum"."""
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["MomentumOptimizer"]


class MomentumOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = ops.convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._momentum_tensor = ops.convert_to_tensor(
            self._call_if_callable(self._momentum), name="momentum")

    def _resource_apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        return apply_op("ResourceApplyMomentum", None, var=var.handle,
                        accum=self.get_slot(var, "momentum").handle,
                        lr=self._cast(self._learning_rate_tensor, dtype), grad=grad,
                        momentum=self._cast(self._momentum_tensor, dtype),
                        use_locking=self._use_locking, use_nesterov=self._use_nesterov)

    def _resource_apply_sparse(self, grad, var, indices):
        dtype = var.dtype.base_dtype
        return apply_op("ResourceSparseApplyMomentum", None, var=var.handle,
                        accum=self.get_slot(var, "momentum").handle,
                        lr=self._cast(self._learning_rate_tensor, dtype), grad=grad,
                        indices=indices, momentum=self._cast(self._momentum_tensor, dtype),
                        use_locking=self._use_locking, use_nesterov=self._use_nesterov)
