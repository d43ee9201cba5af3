#!/usr/bin/env python3
"""Writes a small TF1 graph of reference variables as a fixture: the seed that lets the
graph_def fuzzers reach Weir's ref-variable rewrite (src/weir/graph/ref_variables.h), and the
graph src/weir/graph/ref_variables_test.cc imports as TensorFlow wrote it. (The tests that run
such graphs against TensorFlow make theirs during the test: test_tf_ref_variables.py.)

  /opt/weir-peers/bin/python tests/tf_compat/export_ref_variables.py [--out tests/data]

Writes tf1_ref_variables.pbtxt: VariableV2 (one on CPU:1), their Assign initializers and
`/read` Identities, a GradientDescent step with a global step (ApplyGradientDescent,
AssignAdd), ScatterUpdate, IsVariableInitialized (report_uninitialized_variables), and a
while_loop that assign_adds a captured variable (RefEnter).
"""
import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


def ref_variables_graph():
    v1.disable_v2_behavior()
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 2], name="x")
        with tf.device("/cpu:1"):
            w = v1.get_variable("w", initializer=np.array([[1.0], [-1.0]], np.float32))
        step = v1.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)), name="loss")
        v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
        table = v1.Variable(np.zeros([3, 2], np.float32), name="table")
        v1.scatter_update(table, [2], [[1.0, 2.0]], name="scatter")
        count = v1.Variable(0, name="count")

        def body(i):
            with tf.control_dependencies([v1.assign_add(count, i)]):
                return i + 1
        v1.while_loop(lambda i: i < 3, body, [tf.constant(0)], name="loop")
        v1.report_uninitialized_variables(name="uninitialized")
        v1.global_variables_initializer()
    return g.as_graph_def()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data"))
    args = parser.parse_args()
    graph_def = ref_variables_graph()
    # TensorFlow 2.x sets NodeDef.experimental_type (a FullTypeDef) on some ops (Shape in
    # gradients); Weir's NodeDef schema has no such field and its text parser refuses it.
    for node in graph_def.node:
        node.ClearField("experimental_type")
    path = os.path.join(args.out, "tf1_ref_variables.pbtxt")
    with open(path, "w") as f:
        f.write("# Written by tests/tf_compat/export_ref_variables.py (TensorFlow %s): a TF1\n"
                "# graph of reference variables.\n" % tf.__version__)
        f.write(str(graph_def))
    print("wrote", path, len(graph_def.node), "nodes:",
          sorted({n.op for n in graph_def.node}))


if __name__ == "__main__":
    main()
