"""Queues from Python: FIFO order, shuffle (min_after_dequeue, seeds),
padding, priority, close and OutOfRange, dequeue_up_to, timeouts, names,
static shapes and build-time checks."""
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


def test_fifo_order_and_sizes():
    q = wr.FIFOQueue(10, [wr.int32, wr.float32], shapes=[[], [2]])
    enq = q.enqueue_many([[1, 2, 3], [[1, 1], [2, 2], [3, 3]]])
    a, b = q.dequeue()
    assert a.shape.as_list() == [] and b.shape.as_list() == [2]
    many = q.dequeue_many(2)
    assert many[0].shape.as_list() == [2] and many[1].shape.as_list() == [2, 2]
    size = q.size()
    with session() as sess:
        sess.run(enq)
        assert sess.run(size) == 3
        first = sess.run([a, b])
        assert first[0] == 1 and np.array_equal(first[1], [1.0, 1.0])
        sess.run(q.enqueue((7, [7.0, 8.0])))
        ints, floats = sess.run(many)
        np.testing.assert_array_equal(ints, [2, 3])
        np.testing.assert_array_equal(floats, [[2, 2], [3, 3]])
        assert sess.run(size) == 1
        assert sess.run(a) == 7
    assert q.dtypes == [wr.int32, wr.float32]
    assert q.name == "fifo_queue"
    assert q.queue_ref.dtype == wr.resource


def test_close_then_out_of_range_and_up_to():
    q = wr.FIFOQueue(10, wr.int64, shapes=[[]])
    enq = q.enqueue_many([np.arange(5, dtype=np.int64)])
    up_to = q.dequeue_up_to(3)
    many = q.dequeue_many(3)
    assert up_to.shape.as_list() == [None]
    assert many.shape.as_list() == [3]
    closed = q.is_closed()
    with session() as sess:
        sess.run(enq)
        sess.run(q.close())
        assert sess.run(closed)
        # Enqueue after close: cancelled.
        with pytest.raises(wr.errors.CancelledError):
            sess.run(q.enqueue(np.int64(9)))
        # 5 left: 3, then the 2 remaining (fewer than asked), then OutOfRange.
        np.testing.assert_array_equal(sess.run(up_to), [0, 1, 2])
        with pytest.raises(wr.errors.OutOfRangeError):
            sess.run(many)  # 2 < 3 left: dequeue_many fails ...
        np.testing.assert_array_equal(sess.run(up_to), [3, 4])  # ... and keeps them
        with pytest.raises(wr.errors.OutOfRangeError):
            sess.run(up_to)


def test_random_shuffle_permutation_seeded_and_min_after_dequeue():
    def run(seed):
        wr.reset_default_graph()
        q = wr.RandomShuffleQueue(100, 10, [wr.int32], shapes=[[]], seed=seed)
        enq = q.enqueue_many([np.arange(50, dtype=np.int32)])
        deq = q.dequeue()
        size = q.size()
        with session() as sess:
            sess.run(enq)
            got = [int(sess.run(deq)) for _ in range(40)]
            assert sess.run(size) == 10  # min_after_dequeue still held
            # With 10 left and the queue open, a dequeue waits: give it a timeout.
            with pytest.raises(wr.errors.DeadlineExceededError):
                sess.run(deq, options=wr.RunOptions(timeout_in_ms=50))
            sess.run(q.close())
            got += [int(v) for v in sess.run(q.dequeue_up_to(20))]
        return got

    a = run(7)
    assert sorted(a) == list(range(50))
    assert a != list(range(50))
    assert run(7) == a
    assert run(8) != a


def test_padding_fifo_queue_pads_to_the_longest():
    q = wr.PaddingFIFOQueue(10, [wr.float32, wr.string], shapes=[[None], []])
    x = wr.placeholder(wr.float32, [None])
    s = wr.placeholder(wr.string, [])
    enq = q.enqueue([x, s])
    batch = q.dequeue_many(3)
    assert batch[0].shape.as_list() == [3, None]
    with session() as sess:
        for values, tag in ([1.0], b"a"), ([1.0, 2.0, 3.0], b"b"), ([], b"c"):
            sess.run(enq, {x: np.array(values, np.float32), s: tag})
        padded, tags = sess.run(batch)
    np.testing.assert_array_equal(padded, [[1, 0, 0], [1, 2, 3], [0, 0, 0]])
    assert list(tags) == [b"a", b"b", b"c"]


def test_priority_queue_dequeues_smallest_priority_first():
    q = wr.PriorityQueue(10, [wr.string], shapes=[[]])
    enq = q.enqueue_many([np.array([5, -2, 9, 0], np.int64),
                          np.array([b"five", b"minus two", b"nine", b"zero"], object)])
    prio, value = q.dequeue()
    assert prio.dtype == wr.int64
    with session() as sess:
        sess.run(enq)
        got = [tuple(sess.run([prio, value])) for _ in range(4)]
    assert got == [(-2, b"minus two"), (0, b"zero"), (5, b"five"), (9, b"nine")]


def test_names_take_and_give_dicts():
    q = wr.FIFOQueue(4, [wr.int32, wr.float32], shapes=[[], []], names=["i", "f"])
    enq = q.enqueue({"f": 2.5, "i": 3})
    out = q.dequeue()
    assert set(out) == {"i", "f"}
    with session() as sess:
        sess.run(enq)
        got = sess.run(out)
    assert got["i"] == 3 and got["f"] == 2.5
    with pytest.raises(ValueError):
        q.enqueue([1, 2.0])  # names given: a dict is needed
    with pytest.raises(ValueError):
        q.enqueue({"i": 1})  # keys must match


def test_build_time_checks():
    q = wr.FIFOQueue(4, [wr.float32], shapes=[[2]])
    with pytest.raises(ValueError):
        q.enqueue(wr.constant([1.0, 2.0, 3.0]))  # shape [3] vs [2]
    with pytest.raises(ValueError):
        q.enqueue_many(wr.constant(1.0))  # rank 0
    with pytest.raises(ValueError):
        q.enqueue(([1.0, 2.0], [3.0, 4.0]))  # two components for one
    with pytest.raises(ValueError):
        wr.FIFOQueue(4, [wr.float32, wr.int32], shapes=[[2]])  # lengths differ
    with pytest.raises((TypeError, ValueError)):
        q.enqueue(wr.constant([1, 2]))  # int32 into a float32 queue


def test_runtime_shape_check_names_the_component():
    q = wr.FIFOQueue(4, [wr.float32], shapes=[[2]])
    x = wr.placeholder(wr.float32)  # unknown shape: checked when it runs
    enq = q.enqueue([x])
    with session() as sess:
        with pytest.raises(wr.errors.InvalidArgumentError, match="component 0"):
            sess.run(enq, {x: np.zeros([3], np.float32)})


def test_close_cancels_a_blocked_enqueue_and_wakes_a_blocked_dequeue():
    full = wr.FIFOQueue(1, [wr.int32], shapes=[[]])
    empty = wr.FIFOQueue(1, [wr.int32], shapes=[[]])
    enq = full.enqueue(1)
    deq = empty.dequeue()
    with session() as sess:
        sess.run(enq)
        errors = {}

        def run(key, fetch):
            try:
                sess.run(fetch)
            except wr.errors.OpError as e:
                errors[key] = e

        threads = [threading.Thread(target=run, args=("enqueue", enq)),
                   threading.Thread(target=run, args=("dequeue", deq))]
        for t in threads:
            t.start()
        time.sleep(0.2)
        assert all(t.is_alive() for t in threads)  # both wait (the GIL is free)
        start = time.monotonic()
        sess.run(full.close(cancel_pending_enqueues=True))
        sess.run(empty.close())
        for t in threads:
            t.join(5)
        assert time.monotonic() - start < 3  # prompt (loose for loaded CI machines)
        assert not any(t.is_alive() for t in threads)
    assert isinstance(errors["enqueue"], wr.errors.CancelledError)
    assert isinstance(errors["dequeue"], wr.errors.OutOfRangeError)


def test_shared_name_shares_one_queue():
    a = wr.FIFOQueue(4, [wr.int32], shapes=[[]], shared_name="shared", name="a")
    b = wr.FIFOQueue(4, [wr.int32], shapes=[[]], shared_name="shared", name="b")
    with session() as sess:
        sess.run(a.enqueue(42))
        assert sess.run(b.dequeue()) == 42
