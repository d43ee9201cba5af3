"""weir.raw_ops: every registered op as `OpName(*, name=None, **inputs_and_attrs)`
(tf.raw_ops): keyword-only calls of the generated weir.ops.gen_ops functions.
Built on first use of each name."""
import inspect as _inspect

from weir.ops import gen_ops as _gen_ops

_cache = {}


def _make(op_name, fn):
    def raw_op(**kwargs):
        return fn(**kwargs)

    sig = _inspect.signature(fn)
    raw_op.__signature__ = sig.replace(parameters=[
        p.replace(kind=_inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values()])
    raw_op.__name__ = op_name
    raw_op.__qualname__ = op_name
    raw_op.__doc__ = fn.__doc__
    raw_op.__module__ = __name__
    return raw_op


def __getattr__(op_name):
    fn = _cache.get(op_name)
    if fn is None:
        target = _gen_ops._OP_FUNCTIONS.get(op_name)
        if target is None:
            raise AttributeError(f"weir.raw_ops has no op {op_name!r}")
        fn = _make(op_name, target)
        _cache[op_name] = fn
    return fn


def __dir__():
    return sorted(_gen_ops._OP_FUNCTIONS)


__all__ = sorted(_gen_ops._OP_FUNCTIONS)
