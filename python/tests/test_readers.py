"""TFRecord files (weir.io.TFRecordWriter / tf_record_iterator), the reader
ops over filename queues, file ops, and interop with TensorFlow's writer and
reader (TF 2.21 in /opt/weir-peers, in a subprocess)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON  # noqa: E402
RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 40]


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def session():
    # A default step timeout: a test that would hang fails with DeadlineExceeded.
    return wr.Session(config=wr.ConfigProto(operation_timeout_in_ms=30000))


def write_records(path, records, compression=None):
    with wr.io.TFRecordWriter(str(path), options=compression) as writer:
        for r in records:
            writer.write(r)


def read_all(reader_factory, files, read_up_to=None):
    """(key, value) pairs the reader gives for the files, in order."""
    q = wr.FIFOQueue(len(files) + 1, [wr.string], shapes=[[]])
    reader = reader_factory()
    if read_up_to:
        key, value = reader.read_up_to(q, read_up_to)
    else:
        key, value = reader.read(q)
    out = []
    with session() as sess:
        sess.run(q.enqueue_many([np.array([str(f).encode() for f in files], object)]))
        sess.run(q.close())
        while True:
            try:
                k, v = sess.run([key, value])
            except wr.errors.OutOfRangeError:
                break
            if read_up_to:
                assert 1 <= len(k) <= read_up_to
                out.extend(zip(k, v))
            else:
                out.append((k, v))
    return out


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_writer_iterator_round_trip(tmp_path, compression):
    path = tmp_path / "r.tfrecord"
    write_records(path, RECORDS, compression)
    got = list(wr.io.tf_record_iterator(str(path), options=compression))
    assert got == RECORDS
    if compression is None:
        # The framing: 8-byte length, 4-byte crc, data, 4-byte crc.
        assert os.path.getsize(path) == sum(16 + len(r) for r in RECORDS)


def test_options_forms_and_errors(tmp_path):
    path = tmp_path / "g.tfrecord"
    write_records(path, [b"x"], wr.io.TFRecordOptions(wr.io.TFRecordCompressionType.GZIP))
    with open(path, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"  # a gzip stream
    assert list(wr.python_io.tf_record_iterator(
        str(path), wr.python_io.TFRecordOptions("GZIP"))) == [b"x"]
    with pytest.raises(ValueError):
        wr.io.TFRecordOptions("LZ4")
    with pytest.raises(wr.errors.NotFoundError):
        list(wr.io.tf_record_iterator(str(tmp_path / "missing")))


def test_writer_is_atomic_and_closed_writer_refuses(tmp_path):
    path = tmp_path / "atomic.tfrecord"
    writer = wr.io.TFRecordWriter(str(path))
    writer.write(b"one")
    writer.flush()
    assert not path.exists()  # renamed into place on close
    writer.close()
    writer.close()  # idempotent
    assert list(wr.io.tf_record_iterator(str(path))) == [b"one"]
    with pytest.raises(wr.errors.FailedPreconditionError):
        writer.write(b"two")


def test_corrupt_record_is_data_loss_naming_file_and_offset(tmp_path):
    path = tmp_path / "bad.tfrecord"
    write_records(path, [b"first", b"second"])
    data = bytearray(path.read_bytes())
    data[16 + 5 + 12 + 2] ^= 0xFF  # a byte of the second record's data
    path.write_bytes(bytes(data))
    it = wr.io.tf_record_iterator(str(path))
    assert next(it) == b"first"
    with pytest.raises(wr.errors.DataLossError) as info:
        next(it)
    assert str(path) in str(info.value) and "byte offset 21" in str(info.value)


def test_reader_reports_a_damaged_file_and_moves_on(tmp_path):
    bad, good = tmp_path / "bad.tfrecord", tmp_path / "good.tfrecord"
    write_records(bad, [b"ok", b"damaged"])
    write_records(good, [b"next"])
    data = bytearray(bad.read_bytes())
    data[-1] ^= 0xFF  # the last record's data crc
    bad.write_bytes(bytes(data))
    q = wr.FIFOQueue(4, [wr.string], shapes=[[]])
    _, value = wr.TFRecordReader().read(q)
    with session() as sess:
        sess.run(q.enqueue_many([[str(bad), str(good)]]))
        assert sess.run(value) == b"ok"
        with pytest.raises(wr.errors.DataLossError) as info:
            sess.run(value)
        assert str(bad) in str(info.value) and "byte offset 18" in str(info.value)
        assert sess.run(value) == b"next"  # the damaged file was dropped


def test_tfrecord_reader_keys_values_and_counters(tmp_path):
    files = [tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"]
    write_records(files[0], [b"a0", b"a1"])
    write_records(files[1], [b"b0"])
    got = read_all(wr.TFRecordReader, files)
    assert [v for _, v in got] == [b"a0", b"a1", b"b0"]
    assert [k for k, _ in got] == [("%s:%d" % (files[0], 0)).encode(),
                                   ("%s:%d" % (files[0], 18)).encode(),
                                   ("%s:%d" % (files[1], 0)).encode()]
    # read_up_to over GZIP files: all records, in order, batches of <= 2.
    gz = [tmp_path / "c.gz", tmp_path / "d.gz"]
    write_records(gz[0], [b"c%d" % i for i in range(3)], "GZIP")
    write_records(gz[1], [b"d%d" % i for i in range(2)], "GZIP")
    got = read_all(lambda: wr.TFRecordReader(options=wr.io.TFRecordOptions("GZIP")), gz,
                   read_up_to=2)
    assert [v for _, v in got] == [b"c0", b"c1", b"c2", b"d0", b"d1"]


def test_reader_counters_and_reset(tmp_path):
    path = tmp_path / "n.tfrecord"
    write_records(path, [b"1", b"2", b"3"])
    q = wr.FIFOQueue(4, [wr.string], shapes=[[]])
    reader = wr.TFRecordReader()
    key, value = reader.read(q)
    produced = reader.num_records_produced()
    completed = reader.num_work_units_completed()
    with session() as sess:
        sess.run(q.enqueue_many([[str(path)] * 3]))
        for _ in range(4):
            sess.run(value)
        assert sess.run(produced) == 4
        assert sess.run(completed) == 1
        sess.run(reader.reset())
        assert sess.run(produced) == 0
        assert sess.run(value) == b"1"  # a fresh reader takes the next file


def test_text_fixed_length_and_whole_file_readers(tmp_path):
    text = tmp_path / "t.csv"
    text.write_bytes(b"header\nline one\nline two\n")
    got = read_all(lambda: wr.TextLineReader(skip_header_lines=1), [text])
    assert [v for _, v in got] == [b"line one", b"line two"]
    assert got[0][0] == ("%s:2" % text).encode()

    fixed = tmp_path / "f.bin"
    fixed.write_bytes(b"HH" + b"abcdefghi" + b"F")
    got = read_all(lambda: wr.FixedLengthRecordReader(3, header_bytes=2, footer_bytes=1),
                   [fixed])
    assert [v for _, v in got] == [b"abc", b"def", b"ghi"]

    got = read_all(wr.WholeFileReader, [text, fixed])
    assert got == [(str(text).encode(), text.read_bytes()), (str(fixed).encode(),
                                                             fixed.read_bytes())]


def test_matching_read_and_write_file(tmp_path):
    for name in ["x1.txt", "x2.txt", "y.txt"]:
        (tmp_path / name).write_bytes(name.encode())
    matches = wr.matching_files(str(tmp_path / "x*.txt"))
    target = tmp_path / "out.bin"
    write = wr.write_file(str(target), wr.read_file(str(tmp_path / "y.txt")))
    with session() as sess:
        assert sorted(sess.run(matches)) == [str(tmp_path / "x1.txt").encode(),
                                             str(tmp_path / "x2.txt").encode()]
        assert sess.run(write) is None
    assert target.read_bytes() == b"y.txt"
    assert isinstance(write, wr.Operation)
    with session() as sess:
        with pytest.raises(wr.errors.NotFoundError):
            sess.run(wr.read_file(str(tmp_path / "nope")))


TF_SCRIPT = textwrap.dedent("""
    import json, sys
    import tensorflow as tf
    out_dir, weir_files = sys.argv[1], json.loads(sys.argv[2])
    records = [b"", b"tf", bytes(range(256)) * 3]
    for name, kind in [("none", ""), ("gzip", "GZIP"), ("zlib", "ZLIB")]:
        with tf.io.TFRecordWriter(out_dir + "/tf_" + name, options=kind) as w:
            for r in records:
                w.write(r)
    read = {}
    for name, (path, kind) in weir_files.items():
        read[name] = [r.numpy().hex() for r in tf.data.TFRecordDataset(path, compression_type=kind)]
    print(json.dumps(read))
""")


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON), reason="TensorFlow peers venv "
                    "/opt/weir-peers is missing")
def test_interop_with_tensorflow(tmp_path):
    weir_records = [b"weir", b"", bytes(range(200))]
    weir_files = {}
    for kind in ["", "GZIP", "ZLIB"]:
        path = tmp_path / ("weir_%s" % (kind or "none"))
        write_records(path, weir_records, kind)
        weir_files[kind or "none"] = [str(path), kind]
    proc = subprocess.run([PEERS_PYTHON, "-c", TF_SCRIPT, str(tmp_path), json.dumps(weir_files)],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    tf_read = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in weir_files:
        assert [bytes.fromhex(h) for h in tf_read[name]] == weir_records  # TF reads weir's
    tf_records = [b"", b"tf", bytes(range(256)) * 3]
    for name, kind in [("none", ""), ("gzip", "GZIP"), ("zlib", "ZLIB")]:
        path = str(tmp_path / ("tf_" + name))
        assert list(wr.io.tf_record_iterator(path, kind)) == tf_records  # weir reads TF's
    got = read_all(lambda: wr.TFRecordReader(options="GZIP"), [tmp_path / "tf_gzip"])
    assert [v for _, v in got] == tf_records


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
