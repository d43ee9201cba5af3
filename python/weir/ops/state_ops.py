"""State updates as functions (TF1's tf.assign, tf.assign_add, tf.scatter_update...).

Weir has resource variables only, so `ref` must be a `wr.Variable` (TF1's ref
tensors do not exist); anything else is a TypeError naming what was given.
Each returns what the Variable method returns: the value read after the
update (a Tensor), whose `.op` runs the update.
"""
from weir.framework import ops
from weir.ops import variables

__all__ = ["assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub",
           "scatter_mul", "scatter_div", "scatter_min", "scatter_max", "scatter_nd_update",
           "scatter_nd_add", "scatter_nd_sub", "count_up_to"]


def _check(ref, what):
    if not isinstance(ref, variables.Variable):
        raise TypeError("%s needs a wr.Variable (weir has resource variables only, no ref "
                        "tensors); got %r" % (what, ref))


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    _check(ref, "assign")
    return ref.assign(value, use_locking=use_locking, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    _check(ref, "assign_add")
    return ref.assign_add(value, use_locking=use_locking, name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    _check(ref, "assign_sub")
    return ref.assign_sub(value, use_locking=use_locking, name=name)


class _Rows:
    def __init__(self, indices, values):
        self.indices = indices
        self.values = values


def _scatter(method, ref, indices, updates, name):
    _check(ref, method)
    op = getattr(ref, method)(_Rows(indices, updates), name=name)
    # TF1 returns the updated ref; here: the value read after the update.
    with ops.control_dependencies([op]):
        return ref.value()


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    return _scatter("scatter_update", ref, indices, updates, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    return _scatter("scatter_add", ref, indices, updates, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    return _scatter("scatter_sub", ref, indices, updates, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    return _scatter("scatter_mul", ref, indices, updates, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    return _scatter("scatter_div", ref, indices, updates, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    return _scatter("scatter_min", ref, indices, updates, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    return _scatter("scatter_max", ref, indices, updates, name)


def _scatter_nd(method, ref, indices, updates, name):
    _check(ref, method)
    op = getattr(ref, method)(indices, updates, name=name)
    with ops.control_dependencies([op]):
        return ref.value()


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    return _scatter_nd("scatter_nd_update", ref, indices, updates, name)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    return _scatter_nd("scatter_nd_add", ref, indices, updates, name)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    return _scatter_nd("scatter_nd_sub", ref, indices, updates, name)


def count_up_to(ref, limit, name=None):
    """Increments the int variable and gives its old value; OutOfRangeError
    once the value has reached `limit`."""
    _check(ref, "count_up_to")
    return ref.count_up_to(limit)
