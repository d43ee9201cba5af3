"""Summaries from Python: scalar / histogram / merge / merge_all (tags as
TF1 names them), and FileWriter's event files read back with TensorBoard's
own EventAccumulator (scalars and the graph)."""
import os
import re
import socket
import time

import numpy as np
import pytest

import weir as wr
from weir.core import protos


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def session():
    # A default step timeout: a test that would hang fails with DeadlineExceeded.
    return wr.Session(config=wr.ConfigProto(operation_timeout_in_ms=30000))


def parse_summary(data):
    return protos.Summary.FromString(data)


def test_scalar_tags_names_and_values():
    x = wr.placeholder(wr.float32, [])
    a = wr.summary.scalar("loss", x)
    b = wr.summary.scalar("loss", x * 2.0)
    with wr.name_scope("train"):
        c = wr.summary.scalar("loss", x + 1.0)
    d = wr.summary.scalar("acc", x, family="metrics")
    e = wr.summary.scalar("bad name!", x)
    assert a.op.name == "loss" and b.op.name == "loss_1" and c.op.name == "train/loss"
    assert a.dtype == wr.string and a.shape.as_list() == []
    with session() as sess:
        values = sess.run([a, b, c, d, e], {x: 1.5})
    got = [(v.tag, v.simple_value) for s in values for v in parse_summary(s).value]
    assert got == [("loss", 1.5), ("loss_1", 3.0), ("train/loss", 2.5),
                   ("metrics/metrics/acc", 1.5), ("bad_name_", 1.5)]
    assert wr.get_collection(wr.GraphKeys.SUMMARIES) == [a, b, c, d, e]


def test_histogram_matches_numpy_and_rejects_nan():
    values = np.random.RandomState(0).normal(size=1000).astype(np.float64) * 3
    v = wr.placeholder(wr.float64, [None])
    h = wr.summary.histogram("weights", v)
    with session() as sess:
        histo = parse_summary(sess.run(h, {v: values})).value[0].histo
        with pytest.raises(wr.errors.InvalidArgumentError):
            sess.run(h, {v: np.array([1.0, np.nan])})
    assert histo.num == 1000
    assert histo.min == values.min() and histo.max == values.max()
    np.testing.assert_allclose(histo.sum, values.sum(), rtol=1e-12)
    np.testing.assert_allclose(histo.sum_squares, (values ** 2).sum(), rtol=1e-12)
    assert sum(histo.bucket) == 1000
    # Counts by bucket: bucket i holds limit[i-1] <= v < limit[i].
    limits = np.array(histo.bucket_limit)
    expected = np.bincount(np.searchsorted(limits, values, side="right"),
                           minlength=len(limits))[:len(limits)]
    np.testing.assert_array_equal(np.array(histo.bucket), expected)


def test_merge_and_merge_all():
    assert wr.summary.merge_all() is None
    x = wr.constant(2.0)
    a = wr.summary.scalar("a", x)
    b = wr.summary.histogram("b", wr.constant([1.0, 2.0]))
    private = wr.summary.scalar("c", x, collections=["mine"])
    merged = wr.summary.merge_all()
    mine = wr.summary.merge_all(key="mine")
    both = wr.summary.merge([a, private])
    with session() as sess:
        all_tags = [v.tag for v in parse_summary(sess.run(merged)).value]
        mine_tags = [v.tag for v in parse_summary(sess.run(mine)).value]
        both_tags = [v.tag for v in parse_summary(sess.run(both)).value]
        with pytest.raises(wr.errors.InvalidArgumentError, match="a"):
            sess.run(wr.summary.merge([a, a]))  # a repeated tag
    assert all_tags == ["a", "b"]
    assert mine_tags == ["c"]
    assert both_tags == ["a", "c"]
    assert private not in wr.get_collection(wr.GraphKeys.SUMMARIES)
    assert b in wr.get_collection(wr.GraphKeys.SUMMARIES)


def events(path):
    return [protos.Event.FromString(r) for r in wr.io.tf_record_iterator(path)]


def test_file_writer_tensorboard_reads_scalars_and_graph(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    x = wr.placeholder(wr.float32, [], name="x")
    loss = wr.square(x, name="loss_value")
    summary = wr.summary.merge([wr.summary.scalar("loss", loss),
                                wr.summary.histogram("spread", wr.stack([x, -x, 2 * x]))])
    logdir = str(tmp_path / "run")
    writer = wr.summary.FileWriter(logdir, graph=wr.get_default_graph(), flush_secs=60)
    with session() as sess:
        for step in range(5):
            writer.add_summary(sess.run(summary, {x: float(step)}), global_step=step)
    writer.add_session_log(protos.SessionLog(status=protos.SessionLog.STOP), global_step=5)
    writer.flush()
    # Readable after flush, before close.
    names = os.listdir(logdir)
    assert len(names) == 1
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.%s" % re.escape(socket.gethostname()),
                        names[0])
    path = os.path.join(logdir, names[0])
    assert writer.event_file_path == path
    got = events(path)
    assert got[0].file_version == "brain.Event:2"
    # version, graph, the graph as a MetaGraphDef (TF's writer adds it), summaries, session log
    assert len(got) == 1 + 1 + 1 + 5 + 1
    assert protos.MetaGraphDef.FromString(got[2].meta_graph_def).graph_def == \
        protos.GraphDef.FromString(got[1].graph_def)
    writer.close()
    writer.close()

    acc = EventAccumulator(logdir, size_guidance={"histograms": 0})  # 0: keep all
    acc.Reload()
    assert "loss" in acc.Tags()["scalars"]
    scalars = acc.Scalars("loss")
    assert [s.step for s in scalars] == [0, 1, 2, 3, 4]
    assert [s.value for s in scalars] == [0.0, 1.0, 4.0, 9.0, 16.0]
    assert "spread" in acc.Tags()["histograms"]
    histograms = acc.Histograms("spread")
    assert [h.step for h in histograms] == [0, 1, 2, 3, 4]
    last = histograms[-1].histogram_value
    assert (last.min, last.max, last.num, last.sum) == (-4.0, 8.0, 3.0, 8.0)
    graph = acc.Graph()
    assert {"x", "loss_value", "loss"} <= {n.name for n in graph.node}
    assert {n.op for n in graph.node if n.name == "loss_value"} == {"Square"}
    assert {n.name for n in acc.MetaGraph().graph_def.node} == {n.name for n in graph.node}


def test_file_writer_naming_suffix_timer_and_reopen(tmp_path):
    logdir = str(tmp_path)
    first = wr.summary.FileWriter(logdir, filename_suffix=".v2", flush_secs=0.1)
    second = wr.summary.FileWriter(logdir, filename_suffix=".v2")  # likely the same second
    assert first.event_file_path != second.event_file_path
    assert first.event_file_path.startswith(os.path.join(logdir, "events.out.tfevents."))
    assert ".v2" in os.path.basename(first.event_file_path)
    value = protos.Summary(value=[protos.Summary.Value(tag="t", simple_value=3.0)])
    first.add_summary(value, 10)
    first.add_summary(value.SerializeToString(), 11)
    time.sleep(0.6)  # the flush timer makes them readable
    got = events(first.event_file_path)
    assert [(e.step, e.summary.value[0].simple_value) for e in got[1:]] == [(10, 3.0),
                                                                            (11, 3.0)]
    assert got[1].wall_time > 0
    first.close()
    first.add_summary(value, 12)  # dropped, as TF's closed writer does
    assert len(events(got_path := first.event_file_path)) == 3
    first.reopen()
    assert first.event_file_path != got_path
    assert len(os.listdir(logdir)) == 3
    first.close()
    second.close()
    with wr.summary.FileWriter(logdir) as third:
        with pytest.raises(Exception, match="(?i)pars|decod|error"):
            third.add_summary(b"\xff\xff not a summary", 1)
    with pytest.raises(ValueError):
        wr.summary.FileWriter(logdir, flush_secs=0)
