"""TF1's proximal optimizers: a gradient step of rate r, then l1/l2 shrinkage
var = sign(prox) * max(|prox| - r * l1, 0) / (1 + r * l2).
ProximalGradientDescentOptimizer steps with r = learning_rate
(ResourceApplyProximalGradientDescent); ProximalAdagradOptimizer with
r = learning_rate / sqrt(accum), accum += grad^2 first (ResourceApplyProximalAdagrad;
slot "accumulator", "<var>/ProximalAdagrad", starting at initial_accumulator_value)."""
import numpy as np

from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["ProximalGradientDescentOptimizer", "ProximalAdagradOptimizer"]


class _Proximal(optimizer.Optimizer):
    def __init__(self, learning_rate, l1, l2, use_locking, name):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1 = l1
        self._l2 = l2

    def _prepare(self):
        def tensor(value, name):
            return ops.convert_to_tensor(self._call_if_callable(value), name=name)
        self._learning_rate_tensor = tensor(self._learning_rate, "learning_rate")
        self._l1_tensor = tensor(self._l1, "l1_regularization_strength")
        self._l2_tensor = tensor(self._l2, "l2_regularization_strength")

    def _scalars(self, dtype):
        return (self._cast(self._learning_rate_tensor, dtype), self._cast(self._l1_tensor, dtype),
                self._cast(self._l2_tensor, dtype))


class ProximalGradientDescentOptimizer(_Proximal):
    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength,
                         use_locking, name)

    def _resource_apply_dense(self, grad, var):
        alpha, l1, l2 = self._scalars(var.dtype.base_dtype)
        return apply_op("ResourceApplyProximalGradientDescent", None, var=var.handle,
                        alpha=alpha, l1=l1, l2=l2, delta=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        alpha, l1, l2 = self._scalars(var.dtype.base_dtype)
        return apply_op("ResourceSparseApplyProximalGradientDescent", None, var=var.handle,
                        alpha=alpha, l1=l1, l2=l2, grad=grad, indices=indices,
                        use_locking=self._use_locking)


class ProximalAdagradOptimizer(_Proximal):
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength,
                         use_locking, name)
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                v, np.asarray(self._initial_accumulator_value, dtype.as_numpy_dtype),
                v.get_shape(), dtype, "accumulator", self._name)

    def _resource_apply_dense(self, grad, var):
        lr, l1, l2 = self._scalars(var.dtype.base_dtype)
        return apply_op("ResourceApplyProximalAdagrad", None, var=var.handle,
                        accum=self.get_slot(var, "accumulator").handle, lr=lr, l1=l1, l2=l2,
                        grad=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        lr, l1, l2 = self._scalars(var.dtype.base_dtype)
        return apply_op("ResourceSparseApplyProximalAdagrad", None, var=var.handle,
                        accum=self.get_slot(var, "accumulator").handle, lr=lr, l1=l1, l2=l2,
                        grad=grad, indices=indices, use_locking=self._use_locking)
