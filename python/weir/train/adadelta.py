"""AdadeltaOptimizer (TF1): accum = rho * accum + (1 - rho) * grad^2;
update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad;
accum_update = rho * accum_update + (1 - rho) * update^2; var -= lr * update.
Slots "accum" and "accum_update" (zeros, "<var>/Adadelta" and
"<var>/Adadelta_1", TF's names). Weir has no ResourceApplyAdadelta kernel:
the update is graph code on the slots (reads ordered before the assigns
that depend on them), so it is not one atomic op as TF's."""
from weir.framework import ops
from weir.train import optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        def tensor(value, name):
            return ops.convert_to_tensor(self._call_if_callable(value), name=name)
        self._learning_rate_tensor = tensor(self._learning_rate, "lr")
        self._rho_tensor = tensor(self._rho, "rho")
        self._epsilon_tensor = tensor(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad, var):
        import weir as wr
        dtype = var.dtype.base_dtype
        lr, rho, eps = (self._cast(t, dtype) for t in (self._learning_rate_tensor, self._rho_tensor,
                                                       self._epsilon_tensor))
        accum = self.get_slot(var, "accum")
        accum_update = self.get_slot(var, "accum_update")
        new_accum = accum.assign(rho * accum.read_value() + (1 - rho) * grad * grad)
        update = wr.sqrt(accum_update.read_value() + eps) * wr.rsqrt(new_accum + eps) * grad
        new_accum_update = accum_update.assign(rho * accum_update.read_value() + (1 - rho) * update * update)
        return wr.group(var.assign_sub(lr * update, read_value=False), new_accum_update)
