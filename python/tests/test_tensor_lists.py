"""DT_VARIANT from Python: wr.variant, the TensorList and Optional raw ops
(TensorFlow's names and attrs) run in a session and compared with TensorFlow
2.21 running the same ops eagerly, AddN of two lists, and a fetched or fed
variant refused with a clear error rather than a crash."""
import json
import subprocess

import numpy as np
import pytest

import weir as wr
from weir import raw_ops
from weir.framework import errors

from peers import PEERS_PYTHON


def test_variant_dtype():
    assert wr.variant.name == "variant"
    assert wr.as_dtype(21) == wr.variant
    assert wr.as_dtype("variant") == wr.variant


def build_list_program():
    """rows pushed, one replaced, stacked; a reserved list read unset."""
    x = wr.constant(np.float32([[1, 2], [3, 4], [5, 6]]))
    lst = raw_ops.TensorListFromTensor(tensor=x, element_shape=wr.constant(np.int32([2])))
    lst = raw_ops.TensorListPushBack(input_handle=lst, tensor=wr.constant(np.float32([7, 8])))
    lst = raw_ops.TensorListSetItem(input_handle=lst, index=wr.constant(np.int32(1)),
                                    item=wr.constant(np.float32([-1, -2])))
    stacked = raw_ops.TensorListStack(input_handle=lst, element_shape=wr.constant(np.int32([2])),
                                      element_dtype=wr.float32)
    length = raw_ops.TensorListLength(input_handle=lst)
    doubled = raw_ops.AddN(inputs=[lst, lst])
    doubled_stack = raw_ops.TensorListStack(input_handle=doubled,
                                            element_shape=wr.constant(np.int32([2])),
                                            element_dtype=wr.float32)
    return lst, stacked, length, doubled_stack


TF_SCRIPT = """
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
r = tf.raw_ops
x = tf.constant(np.float32([[1, 2], [3, 4], [5, 6]]))
lst = r.TensorListFromTensor(tensor=x, element_shape=tf.constant(np.int32([2])))
lst = r.TensorListPushBack(input_handle=lst, tensor=tf.constant(np.float32([7, 8])))
lst = r.TensorListSetItem(input_handle=lst, index=1, item=tf.constant(np.float32([-1, -2])))
stacked = r.TensorListStack(input_handle=lst, element_shape=tf.constant(np.int32([2])),
                            element_dtype=tf.float32)
doubled = r.AddN(inputs=[lst, lst])
d = r.TensorListStack(input_handle=doubled, element_shape=tf.constant(np.int32([2])),
                      element_dtype=tf.float32)
print(json.dumps({"stacked": stacked.numpy().tolist(), "doubled": d.numpy().tolist(),
                  "length": int(r.TensorListLength(input_handle=lst))}))
"""


def test_list_ops_match_tensorflow():
    g = wr.Graph()
    with g.as_default():
        lst, stacked, length, doubled = build_list_program()
        assert lst.dtype == wr.variant
    with wr.Session(graph=g) as sess:
        got_stacked, got_length, got_doubled = sess.run([stacked, length, doubled])
    proc = subprocess.run([PEERS_PYTHON, "-c", TF_SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    want = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_array_equal(got_stacked, np.float32(want["stacked"]))
    np.testing.assert_array_equal(got_doubled, np.float32(want["doubled"]))
    assert int(got_length) == want["length"]


def test_fetching_or_feeding_a_variant_is_a_clear_error():
    g = wr.Graph()
    with g.as_default():
        lst, _, _, _ = build_list_program()
        placeholder = raw_ops.Placeholder(dtype=wr.variant, name="p")
        length = raw_ops.TensorListLength(input_handle=placeholder)
    with wr.Session(graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError) as raised:
            sess.run(lst)
        assert "variant" in str(raised.value) and "numpy" in str(raised.value)
        with pytest.raises(Exception) as raised:
            sess.run(length, {placeholder: np.float32(1)})
        assert "variant" in str(raised.value)


def test_list_errors_name_the_node():
    g = wr.Graph()
    with g.as_default():
        lst = raw_ops.TensorListReserve(element_shape=wr.constant(np.int32([2])),
                                        num_elements=wr.constant(np.int32(2)),
                                        element_dtype=wr.float32)
        item = raw_ops.TensorListGetItem(input_handle=lst, index=wr.constant(np.int32(5)),
                                         element_shape=wr.constant(np.int32([2])),
                                         element_dtype=wr.float32, name="read_past_end")
        opt = raw_ops.OptionalNone()
        value = raw_ops.OptionalGetValue(optional=opt, output_types=[wr.float32],
                                         output_shapes=[[2]], name="get_none")
    with wr.Session(graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError) as raised:
            sess.run(item)
        assert "read_past_end" in str(raised.value) and "index 5" in str(raised.value)
        with pytest.raises(errors.InvalidArgumentError) as raised:
            sess.run(value)
        assert "get_none" in str(raised.value) and "no value" in str(raised.value)


def test_weir_gradients_through_list_ops():
    """wr.gradients through FromTensor, SetItem, PushBack, PopBack, GetItem
    and Stack, against the gradient worked out by hand."""
    g = wr.Graph()
    with g.as_default():
        x = wr.constant(np.float32([[1, 2], [3, 4]]))
        y = wr.constant(np.float32([5, 6]))
        shape = wr.constant(np.int32([2]))
        lst = raw_ops.TensorListFromTensor(tensor=x * 2.0, element_shape=shape)
        lst = raw_ops.TensorListPushBack(input_handle=lst, tensor=y * y)
        lst = raw_ops.TensorListSetItem(input_handle=lst, index=wr.constant(np.int32(0)),
                                        item=y * 3.0)
        lst, last = raw_ops.TensorListPopBack(input_handle=lst, element_shape=shape,
                                              element_dtype=wr.float32)
        first = raw_ops.TensorListGetItem(input_handle=lst, index=wr.constant(np.int32(1)),
                                          element_shape=shape, element_dtype=wr.float32)
        stacked = raw_ops.TensorListStack(input_handle=lst, element_shape=shape,
                                          element_dtype=wr.float32)
        loss = (wr.reduce_sum(stacked * stacked) + wr.reduce_sum(last * 10.0) +
                wr.reduce_sum(first))
        gx, gy = wr.gradients(loss, [x, y])
    with wr.Session(graph=g) as sess:
        got_x, got_y = sess.run([gx, gy])
    # stacked = [3y, 2 x[1]]; last = y^2; first = 2 x[1].
    xv, yv = np.float32([[1, 2], [3, 4]]), np.float32([5, 6])
    want_x = np.zeros_like(xv)
    want_x[1] = 2 * (2 * 2 * xv[1]) + 2
    want_y = 2 * 3 * (3 * yv) + 10 * 2 * yv
    np.testing.assert_allclose(got_x, want_x, rtol=1e-6)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-6)
