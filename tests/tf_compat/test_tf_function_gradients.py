"""wr.gradients through TensorFlow 2.21's function calls: a tf.compat.v1
graph calls tf.functions holding tf.cond and tf.while_loop (If, StatelessIf,
StatelessWhile inside PartitionedCall and StatefulPartitionedCall), one reading a resource variable, one
with a trip count set by the data and one by a fed count. TensorFlow's
forward graph is imported into Weir, which must give tf.gradients' values
on the same graph (computed by TensorFlow in the same script)."""
import numpy as np
import pytest

import weir as wr

GRADIENTS = '''
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [3], name="x")
    n = v1.placeholder(tf.int32, [], name="n")
    v = v1.get_variable("v", initializer=np.array([0.5, -1.0, 2.0], np.float32),
                        use_resource=True)

    @tf.function
    def branchy(a):
        return tf.cond(tf.reduce_sum(a) > 0, lambda: a * a * v, lambda: tf.sin(a) - v)

    @tf.function
    def counted(a, k):
        def body(i, acc):
            acc = tf.cond(tf.reduce_sum(acc) < 5.0, lambda: acc * a + 0.1,
                          lambda: acc - tf.sin(a))
            return i + 1, acc
        return tf.while_loop(lambda i, acc: i < k, body, [tf.constant(0), tf.ones_like(a)])[1]

    @tf.function
    def until(a):
        return tf.while_loop(lambda acc: tf.reduce_sum(acc) < 20.0,
                             lambda acc: acc * (1.0 + tf.abs(a)), [tf.ones_like(a)])[0]

    y1 = tf.identity(branchy(x), name="y1")
    y2 = counted(x, n)
    y3 = until(x)
    loss = tf.add(tf.reduce_sum(y1 * 1.5) + tf.reduce_sum(y2), tf.reduce_sum(y3 * y3), name="loss")
    forward = g.as_graph_def()
    ops = sorted(set(node.op for node in forward.node))
    for f in forward.library.function:
        ops += [node.op for node in f.node_def]
    grads = tf.gradients(loss, [x, v.handle])
    grad_y2 = tf.gradients(y2, x)
    feeds = [(np.array([0.3, 0.8, -0.2], np.float32), 3),
             (np.array([-0.9, 0.4, -0.7], np.float32), 5),
             (np.array([0.05, 0.1, 0.02], np.float32), 0)]
    results = []
    with v1.Session(graph=g) as s:
        s.run(v.initializer)
        for xv, nv in feeds:
            results.append(s.run([loss, grads[0], grads[1], grad_y2[0]], {x: xv, n: nv}))
save_graph(forward, "forward")
save_arrays("grads", names=np.array([loss.name, y2.name, v.initializer.name]),
            ops=np.array(sorted(set(ops))),
            xs=np.stack([f[0] for f in feeds]), ns=np.array([f[1] for f in feeds], np.int32),
            **{f"r{i}_{k}": value for i, r in enumerate(results) for k, value in enumerate(r)})
'''


def test_gradients_through_tf_functions_match_tensorflow(run_tf):
    out = run_tf(GRADIENTS, "function_gradients")
    data = np.load(out / "grads.npz")
    ops = set(str(op) for op in data["ops"])
    assert {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf",
            "StatelessWhile"} <= ops, ops
    loss_name, y2_name, init = (str(s) for s in data["names"])
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "forward.pb").read_bytes(), name="")
        x = graph.get_tensor_by_name("x:0")
        handle = graph.get_tensor_by_name("v:0")
        loss = graph.get_tensor_by_name(loss_name)
        y2 = graph.get_tensor_by_name(y2_name)
        calls = [op for op in graph.get_operations()
                 if op.type in ("PartitionedCall", "StatefulPartitionedCall")]
        assert len(calls) == 3
        grads = wr.gradients(loss, [x, handle])
        (grad_y2,) = wr.gradients(y2, x)
        # The calls were expanded in place: their Operations follow the
        # nodes that keep their names and outputs.
        assert all(op.type == "IdentityN" for op in calls)
        assert graph.get_operation_by_name(calls[0].name) is calls[0]
        assert y2.op.type == "IdentityN"
        with wr.Session(graph=graph) as sess:
            sess.run(init)
            for i, (xv, nv) in enumerate(zip(data["xs"], data["ns"])):
                got = sess.run([loss, grads[0], grads[1], grad_y2], {x: xv, "n:0": nv})
                for k, value in enumerate(got):
                    np.testing.assert_allclose(value, data[f"r{i}_{k}"], rtol=2e-5, atol=1e-5,
                                               err_msg=f"feed {i}, value {k}")
    # A session that already holds the calls cannot take their expansion:
    # a clear error, not a duplicate-node failure or a stale result.
    again = wr.Graph()
    with again.as_default():
        wr.import_graph_def((out / "forward.pb").read_bytes(), name="")
        with wr.Session(graph=again) as sess:
            sess.run(init)
            xv, nv = data["xs"][0], data["ns"][0]
            np.testing.assert_allclose(sess.run(loss_name, {"x:0": xv, "n:0": nv}),
                                       data["r0_0"], rtol=2e-5)
            (late,) = wr.gradients(again.get_tensor_by_name(loss_name),
                                   [again.get_tensor_by_name("x:0")])
            with pytest.raises(wr.errors.FailedPreconditionError, match="expanded in place"):
                sess.run(late, {"x:0": xv, "n:0": nv})
        with wr.Session(graph=again) as fresh:
            fresh.run(init)
            np.testing.assert_allclose(fresh.run(late, {"x:0": xv, "n:0": nv}), data["r0_1"],
                                       rtol=2e-5, atol=1e-5)
