"""wr.ConditionalAccumulator against TensorFlow 2.21's
tf.compat.v1.ConditionalAccumulator: one program runs under both (TF in a
subprocess with the peers' interpreter) on the same inputs, and every
fetched value, error class and static shape must be the same. Then Weir's
own checks: a blocked take_grad ends at the step's timeout."""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import weir as wr
from weir.framework import errors

from peers import PEERS_PYTHON  # noqa: E402

PROGRAM = textwrap.dedent('''
    import json
    import numpy as np
    out = {}
    g = tf.Graph()
    with g.as_default():
        accs = {
            "mean32": v1.ConditionalAccumulator(tf.float32, shape=[2, 2], name="mean32"),
            "sum64": v1.ConditionalAccumulator(tf.float64, shape=[3], reduction_type="SUM",
                                               name="sum64"),
            "any": v1.ConditionalAccumulator(tf.float32, name="any"),
        }
        out["names"] = [accs[k].name for k in sorted(accs)]
        out["dtypes"] = [accs[k].dtype.name for k in sorted(accs)]
        step = v1.placeholder(tf.int64, [])
        grads = {"mean32": v1.placeholder(tf.float32, [2, 2]),
                 "sum64": v1.placeholder(tf.float64, [3]),
                 "any": v1.placeholder(tf.float32, None)}
        apply = {k: accs[k].apply_grad(grads[k], local_step=step) for k in accs}
        take = {k: accs[k].take_grad(2) for k in accs}
        take1 = {k: accs[k].take_grad(1) for k in accs}
        num = {k: accs[k].num_accumulated() for k in accs}
        new_step = v1.placeholder(tf.int64, [])
        set_step = {k: accs[k].set_global_step(new_step) for k in accs}
        out["take_shapes"] = [take[k].shape.as_list() if take[k].shape.rank is not None else None
                              for k in sorted(accs)]
        try:
            accs["mean32"].apply_grad(np.ones([3], np.float32))
            out["static_shape_error"] = None
        except ValueError:
            out["static_shape_error"] = "ValueError"
        bad_n = accs["mean32"].take_grad(0)
        rng = np.random.RandomState(7)
        g32 = [rng.randn(2, 2).astype(np.float32) for _ in range(4)]
        g64 = [rng.randn(3) for _ in range(4)]
        with v1.Session() as sess:
            log = []
            def run(fetch, feed=None):
                try:
                    value = sess.run(fetch, feed)
                    log.append(np.asarray(value).tolist())
                except tf.errors.OpError as e:
                    log.append(type(e).__name__)
            for k, gs in (("mean32", g32), ("sum64", g64)):
                run(apply[k], {step: 0, grads[k]: gs[0]})
                run(apply[k], {step: 0, grads[k]: gs[1]})
                run(apply[k], {step: 0, grads[k]: gs[2]})
                run(num[k])
                run(take[k])                                   # mean/sum of three
                run(num[k])
                run(apply[k], {step: 0, grads[k]: gs[3]})      # stale after the take
                run(num[k])
                run(apply[k], {step: 1, grads[k]: gs[3]})
                run(apply[k], {step: 5, grads[k]: gs[0]})
                run(take1[k])
                run(set_step[k], {new_step: 10})
                run(apply[k], {step: 9, grads[k]: gs[1]})      # stale
                run(apply[k], {step: 10, grads[k]: gs[2]})
                run(num[k])
                run(take1[k])
                run(set_step[k], {new_step: 3})                # back: allowed
                run(apply[k], {step: 3, grads[k]: gs[0]})
                run(num[k])
            run(apply["any"], {step: 0, grads["any"]: np.ones([4], np.float32)})
            run(apply["any"], {step: 0, grads["any"]: np.ones([5], np.float32)})  # mismatch
            run(apply["any"], {step: 0, grads["any"]: np.full([4], 3, np.float32)})
            run(take["any"])
            run(apply["mean32"], {step: 20, grads["mean32"]: g32[0]})
            run(bad_n)
            out["log"] = log

        # The sparse accumulator, on sorted indices without repeats (where
        # TensorFlow's merge is defined).
        sparse = v1.SparseConditionalAccumulator(tf.float32, shape=[4, 2], name="sparse")
        sparse_sum = v1.SparseConditionalAccumulator(tf.float64, reduction_type="SUM",
                                                     name="sparse_sum")
        out["sparse_names"] = [sparse.name, sparse_sum.name]
        idx = v1.placeholder(tf.int64, [None])
        val32 = v1.placeholder(tf.float32, None)
        val64 = v1.placeholder(tf.float64, None)
        s_apply = sparse.apply_grad(idx, val32, local_step=step)
        s_apply_shaped = sparse_sum.apply_grad(idx, val64, grad_shape=[5, 3], local_step=step)
        s_take = sparse.take_grad(2)
        s_take_sum = sparse_sum.take_indexed_slices_grad(1)
        s_num = sparse.num_accumulated()
        s_set = sparse.set_global_step(new_step)
        with v1.Session() as sess:
            slog = []
            def run_all(fetch, feed=None):
                try:
                    value = sess.run(fetch, feed)
                    if value is None:
                        slog.append(None)
                    elif isinstance(value, tuple):
                        slog.append([np.asarray(v).tolist() for v in value])
                    else:
                        slog.append(np.asarray(value).tolist())
                except tf.errors.OpError as e:
                    slog.append(type(e).__name__)
            run_all(s_apply, {idx: [1, 3], val32: [[1, 2], [3, 4]], step: 0})
            run_all(s_apply, {idx: [0, 1], val32: [[10, 20], [30, 40]], step: 0})
            run_all(s_num)
            run_all(tuple(s_take))
            run_all(s_apply, {idx: [2], val32: [[5, 5]], step: 0})       # stale
            run_all(s_num)
            run_all(s_apply, {idx: [4], val32: [[1, 2]], step: 1})       # index out of range
            run_all(s_apply, {idx: [2], val32: [[1, 2, 3]], step: 1})    # row shape
            run_all(s_set, {new_step: 7})
            run_all(s_apply, {idx: [2], val32: [[5, 5]], step: 6})       # stale
            run_all(s_apply, {idx: [], val32: np.zeros([0, 2]), step: 7})
            run_all(s_apply, {idx: [0, 2], val32: [[1, 1], [2, 4]], step: 7})
            run_all(tuple(s_take))
            run_all(s_apply_shaped, {idx: [0, 4], val64: [[1, 2, 3], [4, 5, 6]], step: 0})
            run_all((s_take_sum.indices, s_take_sum.values, s_take_sum.dense_shape))
            out["sparse_log"] = slog
    print("RESULT " + json.dumps(out))
''')

TF_HEADER = "import tensorflow as tf\nv1 = tf.compat.v1\nv1.disable_eager_execution()\n"
WEIR_HEADER = "import weir as tf\nv1 = tf\n"


def _run(python, header, env):
    proc = subprocess.run([python, "-c", header + PROGRAM], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def test_accumulator_matches_tensorflow():
    if not os.path.exists(PEERS_PYTHON):
        pytest.fail(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (scripts/install_deps.sh)")
    tf_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
                  TF_ENABLE_ONEDNN_OPTS="0")
    tf_env.pop("PYTHONPATH", None)
    tf_out = _run(PEERS_PYTHON, TF_HEADER, tf_env)
    weir_out = _run(sys.executable, WEIR_HEADER, dict(os.environ))
    assert weir_out["names"] == tf_out["names"] == ["any", "mean32", "sum64"]
    assert weir_out["dtypes"] == tf_out["dtypes"]
    assert weir_out["take_shapes"] == tf_out["take_shapes"]
    assert weir_out["static_shape_error"] == tf_out["static_shape_error"] == "ValueError"
    tf_log, weir_log = tf_out["log"], weir_out["log"]
    assert len(weir_log) == len(tf_log)
    for i, (w, t) in enumerate(zip(weir_log, tf_log)):
        if isinstance(t, str) or t is None:
            assert w == t, (i, w, t)
        else:
            np.testing.assert_allclose(np.asarray(w, np.float64), np.asarray(t, np.float64),
                                       rtol=1e-6, err_msg=str(i))
    assert weir_out["sparse_names"] == tf_out["sparse_names"]
    tf_slog, weir_slog = tf_out["sparse_log"], weir_out["sparse_log"]
    assert len(weir_slog) == len(tf_slog)
    for i, (w, t) in enumerate(zip(weir_slog, tf_slog)):
        if isinstance(t, list) and t and isinstance(t[0], list):
            assert isinstance(w, list) and len(w) == len(t), (i, w, t)
            for wv, tv in zip(w, t):
                np.testing.assert_allclose(np.asarray(wv, np.float64), np.asarray(tv, np.float64),
                                           rtol=1e-6, err_msg=str(i))
        else:
            assert w == t, (i, w, t)
    assert tf_slog.count("InvalidArgumentError") == 2
    assert tf_slog[3][0] == [0, 1, 3]  # indices of the first take
    # The log holds real work: means, sums, drops and errors, not only Nones.
    assert tf_log.count("InvalidArgumentError") == 2
    assert 3 in tf_log and 0 in tf_log


def test_mean_sum_and_stale_against_hand_values():
    with wr.Graph().as_default():
        acc = wr.ConditionalAccumulator(wr.float32, shape=[2], reduction_type="SUM")
        step = wr.placeholder(wr.int64, [])
        grad = wr.placeholder(wr.float32, [2])
        apply = acc.apply_grad(grad, local_step=step)
        take = acc.take_grad(2)
        with wr.Session() as sess:
            sess.run(apply, {step: 0, grad: [1, 2]})
            sess.run(apply, {step: 0, grad: [10, 20]})
            np.testing.assert_array_equal(sess.run(take), [11, 22])
            sess.run(apply, {step: 0, grad: [5, 5]})  # the take advanced the step to 1
            assert sess.run(acc.num_accumulated()) == 0


def test_blocked_take_ends_at_the_step_timeout():
    with wr.Graph().as_default():
        acc = wr.ConditionalAccumulator(wr.float32, shape=[])
        take = acc.take_grad(1)
        with wr.Session() as sess:
            start = time.monotonic()
            with pytest.raises((errors.DeadlineExceededError, errors.CancelledError)):
                sess.run(take, options=wr.RunOptions(timeout_in_ms=200))
            assert time.monotonic() - start < 10
            sess.run(acc.apply_grad(np.float32(4.0)))
            assert sess.run(take) == 4.0


def test_hostile_num_required_is_an_error_naming_the_node():
    with wr.Graph().as_default():
        acc = wr.ConditionalAccumulator(wr.float64, shape=[1], name="acc")
        n = wr.placeholder(wr.int32, [])
        take = acc.take_grad(n, name="take_n")
        with wr.Session() as sess:
            for bad in (0, -5, -2 ** 31):
                with pytest.raises(errors.InvalidArgumentError,
                                   match="take_n.*num_required must be positive"):
                    sess.run(take, {n: bad})


EXPORT_PROGRAM = textwrap.dedent('''
    import base64, json
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1
    v1.disable_eager_execution()
    g = tf.Graph()
    with g.as_default():
        step = v1.placeholder(tf.int64, [], name="step")
        grad = v1.placeholder(tf.float32, [3], name="grad")
        idx = v1.placeholder(tf.int64, [None], name="idx")
        rows = v1.placeholder(tf.float32, [None, 2], name="rows")
        dense = v1.ConditionalAccumulator(tf.float32, shape=[3], name="dense")
        sparse = v1.SparseConditionalAccumulator(tf.float32, shape=[5, 2], name="sparse")
        dense.apply_grad(grad, local_step=step, name="dense_apply")
        tf.identity(dense.take_grad(2), name="dense_take")
        sparse.apply_grad(idx, rows, local_step=step, name="sparse_apply")
        taken = sparse.take_grad(2, name="sparse_take")
        sparse.set_global_step(step, name="sparse_set")
        tf.identity(sparse.num_accumulated(), name="sparse_num")
    with v1.Session(graph=g) as sess:
        feeds = [("dense_apply", {"step:0": 0, "grad:0": [1, 2, 3]}),
                 ("dense_apply", {"step:0": 0, "grad:0": [3, 2, 1]}),
                 ("dense_take:0", {}),
                 ("dense_apply", {"step:0": 0, "grad:0": [9, 9, 9]}),
                 ("sparse_apply", {"step:0": 0, "idx:0": [0, 4], "rows:0": [[1, 2], [3, 4]]}),
                 ("sparse_apply", {"step:0": 0, "idx:0": [4], "rows:0": [[5, 6]]}),
                 ("sparse_take", {}),
                 ("sparse_set", {"step:0": 5}),
                 ("sparse_apply", {"step:0": 4, "idx:0": [1], "rows:0": [[5, 6]]}),
                 ("sparse_num:0", {})]
        results = []
        for fetch, feed in feeds:
            if fetch == "sparse_take":
                value = sess.run(["sparse_take:0", "sparse_take:1", "sparse_take:2"], feed)
                results.append([np.asarray(v).tolist() for v in value])
            else:
                value = sess.run(fetch, feed)
                results.append(None if value is None else np.asarray(value).tolist())
    print("RESULT " + json.dumps({"graph": base64.b64encode(
        g.as_graph_def().SerializeToString()).decode(), "feeds": feeds, "results": results}))
''')


def test_tensorflow_exported_graph_runs():
    """A GraphDef TensorFlow 2.21 built with both accumulator kinds (the dense
    one's Resource ops, the sparse one's ref-handle ops) imports into Weir and
    gives what it gave in TensorFlow."""
    if not os.path.exists(PEERS_PYTHON):
        pytest.fail(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (scripts/install_deps.sh)")
    import base64
    tf_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
                  TF_ENABLE_ONEDNN_OPTS="0")
    tf_env.pop("PYTHONPATH", None)
    proc = subprocess.run([PEERS_PYTHON, "-c", EXPORT_PROGRAM], env=tf_env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    exported = json.loads(line[len("RESULT "):])
    with wr.Graph().as_default():
        wr.import_graph_def(base64.b64decode(exported["graph"]), name="")
        results = []
        with wr.Session() as sess:
            for fetch, feed in exported["feeds"]:
                if fetch == "sparse_take":
                    value = sess.run(["sparse_take:0", "sparse_take:1", "sparse_take:2"], feed)
                    results.append([np.asarray(v).tolist() for v in value])
                else:
                    value = sess.run(fetch, feed)
                    results.append(None if value is None else np.asarray(value).tolist())
    assert results == exported["results"]
    assert results[2] == [2, 2, 2] and results[6][0] == [0, 4] and results[9] == 0
