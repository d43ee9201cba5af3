"""wr.py_func / wr.numpy_function: a graph node that calls a Python function
(TF1's tf.py_func, tf.numpy_function).

    def clip_and_count(x):
        return np.clip(x, 0, 1), np.int32((x > 1).sum())
    y, n = wr.py_func(clip_and_count, [x], [wr.float32, wr.int32])

Contract (TF1's): when the node runs, `func` gets its inputs as numpy arrays
(copies) and returns one value per Tout dtype (a single value when Tout is a
single dtype); each value must already have that dtype (np.float64 for a
float32 output is an InvalidArgumentError naming the node, as TF's "0-th value
returned by pyfunc_0 is double, but expects float"). An exception the function
raises fails the step with its type, message and traceback: ValueError and
TypeError as InvalidArgumentError, StopIteration and IndexError as
OutOfRangeError, NotImplementedError as UnimplementedError, MemoryError as
ResourceExhaustedError, a weir error with its own class, anything else
UnknownError. The outputs' shapes are unknown; there is no gradient. The node
(ops PyFunc / PyFuncStateless, TF's names) runs only in this process, where
the function is registered (until its graph is collected): a graph holding
one does not run in a weir-server task nor in TensorFlow.
"""
import atexit
import itertools
import threading
import traceback
import weakref

import numpy as np

from weir import _C
from weir.framework import dtypes
from weir.framework import errors
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["py_func", "numpy_function"]

_lock = threading.Lock()
_functions = {}  # token -> callable, while the graph holding its node lives
_counter = itertools.count()


def _unregister(token):
    with _lock:
        _functions.pop(token, None)


def _register(func, graph):
    """A new token for `func`, forgotten when `graph` is collected (a
    Session keeps its graph alive, so a running step always finds it)."""
    with _lock:
        token = "pyfunc_%d" % next(_counter)
        _functions[token] = func
    weakref.finalize(graph, _unregister, token)
    return token


_ERROR_CODES = [(errors.OpError, None), (ValueError, errors.INVALID_ARGUMENT),
                (TypeError, errors.INVALID_ARGUMENT), (StopIteration, errors.OUT_OF_RANGE),
                (IndexError, errors.OUT_OF_RANGE), (NotImplementedError, errors.UNIMPLEMENTED),
                (MemoryError, errors.RESOURCE_EXHAUSTED)]


def _error_code(exception):
    for cls, code in _ERROR_CODES:
        if isinstance(exception, cls):
            return exception.error_code if code is None else code
    return errors.UNKNOWN


def _convert(value):
    """A returned value as the array the kernel takes (TF's rules: no cast to
    Tout; text becomes bytes objects)."""
    result = np.asarray(value, order="C")
    if result.dtype.kind == "S" and result is not value:
        return np.asarray(value, order="C", dtype=object)
    if result.dtype.kind == "U":
        return np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(result)
    return result


def _dispatch(token, args):
    """Called by the PyFunc kernel with the GIL held: (0, [arrays]) or
    (error code, message)."""
    name = token.decode("utf-8")
    func = _functions.get(name)
    if func is None:
        return errors.INVALID_ARGUMENT, "callback %s is not found" % name
    try:
        ret = func(*args)
        if ret is None:
            values = []
        elif isinstance(ret, (tuple, list)):
            values = [_convert(v) for v in ret]
        else:
            values = [_convert(ret)]
    except BaseException as e:  # noqa: BLE001  (every error of user code becomes the step's)
        # Even SystemExit and KeyboardInterrupt end only the step (Ctrl-C as
        # a cancellation): this runs on an executor thread.
        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        code = errors.CANCELLED if isinstance(e, KeyboardInterrupt) else _error_code(e)
        return code, "%s: %s\n%s" % (type(e).__name__, e, text)
    return 0, values


_C.set_py_func_dispatcher(_dispatch)
# Released before the interpreter tears down (a PyFunc step after that fails).
atexit.register(_C.set_py_func_dispatcher, None)


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803  (TF's name)
    """Wraps `func` (numpy arrays in, numpy values out) as a node; returns a
    list of Tensors when Tout is a list, else one Tensor (the Operation when
    Tout is an empty list)."""
    if not callable(func):
        raise TypeError("py_func: func must be callable, got %r" % (func,))
    is_list = isinstance(Tout, (list, tuple))
    out_types = [dtypes.as_dtype(t).base_dtype for t in (Tout if is_list else [Tout])]
    if isinstance(inp, (ops.Tensor,)) or not isinstance(inp, (list, tuple)):
        inp = [inp]
    inputs = [ops.convert_to_tensor(x) for x in inp]
    graph = ops._get_graph_from_inputs(inputs) if inputs else ops.get_default_graph()
    token = _register(func, graph)
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    result = apply_op(op_type, name, input=inputs, token=token, Tout=out_types)
    if not out_types:
        op = graph.get_operations()[-1]
        assert op.type == op_type and op.get_attr("token") in (token, token.encode())
        return op
    result = list(result) if isinstance(result, (list, tuple)) else [result]
    return result if is_list else result[0]


def numpy_function(func, inp, Tout, stateful=True, name=None):  # noqa: N803
    """tf.numpy_function: py_func under TF2's name."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)
