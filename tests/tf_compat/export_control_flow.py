#!/usr/bin/env python3
"""Writes TensorFlow control-flow graphs and TensorFlow's results on them as
fixtures for tests/tf_compat/tf_control_flow_test.cc, which imports each graph
into Weir and checks Weir's outputs against these (no TensorFlow at test time).

  /opt/weir-peers/bin/python tests/tf_compat/export_control_flow.py [--out tests/data]

The graphs use control flow v1 (tf.compat.v1 with control flow v2 disabled):
Switch, Merge, Enter, Exit, NextIteration and LoopCond nodes, as Weir's
ops::Cond and ops::WhileLoop build them. Writes, into --out:
  tf_while_cond.pbtxt   a while_loop with a trip count fed at run time, a
                        captured tensor and a tf.cond in its body, then a
                        tf.cond on the loop's result
  tf_nested_while.pbtxt a while_loop in a while_loop, maximum_iterations on
                        the outer one
  tf_control_flow_cases.json  per graph: the fetches, and for each case the
                        feeds and TensorFlow's outputs (dtype, shape, values)
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


def while_cond_graph():
    g = tf.Graph()
    with g.as_default():
        n = v1.placeholder(tf.int32, [], name="n")
        x = v1.placeholder(tf.float32, [3], name="x")
        p = v1.placeholder(tf.bool, [], name="p")
        scale = tf.constant([0.5, -1.0, 2.0], name="scale")  # captured by the body

        def body(i, acc):
            even = tf.equal(tf.math.floormod(i, 2), 0)
            term = tf.cond(even, lambda: acc * scale + x, lambda: acc - 0.5 * x + tf.cast(i, tf.float32),
                           name="parity")
            return [i + 1, term]

        i, acc = v1.while_loop(lambda i, acc: i < n, body,
                               [tf.constant(0), tf.zeros([3])], name="loop")
        y = tf.cond(p, lambda: acc * 2.0, lambda: acc + tf.cast(i, tf.float32), name="choose")
        tf.identity(i, name="trips")
        tf.identity(y, name="result")
    fetches = ["trips:0", "result:0", "loop/Exit_1:0"]
    cases = []
    for trips, flag in [(0, True), (1, False), (4, True), (7, False), (25, True)]:
        cases.append({"n": np.int32(trips), "x": np.array([1.0, 2.0, -3.0], np.float32),
                      "p": np.bool_(flag)})
    return g, fetches, cases


def nested_while_graph():
    g = tf.Graph()
    with g.as_default():
        n = v1.placeholder(tf.int32, [], name="n")
        m = v1.placeholder(tf.int32, [], name="m")
        step = v1.placeholder(tf.float32, [], name="step")

        def outer_body(i, total):
            _, inner_total = v1.while_loop(
                lambda j, t: j < m, lambda j, t: [j + 1, t + step * tf.cast(i + j, tf.float32)],
                [tf.constant(0), total], name="inner")
            return [i + 1, inner_total]

        i, total = v1.while_loop(lambda i, t: i < n, outer_body,
                                 [tf.constant(0), tf.constant(0.0)],
                                 maximum_iterations=6, name="outer")
        tf.identity(i, name="outer_trips")
        tf.identity(total, name="total")
    fetches = ["outer_trips:0", "total:0"]
    cases = []
    for outer, inner in [(0, 3), (2, 3), (5, 0), (9, 4)]:  # 9 is cut to 6
        cases.append({"n": np.int32(outer), "m": np.int32(inner), "step": np.float32(0.25)})
    return g, fetches, cases


DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.int32): "int32",
          np.dtype(np.bool_): "bool"}


def encode(value):
    value = np.asarray(value)
    return {"dtype": DTYPES[value.dtype], "shape": list(value.shape),
            "values": value.reshape(-1).tolist()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "data"))
    args = parser.parse_args()
    v1.disable_v2_behavior()
    v1.disable_control_flow_v2()

    fixtures = []
    for file_name, build in [("tf_while_cond.pbtxt", while_cond_graph),
                             ("tf_nested_while.pbtxt", nested_while_graph)]:
        graph, fetches, cases = build()
        ops = {op.type for op in graph.get_operations()}
        assert {"Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond"} <= ops, ops
        v1.train.write_graph(graph.as_graph_def(), args.out, file_name, as_text=True)
        recorded = []
        with v1.Session(graph=graph) as session:
            for feeds in cases:
                outputs = session.run(fetches, {name + ":0": value for name, value in feeds.items()})
                recorded.append({"feeds": {k: encode(v) for k, v in feeds.items()},
                                 "outputs": [encode(o) for o in outputs]})
        fixtures.append({"graph": file_name, "fetches": fetches, "cases": recorded})
        print(f"{file_name}: {len(graph.get_operations())} nodes, {len(recorded)} cases")

    with open(os.path.join(args.out, "tf_control_flow_cases.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "graphs": fixtures}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
