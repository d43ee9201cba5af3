#!/usr/bin/env python3
"""First steps with Weir from Python, cell by cell as in a notebook.

    PYTHONPATH=build/py/python python3 examples/python/first_steps.py

1. build a graph and run it; 2. feed placeholders, fetch nested structures; 3. gradients, checked
against finite differences; 4. a custom optimizer written in Python (a subclass of
wr.train.Optimizer) fitting a linear regression, checked against numpy's least squares.
Each cell prints what it computed; the script exits non-zero if a check fails.
"""
import numpy as np

import weir as wr

# %% 1. A graph is built once, then run: nothing is computed while it is built.
a = wr.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
b = wr.constant([[1.0], [1.0]], name="b")
c = wr.matmul(a, b) + 1.0          # Python operators build ops too
print(c)                           # a symbolic Tensor: its name, shape and dtype, no value
with wr.Session() as sess:
    print("a @ b + 1 =", sess.run(c).ravel())              # [4. 8.]
    assert np.allclose(sess.run(c), [[4.0], [8.0]])

# %% 2. Placeholders are fed per run; fetches may be nested lists, tuples and dicts.
x = wr.placeholder(wr.float32, [None, 3], name="x")
total = wr.reduce_sum(x, axis=1)
biggest = wr.reduce_max(x)
with wr.Session() as sess:
    batch = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = sess.run({"total": total, "pair": (biggest, x[:, 1:])}, feed_dict={x: batch})
    print("nested fetch:", out)
    assert np.allclose(out["total"], batch.sum(axis=1)) and out["pair"][0] == 5.0
    # make_callable compiles the feed/fetch signature once; calls are then cheap.
    total_of = sess.make_callable(total, feed_list=[x])
    assert np.allclose(total_of(batch), [3.0, 12.0])

# %% 3. Gradients: wr.gradients adds the backward graph; compare with finite differences.
v = wr.placeholder(wr.float64, [4], name="v")
f = wr.reduce_sum(wr.sin(v) * v ** 2)
df_dv, = wr.gradients(f, [v])
with wr.Session() as sess:
    point = np.array([0.1, -0.7, 1.3, 2.0])
    analytic = sess.run(df_dv, {v: point})
    eps = 1e-6
    numeric = np.array([(sess.run(f, {v: point + eps * e}) - sess.run(f, {v: point - eps * e})) / (2 * eps)
                        for e in np.eye(4)])
    print("gradient:", analytic, "finite differences:", numeric)
    assert np.allclose(analytic, numeric, rtol=1e-6, atol=1e-8)
    assert np.allclose(analytic, np.cos(point) * point ** 2 + 2 * point * np.sin(point))


# %% 4. A custom optimizer in Python: heavy-ball momentum, v <- mu v + g; w <- w - lr v.
class HeavyBall(wr.train.Optimizer):
    """Momentum written with the Optimizer hooks: one slot per variable, one update per gradient."""

    def __init__(self, learning_rate, momentum=0.9, use_locking=False, name="HeavyBall"):
        super().__init__(use_locking, name)
        self._lr, self._mu = learning_rate, momentum

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "velocity", self._name)

    def _resource_apply_dense(self, grad, var):
        velocity = self.get_slot(var, "velocity")
        new_velocity = velocity.assign(self._mu * velocity + grad)
        return var.assign_sub(self._lr * new_velocity)


rng = np.random.RandomState(0)
features = rng.randn(64, 3).astype(np.float32)
targets = features @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.3
w = wr.Variable(np.zeros([3, 1], np.float32), name="w")
bias = wr.Variable(0.0, name="bias")
prediction = wr.matmul(features, w) + bias
loss = wr.reduce_mean(wr.square(prediction - targets))
step = HeavyBall(learning_rate=0.05).minimize(loss)
with wr.Session() as sess:
    sess.run(wr.global_variables_initializer())
    first = sess.run(loss)
    for _ in range(300):
        sess.run(step)
    final, learned_w, learned_b = sess.run([loss, w, bias])
    print(f"loss {first:.4f} -> {final:.2e}; w = {learned_w.ravel()}, b = {learned_b:.4f}")
    design = np.hstack([features, np.ones([64, 1], np.float32)])
    exact = np.linalg.lstsq(design, targets, rcond=None)[0].ravel()
    assert np.allclose(np.append(learned_w.ravel(), learned_b), exact, atol=1e-3), exact
print("all first steps checked")
