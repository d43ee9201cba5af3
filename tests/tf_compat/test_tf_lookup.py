"""Lookup tables (tf.lookup / tf.compat.v1.lookup): TensorFlow 2.21 builds a graph of
static tables (a key/value initializer and a vocabulary file) and a mutable table, runs it,
and writes it; Weir imports and runs TensorFlow's graph, and builds the same tables with its
own Python API; both must give TensorFlow's values. Then the errors: a lookup before the
initializer, an initializer with other data, a short vocabulary, the wrong key dtype."""
import numpy as np
import pytest

import weir as wr

SCRIPT = '''
v1.disable_v2_behavior()
vocab = os.path.join(OUT, "vocab.txt")
with open(vocab, "w") as f:
    f.write("the\\t7\\nquick\\t3\\nbrown\\t9\\nfox\\t1\\n")
g = tf.Graph()
with g.as_default():
    words = v1.placeholder(tf.string, [None], name="words")
    kv = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], np.array([10, 20, 30], np.int64)),
        -1, name="kv")
    ids = tf.identity(kv.lookup(words), name="ids")
    by_line = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                      tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER,
                                      delimiter=" "), -1, name="by_line")
    by_column = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.float32, 1), -0.5, name="by_column")
    column_values = tf.identity(by_column.lookup(words), name="column_values")
    line_ids = tf.identity(by_line.lookup(tf.constant(["fox\\t1", "none"])), name="line_ids")
    reverse = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(np.array([3, 1], np.int64), ["three", "one"]),
        "?", name="reverse")
    names = tf.identity(reverse.lookup(tf.constant([[1, 2], [3, 3]], tf.int64)), name="names")
    sizes = tf.stack([kv.size(), by_line.size(), by_column.size()], name="sizes")
    mutable = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, 0.0, name="mutable")
    insert = mutable.insert(tf.constant([5, 6, 7], tf.int64), tf.constant([0.5, 0.6, 0.7]))
    insert = tf.group(insert, name="insert")
    remove = tf.group(mutable.remove(tf.constant([6], tf.int64)), name="remove")
    found = tf.identity(mutable.lookup(tf.constant([5, 6, 7, 8], tf.int64)), name="found")
    msize = tf.identity(mutable.size(), name="msize")
    init = tf.group(v1.tables_initializer(), name="init")
    feed = np.array([b"b", b"quick", b"zz", b"a", b"fox"])
    with v1.Session(graph=g) as s:
        s.run(init)
        results = s.run([ids, column_values, line_ids, names, sizes], {words: feed})
        s.run(insert)
        before = s.run([found, msize])
        s.run(remove)
        after = s.run([found, msize])
save_graph(g.as_graph_def(), "lookup")
save_arrays("lookup", feed=feed, ids=results[0], column_values=results[1], line_ids=results[2],
            names=results[3].astype(bytes), sizes=results[4], found_before=before[0], msize_before=before[1],
            found_after=after[0], msize_after=after[1], vocab=np.array(vocab))
'''


@pytest.fixture(scope="module")
def tf_out(run_tf):
    out = run_tf(SCRIPT, "lookup")
    return out, np.load(out / "lookup.npz")


def check(sess, data, fetch):
    got = sess.run([fetch(n) for n in ("ids", "column_values", "line_ids", "names", "sizes")],
                   {fetch("words"): data["feed"]})
    np.testing.assert_array_equal(got[0], data["ids"])
    np.testing.assert_allclose(got[1], data["column_values"])
    np.testing.assert_array_equal(got[2], data["line_ids"])
    np.testing.assert_array_equal(got[3].astype(bytes), data["names"].astype(bytes))
    np.testing.assert_array_equal(got[4], data["sizes"])
    sess.run(fetch("insert"))
    found, size = sess.run([fetch("found"), fetch("msize")])
    np.testing.assert_allclose(found, data["found_before"])
    assert size == data["msize_before"]
    sess.run(fetch("remove"))
    found, size = sess.run([fetch("found"), fetch("msize")])
    np.testing.assert_allclose(found, data["found_after"])
    assert size == data["msize_after"]


def test_tensorflows_table_graph_runs_in_weir(tf_out):
    out, data = tf_out
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "lookup.pb").read_bytes(), name="")
    with wr.Session(graph=graph) as sess:
        sess.run("init")
        check(sess, data, lambda n: n + ":0" if n not in ("insert", "remove") else n)


def test_weirs_tables_give_tensorflows_values(tf_out):
    _, data = tf_out
    vocab = str(data["vocab"])
    graph = wr.Graph()
    with graph.as_default():
        words = wr.compat.v1.placeholder(wr.string, [None], name="words")
        kv = wr.lookup.StaticHashTable(
            wr.lookup.KeyValueTensorInitializer(["a", "b", "c"], np.array([10, 20, 30], np.int64)),
            -1)
        by_line = wr.compat.v1.lookup.StaticHashTable(
            wr.lookup.TextFileInitializer(vocab, wr.string, wr.lookup.TextFileIndex.WHOLE_LINE,
                                          wr.int64, wr.lookup.TextFileIndex.LINE_NUMBER,
                                          delimiter=" "), -1)
        by_column = wr.lookup.StaticHashTable(
            wr.lookup.TextFileInitializer(vocab, wr.string, 0, wr.float32, 1), -0.5)
        reverse = wr.lookup.StaticHashTable(
            wr.lookup.KeyValueTensorInitializer(np.array([3, 1], np.int64), ["three", "one"]), "?")
        mutable = wr.lookup.MutableHashTable(wr.int64, wr.float32, 0.0)
        fetches = {
            "words": words, "ids": kv.lookup(words), "column_values": by_column.lookup(words),
            "line_ids": by_line.lookup(wr.constant(["fox\t1", "none"])),
            "names": reverse.lookup(wr.constant([[1, 2], [3, 3]], wr.int64)),
            "sizes": wr.stack([kv.size(), by_line.size(), by_column.size()]),
            "insert": mutable.insert(wr.constant([5, 6, 7], wr.int64), [0.5, 0.6, 0.7]),
            "remove": mutable.remove(wr.constant([6], wr.int64)),
            "found": mutable.lookup(wr.constant([5, 6, 7, 8], wr.int64)), "msize": mutable.size()}
        assert fetches["names"].shape.as_list() == [2, 2]
        keys, values = mutable.export()
        init = wr.compat.v1.tables_initializer()
    with wr.Session(graph=graph) as sess:
        sess.run(init)
        check(sess, data, fetches.get)
        k, v = sess.run([keys, values])
        assert dict(zip(k.tolist(), v.tolist())) == pytest.approx({5: 0.5, 7: 0.7})


def test_table_errors(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("x\ny\n")
    graph = wr.Graph()
    with graph.as_default():
        keys = wr.compat.v1.placeholder(wr.string, [None])
        values = wr.compat.v1.placeholder(wr.int64, [None])
        table = wr.lookup.StaticHashTable(wr.lookup.KeyValueTensorInitializer(keys, values), -1)
        found = table.lookup(wr.constant(["x"]))
        short = wr.lookup.StaticHashTable(
            wr.lookup.TextFileInitializer(str(vocab), wr.string, -2, wr.int64, -1, vocab_size=3),
            -1)
        with pytest.raises(TypeError, match="Keys must be dtype string"):
            table.lookup(wr.constant([1], wr.int64))
    with wr.Session(graph=graph) as sess:
        with pytest.raises(wr.errors.FailedPreconditionError, match="not initialized"):
            sess.run(found)
        sess.run(table.initializer, {keys: ["x", "y"], values: [1, 2]})
        sess.run(table.initializer, {keys: ["y", "x"], values: [2, 1]})  # the same: nothing
        with pytest.raises(wr.errors.FailedPreconditionError, match="different data"):
            sess.run(table.initializer, {keys: ["x"], values: [5]})
        assert sess.run(found).tolist() == [1]
        with pytest.raises(wr.errors.InvalidArgumentError, match="same shape"):
            sess.run(table.initializer, {keys: ["x", "z"], values: [1]})
        with pytest.raises(wr.errors.InvalidArgumentError, match="vocab_size.*expected: 3, got: 2"):
            sess.run(short.initializer)
    graph = wr.Graph()
    with graph.as_default():
        twice = wr.lookup.StaticHashTable(
            wr.lookup.KeyValueTensorInitializer(["k", "k"], np.array([1, 2], np.int64)), -1)
    with wr.Session(graph=graph) as sess:
        with pytest.raises(wr.errors.FailedPreconditionError, match="Key 'k' has 1"):
            sess.run(twice.initializer)
