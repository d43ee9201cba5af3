"""tf.make_template and tf.confusion_matrix (TF1), written over weir's
variable scopes and ops."""
from weir.framework import dtypes
from weir.framework import ops

__all__ = ["make_template", "confusion_matrix"]


class Template(object):
    """A function whose variables are made on its first call (under a
    variable scope of its own) and reused by every later call."""

    def __init__(self, name, func, unique_name=None, create_scope_now=False, kwargs=None):
        self._name = name
        self._func = func
        self._kwargs = kwargs or {}
        self._unique_name = unique_name
        self._variable_scope = None
        if create_scope_now:
            self._variable_scope = self._make_scope()

    def _make_scope(self):
        from weir.ops import variable_scope as vs
        with vs.variable_scope(self._unique_name, default_name=self._name) as scope:
            return scope

    def __call__(self, *args, **kwargs):
        from weir.ops import variable_scope as vs
        call_kwargs = dict(self._kwargs, **kwargs)
        if self._variable_scope is None:
            with vs.variable_scope(self._unique_name, default_name=self._name) as scope:
                self._variable_scope = scope
                result = self._func(*args, **call_kwargs)
            self._created = True
            return result
        if getattr(self, "_created", False):
            with vs.variable_scope(self._variable_scope, reuse=True):
                return self._func(*args, **call_kwargs)
        with vs.variable_scope(self._variable_scope):  # scope made at construction, first call
            result = self._func(*args, **call_kwargs)
        self._created = True
        return result

    @property
    def name(self):
        return self._name

    @property
    def variable_scope(self):
        return self._variable_scope

    @property
    def variable_scope_name(self):
        return self._variable_scope.name if self._variable_scope is not None else None

    def _scoped(self, key):
        if self._variable_scope is None:
            return []
        return ops.get_collection(key, scope=self._variable_scope.name + "/")

    @property
    def variables(self):
        return self._scoped(ops.GraphKeys.GLOBAL_VARIABLES) + self._scoped(ops.GraphKeys.LOCAL_VARIABLES)

    @property
    def global_variables(self):
        return self._scoped(ops.GraphKeys.GLOBAL_VARIABLES)

    @property
    def trainable_variables(self):
        return self._scoped(ops.GraphKeys.TRAINABLE_VARIABLES)

    @property
    def local_variables(self):
        return self._scoped(ops.GraphKeys.LOCAL_VARIABLES)


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None,
                  **kwargs):
    """`func_` wrapped so that every call shares the variables of the first
    (get_variable under the template's scope); kwargs are bound to it."""
    if custom_getter_ is not None:
        raise NotImplementedError("make_template(custom_getter_=...) is not supported by weir")
    if not callable(func_):
        raise ValueError("func_ must be callable, got %r" % (func_,))
    return Template(name_, func_, unique_name=unique_name_, create_scope_now=create_scope_now_,
                    kwargs=kwargs)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=dtypes.int32,
                     name=None):
    """[num_classes, num_classes]: entry (i, j) counts (or sums `weights`
    of) the examples with label i predicted j; num_classes defaults to one
    more than the largest label or prediction."""
    import weir as wr
    with ops.name_scope(name, "confusion_matrix", [predictions, labels, num_classes, weights]):
        labels = wr.cast(wr.reshape(labels, [-1]), wr.int64)
        predictions = wr.cast(wr.reshape(predictions, [-1]), wr.int64)
        checks = [wr.assert_non_negative(labels, message="`labels` contains negative values"),
                  wr.assert_non_negative(predictions, message="`predictions` contains negative values")]
        if num_classes is None:
            num_classes = wr.maximum(wr.reduce_max(labels), wr.reduce_max(predictions)) + 1
        else:
            num_classes = wr.cast(num_classes, wr.int64)
            checks += [wr.assert_less(labels, num_classes, message="`labels` out of bound"),
                       wr.assert_less(predictions, num_classes, message="`predictions` out of bound")]
        with ops.control_dependencies(checks):
            cells = labels * num_classes + predictions
        values = wr.ones_like(predictions, dtype) if weights is None else wr.cast(
            wr.reshape(weights, [-1]), dtype)
        counts = wr.unsorted_segment_sum(values, cells, num_classes * num_classes)
        return wr.reshape(counts, wr.stack([num_classes, num_classes]))
