"""AdadeltaOptimizer (ResourceApplyAdadelta) against numpy's TF1 update formula over three
steps, and its slots' names; TensorFlow's own ApplyAdadelta graphs run in
tests/tf_compat/test_tf_ref_variables.py."""
import numpy as np

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
