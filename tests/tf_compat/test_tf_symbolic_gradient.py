"""Gradients of functions as TensorFlow 2.21 exports them: tf.compat.v1
graphs calling functions made with `function.Defun` (called by name), one
of them with a gradient function (`grad_func`: the library's GradientDef),
one nested in another. tf.gradients of such calls writes SymbolicGradient
nodes, which Weir expands when it compiles the step: into the function's
differentiated body, or into a call of the registered gradient function.
Weir must give TensorFlow's values for TensorFlow's own gradient graph, and
for wr.gradients of the forward graph (which must use the registered
gradient function too)."""
import numpy as np
import pytest

import weir as wr

DEFUN = '''
from tensorflow.python.framework import function

g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [3], name="x")
    w = v1.placeholder(tf.float32, [3], name="w")

    @function.Defun(tf.float32, tf.float32)
    def two(a, b):
        return a * tf.sin(b) + a * a, tf.exp(b) * a

    @function.Defun(tf.float32, tf.float32)
    def custom_grad(a, dy):
        # Not the true gradient of a * a (2 a dy): Weir must call this one.
        return dy * 7.0 + a

    @function.Defun(tf.float32, grad_func=custom_grad)
    def custom(a):
        return a * a

    @function.Defun(tf.float32)
    def nested(a):
        p, q = two(a, a)
        return p * custom(q)

    y1, y2 = two(x, w)
    y3 = custom(x)
    y4 = nested(w)
    loss = tf.add(tf.reduce_sum(y1 * y2) + tf.reduce_sum(y3), tf.reduce_sum(y4 * x), name="loss")
    forward = g.as_graph_def()
    grads = tf.gradients(loss, [x, w])
    full = g.as_graph_def()
    symgrads = sorted(n.attr["f"].func.name for n in full.node if n.op == "SymbolicGradient")
    registered = [(d.function_name, d.gradient_func) for d in full.library.gradient]
    feeds = [(np.array([0.3, -0.8, 1.2], np.float32), np.array([0.5, 0.1, -0.4], np.float32)),
             (np.array([-1.1, 0.25, 0.6], np.float32), np.array([0.9, -0.7, 0.2], np.float32))]
    with v1.Session(graph=g) as s:
        results = [s.run([loss] + grads, {x: xv, w: wv}) for xv, wv in feeds]
save_graph(forward, "forward")
save_graph(full, "full")
save_arrays("defun", names=np.array([loss.name] + [t.name for t in grads]),
            symgrads=np.array(symgrads), registered=np.array(registered),
            xs=np.stack([f[0] for f in feeds]), ws=np.stack([f[1] for f in feeds]),
            **{f"r{i}_{k}": value for i, r in enumerate(results) for k, value in enumerate(r)})
'''


@pytest.fixture(scope="module")
def defun(run_tf):
    out = run_tf(DEFUN, "symbolic_gradient")
    return out, np.load(out / "defun.npz")


def _check(sess, fetches, data):
    for i, (xv, wv) in enumerate(zip(data["xs"], data["ws"])):
        got = sess.run(fetches, {"x:0": xv, "w:0": wv})
        for k, value in enumerate(got):
            np.testing.assert_allclose(value, data[f"r{i}_{k}"], rtol=2e-5, atol=1e-5,
                                       err_msg=f"feed {i}, value {k}")


def test_tensorflow_gradient_graph_with_symbolic_gradient_nodes(defun):
    out, data = defun
    # TensorFlow differentiated the Defun calls with SymbolicGradient, one of
    # them of a function whose library entry names a gradient function.
    symgrads = [str(s) for s in data["symgrads"]]
    registered = dict((str(f), str(g)) for f, g in data["registered"])
    assert len(symgrads) == 3, symgrads
    assert any(name in registered for name in symgrads), (symgrads, registered)
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "full.pb").read_bytes(), name="")
        assert sum(op.type == "SymbolicGradient" for op in graph.get_operations()) == 3
        with wr.Session(graph=graph) as sess:
            _check(sess, [str(n) for n in data["names"]], data)


def test_wr_gradients_of_the_forward_graph_use_the_registered_gradient(defun):
    out, data = defun
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "forward.pb").read_bytes(), name="")
        loss = graph.get_tensor_by_name(str(data["names"][0]))
        grads = wr.gradients(loss, [graph.get_tensor_by_name("x:0"),
                                    graph.get_tensor_by_name("w:0")])
        with wr.Session(graph=graph) as sess:
            _check(sess, [loss] + grads, data)


def test_symbolic_gradient_of_a_missing_function_names_it(defun):
    out, _ = defun
    from weir.core import protos
    graph_def = protos.GraphDef.FromString((out / "full.pb").read_bytes())
    for node in graph_def.node:
        if node.op == "SymbolicGradient":
            node.attr["f"].func.name = "no_such_function"
            name = node.name
            break
    graph = wr.Graph()
    with graph.as_default():
        with pytest.raises(wr.errors.InvalidArgumentError, match="no_such_function"):
            wr.import_graph_def(graph_def.SerializeToString(), name="")
            with wr.Session(graph=graph) as sess:
                sess.run(name + ":0", {"x:0": np.ones(3, np.float32),
                                       "w:0": np.ones(3, np.float32)})


IN_LOOP = '''
from tensorflow.python.framework import function

v1.disable_control_flow_v2()
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [3], name="x")

    @function.Defun(tf.float32, tf.float32)
    def step(a, b):
        return a * tf.sin(b) + b * b

    out = tf.while_loop(lambda i, acc: i < 4,
                        lambda i, acc: (i + 1, tf.reshape(step(acc, x), [3])),
                        [tf.constant(0), x])
    loss = tf.reduce_sum(out[1] * out[1], name="loss")
    (grad,) = tf.gradients(loss, [x])
    graph_def = g.as_graph_def()
    symgrads = [n.name for n in graph_def.node if n.op == "SymbolicGradient"]
    xs = [np.array([0.3, -0.8, 1.2], np.float32), np.array([-0.4, 0.6, 0.1], np.float32)]
    with v1.Session(graph=g) as s:
        results = [s.run([loss, grad], {x: xv}) for xv in xs]
save_graph(graph_def, "in_loop")
save_arrays("in_loop", names=np.array([loss.name, grad.name]), symgrads=np.array(symgrads),
            xs=np.stack(xs), **{f"r{i}_{k}": v for i, r in enumerate(results) for k, v in enumerate(r)})
'''


def test_symbolic_gradient_inside_a_while_loops_gradient(run_tf):
    # TensorFlow puts the SymbolicGradient of a call in a v1 loop's body into
    # the backward loop's frame: Weir expands it there.
    out = run_tf(IN_LOOP, "symbolic_gradient_in_loop")
    data = np.load(out / "in_loop.npz")
    assert len(data["symgrads"]) == 1 and "while" in str(data["symgrads"][0])
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "in_loop.pb").read_bytes(), name="")
        with wr.Session(graph=graph) as sess:
            for i, xv in enumerate(data["xs"]):
                got = sess.run([str(n) for n in data["names"]], {"x:0": xv})
                for k, value in enumerate(got):
                    np.testing.assert_allclose(value, data[f"r{i}_{k}"], rtol=2e-5, atol=1e-5,
                                               err_msg=f"feed {i}, value {k}")
