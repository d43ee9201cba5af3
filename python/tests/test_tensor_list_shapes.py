"""Static shapes of the TensorList readers from the list's handle data: a
list made with a known element shape (TensorListReserve, EmptyTensorList,
TensorListFromTensor, ...) passes it on through the ops that change it, so
TensorListGetItem, PopBack, Stack, Gather and ConcatV2 know their output's
shape even when their own element_shape is -1. The same graphs are built in
TensorFlow 2.21 (graph mode, in a subprocess) and every shape must be
TensorFlow's, unknown where TensorFlow's is unknown; the graphs TensorFlow
refuses at construction (mismatched dtype or element shape) Weir refuses too,
naming the node."""
import json
import subprocess

import numpy as np
import pytest

import weir as wr
from weir import raw_ops

from peers import PEERS_PYTHON

# Built with: r (raw ops), c(value, dtype name) a constant, ph(dtype, shape)
# a placeholder, F32/I32 dtypes; each entry of `out` is a tensor whose static
# shape is compared.
PROGRAM = """
unk = c(-1, "int32")
def shape(*dims, dtype="int32"):
    return c(list(dims), dtype)
def get(lst, req=None, dtype=None):
    return r.TensorListGetItem(input_handle=lst, index=c(0, "int32"),
                               element_shape=unk if req is None else req,
                               element_dtype=dtype or F32)
def stack(lst, req=None, n=-1):
    return r.TensorListStack(input_handle=lst, element_shape=unk if req is None else req,
                             element_dtype=F32, num_elements=n)
def pop(lst, req=None):
    return r.TensorListPopBack(input_handle=lst, element_shape=unk if req is None else req,
                               element_dtype=F32)
def reserve(*dims):
    return r.TensorListReserve(element_shape=shape(*dims) if dims != (-1,) else unk,
                               num_elements=c(4, "int32"), element_dtype=F32)
def empty(*dims):
    return r.EmptyTensorList(element_shape=shape(*dims) if dims != (-1,) else unk,
                             max_num_elements=c(-1, "int32"), element_dtype=F32)
def zeros(*dims, dtype="float32"):
    return c(np.zeros(dims), dtype)

res = reserve(2, 3)
part = reserve(-1, 3)
unknown = reserve(-1)
out["reserve_get"] = get(res)
out["reserve_get_unknown_dims_asked"] = get(res, shape(-1, -1))
out["reserve_stack"] = stack(res)
out["reserve_stack_4"] = stack(res, n=4)
out["reserve_pop"] = pop(res)[1]
out["reserve_gather"] = r.TensorListGather(input_handle=res, indices=c([0, 1], "int32"),
                                           element_shape=unk, element_dtype=F32)
out["reserve_concat"] = r.TensorListConcatV2(input_handle=res, element_shape=unk,
                                             leading_dims=c([], "int64"),
                                             element_dtype=F32)[0]
out["reserve_int64_shape_get"] = get(r.TensorListReserve(
    element_shape=shape(2, 3, dtype="int64"), num_elements=c(4, "int32"), element_dtype=F32))
out["reserve_scalar_get"] = get(reserve())
out["partial_get"] = get(part)
out["partial_get_merged"] = get(part, shape(2, -1))
out["partial_stack"] = stack(part)
out["partial_stack_merged"] = stack(part, shape(2, -1))
out["partial_concat_merged"] = r.TensorListConcatV2(input_handle=part, element_shape=shape(2, -1),
                                                    leading_dims=c([], "int64"),
                                                    element_dtype=F32)[0]
out["partial_pop_asked"] = pop(part, shape(2, -1))[1]
out["unknown_get"] = get(unknown)
out["unknown_get_asked"] = get(unknown, shape(2, 3))
out["unknown_stack_asked"] = stack(unknown, shape(2, 3))
out["unknown_pop_asked"] = pop(unknown, shape(2, 3))[1]
out["unknown_set_get"] = get(r.TensorListSetItem(input_handle=unknown, index=c(0, "int32"),
                                                 item=zeros(7)))
out["placeholder_shape_get"] = get(r.TensorListReserve(
    element_shape=ph(I32, [2]), num_elements=c(4, "int32"), element_dtype=F32))
out["placeholder_any_length_shape_get"] = get(r.TensorListReserve(
    element_shape=ph(I32, [None]), num_elements=c(4, "int32"), element_dtype=F32))
out["from_tensor_get"] = get(r.TensorListFromTensor(tensor=zeros(4, 2, 3), element_shape=unk))
out["from_tensor_stack"] = stack(r.TensorListFromTensor(tensor=zeros(4, 2, 3), element_shape=unk))
out["from_tensor_shape_get"] = get(r.TensorListFromTensor(tensor=zeros(4, 2, 3),
                                                          element_shape=shape(2, -1)))
out["from_placeholder_get"] = get(r.TensorListFromTensor(tensor=ph(F32, [None, 2, None]),
                                                         element_shape=shape(-1, 3)))
out["empty_pop"] = pop(empty(2, 3))[1]
out["empty_pop_other_shape_asked"] = pop(empty(2, 3), shape(4))[1]
out["empty_unknown_push_pop"] = pop(r.TensorListPushBack(input_handle=empty(-1),
                                                         tensor=zeros(5, 6)))[1]
out["empty_push_get"] = get(r.TensorListPushBack(input_handle=empty(2, 3), tensor=zeros(2, 3)))
out["empty_partial_push_get"] = get(r.TensorListPushBack(input_handle=empty(-1, 3),
                                                         tensor=zeros(2, 3)))
out["push_other_shape_get"] = get(r.TensorListPushBack(input_handle=empty(2, 3),
                                                       tensor=zeros(5)))
out["set_get"] = get(r.TensorListSetItem(input_handle=res, index=c(0, "int32"),
                                         item=zeros(2, 3)))
out["partial_set_get"] = get(r.TensorListSetItem(input_handle=part, index=c(0, "int32"),
                                                 item=zeros(2, 3)))
out["set_other_dtype_get"] = get(r.TensorListSetItem(input_handle=part, index=c(0, "int32"),
                                                     item=zeros(2, 3, dtype="int32")))
out["popped_list_get"] = get(pop(res)[0])
out["identity_get"] = get(r.Identity(input=res))
out["stop_gradient_get"] = get(r.StopGradient(input=res))
out["switch_get"] = get(r.Switch(data=res, pred=ph(BOOL, []))[0])
out["merge_get"] = get(r.Merge(inputs=[res, res])[0])
out["resize_get"] = get(r.TensorListResize(input_handle=res, size=c(3, "int32")))
out["scatter_into_get"] = get(r.TensorListScatterIntoExistingList(
    input_handle=res, tensor=zeros(2, 2, 3), indices=c([0, 1], "int32")))
out["scatter_into_other_shape_get"] = get(r.TensorListScatterIntoExistingList(
    input_handle=part, tensor=zeros(2, 5), indices=c([0, 1], "int32")))
out["scatter_get"] = get(r.TensorListScatterV2(tensor=zeros(2, 2, 3), indices=c([0, 1], "int32"),
                                               element_shape=unk, num_elements=c(-1, "int32")))
out["scatter_shape_get"] = get(r.TensorListScatterV2(
    tensor=zeros(2, 2, 3), indices=c([0, 1], "int32"), element_shape=shape(2, -1),
    num_elements=c(-1, "int32")))
out["split_get"] = get(r.TensorListSplit(tensor=zeros(4, 3), element_shape=unk,
                                         lengths=c([2, 2], "int64")))
out["split_shape_get"] = get(r.TensorListSplit(tensor=zeros(4, 3), element_shape=shape(-1, 3),
                                               lengths=c([2, 2], "int64")))
out["element_shape"] = r.TensorListElementShape(input_handle=res, shape_type=I32)
out["element_shape_unknown"] = r.TensorListElementShape(input_handle=unknown, shape_type=I32)
out["element_shape_scalar"] = r.TensorListElementShape(input_handle=reserve(), shape_type=I32)
"""

# Each must fail at graph construction in both; the name is the node's.
ERRORS = {
    "get_other_shape": "get(res, shape(5, 5))",
    "get_other_dtype": "get(res, dtype=I32)",
    "push_other_dtype": "r.TensorListPushBack(input_handle=res, tensor=zeros(2, 3, dtype='int32'))",
    "set_other_rank": "r.TensorListSetItem(input_handle=res, index=c(0, 'int32'), item=zeros(5))",
    "stack_other_rank": "stack(res, shape(4))",
    "gather_other_rank": ("r.TensorListGather(input_handle=res, indices=c([0], 'int32'), "
                          "element_shape=shape(4), element_dtype=F32)"),
    "concat_other_rank": ("r.TensorListConcatV2(input_handle=res, element_shape=shape(4), "
                          "leading_dims=c([], 'int64'), element_dtype=F32)"),
    "from_tensor_read_other_dtype": (
        "get(r.TensorListFromTensor(tensor=zeros(4, 2, dtype='int32'), element_shape=shape(2)))"),
}

TF_SCRIPT = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
program, errors = json.loads(sys.stdin.read())
g = tf.Graph()
with g.as_default():
    env = {"r": tf.raw_ops, "np": np, "F32": tf.float32, "I32": tf.int32, "BOOL": tf.bool,
           "c": lambda v, d: tf.constant(np.array(v, dtype=d)),
           "ph": lambda d, s: tf.compat.v1.placeholder(d, s), "out": {}}
    exec(program, env)
    shapes = {k: (None if v.shape.rank is None else v.shape.as_list())
              for k, v in env["out"].items()}
    failed = {}
    for name, code in errors.items():
        try:
            eval(code, env)
            failed[name] = False
        except (ValueError, tf.errors.InvalidArgumentError):
            failed[name] = True
print(json.dumps({"shapes": shapes, "failed": failed}))
"""


def weir_env():
    return {"r": raw_ops, "np": np, "F32": wr.float32, "I32": wr.int32, "BOOL": wr.bool,
            "c": lambda v, d: wr.constant(np.array(v, dtype=d)),
            "ph": lambda d, s: wr.placeholder(d, s), "out": {}}


@pytest.fixture(scope="module")
def tensorflow_result():
    proc = subprocess.run([PEERS_PYTHON, "-c", TF_SCRIPT], capture_output=True, text=True,
                          input=json.dumps([PROGRAM, ERRORS]), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_list_reader_shapes_match_tensorflow(tensorflow_result):
    g = wr.Graph()
    with g.as_default():
        env = weir_env()
        exec(PROGRAM, env)
    got = {k: (None if v.shape.rank is None else v.shape.as_list())
           for k, v in env["out"].items()}
    want = tensorflow_result["shapes"]
    assert sorted(got) == sorted(want)
    differ = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not differ, f"(weir, tensorflow) static shapes differ: {differ}"
    # The cases that show the handle data at work, so a TensorFlow that
    # dropped it could not make this test pass vacuously.
    assert want["reserve_get"] == [2, 3] and want["reserve_stack_4"] == [4, 2, 3]
    assert want["unknown_get"] is None


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_lists_tensorflow_refuses_are_refused_naming_the_node(tensorflow_result, name):
    assert tensorflow_result["failed"][name], f"TensorFlow accepted {ERRORS[name]}"
    g = wr.Graph()
    with g.as_default():
        env = weir_env()
        exec(PROGRAM, env)
        with g.name_scope(name):
            with pytest.raises(Exception) as raised:
                eval(ERRORS[name], env)
    assert name in str(raised.value), str(raised.value)
