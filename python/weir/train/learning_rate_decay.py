"""Learning-rate schedules (TF1's tf.train.*_decay), as graph code of the global step.

Each returns a scalar Tensor of the learning rate's dtype (float32 for a
Python float) computed from `global_step` (cast to that dtype):

    exponential_decay    lr * decay_rate ^ (step / decay_steps)
    natural_exp_decay    lr * exp(-decay_rate * step / decay_steps)
    inverse_time_decay   lr / (1 + decay_rate * step / decay_steps)
    (staircase=True floors step / decay_steps in these three)
    polynomial_decay     (lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end
                         (cycle=True: decay_steps *= ceil(step / decay_steps), at least 1)
    cosine_decay         lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
                         decay_steps)) + alpha)
    piecewise_constant   values[i] for boundaries[i-1] < x <= boundaries[i]
"""
import math

from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["exponential_decay", "piecewise_constant", "polynomial_decay", "natural_exp_decay",
           "inverse_time_decay", "cosine_decay"]


def _cast(x, dtype):
    x = ops.convert_to_tensor(x)
    if x.dtype.base_dtype == dtype:
        return x
    return apply_op("Cast", None, x=x, DstT=dtype)


def _const(value, dtype):
    return ops.convert_to_tensor(value, dtype=dtype)


def _binary(op, x, y, name=None):
    return apply_op(op, name, x=x, y=y)


def _unary(op, x, name=None):
    return apply_op(op, name, x=x)


def _require_step(global_step, what):
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)


def _step_fraction(learning_rate, global_step, decay_steps, staircase):
    lr = ops.convert_to_tensor(learning_rate, name="learning_rate")
    dtype = lr.dtype.base_dtype
    step = _cast(global_step, dtype)
    p = _binary("RealDiv", step, _cast(decay_steps, dtype))
    if staircase:
        p = _unary("Floor", p)
    return lr, dtype, p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    _require_step(global_step, "exponential_decay")
    with ops.name_scope(name, "ExponentialDecay",
                        [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, dtype, p = _step_fraction(learning_rate, global_step, decay_steps, staircase)
        factor = _binary("Pow", _cast(decay_rate, dtype), p)
        return _binary("Mul", lr, factor, name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    _require_step(global_step, "natural_exp_decay")
    with ops.name_scope(name, "NaturalExpDecay",
                        [learning_rate, global_step, decay_rate]) as scope:
        lr, dtype, p = _step_fraction(learning_rate, global_step, decay_steps, staircase)
        exponent = _unary("Neg", _binary("Mul", _cast(decay_rate, dtype), p))
        return _binary("Mul", lr, _unary("Exp", exponent), name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    _require_step(global_step, "inverse_time_decay")
    with ops.name_scope(name, "InverseTimeDecay",
                        [learning_rate, global_step, decay_rate]) as scope:
        lr, dtype, p = _step_fraction(learning_rate, global_step, decay_steps, staircase)
        denom = _binary("AddV2", _const(1.0, dtype), _binary("Mul", _cast(decay_rate, dtype), p))
        return _binary("RealDiv", lr, denom, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    _require_step(global_step, "polynomial_decay")
    with ops.name_scope(name, "PolynomialDecay",
                        [learning_rate, global_step, decay_steps, end_learning_rate,
                         power]) as scope:
        lr = ops.convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype.base_dtype
        end = _cast(end_learning_rate, dtype)
        step = _cast(global_step, dtype)
        steps = _cast(decay_steps, dtype)
        if cycle:
            # ceil(step / steps), but 1 at step 0 (so the first cycle decays).
            ratio = _unary("Ceil", _binary("RealDiv", step, steps))
            is_zero = _binary("Equal", step, _const(0.0, dtype))
            multiplier = apply_op("SelectV2", None, condition=is_zero, t=_const(1.0, dtype),
                                  e=ratio)
            steps = _binary("Mul", steps, multiplier)
        else:
            step = _binary("Minimum", step, steps)
        p = _binary("RealDiv", step, steps)
        remaining = _binary("Pow", _binary("Sub", _const(1.0, dtype), p), _cast(power, dtype))
        return _binary("AddV2", _binary("Mul", _binary("Sub", lr, end), remaining), end,
                       name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    _require_step(global_step, "cosine_decay")
    with ops.name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr = ops.convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype.base_dtype
        steps = _cast(decay_steps, dtype)
        step = _binary("Minimum", _cast(global_step, dtype), steps)
        done = _binary("RealDiv", step, steps)
        cos = _unary("Cos", _binary("Mul", _const(math.pi, dtype), done))
        cosine = _binary("Mul", _const(0.5, dtype), _binary("AddV2", _const(1.0, dtype), cos))
        alpha = _cast(alpha, dtype)
        decayed = _binary("AddV2", _binary("Mul", _binary("Sub", _const(1.0, dtype), alpha),
                                           cosine), alpha)
        return _binary("Mul", lr, decayed, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <=
    boundaries[i], values[-1] after the last boundary."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with ops.name_scope(name, "PiecewiseConstant", [x, boundaries, values]) as scope:
        x = ops.convert_to_tensor(x)
        bounds = [_cast(b, x.dtype.base_dtype) for b in boundaries]
        vals = [ops.convert_to_tensor(v) for v in values]
        dtype = vals[0].dtype.base_dtype
        for v in vals[1:]:
            if v.dtype.base_dtype != dtype:
                raise ValueError("Values must have elements all with the same dtype (%s vs %s)."
                                 % (dtype.name, v.dtype.base_dtype.name))
        result = vals[-1]
        # From the last interval back: the first boundary x is below wins.
        for i in range(len(bounds) - 1, -1, -1):
            below = _binary("LessEqual", x, bounds[i])
            result = apply_op("SelectV2", scope if i == 0 else None, condition=below,
                              t=vals[i], e=result)
        if not bounds:
            result = apply_op("Identity", scope, input=result)
        return result
