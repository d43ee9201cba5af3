"""Parsing from Python: parse_example / parse_single_example against
TensorFlow's parse of the same serialized Examples (TF 2.21 in
/opt/weir-peers, in a subprocess), tf.train.Example classes, decode_raw,
decode_csv, string_to_number, serialize_tensor / parse_tensor."""
import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def session():
    # A default step timeout: a test that would hang fails with DeadlineExceeded.
    return wr.Session(config=wr.ConfigProto(operation_timeout_in_ms=30000))


def example(**features):
    """A serialized tf.train.Example from key=list values (float, int or bytes)."""
    feature = {}
    for key, values in features.items():
        if values and isinstance(values[0], bytes):
            feature[key] = wr.train.Feature(bytes_list=wr.train.BytesList(value=values))
        elif values and isinstance(values[0], float):
            feature[key] = wr.train.Feature(float_list=wr.train.FloatList(value=values))
        elif values:
            feature[key] = wr.train.Feature(int64_list=wr.train.Int64List(value=values))
        else:  # an empty list: a float list (only float features are left empty here)
            feature[key] = wr.train.Feature(float_list=wr.train.FloatList(value=[]))
    return wr.train.Example(features=wr.train.Features(feature=feature)).SerializeToString()


def serialized_batch():
    return [
        example(f=[1.0, 2.0], i=[7], s=[b"x", b"y"], v=[0.5, 1.5, 2.5], q=[1, 2, 3]),
        example(f=[3.0, 4.0], s=[b"z"], v=[], q=[4]),
        example(f=[5.5, -6.0], i=[-(2 ** 40)], v=[9.0]),
    ]


def features():
    return {
        "f": wr.FixedLenFeature([2], wr.float32),
        "i": wr.FixedLenFeature([], wr.int64, default_value=-1),
        "s": wr.VarLenFeature(wr.string),
        "v": wr.VarLenFeature(wr.float32),
        "q": wr.io.FixedLenSequenceFeature([], wr.int64, allow_missing=True),
    }


def test_parse_example_values_and_static_shapes():
    serialized = wr.placeholder(wr.string, [None])
    parsed = wr.parse_example(serialized, features())
    assert parsed["f"].shape.as_list() == [None, 2]
    assert parsed["i"].shape.as_list() == [None]
    assert isinstance(parsed["s"], wr.SparseTensor)
    with session() as sess:
        got = sess.run(parsed, {serialized: np.array(serialized_batch(), object)})
    np.testing.assert_array_equal(got["f"], [[1, 2], [3, 4], [5.5, -6]])
    np.testing.assert_array_equal(got["i"], [7, -1, -(2 ** 40)])  # int64 exact, default
    np.testing.assert_array_equal(got["q"], [[1, 2, 3], [4, 0, 0], [0, 0, 0]])  # padded
    s = got["s"]
    assert isinstance(s, wr.SparseTensorValue)
    np.testing.assert_array_equal(s.indices, [[0, 0], [0, 1], [1, 0]])
    assert list(s.values) == [b"x", b"y", b"z"]
    np.testing.assert_array_equal(s.dense_shape, [3, 2])
    np.testing.assert_array_equal(got["v"].indices, [[0, 0], [0, 1], [0, 2], [2, 0]])
    np.testing.assert_array_equal(got["v"].values, [0.5, 1.5, 2.5, 9.0])


def test_parse_single_example_and_errors():
    parsed = wr.parse_single_example(serialized_batch()[1], features())
    assert parsed["f"].shape.as_list() == [2]
    with session() as sess:
        got = sess.run(parsed)
        np.testing.assert_array_equal(got["f"], [3, 4])
        assert got["i"] == -1
        np.testing.assert_array_equal(got["s"].indices, [[0]])
        np.testing.assert_array_equal(got["s"].dense_shape, [1])
        # A required feature that is missing: named in the error.
        missing = wr.parse_single_example(example(f=[1.0, 2.0]),
                                          {"i": wr.FixedLenFeature([], wr.int64)})
        with pytest.raises(wr.errors.InvalidArgumentError, match="i"):
            sess.run(missing)
        wrong = wr.parse_single_example(example(f=[1.0, 2.0, 3.0]),
                                        {"f": wr.FixedLenFeature([2], wr.float32)})
        with pytest.raises(wr.errors.InvalidArgumentError, match="f"):
            sess.run(wrong)
    with pytest.raises(ValueError):
        wr.parse_example(["x"], {})
    with pytest.raises(ValueError):
        wr.parse_example(["x"], {"f": wr.FixedLenFeature([None], wr.float32)})


def test_fixed_len_default_is_reshaped():
    parsed = wr.parse_single_example(example(i=[1]), {
        "m": wr.FixedLenFeature([2, 2], wr.float32, default_value=[1.0, 2.0, 3.0, 4.0]),
        "t": wr.FixedLenFeature([], wr.string, default_value="none")})
    with session() as sess:
        got = sess.run(parsed)
    np.testing.assert_array_equal(got["m"], [[1, 2], [3, 4]])
    assert got["t"] == b"none"


TF_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    args = json.loads(sys.stdin.read())
    serialized = [bytes.fromhex(h) for h in args["serialized"]]
    features = {
        "f": tf.io.FixedLenFeature([2], tf.float32),
        "i": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
        "s": tf.io.VarLenFeature(tf.string),
        "v": tf.io.VarLenFeature(tf.float32),
        "q": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
    }
    parsed = tf.io.parse_example(tf.constant(serialized), features)
    out = {}
    for k, t in parsed.items():
        if isinstance(t, tf.SparseTensor):
            vals = t.values.numpy()
            out[k] = {"indices": t.indices.numpy().tolist(),
                      "values": [v.hex() if isinstance(v, bytes) else float(v) for v in vals],
                      "dense_shape": t.dense_shape.numpy().tolist()}
        else:
            out[k] = t.numpy().tolist()
    weir_tensor = tf.io.parse_tensor(bytes.fromhex(args["weir_tensor"]), tf.int16).numpy()
    out["weir_tensor"] = weir_tensor.tolist()
    out["tf_tensor"] = tf.io.serialize_tensor(
        tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))).numpy().hex()
    print(json.dumps(out))
""")


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON), reason="TensorFlow peers venv "
                    "/opt/weir-peers is missing")
def test_parse_example_matches_tensorflow():
    batch = serialized_batch()
    tensor = np.array([[1, -2, 300], [4, 5, -32768]], np.int16)
    parsed = wr.parse_example(batch, features())
    serialized_tensor = wr.serialize_tensor(tensor)
    with session() as sess:
        got, weir_tensor = sess.run([parsed, serialized_tensor])
    proc = subprocess.run([PEERS_PYTHON, "-c", TF_SCRIPT], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
                          input=json.dumps({"serialized": [b.hex() for b in batch],
                                            "weir_tensor": weir_tensor.hex()}))
    assert proc.returncode == 0, proc.stderr[-2000:]
    tf_out = json.loads(proc.stdout.strip().splitlines()[-1])
    for key in ["f", "i", "q"]:
        np.testing.assert_array_equal(got[key], np.array(tf_out[key]), err_msg=key)
        assert got[key].dtype == (np.float32 if key == "f" else np.int64)
    for key in ["s", "v"]:
        np.testing.assert_array_equal(got[key].indices, tf_out[key]["indices"])
        np.testing.assert_array_equal(got[key].dense_shape, tf_out[key]["dense_shape"])
        if key == "s":
            assert [v.hex() for v in got[key].values] == tf_out[key]["values"]
        else:
            np.testing.assert_array_equal(got[key].values, tf_out[key]["values"])
    # TF parses weir's serialized tensor, and weir parses TF's.
    np.testing.assert_array_equal(tf_out["weir_tensor"], tensor)
    with session() as sess:
        parsed_tf = sess.run(wr.parse_tensor(bytes.fromhex(tf_out["tf_tensor"]), wr.float64))
    np.testing.assert_array_equal(parsed_tf, np.arange(6, dtype=np.float64).reshape(2, 3))


def test_decode_raw_matches_numpy():
    values = np.array([[1.5, -2.25, 3e10], [0.0, -0.0, 7.0]], np.float32)
    big = np.array([1, -2, 30000], dtype=">i2")
    raw = wr.placeholder(wr.string, [2])
    decoded = wr.decode_raw(raw, wr.float32)
    decoded_big = wr.decode_raw(big.tobytes(), wr.int16, little_endian=False)
    with session() as sess:
        got = sess.run(decoded, {raw: np.array([row.tobytes() for row in values], object)})
        np.testing.assert_array_equal(got, values)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(sess.run(decoded_big), [1, -2, 30000])
        with pytest.raises(wr.errors.InvalidArgumentError):
            sess.run(wr.decode_raw(b"abc", wr.int32))  # 3 bytes: not a whole int32


def test_decode_csv_and_string_to_number():
    lines = wr.constant([b'1,2.5,"a,b"', b',-1,plain'])
    cols = wr.decode_csv(lines, record_defaults=[[7], [0.0], ["?"]])
    assert len(cols) == 3 and cols[0].dtype == wr.int32 and cols[1].dtype == wr.float32
    numbers = wr.string_to_number(["1.5", "-2e3", "inf"], out_type=wr.float64)
    ints = wr.string_to_number(["12", "-9223372036854775808"], out_type=wr.int64)
    with session() as sess:
        a, b, c = sess.run(cols)
        np.testing.assert_array_equal(a, [1, 7])  # empty field: the default
        np.testing.assert_array_equal(b, [2.5, -1])
        assert list(c) == [b"a,b", b"plain"]
        np.testing.assert_array_equal(sess.run(numbers), [1.5, -2000.0, np.inf])
        np.testing.assert_array_equal(sess.run(ints), [12, -2 ** 63])
        with pytest.raises(wr.errors.InvalidArgumentError, match="x1"):
            sess.run(wr.string_to_number(["x1"]))
        required = wr.decode_csv([b"1,"], record_defaults=[[0], wr.constant([], wr.int32)])
        with pytest.raises(wr.errors.InvalidArgumentError):
            sess.run(required)


def test_serialize_parse_tensor_round_trip():
    value = np.array([[b"a", b""], [b"ccc", b"\x00"]], object)
    serialized = wr.serialize_tensor(value)
    back = wr.parse_tensor(serialized, wr.string)
    with session() as sess:
        data, got = sess.run([serialized, back])
        with pytest.raises(wr.errors.InvalidArgumentError):
            sess.run(wr.parse_tensor(serialized, wr.float32))  # the dtype must match
    assert got.tolist() == value.tolist()
    from weir.core import protos
    proto = protos.TensorProto.FromString(data)
    assert proto.dtype == 7 and [d.size for d in proto.tensor_shape.dim] == [2, 2]
