"""wr.train.Saver(sharded=True): one SaveV2 per variable device into <path>_temp, merged by
MergeV2Checkpoints into one checkpoint of several data files. Checked against TensorFlow 2.21
(a subprocess of /opt/weir-peers/bin/python) both ways, and on a cluster of weir-server
processes, where each ps task must write its own variables."""
import glob
import os
import pathlib
import socket
import subprocess
import textwrap
import time

import numpy as np
import pytest

import weir as wr
from weir.framework import ops
from weir.train import checkpoint_management as cm

from peers import PEERS_PYTHON

BUILD = pathlib.Path(os.environ.get("WEIR_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] /
                                    "build" / "release"))
SERVER = BUILD / "tools" / "weir-server"

DEVICES = ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
THREE_CPUS = {"device_count": {"CPU": 3}}

VALUES = {
    "w": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "layer/b": np.array([1.5, -2.5, 1e-300], np.float64),
    "step": np.int64(123456789012),
    "emb": np.array([[1, -2], [3, 2**31 - 1]], np.int32),
}
# Which device each variable is on: "w" and "layer/b" share one.
PLACES = {"w": DEVICES[1], "layer/b": DEVICES[1], "step": DEVICES[0], "emb": DEVICES[2]}


def run_peer(script, *args):
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip("TensorFlow peer venv %s is missing" % PEERS_PYTHON)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    done = subprocess.run([PEERS_PYTHON, "-c", textwrap.dedent(script)] + [str(a) for a in args],
                          capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def make_model(places=PLACES, initial=None):
    """The variables of VALUES on `places`, initialized to `initial` (zeros of their shapes
    when None); returns {name: variable}."""
    out = {}
    for name, value in VALUES.items():
        with wr.device(places[name]):
            init = np.zeros_like(value) if initial is None else initial[name]
            out[name] = wr.Variable(init, name=name, trainable=name != "step")
    return out


def read_all(sess, model):
    return {name: sess.run(v) for name, v in model.items()}


def assert_values(got, want):
    assert sorted(got) == sorted(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        assert np.asarray(got[name]).dtype == np.asarray(want[name]).dtype, name


def test_sharded_save_and_restore_across_devices(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    with ops.Graph().as_default():
        model = make_model(initial=VALUES)
        saver = wr.train.Saver(sharded=True, max_to_keep=1)
        assert saver.saver_def["sharded"] is True
        graph = ops.get_default_graph()
        saves = [op for op in graph.get_operations() if op.type == "SaveV2"]
        restores = [op for op in graph.get_operations() if op.type == "RestoreV2"]
        merges = [op for op in graph.get_operations() if op.type == "MergeV2Checkpoints"]
        # One SaveV2 and one RestoreV2 per variable device, on CPU:0 (of the one task here).
        assert len(saves) == len(restores) == 3 and len(merges) == 1
        assert {op.device for op in saves + restores + merges} == {"/device:CPU:0"}
        with wr.Session(config=wr.ConfigProto(**THREE_CPUS)) as sess:
            sess.run(wr.global_variables_initializer())
            path = saver.save(sess, prefix, global_step=5)
            assert path == prefix + "-5"
            # One checkpoint of 3 data files; the temporary directory is gone.
            assert sorted(os.listdir(tmp_path)) == sorted(
                ["checkpoint", "model.ckpt-5.index", "model.ckpt-5.meta"] +
                ["model.ckpt-5.data-%05d-of-00003" % i for i in range(3)])
            sess.run([v.assign(np.zeros_like(VALUES[n])) for n, v in model.items()])
            saver.restore(sess, path)
            assert_values(read_all(sess, model), VALUES)
            # keep-1 deletes every data file of the older checkpoint
            saver.save(sess, prefix, global_step=6)
            assert not glob.glob(prefix + "-5*")
            assert len(glob.glob(prefix + "-6.data-*-of-00003")) == 3
            assert cm.latest_checkpoint(str(tmp_path)) == prefix + "-6"
    # A new graph restores it, sharded or not, whatever the devices now are.
    for sharded, places in [(True, PLACES), (False, {n: "/device:CPU:0" for n in VALUES})]:
        with ops.Graph().as_default():
            model = make_model(places)
            saver = wr.train.Saver(sharded=sharded)
            with wr.Session(config=wr.ConfigProto(**THREE_CPUS)) as sess:
                saver.restore(sess, prefix + "-6")
                assert_values(read_all(sess, model), VALUES)
    # The .meta's SaverDef says sharded; importing it gives a working saver.
    with ops.Graph().as_default():
        imported = wr.train.import_meta_graph(prefix + "-6.meta")
        assert imported.saver_def["sharded"] is True
        with wr.Session(config=wr.ConfigProto(**THREE_CPUS)) as sess:
            imported.restore(sess, prefix + "-6")
            got = sess.run({n: n + "/Read/ReadVariableOp:0" for n in ["w", "emb"]})
            assert_values(got, {n: VALUES[n] for n in ["w", "emb"]})


def test_a_failed_sharded_save_keeps_the_previous_checkpoint(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    with ops.Graph().as_default():
        model = make_model(initial=VALUES)
        saver = wr.train.Saver(sharded=True)
        with wr.Session(config=wr.ConfigProto(**THREE_CPUS)) as sess:
            sess.run(wr.global_variables_initializer())
            saver.save(sess, prefix, write_meta_graph=False)
            sess.run(model["step"].assign(np.int64(1)))
            # The merge cannot put its index in place: the save fails, naming the prefix.
            os.rename(prefix + ".index", prefix + ".index.keep")
            os.makedirs(prefix + ".index/blocked")
            with pytest.raises(wr.errors.OpError) as info:
                saver.save(sess, prefix, write_meta_graph=False)
            assert prefix in str(info.value)
            os.rmdir(prefix + ".index/blocked")
            os.rmdir(prefix + ".index")
            os.rename(prefix + ".index.keep", prefix + ".index")
            # The part files went back to the temporary directory; the old checkpoint reads
            # back whole, with its old values.
            assert len(glob.glob(prefix + "_temp/part-*-of-00003.index")) == 3
            saver.restore(sess, prefix)
            assert sess.run(model["step"]) == VALUES["step"]


def test_checkpoints_exchanged_with_tensorflow(tmp_path):
    """One TensorFlow run: it reads weir's sharded checkpoint tensor by tensor, imports its
    .meta and runs the SaverDef's own save and restore ops (weir's graph, in TensorFlow), and
    writes a sharded checkpoint of its own Saver(sharded=True), which weir restores."""
    prefix = str(tmp_path / "weir" / "model.ckpt")
    with ops.Graph().as_default():
        make_model(initial=VALUES)
        saver = wr.train.Saver(sharded=True)
        with wr.Session(config=wr.ConfigProto(**THREE_CPUS)) as sess:
            sess.run(wr.global_variables_initializer())
            path = saver.save(sess, prefix, global_step=3)
    out = run_peer("""
        import glob, os, sys, numpy as np, tensorflow as tf
        path, d = sys.argv[1], sys.argv[2]
        os.makedirs(d + "/tf_again")  # TensorFlow's SaveV2 makes one directory level only
        os.makedirs(d + "/tf")
        r = tf.train.load_checkpoint(path)
        np.savez(d + "/tf_read.npz", **{k.replace("/", "__"): r.get_tensor(k)
                                        for k in r.get_variable_to_shape_map()})
        tf.compat.v1.disable_eager_execution()
        config = tf.compat.v1.ConfigProto(device_count={"CPU": 3})
        with tf.Graph().as_default():
            saver = tf.compat.v1.train.import_meta_graph(path + ".meta")
            print("sharded", saver.saver_def.sharded)
            with tf.compat.v1.Session(config=config) as sess:
                saver.restore(sess, path)
                again = saver.save(sess, d + "/tf_again/model.ckpt", write_meta_graph=False)
                print("again", again, len(glob.glob(again + ".data-*-of-00003")))
        with tf.Graph().as_default():
            vs = {}
            for name, device, value in [("w", "/cpu:1", np.full([3, 4], 2.5, np.float32)),
                                        ("layer/b", "/cpu:1", np.array([4.0, 5.0, 6.0])),
                                        ("step", "/cpu:0", np.int64(-9)),
                                        ("emb", "/cpu:2", np.array([[7, 8], [9, 10]], np.int32))]:
                with tf.device(device):
                    vs[name] = tf.compat.v1.Variable(value, name=name, use_resource=True)
            saver = tf.compat.v1.train.Saver(sharded=True)
            with tf.compat.v1.Session(config=config) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                tf_path = saver.save(sess, d + "/tf/model.ckpt", global_step=4)
                print("tf", tf_path, sorted(os.listdir(d + "/tf")))
    """, path, tmp_path)
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    assert lines["sharded"] == "True"
    tf_read = np.load(tmp_path / "tf_read.npz")
    assert_values({k.replace("__", "/"): tf_read[k] for k in tf_read.files},
                  {k: np.asarray(v) for k, v in VALUES.items()})
    # TensorFlow ran weir's sharded save graph: a 3-part checkpoint weir reads back.
    again_path, count = lines["again"].split()
    assert again_path == str(tmp_path / "tf_again" / "model.ckpt") and count == "3"
    with ops.Graph().as_default():
        model = make_model({n: "" for n in VALUES})
        with wr.Session() as sess:
            wr.train.Saver().restore(sess, again_path)
            assert_values(read_all(sess, model), VALUES)
    # TensorFlow's own sharded checkpoint, restored by weir's sharded saver.
    tf_path, listing = lines["tf"].split(" ", 1)
    assert tf_path == str(tmp_path / "tf" / "model.ckpt-4")
    assert "model.ckpt-4.data-00002-of-00003" in listing and "_temp" not in listing
    with ops.Graph().as_default():
        model = make_model()
        with wr.Session(config=wr.ConfigProto(**THREE_CPUS)) as sess:
            wr.train.Saver(sharded=True).restore(sess, tf_path)
            assert_values(read_all(sess, model), {
                "w": np.full([3, 4], 2.5, np.float32), "layer/b": np.array([4.0, 5.0, 6.0]),
                "step": np.int64(-9), "emb": np.array([[7, 8], [9, 10]], np.int32)})


def test_string_join(tmp_path):
    with ops.Graph().as_default():
        prefix = wr.placeholder(wr.string, [])
        joined = wr.strings.join([prefix, "_temp/part"])
        rows = wr.string_join([["a", "b"], "-", wr.constant(["1", "2"])], separator="|")
        with wr.Session() as sess:
            assert sess.run(joined, {prefix: "/d/ckpt"}) == b"/d/ckpt_temp/part"
            assert list(sess.run(rows)) == [b"a|-|1", b"b|-|2"]
        with pytest.raises(wr.errors.InvalidArgumentError, match=r"\[2\] and input 1's \[3\]"):
            wr.string_join([["a", "b"], ["c", "d", "e"]])  # seen when the graph is built


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ps_cluster():
    """weir-server processes: one worker task and two ps tasks."""
    if not SERVER.exists():
        pytest.fail(f"{SERVER} is missing: build the weir-server target (WEIR_BUILD_DIR={BUILD})")
    addresses = {"worker": [f"127.0.0.1:{_free_port()}"],
                 "ps": [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"]}
    spec = ";".join(f"{job}={','.join(tasks)}" for job, tasks in addresses.items())
    procs = [subprocess.Popen([str(SERVER), "--cluster", spec, "--job", job, "--task", str(i)],
                              stderr=subprocess.DEVNULL)
             for job, tasks in addresses.items() for i in range(len(tasks))]
    try:
        for address in addresses["worker"] + addresses["ps"]:
            host, port = address.split(":")
            for _ in range(200):
                try:
                    socket.create_connection((host, int(port)), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                pytest.fail(f"weir-server at {address} did not come up")
        yield "grpc://" + addresses["worker"][0]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_each_ps_task_saves_its_own_variables(ps_cluster, tmp_path):
    places = {"w": "/job:ps/task:0", "layer/b": "/job:ps/task:0", "step": "/job:ps/task:1",
              "emb": "/job:ps/task:1"}
    prefix = str(tmp_path / "model.ckpt-8")
    with ops.Graph().as_default():
        model = make_model(places, initial=VALUES)
        with wr.device("/job:worker/task:0"):
            saver = wr.train.Saver(sharded=True)
        saver_def = saver.saver_def
        with wr.Session(ps_cluster) as sess:
            sess.run(wr.global_variables_initializer())
            md = wr.RunMetadata()
            sess.run(saver_def["save_tensor_name"], {saver_def["filename_tensor_name"]: prefix},
                     options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE),
                     run_metadata=md)
            ran_on = {}
            for s in md.step_stats:
                if s.op in ("SaveV2", "MergeV2Checkpoints"):
                    ran_on.setdefault(s.op, set()).add(s.device)
            ps = "/job:ps/replica:0/task:%d/device:CPU:0"
            assert ran_on == {"SaveV2": {ps % 0, ps % 1}, "MergeV2Checkpoints": {ps % 1}}
            assert sorted(os.listdir(tmp_path)) == [
                "model.ckpt-8.data-00000-of-00002", "model.ckpt-8.data-00001-of-00002",
                "model.ckpt-8.index"]
            sess.run([v.assign(np.zeros_like(VALUES[n])) for n, v in model.items()])
            md = wr.RunMetadata()
            sess.run(saver_def["restore_op_name"], {saver_def["filename_tensor_name"]: prefix},
                     options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE),
                     run_metadata=md)
            assert {s.device for s in md.step_stats if s.op == "RestoreV2"} == {ps % 0, ps % 1}
            assert_values(read_all(sess, model), VALUES)
    out = run_peer("""
        import sys, numpy as np, tensorflow as tf
        r = tf.train.load_checkpoint(sys.argv[1])
        np.savez(sys.argv[2], **{k.replace("/", "__"): r.get_tensor(k)
                                 for k in r.get_variable_to_shape_map()})
    """, prefix, tmp_path / "tf_read.npz")
    tf_read = np.load(tmp_path / "tf_read.npz")
    assert_values({k.replace("__", "/"): tf_read[k] for k in tf_read.files},
                  {k: np.asarray(v) for k, v in VALUES.items()})
