"""AsString, the hash buckets (and StaticVocabularyTable's out-of-vocabulary ids, which
depend on them), case, strip, base64 and ReduceJoin against TensorFlow 2.21 run in the
test on the same inputs; then the errors."""
import numpy as np
import pytest

import weir as wr

WORDS = ["hello", "", "Über café", "  padded\t\n", "a-b_c", "x" * 70]
NUMBERS = {"float32": [1.5, -2.25, 1e10, 3.0], "float64": [0.1, -7.0],
           "int32": [0, -5, 2**31 - 1], "int64": [2**62, -1], "uint8": [255, 0],
           "bool": [True, False]}
FORMATS = [dict(), dict(precision=2), dict(scientific=True), dict(shortest=True),
           dict(width=8), dict(width=8, fill="0"), dict(width=6, fill="-")]

SCRIPT = '''
import json
words = %r
numbers = %r
formats = %r
out = {}
out["buckets"] = [tf.strings.to_hash_bucket_fast(words, n).numpy().tolist() for n in (1, 7, 2**40)]
out["strip"] = [s.decode("utf-8") for s in tf.strings.strip(words).numpy()]
out["lower"] = [s.decode("utf-8") for s in tf.strings.lower(words).numpy()]
out["upper"] = [s.decode("utf-8") for s in tf.strings.upper(words).numpy()]
out["b64"] = [s.decode() for s in tf.io.encode_base64(words).numpy()]
out["b64pad"] = [s.decode() for s in tf.io.encode_base64(words, pad=True).numpy()]
out["as_string"] = {}
for dtype, values in numbers.items():
    for i, f in enumerate(formats):
        if dtype not in ("float32", "float64") and ({"precision", "scientific", "shortest"} & set(f)):
            continue
        out["as_string"]["%%s/%%d" %% (dtype, i)] = [
            s.decode() for s in tf.strings.as_string(tf.constant(values, getattr(tf, dtype)), **f).numpy()]
grid = tf.reshape(tf.strings.as_string(tf.range(24)), [2, 3, 4])
out["reduce_join"] = {}
for axes in ([], [0], [2], [0, 2], [2, 0], [1, 0, 2], [-1], None):
    for keep in (False, True):
        got = tf.strings.reduce_join(grid, axis=axes, keepdims=keep, separator=".").numpy()
        out["reduce_join"]["%%s/%%s" %% (axes, keep)] = [np.shape(got), np.asarray(got, dtype=object).ravel().astype(str).tolist()]
vocab = tf.lookup.StaticVocabularyTable(
    tf.lookup.KeyValueTensorInitializer(["the", "fox"], tf.constant([0, 1], tf.int64)), 5)
out["vocab"] = vocab.lookup(tf.constant(["fox", "cat", "the", "dog", "emu"])).numpy().tolist()
ints = tf.lookup.StaticVocabularyTable(
    tf.lookup.KeyValueTensorInitializer(tf.constant([7, 9], tf.int64), tf.constant([0, 1], tf.int64)),
    3, lookup_key_dtype=tf.int32)
out["vocab_int"] = ints.lookup(tf.constant([9, 100, 7, -4], tf.int32)).numpy().tolist()
out["vocab_size"] = int(vocab.size().numpy())
with open(os.path.join(OUT, "out.json"), "w") as f:
    json.dump(out, f)
''' % (WORDS, NUMBERS, FORMATS)


@pytest.fixture(scope="module")
def tf_results(run_tf):
    import json
    out = run_tf(SCRIPT, "string_convert")
    return json.loads((out / "out.json").read_text())


def text(values):
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in np.asarray(values).ravel()]


def test_string_conversions_match_tensorflow(tf_results):
    want = tf_results
    with wr.Graph().as_default():
        fetches = {
            "buckets": [wr.strings.to_hash_bucket_fast(WORDS, n) for n in (1, 7, 2**40)],
            "strip": wr.strings.strip(WORDS), "lower": wr.strings.lower(WORDS),
            "upper": wr.strings.upper(WORDS), "b64": wr.io.encode_base64(WORDS),
            "b64pad": wr.io.encode_base64(WORDS, pad=True),
            "b64back": wr.io.decode_base64(wr.io.encode_base64(WORDS, pad=True)),
        }
        as_string = {}
        for key in want["as_string"]:
            dtype, i = key.split("/")
            as_string[key] = wr.strings.as_string(
                wr.constant(NUMBERS[dtype], getattr(wr, dtype)), **FORMATS[int(i)])
        grid = wr.reshape(wr.strings.as_string(wr.range(24)), [2, 3, 4])
        joins = {}
        for axes in ([], [0], [2], [0, 2], [2, 0], [1, 0, 2], [-1], None):
            for keep in (False, True):
                joins["%s/%s" % (axes, keep)] = wr.strings.reduce_join(
                    grid, axis=axes, keepdims=keep, separator=".")
        vocab = wr.lookup.StaticVocabularyTable(
            wr.lookup.KeyValueTensorInitializer(["the", "fox"], wr.constant([0, 1], wr.int64)), 5)
        ints = wr.lookup.StaticVocabularyTable(
            wr.lookup.KeyValueTensorInitializer(wr.constant([7, 9], wr.int64),
                                                wr.constant([0, 1], wr.int64)),
            3, lookup_key_dtype=wr.int32)
        fetches["vocab"] = vocab.lookup(wr.constant(["fox", "cat", "the", "dog", "emu"]))
        fetches["vocab_int"] = ints.lookup(wr.constant([9, 100, 7, -4], wr.int32))
        fetches["vocab_size"] = vocab.size()
        with wr.Session() as sess:
            sess.run(wr.tables_initializer())
            got, got_as_string, got_joins = sess.run([fetches, as_string, joins])
    assert [b.tolist() for b in got["buckets"]] == want["buckets"]
    for key in ("strip", "lower", "upper", "b64", "b64pad"):
        assert text(got[key]) == want[key], key
    assert text(got["b64back"]) == WORDS
    for key, values in want["as_string"].items():
        assert text(got_as_string[key]) == values, key
    for key, (shape, values) in want["reduce_join"].items():
        assert list(np.shape(got_joins[key])) == list(shape), key
        assert text(got_joins[key]) == values, key
    assert got["vocab"].tolist() == want["vocab"]
    assert got["vocab_int"].tolist() == want["vocab_int"]
    assert got["vocab_size"] == want["vocab_size"] == 7


def test_string_conversion_errors():
    with wr.Graph().as_default():
        bad = wr.io.decode_base64(["aGVsbG8", "a$b="])
        short = wr.io.decode_base64(["a"])
        axis = wr.compat.v1.placeholder(wr.int32, [None])
        join = wr.strings.reduce_join(wr.constant([["a", "b"]]), axis=axis)
        with pytest.raises((ValueError, wr.errors.InvalidArgumentError), match="fill"):
            wr.Session().run(wr.strings.as_string([1.0], width=3, fill="ab"))
        with pytest.raises((ValueError, wr.errors.InvalidArgumentError), match="floating-point"):
            wr.Session().run(wr.strings.as_string([1], precision=3))
        with pytest.raises((ValueError, TypeError, wr.errors.InvalidArgumentError)):
            wr.strings.to_hash_bucket_fast(["a"], 0)
        with wr.Session() as sess:
            with pytest.raises(wr.errors.InvalidArgumentError, match="Invalid character 36 at 1"):
                sess.run(bad)
            with pytest.raises(wr.errors.InvalidArgumentError, match="Invalid base64 length"):
                sess.run(short)
            with pytest.raises(wr.errors.InvalidArgumentError, match="axis 2 is out of range"):
                sess.run(join, {axis: [2]})
            with pytest.raises(wr.errors.InvalidArgumentError, match="given twice"):
                sess.run(join, {axis: [1, -1]})
            assert sess.run(join, {axis: [1, 0]}) == b"ab"
