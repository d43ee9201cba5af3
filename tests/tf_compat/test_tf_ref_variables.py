"""TensorFlow 1 graphs with reference variables (what tf.compat.v1.disable_v2_behavior()
programs and most TF1-era .pb/.meta files hold: VariableV2, Assign, ApplyAdam, ScatterUpdate,
RefEnter, IsVariableInitialized...), written by TensorFlow 2.21 and run by Weir, which imports
them as resource variables (src/weir/graph/ref_variables.h). Training with each optimizer, a
sparse embedding update, every Scatter and ScatterNd update, a while loop that assigns a
variable, report_uninitialized_variables, and a Saver: TensorFlow's checkpoint restores through
the imported graph, and TensorFlow reads Weir's back. TensorFlow runs the same graphs in the
test; values must match to ~1e-5."""
import json

import numpy as np
import pytest

import weir as wr

STEPS = 5

TRAIN = '''
import json
v1.disable_v2_behavior()
STEPS = %d
rng = np.random.RandomState(3)
xv = rng.randn(16, 3).astype(np.float32)
yv = (rng.rand(16, 1) > 0.5).astype(np.float32)
ids_v = np.array([0, 2, 2, 5], np.int32)
OPTIMIZERS = {
    "sgd": lambda: v1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: v1.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: v1.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda: v1.train.AdamOptimizer(0.05),
    "adagrad": lambda: v1.train.AdagradOptimizer(0.3),
    "rmsprop": lambda: v1.train.RMSPropOptimizer(0.02, momentum=0.5),
    "adadelta": lambda: v1.train.AdadeltaOptimizer(1.0, rho=0.9),
    "proximal_sgd": lambda: v1.train.ProximalGradientDescentOptimizer(
        0.2, l1_regularization_strength=0.01, l2_regularization_strength=0.05),
    "proximal_adagrad": lambda: v1.train.ProximalAdagradOptimizer(
        0.3, l1_regularization_strength=0.01, l2_regularization_strength=0.05),
    "ftrl": lambda: v1.train.FtrlOptimizer(0.3, l1_regularization_strength=0.001),
    "ftrl_v2": lambda: v1.train.FtrlOptimizer(0.3, learning_rate_power=-0.6,
                                              l1_regularization_strength=0.001,
                                              l2_regularization_strength=0.02,
                                              l2_shrinkage_regularization_strength=0.05),
}
cases = {}
for name, make in OPTIMIZERS.items():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        y = v1.placeholder(tf.float32, [None, 1], name="y")
        ids = v1.placeholder(tf.int32, [None], name="ids")
        w = v1.get_variable("w", initializer=np.linspace(-1, 1, 3).reshape(3, 1).astype(np.float32))
        b = v1.Variable(0.5, name="b")
        emb = v1.Variable(np.arange(12, dtype=np.float32).reshape(6, 2) / 10, name="emb")
        step = v1.train.get_or_create_global_step()
        # Logistic regression plus an embedding row penalty (a sparse gradient: SparseApply*
        # or, for plain SGD, ScatterAdd).
        logits = tf.matmul(x, w) + b
        loss = tf.add(tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits)),
                      tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids))) * 0.1, name="loss")
        train = make().minimize(loss, global_step=step, name="train")
        unin = v1.report_uninitialized_variables()
        init = v1.global_variables_initializer()
        with v1.Session(graph=g) as s:
            uninitialized = [n.decode() for n in s.run(unin)]
            s.run(init)
            losses = [float(s.run([loss, train], {x: xv, y: yv, ids: ids_v})[0]) for _ in range(STEPS)]
            final = {v.op.name: s.run(v).tolist() for v in v1.global_variables()}
    save_graph(g.as_graph_def(), name)
    cases[name] = {"ops": sorted({n.op for n in g.as_graph_def().node}), "unin": unin.name,
                   "uninitialized": uninitialized, "init": init.name, "train": train.name,
                   "losses": losses, "final": final}
np.savez(os.path.join(OUT, "data.npz"), x=xv, y=yv, ids=ids_v)

# A while loop that assign_adds a captured variable each iteration (RefEnter), a
# scatter_update, an assign whose output is fetched, and a chained assign.
g = tf.Graph()
with g.as_default():
    n = v1.placeholder(tf.int32, [], name="n")
    total = v1.Variable(0, name="total")
    table = v1.Variable(np.zeros([4, 2], np.float32), name="table")
    def body(i):
        with tf.control_dependencies([v1.assign_add(total, i)]):
            return i + 1
    loop = v1.while_loop(lambda i: i < n, body, [tf.constant(0)], name="loop")
    out = tf.identity(loop, name="loop_out")
    scatter = v1.scatter_update(table, [3, 1], [[1.0, 2.0], [3.0, 4.0]], name="scatter")
    # The other row updates, each after the one before, and the slice (Nd) updates
    # (ScatterNdMax/Min have no tf.compat.v1 function).
    from tensorflow.python.ops import gen_state_ops
    def scatter_nd_max(ref, indices, updates):
        return gen_state_ops.scatter_nd_max(ref=ref, indices=indices, updates=updates)
    def scatter_nd_min(ref, indices, updates):
        return gen_state_ops.scatter_nd_min(ref=ref, indices=indices, updates=updates)
    combined = scatter
    for op, rows in [(v1.scatter_mul, [[2.0, -1.0]]), (v1.scatter_div, [[4.0, 0.5]]),
                     (v1.scatter_max, [[0.75, -3.0]]), (v1.scatter_min, [[0.6, 5.0]]),
                     (v1.scatter_nd_update, [[9.0, 8.0]]), (v1.scatter_nd_add, [[1.0, 1.0]]),
                     (v1.scatter_nd_sub, [[0.5, 0.25]]), (scatter_nd_max, [[9.5, 0.0]]),
                     (scatter_nd_min, [[9.0, -1.0]])]:
        with tf.control_dependencies([combined]):
            # (TF 2.21's scatter_nd_* pass name= on as bad_indices_policy: no names.)
            combined = op(table, [[3]], rows) if "nd" in op.__name__ else op(table, [3], rows)
    # A cond whose branches update the captured variable (RefSwitch) and whose result
    # is the updated reference (RefMerge).
    flag = v1.placeholder(tf.bool, [], name="flag")
    branch = tf.identity(tf.cond(flag, lambda: v1.assign_add(total, 10),
                                 lambda: v1.assign_sub(total, 1), name="branch"),
                         name="branch_out")
    reset = v1.assign(total, 100, name="reset")
    doubled = v1.assign_add(v1.assign(total, 7, name="seven"), 7, name="doubled")
    init = v1.global_variables_initializer()
    with v1.Session(graph=g) as s:
        s.run(init)
        # The variable is read in a run of its own: a fetch of a TF1 reference aliases the
        # buffer that later updates in the same run change, a resource read does not.
        loops = [(s.run(out, {n: k}), s.run(total)) for k in (4, 0, 3)]
        branches = [int(s.run(branch, {flag: f})) for f in (True, False, True)]
        scattered = s.run(scatter)
        combined_value = s.run(combined)
        reset_value = s.run(reset)
        doubled_value = s.run(doubled)
save_graph(g.as_graph_def(), "loop")
cases["loop"] = {"ops": sorted({n.op for n in g.as_graph_def().node}), "init": init.name,
                 "loops": [[int(a), int(b)] for a, b in loops], "scatter": scattered.tolist(), "branches": branches,
                 "combined": combined_value.tolist(), "combined_name": combined.name,
                 "reset": int(reset_value), "doubled": int(doubled_value)}
with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump(cases, f)
''' % STEPS


@pytest.fixture(scope="module")
def train_out(run_tf):
    return run_tf(TRAIN, "ref_variables")


def import_graph(path):
    graph = wr.Graph()
    with graph.as_default():
        wr.compat.v1.import_graph_def(path.read_bytes(), name="")
    return graph


def assert_close(got, want, name):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-5, atol=1e-6, err_msg=name)


def test_tf1_reference_variable_training_graphs(train_out):
    out = train_out
    cases = json.loads((out / "cases.json").read_text())
    data = np.load(out / "data.npz")
    # What the test is about: TensorFlow wrote reference-variable ops.
    ops = set().union(*(set(c["ops"]) for c in cases.values()))
    assert {"VariableV2", "Assign", "AssignAdd", "IsVariableInitialized", "ApplyGradientDescent",
            "ScatterAdd", "ApplyMomentum", "SparseApplyMomentum", "ApplyAdam", "ApplyAdagrad",
            "SparseApplyAdagrad", "ApplyRMSProp", "SparseApplyRMSProp", "ApplyAdadelta",
            "SparseApplyAdadelta", "ApplyFtrl", "SparseApplyFtrl", "ApplyFtrlV2",
            "SparseApplyFtrlV2", "ApplyProximalGradientDescent",
            "SparseApplyProximalGradientDescent", "ApplyProximalAdagrad",
            "SparseApplyProximalAdagrad", "RefEnter",
            "ScatterUpdate"} <= ops, ops
    assert not {"VarHandleOp", "ReadVariableOp"} & ops
    for name in ("sgd", "momentum", "nesterov", "adam", "adagrad", "rmsprop", "adadelta", "ftrl",
                 "ftrl_v2", "proximal_sgd", "proximal_adagrad"):
        case = cases[name]
        graph = import_graph(out / f"{name}.pb")
        feeds = {"x:0": data["x"], "y:0": data["y"], "ids:0": data["ids"]}
        with wr.Session(graph=graph) as sess:
            uninitialized = [bytes(n).decode() for n in sess.run(case["unin"])]
            assert uninitialized == case["uninitialized"], name
            sess.run(case["init"])
            assert sess.run(case["unin"]).size == 0, name
            losses = [sess.run(["loss:0", case["train"]], feeds)[0] for _ in range(STEPS)]
            assert_close(losses, case["losses"], f"{name} losses")
            for var, want in case["final"].items():
                assert_close(sess.run(var + ":0"), want, f"{name} {var}")
        assert case["final"]["global_step"] == STEPS


def test_tf1_reference_variables_in_a_while_loop_and_scatter(train_out):
    out = train_out
    case = json.loads((out / "cases.json").read_text())["loop"]
    assert {"RefEnter", "RefSwitch", "AssignAdd", "ScatterUpdate", "ScatterMul", "ScatterDiv", "ScatterMax",
            "ScatterMin", "ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub", "ScatterNdMax",
            "ScatterNdMin"} <= set(case["ops"])
    graph = import_graph(out / "loop.pb")
    with wr.Session(graph=graph) as sess:
        sess.run(case["init"])
        for k, want in zip((4, 0, 3), case["loops"]):
            assert [int(sess.run("loop_out:0", {"n:0": k})), int(sess.run("total:0"))] == want
        branches = [int(sess.run("branch_out:0", {"flag:0": f})) for f in (True, False, True)]
        assert branches == case["branches"]
        np.testing.assert_array_equal(sess.run("scatter:0"), case["scatter"])
        np.testing.assert_allclose(sess.run(case["combined_name"]), case["combined"], rtol=1e-6)
        assert sess.run("reset:0") == case["reset"]
        assert sess.run("doubled:0") == case["doubled"] == 14


FETCH_AT_STEP_END = '''
import json
v1.disable_v2_behavior()
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [None, 2], name="x")
    w = v1.get_variable("w", initializer=np.array([[0.5], [-1.0]], np.float32))
    step = v1.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.matmul(x, w), name="loss")
    train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
    bump = v1.assign(w, w + 1.0, name="bump")
    init = v1.global_variables_initializer()
    xv = np.array([[1.0, 2.0]], np.float32)
    with v1.Session(graph=g) as s:
        s.run(init)
        # A fetched reference variable is its value when the step ends: TF1 programs print
        # the global step fetched with the train op (1, 2, 3...).
        steps = [s.run([train, step, w], {x: xv}) for _ in range(3)]
        bumped = s.run([bump, w])
        alone = s.run([step, w])
save_graph(g.as_graph_def(), "fetch_at_end")
with open(os.path.join(OUT, "fetch_at_end.json"), "w") as f:
    json.dump({"steps": [[int(st), wv.tolist()] for _, st, wv in steps], "init": init.name,
               "bumped": [b.tolist() for b in bumped], "alone": [int(alone[0]), alone[1].tolist()],
               "train": train.name, "x": xv.tolist()}, f)
'''


def test_a_fetched_reference_variable_is_its_value_at_the_end_of_the_step(run_tf):
    out = run_tf(FETCH_AT_STEP_END, "fetch_at_end")
    case = json.loads((out / "fetch_at_end.json").read_text())
    assert [st for st, _ in case["steps"]] == [1, 2, 3]  # what TensorFlow does
    graph = import_graph(out / "fetch_at_end.pb")
    with wr.Session(graph=graph) as sess:
        sess.run(case["init"])
        for want_step, want_w in case["steps"]:
            _, got_step, got_w = sess.run([case["train"], "global_step:0", "w:0"],
                                          {"x:0": np.array(case["x"], np.float32)})
            assert int(got_step) == want_step
            assert_close(got_w, want_w, "w fetched with the train op")
        got = sess.run(["bump:0", "w:0"])
        assert_close(got[0], case["bumped"][0], "bump")
        assert_close(got[1], case["bumped"][1], "w fetched with bump")
        got = sess.run(["global_step:0", "w:0"])
        assert [int(got[0])] == case["alone"][:1]
        assert_close(got[1], case["alone"][1], "w alone")


SAVER = '''
import json
v1.disable_v2_behavior()
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [None, 2], name="x")
    w = v1.get_variable("w", initializer=np.array([[1.0], [-2.0]], np.float32))
    b = v1.Variable(np.float64(0.25), name="b")
    step = v1.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + tf.cast(b, tf.float32)), name="loss")
    train = v1.train.AdamOptimizer(0.1).minimize(loss, global_step=step, name="train")
    init = v1.global_variables_initializer()
    saver = v1.train.Saver()
    xv = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with v1.Session(graph=g) as s:
        s.run(init)
        for _ in range(3):
            s.run(train, {x: xv})
        path = saver.save(s, os.path.join(OUT, "model.ckpt"), global_step=step)
        saved = {v.op.name: s.run(v).tolist() for v in v1.global_variables()}
        loss_after = float(s.run(loss, {x: xv}))
        s.run(train, {x: xv})
        trained = {v.op.name: s.run(v).tolist() for v in v1.global_variables()}
with open(os.path.join(OUT, "saver.json"), "w") as f:
    json.dump({"path": path, "saved": saved, "trained": trained, "loss": loss_after,
               "init": init.name, "x": xv.tolist()}, f)
'''

READ_BACK = '''
import json
r = tf.train.load_checkpoint(PATH)
with open(os.path.join(OUT, "read.json"), "w") as f:
    json.dump({n: r.get_tensor(n).tolist() for n in r.get_variable_to_shape_map()}, f)
'''


def test_tf1_saver_meta_graph_restores_and_saves(run_tf, tmp_path):
    out = run_tf(SAVER, "ref_saver")
    recorded = json.loads((out / "saver.json").read_text())
    graph = wr.Graph()
    with graph.as_default():
        saver = wr.compat.v1.train.import_meta_graph(recorded["path"] + ".meta")
        assert saver is not None
        assert graph.get_operation_by_name("w").type == "ReadVariableOp"
        x = np.array(recorded["x"], np.float32)
        with wr.Session(graph=graph) as sess:
            sess.run(recorded["init"])
            saver.restore(sess, recorded["path"])  # the graph's RestoreV2 and Assign nodes
            for var, want in recorded["saved"].items():
                assert_close(sess.run(var + ":0"), want, var)
            assert_close(sess.run("loss:0", {"x:0": x}), recorded["loss"], "loss")
            # One more Adam step from the restored slots gives TensorFlow's values.
            sess.run("train", {"x:0": x})
            for var, want in recorded["trained"].items():
                assert_close(sess.run(var + ":0"), want, "trained " + var)
            weir_path = saver.save(sess, str(tmp_path / "weir.ckpt"))
    read = json.loads((run_tf(f"PATH = {weir_path!r}\n" + READ_BACK, "ref_saver_read")
                       / "read.json").read_text())
    assert sorted(read) == sorted(recorded["trained"])
    for var, want in recorded["trained"].items():
        assert_close(read[var], want, "read back " + var)


SAVED_MODEL = '''
import json
v1.disable_v2_behavior()
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [None, 3], name="x")
    w = v1.get_variable("w", initializer=np.array([[0.5], [-1.0], [2.0]], np.float32))
    b = v1.Variable(np.float32(0.1), name="b")
    y = tf.nn.sigmoid(tf.matmul(x, w) + b, name="y")
    loss = tf.reduce_mean(y, name="loss")
    train = v1.train.MomentumOptimizer(0.5, 0.9).minimize(loss)
    xv = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 0.5]], np.float32)
    with v1.Session(graph=g) as s:
        s.run(v1.global_variables_initializer())
        for _ in range(2):
            s.run(train, {x: xv})
        want = s.run(y, {x: xv})
        v1.saved_model.simple_save(s, os.path.join(OUT, "model"), {"x": x}, {"y": y})
with open(os.path.join(OUT, "saved_model.json"), "w") as f:
    json.dump({"x": xv.tolist(), "y": want.tolist()}, f)
'''


def test_tf1_saved_model_with_reference_variables_loads(run_tf):
    out = run_tf(SAVED_MODEL, "ref_saved_model")
    recorded = json.loads((out / "saved_model.json").read_text())
    graph = wr.Graph()
    with wr.Session(graph=graph) as sess:
        meta = wr.saved_model.loader.load(sess, ["serve"], str(out / "model"))
        assert "VariableV2" in {n.op for n in meta.graph_def.node}
        signature = meta.signature_def["serving_default"]
        got = sess.run(signature.outputs["y"].name,
                       {signature.inputs["x"].name: np.array(recorded["x"], np.float32)})
    assert_close(got, recorded["y"], "y")


DEVICES = '''
import json
v1.disable_v2_behavior()
config = v1.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=False)
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [None, 2], name="x")
    with tf.device("/cpu:1"):
        w = v1.get_variable("w", initializer=np.array([[1.0], [-2.0]], np.float32))
        step = v1.train.get_or_create_global_step()
    with tf.device("/cpu:0"):
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0), name="loss")
        train = v1.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=step,
                                                                name="train")
    init = v1.global_variables_initializer()
    xv = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
    with v1.Session(graph=g, config=config) as s:
        s.run(init)
        losses = [float(s.run([loss, train], {x: xv})[0]) for _ in range(4)]
        final = {v.op.name: s.run(v).tolist() for v in v1.global_variables()}
devices = {n.name: n.device for n in g.as_graph_def().node}
save_graph(g.as_graph_def(), "devices")
with open(os.path.join(OUT, "devices.json"), "w") as f:
    json.dump({"x": xv.tolist(), "losses": losses, "final": final, "init": init.name,
               "devices": devices}, f)
'''


def test_tf1_reference_variables_on_another_device(run_tf):
    """Variables (and, by loc:@ colocation, their slots and updates) on CPU:1, the model on
    CPU:0: the handles, reads and updates must stay with their variables across partitions."""
    out = run_tf(DEVICES, "ref_devices")
    recorded = json.loads((out / "devices.json").read_text())
    assert recorded["devices"]["w"].endswith("device:CPU:1")
    graph = import_graph(out / "devices.pb")
    assert graph.get_operation_by_name("w/_handle").device.endswith("device:CPU:1")
    x = np.array(recorded["x"], np.float32)
    with wr.Session(graph=graph, config=wr.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(recorded["init"])
        losses = []
        for i in range(4):
            metadata = wr.RunMetadata()
            options = wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE) if i == 0 else None
            losses.append(sess.run(["loss:0", "train"], {"x:0": x}, options=options,
                                   run_metadata=metadata)[0])
            if i == 0:
                placed = {s.node_name: s.device for s in metadata.step_stats}
        assert_close(losses, recorded["losses"], "losses")
        # Where the step ran them: the handles, reads and updates with their variables.
        for name in ("w/_handle", "w", "w/Momentum/_handle", "train/update_w/ApplyMomentum/_update",
                     "train/update_w/ApplyMomentum", "global_step/_handle", "train/_update"):
            assert placed.get(name, "").endswith("CPU:1"), (name, placed.get(name))
        assert placed["loss"].endswith("CPU:0")
        for var, want in recorded["final"].items():
            assert_close(sess.run(var + ":0"), want, var)
