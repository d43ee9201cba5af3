"""wr.debugging / TF1's NaN checks (check_numerics, assert_all_finite,
verify_tensor_all_finite, add_check_numerics_ops) on the CheckNumerics op:
finite values pass, NaN and Inf fail with TensorFlow's message, and the
gradient is checked on the way back."""
import numpy as np
import pytest

import weir as wr


def run(fetches, feeds=None):
    with wr.Session() as sess:
        return sess.run(fetches, feeds)


def test_check_numerics_passes_finite_and_names_nan_and_inf():
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [3])
        y = wr.debugging.check_numerics(x * 2.0, "doubled x")
        assert y.op.type == "CheckNumerics"
        with wr.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3]}), [2, 4, 6])
            for value, found in (([1, np.nan, 0], "NaN"), ([np.inf, 1, 0], "Inf"),
                                 ([-np.inf, np.nan, 0], "Inf and NaN")):
                with pytest.raises(wr.errors.InvalidArgumentError) as info:
                    sess.run(y, {x: value})
                text = str(info.value)
                assert f"doubled x : Tensor had {found} values" in text
                assert y.op.name in text  # the node


def test_check_numerics_refuses_integers():
    with wr.Graph().as_default():
        with pytest.raises(TypeError, match="int32"):
            wr.check_numerics(wr.constant([1, 2]), "ints")


def test_assert_all_finite_and_verify_tensor_all_finite():
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float64, [2])
        a = wr.debugging.assert_all_finite(x, "a says")
        b = wr.compat.v1.verify_tensor_all_finite(x, "b says")
        with wr.Session() as sess:
            np.testing.assert_array_equal(sess.run([a, b], {x: [1, 2]}), [[1, 2], [1, 2]])
            with pytest.raises(wr.errors.InvalidArgumentError, match="a says : Tensor had Inf"):
                sess.run(a, {x: [1, np.inf]})
            with pytest.raises(wr.errors.InvalidArgumentError, match="b says : Tensor had NaN"):
                sess.run(b, {x: [np.nan, 2]})


def test_debugging_reuses_the_existing_asserts():
    assert wr.debugging.assert_equal is wr.assert_equal
    assert wr.debugging.check_numerics is wr.check_numerics
    assert wr.compat.v1.check_numerics is wr.check_numerics
    assert wr.compat.v1.add_check_numerics_ops is wr.add_check_numerics_ops


def test_add_check_numerics_ops_checks_every_float_output():
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [2], name="x")
        y = wr.log(x, name="log_x")
        z = wr.identity(y * 3.0, name="z")
        i = wr.constant([1, 2], name="ints")  # not checked: not a float
        check = wr.compat.v1.add_check_numerics_ops()
        with wr.Session() as sess:
            np.testing.assert_allclose(sess.run([z, i], {x: [1, 2]})[0], np.log([1, 2]) * 3,
                                       rtol=1e-6)
            sess.run(check, {x: [1, 2]})
            with pytest.raises(wr.errors.InvalidArgumentError, match="log_x:0 : Tensor had Inf"):
                sess.run(check, {x: [0, 2]})
            with pytest.raises(wr.errors.InvalidArgumentError, match="log_x:0 : Tensor had NaN"):
                sess.run(check, {x: [-1, 2]})


def test_add_check_numerics_ops_refuses_control_flow():
    with wr.Graph().as_default():
        p = wr.placeholder(wr.bool, [])
        wr.cond(p, lambda: wr.constant(1.0), lambda: wr.constant(2.0))
        with pytest.raises(ValueError, match="control flow"):
            wr.add_check_numerics_ops()


def test_check_numerics_gradient_passes_through_and_checks():
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [3])
        y = wr.check_numerics(x, "fwd")
        loss = wr.reduce_sum(wr.sqrt(y))
        (g,) = wr.gradients(loss, [x])
        with wr.Session() as sess:
            np.testing.assert_allclose(sess.run(g, {x: [1, 4, 9]}), 0.5 / np.sqrt([1, 4, 9]),
                                       rtol=1e-6)
            # sqrt's gradient at 0 is inf: the backward check catches it.
            with pytest.raises(wr.errors.InvalidArgumentError,
                               match="gradient.*fwd : Tensor had Inf values"):
                sess.run(g, {x: [0, 4, 9]})
