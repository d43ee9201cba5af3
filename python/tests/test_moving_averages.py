"""wr.train.ExponentialMovingAverage against TensorFlow 2.21's
tf.compat.v1.train.ExponentialMovingAverage: one program runs under both (TF
in a subprocess with the peers' interpreter) and the shadow variables' names,
collections, restore maps and values after several applies (plain decay,
num_updates, zero_debias on a tensor) must be the same; then Weir restores
the shadow values from the checkpoint TensorFlow wrote, through
variables_to_restore(). Weir's own checks: a closed-form average, placement
with the variable under another device scope, argument errors."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON  # noqa: E402

MODEL = textwrap.dedent('''
    def build():
        w = v1.Variable(np.array([1.0, -2.0, 3.0], np.float32), name="w")
        b = v1.Variable(np.float64(0.5), name="b")
        step = v1.Variable(np.int64(0), name="step", trainable=False)
        x = v1.placeholder(tf.float32, [3], name="x")
        updates = [w.assign_add(x), b.assign(b * 1.5 - 0.125), step.assign_add(1)]
        loss = tf.reduce_sum(w * w, name="loss")
        ema = v1.train.ExponentialMovingAverage(0.9, name="ema")
        ema_n = v1.train.ExponentialMovingAverage(0.99, num_updates=step, name="ema_n")
        ema_z = v1.train.ExponentialMovingAverage(0.8, zero_debias=True, name="ema_z")
        with v1.control_dependencies(updates):
            apply = ema.apply([w, b])
        apply_n = ema_n.apply([w, b])
        apply_z = ema_z.apply([w, loss])
        return dict(w=w, b=b, step=step, x=x, loss=loss, ema=ema, ema_n=ema_n, ema_z=ema_z,
                    apply=apply, apply_n=apply_n, apply_z=apply_z)
''')

PROGRAM = textwrap.dedent('''
    import json, sys
    import numpy as np
    out = {}
    g = tf.Graph()
    with g.as_default():
        m = build()
        w, b, step, loss = m["w"], m["b"], m["step"], m["loss"]
        ema, ema_n, ema_z = m["ema"], m["ema_n"], m["ema_z"]
        shadows = [ema.average(w), ema.average(b), ema_n.average(w), ema_n.average(b),
                   ema_z.average(w), ema_z.average(loss)]
        out["names"] = [s.op.name for s in shadows]
        out["trainable"] = [s.trainable for s in shadows]
        out["missing"] = ema.average(step) is None
        out["average_names"] = [ema.average_name(w), ema_n.average_name(b),
                                ema.average_name(step)]
        out["collection"] = sorted(v.op.name for v in v1.moving_average_variables())
        out["globals"] = sorted(v.op.name for v in v1.global_variables())
        out["restore"] = sorted([k, v.op.name] for k, v in ema.variables_to_restore().items())
        out["restore_w"] = sorted([k, v.op.name] for k, v in ema.variables_to_restore([w]).items())
        try:
            ema.apply([step])
            out["int_error"] = None
        except TypeError:
            out["int_error"] = "TypeError"
        init = v1.global_variables_initializer()
        saver = v1.train.Saver()
        rng = np.random.RandomState(3)
        log = []
        with v1.Session() as sess:
            sess.run(init)
            log.append([np.asarray(v).tolist() for v in sess.run(shadows)])
            for i in range(5):
                sess.run(m["apply"], {m["x"]: rng.randn(3).astype(np.float32)})
                sess.run(m["apply_n"])
                sess.run(m["apply_z"])
                log.append([np.asarray(v).tolist() for v in sess.run(shadows + [w, b, loss])])
            if len(sys.argv) > 1:
                saver.save(sess, sys.argv[1])
        out["log"] = log
    print("RESULT " + json.dumps(out))
''')

TF_HEADER = "import tensorflow as tf\nv1 = tf.compat.v1\nv1.disable_eager_execution()\n"
WEIR_HEADER = "import weir as tf\nv1 = tf\n"


def _run(python, header, env, *args):
    proc = subprocess.run([python, "-c", header + MODEL + PROGRAM] + list(args), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def tensorflow_run(tmp_path_factory):
    if not os.path.exists(PEERS_PYTHON):
        pytest.fail(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (scripts/install_deps.sh)")
    prefix = str(tmp_path_factory.mktemp("ema_tf") / "model.ckpt")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_ENABLE_ONEDNN_OPTS="0")
    env.pop("PYTHONPATH", None)
    return _run(PEERS_PYTHON, TF_HEADER, env, prefix), prefix


def test_matches_tensorflow(tensorflow_run):
    tf_out, _ = tensorflow_run
    weir_out = _run(sys.executable, WEIR_HEADER, dict(os.environ))
    assert tf_out["names"] == ["w/ema", "b/ema", "w/ema_n", "b/ema_n", "w/ema_z", "loss/ema_z"]
    for key in ("names", "trainable", "missing", "average_names", "collection", "globals",
                "restore", "restore_w", "int_error"):
        assert weir_out[key] == tf_out[key], key
    assert len(weir_out["log"]) == len(tf_out["log"]) == 6
    for step, (w_row, t_row) in enumerate(zip(weir_out["log"], tf_out["log"])):
        for i, (got, want) in enumerate(zip(w_row, t_row)):
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6,
                                       err_msg=f"step {step} value {i}")


def test_restores_shadows_tensorflow_wrote(tensorflow_run):
    """A Saver of variables_to_restore() loads each variable with its moving
    average from TensorFlow's checkpoint (and the step under its own name)."""
    tf_out, prefix = tensorflow_run
    last = tf_out["log"][-1]
    namespace = {"tf": wr, "v1": wr, "np": np}
    exec(MODEL, namespace)
    with wr.Graph().as_default():
        m = namespace["build"]()
        restore = m["ema"].variables_to_restore()
        assert restore["w/ema"] is m["w"] and restore["b/ema"] is m["b"]
        assert restore["step"] is m["step"]
        saver = wr.train.Saver(restore)
        with wr.Session() as sess:
            saver.restore(sess, prefix)
            w, b, step = sess.run([m["w"], m["b"], m["step"]])
            np.testing.assert_array_equal(w, np.float32(last[0]))  # TF's shadow of w
            assert b == np.float64(last[1])
            assert step == 5
            # ema_n's shadows are not averaged by `ema`: they load under their own names.
            np.testing.assert_array_equal(sess.run(m["ema_n"].average(m["w"])),
                                          np.float32(last[2]))


def test_closed_form_and_colocation():
    """Under a device scope other than the variable's, the shadow lives with
    the variable; each apply moves it by (1 - decay) of the gap."""
    with wr.Graph().as_default() as g:
        with wr.device("/device:CPU:1"):
            v = wr.Variable(np.float32(10.0), name="v")
        with wr.device("/device:CPU:0"):
            ema = wr.train.ExponentialMovingAverage(0.75)
            apply = ema.apply([v])
            set_v = v.assign(2.0)
        shadow = ema.average(v)
        assert shadow.op.name == "v/ExponentialMovingAverage"
        assert shadow.device == v.device == "/device:CPU:1"
        assert ema.average_name(v) == "v/ExponentialMovingAverage"
        assert shadow not in wr.trainable_variables()
        assert wr.get_collection(wr.GraphKeys.MOVING_AVERAGE_VARIABLES) == [v]
        with pytest.raises(TypeError, match="half, float, or double"):
            ema.apply([wr.Variable(1, name="count")])
        with wr.Session(graph=g, config=wr.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(wr.global_variables_initializer())
            assert sess.run(shadow) == 10.0
            sess.run(set_v)
            expected = 10.0
            for _ in range(4):
                sess.run(apply)
                expected = expected - (expected - 2.0) * 0.25
                assert sess.run(shadow) == pytest.approx(expected, rel=1e-6)
