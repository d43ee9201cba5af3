"""The generated op functions (weir.ops.gen_ops, its .pyi, weir.raw_ops)
equal the registry: one function per non-underscore op, with the op's
inputs, non-inferred attrs and their defaults, and nothing else."""
import ast
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import weir as wr
from weir import _C
from weir import raw_ops
from weir.ops import gen_ops

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
sys.path.insert(0, TOOLS)
import gen_ops as generator  # noqa: E402  (python/tools/gen_ops.py)

OP_DEFS = [d for d in _C.op_defs() if not d["name"].startswith("_")]


def expected_params(op_def):
    """(name, has_default, default) per parameter, derived here from the
    registry independently of the generator's code."""
    inferred = set()
    for arg in op_def["inputs"]:
        inferred.update(a for a in (arg["type_attr"], arg["number_attr"], arg["type_list_attr"])
                        if a)
    params = [(arg["name"], False, None) for arg in op_def["inputs"]]
    attrs = [a for a in op_def["attrs"] if a["name"] not in inferred]
    params += [(a["name"], False, None) for a in attrs if not a["has_default"]]
    params += [(a["name"], True, a) for a in attrs if a["has_default"]]
    return params


def same_default(value, attr):
    want = attr["default"]
    kind = attr["type"]
    if kind == "tensor":
        return value is None
    if kind == "type":
        return wr.as_dtype(value).as_datatype_enum == want
    if kind == "list(type)":
        return [wr.as_dtype(v).as_datatype_enum for v in value] == list(want)
    if kind == "string":
        return value.encode() == want if isinstance(want, bytes) else value == want
    if kind == "list(string)":
        return [v.encode() for v in value] == list(want)
    if kind == "float":
        return value == want or (np.isnan(value) and np.isnan(want))
    return value == want


def py_name(name):
    import keyword
    return name + "_" if keyword.iskeyword(name) else name


def test_registry_is_substantial():
    names = {d["name"] for d in OP_DEFS}
    for op in ("MatMul", "Conv2D", "AddV2", "Placeholder", "Const", "Pack", "VarHandleOp",
               "SoftmaxCrossEntropyWithLogits"):
        assert op in names
    assert len(OP_DEFS) > 150


def test_every_op_has_exactly_one_function_and_vice_versa():
    mapping = gen_ops._OP_FUNCTIONS
    assert sorted(mapping) == sorted(d["name"] for d in OP_DEFS)
    functions = {name for name, obj in vars(gen_ops).items()
                 if inspect.isfunction(obj) and not name.startswith("_")
                 and obj.__module__ == gen_ops.__name__}
    assert functions == set(gen_ops.__all__)
    assert sorted(fn.__name__ for fn in mapping.values()) == sorted(functions)
    assert len(functions) == len(OP_DEFS)


def test_function_names_are_tfs_snake_case():
    cases = {"MatMul": "mat_mul", "Conv2D": "conv2d", "BiasAdd": "bias_add",
             "Conv2DBackpropInput": "conv2d_backprop_input", "L2Loss": "l2_loss",
             "BatchMatMulV2": "batch_mat_mul_v2", "InTopKV2": "in_top_kv2",
             "LSTMBlockCell": "lstm_block_cell", "DecodeCSV": "decode_csv",
             "GatherNd": "gather_nd", "ConcatV2": "concat_v2", "VarHandleOp": "var_handle_op",
             "SoftmaxCrossEntropyWithLogits": "softmax_cross_entropy_with_logits",
             "FIFOQueueV2": "fifo_queue_v2", "ShapeN": "shape_n", "Assert": "assert_",
             "TFRecordReaderV2": "tf_record_reader_v2", "Log1p": "log1p"}
    for op, fn in cases.items():
        assert generator.snake_case(op) == fn, op
    names = {d["name"] for d in OP_DEFS}
    for op, fn in cases.items():
        if op in names:
            assert gen_ops._OP_FUNCTIONS[op].__name__ == fn


@pytest.mark.parametrize("op_def", OP_DEFS, ids=lambda d: d["name"])
def test_signature_matches_the_declaration(op_def):
    fn = gen_ops._OP_FUNCTIONS[op_def["name"]]
    params = list(inspect.signature(fn).parameters.values())
    assert params[-1].name == "name" and params[-1].default is None
    want = expected_params(op_def)
    assert [p.name for p in params[:-1]] == [py_name(n) for n, _, _ in want]
    for p, (_, has_default, attr) in zip(params, want):
        if not has_default:
            assert p.default is inspect.Parameter.empty, p.name
        else:
            assert same_default(p.default, attr), (p.name, p.default, attr["default"])
    doc = fn.__doc__
    assert doc and "Args:" in doc and "name: A name for the operation" in doc
    if op_def["summary"]:
        assert op_def["summary"].strip().split("\n")[0][:40] in doc


def test_stub_parses_and_matches():
    path = os.path.join(os.path.dirname(gen_ops.__file__), "gen_ops.pyi")
    with open(path) as f:
        tree = ast.parse(f.read())
    stubs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert set(stubs) == set(gen_ops.__all__)
    for op_def in OP_DEFS:
        fn = gen_ops._OP_FUNCTIONS[op_def["name"]]
        stub = stubs[fn.__name__]
        assert [a.arg for a in stub.args.args] == list(inspect.signature(fn).parameters)
        ret = ast.unparse(stub.returns)
        outs = op_def["outputs"]
        if not outs:
            assert ret == "Operation"
        elif len(outs) == 1:
            is_list = outs[0]["number_attr"] or outs[0]["type_list_attr"]
            assert ret == ("list[Tensor]" if is_list else "Tensor")
        else:
            assert ret == f"_{op_def['name']}Output"


def test_generator_is_deterministic(tmp_path):
    outs = []
    for i in range(2):
        out_dir = tmp_path / str(i)
        subprocess.run([sys.executable, os.path.join(TOOLS, "gen_ops.py"), "--extension",
                        _C.__file__, "--out-dir", str(out_dir)], check=True,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        outs.append(((out_dir / "gen_ops.py").read_bytes(), (out_dir / "gen_ops.pyi").read_bytes()))
    assert outs[0] == outs[1]
    # The generator does not import the weir package (it runs before it is built).
    assert b"import weir\n" not in open(os.path.join(TOOLS, "gen_ops.py"), "rb").read()


def test_generated_functions_build_and_run():
    g = wr.Graph()
    with g.as_default():
        a = gen_ops.placeholder(wr.float32, shape=[None, 2], name="a")
        m = gen_ops.mat_mul(a, [[1.0], [2.0]], transpose_b=False)
        p = gen_ops.pack([1, 2, 3], axis=0)
        u = gen_ops.unique([5, 5, 7])
        r = raw_ops.MatMul(a=a, b=[[1.0, 0.0], [0.0, 1.0]], transpose_b=True, name="raw")
        with pytest.raises(TypeError):
            raw_ops.MatMul(a, a)  # keyword-only, like tf.raw_ops
        with pytest.raises(AttributeError):
            raw_ops.NoSuchOp
    assert a.op.name == "a" and m.op.type == "MatMul" and r.op.name == "raw"
    assert r.op.get_attr("transpose_b") is True
    assert "MatMul" in dir(raw_ops)
    assert list(inspect.signature(raw_ops.MatMul).parameters)[:2] == ["a", "b"]
    with wr.Session(graph=g) as sess:
        out = sess.run([m, p, u.y, r], {a: np.array([[1.0, 1.0]], np.float32)})
    assert out[0].tolist() == [[3.0]] and out[1].tolist() == [1, 2, 3]
    assert out[2].tolist() == [5, 7] and out[3].tolist() == [[1.0, 1.0]]
