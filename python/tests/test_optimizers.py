"""Optimizers against numpy implementations of TF1's update formulas (3 steps on
a loss whose gradient depends on the variable), slot naming, global step,
compute/apply_gradients, a custom Python optimizer, and learning-rate
schedules against their formulas."""
import math

import numpy as np
import pytest

import weir as wr
from weir.framework import ops
from weir.train import training_util

C = np.array([0.5, 1.0, 2.0], np.float64)
D = np.array([1.0, -1.0, 0.25], np.float64)
W0 = np.array([1.0, 2.0, -1.0], np.float64)


def f32(x):
    """A Python float hyperparameter as TF1 uses it: a float32 constant, cast
    to the variable's dtype."""
    return float(np.float32(x))


def grad_of(w):
    # loss = sum(c * w^2 + d * w)
    return 2 * C * w + D


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


def run_steps(opt, steps=3, dtype=np.float64, global_step=None):
    w = wr.Variable(W0.astype(dtype), name="w")
    loss = wr.reduce_sum(C.astype(dtype) * w * w + D.astype(dtype) * w)
    train = opt.minimize(loss, global_step=global_step)
    values = []
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
            values.append(sess.run(w))
        extra = {v.op.name: sess.run(v) for v in opt.variables()}
    return w, train, values, extra


def test_gradient_descent(graph):
    _, train, values, _ = run_steps(wr.train.GradientDescentOptimizer(0.1))
    w = W0.copy()
    for got in values:
        w = w - f32(0.1) * grad_of(w)
        np.testing.assert_allclose(got, w, rtol=1e-12)
    assert train.type == "NoOp" and train.name == "GradientDescent"
    assert train in wr.get_collection(wr.GraphKeys.TRAIN_OP)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(graph, nesterov):
    opt = wr.train.MomentumOptimizer(0.1, 0.9, use_nesterov=nesterov)
    w_var, _, values, extra = run_steps(opt)
    w, accum = W0.copy(), np.zeros(3)
    for got in values:
        g = grad_of(w)
        accum = f32(0.9) * accum + g
        lr, mu = f32(0.1), f32(0.9)
        w = w - lr * (g + mu * accum) if nesterov else w - lr * accum
        np.testing.assert_allclose(got, w, rtol=1e-12)
    assert opt.get_slot_names() == ["momentum"]
    assert opt.get_slot(w_var, "momentum").op.name == "w/Momentum"
    np.testing.assert_allclose(extra["w/Momentum"], accum, rtol=1e-12)


def test_adagrad(graph):
    opt = wr.train.AdagradOptimizer(0.5, initial_accumulator_value=0.2)
    w_var, _, values, extra = run_steps(opt)
    w, accum = W0.copy(), np.full(3, 0.2)
    for got in values:
        g = grad_of(w)
        accum = accum + g * g
        w = w - 0.5 * g / np.sqrt(accum)
        np.testing.assert_allclose(got, w, rtol=1e-12)
    assert opt.get_slot(w_var, "accumulator").op.name == "w/Adagrad"


@pytest.mark.parametrize("centered,momentum", [(False, 0.0), (False, 0.5), (True, 0.5)])
def test_rmsprop(graph, centered, momentum):
    opt = wr.train.RMSPropOptimizer(0.01, decay=0.8, momentum=momentum, epsilon=1e-6,
                                    centered=centered)
    w_var, _, values, _ = run_steps(opt)
    w, ms, mom, mg = W0.copy(), np.ones(3), np.zeros(3), np.zeros(3)  # TF1: rms starts at 1
    for got in values:
        g = grad_of(w)
        rho, eps = f32(0.8), f32(1e-6)
        ms = rho * ms + (1 - rho) * g * g
        if centered:
            mg = rho * mg + (1 - rho) * g
            denom = np.sqrt(ms - mg * mg + eps)
        else:
            denom = np.sqrt(ms + eps)
        mom = f32(momentum) * mom + f32(0.01) * g / denom
        w = w - mom
        np.testing.assert_allclose(got, w, rtol=1e-10)
    assert opt.get_slot(w_var, "rms").op.name == "w/RMSProp"
    expected_slots = ["mg", "momentum", "rms"] if centered else ["momentum", "rms"]
    assert opt.get_slot_names() == expected_slots


def test_adam(graph):
    opt = wr.train.AdamOptimizer(0.1, beta1=0.8, beta2=0.9, epsilon=1e-7)
    w_var, _, values, extra = run_steps(opt, dtype=np.float32)
    w, m, v = W0.copy(), np.zeros(3), np.zeros(3)
    for t, got in enumerate(values, start=1):
        g = grad_of(w)
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        lr_t = 0.1 * math.sqrt(1 - 0.9 ** t) / (1 - 0.8 ** t)
        w = w - lr_t * m / (np.sqrt(v) + 1e-7)
        np.testing.assert_allclose(got, w, rtol=1e-5)
    assert opt.get_slot(w_var, "m").op.name == "w/Adam"
    assert opt.get_slot(w_var, "v").op.name == "w/Adam_1"
    assert sorted(extra) == ["beta1_power", "beta2_power", "w/Adam", "w/Adam_1"]
    assert extra["beta1_power"] == pytest.approx(0.8 ** 4, rel=1e-6)
    assert extra["beta2_power"] == pytest.approx(0.9 ** 4, rel=1e-6)
    # slots are global (initialized by global_variables_initializer), not trainable
    assert opt.get_slot(w_var, "m") in wr.global_variables()
    assert opt.get_slot(w_var, "m") not in wr.trainable_variables()


def test_minimize_with_global_step_and_tensor_lr(graph):
    gs = training_util.get_or_create_global_step()
    lr = wr.placeholder(wr.float64, [])
    w = wr.Variable(W0, name="w")
    loss = wr.reduce_sum(C * w * w + D * w)
    train = wr.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)
    callable_lr = wr.train.GradientDescentOptimizer(lambda: 0.5)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        expected = W0.copy()
        for rate in (0.1, 0.2, 0.05):
            sess.run(train, {lr: rate})
            expected = expected - rate * grad_of(expected)  # a float64 placeholder: exact
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-12)
        assert sess.run(gs) == 3
    assert callable_lr._call_if_callable(callable_lr._learning_rate) == 0.5


def test_compute_and_apply_gradients(graph):
    w = wr.Variable(W0, name="w")
    frozen = wr.Variable(np.ones(3), name="frozen")
    loss = wr.reduce_sum(C * w * w + D * w)
    opt = wr.train.GradientDescentOptimizer(0.1)
    gvs = opt.compute_gradients(loss, var_list=[w, frozen])
    assert [v for _, v in gvs] == [w, frozen]
    assert gvs[1][0] is None  # loss does not depend on `frozen`
    clipped = [(g * 0.5, v) for g, v in gvs if g is not None]
    train = opt.apply_gradients(clipped, name="clipped_step")
    assert train.name == "clipped_step"
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), W0 - f32(0.1) * 0.5 * grad_of(W0), rtol=1e-12)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(loss, var_list=[frozen])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])


class SignSGD(wr.train.Optimizer):
    """A user optimizer: var -= lr * sign(grad) + a momentum-like slot."""

    def __init__(self, learning_rate, name="SignSGD"):
        super().__init__(False, name)
        self._lr = learning_rate

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "steps", self._name)

    def _prepare(self):
        self._lr_t = ops.convert_to_tensor(self._lr, name="learning_rate")

    def _apply_dense(self, grad, var):
        steps = self.get_slot(var, "steps")
        lr = wr.cast(self._lr_t, var.dtype.base_dtype)
        update = var.assign_sub(lr * wr.sign(grad))
        count = steps.assign_add(wr.ones_like(grad))
        return wr.group(update, count)


def test_custom_python_optimizer(graph):
    opt = SignSGD(0.25)
    w_var, _, values, extra = run_steps(opt)
    w = W0.copy()
    for got in values:
        w = w - f32(0.25) * np.sign(grad_of(w))
        np.testing.assert_allclose(got, w, rtol=1e-12)
    np.testing.assert_array_equal(extra["w/SignSGD"], [3.0, 3.0, 3.0])


# --- learning-rate schedules ---------------------------------------------------------

def eval_schedule(make, steps):
    step = wr.placeholder(wr.int64, [])
    lr = make(step)
    with wr.Session() as sess:
        return [float(sess.run(lr, {step: s})) for s in steps]


STEPS = [0, 3, 10, 25, 40]


def test_exponential_and_friends(graph):
    def check(fn, formula, **kw):
        got = eval_schedule(lambda s: fn(0.1, s, 10, 0.5, **kw), STEPS)
        np.testing.assert_allclose(got, [formula(s) for s in STEPS], rtol=1e-6)
    check(wr.train.exponential_decay, lambda s: 0.1 * 0.5 ** (s / 10))
    check(wr.train.exponential_decay, lambda s: 0.1 * 0.5 ** (s // 10), staircase=True)
    check(wr.train.natural_exp_decay, lambda s: 0.1 * math.exp(-0.5 * s / 10))
    check(wr.train.inverse_time_decay, lambda s: 0.1 / (1 + 0.5 * (s // 10)), staircase=True)
    with pytest.raises(ValueError, match="global_step is required"):
        wr.train.exponential_decay(0.1, None, 10, 0.5)


def test_polynomial_cosine_piecewise(graph):
    got = eval_schedule(lambda s: wr.train.polynomial_decay(0.1, s, 20, 0.01, power=2.0), STEPS)
    expected = [(0.1 - 0.01) * (1 - min(s, 20) / 20) ** 2 + 0.01 for s in STEPS]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    got = eval_schedule(lambda s: wr.train.polynomial_decay(0.1, s, 20, 0.01, cycle=True),
                        STEPS)
    expected = []
    for s in STEPS:
        steps = 20 * max(1, math.ceil(s / 20))
        expected.append((0.1 - 0.01) * (1 - s / steps) + 0.01)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    got = eval_schedule(lambda s: wr.train.cosine_decay(0.1, s, 30, alpha=0.1), STEPS)
    expected = [0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 30) / 30)) + 0.1)
                for s in STEPS]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    got = eval_schedule(lambda s: wr.train.piecewise_constant(s, [3, 20], [1.0, 0.5, 0.1]),
                        STEPS)
    np.testing.assert_allclose(got, [1.0, 1.0, 0.5, 0.1, 0.1], rtol=1e-7)
    with pytest.raises(ValueError):
        wr.train.piecewise_constant(0, [1, 2], [1.0])
