"""GradientDescentOptimizer: var -= learning_rate * grad (ResourceApplyGradientDescent)."""
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["GradientDescentOptimizer"]


class GradientDescentOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = ops.convert_to_tensor(lr, name="learning_rate")

    def _resource_apply_dense(self, grad, var):
        return apply_op("ResourceApplyGradientDescent", None, var=var.handle,
                        alpha=self._cast(self._learning_rate_tensor, var.dtype.base_dtype),
                        delta=grad, use_locking=self._use_locking)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        # TF's: var[indices] -= lr * grad, repeated indices adding.
        lr = self._cast(self._learning_rate_tensor, var.dtype.base_dtype)
        delta = apply_op("Neg", None, x=apply_op("Mul", None, x=grad, y=lr))
        return apply_op("ResourceScatterAdd", None, resource=var.handle, indices=indices,
                        updates=delta)
