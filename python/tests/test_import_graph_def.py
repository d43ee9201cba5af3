"""import_graph_def of graphs TensorFlow 2.21 (from PyPI) built and ran:
binary and text GraphDefs, input_map, return_elements, weir's own
as_graph_def round trip. TensorFlow runs in /opt/weir-peers (a subprocess
that writes the .pb / .pbtxt files and TF's outputs as .npy)."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr
from weir.core import protos

from peers import PEERS_PYTHON  # noqa: E402

TF_SCRIPT = textwrap.dedent(r'''
    import os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1
    out = sys.argv[1]
    rng = np.random.RandomState(0)

    def save(g, name):
        gd = g.as_graph_def()
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(gd.SerializeToString())
        with open(os.path.join(out, name + ".pbtxt"), "w") as f:
            f.write(str(gd))

    # An MLP: placeholder -> matmul/bias/relu -> matmul/add -> softmax.
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        w1 = tf.constant(rng.randn(4, 8).astype(np.float32), name="w1")
        b1 = tf.constant(rng.randn(8).astype(np.float32), name="b1")
        h = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
        w2 = tf.constant(rng.randn(8, 3).astype(np.float32), name="w2")
        logits = tf.add(tf.matmul(h, w2), 0.5, name="logits")
        tf.nn.softmax(logits, name="probs")
        xv = rng.randn(5, 4).astype(np.float32)
        with v1.Session(graph=g) as s:
            pv, hv = s.run(["probs:0", "hidden:0"], {x: xv})
    save(g, "mlp")
    np.save(os.path.join(out, "mlp_x.npy"), xv)
    np.save(os.path.join(out, "mlp_probs.npy"), pv)
    np.save(os.path.join(out, "mlp_hidden.npy"), hv)

    # A convnet with constant weights: conv2d SAME + bias + relu, max pool,
    # conv2d VALID stride 2, reshape, matmul, reductions.
    g = tf.Graph()
    with g.as_default():
        img = v1.placeholder(tf.float32, [None, 8, 8, 2], name="image")
        k1 = tf.constant(rng.randn(3, 3, 2, 4).astype(np.float32) * 0.5, name="k1")
        c1 = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(img, k1, [1, 1, 1, 1], "SAME"),
                                       tf.constant(rng.randn(4).astype(np.float32))))
        p1 = tf.nn.max_pool2d(c1, 2, 2, "VALID")
        k2 = tf.constant(rng.randn(2, 2, 4, 6).astype(np.float32) * 0.5, name="k2")
        c2 = tf.nn.conv2d(p1, k2, [1, 2, 2, 1], "VALID")
        flat = tf.reshape(c2, [-1, 2 * 2 * 6])
        fc = tf.matmul(flat, tf.constant(rng.randn(24, 5).astype(np.float32)))
        tf.identity(tf.reduce_mean(fc, axis=1) - tf.reduce_max(fc, axis=1), name="score")
        iv = rng.randn(3, 8, 8, 2).astype(np.float32)
        with v1.Session(graph=g) as s:
            sv = s.run("score:0", {img: iv})
    save(g, "conv")
    np.save(os.path.join(out, "conv_image.npy"), iv)
    np.save(os.path.join(out, "conv_score.npy"), sv)

    # int64 values past 2**53 stay exact; a control dependency.
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(np.array([2**53 + 1, -7], np.int64), name="a")
        b = v1.placeholder(tf.int64, [2], name="b")
        first = tf.no_op(name="first")
        with tf.control_dependencies([first]):
            tf.add(a, b, name="sum")
        with v1.Session(graph=g) as s:
            iv = s.run("sum:0", {b: np.array([2, 3], np.int64)})
    save(g, "ints")
    np.save(os.path.join(out, "ints_sum.npy"), iv)
''')


@pytest.fixture(scope="module")
def tf_graphs(tmp_path_factory):
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (scripts that install "
                    "the peers set it up)")
    out = tmp_path_factory.mktemp("tf_graphs")
    script = out / "make_graphs.py"
    script.write_text(TF_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([PEERS_PYTHON, str(script), str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def load(d, name):
    return np.load(os.path.join(d, name + ".npy"))


def test_mlp_binary_graphdef(tf_graphs):
    g = wr.Graph()
    with g.as_default():
        data = (tf_graphs / "mlp.pb").read_bytes()
        assert wr.import_graph_def(data) is None
    names = [op.name for op in g.get_operations()]
    assert "import/x" in names and "import/probs" in names
    probs = g.get_tensor_by_name("import/probs:0")
    assert probs.dtype is wr.float32 and probs.shape.as_list() == [None, 3]
    with wr.Session(graph=g) as sess:
        pv, hv = sess.run(["import/probs:0", "import/hidden:0"],
                          {"import/x:0": load(tf_graphs, "mlp_x")})
    np.testing.assert_allclose(pv, load(tf_graphs, "mlp_probs"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hv, load(tf_graphs, "mlp_hidden"), rtol=1e-5, atol=1e-5)


def test_mlp_text_graphdef_and_tf_message(tf_graphs):
    text = (tf_graphs / "mlp.pbtxt").read_text()
    g = wr.Graph()
    with g.as_default():
        probs, = wr.import_graph_def(text, return_elements=["probs:0"], name="txt")
        # A GraphDef message (ours here; TensorFlow's works alike: serialized).
        message = protos.GraphDef.FromString((tf_graphs / "mlp.pb").read_bytes())
        probs2, = wr.import_graph_def(message, return_elements=["probs:0"], name="msg")
    assert probs.name == "txt/probs:0" and probs2.name == "msg/probs:0"
    x = load(tf_graphs, "mlp_x")
    with wr.Session(graph=g) as sess:
        a, b = sess.run([probs, probs2], {"txt/x:0": x, "msg/x:0": x})
    np.testing.assert_allclose(a, load(tf_graphs, "mlp_probs"), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(a, b)


def test_conv_net(tf_graphs):
    g = wr.Graph()
    with g.as_default():
        score, image = wr.import_graph_def((tf_graphs / "conv.pb").read_bytes(),
                                           return_elements=["score:0", "image"], name="net")
    assert isinstance(image, wr.Operation) and image.type == "Placeholder"
    assert score.shape.as_list() == [None]
    with wr.Session(graph=g) as sess:
        sv = sess.run(score, {image.outputs[0]: load(tf_graphs, "conv_image")})
    np.testing.assert_allclose(sv, load(tf_graphs, "conv_score"), rtol=1e-4, atol=1e-4)


def test_input_map_and_return_elements(tf_graphs):
    x = load(tf_graphs, "mlp_x")
    g = wr.Graph()
    with g.as_default():
        fed = wr.constant(x) * 1.0
        with wr.name_scope("outer"):
            probs, hidden_op, x_op = wr.import_graph_def(
                (tf_graphs / "mlp.pb").read_bytes(), input_map={"x:0": fed},
                return_elements=["probs:0", "hidden", "x"])
        assert probs.name == "outer/import/probs:0"
        assert isinstance(hidden_op, wr.Operation) and hidden_op.name == "outer/import/hidden"
        # The mapped placeholder stays in the graph, but nothing reads it.
        assert x_op.outputs[0].consumers() == []
        matmul = g.get_operation_by_name("outer/import/MatMul")
        assert matmul.inputs[0] is fed
        with pytest.raises(ValueError, match="not found in graph_def"):
            wr.import_graph_def((tf_graphs / "mlp.pb").read_bytes(), return_elements=["nope:0"])
    with wr.Session(graph=g) as sess:
        pv = sess.run(probs)  # no feed: x comes from the constant
    np.testing.assert_allclose(pv, load(tf_graphs, "mlp_probs"), rtol=1e-5, atol=1e-6)


def test_int64_exact_and_control_input_map(tf_graphs):
    g = wr.Graph()
    with g.as_default():
        gate = wr.constant(0.0, name="gate")
        total, = wr.import_graph_def((tf_graphs / "ints.pb").read_bytes(),
                                     input_map={"^first": gate.op}, return_elements=["sum:0"],
                                     name="")
    assert total.name == "sum:0"
    assert [op.name for op in total.op.control_inputs] == ["gate"]
    with wr.Session(graph=g) as sess:
        out = sess.run(total, {"b:0": np.array([2, 3], np.int64)})
    assert out.tolist() == load(tf_graphs, "ints_sum").tolist() == [2**53 + 3, -4]


def test_as_graph_def_round_trip(tf_graphs):
    x = load(tf_graphs, "mlp_x")
    g = wr.Graph()
    with g.as_default():
        wr.import_graph_def((tf_graphs / "mlp.pb").read_bytes(), name="m")
        extra = wr.get_default_graph().get_tensor_by_name("m/probs:0") * 2.0
    exported = g.as_graph_def()
    assert isinstance(exported, protos.GraphDef)
    g2 = wr.Graph()
    with g2.as_default():
        wr.import_graph_def(exported, name="")
    assert [n.name for n in g2.as_graph_def().node] == [n.name for n in exported.node]
    with wr.Session(graph=g) as s1, wr.Session(graph=g2) as s2:
        a = s1.run(extra, {"m/x:0": x})
        b = s2.run(extra.name, {"m/x:0": x})
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, 2 * load(tf_graphs, "mlp_probs"), rtol=1e-5, atol=1e-6)


def test_import_errors_name_the_node():
    g = wr.Graph()
    bad_op = 'node { name: "weird" op: "NoSuchOpAnywhere" }'
    with g.as_default():
        with pytest.raises(wr.errors.OpError, match="weird"):
            wr.import_graph_def(bad_op)
        bad_input = ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
                     'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} '
                     'float_val: 1 } } } }\n'
                     'node { name: "i" op: "Identity" input: "missing" '
                     'attr { key: "T" value { type: DT_FLOAT } } }')
        with pytest.raises(wr.errors.OpError, match="'?i'?"):
            wr.import_graph_def(bad_input, name="b")
        # An op Weir lacks: the error lists what Weir has of its family.
        missing = 'node { name: "pool" op: "MaxPoolWithArgmax" }'
        with pytest.raises(wr.errors.NotFoundError,
                           match=r"(?s)MaxPoolWithArgmax' is not registered.*"
                                 r"\(MaxPool\*\) that Weir has: MaxPool, (MaxPool3D.*, )?MaxPoolGrad"):
            wr.import_graph_def(missing, name="p")
        with pytest.raises(ValueError, match="text format"):
            wr.import_graph_def("this is not a graph {")
        with pytest.raises(TypeError):
            wr.import_graph_def(42)
