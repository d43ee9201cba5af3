"""Weir's op declarations against TensorFlow 2.21's, op by op.

    python3 tests/tf_compat/op_def_parity.py --tool build/tests/tf_compat/weir_op_list \
        [--differences tests/tf_compat/op_def_differences.txt] [--all]

For every op that Weir declares and TensorFlow also has, compares the input
and output args (order, names, type, type_attr, number_attr, type_list_attr,
is_ref), the attrs (names, type, default, allowed values, minimum), the order
of the attrs that become Python parameters (python/tools/gen_ops.py: attrs not
inferred from inputs, those without a default first; the other attrs' order
does not matter) and the stateful flag. Docs are not compared. A Weir op that
TensorFlow lacks must be internal ("_" prefix) or listed.

Each difference is one line: OP FIELD tf=VALUE weir=VALUE. The differences
file lists the deliberate ones, one a line: "OP FIELD REASON" (OP and FIELD
may hold fnmatch wildcards; '#' starts a comment), or "missing-dtype DT_X
REASON" for a dtype Weir does not have at all: it is left out of TensorFlow's
allowed-type lists before they are compared. Exit 1 if a difference is not
listed, or a listed one no longer occurs (so the list stays true: a
missing-dtype line is stale once a Weir op declares that dtype, or no op's
list would have it); --all prints every difference, listed or not.

Runs under any Python: without TensorFlow it re-runs itself with the peers'
interpreter (WEIR_PEERS, default /opt/weir-peers: scripts/install_deps.sh
makes it), and fails, saying so, if there is none.
"""
import argparse
import fnmatch
import os
import subprocess
import sys
import tempfile

PEERS_PYTHON = os.path.join(os.environ.get("WEIR_PEERS", "/opt/weir-peers"), "bin", "python")
HERE = os.path.dirname(os.path.abspath(__file__))


def ensure_tensorflow():
    """Returns if TensorFlow imports here; otherwise re-runs this script with
    the peers' Python, or exits 1 naming what is missing."""
    try:
        import tensorflow  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("WEIR_OP_DEF_PARITY_REEXEC"):
        sys.exit(f"op_def_parity: FAIL: {sys.executable} cannot import tensorflow; "
                 "run scripts/install_deps.sh (it installs tensorflow-cpu 2.21 in "
                 f"{os.path.dirname(os.path.dirname(PEERS_PYTHON))})")
    if not os.path.exists(PEERS_PYTHON):
        sys.exit(f"op_def_parity: FAIL: TensorFlow 2.21 is needed and {PEERS_PYTHON} does not "
                 "exist; run scripts/install_deps.sh (or set WEIR_PEERS to a virtualenv with "
                 "tensorflow-cpu 2.21)")
    env = dict(os.environ, WEIR_OP_DEF_PARITY_REEXEC="1", TF_CPP_MIN_LOG_LEVEL="2")
    os.execve(PEERS_PYTHON, [PEERS_PYTHON, os.path.abspath(__file__)] + sys.argv[1:], env)


def tensorflow_ops():
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.client import pywrap_tf_session
    import tensorflow as tf
    if not tf.__version__.startswith("2.21."):
        sys.exit(f"op_def_parity: FAIL: the reference is TensorFlow 2.21, this is {tf.__version__}")
    buf = pywrap_tf_session.TF_GetAllOpList()
    try:
        ops = op_def_pb2.OpList()
        ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(buf))
    finally:
        pywrap_tf_session.TF_DeleteBuffer(buf)
    return {op.name: op for op in ops.op}


def weir_ops(tool):
    # Weir's proto/op_def.proto is TensorFlow's field for field, so TF's
    # classes read the tool's bytes.
    from tensorflow.core.framework import op_def_pb2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weir_ops.pb")
        subprocess.run([tool, path], check=True)
        ops = op_def_pb2.OpList()
        with open(path, "rb") as f:
            ops.ParseFromString(f.read())
    return {op.name: op for op in ops.op}


def type_name(t):
    from tensorflow.core.framework import types_pb2
    return types_pb2.DataType.Name(t) if t else "-"


def attr_value(value, attr_type):
    """An AttrValue as a comparable, printable Python value, read by the
    attr's type (so an unset oneof and a zero compare as TF means them)."""
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        field = {"int": "i", "float": "f", "bool": "b", "string": "s", "type": "type",
                 "shape": "shape", "tensor": "tensor", "func": "func"}[inner]
        items = getattr(value.list, field)
        return "[" + ", ".join(scalar_value(v, inner) for v in items) + "]"
    return scalar_value(value, attr_type)


def scalar_value(v, attr_type):
    from tensorflow.core.framework import attr_value_pb2
    if isinstance(v, attr_value_pb2.AttrValue):
        field = {"int": "i", "float": "f", "bool": "b", "string": "s", "type": "type",
                 "shape": "shape", "tensor": "tensor", "func": "func"}[attr_type]
        v = getattr(v, field)
    if attr_type == "type":
        return type_name(v)
    if attr_type == "string":
        return repr(v.decode("utf-8", "backslashreplace"))
    if attr_type == "float":
        return repr(float(v))
    if attr_type == "bool":
        return "true" if v else "false"
    if attr_type == "shape":
        if v.unknown_rank:
            return "<unknown>"
        return "[" + ",".join(str(d.size) for d in v.dim) + "]"
    if attr_type == "tensor":
        import numpy as np
        from tensorflow.python.framework import tensor_util
        a = tensor_util.MakeNdarray(v)
        return f"{type_name(v.dtype)}{list(a.shape)}{np.array2string(a.ravel(), separator=',')}"
    if attr_type == "func":
        return v.name
    return str(v)


def allowed(attr, missing=frozenset()):
    if not attr.HasField("allowed_values"):
        return "any"
    lst = attr.allowed_values.list
    if lst.type:
        return "{" + ",".join(sorted(type_name(t) for t in set(lst.type) - missing)) + "}"
    return "{" + ",".join(sorted(repr(s.decode()) for s in set(lst.s))) + "}"


def minimum(attr):
    return str(attr.minimum) if attr.has_minimum else "none"


def python_params(op):
    """The attrs gen_ops.py makes parameters of, in their parameter order."""
    inferred = set()
    for arg in op.input_arg:
        inferred.update(x for x in (arg.type_attr, arg.number_attr, arg.type_list_attr) if x)
    attrs = [a for a in op.attr if a.name not in inferred]
    return [a.name for a in attrs if not a.HasField("default_value")] + \
        [a.name for a in attrs if a.HasField("default_value")]


def compare_args(kind, tf_args, weir_args, out):
    tf_names = [a.name for a in tf_args]
    weir_names = [a.name for a in weir_args]
    if tf_names != weir_names:
        out.append((f"{kind}s", ",".join(tf_names) or "-", ",".join(weir_names) or "-"))
    weir_by_name = {a.name: a for a in weir_args}
    for a in tf_args:
        b = weir_by_name.get(a.name)
        if b is None:
            continue
        if a.type != b.type:
            out.append((f"{kind}.{a.name}.type", type_name(a.type), type_name(b.type)))
        for field in ("type_attr", "number_attr", "type_list_attr"):
            x, y = getattr(a, field), getattr(b, field)
            if x != y:
                out.append((f"{kind}.{a.name}.{field}", x or "-", y or "-"))
        if a.is_ref != b.is_ref:
            out.append((f"{kind}.{a.name}.is_ref", str(a.is_ref).lower(), str(b.is_ref).lower()))


def compare_op(tf, weir, missing):
    """[(field, tf_value, weir_value)] for one op both declare; `missing`:
    the dtypes Weir lacks, left out of TensorFlow's allowed types."""
    out = []
    compare_args("input", tf.input_arg, weir.input_arg, out)
    compare_args("output", tf.output_arg, weir.output_arg, out)
    tf_attrs = {a.name: a for a in tf.attr}
    weir_attrs = {a.name: a for a in weir.attr}
    for name, a in tf_attrs.items():
        b = weir_attrs.get(name)
        if b is None:
            out.append((f"attr.{name}", describe_attr(a), "absent"))
            continue
        if a.type != b.type:
            out.append((f"attr.{name}.type", a.type, b.type))
            continue
        da = attr_value(a.default_value, a.type) if a.HasField("default_value") else "none"
        db = attr_value(b.default_value, b.type) if b.HasField("default_value") else "none"
        if da != db:
            out.append((f"attr.{name}.default", da, db))
        if allowed(a, missing) != allowed(b):
            out.append((f"attr.{name}.allowed_values", allowed(a, missing), allowed(b)))
        if minimum(a) != minimum(b):
            out.append((f"attr.{name}.minimum", minimum(a), minimum(b)))
    for name, b in weir_attrs.items():
        if name not in tf_attrs:
            out.append((f"attr.{name}", "absent", describe_attr(b)))
    pa, pb = python_params(tf), python_params(weir)
    if pa != pb and set(pa) == set(pb):
        out.append(("attr_order", ",".join(pa), ",".join(pb)))
    if tf.is_stateful != weir.is_stateful:
        out.append(("is_stateful", str(tf.is_stateful).lower(), str(weir.is_stateful).lower()))
    return out


def describe_attr(a):
    text = a.type
    if a.HasField("default_value"):
        text += "=" + attr_value(a.default_value, a.type)
    return text


def all_differences(tf_ops, weir, missing):
    diffs = []
    for name in sorted(weir):
        if name not in tf_ops:
            if not name.startswith("_"):
                diffs.append((name, "op", "absent", "declared"))
            continue
        diffs.extend((name,) + d for d in compare_op(tf_ops[name], weir[name], missing))
    return diffs


def declared_dtypes(op):
    """Every dtype an OpDef names: fixed arg types, allowed and default types."""
    out = {a.type for a in list(op.input_arg) + list(op.output_arg) if a.type}
    for attr in op.attr:
        out.update(attr.allowed_values.list.type)
        out.update(attr.default_value.list.type)
        if attr.default_value.WhichOneof("value") == "type":
            out.add(attr.default_value.type)
    return out


def stale_missing_dtypes(missing, tf_ops, weir):
    """{dtype: why the missing-dtype line is wrong} for lines no longer true."""
    weir_types = set().union(*(declared_dtypes(op) for op in weir.values()))
    shared_tf_types = set()
    for name in weir:
        if name in tf_ops:
            for attr in tf_ops[name].attr:
                shared_tf_types.update(attr.allowed_values.list.type)
    out = {}
    for t in missing:
        if t in weir_types:
            out[t] = "Weir declares it now"
        elif t not in shared_tf_types:
            out[t] = "no op that Weir declares allows it in TensorFlow"
    return out


def self_test(tf_ops):
    """The comparison must see each kind of difference: each mutation of a
    copy of TensorFlow's OpDef must give exactly the expected field."""
    from tensorflow.core.framework import types_pb2

    def mutated(name, change):
        op = type(tf_ops[name])()
        op.CopyFrom(tf_ops[name])
        change(op)
        return op

    def attr(op, name):
        return next(a for a in op.attr if a.name == name)

    def drop_attr(op, name):
        keep = [a for a in op.attr if a.name != name]
        del op.attr[:]
        op.attr.extend(keep)

    def swap_attrs(op, x, y):
        attrs = list(op.attr)
        i, j = [k for k, a in enumerate(attrs) if a.name in (x, y)]
        attrs[i], attrs[j] = attrs[j], attrs[i]
        del op.attr[:]
        op.attr.extend(attrs)

    def narrow(op, name, dtype):
        kept = [t for t in attr(op, name).allowed_values.list.type if t != dtype]
        attr(op, name).allowed_values.list.ClearField("type")
        attr(op, name).allowed_values.list.type.extend(kept)

    qint8 = types_pb2.DT_QINT8
    cases = [
        ("MatMul", lambda op: drop_attr(op, "grad_a"), "attr.grad_a"),
        ("MatMul", lambda op: setattr(attr(op, "transpose_a").default_value, "b", True),
         "attr.transpose_a.default"),
        ("MatMul", lambda op: narrow(op, "T", types_pb2.DT_HALF), "attr.T.allowed_values"),
        ("MatMul", lambda op: swap_attrs(op, "transpose_a", "transpose_b"), "attr_order"),
        ("MatMul", lambda op: setattr(op.input_arg[1], "name", "c"), "inputs"),
        ("MatMul", lambda op: setattr(op, "is_stateful", True), "is_stateful"),
        ("AddN", lambda op: setattr(attr(op, "N"), "minimum", 2), "attr.N.minimum"),
        ("AddN", lambda op: setattr(op.input_arg[0], "number_attr", ""),
         "input.inputs.number_attr"),
        ("Shape", lambda op: setattr(op.output_arg[0], "type_attr", "T"),
         "output.output.type_attr"),
        ("Squeeze", lambda op: setattr(attr(op, "squeeze_dims"), "type", "list(float)"),
         "attr.squeeze_dims.type"),
        ("BiasAdd", lambda op: narrow(op, "T", qint8), None),  # qint8 is a missing dtype
    ]
    for name, change, field in cases:
        missing = frozenset([qint8] if field is None else [])
        got = [d[0] for d in compare_op(tf_ops[name], mutated(name, change), missing)]
        want = [field] if field else []
        if got != want:
            sys.exit(f"op_def_parity: FAIL: self-test: a changed {name} gave {got}, not {want}")
    if compare_op(tf_ops["MatMul"], tf_ops["MatMul"], frozenset()):
        sys.exit("op_def_parity: FAIL: self-test: MatMul differs from itself")


def read_differences(path):
    """[(op_pattern, field_pattern, reason, line_number)]"""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                sys.exit(f"op_def_parity: FAIL: {path}:{number}: want 'OP FIELD REASON', "
                         f"got {line!r}")
            entries.append((parts[0], parts[1], parts[2], number))
    return entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", required=True, help="weir_op_list (tests/tf_compat)")
    parser.add_argument("--differences", default=os.path.join(HERE, "op_def_differences.txt"))
    parser.add_argument("--all", action="store_true", help="print listed differences too")
    args = parser.parse_args()
    ensure_tensorflow()

    tf_ops = tensorflow_ops()
    self_test(tf_ops)
    weir = weir_ops(args.tool)
    entries = read_differences(args.differences)
    from tensorflow.core.framework import types_pb2
    missing = {}
    for op, field, reason, number in entries:
        if op == "missing-dtype":
            if field not in types_pb2.DataType.keys():
                sys.exit(f"op_def_parity: FAIL: {args.differences}:{number}: unknown dtype {field}")
            missing[types_pb2.DataType.Value(field)] = number
    entries = [e for e in entries if e[0] != "missing-dtype"]
    diffs = all_differences(tf_ops, weir, frozenset(missing))
    used = set()
    unlisted = []
    for op, field, tf_value, weir_value in diffs:
        line = f"{op} {field} tf={tf_value} weir={weir_value}"
        match = next((e for e in entries
                      if fnmatch.fnmatchcase(op, e[0]) and fnmatch.fnmatchcase(field, e[1])), None)
        if match is None:
            unlisted.append(line)
        else:
            used.add(match[3])
            if args.all:
                print(f"listed   {line}")
    stale = [e for e in entries if e[3] not in used]
    for t, why in stale_missing_dtypes(missing, tf_ops, weir).items():
        stale.append(("missing-dtype", type_name(t), why, missing[t]))
    shared = sum(1 for name in weir if name in tf_ops)
    for line in unlisted:
        print(f"UNLISTED {line}")
    for op, field, reason, number in sorted(stale, key=lambda e: e[3]):
        why = reason if op == "missing-dtype" else "no such difference any more"
        print(f"STALE    {os.path.basename(args.differences)}:{number}: {op} {field} "
              f"({why}: remove the line)")
    print(f"op_def_parity: {len(weir)} Weir ops, {shared} also in TensorFlow "
          f"{len(tf_ops)} ops; {len(diffs)} differences, {len(diffs) - len(unlisted)} of them "
          f"listed in {len(entries)} entries (and {len(missing)} dtypes Weir lacks); "
          f"{len(unlisted)} unlisted, {len(stale)} stale")
    if unlisted or stale:
        print("op_def_parity: FAIL (fix the declaration, or list the difference with its reason "
              f"in {args.differences})")
        return 1
    print("op_def_parity: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
