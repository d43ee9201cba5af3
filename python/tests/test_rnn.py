"""TensorArray, map_fn/scan/foldl/foldr and the RNNs (dynamic_rnn, static_rnn,
bidirectional_dynamic_rnn and the tf.nn.rnn_cell cells): TF1 programs run
under TensorFlow 2.21 (/opt/weir-peers/bin/python, with v2 behavior off, so
TF builds v1 control flow and TensorArrayV3 as Weir does) and under Weir
with only the import changed, compared value by value: outputs, final
states, gradients and a few training steps from the same numpy initial
values; variable names; a checkpoint written by each restored by the
other; the errors of bad graphs. Tests without TensorFlow check TensorArray
and the loops against numpy and finite differences.
"""
import os

import numpy as np
import pytest

import tf1_run
import weir as wr
from tf1_run import TF_V1_HEADER, WEIR_HEADER

PROGRAMS = {}
program = tf1_run.program_registry(PROGRAMS)


@program("tensor_array_loop")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    tf.reset_default_graph()
    rng = np.random.RandomState(2)
    x_data = rng.randn(5, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    w = tf.Variable(rng.randn(3, 3).astype(np.float32), name="w")

    # unstack -> read in a loop -> write; scatter; dynamic_size growth
    inp = tf.TensorArray(tf.float32, size=5).unstack(x)
    out = tf.TensorArray(tf.float32, size=5)
    grow = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    perm = tf.TensorArray(tf.float32, size=5)


    def body(i, out, grow, perm, total):
        v = inp.read(i)
        h = tf.tanh(tf.matmul(tf.expand_dims(v, 0), w))[0]
        out = out.write(i, h * tf.cast(i + 1, tf.float32))
        grow = grow.write(2 * i, h).write(2 * i + 1, -v)
        perm = perm.scatter(tf.reshape(4 - i, [1]), tf.expand_dims(v * v, 0))
        # An array made in the body: split, then concat in another order.
        pieces = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(v * h, [1, 2])
        swapped = tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, pieces.read(1)).write(
            1, pieces.read(0) * 3.0).concat()
        return i + 1, out, grow, perm, total + tf.reduce_sum(swapped * tf.constant([1.0, 2.0, 3.0]))


    _, out, grow, perm, total = tf.while_loop(lambda i, *_: i < 5, body, [0, out, grow, perm, 0.0])
    stacked = out.stack()
    gathered = grow.gather([9, 0, 3])
    grow_size = grow.size()
    perm_stacked = perm.stack()
    # split / concat with unequal lengths, outside the loop
    parts = tf.TensorArray(tf.float32, size=3, infer_shape=False, clear_after_read=False).split(
        x * 2.0, [1, 3, 1])
    concat_all = parts.concat()
    middle = parts.read(1)

    loss = (tf.reduce_sum(stacked * stacked) + tf.reduce_sum(gathered * 3.0) + tf.reduce_sum(perm_stacked[1:])
            + tf.reduce_sum(concat_all * concat_all) + tf.reduce_sum(middle) + tf.cast(grow_size, tf.float32)
            + total)
    gx, gw = tf.gradients(loss, [x, w])
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    shapes = [str(t.shape) for t in (stacked, gathered, perm_stacked, concat_all, middle)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        vals = sess.run([stacked, gathered, grow_size, perm_stacked, concat_all, middle, total, gx, gw],
                        {x: x_data})
        losses = [float(sess.run([loss, train], {x: x_data})[0]) for _ in range(3)]
    # Reading an index twice from a clear_after_read array fails the step.
    once = tf.TensorArray(tf.float32, size=2).unstack(x[:2])
    twice = once.read(0) + once.read(0)
    with tf.Session() as sess:
        try:
            sess.run(twice, {x: x_data})
            error = None
        except tf.errors.InvalidArgumentError as e:
            error = type(e).__name__
    RESULT = {"read_twice": error, "values": [np.asarray(v).tolist() for v in vals], "losses": losses, "shapes": shapes}
    """


@program("functional_ops")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    tf.reset_default_graph()
    rng = np.random.RandomState(0)
    x_data = rng.rand(4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    m = tf.map_fn(lambda e: e * e + 1.0, x)
    m2 = tf.map_fn(lambda e: (e[0] * 2.0, tf.reduce_sum(e[1])), (x, x), dtype=(tf.float32, tf.float32))
    s = tf.scan(lambda a, e: a * 0.5 + e, x)
    s2 = tf.scan(lambda a, e: a + tf.reduce_sum(e), x, initializer=tf.constant(1.0), reverse=True)
    s3 = tf.scan(lambda a, e: {"p": a["p"] * e["p"], "q": a["q"] + e["q"]}, {"p": x, "q": x * 2.0})
    fl = tf.foldl(lambda a, e: a * e, x)
    fr = tf.foldr(lambda a, e: a * 2.0 + e, x, initializer=tf.zeros([3]))
    f2 = tf.foldl(lambda a, e: (a[0] + e, a[1] * 0.5 + tf.reduce_max(e)), x, initializer=(tf.zeros([3]), 0.0))
    outs = [m, m2[0], m2[1], s, s2, s3["p"], s3["q"], fl, fr, f2[0], f2[1]]
    loss = sum(tf.reduce_sum(o * (k + 1.0)) for k, o in enumerate(outs))
    g = tf.gradients(loss, x)[0]
    shapes = [str(o.shape) for o in outs]
    with tf.Session() as sess:
        vals = sess.run(outs + [g], {x: x_data})
    RESULT = {"values": [np.asarray(v).tolist() for v in vals], "shapes": shapes}
    """


@program("rnn_cells")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    rc = tf.nn.rnn_cell
    rng = np.random.RandomState(0)
    x_data = rng.randn(4, 6, 3).astype(np.float32)
    lengths = np.array([6, 3, 1, 5], np.int32)
    target = rng.randn(4, 6, 5).astype(np.float32)


    def build(kind, x, seq):
        if kind == "basic_lstm":
            out, state = tf.nn.dynamic_rnn(rc.BasicLSTMCell(5), x, dtype=tf.float32)
            return out, list(state)
        if kind == "basic_lstm_seq":
            out, state = tf.nn.dynamic_rnn(rc.BasicLSTMCell(5), x, sequence_length=seq, dtype=tf.float32)
            return out, list(state)
        if kind == "lstm_peephole_proj_seq":
            cell = rc.LSTMCell(4, use_peepholes=True, num_proj=5, cell_clip=2.0)
            out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=tf.float32)
            return out, list(state)
        if kind == "gru_seq":
            out, state = tf.nn.dynamic_rnn(rc.GRUCell(5), x, sequence_length=seq, dtype=tf.float32)
            return out, [state]
        if kind == "gru_time_major":
            out, state = tf.nn.dynamic_rnn(rc.GRUCell(5), tf.transpose(x, [1, 0, 2]), time_major=True,
                                           dtype=tf.float32)
            return tf.transpose(out, [1, 0, 2]), [state]
        if kind == "multi_lstm_gru_seq":
            cell = rc.MultiRNNCell([rc.BasicLSTMCell(4), rc.GRUCell(5)])
            out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=tf.float32)
            return out, [state[0].c, state[0].h, state[1]]
        if kind == "bidirectional_seq":
            (fw, bw), (sf, sb) = tf.nn.bidirectional_dynamic_rnn(rc.BasicLSTMCell(5), rc.GRUCell(5), x,
                                                                 sequence_length=seq, dtype=tf.float32)
            return fw + 0.5 * bw, [sf.c, sf.h, sb]
        if kind == "static_lstm_seq":
            outs, state = tf.nn.static_rnn(rc.BasicLSTMCell(5), tf.unstack(x, axis=1), sequence_length=seq,
                                           dtype=tf.float32)
            return tf.stack(outs, axis=1), list(state)
        if kind == "static_bidirectional_seq":
            outs, sf, sb = tf.nn.static_bidirectional_rnn(rc.GRUCell(5), rc.BasicLSTMCell(5), tf.unstack(x, axis=1),
                                                          sequence_length=seq, dtype=tf.float32)
            out = tf.stack(outs, axis=1)
            return out[:, :, :5] - out[:, :, 5:], [sf, sb.c, sb.h]
        if kind == "concat_states_seq":  # state_is_tuple=False everywhere, a DeviceWrapper
            cell = rc.MultiRNNCell([rc.LSTMCell(4, num_proj=3, state_is_tuple=False),
                                    rc.DeviceWrapper(rc.BasicLSTMCell(5, state_is_tuple=False), "/cpu:0")],
                                   state_is_tuple=False)
            out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=tf.float32)
            return out, [state]
        if kind == "basic_rnn_residual_init_state":
            cell = rc.ResidualWrapper(rc.BasicRNNCell(3))
            init = tf.ones([tf.shape(x)[0], 3]) * 0.5
            out, state = tf.nn.dynamic_rnn(cell, x, initial_state=init)
            return tf.tile(out, [1, 1, 2])[:, :, :5], [state]
        raise ValueError(kind)


    RESULT = {}
    for kind in ["basic_lstm", "basic_lstm_seq", "lstm_peephole_proj_seq", "gru_seq", "gru_time_major",
                 "multi_lstm_gru_seq", "bidirectional_seq", "static_lstm_seq", "static_bidirectional_seq",
             "concat_states_seq", "basic_rnn_residual_init_state"]:
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, [None, 6, 3], name="x")
        seq = tf.placeholder(tf.int32, [None], name="seq")
        out, states = build(kind, x, seq)
        loss = tf.reduce_mean(tf.square(out - target)) + sum(tf.reduce_mean(s * s) for s in states)
        variables = sorted(tf.trainable_variables(), key=lambda v: v.name)
        grads = tf.gradients(loss, [x] + variables)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        vrng = np.random.RandomState(1)
        assigns = [v.assign((vrng.randn(*v.shape.as_list()) * 0.4).astype(np.float32)) for v in variables]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(assigns)
            feed = {x: x_data, seq: lengths}
            o, s, g = sess.run([out, states, grads], feed)
            losses = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
        if kind.endswith("_seq") and "bidirectional" not in kind:  # zeros past each sequence's length
            for b, n in enumerate(lengths):
                assert np.all(o[b, n:] == 0) and np.all(o[b, :n] != 0), (kind, b, o[b])
        assert losses[-1] < losses[0], (kind, losses)
        RESULT[kind] = {"names": [v.name for v in variables], "shape": str(out.shape.as_list()),
                        "out": o.tolist(), "states": [a.tolist() for a in s],
                        "grads": [a.tolist() for a in g], "losses": losses}
    """


@program("rnn_checkpoint")
def _():
    """
    import os
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    # Saves to RNN_SAVE_DIR; restores from RNN_RESTORE_DIR when it is set instead of initializing.
    tf.reset_default_graph()
    rng = np.random.RandomState(3)
    x_data = rng.randn(3, 5, 2).astype(np.float32)
    y_data = rng.randn(3, 4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 2], name="x")
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
                                        tf.nn.rnn_cell.GRUCell(3)])
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[5, 2, 4], dtype=tf.float32)
    pred = tf.layers.dense(out[:, -1], 4, name="head")
    loss = tf.reduce_mean(tf.square(pred - y_data))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    saver = tf.train.Saver()
    names = sorted(v.op.name for v in tf.global_variables())
    restore = os.environ.get("RNN_RESTORE_DIR")
    with tf.Session() as sess:
        if restore:
            saver.restore(sess, os.path.join(restore, "model.ckpt"))
        else:
            sess.run(tf.global_variables_initializer())
            for v in sorted(tf.trainable_variables(), key=lambda v: v.name):
                v.load((rng.randn(*v.shape.as_list()) * 0.3).astype(np.float32), sess)
            for _ in range(3):
                sess.run(train, {x: x_data})
        predictions = sess.run(pred, {x: x_data})
        saver.save(sess, os.path.join(os.environ["RNN_SAVE_DIR"], "model.ckpt"))
    RESULT = {"names": names, "predictions": predictions.tolist()}
    """


@program("errors")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()


    def error_of(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001  (the class is what is compared)
            return type(e).__name__
        return None


    tf.reset_default_graph()
    rc = tf.nn.rnn_cell
    x = tf.placeholder(tf.float32, [None, 4, 3])
    seq = tf.placeholder(tf.int32, [None])
    errors = {
        "no_dtype": error_of(lambda: tf.nn.dynamic_rnn(rc.GRUCell(2), x)),
        "unknown_depth": error_of(lambda: tf.nn.dynamic_rnn(rc.GRUCell(2), tf.placeholder(tf.float32, [2, 4, None]),
                                                            dtype=tf.float32)),
        "rank2_inputs": error_of(lambda: tf.nn.dynamic_rnn(rc.GRUCell(2), tf.placeholder(tf.float32, [2, 4]),
                                                           dtype=tf.float32)),
        "seq_rank2": error_of(lambda: tf.nn.dynamic_rnn(rc.GRUCell(2), x, sequence_length=[[1, 2]], dtype=tf.float32)),
        "static_rnn_not_a_list": error_of(lambda: tf.nn.static_rnn(rc.GRUCell(2), x, dtype=tf.float32)),
        "not_a_cell": error_of(lambda: tf.nn.dynamic_rnn(lambda a, b: (a, b), x, dtype=tf.float32)),
        "ta_inconsistent_shapes": error_of(
            lambda: tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])),
        "ta_no_size": error_of(lambda: tf.TensorArray(tf.float32)),
        "map_fn_scalar": error_of(lambda: tf.map_fn(lambda e: e, tf.constant(1.0))),
        "scan_structure": error_of(lambda: tf.scan(lambda a, e: (a, a), tf.constant([1.0, 2.0]))),
    }
    cell = rc.BasicLSTMCell(3)
    out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="first")
    errors["cell_depth_changes"] = error_of(
        lambda: cell(tf.zeros([2, 5]), cell.zero_state(2, tf.float32)))
    # At run time: sequence_length of another batch size, a read past a fixed size.
    y, _ = tf.nn.dynamic_rnn(rc.GRUCell(2), x, sequence_length=seq, dtype=tf.float32, scope="second")
    past = tf.TensorArray(tf.float32, size=2).unstack(tf.ones([2, 3])).read(5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        errors["seq_wrong_batch"] = error_of(
            lambda: sess.run(y, {x: np.ones([2, 4, 3], np.float32), seq: [1, 2, 3]}))
        errors["read_past_size"] = error_of(lambda: sess.run(past))
    RESULT = errors
    """


@program("custom_cells")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()


    class OldStyleCell(tf.nn.rnn_cell.RNNCell):  # makes its variable in __call__
        state_size = 3
        output_size = 3

        def __call__(self, inputs, state, scope=None):
            with tf.variable_scope(scope or "old_style_cell"):
                w = tf.get_variable("w", [int(inputs.shape[1]) + 3, 3],
                                    initializer=tf.constant_initializer(np.linspace(-1, 1, 15).reshape(5, 3)))
                h = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
                return h, h


    class LayerStyleCell(tf.nn.rnn_cell.RNNCell):  # build() and a get_variable in call()
        @property
        def state_size(self):
            return 3

        @property
        def output_size(self):
            return 3

        def build(self, shape):
            self.w = self.add_variable("w", [int(shape[-1]) + 3, 3],
                                       initializer=tf.constant_initializer(np.linspace(1, -1, 15).reshape(5, 3)))
            self.built = True

        def call(self, inputs, state):
            u = tf.get_variable("u", [3], initializer=tf.constant_initializer([0.5, -0.25, 1.5]))
            h = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), self.w) * u)
            return h, h


    tf.reset_default_graph()
    rng = np.random.RandomState(5)
    x_data = rng.randn(2, 4, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 4, 2])
    fetches = {}
    for name, cell in (("old", OldStyleCell()), ("layer", LayerStyleCell()),
                       ("multi", tf.nn.rnn_cell.MultiRNNCell([LayerStyleCell(), OldStyleCell()]))):
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2], dtype=tf.float32, scope=name)
        variables = sorted(tf.trainable_variables(name), key=lambda v: v.name)
        fetches[name] = [out] + tf.gradients(tf.reduce_sum(out * out), variables)
    names = sorted(v.name for v in tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(fetches, {x: x_data})
    RESULT = {"names": names, "values": {k: [np.asarray(a).tolist() for a in v] for k, v in values.items()}}
    """


@program("cell_scopes")
def _():
    """
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    tf.reset_default_graph()
    x = tf.zeros([2, 3])
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    with tf.variable_scope("outer"):
        cell(x, cell.zero_state(2, tf.float32), scope="foo")  # a scope given to the call
    named = tf.nn.rnn_cell.GRUCell(4, name="my_gru")
    with tf.variable_scope("outer2"):
        named(x, named.zero_state(2, tf.float32))
        named(x, named.zero_state(2, tf.float32))  # the second call reuses
    for _ in range(2):  # two cells of one class: gru_cell, gru_cell_1
        c = tf.nn.rnn_cell.GRUCell(4)
        c(x, c.zero_state(2, tf.float32))
    RESULT = sorted(v.name for v in tf.global_variables())
    """


@program("reverse_sequence")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    tf.reset_default_graph()
    rng = np.random.RandomState(8)
    x = tf.constant(rng.randn(3, 4, 2, 5).astype(np.float32))
    lengths = tf.placeholder(tf.int64, [None])
    outs = [tf.reverse_sequence(x, lengths[:3], seq_axis=1, batch_axis=0),
            tf.reverse_sequence(x, lengths[:4], seq_axis=0, batch_axis=1),
            tf.reverse_sequence(x, tf.cast(lengths[:5], tf.int32), seq_axis=1, batch_axis=3),
            tf.reverse_sequence(x, lengths[:2], seq_dim=3, batch_dim=2)]
    weights = tf.constant(rng.randn(3, 4, 2, 5).astype(np.float32))
    grad = tf.gradients(sum(tf.reduce_sum(o * weights) for o in outs[:2]) + tf.reduce_sum(outs[3] ** 2), x)[0]
    with tf.Session() as sess:
        values = sess.run(outs + [grad], {lengths: [3, 0, 1, 2, 4]})
        try:
            sess.run(outs[0], {lengths: [5, 1, 1]})
            error = None
        except tf.errors.InvalidArgumentError as e:
            error = type(e).__name__
    RESULT = {"shapes": [str(o.shape) for o in outs], "values": [v.tolist() for v in values], "error": error}
    """


def _run_tf(names, **env_extra):
    """The RESULTs of the named programs under TensorFlow, each checked not to fail."""
    # tf.nn.rnn_cell and tf.layers need Keras 2 (the tf-keras package) under TensorFlow 2.16+.
    results = tf1_run.run_tf_programs({n: PROGRAMS[n] for n in names}, timeout=600, TF_USE_LEGACY_KERAS="1",
                                      **env_extra)
    for name in results:
        tf1_run.tf_result(results, name)
    return results


def _run_weir(name):
    return tf1_run.run_weir_program(PROGRAMS[name], name, TF_V1_HEADER)


@pytest.fixture(scope="module")
def tf_results():
    return _run_tf(["tensor_array_loop", "functional_ops", "rnn_cells", "custom_cells", "cell_scopes", "reverse_sequence",
                    "errors"])


def _close(a, b, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol)


def test_the_programs_differ_only_in_the_import():
    for text in PROGRAMS.values():
        weir_text = tf1_run.as_weir(text, TF_V1_HEADER)
        assert "tensorflow" not in weir_text and WEIR_HEADER in weir_text


def test_tensor_array_ops_in_a_while_loop_with_gradients(tf_results):
    tf = tf_results["tensor_array_loop"]
    wr_ = _run_weir("tensor_array_loop")
    assert wr_["read_twice"] == tf["read_twice"] == "InvalidArgumentError"  # a cleared index read again
    # Weir's gather knows its row count from constant indices; TF leaves it unknown.
    assert tf["shapes"] == ["(5, 3)", "(?, 3)", "(5, 3)", "<unknown>", "<unknown>"]
    assert wr_["shapes"] == ["(5, 3)", "(3, 3)", "(5, 3)", "<unknown>", "<unknown>"]
    assert len(wr_["values"]) == len(tf["values"]) == 9
    for a, b in zip(wr_["values"], tf["values"]):
        _close(a, b)
    _close(wr_["losses"], tf["losses"], rtol=1e-4)


def test_map_fn_scan_foldl_foldr_with_gradients(tf_results):
    tf = tf_results["functional_ops"]
    wr_ = _run_weir("functional_ops")
    assert [s.replace("?", "None") for s in wr_["shapes"]] == \
        [s.replace("?", "None") for s in tf["shapes"]]
    for a, b in zip(wr_["values"], tf["values"]):
        _close(a, b)


@pytest.mark.parametrize("kind", ["basic_lstm", "basic_lstm_seq", "lstm_peephole_proj_seq", "gru_seq",
                                  "gru_time_major", "multi_lstm_gru_seq", "bidirectional_seq",
                                  "static_lstm_seq", "static_bidirectional_seq", "concat_states_seq",
                                  "basic_rnn_residual_init_state"])
def test_rnn_cells_and_drivers_match_tensorflow(tf_results, kind, weir_rnn_cells):
    tf = tf_results["rnn_cells"][kind]
    wr_ = weir_rnn_cells[kind]
    assert wr_["names"] == tf["names"]
    assert wr_["shape"] == tf["shape"] == "[None, 6, 5]"
    _close(wr_["out"], tf["out"])
    assert len(wr_["states"]) == len(tf["states"])
    for a, b in zip(wr_["states"], tf["states"]):
        _close(a, b)
    assert len(wr_["grads"]) == len(tf["grads"]) == 1 + len(tf["names"])
    for a, b in zip(wr_["grads"], tf["grads"]):
        _close(a, b)
    _close(wr_["losses"], tf["losses"])


@pytest.fixture(scope="module")
def weir_rnn_cells():
    return _run_weir("rnn_cells")


def test_users_cells_in_dynamic_rnn(tf_results):
    tf = tf_results["custom_cells"]
    wr_ = _run_weir("custom_cells")
    assert wr_["names"] == tf["names"]
    assert "multi/multi_rnn_cell/cell_0/layer_style_cell/u:0" in tf["names"]
    for key in ("old", "layer", "multi"):
        assert len(wr_["values"][key]) == len(tf["values"][key])
        for a, b in zip(wr_["values"][key], tf["values"][key]):
            _close(a, b)


def test_cell_scopes_and_names_match_tensorflows(tf_results):
    assert _run_weir("cell_scopes") == tf_results["cell_scopes"]
    assert "outer/foo/kernel:0" in tf_results["cell_scopes"]
    assert "gru_cell_1/gates/bias:0" in tf_results["cell_scopes"]


def test_reverse_sequence_matches_tensorflows(tf_results):
    tf = tf_results["reverse_sequence"]
    wr_ = _run_weir("reverse_sequence")
    assert wr_["shapes"] == tf["shapes"] and wr_["error"] == tf["error"] == "InvalidArgumentError"
    for a, b in zip(wr_["values"], tf["values"]):
        _close(a, b, rtol=1e-6, atol=1e-6)


def test_rnn_variable_names_are_tensorflows(weir_rnn_cells):
    names = weir_rnn_cells
    assert names["basic_lstm"]["names"] == ["rnn/basic_lstm_cell/bias:0", "rnn/basic_lstm_cell/kernel:0"]
    assert names["gru_seq"]["names"] == ["rnn/gru_cell/candidate/bias:0", "rnn/gru_cell/candidate/kernel:0",
                                         "rnn/gru_cell/gates/bias:0", "rnn/gru_cell/gates/kernel:0"]
    assert "rnn/lstm_cell/projection/kernel:0" in names["lstm_peephole_proj_seq"]["names"]
    assert "rnn/lstm_cell/w_f_diag:0" in names["lstm_peephole_proj_seq"]["names"]
    assert "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0" in names["multi_lstm_gru_seq"]["names"]
    assert "bidirectional_rnn/bw/gru_cell/gates/kernel:0" in names["bidirectional_seq"]["names"]


def test_checkpoints_cross_between_tensorflow_and_weir(tmp_path):
    tf_dir, weir_dir, back_dir = tmp_path / "tf", tmp_path / "weir", tmp_path / "back"
    # TensorFlow trains and saves; Weir restores (and saves again) ...
    tf = _run_tf(["rnn_checkpoint"], RNN_SAVE_DIR=str(tf_dir))["rnn_checkpoint"]
    os.environ["RNN_RESTORE_DIR"], os.environ["RNN_SAVE_DIR"] = str(tf_dir), str(weir_dir)
    try:
        wr_ = _run_weir("rnn_checkpoint")
    finally:
        del os.environ["RNN_RESTORE_DIR"], os.environ["RNN_SAVE_DIR"]
    assert wr_["names"] == tf["names"]
    assert "rnn/multi_rnn_cell/cell_0/lstm_cell/w_i_diag" in wr_["names"]
    _close(wr_["predictions"], tf["predictions"])
    # ... and TensorFlow restores Weir's.
    back = _run_tf(["rnn_checkpoint"], RNN_SAVE_DIR=str(back_dir), RNN_RESTORE_DIR=str(weir_dir))["rnn_checkpoint"]
    _close(back["predictions"], tf["predictions"])


def test_errors_match_tensorflows(tf_results):
    tf = tf_results["errors"]
    wr_ = _run_weir("errors")
    assert all(v is not None for v in tf.values()), tf
    # A shape clash in the cell's math: TF raises ValueError at graph build, Weir the shape
    # function's InvalidArgumentError, also at graph build (its message checked below).
    assert tf.pop("cell_depth_changes") == "ValueError"
    assert wr_.pop("cell_depth_changes") == "InvalidArgumentError"
    assert wr_ == tf
    assert tf["no_dtype"] == "ValueError" and tf["seq_wrong_batch"] == "InvalidArgumentError"


def test_shape_clash_in_a_cell_names_the_node_and_shapes():
    with wr.Graph().as_default():
        cell = wr.nn.rnn_cell.BasicLSTMCell(3)
        wr.nn.dynamic_rnn(cell, wr.placeholder(wr.float32, [None, 4, 3]), dtype=wr.float32)
        with pytest.raises(wr.errors.InvalidArgumentError, match=r"basic_lstm_cell/MatMul.*\[2,8\], \[6,12\]"):
            cell(wr.zeros([2, 5]), cell.zero_state(2, wr.float32))
