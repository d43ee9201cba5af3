"""TensorFlow's forward-compatibility rule on import: a graph from a newer
producer whose MatMul carries an attr weir does not declare ("fast_path", a
stand-in for an attr added later). With the producer's op list
(import_graph_def's producer_op_list, a MetaGraphDef's stripped_op_list) the
attr is dropped when its value is the producer's default, as TensorFlow 2.21
itself does (checked in the subprocess that makes the graphs); any other
case is an InvalidArgumentError naming the node, op and attr, as issue 15
asks. TensorFlow 2.21 is laxer there: it keeps an undeclared attr of another
value and runs the node as if it were absent (the subprocess records that
too); Weir refuses, since the attr may change what the node computes."""
import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr
from weir.core import protos

from peers import PEERS_PYTHON  # noqa: E402

TF_SCRIPT = textwrap.dedent(r'''
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1
    out = sys.argv[1]
    rng = np.random.RandomState(0)

    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(rng.randn(3, 2).astype(np.float32), name="w")
        b = tf.constant(rng.randn(2).astype(np.float32), name="b")
        tf.nn.bias_add(tf.matmul(x, w, name="mm"), b, name="y")
        xv = rng.randn(4, 3).astype(np.float32)
        with v1.Session(graph=g) as s:
            yv = s.run("y:0", {x: xv})
        meta = v1.train.export_meta_graph(graph=g)

    # The newer producer: its MatMul has "fast_path: bool = false".
    op_list = meta.meta_info_def.stripped_op_list
    (matmul,) = [op for op in op_list.op if op.name == "MatMul"]
    extra = matmul.attr.add()
    extra.name = "fast_path"
    extra.type = "bool"
    extra.default_value.b = False

    def graph_with(value):
        gd = g.as_graph_def()
        for node in gd.node:
            if node.op == "MatMul":
                node.attr["fast_path"].b = value
        return gd

    results = {}
    for value in (False, True):
        gd = graph_with(value)
        with open(os.path.join(out, f"graph_{value}.pb"), "wb") as f:
            f.write(gd.SerializeToString())
        with tf.Graph().as_default() as g2:
            tf.import_graph_def(gd, producer_op_list=op_list, name="")
            with v1.Session(graph=g2) as s:
                results[str(value)] = {
                    "y": s.run("y:0", {"x:0": xv}).tolist(),
                    "attrs": sorted(g2.get_operation_by_name("mm").node_def.attr)}
    with open(os.path.join(out, "tf.json"), "w") as f:
        json.dump(results, f)
    with open(os.path.join(out, "op_list.pb"), "wb") as f:
        f.write(op_list.SerializeToString())
    meta.graph_def.CopyFrom(graph_with(False))
    with open(os.path.join(out, "model.meta"), "wb") as f:
        f.write(meta.SerializeToString())
    np.save(os.path.join(out, "x.npy"), xv)
    np.save(os.path.join(out, "y.npy"), yv)
''')


@pytest.fixture(scope="module")
def tf_files(tmp_path_factory):
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (scripts that install "
                    "the peers set it up)")
    out = tmp_path_factory.mktemp("producer_op_list")
    script = out / "make_graphs.py"
    script.write_text(TF_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([PEERS_PYTHON, str(script), str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def op_list(tf_files):
    message = protos.OpList()
    message.ParseFromString((tf_files / "op_list.pb").read_bytes())
    return message


def run(g, tf_files):
    with wr.Session(graph=g) as sess:
        return sess.run("y:0", {"x:0": np.load(tf_files / "x.npy")})


def test_tensorflow_itself_drops_the_attr_with_the_default(tf_files):
    results = json.loads((tf_files / "tf.json").read_text())
    assert "fast_path" not in results["False"]["attrs"]
    assert "transpose_a" in results["False"]["attrs"]
    np.testing.assert_allclose(results["False"]["y"], np.load(tf_files / "y.npy"), rtol=1e-6)
    # Another value: TensorFlow keeps the attr (Weir refuses it, below).
    assert "fast_path" in results["True"]["attrs"]


def test_attr_with_the_producers_default_is_dropped(tf_files):
    g = wr.Graph()
    with g.as_default():
        wr.import_graph_def((tf_files / "graph_False.pb").read_bytes(),
                            producer_op_list=op_list(tf_files), name="")
    mm = g.get_operation_by_name("mm")
    assert mm.type == "MatMul"
    with pytest.raises(ValueError):
        mm.get_attr("fast_path")
    assert mm.get_attr("transpose_a") is False
    np.testing.assert_allclose(run(g, tf_files), np.load(tf_files / "y.npy"), rtol=1e-5,
                               atol=1e-6)
    # The OpList's bytes do as well as the message.
    g = wr.Graph()
    with g.as_default():
        wr.import_graph_def((tf_files / "graph_False.pb").read_bytes(),
                            producer_op_list=op_list(tf_files).SerializeToString(), name="")
    np.testing.assert_allclose(run(g, tf_files), np.load(tf_files / "y.npy"), rtol=1e-5,
                               atol=1e-6)


def test_another_value_is_refused(tf_files):
    with wr.Graph().as_default():
        with pytest.raises(wr.errors.InvalidArgumentError,
                           match=r"'mm' \(MatMul\).* has attr 'fast_path'.*newer producer.*"
                                 r"differs from the producer's default"):
            wr.import_graph_def((tf_files / "graph_True.pb").read_bytes(),
                                producer_op_list=op_list(tf_files), name="")


def test_without_a_producer_op_list_the_attr_is_refused(tf_files):
    with wr.Graph().as_default():
        with pytest.raises(wr.errors.InvalidArgumentError,
                           match=r"'mm' \(MatMul\).* has attr 'fast_path'.*newer producer.*"
                                 r"no producer op list"):
            wr.import_graph_def((tf_files / "graph_False.pb").read_bytes(), name="")


def test_a_producer_op_list_without_the_op_is_refused(tf_files):
    lacking = protos.OpList()
    lacking.op.extend(op for op in op_list(tf_files).op if op.name != "MatMul")
    with wr.Graph().as_default():
        with pytest.raises(wr.errors.InvalidArgumentError,
                           match="the producer's op list has no op MatMul"):
            wr.import_graph_def((tf_files / "graph_False.pb").read_bytes(),
                                producer_op_list=lacking, name="")
    with wr.Graph().as_default():
        with pytest.raises(TypeError, match="producer_op_list must be an OpList"):
            wr.import_graph_def((tf_files / "graph_False.pb").read_bytes(),
                                producer_op_list=42)


def test_import_meta_graph_applies_the_stripped_op_list(tf_files):
    g = wr.Graph()
    with g.as_default():
        wr.train.import_meta_graph(str(tf_files / "model.meta"))
    np.testing.assert_allclose(run(g, tf_files), np.load(tf_files / "y.npy"), rtol=1e-5,
                               atol=1e-6)
