"""A graph TensorFlow 2.21 builds (tf.compat.v1) with its stateful objects on a
second device -- a FIFOQueue, a ConditionalAccumulator (DT_RESOURCE handles),
a SparseConditionalAccumulator (a Ref(string) handle) and a resource
variable -- and the ops on them left unplaced or requested on the first
device, imported and run by Weir in a session with two CPU devices: every op
on a handle runs where its resource lives (TensorFlow's placer rule), so the
values are TensorFlow's."""
import numpy as np

import weir as wr

GRAPH = '''
import json
g = tf.Graph()
with g.as_default():
    with g.device("/device:CPU:1"):
        q = v1.FIFOQueue(4, [tf.float32], shapes=[[2]], name="q")
        acc = v1.ConditionalAccumulator(tf.float32, shape=[2], name="acc")
        sacc = v1.SparseConditionalAccumulator(tf.float32, shape=[3, 2], name="sacc")
        v = v1.get_variable("v", initializer=np.array([1.0, 2.0], np.float32),
                            use_resource=True)
    x = v1.placeholder(tf.float32, [2], name="x")
    step = v1.placeholder(tf.int64, [], name="step")
    # Unplaced: TensorFlow colocates them with the queue and accumulators.
    q.enqueue([x], name="enqueue")
    grad = q.dequeue(name="dequeue")
    acc.apply_grad(grad, local_step=step, name="apply")
    take = acc.take_grad(1, name="take")
    sacc.apply_grad([0, 2], np.array([[1, 2], [3, 4]], np.float32), local_step=step,
                    name="sparse_apply")
    sparse = sacc.take_grad(1, name="sparse_take")
    # Requested on the first device: TensorFlow runs them with their resource anyway.
    with g.device("/device:CPU:0"):
        num = acc.num_accumulated(name="num")
        sparse_num = sacc.num_accumulated(name="sparse_num")
        read = v.read_value()
        tf.identity(take * read, name="scaled")
    names = {"read": read.name, "sparse_values": sparse.values.name,
             "sparse_indices": sparse.indices.name}
    init = v1.global_variables_initializer()
    runs = [("init", None, {}), ("enqueue", None, {"x:0": [1.5, -2.0]}),
            ("enqueue", None, {"x:0": [0.5, 4.0]}), ("apply", None, {"step:0": 0}),
            (None, "num:0", {}), ("apply", None, {"step:0": 0}), (None, "num:0", {}),
            (None, "scaled:0", {}), ("sparse_apply", None, {"step:0": 0}),
            (None, "sparse_num:0", {}), (None, names["sparse_values"], {}),
            (None, names["read"], {})]
    results = []
    config = v1.ConfigProto(device_count={"CPU": 2})
    with v1.Session(graph=g, config=config) as sess:
        for target, fetch, feed in runs:
            if target == "init":
                sess.run(init)
                results.append(None)
            elif target is not None:
                sess.run(target, feed)
                results.append(None)
            else:
                results.append(np.asarray(sess.run(fetch, feed)).tolist())
    runs[0] = (init.name, None, {})
save_graph(g.as_graph_def(), "placement")
with open(os.path.join(OUT, "placement.json"), "w") as f:
    json.dump({"runs": runs, "results": results, "names": names}, f)
'''


def test_tf_ops_on_handles_run_with_their_resource(run_tf):
    import json
    out = run_tf(GRAPH, "placement")
    data = json.loads((out / "placement.json").read_text())
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "placement.pb").read_bytes(), name="")
    results = []
    config = wr.ConfigProto(device_count={"CPU": 2})
    with wr.Session(graph=graph, config=config) as sess:
        for target, fetch, feed in data["runs"]:
            if target is not None:
                sess.run(target, feed)
                results.append(None)
            else:
                results.append(np.asarray(sess.run(fetch, feed)).tolist())
        # Where Weir ran them: the ops on each handle on CPU:1, with it.
        metadata = wr.RunMetadata()
        options = wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE)
        sess.run("enqueue", {"x:0": [1.0, 1.0]}, options=options, run_metadata=metadata)
        sess.run(["apply", "num:0"], {"step:0": 1}, options=options, run_metadata=metadata)
        devices = {s.node_name: s.device for s in metadata.step_stats}
    assert results == data["results"], (results, data["results"])
    assert results[4] == 1 and results[6] == 2 and results[9] == 1
    for node in ("apply", "dequeue", "num"):
        assert devices.get(node, "").endswith("CPU:1"), (node, devices)
