"""weir.errors: one class per status code sharing OpError, the codes as TF
numbers them, the binding raising the registered classes, and the node /
op / creation line parsed from the C++ message."""
import pickle
import sys

import numpy as np
import pytest

import weir as wr
from weir import _C
from weir import raw_ops
from weir.framework import constant_op
from weir.framework import errors
from weir.framework import ops

# TensorFlow's names and numbers (tensorflow/core/protobuf/error_codes.proto).
TF_CODES = {
    "CancelledError": ("CANCELLED", 1),
    "UnknownError": ("UNKNOWN", 2),
    "InvalidArgumentError": ("INVALID_ARGUMENT", 3),
    "DeadlineExceededError": ("DEADLINE_EXCEEDED", 4),
    "NotFoundError": ("NOT_FOUND", 5),
    "AlreadyExistsError": ("ALREADY_EXISTS", 6),
    "PermissionDeniedError": ("PERMISSION_DENIED", 7),
    "ResourceExhaustedError": ("RESOURCE_EXHAUSTED", 8),
    "FailedPreconditionError": ("FAILED_PRECONDITION", 9),
    "AbortedError": ("ABORTED", 10),
    "OutOfRangeError": ("OUT_OF_RANGE", 11),
    "UnimplementedError": ("UNIMPLEMENTED", 12),
    "InternalError": ("INTERNAL", 13),
    "UnavailableError": ("UNAVAILABLE", 14),
    "DataLossError": ("DATA_LOSS", 15),
    "UnauthenticatedError": ("UNAUTHENTICATED", 16),
}


def test_classes_and_codes():
    assert errors.OK == 0
    seen = set()
    for class_name, (code_name, code) in TF_CODES.items():
        cls = getattr(errors, class_name)
        assert getattr(errors, code_name) == code
        assert issubclass(cls, errors.OpError) and issubclass(cls, Exception)
        assert cls is getattr(wr.errors, class_name)
        e = cls(None, None, "boom")
        assert e.error_code == code and e.message == "boom" and str(e) == "boom"
        assert e.op is None and e.node_def is None
        assert errors.exception_type_from_error_code(code) is cls
        assert errors.error_code_from_exception_type(cls) == code
        seen.add(cls)
    assert len(seen) == 16
    with pytest.raises(KeyError):
        errors.exception_type_from_error_code(errors.OK)


def test_message_parsing():
    e = errors.InvalidArgumentError(
        None, None, "node 'dense/MatMul' (MatMul) created at /home/u/model.py:42: In[0] is [2,3], "
        "In[1] is [4,5]")
    assert e.node_name == "dense/MatMul"
    assert e.op_type == "MatMul"
    assert e.source_location == "/home/u/model.py:42"
    e = errors.OutOfRangeError(None, None, "node 'q' (QueueDequeueV2): the queue is closed and empty")
    assert (e.node_name, e.op_type, e.source_location) == ("q", "QueueDequeueV2", None)
    e = errors.InternalError(None, None, "node 'w/x' (Enter) created at /my dir/a.py:7 in frame 'w' "
                             "iteration 2: bad")
    assert (e.node_name, e.op_type, e.source_location) == ("w/x", "Enter", "/my dir/a.py:7")
    e = errors.UnknownError(None, None, "no node here")
    assert e.node_name is None and e.op_type is None and e.source_location is None


def test_pickle_round_trip():
    e = errors.NotFoundError(None, None, "node 'n' (Foo) created at m.py:3: missing")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is errors.NotFoundError
    assert back.message == e.message and back.node_name == "n" and back.error_code == errors.NOT_FOUND


def test_binding_raises_registered_classes():
    with pytest.raises(errors.NotFoundError, match="NoSuchOp"):
        _C.op_def("NoSuchOp")
    with pytest.raises(errors.InvalidArgumentError, match="nosuch"):
        _C.Session(b"", {"target": "nosuch://localhost:1"})


def test_construction_error_names_node_and_line():
    g = ops.Graph()
    with g.as_default():
        a = constant_op.constant(np.ones((2, 3), np.float32))
        b = constant_op.constant(np.ones((4, 5), np.float32))
        with pytest.raises(errors.InvalidArgumentError) as info:
            line = sys._getframe().f_lineno + 1
            raw_ops.MatMul(a=a, b=b, name="bad")
    text = str(info.value)
    assert "'bad' (MatMul)" in text
    assert "[2,3]" in text.replace(" ", "") or "2,3" in text
    assert "%s:%d" % (__file__, line) in text or "line %d" % line in text


def test_session_attaches_op_and_location():
    g = ops.Graph()
    with g.as_default():
        x = raw_ops.Placeholder(dtype=wr.int32, name="x")
        five = constant_op.constant([5], dtype=wr.int32)
        y = raw_ops.Reshape(tensor=x, shape=five, name="reshape"); line = sys._getframe().f_lineno  # noqa
        with wr.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(y, {x: np.arange(6, dtype=np.int32)})
    e = info.value
    assert e.op is y.op and e.node_name == "reshape" and e.op_type == "Reshape"
    assert e.node_def is not None and e.node_def.name == "reshape"
    assert e.message.endswith('File "%s", line %d' % (__file__, line))
