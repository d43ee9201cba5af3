"""AdadeltaOptimizer (ResourceApplyAdadelta), FtrlOptimizer (ResourceApplyFtrl[V2]) and the
proximal optimizers against numpy's TF1 update formulas over three steps, and their slots'
names; TensorFlow's own ApplyAdadelta, ApplyFtrl and ApplyProximal* graphs run in
tests/tf_compat/test_tf_ref_variables.py."""
import numpy as np
import pytest

import weir as wr
from weir.framework import ops

C = np.array([0.5, 1.0, 2.0])
D = np.array([1.0, -1.0, 0.25])
W0 = np.array([1.0, 2.0, -1.0])


def f32(x):
    return float(np.float32(x))  # a Python float hyperparameter is a float32 constant in TF1


def test_adadelta_matches_the_formula():
    with ops.Graph().as_default():
        w_var = wr.Variable(W0, name="w")
        loss = wr.reduce_sum(C * w_var * w_var + D * w_var)
        opt = wr.train.AdadeltaOptimizer(learning_rate=0.5, rho=0.9, epsilon=1e-6)
        train = opt.minimize(loss)
        assert opt.get_slot_names() == ["accum", "accum_update"]
        assert opt.get_slot(w_var, "accum").op.name == "w/Adadelta"
        assert opt.get_slot(w_var, "accum_update").op.name == "w/Adadelta_1"
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            w, accum, accum_update = W0.copy(), np.zeros(3), np.zeros(3)
            lr, rho, eps = f32(0.5), f32(0.9), f32(1e-6)
            for _ in range(3):
                sess.run(train)
                g = 2 * C * w + D
                accum = rho * accum + (1 - rho) * g * g
                update = np.sqrt(accum_update + eps) / np.sqrt(accum + eps) * g
                accum_update = rho * accum_update + (1 - rho) * update * update
                w = w - lr * update
                np.testing.assert_allclose(sess.run(w_var), w, rtol=1e-12)
            np.testing.assert_allclose(sess.run(opt.get_slot(w_var, "accum_update")),
                                       accum_update, rtol=1e-12)


@pytest.mark.parametrize("shrinkage,power", [(0.0, -0.5), (0.05, -0.6)])
def test_ftrl_matches_the_formula(shrinkage, power):
    with ops.Graph().as_default():
        w_var = wr.Variable(W0, name="w")
        loss = wr.reduce_sum(C * w_var * w_var + D * w_var)
        opt = wr.train.FtrlOptimizer(0.5, learning_rate_power=power, initial_accumulator_value=0.2,
                                     l1_regularization_strength=0.01,
                                     l2_regularization_strength=0.02,
                                     l2_shrinkage_regularization_strength=shrinkage)
        train = opt.minimize(loss)
        applies = {op.type for op in wr.get_default_graph().get_operations()}
        assert ("ResourceApplyFtrlV2" if shrinkage else "ResourceApplyFtrl") in applies
        assert opt.get_slot(w_var, "accum").op.name == "w/Ftrl"
        assert opt.get_slot(w_var, "linear").op.name == "w/Ftrl_1"
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            w, accum, linear = W0.copy(), np.full(3, 0.2), np.zeros(3)
            lr, l1, l2, p, s = f32(0.5), f32(0.01), f32(0.02), f32(power), f32(shrinkage)
            for _ in range(3):
                sess.run(train)
                g = 2 * C * w + D
                accum_new = accum + g * g
                linear = linear + g + 2 * s * w - (accum_new ** -p - accum ** -p) / lr * w
                quadratic = 1.0 / (accum_new ** p * lr) + 2 * l2
                w = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
                accum = accum_new
                np.testing.assert_allclose(sess.run(w_var), w, rtol=1e-12)
            np.testing.assert_allclose(sess.run(opt.get_slot(w_var, "linear")), linear,
                                       rtol=1e-12)


def test_ftrl_refuses_out_of_range_settings():
    with pytest.raises(ValueError, match="learning_rate_power 0.5 is out of range"):
        wr.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength -1"):
        wr.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)


@pytest.mark.parametrize("adagrad", [False, True])
def test_proximal_optimizers_match_the_formula(adagrad):
    with ops.Graph().as_default():
        w_var = wr.Variable(W0, name="w")
        loss = wr.reduce_sum(C * w_var * w_var + D * w_var)
        if adagrad:
            opt = wr.train.ProximalAdagradOptimizer(0.5, initial_accumulator_value=0.2,
                                                    l1_regularization_strength=0.3,
                                                    l2_regularization_strength=0.1)
        else:
            opt = wr.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.3,
                                                            l2_regularization_strength=0.1)
        train = opt.minimize(loss)
        if adagrad:
            assert opt.get_slot(w_var, "accumulator").op.name == "w/ProximalAdagrad"
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            w, accum = W0.copy(), np.full(3, 0.2)
            lr, l1, l2 = f32(0.5 if adagrad else 0.1), f32(0.3), f32(0.1)
            for _ in range(3):
                sess.run(train)
                g = 2 * C * w + D
                accum = accum + g * g
                rate = lr / np.sqrt(accum) if adagrad else lr
                prox = w - rate * g
                w = np.sign(prox) * np.maximum(np.abs(prox) - rate * l1, 0) / (1 + rate * l2)
                np.testing.assert_allclose(sess.run(w_var), w, rtol=1e-12)
