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


def test_graph_mode_models_give_tensorflows_outputs(models):
    out, cases = models
    checked = 0
    for case in cases:
        if case["model"] == "tf2_module":
            continue
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
    assert checked == 4


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


def test_tf2_model_needs_functions(models):
    # Until function libraries land, the function-call op is named.
    out, _ = models
    with wr.Session(graph=wr.Graph()) as sess:
        with pytest.raises((wr.errors.UnimplementedError, wr.errors.NotFoundError),
                           match="StatefulPartitionedCall"):
            wr.saved_model.load(sess, ["serve"], str(out / "tf2_module"))
