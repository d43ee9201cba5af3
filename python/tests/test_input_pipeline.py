"""Input pipelines from Python: Coordinator, QueueRunner, the producers and
batchers, and a full TFRecord pipeline (string_input_producer ->
TFRecordReader -> parse_single_example -> shuffle_batch) read by runner
threads: every record exactly once per epoch, then OutOfRange, and a prompt
clean shutdown."""
import collections
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import weir as wr


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def session():
    # A default step timeout: a test that would hang fails with DeadlineExceeded.
    return wr.Session(config=wr.ConfigProto(operation_timeout_in_ms=30000))


# --- Coordinator -------------------------------------------------------------

def test_coordinator_reraises_the_first_error_in_join():
    coord = wr.train.Coordinator()

    def worker(fail):
        with coord.stop_on_exception():
            if fail:
                raise ValueError("boom")
            while not coord.should_stop():
                time.sleep(0.01)

    threads = [threading.Thread(target=worker, args=(i == 1,)) for i in range(3)]
    for t in threads:
        t.start()
    assert coord.wait_for_stop(5)
    with pytest.raises(ValueError, match="boom"):
        coord.join(threads, stop_grace_period_secs=5)
    assert coord.joined and not any(t.is_alive() for t in threads)


def test_coordinator_clean_stop_and_stragglers():
    coord = wr.train.Coordinator()
    coord.request_stop(wr.errors.OutOfRangeError(None, None, "end of data"))  # clean
    assert coord.should_stop()
    coord.join([])  # nothing raised
    coord.clear_stop()
    assert not coord.should_stop()

    release = threading.Event()
    stuck = threading.Thread(target=release.wait, name="stuck-thread")
    stuck.start()
    coord.request_stop()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="stuck-thread"):
        coord.join([stuck], stop_grace_period_secs=0.2)
    assert time.monotonic() - start < 3  # prompt (loose for loaded CI machines)
    release.set()
    stuck.join()
    # A later error is kept only if it came before the stop.
    coord = wr.train.Coordinator()
    coord.request_stop()
    coord.request_stop(ValueError("after the stop"))
    coord.join([])


# --- QueueRunner -------------------------------------------------------------

def test_queue_runner_closes_queue_when_input_ends():
    source = wr.FIFOQueue(10, [wr.int32], shapes=[[]])
    fill = source.enqueue_many([np.arange(6, dtype=np.int32)])
    close_source = source.close()
    target = wr.FIFOQueue(3, [wr.int32], shapes=[[]])
    # Each run moves one element; when source is drained, OutOfRange ends the
    # threads and the last one closes target.
    runner = wr.train.QueueRunner(target, [target.enqueue(source.dequeue())] * 2)
    wr.train.add_queue_runner(runner)
    out = target.dequeue()
    coord = wr.train.Coordinator()
    with session() as sess:
        sess.run(fill)
        sess.run(close_source)
        threads = wr.train.start_queue_runners(sess, coord)
        assert len(threads) == 3  # two enqueue threads and the close-on-stop one
        got = []
        with pytest.raises(wr.errors.OutOfRangeError):
            while True:
                got.append(int(sess.run(out)))
        assert sorted(got) == list(range(6))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert runner.exceptions_raised == []


def test_queue_runner_error_goes_to_coordinator():
    q = wr.FIFOQueue(3, [wr.float32], shapes=[[]])
    x = wr.placeholder(wr.float32, [])
    runner = wr.train.QueueRunner(q, [q.enqueue(x)])  # x is never fed: an error
    coord = wr.train.Coordinator()
    with session() as sess:
        threads = runner.create_threads(sess, coord=coord, start=True)
        with pytest.raises(wr.errors.InvalidArgumentError):
            coord.join(threads, stop_grace_period_secs=5)


def test_shutdown_with_blocked_producers_is_prompt():
    value = wr.constant([1.0, 2.0])
    batch = wr.train.batch([value], batch_size=4, capacity=2, num_threads=3)
    assert batch.shape.as_list() == [4, 2]  # one component: a Tensor, as TF
    coord = wr.train.Coordinator()
    with session() as sess:
        threads = wr.train.start_queue_runners(sess, coord)
        np.testing.assert_array_equal(sess.run(batch), [[1, 2]] * 4)
        time.sleep(0.1)  # the producers now wait on the full queue
        start = time.monotonic()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        assert time.monotonic() - start < 3  # prompt (loose for loaded CI machines)
    assert not any(t.is_alive() for t in threads)


# --- producers and batchers --------------------------------------------------

def test_range_input_producer_epochs_and_limit_epochs():
    q = wr.train.range_input_producer(5, num_epochs=3, shuffle=True, seed=4)
    value = q.dequeue()
    counted = wr.train.limit_epochs(wr.constant(7), num_epochs=2)
    coord = wr.train.Coordinator()
    with session() as sess:
        sess.run(wr.local_variables_initializer())
        threads = wr.train.start_queue_runners(sess, coord)
        got = []
        with pytest.raises(wr.errors.OutOfRangeError):
            while True:
                got.append(int(sess.run(value)))
        assert sess.run(counted) == 7 and sess.run(counted) == 7
        with pytest.raises(wr.errors.OutOfRangeError):
            sess.run(counted)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert len(got) == 15
    for epoch in range(3):
        assert sorted(got[5 * epoch:5 * epoch + 5]) == list(range(5))
    assert got != [0, 1, 2, 3, 4] * 3  # shuffled


def test_slice_input_producer_and_batch_enqueue_many_dict():
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.int64) * 10
    image, label = wr.train.slice_input_producer([images, labels], num_epochs=1, shuffle=False)
    assert image.shape.as_list() == [2] and label.shape.as_list() == []
    batched = wr.train.batch({"image": image, "label": label}, batch_size=4,
                             allow_smaller_final_batch=True)
    assert batched["image"].shape.as_list() == [None, 2]
    many = wr.train.batch([wr.constant([[1, 2], [3, 4], [5, 6]])], batch_size=2,
                          enqueue_many=True, name="many")
    assert many.shape.as_list() == [2, 2]
    coord = wr.train.Coordinator()
    with session() as sess:
        sess.run(wr.local_variables_initializer())
        threads = wr.train.start_queue_runners(sess, coord)
        first = sess.run(batched)
        second = sess.run(batched)
        with pytest.raises(wr.errors.OutOfRangeError):
            sess.run(batched)
        np.testing.assert_array_equal(sess.run(many), [[1, 2], [3, 4]])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    np.testing.assert_array_equal(first["label"], [0, 10, 20, 30])
    np.testing.assert_array_equal(first["image"], images[:4])
    np.testing.assert_array_equal(second["label"], [40, 50])  # the smaller final batch


def test_maybe_batch_keeps_only_the_kept_examples():
    index = wr.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    evens = wr.train.maybe_batch([index], keep_input=wr.equal(index % 2, 0), batch_size=2,
                                 allow_smaller_final_batch=True)
    rows = wr.constant([[1, 1], [2, 2], [3, 3]])
    kept = wr.train.maybe_batch([rows], keep_input=[True, False, True], batch_size=2,
                                enqueue_many=True, name="rows")
    assert kept.shape.as_list() == [2, 2]
    with pytest.raises(ValueError):
        wr.train.maybe_batch([index], keep_input=[True, False], batch_size=2)
    coord = wr.train.Coordinator()
    with session() as sess:
        sess.run(wr.local_variables_initializer())
        threads = wr.train.start_queue_runners(sess, coord)
        got = []
        with pytest.raises(wr.errors.OutOfRangeError):
            while True:
                got.extend(int(v) for v in sess.run(evens))
        np.testing.assert_array_equal(sess.run(kept), [[1, 1], [3, 3]])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert got == [0, 2, 4, 6, 8]


def test_batch_checks_shapes_at_build_time():
    x = wr.placeholder(wr.float32, [None])
    with pytest.raises(ValueError, match="fully defined"):
        wr.train.batch([x], batch_size=2)
    padded = wr.train.batch([x], batch_size=2, dynamic_pad=True)
    assert padded.shape.as_list() == [2, None]
    with pytest.raises(ValueError):
        wr.train.string_input_producer([])


# --- the full pipeline -------------------------------------------------------

def write_shards(tmp_path, shards, per_shard):
    files = []
    for s in range(shards):
        path = tmp_path / ("data-%d.tfrecord" % s)
        with wr.io.TFRecordWriter(str(path)) as writer:
            for i in range(per_shard):
                ident = s * per_shard + i
                feature = {
                    "id": wr.train.Feature(int64_list=wr.train.Int64List(value=[ident])),
                    "x": wr.train.Feature(float_list=wr.train.FloatList(
                        value=[ident * 0.5, -ident])),
                }
                writer.write(wr.train.Example(
                    features=wr.train.Features(feature=feature)).SerializeToString())
        files.append(str(path))
    return files


def test_tfrecord_pipeline_reads_each_record_once_per_epoch(tmp_path):
    files = write_shards(tmp_path, shards=3, per_shard=20)
    epochs = 2
    filename_queue = wr.train.string_input_producer(files, num_epochs=epochs, shuffle=True,
                                                    seed=3)
    readers = []
    for _ in range(2):  # two reader threads (TF's batch_join pattern)
        _, serialized = wr.TFRecordReader().read(filename_queue)
        parsed = wr.parse_single_example(serialized, {
            "id": wr.FixedLenFeature([], wr.int64),
            "x": wr.FixedLenFeature([2], wr.float32)})
        readers.append([parsed["id"], parsed["x"]])
    ids, xs = wr.train.shuffle_batch_join(readers, batch_size=7, capacity=30,
                                          min_after_dequeue=10, seed=5,
                                          allow_smaller_final_batch=True)
    assert xs.shape.as_list() == [None, 2]
    coord = wr.train.Coordinator()
    seen = collections.Counter()
    with session() as sess:
        sess.run([wr.global_variables_initializer(), wr.local_variables_initializer()])
        threads = wr.train.start_queue_runners(sess=sess, coord=coord)
        order = []
        try:
            while not coord.should_stop():
                batch_ids, batch_xs = sess.run([ids, xs])
                np.testing.assert_allclose(batch_xs[:, 0], batch_ids * 0.5)
                np.testing.assert_allclose(batch_xs[:, 1], -batch_ids)
                seen.update(int(i) for i in batch_ids)
                order.extend(int(i) for i in batch_ids)
        except wr.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        start = time.monotonic()
        coord.join(threads, stop_grace_period_secs=10)
        assert time.monotonic() - start < 3  # prompt (loose for loaded CI machines)
    assert seen == collections.Counter({i: epochs for i in range(60)})
    assert order != sorted(order)


def test_pipeline_shutdown_mid_epoch_is_prompt(tmp_path):
    files = write_shards(tmp_path, shards=2, per_shard=50)
    filename_queue = wr.train.string_input_producer(files)  # no epoch limit
    _, serialized = wr.TFRecordReader().read(filename_queue)
    parsed = wr.parse_single_example(serialized, {"id": wr.FixedLenFeature([], wr.int64)})
    batch = wr.train.shuffle_batch([parsed["id"]], batch_size=5, capacity=20,
                                   min_after_dequeue=5, num_threads=4)
    coord = wr.train.Coordinator()
    with session() as sess:
        sess.run(wr.local_variables_initializer())
        threads = wr.train.start_queue_runners(sess, coord)
        for _ in range(3):
            assert sess.run(batch).shape == (5,)
        time.sleep(0.1)  # the enqueue threads block on the full queue
        start = time.monotonic()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        assert time.monotonic() - start < 3  # prompt (loose for loaded CI machines)


# --- one TF1 program, run by TensorFlow 2.21 and by weir ---------------------

from peers import PEERS_PYTHON  # noqa: E402
TF1_PROGRAM = r'''
# A TF1 input-pipeline program; `tf` is tensorflow.compat.v1 or weir.
def program(tf, np, tmpdir):
    out = {}
    tf.reset_default_graph()
    q = tf.FIFOQueue(5, [tf.int32, tf.string], shapes=[[], [2]], names=["n", "s"])
    enq = q.enqueue_many({"n": [1, 2, 3], "s": [[b"a", b"b"], [b"c", b"d"], [b"e", b"f"]]})
    many = q.dequeue_many(2)
    up_to = q.dequeue_up_to(4)
    out["static"] = [many["n"].shape.as_list(), many["s"].shape.as_list(),
                     up_to["s"].shape.as_list(), q.size().shape.as_list()]
    pad = tf.PaddingFIFOQueue(4, [tf.int64], shapes=[[None, 2]])
    x = tf.placeholder(tf.int64, [None, 2])
    pad_enq = pad.enqueue([x])
    pad_deq = pad.dequeue_many(2)
    prio = tf.PriorityQueue(4, [tf.float32], shapes=[[]])
    prio_enq = prio.enqueue_many([[3, 1, 2], [30.0, 10.0, 20.0]])
    prio_deq = prio.dequeue_many(3)
    counter = tf.train.range_input_producer(7, num_epochs=1, shuffle=False)
    batched = tf.train.batch([counter.dequeue()], batch_size=3, allow_smaller_final_batch=True)
    ex = tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[5, 6])),
        "b": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"xy"]))}))
    parsed = tf.parse_single_example(ex.SerializeToString(), {
        "a": tf.FixedLenFeature([2], tf.int64), "b": tf.VarLenFeature(tf.string),
        "c": tf.FixedLenFeature([], tf.float32, default_value=1.5)})
    tags = [tf.summary.scalar("loss", tf.constant(1.0)),
            tf.summary.scalar("loss", tf.constant(2.0))]
    hist = tf.summary.histogram("h", tf.constant(np.linspace(-3.0, 5.0, 101)))
    out["summary_names"] = [t.op.name for t in tags] + [hist.op.name]
    path = tmpdir + "/prog.tfrecord"
    with tf.python_io.TFRecordWriter(path) as w:
        for i in range(3):
            w.write(b"record %d" % i)
    files = tf.train.string_input_producer([path], num_epochs=2, shuffle=False)
    key, value = tf.TFRecordReader().read(files)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(enq)
        m = sess.run(many)
        out["many"] = [m["n"].tolist(), m["s"].tolist()]
        sess.run(q.close())
        u = sess.run(up_to)
        out["up_to"] = [u["n"].tolist(), u["s"].tolist()]
        try:
            sess.run(up_to)
            out["after_close"] = "no error"
        except tf.errors.OutOfRangeError:
            out["after_close"] = "OutOfRange"
        sess.run(pad_enq, {x: [[1, 2]]})
        sess.run(pad_enq, {x: [[3, 4], [5, 6], [7, 8]]})
        out["padded"] = sess.run(pad_deq).tolist()
        sess.run(prio_enq)
        p = sess.run(prio_deq)
        out["priority"] = [p[0].tolist(), p[1].tolist()]
        values = sess.run(parsed)
        out["parsed"] = [values["a"].tolist(), values["b"].indices.tolist(),
                         values["b"].values.tolist(), values["b"].dense_shape.tolist(),
                         float(values["c"])]
        s = sess.run(tags + [hist])
        out["summaries"] = [v.hex() for v in s]
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        batches = []
        try:
            while True:
                batches.append(sess.run(batched).tolist())
        except tf.errors.OutOfRangeError:
            pass
        out["batches"] = batches
        records = []
        try:
            while True:
                k, v = sess.run([key, value])
                records.append([k.decode().rsplit("/", 1)[-1], v.decode()])
        except tf.errors.OutOfRangeError:
            pass
        out["records"] = records
        coord.request_stop()
        coord.join(threads)
    return out
'''
RUN_UNDER_TF = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
namespace = {}
exec(sys.stdin.read(), namespace)
print(json.dumps(namespace["program"](tf, np, sys.argv[1]), default=lambda o: o.decode("latin-1")))
"""


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON), reason="TensorFlow peers venv "
                    "/opt/weir-peers is missing")
def test_tf1_program_matches_tensorflow(tmp_path):
    """Queues with names, padding and priority, close semantics, a producer
    and batcher with runner threads, a reader over a filename queue,
    parse_single_example and summaries (their bytes): the same results."""
    (tmp_path / "tf").mkdir()
    (tmp_path / "weir").mkdir()
    proc = subprocess.run([PEERS_PYTHON, "-c", RUN_UNDER_TF, str(tmp_path / "tf")],
                          input=TF1_PROGRAM, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = json.loads(proc.stdout.strip().splitlines()[-1])
    namespace = {}
    exec(TF1_PROGRAM, namespace)
    got = json.loads(json.dumps(namespace["program"](wr, np, str(tmp_path / "weir")),
                                default=lambda o: o.decode("latin-1")))
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert got[key] == expected[key], key
