"""AdagradOptimizer: accum += grad^2; var -= lr * grad / sqrt(accum)
(ResourceApplyAdagrad). The slot "accumulator" ("<var>/Adagrad") starts at
initial_accumulator_value."""
import numpy as np

from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["AdagradOptimizer"]


class AdagradOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                v, np.asarray(self._initial_accumulator_value, dtype.as_numpy_dtype),
                v.get_shape(), dtype, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = ops.convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")

    def _resource_apply_dense(self, grad, var):
        return apply_op("ResourceApplyAdagrad", None, var=var.handle,
                        accum=self.get_slot(var, "accumulator").handle,
                        lr=self._cast(self._learning_rate_tensor, var.dtype.base_dtype),
                        grad=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return apply_op("ResourceSparseApplyAdagrad", None, var=var.handle,
                        accum=self.get_slot(var, "accumulator").handle,
                        lr=self._cast(self._learning_rate_tensor, var.dtype.base_dtype),
                        grad=grad, indices=indices, use_locking=self._use_locking)
