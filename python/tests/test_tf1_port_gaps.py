"""The TF1 surface that porting the classic programs (test_tf1_classic.py)
found missing, each checked on its own: tf.data, the candidate samplers and
sampled losses (against numpy references written here), Session.partial_run,
feeds keyed by a nested structure, MetaGraphDef collections, the checkpoint
reader, and FileWriter.add_run_metadata / add_meta_graph (TensorFlow reads
them back in test_tf1_classic.py). Where TensorFlow is the reference it runs
in a subprocess (tf1_run)."""
import os

import numpy as np
import pytest

import tf1_run
import weir as wr
from weir.framework import errors


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def _bodies():
    """The TF1 program bodies (module constants named _*_BODY) compared with TF."""
    return {name: value for name, value in globals().items() if name.endswith("_BODY")}


@pytest.fixture(scope="module")
def tf_bodies():
    # All bodies under TensorFlow in one subprocess (tf.layers needs Keras 2 under TF 2.16+).
    programs = {name: tf1_run.TF_HEADER + "tf.reset_default_graph()\n" + body for name, body in _bodies().items()}
    return tf1_run.run_tf_programs(programs, TF_USE_LEGACY_KERAS="1")


def _tf(tf_bodies, name):
    return tf1_run.tf_result(tf_bodies, name)


def _drain(sess, element, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element))
        except errors.OutOfRangeError:
            return out
    raise AssertionError("the iterator did not end")


# --- tf.data ------------------------------------------------------------------------------

def test_dataset_structures_take_skip_zip_and_range():
    features = {"a": np.arange(10, dtype=np.float32), "b": np.arange(10, dtype=np.int64) * 10}
    ds = wr.data.Dataset.from_tensor_slices(features).skip(2).take(5)
    labels = wr.data.Dataset.range(100, 105)
    zipped = wr.data.Dataset.zip((ds, labels)).batch(2)
    assert zipped.output_types == ({"a": wr.float32, "b": wr.int64}, wr.int64)
    (feat, label) = zipped.make_one_shot_iterator().get_next()
    assert feat["a"].shape.as_list() == [None] and label.dtype == wr.int64
    with wr.Session() as sess:
        batches = _drain(sess, (feat, label))
    assert [b[1].tolist() for b in batches] == [[100, 101], [102, 103], [104]]
    assert [b[0]["b"].tolist() for b in batches] == [[20, 30], [40, 50], [60]]


def test_concatenate_and_from_tensors():
    ds = wr.data.Dataset.range(3).concatenate(wr.data.Dataset.range(10, 12)).batch(4)
    whole = wr.data.Dataset.from_tensors(np.arange(4)).repeat(2)
    element, twice = ds.make_one_shot_iterator().get_next(), whole.make_one_shot_iterator().get_next()
    with wr.Session() as sess:
        assert [b.tolist() for b in _drain(sess, element)] == [[0, 1, 2, 10], [11]]
        assert [b.tolist() for b in _drain(sess, twice)] == [[0, 1, 2, 3]] * 2
    with pytest.raises(TypeError, match="types differ"):
        wr.data.Dataset.range(3).concatenate(wr.data.Dataset.from_tensors(1.0))


def test_python_lists_are_tensors_and_python_floats_float32():
    ds = wr.data.Dataset.from_tensor_slices(([1.0, 2.0, 3.0], [[1, 2], [3, 4], [5, 6]]))
    assert ds.output_types == (wr.float32, wr.int32)
    assert [s.as_list() for s in ds.output_shapes] == [[], [2]]


def test_map_before_and_after_batch_and_output_shapes():
    ds = wr.data.Dataset.from_tensor_slices(np.arange(7, dtype=np.float32))
    ds = ds.map(lambda x: (x * 2.0, wr.cast(x, wr.int32) * 3)).batch(3, drop_remainder=True)
    ds = ds.map(lambda a, b: {"sum": wr.reduce_sum(a), "b": b})
    assert ds.output_types == {"sum": wr.float32, "b": wr.int32}
    assert ds.output_shapes["b"].as_list() == [3]
    element = wr.data.make_one_shot_iterator(ds).get_next()
    with wr.Session() as sess:
        values = _drain(sess, element)
    assert [v["sum"] for v in values] == [6.0, 24.0]  # 2*(0+1+2), 2*(3+4+5); the 7th dropped
    assert values[1]["b"].tolist() == [9, 12, 15]


def test_shuffle_is_a_seeded_permutation_reshuffled_each_epoch():
    wr.set_random_seed(3)
    ds = wr.data.Dataset.range(50).shuffle(10, seed=1).repeat(2).batch(50)
    element = ds.make_one_shot_iterator().get_next()
    with wr.Session() as sess:
        first, second = _drain(sess, element)
    assert sorted(first.tolist()) == sorted(second.tolist()) == list(range(50))
    assert first.tolist() != list(range(50)) and first.tolist() != second.tolist()
    # A buffer of 10 moves an element at most ~10 places ahead of its turn.
    assert all(v <= i + 10 for i, v in enumerate(first.tolist()))
    wr.reset_default_graph()
    wr.set_random_seed(3)
    again = wr.data.Dataset.range(50).shuffle(10, seed=1).repeat(2).batch(50).make_one_shot_iterator()
    with wr.Session() as sess:
        assert sess.run(again.get_next()).tolist() == first.tolist()  # the same seeds, the same order


def test_initializable_iterator_over_a_placeholder_and_errors():
    data = wr.placeholder(wr.float32, [None, 2])
    iterator = wr.data.Dataset.from_tensor_slices(data).batch(4).make_initializable_iterator()
    element = iterator.get_next()
    with wr.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="not been initialized"):
            sess.run(element)
        sess.run(iterator.initializer, {data: np.ones([6, 2], np.float32)})
        assert [b.shape for b in _drain(sess, element)] == [(4, 2), (2, 2)]
        sess.run(iterator.initializer, {data: np.zeros([1, 2], np.float32)})
        assert [b.tolist() for b in _drain(sess, element)] == [[[0.0, 0.0]]]
    with pytest.raises(ValueError, match="initializer"):
        wr.data.Dataset.range(3).make_one_shot_iterator().initializer
    with pytest.raises(TypeError, match="flat_map's map_func must return a Dataset"):
        wr.data.Dataset.range(3).flat_map(lambda x: x)
    with pytest.raises(ValueError, match="first dimensions differ"):
        wr.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def test_text_line_tfrecord_and_generator_sources(tmp_path):
    path = str(tmp_path / "lines.txt")
    with open(path, "w") as f:
        f.write("alpha\nbeta\r\ngamma")
    records = str(tmp_path / "r.tfrecord")
    with wr.python_io.TFRecordWriter(records) as writer:
        for r in (b"x", b"yy"):
            writer.write(r)

    def gen(n):
        for i in range(n):
            yield i, [float(i)] * i
    lines = wr.data.TextLineDataset(path).make_one_shot_iterator().get_next()
    recs = wr.data.TFRecordDataset([records]).make_one_shot_iterator().get_next()
    gen_el = wr.data.Dataset.from_generator(gen, (wr.int64, wr.float32), ([], [None]),
                                            args=(3,)).make_one_shot_iterator().get_next()
    with wr.Session() as sess:
        assert _drain(sess, lines) == [b"alpha", b"beta", b"gamma"]
        assert _drain(sess, recs) == [b"x", b"yy"]
        got = _drain(sess, gen_el)
    assert [g[0] for g in got] == [0, 1, 2] and [g[1].tolist() for g in got] == [[], [1.0], [2.0, 2.0]]


# --- candidate sampling and the sampled losses ----------------------------------------------

def _log_uniform_p(c, range_max):
    return (np.log(c + 2.0) - np.log(c + 1.0)) / np.log(range_max + 1.0)


def test_log_uniform_sampler_unique_and_expected_counts():
    labels = wr.constant([[5], [7]], wr.int64)
    sampled, true_count, sampled_count = wr.nn.log_uniform_candidate_sampler(
        labels, num_true=1, num_sampled=20, unique=True, range_max=30, seed=4)
    plain = wr.nn.log_uniform_candidate_sampler(labels, 1, 400, unique=False, range_max=30, seed=5)
    with wr.Session() as sess:
        s, tc, sc = sess.run([sampled, true_count, sampled_count])
        ps, ptc, _ = sess.run(plain)
    assert len(set(s.tolist())) == 20 and s.min() >= 0 and s.max() < 30 and s.dtype == np.int64
    # Unique sampling: 1 - (1 - p)^tries with one shared number of tries >= 20.
    p = _log_uniform_p(np.array([5, 7]), 30)
    tries = np.log1p(-tc.ravel()) / np.log1p(-p)
    assert np.allclose(tries, tries[0], rtol=1e-3) and tries[0] >= 20 - 1e-3
    np.testing.assert_allclose(sc, -np.expm1(tries[0] * np.log1p(-_log_uniform_p(s, 30))), rtol=1e-4)
    # Without `unique`: num_sampled * p, and the draws follow p (class 0 has p = log2/log31 ~ 0.2).
    np.testing.assert_allclose(ptc.ravel(), 400 * p, rtol=1e-5)
    p0 = _log_uniform_p(0, 30)
    assert abs(np.mean(ps == 0) - p0) < 0.06, (np.mean(ps == 0), p0)
    with pytest.raises(ValueError, match="range_max"):
        wr.nn.uniform_candidate_sampler(labels, 1, 40, unique=True, range_max=30)


def _np_sampled_logits(w, b, labels, x, sampled, true_count, sampled_count, remove_hits):
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(true_count)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_count)
    if remove_hits:
        hits = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = np.where(hits, sampled_logits - np.finfo(np.float32).max, sampled_logits)
    return true_logits, sampled_logits


def test_nce_and_sampled_softmax_losses_match_numpy():
    rng = np.random.RandomState(0)
    w, b = rng.randn(12, 4).astype(np.float32), rng.randn(12).astype(np.float32)
    x = rng.randn(3, 4).astype(np.float32)
    labels = np.array([[1, 2], [3, 3], [5, 0]], np.int64)
    sampled = np.array([2, 7, 9, 11], np.int64)
    true_count = rng.uniform(0.1, 1, [3, 2]).astype(np.float32)
    sampled_count = rng.uniform(0.1, 1, [4]).astype(np.float32)
    values = (sampled, true_count, sampled_count)
    nce = wr.nn.nce_loss(w, b, labels, x, 4, 12, num_true=2, sampled_values=values)
    ssm = wr.nn.sampled_softmax_loss(w, b, labels, x, 4, 12, num_true=2, sampled_values=values)
    with wr.Session() as sess:
        nce_v, ssm_v = sess.run([nce, ssm])
    tl, sl = _np_sampled_logits(w, b, labels, x, sampled, true_count, sampled_count, False)
    sigmoid_xent = lambda z, y: np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
    expected_nce = sigmoid_xent(tl, 0.5).sum(1) + sigmoid_xent(sl, 0.0).sum(1)
    np.testing.assert_allclose(nce_v, expected_nce, rtol=1e-5)
    tl, sl = _np_sampled_logits(w, b, labels, x, sampled, true_count, sampled_count, True)
    logits = np.concatenate([tl, sl], 1).astype(np.float64)
    log_z = logits.max(1) + np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1))
    expected_ssm = -(0.5 * (tl[:, 0] + tl[:, 1])) + log_z  # labels 1/2 on each true class
    np.testing.assert_allclose(ssm_v, expected_ssm, rtol=1e-5)


def test_nce_loss_gradient_matches_finite_differences():
    rng = np.random.RandomState(1)
    w0 = rng.randn(6, 3)
    w = wr.Variable(w0, dtype=wr.float64)
    x = rng.randn(2, 3)
    values = (np.array([1, 4], np.int64), np.full([2, 1], 0.5), np.array([0.3, 0.2]))
    loss = wr.reduce_sum(wr.nn.nce_loss(w, np.zeros(6), np.array([[0], [4]]), x, 2, 6,
                                        sampled_values=values))
    grad, = wr.gradients(loss, [w])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        g = sess.run(wr.convert_to_tensor(grad))  # an IndexedSlices, as in TF
        eps, numeric = 1e-6, np.zeros_like(w0)
        for i in range(6):
            for j in range(3):
                for sign in (1, -1):
                    w.load(w0 + sign * eps * np.eye(6)[i][:, None] * np.eye(3)[j][None, :], sess)
                    numeric[i, j] += sign * sess.run(loss) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-8)


# --- sessions: partial runs and nested feeds -------------------------------------------------

def test_partial_run_runs_each_node_once_and_checks_its_arguments():
    a, b = wr.placeholder(wr.float32, []), wr.placeholder(wr.float32, [])
    counter = wr.Variable(0, name="counter")
    noise = wr.random_uniform([])
    with wr.control_dependencies([counter.assign_add(1)]):
        early = a + noise
    late = early * b
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        h = sess.partial_run_setup([early, late], [a, b])
        e = sess.partial_run(h, early, {a: 1.0})
        with pytest.raises(errors.InvalidArgumentError, match="already been fed"):
            sess.partial_run(h, late, {a: 2.0})
        l = sess.partial_run(h, late, {b: 4.0})
        assert np.isclose(l, 4.0 * e) and sess.run(counter) == 1  # the assign ran once
        h2 = sess.partial_run_setup([late], [a, b])
        with pytest.raises(errors.InvalidArgumentError, match="not given"):
            sess.partial_run(h2, late, {a: 1.0})
        with pytest.raises(errors.InvalidArgumentError, match="not specified"):
            sess.partial_run(h2, early, {b: 1.0})
        with pytest.raises(errors.InvalidArgumentError, match="setup"):
            sess.partial_run("nonsense", late)


def test_feed_dict_key_may_be_a_nested_structure():
    cell = wr.nn.rnn_cell.LSTMCell(3)
    state = cell.zero_state(2, wr.float32)
    total = wr.reduce_sum(state.c) + 10 * wr.reduce_sum(state.h)
    with wr.Session() as sess:
        value = wr.nn.rnn_cell.LSTMStateTuple(np.ones([2, 3], np.float32), np.full([2, 3], 2, np.float32))
        assert sess.run(total, {state: value}) == 6 + 10 * 12
        with pytest.raises(ValueError, match="structure"):
            sess.run(total, {state: np.ones([2, 3], np.float32)})


# --- meta graphs, checkpoints -------------------------------------------------------------------

def test_meta_graph_collections_round_trip(tmp_path):
    w = wr.get_variable("w", initializer=np.ones([2], np.float32))
    step = wr.train.get_or_create_global_step()
    loss = wr.reduce_sum(w * w, name="loss")
    train = wr.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
    wr.add_to_collection("train_op", train)
    wr.add_to_collection("my_strings", "hello")
    wr.add_to_collection("my_ints", 7)
    meta = wr.train.export_meta_graph(str(tmp_path / "m.meta"))
    assert {"train_op", "variables", "trainable_variables", "global_step", "my_strings"} <= set(meta.collection_def)
    with wr.Graph().as_default():
        wr.train.import_meta_graph(str(tmp_path / "m.meta"))
        assert sorted(v.op.name for v in wr.global_variables()) == ["global_step", "w"]
        assert [v.op.name for v in wr.trainable_variables()] == ["w"]
        assert wr.get_collection("my_strings") == [b"hello"] and wr.get_collection("my_ints") == [7]
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            sess.run(wr.get_collection("train_op")[0])
            assert sess.run("w:0").tolist() == [0.5, 0.5]  # "w:0" reads the resource variable
            assert sess.run(wr.train.get_global_step()) == 1
            assert sess.run(wr.report_uninitialized_variables()).tolist() == []


def test_checkpoint_reader_reads_weir_and_tensorflow_checkpoints(tmp_path):
    w = wr.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    s = wr.Variable(np.array([b"a", b"bcd"], dtype=object), name="s")
    n = wr.Variable(np.int64(-5), name="n")
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        path = wr.train.Saver().save(sess, str(tmp_path / "weir" / "model"), global_step=3)
    reader = wr.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"w": [2, 3], "s": [2], "n": []}
    assert reader.get_variable_to_dtype_map()["n"] == wr.int64
    np.testing.assert_array_equal(reader.get_tensor("w"), np.arange(6).reshape(2, 3))
    assert reader.get_tensor("s").tolist() == [b"a", b"bcd"] and reader.get_tensor("n") == -5
    assert wr.train.list_variables(str(tmp_path / "weir")) == [("n", []), ("s", [2]), ("w", [2, 3])]
    np.testing.assert_array_equal(wr.train.load_variable(str(tmp_path / "weir"), "w:0"), reader.get_tensor("w"))
    with pytest.raises(errors.NotFoundError):
        reader.get_tensor("missing")
    with open(path + ".index", "r+b") as f:  # a damaged index is DataLoss, not a crash
        f.seek(-8, os.SEEK_END)
        f.write(b"\0" * 8)
    with pytest.raises(errors.DataLossError):
        wr.train.NewCheckpointReader(path)
    # TensorFlow's checkpoint of a few variables, read by weir.
    tf_dir = str(tmp_path / "tf")
    tf1_run.run_tf("""
import numpy as np
a = tf.Variable(np.linspace(0, 1, 5).astype(np.float32), name="scope/a")
b = tf.Variable(np.int32(42), name="b")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    tf.train.Saver().save(sess, %r)
RESULT = 1
""" % os.path.join(tf_dir, "model"))
    assert dict(wr.train.list_variables(tf_dir)) == {"scope/a": [5], "b": []}
    np.testing.assert_allclose(wr.train.load_variable(tf_dir, "scope/a"), np.linspace(0, 1, 5), rtol=1e-6)
    assert wr.train.load_variable(tf_dir, "b") == 42


def test_file_writer_run_metadata_needs_distinct_tags(tmp_path):
    x = wr.constant(2.0) * 3.0
    writer = wr.summary.FileWriter(str(tmp_path))
    with wr.Session() as sess:
        metadata = wr.RunMetadata()
        sess.run(x, options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE), run_metadata=metadata)
    writer.add_run_metadata(metadata, "step1")
    with pytest.raises(ValueError, match="already been used"):
        writer.add_run_metadata(metadata, "step1")
    writer.close()
    events = list(wr.train.summary_iterator(writer.event_file_path))
    assert [e.WhichOneof("what") for e in events] == ["file_version", "tagged_run_metadata"]
    assert events[1].tagged_run_metadata.tag == "step1"
    from weir.core import protos
    parsed = protos.StepStats.FromString(_step_stats_field(metadata.SerializeToString()))
    assert any(n.node_name == "mul" for d in parsed.dev_stats for n in d.node_stats)


def _step_stats_field(run_metadata_bytes):
    # RunMetadata: field 1 (step_stats), length-delimited.
    assert run_metadata_bytes[0] == 0x0A
    length, shift, pos = 0, 0, 1
    while True:
        byte = run_metadata_bytes[pos]
        length |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if not byte & 0x80:
            break
    return run_metadata_bytes[pos:pos + length]


# --- image preprocessing, confusion_matrix, make_template, text summaries, against TF ---------

_IMAGE_BODY = """
import numpy as np
rng = np.random.RandomState(0)
u8 = rng.randint(0, 256, size=(2, 4, 5, 3)).astype(np.uint8)
f32 = rng.rand(4, 5, 3).astype(np.float32)
ops = {
    "standardize": tf.image.per_image_standardization(u8),
    "standardize_flat": tf.image.per_image_standardization(np.full([3, 3, 1], 7.0, np.float32)),
    "flip_lr": tf.image.flip_left_right(u8),
    "flip_ud": tf.image.flip_up_down(f32),
    "brightness": tf.image.adjust_brightness(f32, 0.25),
    "brightness_u8": tf.image.adjust_brightness(u8, 0.1),
    "contrast": tf.image.adjust_contrast(f32, 1.7),
    "contrast_u8": tf.image.adjust_contrast(u8, 0.5),
    "to_float": tf.image.convert_image_dtype(u8, tf.float32),
    "to_u8": tf.image.convert_image_dtype(f32, tf.uint8),
    "to_u8_saturate": tf.image.convert_image_dtype(f32 * 1.5, tf.uint8, saturate=True),
    "to_int32": tf.image.convert_image_dtype(u8, tf.int32),
    "confusion": tf.confusion_matrix([0, 1, 2, 2, 1], [0, 2, 2, 2, 0]),
    "confusion_weighted": tf.confusion_matrix([0, 1, 1], [1, 1, 1], num_classes=3, weights=[1.0, 2.0, 0.5],
                                              dtype=tf.float32),
    "flip_random_batch": tf.image.random_flip_left_right(np.stack([u8[0]] * 8)),
}

def dense(x, units):
    w = tf.get_variable("w", [int(x.shape[1]), units], initializer=tf.ones_initializer())
    return tf.matmul(x, w)

layer = tf.make_template("layer", dense, units=2)
a = layer(tf.ones([1, 3]))
b = layer(tf.ones([1, 3]) * 2)
text = tf.summary.text("notes", tf.constant(["hello", "world"]))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    values = sess.run(ops)
    ab = sess.run([a, b])
    text_value = sess.run(text)
summary = tf.Summary.FromString(text_value)
flips = values.pop("flip_random_batch")
flipped = [bool((img != u8[0]).any()) for img in flips]
assert all(np.array_equal(img, u8[0]) or np.array_equal(img, u8[0][:, ::-1]) for img in flips)
RESULT = {k: np.asarray(v).tolist() for k, v in values.items()}
RESULT["dtypes"] = {k: str(np.asarray(v).dtype) for k, v in values.items()}
RESULT["template"] = [np.asarray(v).tolist() for v in ab]
RESULT["template_vars"] = [v.op.name for v in tf.global_variables()]
RESULT["some_flipped"] = any(flipped) and not all(flipped)
RESULT["text"] = [summary.value[0].tag, summary.value[0].metadata.plugin_data.plugin_name,
                  [s.decode() for s in summary.value[0].tensor.string_val]]
"""


def test_image_preprocessing_confusion_template_and_text_summary_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_IMAGE_BODY')
    wr_result = tf1_run.run_weir(_IMAGE_BODY)
    for key in tf:
        if key in ("dtypes", "template", "template_vars", "some_flipped", "text"):
            assert wr_result[key] == tf[key], key
        else:
            np.testing.assert_allclose(np.array(wr_result[key], np.float64), np.array(tf[key], np.float64),
                                       rtol=1e-5, atol=1e-5, err_msg=key)
    assert tf["some_flipped"]  # 8 images, each flipped with probability 1/2


_ADADELTA_BODY = """
import numpy as np
w = tf.Variable(np.array([1.0, -2.0, 3.0], np.float32), name="w")
loss = tf.reduce_sum(tf.square(w - [0.5, 0.5, 0.5]) * [1.0, 3.0, 0.1])
opt = tf.train.AdadeltaOptimizer(learning_rate=1.0, rho=0.9, epsilon=1e-3)
train = opt.minimize(loss)
slots = sorted(v.op.name for v in tf.global_variables() if v.op.name != "w")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    trajectory = []
    for _ in range(30):
        sess.run(train)
        trajectory.append(sess.run(w).tolist())
    accum = sess.run(opt.get_slot(w, "accum_update")).tolist()
RESULT = {"trajectory": trajectory, "slots": slots, "accum_update": accum}
"""


def test_adadelta_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_ADADELTA_BODY')
    wr_result = tf1_run.run_weir(_ADADELTA_BODY)
    assert wr_result["slots"] == tf["slots"] == ["w/Adadelta", "w/Adadelta_1"]
    np.testing.assert_allclose(wr_result["trajectory"], tf["trajectory"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wr_result["accum_update"], tf["accum_update"], rtol=1e-5)


_TEXT_CNN_BODY = """
import numpy as np
rng = np.random.RandomState(2)
ids = rng.randint(20, size=(8, 12))
labels = (ids[:, :6].sum(1) > ids[:, 6:].sum(1)).astype(np.int32)
x = tf.placeholder(tf.int32, [None, 12])
emb = tf.get_variable("emb", initializer=(0.3 * rng.randn(20, 5)).astype(np.float32))
h = tf.nn.embedding_lookup(emb, x)
c1 = tf.layers.conv1d(h, 4, 3, padding="same", activation=tf.nn.relu,
                      kernel_initializer=tf.constant_initializer(0.2 * rng.randn(3, 5, 4)))
p1 = tf.layers.max_pooling1d(c1, 2, 2)
c2 = tf.layers.conv1d(p1, 3, 2, strides=2, dilation_rate=1, data_format="channels_last",
                      kernel_initializer=tf.constant_initializer(0.2 * rng.randn(2, 4, 3)))
p2 = tf.layers.average_pooling1d(c2, 3, 1, padding="same")
logits = tf.layers.dense(tf.layers.flatten(p2), 2, kernel_initializer=tf.constant_initializer(
    0.3 * rng.randn(9, 2)))
loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
train = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
shapes = [t.shape.as_list() for t in (c1, p1, c2, p2)]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = [float(sess.run([loss, train], {x: ids})[0]) for _ in range(15)]
RESULT = {"losses": losses, "shapes": shapes, "names": sorted(v.op.name for v in tf.trainable_variables()),
          "kernel_shape": tf.trainable_variables()[1].shape.as_list()}
"""


def test_conv1d_and_pooling1d_layers_as_tf(tf_bodies):
    tf = _tf(tf_bodies, "_TEXT_CNN_BODY")
    wr_result = tf1_run.run_weir(_TEXT_CNN_BODY)
    assert wr_result["shapes"] == tf["shapes"] == [[None, 12, 4], [None, 6, 4], [None, 3, 3], [None, 3, 3]]
    assert wr_result["names"] == tf["names"] and wr_result["kernel_shape"] == tf["kernel_shape"] == [3, 5, 4]
    np.testing.assert_allclose(wr_result["losses"], tf["losses"], rtol=1e-4)


_WARM_START_BODY = """
import os, tempfile
import numpy as np
folder = tempfile.mkdtemp()
with tf.Graph().as_default():
    with tf.variable_scope("old"):
        a = tf.get_variable("a", initializer=np.arange(4, dtype=np.float32))
        b = tf.get_variable("b", initializer=np.float32(5))
    c = tf.get_variable("c", initializer=np.ones([2, 2], np.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, os.path.join(folder, "model"))
with tf.Graph().as_default():
    with tf.variable_scope("new"):
        a = tf.get_variable("a", [4])
        b = tf.get_variable("b", [])
    d = tf.get_variable("d", [2, 2])
    e = tf.get_variable("e", initializer=np.float32(9))
    tf.train.init_from_checkpoint(folder, {"old/": "new/", "c": d})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([a, b, d, e])
    try:
        tf.train.init_from_checkpoint(folder, {"missing": "new/a"})
        error = "none"
    except ValueError as err:
        error = "ValueError"
RESULT = {"values": [np.asarray(v).tolist() for v in values], "error": error}
"""


def test_init_from_checkpoint_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_WARM_START_BODY')
    wr_result = tf1_run.run_weir(_WARM_START_BODY)
    assert wr_result == tf
    assert tf["values"] == [[0.0, 1.0, 2.0, 3.0], 5.0, [[1.0, 1.0], [1.0, 1.0]], 9.0]


_CROP_BODY = """
import numpy as np
rng = np.random.RandomState(5)
img = rng.randint(0, 256, size=(5, 6, 3)).astype(np.uint8)
batch = rng.rand(2, 4, 7, 3).astype(np.float32)
ph = tf.placeholder(tf.float32, [None, None, 3])
ops = {
    "crop": tf.image.crop_to_bounding_box(img, 1, 2, 3, 3),
    "pad": tf.image.pad_to_bounding_box(img, 1, 0, 7, 8),
    "crop_or_pad_small": tf.image.resize_image_with_crop_or_pad(img, 3, 9),
    "crop_or_pad_batch": tf.image.resize_image_with_crop_or_pad(batch, 6, 4),
    "crop_or_pad_dynamic": tf.image.resize_image_with_crop_or_pad(ph, 4, 4),
    "central": tf.image.central_crop(batch, 0.5),
    "gray_u8": tf.image.rgb_to_grayscale(img),
    "gray_f": tf.image.rgb_to_grayscale(batch),
    "band": tf.matrix_band_part(rng.rand(2, 4, 5).astype(np.float32), 1, 2),
    "band_lower": tf.linalg.band_part(rng.rand(4, 4).astype(np.float32), -1, 0),
}
shapes = {k: v.shape.as_list() for k, v in ops.items()}
bad = tf.image.crop_to_bounding_box(ph, 1, 1, 4, 4)
with tf.Session() as sess:
    sess.run(tf.tables_initializer())
    values = sess.run(ops, {ph: batch[0]})
    try:
        sess.run(bad, {ph: batch[0]})
        error = "none"
    except tf.errors.InvalidArgumentError:
        error = "InvalidArgumentError"
RESULT = {k: np.asarray(v).tolist() for k, v in values.items()}
RESULT["shapes"] = shapes
RESULT["error"] = error
"""


def test_image_crops_pads_grayscale_and_band_part_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_CROP_BODY')
    wr_result = tf1_run.run_weir(_CROP_BODY)
    assert wr_result["error"] == tf["error"] == "InvalidArgumentError"
    for key in tf:
        if key == "error":
            continue
        if key == "shapes":
            for name, shape in tf[key].items():
                assert wr_result[key][name] == shape, name
            continue
        np.testing.assert_allclose(np.array(wr_result[key], np.float64), np.array(tf[key], np.float64),
                                   rtol=1e-5, atol=1e-5, err_msg=key)


_SCOPE_BODY = """
names = []
with tf.variable_scope("Model"):
    with tf.variable_scope(None, default_name="layer") as inner:
        names.append(inner.name)
    with tf.variable_scope(inner):  # a scope object re-entered: its exit puts back the counts
        pass
    with tf.variable_scope(None, default_name="layer") as second:
        names.append(second.name)
with tf.variable_scope("Model", reuse=True):  # entered again by name: default names restart
    with tf.variable_scope(None, default_name="layer") as again:
        names.append(again.name)
RESULT = names
"""


def test_default_names_restart_in_a_scope_entered_again_as_tf(tf_bodies):
    # The PTB tutorial's validation model finds the training model's variables this way.
    assert tf1_run.run_weir(_SCOPE_BODY) == _tf(tf_bodies, '_SCOPE_BODY') == [
        "Model/layer", "Model/layer_1", "Model/layer"]


_ITERATORS_BODY = """
import numpy as np
train = tf.data.Dataset.from_tensor_slices((np.arange(6, dtype=np.float32), np.arange(6))).map(
    lambda x, y: (x * 10.0, y)).batch(4)
valid = tf.data.Dataset.from_tensor_slices((np.full(3, -1.0, np.float32), np.arange(3) + 100)).batch(2)
iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
x, y = iterator.get_next()
train_init, valid_init = iterator.make_initializer(train), iterator.make_initializer(valid)
total = tf.reduce_sum(x)

handle = tf.placeholder(tf.string, [])
feedable = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
fx, fy = feedable.get_next()
one_shot = train.repeat().make_one_shot_iterator()
init_it = valid.make_initializable_iterator()

def drain(sess, fetch, feed=None):
    out = []
    while True:
        try:
            out.append([np.asarray(v).tolist() for v in sess.run(fetch, feed)])
        except tf.errors.OutOfRangeError:
            return out

with tf.Session() as sess:
    sess.run(train_init)
    first = drain(sess, [total, y])
    sess.run(valid_init)
    second = drain(sess, [total, y])
    sess.run(train_init)
    again = sess.run(total)
    h_train, h_valid = sess.run([one_shot.string_handle(), init_it.string_handle()])
    sess.run(init_it.initializer)
    mixed = [sess.run(fy, {handle: h_train}).tolist(), sess.run(fy, {handle: h_valid}).tolist(),
             sess.run(fx, {handle: h_train}).tolist(), sess.run(fy, {handle: h_valid}).tolist()]
errors = []
for other in (tf.data.Dataset.range(3), tf.data.Dataset.from_tensors((1.0, 2.0))):
    try:
        iterator.make_initializer(other)
        errors.append("none")
    except (TypeError, ValueError) as e:
        errors.append(type(e).__name__)
error = errors
RESULT = {"first": first, "second": second, "again": float(again), "mixed": mixed, "error": error,
          "shapes": [x.shape.as_list(), fy.shape.as_list()]}
"""


def test_reinitializable_and_feedable_iterators_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_ITERATORS_BODY')
    assert tf1_run.run_weir(_ITERATORS_BODY) == tf
    assert tf["first"] == [[60.0, [0, 1, 2, 3]], [90.0, [4, 5]]] and tf["mixed"][1] == [100, 101]


_FILTER_PAD_BODY = """
import numpy as np
lines = tf.data.Dataset.from_tensor_slices(np.array(["a bb", "", "ccc d e", "ff", "g h i j"]))
lengths = tf.data.Dataset.range(10).map(lambda i: i * 3).filter(lambda v: tf.equal(v % 2, 0))
ragged = tf.data.Dataset.range(1, 5).map(lambda n: (tf.range(n), tf.fill([n, 2], tf.cast(n, tf.float32))))
padded = ragged.padded_batch(2, padded_shapes=([None], [4, 2]), padding_values=(np.int64(-1), 0.5))
kept = lines.filter(lambda s: tf.strings.regex_full_match(s, ".{2,}")).batch(2)
a, b = lengths.make_one_shot_iterator().get_next(), padded.make_one_shot_iterator().get_next()
c = kept.make_one_shot_iterator().get_next()

def drain(sess, fetch):
    out = []
    while True:
        try:
            value = sess.run(fetch)
            out.append([np.asarray(v).tolist() for v in value] if isinstance(value, tuple) else
                       np.asarray(value).tolist())
        except tf.errors.OutOfRangeError:
            return out

with tf.Session() as sess:
    got = [drain(sess, a), drain(sess, b), [[s.decode() for s in batch] for batch in drain(sess, c)]]
RESULT = {"got": got, "shapes": [s.as_list() for s in padded.output_shapes]}
"""


def test_filter_and_padded_batch_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_FILTER_PAD_BODY')
    assert tf1_run.run_weir(_FILTER_PAD_BODY) == tf
    assert tf["got"][0] == [0, 6, 12, 18, 24] and tf["shapes"] == [[None, None], [None, 4, 2]]


_TEST_CASE_SCRIPT = """
import sys
import numpy as np


class SquareTest(tf.test.TestCase):

    def testSquare(self):
        with self.cached_session():
            x = tf.square([2.0, 3.0])
            self.assertAllEqual(x.eval(), [4.0, 9.0])
            self.assertAllClose(self.evaluate(x), np.array([4.0, 9.0]) + 1e-7)
            self.assertShapeEqual(np.zeros(2), x)

    def testGraphIsFreshEachTest(self):
        self.assertEqual(len(tf.get_default_graph().get_operations()), 0)

    def testOpError(self):
        with self.session() as sess:
            with self.assertRaisesOpError("Incompatible shapes|must have the same|broadcast"):
                sess.run(tf.add(tf.placeholder(tf.float32), [1.0, 2.0]), {"Placeholder:0": [1.0, 2.0, 3.0]})

    def testRangeAndNear(self):
        self.assertAllInRange(np.array([0.0, 0.5, 1.0]), 0.0, 1.0)
        self.assertNear(1.0, 1.05, 0.1)
        self.assertAllGreater(np.array([2, 3]), 1)
        self.assertFalse(tf.test.is_gpu_available())

    def testFailsWhenItShould(self):
        with self.assertRaises(AssertionError):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])


if __name__ == "__main__":
    tf.test.main()
"""


def test_test_case_runs_a_ported_unit_test(tmp_path):
    code, out, err = tf1_run.run_script("import weir.compat.v1 as tf\n", _TEST_CASE_SCRIPT, tmp_path=tmp_path)
    assert code == 0 and "Ran 5 tests" in err and "OK" in err, err[-3000:]
    tf_code, _, tf_err = tf1_run.run_script("import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()\n",
                                            _TEST_CASE_SCRIPT, tmp_path=tmp_path, weir=False)
    # TF collects test_session too and skips it ("Ran 6 tests ... OK (skipped=1)").
    assert tf_code == 0 and "OK" in tf_err and "FAILED" not in tf_err, tf_err[-3000:]
    broken = _TEST_CASE_SCRIPT.replace("self.assertAllEqual(x.eval(), [4.0, 9.0])",
                                       "self.assertAllEqual(x.eval(), [4.0, 9.5])")
    assert broken != _TEST_CASE_SCRIPT
    code, _, err = tf1_run.run_script("import weir.compat.v1 as tf\n", broken, tmp_path=tmp_path)
    assert code != 0 and "FAILED (failures=1)" in err, err[-3000:]


_INTERLEAVE_BODY = """
import os, tempfile
import numpy as np
folder = tempfile.mkdtemp()
for shard, n in enumerate([3, 1, 4, 2]):
    with tf.python_io.TFRecordWriter(os.path.join(folder, "part-%d.tfrecord" % shard)) as w:
        for i in range(n):
            w.write(("%d-%d" % (shard, i)).encode())
files = tf.data.Dataset.list_files(os.path.join(folder, "*.tfrecord"), shuffle=False)
records = files.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=2)
flat = tf.data.Dataset.from_tensor_slices(np.array([[1, 2], [3, 4], [5, 6]])).flat_map(
    lambda row: tf.data.Dataset.from_tensor_slices(row * 10)).batch(4)
lines = files.flat_map(tf.data.TFRecordDataset).map(lambda s: tf.strings.regex_replace(s, "-", "/"))

def drain(sess, t):
    out = []
    while True:
        try:
            v = sess.run(t)
            out.append(v.decode() if isinstance(v, bytes) else np.asarray(v).tolist())
        except tf.errors.OutOfRangeError:
            return out

with tf.Session() as sess:
    got = [drain(sess, records.make_one_shot_iterator().get_next()),
           drain(sess, flat.make_one_shot_iterator().get_next()),
           drain(sess, lines.make_one_shot_iterator().get_next())]
RESULT = got
"""


def test_list_files_interleave_and_flat_map_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_INTERLEAVE_BODY')
    assert tf1_run.run_weir(_INTERLEAVE_BODY) == tf
    assert tf[1] == [[10, 20, 30, 40], [50, 60]]


_SESSIONS_BODY = """
it = tf.data.Dataset.range(5).make_one_shot_iterator()
nxt = it.get_next()
init_it = tf.data.Dataset.range(3).make_initializable_iterator()
init_next = init_it.get_next()
out = []
with tf.Session() as sess:
    out.append([int(sess.run(nxt)) for _ in range(3)])
    sess.run(init_it.initializer)
    out.append(int(sess.run(init_next)))
with tf.Session() as sess:  # a new session: the one-shot iterator starts again
    out.append([int(sess.run(nxt)) for _ in range(2)])
    try:
        sess.run(init_next)
        out.append("no error")
    except tf.errors.FailedPreconditionError:
        out.append("FailedPreconditionError")
RESULT = out
"""


def test_iterator_state_is_per_session_as_tf(tf_bodies):
    tf = _tf(tf_bodies, '_SESSIONS_BODY')
    assert tf1_run.run_weir(_SESSIONS_BODY) == tf == [[0, 1, 2], 0, [0, 1], "FailedPreconditionError"]
