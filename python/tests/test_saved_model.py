"""wr.saved_model: SavedModels that TensorFlow 2.21 (from PyPI, in
/opt/weir-peers) writes during the test with tests/tf_compat/export_saved_models.py
load into a Weir session with TF1's API and give TensorFlow's outputs."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import weir as wr
from weir.core import protos
from weir.saved_model import signature_constants, tag_constants

from peers import PEERS_PYTHON  # noqa: E402

EXPORT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                             "tf_compat", "export_saved_models.py")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (scripts that install "
                    "the peers set it up)")
    out = tmp_path_factory.mktemp("saved_models")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([PEERS_PYTHON, EXPORT_SCRIPT, str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "cases.json") as f:
        return out, json.load(f)


def decode(encoded):
    if encoded["dtype"] == "string":
        return np.array([v.encode() for v in encoded["values"]], dtype=object).reshape(
            encoded["shape"])
    return np.array(encoded["values"], dtype=encoded["dtype"]).reshape(encoded["shape"])


def test_constants():
    assert tag_constants.SERVING == "serve" and wr.saved_model.tag_constants.TRAINING == "train"
    assert signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert signature_constants.PREDICT_METHOD_NAME == "tensorflow/serving/predict"


def test_models_give_tensorflows_outputs(models):
    out, cases = models
    checked = 0
    for case in cases:
        export_dir = str(out / case["model"])
        with wr.Session(graph=wr.Graph()) as sess:
            meta = wr.saved_model.loader.load(sess, case["tags"], export_dir)
            assert isinstance(meta, protos.MetaGraphDef)
            assert sorted(meta.meta_info_def.tags) == sorted(case["tags"])
            signature = meta.signature_def[case["signature"]]
            feeds = {signature.inputs[k].name: decode(v) for k, v in case["inputs"].items()}
            names = sorted(case["outputs"])
            values = sess.run([signature.outputs[n].name for n in names], feeds)
        for name, value in zip(names, values):
            expected = decode(case["outputs"][name])
            if expected.dtype == object:
                assert value == expected.reshape(()).item(), name
            else:
                np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6, err_msg=name)
        checked += 1
    assert checked == 6  # 4 graph-mode cases, a TF2 tf.Module, a Keras convnet


def test_compat_load_with_import_scope(models):
    out, cases = models
    x = decode(cases[0]["inputs"]["x"])
    with wr.Session(graph=wr.Graph()) as sess:
        meta = wr.saved_model.load(sess, [tag_constants.SERVING], str(out / "tf1_simple"),
                                   import_scope="m")
        signature = meta.signature_def[signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        y = sess.run("m/" + signature.outputs["y"].name, {"m/" + signature.inputs["x"].name: x})
    np.testing.assert_allclose(y, decode(cases[0]["outputs"]["y"]), rtol=1e-5)


def test_errors(models, tmp_path):
    out, _ = models
    assert wr.saved_model.maybe_saved_model_directory(str(out / "tf1_simple"))
    assert not wr.saved_model.maybe_saved_model_directory(str(tmp_path))
    with wr.Session(graph=wr.Graph()) as sess:
        with pytest.raises(RuntimeError, match=r"tags \{gpu, serve\}.*\{serve\}, \{train\}"):
            wr.saved_model.load(sess, ["serve", "gpu"], str(out / "tf1_builder"))
        with pytest.raises(wr.errors.NotFoundError, match="saved_model.pb"):
            wr.saved_model.load(sess, ["serve"], str(tmp_path))
        (tmp_path / "saved_model.pb").write_bytes(b"\xff\xff\xff not a proto")
        with pytest.raises(wr.errors.DataLossError, match="could not parse"):
            wr.saved_model.load(sess, ["serve"], str(tmp_path))
    no_vars = tmp_path / "no_vars"
    shutil.copytree(out / "tf1_simple", no_vars)
    shutil.rmtree(no_vars / "variables")
    with wr.Session(graph=wr.Graph()) as sess:
        with pytest.raises(wr.errors.NotFoundError, match="variables.index"):
            wr.saved_model.load(sess, ["serve"], str(no_vars))


TF_LOAD = r'''
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
export_dir, tag, key, feeds = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
with tf.compat.v1.Session(graph=tf.Graph()) as sess:
    meta = tf.compat.v1.saved_model.loader.load(sess, [tag], export_dir)
    sig = meta.signature_def[key]
    names = sorted(sig.outputs)
    values = sess.run([sig.outputs[n].name for n in names],
                      {sig.inputs[k].name: np.array(v, np.float32) for k, v in feeds.items()})
    out = {}
    for n, v in zip(names, values):
        out[n] = v.decode() if isinstance(v, bytes) else np.asarray(v).tolist()
    print(json.dumps(out))
'''


def tensorflow_runs(export_dir, tag, key, feeds):
    """TensorFlow's loader's outputs of signature `key` on `feeds`."""
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([PEERS_PYTHON, "-c", TF_LOAD, str(export_dir), tag, key,
                           json.dumps({k: np.asarray(v).tolist() for k, v in feeds.items()})],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def build_dense(graph):
    with graph.as_default():
        x = wr.placeholder(wr.float32, [None, 3], name="x")
        w = wr.get_variable("w", initializer=wr.constant(
            np.arange(6, dtype=np.float32).reshape(3, 2) - 2.0), use_resource=True)
        y = wr.nn.relu(wr.matmul(x, w) + 0.5, name="y")
    return x, y


def test_simple_save_loads_in_tensorflow_and_weir(tmp_path):
    export_dir = tmp_path / "simple"
    x_value = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
    graph = wr.Graph()
    x, y = build_dense(graph)
    with wr.Session(graph=graph) as sess:
        sess.run(wr.global_variables_initializer())
        want = sess.run(y, {x: x_value})
        wr.saved_model.simple_save(sess, str(export_dir), {"x": x}, {"y": y})
    assert (export_dir / "saved_model.pb").exists()
    assert (export_dir / "variables" / "variables.index").exists()
    got = tensorflow_runs(export_dir, "serve", "serving_default", {"x": x_value})
    np.testing.assert_allclose(got["y"], want, rtol=1e-6)
    with wr.Session(graph=wr.Graph()) as sess:
        meta = wr.saved_model.load(sess, [wr.saved_model.SERVING], str(export_dir))
        sig = meta.signature_def["serving_default"]
        assert sig.method_name == signature_constants.PREDICT_METHOD_NAME
        assert list(sig.inputs["x"].tensor_shape.dim)[1].size == 3
        np.testing.assert_allclose(
            sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x_value}), want)
    with pytest.raises(AssertionError, match="already exists"):
        wr.saved_model.Builder(str(export_dir))


def test_builder_with_tag_sets_main_op_and_asset(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    export_dir = tmp_path / "built"
    graph = wr.Graph()
    x, y = build_dense(graph)
    with graph.as_default():
        offset = wr.get_variable("offset", initializer=wr.constant(100.0), use_resource=True,
                                 collections=[wr.GraphKeys.LOCAL_VARIABLES])
        asset = wr.constant(str(vocab), name="asset_path")
        path_var = wr.get_variable("path", initializer=asset, use_resource=True,
                                   collections=[wr.GraphKeys.LOCAL_VARIABLES])
        shifted = wr.identity(y + offset.read_value(), name="shifted")
        path_out = wr.identity(path_var.read_value(), name="path_out")
        main_op = wr.group(wr.local_variables_initializer(), name="main_op")
        info = wr.saved_model.utils.build_tensor_info
        serving = wr.saved_model.signature_def_utils.build_signature_def(
            {"x": info(x)}, {"shifted": info(shifted), "path": info(path_out)},
            signature_constants.PREDICT_METHOD_NAME)
    x_value = np.array([[1, 1, 1]], np.float32)
    with wr.Session(graph=graph) as sess:
        sess.run([wr.global_variables_initializer(), wr.local_variables_initializer()])
        want = sess.run(shifted, {x: x_value})
        builder = wr.saved_model.Builder(str(export_dir))
        builder.add_meta_graph_and_variables(sess, [tag_constants.SERVING],
                                             signature_def_map={"serving_default": serving},
                                             assets_collection=[asset], main_op=main_op)
        builder.add_meta_graph([tag_constants.TRAINING], signature_def_map={"s": serving},
                               main_op=main_op, assets_collection=[asset])
        builder.save()
    assert (export_dir / "assets" / "vocab.txt").read_text() == "a\nb\n"
    asset_path = str(export_dir / "assets" / "vocab.txt")
    for tag, key in (("serve", "serving_default"), ("train", "s")):
        got = tensorflow_runs(export_dir, tag, key, {"x": x_value})
        np.testing.assert_allclose(got["shifted"], want, rtol=1e-6)
        assert got["path"] == asset_path
        with wr.Session(graph=wr.Graph()) as sess:
            meta = wr.saved_model.load(sess, [tag], str(export_dir))
            sig = meta.signature_def[key]
            shifted_value, path_value = sess.run(
                [sig.outputs["shifted"].name, sig.outputs["path"].name],
                {sig.inputs["x"].name: x_value})
        np.testing.assert_allclose(shifted_value, want)
        assert path_value == asset_path.encode()
