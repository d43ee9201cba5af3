"""The classic TF1 programs of tf1_programs/ (MNIST softmax, a tf.layers CNN,
word2vec, input pipelines, summaries, checkpoints with a meta graph, a
char-rnn, control flow and friends), each a complete script written for
TensorFlow (`import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()`)
and run twice: under TensorFlow 2.21 (/opt/weir-peers, one subprocess for all)
and under Weir in this process with only the import line changed to `import
weir.compat.v1 as tf`. Initial values are constants from numpy and the
random parts are given (sampled_values) or kept out of the compared numbers,
so the loss trajectories must agree to float32 rounding (1e-4 relative);
each program also checks itself (losses fall, restores give the saved
predictions, shapes and counts)."""
import pathlib

import numpy as np
import pytest

import tf1_run
from tf1_run import TF_V1_IMPORT, WEIR_V1_IMPORT

FOLDER = pathlib.Path(__file__).parent / "tf1_programs"
PROGRAMS = {path.stem: path.read_text() for path in sorted(FOLDER.glob("*.py"))}
RTOL = 1e-4


def _weir(name):
    return tf1_run.run_weir_program(PROGRAMS[name], name, TF_V1_IMPORT, WEIR_V1_IMPORT)


@pytest.fixture(scope="module")
def tf_results():
    # tf.compat.v1.layers needs Keras 2 (the tf-keras package) under TensorFlow 2.16+.
    return tf1_run.run_tf_programs(PROGRAMS, TF_USE_LEGACY_KERAS="1")


def _tf(tf_results, name):
    return tf1_run.tf_result(tf_results, name)


def test_the_programs_differ_only_in_the_import_line():
    assert len(PROGRAMS) >= 8
    for name, text in PROGRAMS.items():
        weir_text = tf1_run.as_weir(text, TF_V1_IMPORT, WEIR_V1_IMPORT)
        assert "tensorflow" not in weir_text.replace("TensorFlow", ""), name
        assert "tf.disable_v2_behavior()\n" in weir_text, name
        assert len(weir_text.splitlines()) == len(text.splitlines())
        assert 40 <= len(text.splitlines()) <= 150, (name, len(text.splitlines()))


def test_mnist_softmax(tf_results):
    tf, wr = _tf(tf_results, "mnist_softmax"), _weir("mnist_softmax")
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=RTOL)
    np.testing.assert_allclose(wr["accuracies"], tf["accuracies"], atol=1 / 300 + 1e-6)
    assert wr["predictions"] == tf["predictions"]
    assert wr["argmax_dtype"] == tf["argmax_dtype"] == "int64"


def test_cnn_with_layers_batch_norm_and_update_ops(tf_results):
    tf, wr = _tf(tf_results, "cnn_layers"), _weir("cnn_layers")
    # 30 Adam steps with batch statistics and dropout off: the same trajectory.
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(wr["losses"][:10], tf["losses"][:10], rtol=RTOL)
    assert wr["variables"] == tf["variables"]
    assert wr["step"] == tf["step"] == 40 and wr["update_ops"] == tf["update_ops"] == 2
    # Then 10 steps with dropout (another generator's masks): both still fit.
    assert wr["eval_accuracy"] >= 0.9 and tf["eval_accuracy"] >= 0.9
    assert wr["eval_loss"] < 2 * tf["eval_loss"] + 0.05, (wr["eval_loss"], tf["eval_loss"])


def test_word2vec_nce_and_sampled_softmax(tf_results):
    tf, wr = _tf(tf_results, "word2vec_basic"), _weir("word2vec_basic")
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=RTOL, atol=1e-6)
    np.testing.assert_allclose(wr["softmax_losses"], tf["softmax_losses"], rtol=RTOL, atol=1e-6)
    np.testing.assert_allclose(wr["similarity"], tf["similarity"], rtol=RTOL, atol=1e-5)
    assert wr["nearest"] == tf["nearest"]
    # The default sampler's loss is random (another generator than TF's): its first value is of TF's size.
    assert 0.5 * tf["random_first"][0] < wr["random_first"][0] < 2 * tf["random_first"][0]


def test_input_pipelines(tf_results):
    tf, wr = _tf(tf_results, "input_pipelines"), _weir("input_pipelines")
    for key in ("train_steps", "eval_batches", "shapes", "parsed_shapes", "id_dtype", "record_batches"):
        assert wr[key] == tf[key], key
    np.testing.assert_allclose(wr["eval_loss"], tf["eval_loss"], rtol=RTOL)
    np.testing.assert_allclose(wr["fed_sums"], tf["fed_sums"], rtol=RTOL, atol=1e-5)


def test_saver_and_meta_graph(tf_results):
    tf, wr = _tf(tf_results, "saver_meta_graph"), _weir("saver_meta_graph")
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=RTOL)
    np.testing.assert_allclose(wr["resumed"], tf["resumed"], rtol=RTOL)
    np.testing.assert_allclose(wr["predictions"], tf["predictions"], rtol=RTOL, atol=1e-6)
    for key in ("kept", "latest", "step_after", "shapes", "restored_variables", "trainable"):
        assert wr[key] == tf[key], key
    assert wr["kept"] == ["model-15", "model-20", "model-25"] and wr["step_after"] == 30


def test_char_rnn(tf_results):
    tf, wr = _tf(tf_results, "char_rnn"), _weir("char_rnn")
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=1e-3)
    np.testing.assert_allclose(wr["losses"][:10], tf["losses"][:10], rtol=RTOL)
    # TF1's gradient of the embedding is IndexedSlices and global_norm sums the squares of its rows
    # with repeated ids apart; weir's gradients are dense (repeated ids summed first): the norms
    # differ a little (clip_norm is not reached, so the updates agree).
    np.testing.assert_allclose(wr["norms"], tf["norms"], rtol=5e-3)
    assert wr["variables"] == tf["variables"]
    assert wr["sampled"] == tf["sampled"]
    np.testing.assert_allclose(wr["state_row3"], tf["state_row3"], rtol=1e-3, atol=1e-4)


def test_control_flow_and_friends(tf_results):
    tf, wr = _tf(tf_results, "control_flow_misc"), _weir("control_flow_misc")
    np.testing.assert_allclose(wr["trajectory"], tf["trajectory"], rtol=RTOL)
    np.testing.assert_allclose(wr["w"], tf["w"], rtol=RTOL)
    np.testing.assert_allclose(wr["lr"], tf["lr"], rtol=1e-6)
    np.testing.assert_allclose(wr["median"], tf["median"], rtol=RTOL)
    assert wr["loop"][0] == tf["loop"][0] and wr["loop"][2] == tf["loop"][2] == 55
    assert wr["partial_run"] == tf["partial_run"] == [6.0, 7.5]
    assert wr["assertion"] == tf["assertion"] == "InvalidArgumentError"


_READ_EVENTS = r"""
import json, sys
import tensorflow.compat.v1 as tf
events = []
for e in tf.train.summary_iterator(sys.argv[1]):
    kind = e.WhichOneof("what")
    item = {"step": e.step, "kind": kind}
    if kind == "summary":
        item["values"] = [[v.tag, v.WhichOneof("value"),
                           v.simple_value if v.HasField("simple_value") else v.histo.num]
                          for v in e.summary.value]
    elif kind == "graph_def":
        item["nodes"] = len(tf.GraphDef.FromString(e.graph_def).node)
    elif kind == "meta_graph_def":
        meta = tf.MetaGraphDef.FromString(e.meta_graph_def)
        item["nodes"] = len(meta.graph_def.node)
        item["collections"] = sorted(meta.collection_def)
    elif kind == "tagged_run_metadata":
        metadata = tf.RunMetadata.FromString(e.tagged_run_metadata.run_metadata)
        item["tag"] = e.tagged_run_metadata.tag
        item["nodes"] = sorted({n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats})
    events.append(item)
print("RESULT " + json.dumps(events))
"""


def _tf_read_events(path):
    import json
    import subprocess
    proc = subprocess.run([tf1_run.PEERS_PYTHON, "-c", _READ_EVENTS, path], env=tf1_run.tf_env(),
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_summaries_readable_by_tensorflow(tf_results):
    tf, wr = _tf(tf_results, "summaries"), _weir("summaries")
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=RTOL)
    assert wr["lr_tag"] == tf["lr_tag"] == "learning_rate"
    assert wr["lr"] == tf["lr"]
    ours, theirs = _tf_read_events(wr["event_file"]), _tf_read_events(tf["event_file"])
    assert [e["kind"] for e in ours] == [e["kind"] for e in theirs]
    assert [e["step"] for e in ours] == [e["step"] for e in theirs]
    summaries = [e for e in ours if e["kind"] == "summary"]
    their_summaries = [e for e in theirs if e["kind"] == "summary"]
    assert len(summaries) == 10
    for a, b in zip(summaries, their_summaries):
        assert [v[:2] for v in a["values"]] == [v[:2] for v in b["values"]]
        np.testing.assert_allclose([v[2] for v in a["values"]], [v[2] for v in b["values"]], rtol=RTOL)
    [run_metadata] = [e for e in ours if e["kind"] == "tagged_run_metadata"]
    assert run_metadata["tag"] == "step005"
    assert "model/MatMul" in run_metadata["nodes"], run_metadata["nodes"]
    # FileWriter(logdir, sess.graph) writes the graph twice (GraphDef, MetaGraphDef), then add_meta_graph.
    first, meta = [e for e in ours if e["kind"] == "meta_graph_def"]
    assert first["nodes"] == [e for e in ours if e["kind"] == "graph_def"][0]["nodes"] > 10
    assert meta["nodes"] >= first["nodes"] and "trainable_variables" in meta["collections"]
    assert "summaries" in meta["collections"]
    assert meta["collections"] == [e for e in theirs if e["kind"] == "meta_graph_def"][-1]["collections"]


_DECODE_IMAGES = r"""
import base64, json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
out = []
for text in json.load(sys.stdin):
    summary = tf.Summary.FromString(base64.b64decode(text))
    images = []
    for v in summary.value:
        with tf.Session() as sess:
            pixels = sess.run(tf.image.decode_png(v.image.encoded_image_string))
        images.append([v.tag, v.image.height, v.image.width, v.image.colorspace, pixels.tolist()])
    out.append(images)
print("RESULT " + json.dumps(out))
"""


def test_cifar_style_augmentation_template_and_image_summary(tf_results):
    import json
    import subprocess
    tf, wr = _tf(tf_results, "cifar_augment"), _weir("cifar_augment")
    # The random flips do not change a 1x1 convolution's global average: the same trajectory.
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=RTOL)
    np.testing.assert_allclose(wr["ema_bias"], tf["ema_bias"], rtol=RTOL)
    assert wr["confusion"] == tf["confusion"] and wr["names"] == tf["names"]
    proc = subprocess.run([tf1_run.PEERS_PYTHON, "-c", _DECODE_IMAGES], input=json.dumps(
        [wr["summary"], tf["summary"]]), env=tf1_run.tf_env(), capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    ours, theirs = json.loads(lines[-1][len("RESULT "):])
    assert [i[:4] for i in ours] == [i[:4] for i in theirs] == [
        ["eval_images/image/0", 10, 10, 3], ["eval_images/image/1", 10, 10, 3]]
    for a, b in zip(ours, theirs):  # TensorFlow decodes Weir's PNG to TensorFlow's own pixels
        assert a[4] == b[4]


def test_monitored_training_session_with_hooks_and_resume(tf_results):
    tf, wr = _tf(tf_results, "monitored_training"), _weir("monitored_training")
    np.testing.assert_allclose(wr["records"], tf["records"], rtol=RTOL)
    np.testing.assert_allclose(wr["final_loss"], tf["final_loss"], rtol=RTOL)
    assert wr["final_step"] == tf["final_step"] == 30
    assert wr["checkpoints"] == tf["checkpoints"] == [10, 15, 20, 25, 30]
    # The SummarySaverHook reads the global step in the run that increments it: TF1's ref variable
    # gives the new value, Weir's resource variable a read unordered with the increment, so the
    # steps it writes at vary from run to run (TF: 1, 6, 11, 16, 20, 24, 28). Both write about
    # every 5 steps from the first step on, in both sessions.
    steps = wr["summary_steps"]
    assert steps[0] == 1 and steps == sorted(set(steps)) and 5 <= len(steps) <= 8, steps
    assert all(1 <= b - a <= 6 for a, b in zip(steps, steps[1:])) and steps[-1] >= 20, steps


def test_ptb_language_model_with_supervisor(tf_results):
    tf, wr = _tf(tf_results, "ptb_supervisor"), _weir("ptb_supervisor")
    # Training, validation (the same variables, found through variable_scope reuse), a checkpoint
    # restored by the second Supervisor: the perplexities agree epoch by epoch.
    np.testing.assert_allclose(wr["perplexities"], tf["perplexities"], rtol=1e-4)
    assert wr["step"] == tf["step"] == 116


def test_gan_with_scoped_var_lists(tf_results):
    tf, wr = _tf(tf_results, "gan"), _weir("gan")
    assert wr["d_vars"] == tf["d_vars"] and wr["g_vars"] == tf["g_vars"]
    np.testing.assert_allclose(wr["history"], tf["history"], rtol=RTOL)
    # Inference with the moving statistics. (With a bias before the batch norm, Adam would
    # amplify its gradient's rounding noise into the moving mean: the program has none.)
    np.testing.assert_allclose(wr["sample_mean"], tf["sample_mean"], rtol=RTOL)
