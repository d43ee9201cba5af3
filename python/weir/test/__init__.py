"""weir.test: TF1's tf.test for tests ported by their import — TestCase
(unittest's, with a fresh default graph per test, session() /
cached_session() / test_session(), evaluate(), and TF's numeric assertions
assertAllClose, assertAllEqual, assertNear, assertArrayNear,
assertShapeEqual, assertAllInRange, assertAllGreater/Less(Equal),
assertRaisesOpError, assertRaisesWithPredicateMatch), main(), get_temp_dir(),
and the device queries (no GPUs: is_gpu_available() is False)."""
import contextlib
import os
import tempfile
import unittest

import numpy as np

__all__ = ["TestCase", "main", "get_temp_dir", "is_gpu_available", "gpu_device_name", "is_built_with_cuda",
           "is_built_with_gpu_support"]

_temp_dir = None


def get_temp_dir():
    """A directory for this process's tests (made once)."""
    global _temp_dir
    if _temp_dir is None:
        _temp_dir = tempfile.mkdtemp(prefix="weir_test_")
    return _temp_dir


def main(argv=None):
    """Runs the tests of __main__ (unittest.main)."""
    return unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    return False


def gpu_device_name():
    return ""


def is_built_with_cuda():
    return False


def is_built_with_gpu_support():
    return False


def _leaves(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    if isinstance(x, (list, tuple)) and not (x and all(isinstance(v, (int, float, bool, np.generic)) for v in x)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


class TestCase(unittest.TestCase):
    """unittest.TestCase with TF1's session helpers and assertions."""

    def setUp(self):
        import weir
        super().setUp()
        weir.reset_default_graph()
        self._cached_session = None

    def tearDown(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        super().tearDown()

    def get_temp_dir(self):
        path = os.path.join(get_temp_dir(), self.id())
        os.makedirs(path, exist_ok=True)
        return path

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new Session on `graph` (the default graph) made the default one."""
        import weir
        graph = graph if graph is not None else weir.get_default_graph()
        with weir.Session(graph=graph, config=config) as sess:
            with graph.as_default(), sess.as_default():
                yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The test's one Session (made on first use), made the default one."""
        import weir
        graph = graph if graph is not None else weir.get_default_graph()
        if self._cached_session is None or self._cached_session.graph is not graph:
            if self._cached_session is not None:
                self._cached_session.close()
            self._cached_session = weir.Session(graph=graph, config=config)
        with graph.as_default(), self._cached_session.as_default():
            yield self._cached_session

    # TF1's old name; not callable on the class, so unittest does not collect it as a test.
    test_session = None  # replaced below

    def evaluate(self, tensors):
        """The values of `tensors` (any structure) in the default session (or a new one)."""
        import weir
        sess = weir.get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.session() as sess:
            return sess.run(tensors)

    def _values(self, x):
        import weir
        if isinstance(x, (weir.Tensor, weir.Variable)):
            return self.evaluate(x)
        return x

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        a_leaves, b_leaves = _leaves(self._values(a)), _leaves(self._values(b))
        self.assertEqual(len(a_leaves), len(b_leaves), msg or "the structures differ")
        for x, y in zip(a_leaves, b_leaves):
            x, y = np.asarray(self._values(x)), np.asarray(self._values(y))
            self.assertEqual(x.shape, y.shape, msg or "shapes %s and %s differ" % (x.shape, y.shape))
            np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=msg or "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,  # noqa: N802
                                      half_rtol=1e-3, half_atol=1e-3, **unused):
        a_value = np.asarray(self._values(a))
        if a_value.dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif a_value.dtype == np.float32:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol)

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        a, b = np.asarray(self._values(a)), np.asarray(self._values(b))
        self.assertEqual(a.shape, b.shape, msg or "shapes %s and %s differ" % (a.shape, b.shape))
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNotAllClose(self, a, b, **kwargs):  # noqa: N802
        try:
            self.assertAllClose(a, b, **kwargs)
        except AssertionError:
            return
        raise AssertionError("The two values are close at all elements")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(abs(f1 - f2) <= err, msg or "%f != %f +/- %f" % (f1, f2, err))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        self.assertEqual(list(np.shape(np_array)), tf_tensor.shape.as_list(), msg)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        target = np.asarray(self._values(target))
        low_ok = target > lower_bound if open_lower_bound else target >= lower_bound
        high_ok = target < upper_bound if open_upper_bound else target <= upper_bound
        self.assertTrue(np.all(low_ok & high_ok), "%s is not in range" % target)

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._values(a)) > comparison_target))

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._values(a)) >= comparison_target))

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._values(a)) < comparison_target))

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._values(a)) <= comparison_target))

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            import re
            pattern = expected_err_re_or_predicate
            predicate = lambda e: re.search(pattern, str(e)) is not None  # noqa: E731
        return _PredicateContext(self, exception_type, predicate)

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        from weir.framework import errors
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)


class _InstanceMethod(object):
    """A method reachable from instances only (getattr on the class gives
    this non-callable object)."""

    def __init__(self, function):
        self._function = function

    def __get__(self, obj, cls=None):
        return self if obj is None else self._function.__get__(obj, cls)


TestCase.test_session = _InstanceMethod(TestCase.cached_session)


class _PredicateContext(object):
    def __init__(self, case, exception_type, predicate):
        self._case, self._type, self._predicate = case, exception_type, predicate

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._case.fail("%s not raised" % self._type.__name__)
        if not issubclass(exc_type, self._type) or not self._predicate(exc):
            return False  # the unexpected exception propagates
        return True


from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    compute_gradient, compute_gradient_error, assert_equal_graph_def)
__all__ = __all__ + ["compute_gradient", "compute_gradient_error", "assert_equal_graph_def"]
from weir.ops.tf1_modules import create_local_cluster  # noqa: F401,E402  (tf1api)
__all__ = __all__ + ["create_local_cluster"]
from unittest import mock  # noqa: F401,E402  (tf.test.mock)
from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    Benchmark, disable_with_predicate, with_eager_op_as_function, is_built_with_rocm,
    is_built_with_xla)
__all__ = __all__ + ["mock", "Benchmark", "disable_with_predicate", "with_eager_op_as_function",
                     "is_built_with_rocm", "is_built_with_xla"]
