"""weir.graph_util (TF1's tf.graph_util) and write_graph: a trained graph is
frozen (its variables become constants), written as wire bytes and as
protobuf text, and TensorFlow 2.21 reads both files back, imports them and
computes weir's values; plus extract_sub_graph and remove_training_nodes on
GraphDefs built by hand, checked against TF running the same calls."""
import json
import os

import numpy as np
import pytest

import weir as wr
from tf1_run import TF_HEADER, run_tf
from weir.core import protos


def _train_and_freeze(tmp_path):
    rng = np.random.RandomState(0)
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [None, 3], name="x")
        ids = wr.placeholder(wr.int32, [None], name="ids")
        w = wr.get_variable("w", initializer=rng.randn(3, 2).astype(np.float32))
        b = wr.Variable(np.zeros(2, np.float32), name="b")
        emb = wr.get_variable("emb", initializer=rng.randn(5, 2).astype(np.float32))
        h = wr.identity(wr.matmul(x, w) + b, name="h")
        out = wr.add(h, wr.nn.embedding_lookup(emb, ids), name="out")
        train = wr.train.GradientDescentOptimizer(0.1).minimize(wr.reduce_sum(wr.square(out)))
        xv = rng.randn(4, 3).astype(np.float32)
        iv = np.array([0, 4, 2, 2], np.int32)
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            sess.run(train, {x: xv, ids: iv})  # the frozen values are the trained ones
            expected = sess.run(out, {x: xv, ids: iv})
            graph_def = sess.graph.as_graph_def()
            frozen = wr.graph_util.convert_variables_to_constants(sess, graph_def, ["out"])
            only_w = wr.graph_util.convert_variables_to_constants(
                sess, graph_def, ["out"], variable_names_whitelist=["w"])
            but_w = wr.graph_util.convert_variables_to_constants(
                sess, graph_def, ["out"], variable_names_blacklist=["w"])
    binary = wr.train.write_graph(frozen, str(tmp_path / "new_dir"), "frozen.pb", as_text=False)
    text = wr.io.write_graph(frozen, str(tmp_path / "new_dir"), "frozen.pbtxt")
    return dict(xv=xv, iv=iv, expected=expected, frozen=frozen, only_w=only_w, but_w=but_w,
                binary=binary, text=text)


def test_frozen_graph_runs_in_weir_and_keeps_the_trained_values(tmp_path):
    r = _train_and_freeze(tmp_path)
    ops_of = {n.name: n.op for n in r["frozen"].node}
    assert ops_of["w"] == ops_of["b"] == ops_of["emb"] == "Const"
    assert "VarHandleOp" not in ops_of.values() and "ReadVariableOp" not in ops_of.values()
    assert "ResourceGather" not in ops_of.values() and "GatherV2" in ops_of.values()
    assert not any(op in ("AssignVariableOp", "ResourceApplyGradientDescent")
                   for op in ops_of.values())  # only what "out" needs
    assert {n.name: n.op for n in r["only_w"].node}["b"] == "VarHandleOp"
    assert {n.name: n.op for n in r["only_w"].node}["w"] == "Const"
    assert {n.name: n.op for n in r["but_w"].node}["w"] == "VarHandleOp"
    assert {n.name: n.op for n in r["but_w"].node}["emb"] == "Const"
    assert r["binary"] == str(tmp_path / "new_dir" / "frozen.pb")
    for path in (r["binary"], r["text"]):
        with wr.Graph().as_default():
            graph_def = protos.GraphDef()
            with open(path, "rb") as f:
                if path.endswith(".pb"):
                    graph_def.ParseFromString(f.read())
                else:
                    from google.protobuf import text_format
                    text_format.Parse(f.read().decode(), graph_def)
            wr.import_graph_def(graph_def, name="")
            with wr.Session() as sess:
                got = sess.run("out:0", {"x:0": r["xv"], "ids:0": r["iv"]})
        np.testing.assert_array_equal(got, r["expected"])


TF_READ_BACK = '''
import json
import numpy as np
from google.protobuf import text_format
out = {}
for path in PATHS:
    graph_def = tf.GraphDef()
    data = open(path, "rb").read()
    if path.endswith(".pb"):
        graph_def.ParseFromString(data)
    else:
        text_format.Parse(data.decode(), graph_def)
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            out[path] = sess.run("out:0", {"x:0": np.array(XV, np.float32),
                                           "ids:0": np.array(IV, np.int32)}).tolist()
RESULT = out
'''


def test_tensorflow_imports_and_runs_the_frozen_graph(tmp_path):
    r = _train_and_freeze(tmp_path)
    body = ("PATHS = %s\nXV = %s\nIV = %s\n" % (json.dumps([r["binary"], r["text"]]),
                                                json.dumps(r["xv"].tolist()),
                                                json.dumps(r["iv"].tolist()))) + TF_READ_BACK
    tf_out = run_tf(body)
    for path in (r["binary"], r["text"]):
        np.testing.assert_allclose(tf_out[path], r["expected"], rtol=1e-6, atol=1e-6)


# A GraphDef by hand (no kernels needed): the same text goes to TF's functions.
TRIM_PROGRAM = '''
from google.protobuf import text_format
TEXT = """
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "check" op: "CheckNumerics" input: "a" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "message" value { s: "m" } } }
node { name: "after_check" op: "Neg" input: "a" input: "^check"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "id1" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "id2" op: "Identity" input: "id1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "keep_ctl" op: "Identity" input: "b" input: "^id1"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "target" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "add" op: "AddV2" input: "id2" input: "keep_ctl" input: "^target"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "colocated" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "user" op: "Neg" input: "colocated" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "_class" value { list { s: "loc:@colocated" } } } }
node { name: "unused" op: "Neg" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
"""
graph_def = GRAPH_DEF_CLASS()
text_format.Parse(TEXT, graph_def)
def summary(g):
    return [[n.name, n.op, list(n.input)] for n in g.node]
out = {"sub_add": summary(tf.graph_util.extract_sub_graph(graph_def, ["add"])),
       "sub_two": summary(tf.graph_util.extract_sub_graph(graph_def, ["user", "id1"])),
       "sub_versions": tf.graph_util.extract_sub_graph(graph_def, ["a"]).versions.producer,
       "removed": summary(tf.graph_util.remove_training_nodes(graph_def)),
       "protected": summary(tf.graph_util.remove_training_nodes(graph_def, protected_nodes=["id2", "check"]))}
for label, call in [("missing", lambda: tf.graph_util.extract_sub_graph(graph_def, ["zz"])),
                    ("string", lambda: tf.graph_util.extract_sub_graph(graph_def, "add"))]:
    try:
        call()
        out[label] = "no error"
    except Exception as e:
        out[label] = type(e).__name__
RESULT = out
'''


def test_extract_sub_graph_and_remove_training_nodes_as_tf():
    expected = run_tf("GRAPH_DEF_CLASS = tf.GraphDef\n" + TRIM_PROGRAM)
    namespace = {"tf": wr, "GRAPH_DEF_CLASS": protos.GraphDef}
    exec(TRIM_PROGRAM, namespace)
    got = json.loads(json.dumps(namespace["RESULT"]))
    assert got == expected
    assert [n[0] for n in got["removed"]] == [
        "a", "b", "after_check", "id1", "keep_ctl", "target", "add", "colocated", "user",
        "unused"]
    assert got["removed"][2] == ["after_check", "Neg", ["a"]]  # the CheckNumerics dropped
    assert got["missing"] == "AssertionError" and got["string"] == "TypeError"


def test_write_graph_of_a_graph_and_must_run_on_cpu(tmp_path):
    with wr.Graph().as_default() as g:
        c = wr.constant([1, 2], name="c")
        f = wr.constant(1.0, name="f")
        wr.add(c, c, name="s")
    path = wr.train.write_graph(g, str(tmp_path), "g.pbtxt")
    assert 'name: "s"' in open(path).read() and 'op: "AddV2"' in open(path).read()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tmp")]
    with pytest.raises(TypeError, match="Graph or a GraphDef"):
        wr.train.write_graph("not a graph", str(tmp_path), "x.pb")
    assert wr.graph_util.must_run_on_cpu(c.op) and not wr.graph_util.must_run_on_cpu(f.op)
    assert wr.graph_util.tensor_shape_from_node_def_name(g, "c").as_list() == [2]
