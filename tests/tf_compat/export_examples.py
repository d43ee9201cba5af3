#!/usr/bin/env python3
"""Records TensorFlow's parsing ops on TensorFlow-serialized tf.train.Examples
as a fixture for tests/tf_compat/tf_parsing_test.cc (no TensorFlow at test
time), and checks the reverse direction: Examples and tensors serialized by
Weir, parsed by TensorFlow.

  /opt/weir-peers/bin/python tests/tf_compat/export_examples.py [--out tests/data]
  /opt/weir-peers/bin/python tests/tf_compat/export_examples.py --check \
      [--tool build/tests/tf_compat/weir_write_examples]

Writes --out/tf_parsing_cases.json: a list of cases, each one raw op run
eagerly by TensorFlow: the op, its attrs, its inputs and either its outputs
or TensorFlow's error. ParseExampleV2's attrs and inputs are taken from the
graph tf.io.parse_example builds for a feature spec (FixedLenFeature,
VarLenFeature, RaggedFeature, FixedLenSequenceFeature), so Weir runs what
TensorFlow's own API emits. Tensors are {dtype (the DataType number), shape,
data (base64 of the little-endian bytes) or strings (base64 each)}.

--check runs the Weir tool, which prints JSON with Examples it serialized
(with the C++ classes of proto/example.proto) and what they hold, and
tensors Weir's SerializeTensor wrote; TensorFlow must parse them to the same
values. Prints OK or each mismatch, and exits 0 or 1.
"""

import argparse
import base64
import json
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def b64(data):
    return base64.b64encode(bytes(data)).decode("ascii")


def encode(value):
    # Bytes stay objects: numpy's fixed-width bytes drop trailing NULs.
    array = np.array(value, dtype=object) if isinstance(value, bytes) else np.asarray(value)
    dtype = tf.string if array.dtype == object or array.dtype.kind == "S" else tf.as_dtype(array.dtype)
    out = {"dtype": int(dtype.as_datatype_enum), "shape": list(array.shape)}
    if dtype == tf.string:
        out["strings"] = [b64(s) for s in array.reshape(-1)]
    else:
        out["data"] = b64(np.ascontiguousarray(array).tobytes())
    return out


def encode_attr(value):
    """An AttrValue proto as {kind, value}."""
    kind = value.WhichOneof("value")
    if kind == "list":
        lst = value.list
        if lst.type:
            return {"kind": "list(type)", "value": [int(t) for t in lst.type]}
        if lst.shape:
            return {"kind": "list(shape)",
                    "value": [None if s.unknown_rank else [d.size for d in s.dim] for s in lst.shape]}
        if lst.s:
            return {"kind": "list(string)", "value": [b64(s) for s in lst.s]}
        if lst.i:
            return {"kind": "list(int)", "value": list(lst.i)}
        return {"kind": "list(empty)", "value": []}
    if kind == "type":
        return {"kind": "type", "value": int(value.type)}
    if kind == "i":
        return {"kind": "int", "value": value.i}
    if kind == "b":
        return {"kind": "bool", "value": value.b}
    if kind == "s":
        return {"kind": "string", "value": b64(value.s)}
    raise ValueError(f"attr kind {kind}")


def attrs_of(op):
    return {name: encode_attr(op.node_def.attr[name]) for name in sorted(op.node_def.attr)
            if not name.startswith("_")}


def run_case(name, op_type, attrs, inputs, note=""):
    """Runs raw op `op_type` eagerly with attrs (AttrValue protos) and inputs."""
    # Built in a graph so the attrs are passed exactly as given; inputs are
    # constants (a fed numpy bytes array loses its trailing NUL bytes).
    graph = tf.Graph()
    with graph.as_default():
        constants = [tf.constant(v, dtype=encode(v)["dtype"], name=f"in{i}") for i, v in enumerate(inputs)]
        op = graph._create_op_internal(op_type, constants, attrs=attrs, name="op")
        case = {"name": name, "op": op_type, "attrs": attrs_of(op),
                "inputs": [encode(v) for v in inputs], "num_outputs": len(op.outputs)}
        if note:
            case["note"] = note
        with tf.compat.v1.Session(graph=graph) as session:
            try:
                values = session.run(op.outputs)
                case["outputs"] = [encode(v) for v in values]
            except tf.errors.InvalidArgumentError as e:
                lines = [line.strip() for line in e.message.splitlines()]
                case["error"] = [line for line in lines if line and not line.startswith(
                    ("Graph execution error", "Detected at node", "[[", "File ", "Traceback"))][-1]
    return case


def attr_value(**kw):
    return tf.compat.v1.AttrValue(**kw)


def examples():
    """TensorFlow-serialized Examples: every kind, missing features, empty
    lists, variable lengths, odd floats and ints, binary bytes."""
    def feature(values, kind):
        if kind == "f":
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        if kind == "i":
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))

    def example(**features):
        return tf.train.Example(features=tf.train.Features(feature={
            key: feature(values, kind) for key, (kind, values) in features.items()})).SerializeToString()

    image = bytes(range(256)) * 3 + bytes(16)  # 784 bytes, as a Fashion-MNIST image
    return [
        example(image=("b", [image]), label=("i", [3]), weights=("f", [0.5, -1.25]),
                tags=("b", [b"a", b"\xff\x00bc"]), ids=("i", [1, -2, 2 ** 40, -(2 ** 63)]),
                seq=("i", [1, 2, 3, 4])),
        example(image=("b", [b"short"]), label=("i", [7]), weights=("f", [1e-30, 3.4e38]),
                tags=("b", []), ids=("i", []), seq=("i", [])),
        example(image=("b", [b""]), weights=("f", [float("inf"), -0.0]), seq=("i", [5, 6])),
        example(),
        # Two serialized Examples concatenated are one merged Example: for a
        # key present in both, the later entry wins.
        example(label=("i", [1]), tags=("b", [b"first"])) +
        example(label=("i", [2]), weights=("f", [9.0, 8.0])),
    ]


def constant_inputs(func_graph, op):
    """The values of `op`'s inputs after the first (names, keys, defaults:
    constants, some reshaped), computed from the traced graph."""
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(func_graph.as_graph_def(), name="")
    with tf.compat.v1.Session(graph=graph) as session:
        return session.run([t.name for t in op.inputs[1:]])


def parse_example_cases(serialized):
    cases = []
    specs = {
        "fixed_sparse_ragged_padded": {
            "label": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
            "weights": tf.io.FixedLenFeature([2], tf.float32, default_value=[0.0, 0.0]),
            "image": tf.io.FixedLenFeature([], tf.string, default_value=b"none"),
            "tags": tf.io.VarLenFeature(tf.string),
            "ids": tf.io.VarLenFeature(tf.int64),
            "seq": tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int32),
            "seq_padded": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=0),
        },
        "required_label": {"label": tf.io.FixedLenFeature([1], tf.int64)},
        "wrong_type": {"weights": tf.io.FixedLenFeature([2], tf.int64, default_value=[0, 0])},
        "wrong_count": {"weights": tf.io.FixedLenFeature([3], tf.float32, default_value=[0.0] * 3)},
        "sparse_wrong_type": {"tags": tf.io.VarLenFeature(tf.float32)},
        "stride": {"seq": tf.io.FixedLenSequenceFeature([3], tf.int64, allow_missing=True, default_value=0)},
    }
    for name, spec in specs.items():
        if name == "fixed_sparse_ragged_padded":
            # seq_padded reads the key seq too; TensorFlow refuses a key twice,
            # so the padded one reads seq under its own name in a copy.
            spec = dict(spec)
            spec.pop("seq_padded")
        fn = tf.function(lambda s, spec=spec: tf.io.parse_example(s, spec))
        graph = fn.get_concrete_function(tf.TensorSpec([None], tf.string)).graph
        op = [o for o in graph.get_operations() if o.type == "ParseExampleV2"][0]
        attrs = {k: op.node_def.attr[k] for k in op.node_def.attr if not k.startswith("_")}
        constants = constant_inputs(graph, op)
        batches = {"batch": serialized[:4], "merged": serialized[4:]}
        if name != "fixed_sparse_ragged_padded":
            batches = {"batch": serialized[:4]}
        for batch_name, batch in batches.items():
            names = np.array([f"file.tfrecord:{i}".encode() for i in range(len(batch))], dtype=object)
            inputs = [np.array(batch, dtype=object), names] + constants[1:]
            cases.append(run_case(f"parse_example/{name}/{batch_name}", "ParseExampleV2", attrs, inputs))
    # Variable-length dense (FixedLenSequenceFeature) on its own.
    fn = tf.function(lambda s: tf.io.parse_example(
        s, {"seq": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=-7)}))
    graph = fn.get_concrete_function(tf.TensorSpec([None], tf.string)).graph
    op = [o for o in graph.get_operations() if o.type == "ParseExampleV2"][0]
    attrs = {k: op.node_def.attr[k] for k in op.node_def.attr if not k.startswith("_")}
    constants = constant_inputs(graph, op)
    cases.append(run_case("parse_example/padded", "ParseExampleV2", attrs,
                          [np.array(serialized[:4], dtype=object), np.array([], dtype=object)] + constants[1:]))
    # Malformed bytes.
    bad = [serialized[0], b"\x0a\x05abc"]
    cases.append(run_case("parse_example/malformed", "ParseExampleV2", attrs,
                          [np.array(bad, dtype=object), np.array([], dtype=object)] + constants[1:]))
    return cases


def parse_single_cases(serialized):
    cases = []
    attrs = {
        "num_sparse": attr_value(i=2),
        "sparse_keys": attr_value(list=tf.compat.v1.AttrValue.ListValue(s=[b"tags", b"ids"])),
        "sparse_types": attr_value(list=tf.compat.v1.AttrValue.ListValue(
            type=[tf.string.as_datatype_enum, tf.int64.as_datatype_enum])),
        "dense_keys": attr_value(list=tf.compat.v1.AttrValue.ListValue(s=[b"weights", b"label"])),
        "Tdense": attr_value(list=tf.compat.v1.AttrValue.ListValue(
            type=[tf.float32.as_datatype_enum, tf.int64.as_datatype_enum])),
        "dense_shapes": attr_value(list=tf.compat.v1.AttrValue.ListValue(shape=[
            tf.TensorShape([2]).as_proto(), tf.TensorShape([]).as_proto()])),
    }
    for i, s in enumerate(serialized):
        cases.append(run_case(f"parse_single_example/{i}", "ParseSingleExample", attrs,
                              [np.array(s, dtype=object), np.array([-1.0, -2.0], np.float32),
                               np.array(0, np.int64)]))
    return cases


def simple(name, op_type, inputs, **attrs):
    values = {}
    for key, value in attrs.items():
        if isinstance(value, tf.dtypes.DType):
            values[key] = attr_value(type=value.as_datatype_enum)
        elif isinstance(value, bool):
            values[key] = attr_value(b=value)
        elif isinstance(value, str):
            values[key] = attr_value(s=value.encode())
        elif isinstance(value, list) and value and isinstance(value[0], tf.dtypes.DType):
            values[key] = attr_value(list=tf.compat.v1.AttrValue.ListValue(
                type=[t.as_datatype_enum for t in value]))
        elif isinstance(value, list):
            values[key] = attr_value(list=tf.compat.v1.AttrValue.ListValue(i=value))
        else:
            raise ValueError(key)
    return run_case(name, op_type, values, inputs)


def decode_cases():
    cases = []
    raw = np.array([bytes(range(i, i + 8)) for i in (0, 100, 248)], dtype=object)
    for dtype in [tf.uint8, tf.int16, tf.uint16, tf.int32, tf.int64, tf.float32, tf.float64,
                  tf.float16, tf.bfloat16, tf.complex64, tf.bool, tf.int8]:
        for little in [True, False]:
            # Bools are bytes 0 and 1 (others are undefined in TensorFlow).
            data = np.array([bytes([i % 2 for i in range(8)])], dtype=object) if dtype == tf.bool else raw
            cases.append(simple(f"decode_raw/{dtype.name}/{'le' if little else 'be'}", "DecodeRaw",
                                [data], out_type=dtype, little_endian=little))
    cases.append(simple("decode_raw/uneven", "DecodeRaw",
                        [np.array([b"abcd", b"ab"], dtype=object)], out_type=tf.int16))
    cases.append(simple("decode_raw/not_a_multiple", "DecodeRaw",
                        [np.array([b"abcdef"], dtype=object)], out_type=tf.int32))

    records = np.array([b'1,2.5,x,7', b',,"a,""b""",', b'-3,1e2,,', b' 4 ,-0.0,"",0',
                        b'\r\n5,inf,y,\n8'], dtype=object)
    defaults = [np.array([-1], np.int32), np.array([0.5], np.float32),
                np.array([b"none"], dtype=object), np.array([99], np.int64)]
    types = [tf.int32, tf.float32, tf.string, tf.int64]
    cases.append(simple("decode_csv/types", "DecodeCSV", [records] + defaults, OUT_TYPE=types))
    cases.append(simple("decode_csv/select_na", "DecodeCSV",
                        [np.array([b"a|NA|3|x", b"b|2|NA|y"], dtype=object),
                         np.array([-1.0], np.float64), np.array([b""], dtype=object)],
                        OUT_TYPE=[tf.float64, tf.string], field_delim="|", na_value="NA",
                        select_cols=[2, 3]))
    cases.append(simple("decode_csv/no_quotes", "DecodeCSV",
                        [np.array([b'"a,b"'], dtype=object), np.array([b""], dtype=object),
                         np.array([b""], dtype=object)],
                        OUT_TYPE=[tf.string, tf.string], use_quote_delim=False))
    int_float = [np.array([0], np.int32), np.zeros([0], np.float32)]
    for name, record in [("too_few", b"3"), ("too_many", b"1,2,3"), ("required", b"4,"),
                         ("bad_int", b"x,3"), ("bad_float", b"1,2.5.1"), ("bad_quote", b'"1"x,2'),
                         ("open_quote", b'2,"1'), ("quote_inside", b'1,2"3'), ("int_overflow", b"2147483648,1")]:
        cases.append(simple(f"decode_csv/{name}", "DecodeCSV",
                            [np.array([b"1,2", record], dtype=object)] + int_float,
                            OUT_TYPE=[tf.int32, tf.float32]))

    strings = ["1.5", " -2e3 ", "+0.25", "inf", "-Infinity", "NaN", "1e50", "1e-50", "0x10",
               "1.5x", "", " ", "1,5", "--1", "+-1", "1 2", ".5", "5.", "1e", "-0"]
    for dtype in [tf.float32, tf.float64, tf.int32, tf.int64]:
        for s in strings + ["2147483647", "-2147483648", "2147483648", "+12", " 12\t",
                            "9223372036854775807", "-9223372036854775809", "007"]:
            cases.append(simple(f"string_to_number/{dtype.name}/{s!r}", "StringToNumber",
                                [np.array([s.encode()], dtype=object)], out_type=dtype))
    return cases


def serialize_cases():
    cases = []
    for name, value in [("float_matrix", np.array([[1, -2.5, 3], [4, 5, 6]], np.float32)),
                        ("strings", np.array([b"", b"\x00\xff", b"abc"], dtype=object)),
                        ("int64_scalar", np.array(-5, np.int64)),
                        ("empty_double", np.zeros([0, 4], np.float64)),
                        ("bool", np.array([True, False, True])),
                        ("int32", np.arange(-3, 3, dtype=np.int32).reshape(2, 3))]:
        dtype = tf.as_dtype(encode(value)["dtype"])
        case = simple(f"serialize_tensor/{name}", "SerializeTensor", [value], T=dtype)
        cases.append(case)
        serialized = base64.b64decode(case["outputs"][0]["strings"][0])
        cases.append(simple(f"parse_tensor/{name}", "ParseTensor",
                            [np.array(serialized, dtype=object)], out_type=dtype))
    serialized = tf.io.serialize_tensor(tf.constant([1.0])).numpy()
    cases.append(simple("parse_tensor/wrong_type", "ParseTensor",
                        [np.array(serialized, dtype=object)], out_type=tf.int32))
    cases.append(simple("parse_tensor/garbage", "ParseTensor",
                        [np.array(b"garbage\xff", dtype=object)], out_type=tf.int32))
    return cases


def export(out_dir):
    serialized = examples()
    cases = (parse_example_cases(serialized) + parse_single_cases(serialized) + decode_cases() +
             serialize_cases())
    path = os.path.join(out_dir, "tf_parsing_cases.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": cases}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    errors = sum("error" in c for c in cases)
    print(f"wrote {path}: {len(cases)} cases ({errors} TensorFlow errors)")


def check(tool):
    """Weir -> TensorFlow: Weir's Examples and serialized tensors, parsed by TensorFlow."""
    written = json.loads(subprocess.run([tool], check=True, capture_output=True, text=True).stdout)
    problems = []
    for example in written["examples"]:
        serialized = base64.b64decode(example["serialized"])
        parsed = tf.train.Example.FromString(serialized)
        spec = {}
        for key, feature in example["features"].items():
            kind = parsed.features.feature[key].WhichOneof("kind")
            values = {"bytes_list": lambda f: [base64.b64encode(v).decode() for v in f.bytes_list.value],
                      "float_list": lambda f: list(f.float_list.value),
                      "int64_list": lambda f: list(f.int64_list.value),
                      None: lambda f: []}[kind](parsed.features.feature[key])
            if kind != feature["kind"] or values != feature["values"]:
                problems.append(f"{example['name']}: feature {key}: TensorFlow's protobuf reads "
                                f"{kind} {values}, Weir wrote {feature['kind']} {feature['values']}")
            dtype = {"bytes_list": tf.string, "float_list": tf.float32, "int64_list": tf.int64}[feature["kind"]]
            spec[key] = tf.io.VarLenFeature(dtype)
        # And through tf.io.parse_single_example (TensorFlow's fast parser).
        if not spec:
            continue
        got = tf.io.parse_single_example(serialized, spec)
        for key, feature in example["features"].items():
            values = got[key].values.numpy().tolist()
            if feature["kind"] == "bytes_list":
                values = [base64.b64encode(v).decode() for v in values]
            if values != feature["values"]:
                problems.append(f"{example['name']}: feature {key}: tf.io.parse_single_example "
                                f"gives {values}, Weir wrote {feature['values']}")
    for tensor in written["tensors"]:
        expected = tensor["value"]
        dtype = tf.as_dtype(tensor["dtype"])
        got = tf.io.parse_tensor(base64.b64decode(tensor["serialized"]), dtype)
        values = got.numpy().reshape(-1).tolist()
        if dtype == tf.string:
            values = [base64.b64encode(v).decode() for v in values]
        if list(got.shape) != tensor["shape"] or values != expected:
            problems.append(f"tensor {tensor['name']}: TensorFlow parses {got.shape} {values}, "
                            f"Weir serialized {tensor['shape']} {expected}")
        ours = tf.io.serialize_tensor(got).numpy()
        if ours != base64.b64decode(tensor["serialized"]):
            problems.append(f"tensor {tensor['name']}: TensorFlow serializes it to other bytes "
                            f"than Weir's SerializeTensor")
    for p in problems:
        print("MISMATCH:", p)
    if problems:
        return 1
    print(f"OK: TensorFlow reads Weir's {len(written['examples'])} Examples and "
          f"{len(written['tensors'])} serialized tensors with Weir's values "
          f"(and serializes the tensors to the same bytes)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--out", default=os.path.join(root, "tests", "data"))
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--tool", default=os.path.join(root, "build", "release", "tests", "tf_compat",
                                                       "weir_write_examples"))
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args.tool))
    export(args.out)


if __name__ == "__main__":
    main()
