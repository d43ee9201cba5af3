"""AdadeltaOptimizer (TF1): accum = rho * accum + (1 - rho) * grad^2;
update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad;
accum_update = rho * accum_update + (1 - rho) * update^2; var -= lr * update
(ResourceApplyAdadelta). Slots as TF1 makes them: "accum" and "accum_update"
(zeros, "<var>/Adadelta", "<var>/Adadelta_1")."""
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.train import optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(optimizer.Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        def tensor(value, name):
            return ops.convert_to_tensor(self._call_if_callable(value), name=name)
        self._lr_t = tensor(self._lr, "lr")
        self._rho_t = tensor(self._rho, "rho")
        self._epsilon_t = tensor(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)

    def _apply(self, grad, var, indices=None):
        sparse = {} if indices is None else {"indices": indices}
        dtype = var.dtype.base_dtype
        return apply_op("ResourceApplyAdadelta" if indices is None else
                        "ResourceSparseApplyAdadelta", None, var=var.handle,
                        accum=self.get_slot(var, "accum").handle,
                        accum_update=self.get_slot(var, "accum_update").handle,
                        lr=self._cast(self._lr_t, dtype), rho=self._cast(self._rho_t, dtype),
                        epsilon=self._cast(self._epsilon_t, dtype), grad=grad,
                        use_locking=self._use_locking, **sparse)
