"""wr.train.Saver: save/restore, keep-N, the checkpoint state file, errors, and
checkpoints exchanged with TensorFlow 2.21 (both ways, in a subprocess of
/opt/weir-peers/bin/python)."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr
from weir.framework import errors
from weir.framework import ops
from weir.train import checkpoint_management as cm

from peers import PEERS_PYTHON as PEER_PYTHON  # noqa: E402


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


def make_model():
    w = wr.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    b = wr.Variable(np.array([1.5, -2.5], np.float64), name="layer/b")
    step = wr.Variable(np.int64(7), name="step", trainable=False)
    return w, b, step


def test_save_restore_round_trip(graph, tmp_path):
    w, b, step = make_model()
    saver = wr.train.Saver()
    prefix = str(tmp_path / "model.ckpt")
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        path = saver.save(sess, prefix, global_step=3)
        assert path == prefix + "-3"
        assert os.path.exists(path + ".index")
        assert os.path.exists(path + ".data-00000-of-00001")
        assert os.path.exists(path + ".meta")
        sess.run([w.assign(np.zeros([2, 3], np.float32)), b.assign([0.0, 0.0]),
                  step.assign(np.int64(0))])
        # a global step given as a variable is read at save time
        assert saver.save(sess, prefix, global_step=step, write_meta_graph=False) == \
            prefix + "-0"
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(sess.run(b), [1.5, -2.5])
        assert sess.run(step) == 7
    assert cm.latest_checkpoint(str(tmp_path)) == prefix + "-0"
    state = cm.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == prefix + "-0"
    assert state.all_model_checkpoint_paths == [path, prefix + "-0"]
    # restoring in a fresh session of a new graph: the values come from the file only
    with ops.Graph().as_default():
        w2, b2, step2 = make_model()
        saver2 = wr.train.Saver()
        with wr.Session() as sess:
            saver2.restore(sess, path)
            np.testing.assert_array_equal(sess.run(b2), [1.5, -2.5])
            saver2.restore(sess, cm.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(b2), [0.0, 0.0])
            assert not os.path.exists(str(tmp_path / "checkpoint.tmp"))


def test_keep_n_and_state_file(graph, tmp_path):
    (w, _, _) = make_model()
    saver = wr.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "m")
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        paths = [saver.save(sess, prefix, global_step=s) for s in (1, 2, 3, 4)]
    assert saver.last_checkpoints == paths[2:]
    for p in paths[:2]:
        assert not cm.checkpoint_exists(p)
        assert not os.path.exists(p + ".data-00000-of-00001")
        assert not os.path.exists(p + ".meta")
    for p in paths[2:]:
        assert cm.checkpoint_exists(p)
    state = cm.get_checkpoint_state(str(tmp_path))
    assert state.all_model_checkpoint_paths == paths[2:]
    assert len(state.all_model_checkpoint_timestamps) == 2
    text = (tmp_path / "checkpoint").read_text()
    assert text.splitlines()[0] == 'model_checkpoint_path: "%s"' % paths[3]
    assert [f for f in os.listdir(tmp_path) if ".tmp" in f] == []
    # recover_last_checkpoints resumes the bookkeeping of a new Saver
    saver2 = wr.train.Saver(max_to_keep=2)
    saver2.recover_last_checkpoints(state.all_model_checkpoint_paths)
    assert saver2.last_checkpoints == paths[2:]
    # a newest checkpoint whose files are gone: latest_checkpoint falls back
    cm.remove_checkpoint(paths[3])
    assert cm.latest_checkpoint(str(tmp_path)) == paths[2]


def test_keep_checkpoint_every_n_hours(graph, tmp_path):
    make_model()
    # A period of ~0 hours: every checkpoint pushed out of the newest 1 is kept.
    saver = wr.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-9)
    keep_none = wr.train.Saver(max_to_keep=None)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        paths = [saver.save(sess, str(tmp_path / "k"), global_step=s, write_meta_graph=False)
                 for s in (1, 2, 3)]
        all_paths = [keep_none.save(sess, str(tmp_path / "all"), global_step=s,
                                    latest_filename="all_state") for s in (1, 2, 3)]
    assert saver.last_checkpoints == paths[2:]
    assert all(cm.checkpoint_exists(p) for p in paths)
    assert all(cm.checkpoint_exists(p) for p in all_paths)
    assert cm.get_checkpoint_state(str(tmp_path), "all_state").all_model_checkpoint_paths == \
        all_paths
    assert cm.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == paths[2:]


def test_pad_and_relative_paths(graph, tmp_path):
    make_model()
    saver = wr.train.Saver(pad_step_number=True, save_relative_paths=True)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "ck"), global_step=12, write_meta_graph=False)
    assert path.endswith("ck-00000012")
    assert 'model_checkpoint_path: "ck-00000012"' in (tmp_path / "checkpoint").read_text()
    assert cm.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ck-00000012")
    assert not os.path.exists(path + ".meta")


def test_restore_errors(graph, tmp_path):
    w, b, _ = make_model()
    saver = wr.train.Saver([w])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "only_w"))
        missing = wr.train.Saver({"no_such_key": b})
        with pytest.raises(errors.NotFoundError) as info:
            missing.restore(sess, path)
        assert "no_such_key" in str(info.value)
        with pytest.raises(ValueError, match="not a valid checkpoint"):  # TF 2.21's class
            saver.restore(sess, str(tmp_path / "nothing_here"))
        wrong_shape = wr.Variable(np.zeros([3, 2], np.float32), name="other")
        with pytest.raises(errors.InvalidArgumentError) as info:
            wr.train.Saver({"w": wrong_shape}).restore(sess, path)
        assert "other" in str(info.value)
    assert [k for k, _ in wr.train.Saver([w, w, b])._saveables()] == ["layer/b", "w"]
    with pytest.raises(TypeError):
        wr.train.Saver([wr.constant(1.0)])
    with pytest.raises(ValueError, match="No variables to save"):
        with ops.Graph().as_default():
            wr.train.Saver()
    with wr.Session() as sess:
        sess.run(w.initializer)
        # missing directories are created (as SaveV2 does) ...
        assert cm.checkpoint_exists(saver.save(sess, str(tmp_path / "new" / "dir" / "x")))
        # ... but a parent that cannot be one is TF's ValueError
        (tmp_path / "a_file").write_text("")
        with pytest.raises(ValueError, match="Parent directory"):
            saver.save(sess, str(tmp_path / "a_file" / "x"))


def test_import_meta_graph(graph, tmp_path):
    w, b, _ = make_model()
    saver = wr.train.Saver()
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "meta"), global_step=1)
    with ops.Graph().as_default() as g2:
        restored = wr.train.import_meta_graph(path + ".meta")
        assert g2.get_operation_by_name("w").type == "VarHandleOp"
        with wr.Session() as sess:
            restored.restore(sess, path)
            np.testing.assert_array_equal(sess.run("w/Read/ReadVariableOp:0"),
                                          np.arange(6).reshape(2, 3))
            again = restored.save(sess, str(tmp_path / "again"))
        assert cm.checkpoint_exists(again)


def test_checkpoint_state_text_round_trip(tmp_path):
    d = str(tmp_path)
    cm.update_checkpoint_state(d, os.path.join(d, 'we"ird\\ päth-2'),
                               [os.path.join(d, "a-1"), os.path.join(d, 'we"ird\\ päth-2')])
    state = cm.get_checkpoint_state(d)
    assert state.model_checkpoint_path == os.path.join(d, 'we"ird\\ päth-2')
    assert state.all_model_checkpoint_paths[0] == os.path.join(d, "a-1")
    assert cm.get_checkpoint_state(str(tmp_path / "absent")) is None
    assert cm.latest_checkpoint(d) is None  # the files do not exist


# --- TensorFlow interop ----------------------------------------------------------------

W0 = np.array([1.0, 2.0, -1.0], np.float32)
C = np.array([0.5, 1.0, 2.0], np.float32)
D = np.array([1.0, -1.0, 0.25], np.float32)
# Each optimizer as source, so TensorFlow's run builds the same ones.
OPTIMIZER_SOURCE = """{
    "sgd": lambda t: t.GradientDescentOptimizer(0.1),
    "nesterov": lambda t: t.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda t: t.AdagradOptimizer(0.3, initial_accumulator_value=0.2),
    "rmsprop": lambda t: t.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5),
    "centered": lambda t: t.RMSPropOptimizer(0.01, momentum=0.5, epsilon=1e-6, centered=True),
    "adam": lambda t: t.AdamOptimizer(0.1, beta1=0.8, beta2=0.9),
}"""
OPTIMIZERS = eval(OPTIMIZER_SOURCE)


def run_peer(script, tmp_path, substitutions=None):
    if not os.path.exists(PEER_PYTHON):
        pytest.skip("TensorFlow peer venv %s is missing" % PEER_PYTHON)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    script = textwrap.dedent(script)
    for key, value in (substitutions or {}).items():
        script = script.replace(key, value)
    done = subprocess.run([PEER_PYTHON, "-c", script, str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_checkpoints_exchanged_with_tensorflow(graph, tmp_path):
    """One TensorFlow run (its import dominates): it reads weir's checkpoint,
    its state file and .meta, then writes a checkpoint with
    tf.compat.v1.train.Saver that weir restores; and, while it is loaded, it
    trains 3 steps with each optimizer so weir's values and variable names
    (slots, beta powers, global step) are checked against TensorFlow's own."""
    weir_dir = tmp_path / "weir"
    tf_dir = tmp_path / "tf"
    weir_dir.mkdir()
    tf_dir.mkdir()
    w, b, step = make_model()
    saver = wr.train.Saver()
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        sess.run(w.assign_add(np.full([2, 3], 0.25, np.float32)))
        saver.save(sess, str(weir_dir / "weir.ckpt"), global_step=5)
    out = run_peer("""
        import sys, numpy as np, tensorflow as tf
        d = sys.argv[1]
        W0 = np.array([1.0, 2.0, -1.0], np.float32)
        C = np.array([0.5, 1.0, 2.0], np.float32)
        D = np.array([1.0, -1.0, 0.25], np.float32)
        path = tf.train.latest_checkpoint(d + "/weir")
        r = tf.train.load_checkpoint(path)
        types = r.get_variable_to_dtype_map()
        print(path)
        print(sorted(types))
        np.save(d + "/w.npy", r.get_tensor("w"))
        np.save(d + "/b.npy", r.get_tensor("layer/b"))
        print(r.get_tensor("step"), types["w"].name, types["layer/b"].name, types["step"].name)
        meta = tf.compat.v1.MetaGraphDef()
        meta.ParseFromString(open(path + ".meta", "rb").read())
        print(meta.saver_def.restore_op_name, meta.saver_def.filename_tensor_name,
              sorted(n.name for n in meta.graph_def.node if n.op == "VarHandleOp"))

        tf.compat.v1.disable_eager_execution()
        w = tf.compat.v1.get_variable("w", initializer=np.full([2, 3], 3.5, np.float32))
        b = tf.compat.v1.get_variable("layer/b", initializer=np.array([9.0, 8.0]))
        step = tf.compat.v1.Variable(np.int64(42), name="step")
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            print(saver.save(sess, d + "/tf/tf.ckpt", global_step=11))

        # While TensorFlow is loaded: 3 steps of each optimizer, values and names.
        for key, make in OPTIMIZERS.items():
            with tf.Graph().as_default():
                w = tf.compat.v1.get_variable("w", initializer=W0)
                loss = tf.reduce_sum(C * w * w + D * w)
                gs = tf.compat.v1.train.get_or_create_global_step()
                train = make(tf.compat.v1.train).minimize(loss, global_step=gs)
                with tf.compat.v1.Session() as sess:
                    sess.run(tf.compat.v1.global_variables_initializer())
                    for _ in range(3):
                        sess.run(train)
                    values = sess.run({v.op.name: v for v in tf.compat.v1.global_variables()})
                np.savez(d + "/opt_" + key + ".npz", **values)
    """, tmp_path, {"OPTIMIZERS": OPTIMIZER_SOURCE})
    lines = out.strip().splitlines()
    assert lines[0] == str(weir_dir / "weir.ckpt-5")
    assert lines[1] == "['layer/b', 'step', 'w']"
    assert lines[2] == "7 float32 float64 int64"
    assert lines[3] == "save/restore_all save/Const:0 ['layer/b', 'step', 'w']"
    np.testing.assert_array_equal(np.load(tmp_path / "w.npy"),
                                  np.arange(6, dtype=np.float32).reshape(2, 3) + 0.25)
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), [1.5, -2.5])

    for key, make in OPTIMIZERS.items():
        expected = dict(np.load(tmp_path / ("opt_%s.npz" % key)))
        assert {"w", "global_step"} <= set(expected), key
        assert len(expected) >= (2 if key == "sgd" else 3), key
        with ops.Graph().as_default():
            w = wr.get_variable("w", initializer=W0)
            loss = wr.reduce_sum(C * w * w + D * w)
            gs = wr.train.get_or_create_global_step()
            train = make(wr.train).minimize(loss, global_step=gs)
            with wr.Session() as sess:
                sess.run(wr.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                got = sess.run({v.op.name: v for v in wr.global_variables()})
        assert sorted(got) == sorted(expected), key  # TF's slot and state variable names
        for name in expected:
            np.testing.assert_allclose(got[name], expected[name], rtol=2e-6, atol=1e-7,
                                       err_msg="%s: %s" % (key, name))

    latest = cm.latest_checkpoint(str(tf_dir))  # TensorFlow's state file
    assert latest == str(tf_dir / "tf.ckpt-11") == lines[4]
    with ops.Graph().as_default():
        w, b, step = make_model()
        saver = wr.train.Saver()
        with wr.Session() as sess:
            saver.restore(sess, latest)
            np.testing.assert_array_equal(sess.run(w), np.full([2, 3], 3.5, np.float32))
            np.testing.assert_array_equal(sess.run(b), [9.0, 8.0])
            assert sess.run(step) == 42
