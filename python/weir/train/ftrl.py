"""FtrlOptimizer (TF1's FTRL-proximal, ResourceApplyFtrl; ResourceApplyFtrlV2 with
l2_shrinkage_regularization_strength > 0): per coordinate, accum += grad^2, linear gathers
the gradient less the learning-rate change times var, and var is the closed-form minimizer of
the l1/l2-regularized model (0 where |linear| <= l1). Slots as TF1 makes them: "accum"
(initial_accumulator_value, "<var>/Ftrl") and "linear" (zeros, "<var>/Ftrl_1"). beta adds
beta / (2 * learning_rate) to the l2 strength, as in TF1."""
import numpy as np

from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(use_locking, name)
        checks = [(initial_accumulator_value < 0.0, "initial_accumulator_value",
                   initial_accumulator_value),
                  (learning_rate_power > 0.0, "learning_rate_power", learning_rate_power),
                  (l1_regularization_strength < 0.0, "l1_regularization_strength",
                   l1_regularization_strength),
                  (l2_regularization_strength < 0.0, "l2_regularization_strength",
                   l2_regularization_strength),
                  (l2_shrinkage_regularization_strength < 0.0,
                   "l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)]
        for bad, what, value in checks:
            if bad:
                raise ValueError("%s %s is out of range (learning_rate_power must be <= 0, the "
                                 "others >= 0)" % (what, value))
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                v, np.asarray(self._initial_accumulator_value, dtype.as_numpy_dtype),
                v.get_shape(), dtype, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        def tensor(value, name):
            return ops.convert_to_tensor(self._call_if_callable(value), name=name)
        learning_rate = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = tensor(learning_rate, "learning_rate")
        self._l1_tensor = tensor(self._l1, "l1_regularization_strength")
        l2 = self._l2
        if self._beta:
            l2 = l2 + self._beta / (2.0 * learning_rate)
        self._l2_tensor = tensor(l2, "adjusted_l2_regularization_strength")
        self._l2_shrinkage_tensor = tensor(self._l2_shrinkage,
                                           "l2_shrinkage_regularization_strength")
        self._learning_rate_power_tensor = tensor(self._learning_rate_power,
                                                  "learning_rate_power")

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)

    def _apply(self, grad, var, indices=None):
        prefix = "ResourceApply" if indices is None else "ResourceSparseApply"
        dtype = var.dtype.base_dtype
        args = dict(var=var.handle, accum=self.get_slot(var, "accum").handle,
                    linear=self.get_slot(var, "linear").handle, grad=grad,
                    lr=self._cast(self._learning_rate_tensor, dtype),
                    l1=self._cast(self._l1_tensor, dtype), l2=self._cast(self._l2_tensor, dtype),
                    lr_power=self._cast(self._learning_rate_power_tensor, dtype),
                    use_locking=self._use_locking)
        if indices is not None:
            args["indices"] = indices
        if self._l2_shrinkage > 0.0:
            return apply_op(prefix + "FtrlV2", None,
                            l2_shrinkage=self._cast(self._l2_shrinkage_tensor, dtype), **args)
        return apply_op(prefix + "Ftrl", None, **args)
