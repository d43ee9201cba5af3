"""The ops of TensorFlow graphs Weir gained with them: ReverseSequence
(wr.reverse_sequence), Erfc, Softsign, SpaceToBatchND/BatchToSpaceND,
SpaceToDepth/DepthToSpace and MatrixBandPart (wr.linalg.band_part), against
numpy references and finite differences. TensorFlow's own outputs for them
are compared in tests/tf_compat/test_tf_model_exports.py."""
import math

import numpy as np
import pytest

import weir as wr


def run(fetches, feeds=None):
    with wr.Session() as sess:
        return sess.run(fetches, feeds)


def reference_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    for b, n in enumerate(lengths):
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[seq_axis] = slice(0, n)
        dst = list(src)
        out[tuple(dst)] = np.flip(x[tuple(src)], axis=seq_axis - (batch_axis < seq_axis))
    return out


def test_reverse_sequence_is_the_op_and_matches_numpy():
    rng = np.random.RandomState(3)
    x = rng.randn(3, 4, 5).astype(np.float32)
    with wr.Graph().as_default():
        for seq_axis, batch_axis, lengths in ((1, 0, [4, 0, 2]), (2, 1, [5, 1, 3, 0]),
                                              (0, 2, [3, 0, 1, 2, 3])):
            y = wr.reverse_sequence(x, np.array(lengths, np.int64), seq_axis=seq_axis,
                                    batch_axis=batch_axis)
            assert y.op.type == "ReverseSequence"
            assert y.shape.as_list() == [3, 4, 5]
            np.testing.assert_array_equal(run(y), reference_reverse_sequence(
                x, lengths, seq_axis, batch_axis))
        bad = wr.reverse_sequence(x, [4, 5, 1], seq_axis=1)
        with pytest.raises(wr.errors.InvalidArgumentError, match=r"seq_lengths\[1\] = 5"):
            run(bad)
        with pytest.raises(ValueError, match="len\\(seq_lengths\\)"):
            wr.reverse_sequence(x, [1, 2], seq_axis=1)


def numeric_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        grad.flat[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return grad


@pytest.mark.parametrize("op", ["reverse_sequence", "erfc", "softsign", "space_to_batch_nd",
                                "space_to_depth", "band_part", "bicubic"])
def test_gradients_match_finite_differences(op):
    rng = np.random.RandomState(5)
    x0 = rng.randn(2, 6, 3)
    w = rng.randn(*{"space_to_batch_nd": (4, 4, 3), "space_to_depth": (1, 3, 1, 12),
                    "bicubic": (2, 4, 3)}.get(op, (2, 6, 3)))

    def build(t):
        if op == "reverse_sequence":
            return wr.reverse_sequence(t, [4, 6], seq_axis=1)
        if op == "erfc":
            return wr.math.erfc(t)
        if op == "softsign":
            return wr.nn.softsign(t)
        if op == "space_to_depth":
            return wr.nn.space_to_depth(wr.reshape(t, [1, 6, 2, 3]), 2)
        if op == "band_part":
            return wr.linalg.band_part(t, 1, 0)
        if op == "bicubic":  # computes in float32: checked in float64 after the cast back
            resized = wr.image.resize_bicubic(wr.reshape(t, [1, 6, 3, 2]), [4, 4],
                                              half_pixel_centers=True)
            return wr.reshape(resized, [2, 4, 4])[:, :, :3]
        return wr.space_to_batch_nd(t, [2], [[1, 1]])

    # ResizeBicubic takes float32 here: fed float32 values; it is linear, so a
    # large step loses nothing to truncation and little to rounding.
    bicubic = op == "bicubic"
    feed_type = np.float32 if bicubic else np.float64
    x0 = x0.astype(feed_type).astype(np.float64)
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32 if bicubic else wr.float64, x0.shape)
        loss = wr.reduce_sum(wr.cast(build(x), wr.float64) * w)
        (g,) = wr.gradients(loss, [x])
        with wr.Session() as sess:
            got = sess.run(g, {x: x0.astype(feed_type)})
            want = numeric_gradient(lambda v: sess.run(loss, {x: v.astype(feed_type)}), x0,
                                    eps=0.5 if bicubic else 1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-5 if bicubic else 1e-6,
                               atol=1e-5 if bicubic else 1e-8)


def test_erfc_softsign_and_space_batch_values():
    x = np.array([-3.0, -0.5, 0.0, 0.25, 4.0, 9.0])
    with wr.Graph().as_default():
        erfc, softsign = run([wr.math.erfc(x), wr.nn.softsign(x)])
    np.testing.assert_allclose(erfc, [math.erfc(v) for v in x], rtol=1e-15)
    assert erfc[-1] > 0  # 1 - erf(9) would be 0
    np.testing.assert_allclose(softsign, x / (1 + np.abs(x)), rtol=1e-15)
    image = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
    with wr.Graph().as_default():
        batched = wr.space_to_batch_nd(image, [2, 2], [[0, 0], [0, 0]])
        back = wr.batch_to_space_nd(batched, [2, 2], [[0, 0], [0, 0]])
        batched_v, back_v = run([batched, back])
    np.testing.assert_array_equal(batched_v[:, :, :, 0],
                                  [[[1, 3], [9, 11]], [[2, 4], [10, 12]], [[5, 7], [13, 15]],
                                   [[6, 8], [14, 16]]])
    np.testing.assert_array_equal(back_v, image)


def test_depth_space_and_band_part_values():
    x = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    # Reference: split rows and cols into blocks, move the block offsets next
    # to the channels.
    want = x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(2, 2, 3, 12)
    m = np.arange(1, 21, dtype=np.float64).reshape(4, 5)
    with wr.Graph().as_default():
        y = wr.nn.space_to_depth(x, 2)
        back = wr.nn.depth_to_space(y, 2)
        nchw = wr.nn.space_to_depth(np.transpose(x, (0, 3, 1, 2)), 2, data_format="NCHW")
        bands = [wr.linalg.band_part(m, lo, up) for lo, up in ((0, -1), (-1, 0), (1, 1))]
        y_v, back_v, nchw_v, *bands_v = run([y, back, nchw] + bands)
    np.testing.assert_array_equal(y_v, want)
    np.testing.assert_array_equal(back_v, x)
    np.testing.assert_array_equal(nchw_v, np.transpose(want, (0, 3, 1, 2)))
    np.testing.assert_array_equal(bands_v[0], np.triu(m))
    np.testing.assert_array_equal(bands_v[1], np.tril(m))
    np.testing.assert_array_equal(bands_v[2], np.triu(np.tril(m, 1), -1))


def test_resize_bicubic_matches_tensorflow_values():
    # TensorFlow 2.21: tf.raw_ops.ResizeBicubic of arange(12) ** 1.5 as a
    # [1, 3, 4, 1] image to [5, 3].
    image = (np.arange(12, dtype=np.float32) ** 1.5).reshape(1, 3, 4, 1)
    want = {
        (False, False): [0., 1.5547347, 4.5530233, 3.3132856, 6.4505086, 10.568184, 11.345628,
                         16.333559, 21.87608, 20.24249, 26.069494, 32.404312, 24.206661,
                         30.423534, 37.121758],
        (False, True): [-0.5276006, 0.99268353, 3.9509914, 2.3230274, 4.9818864, 8.773167,
                        8.324143, 12.898453, 18.122776, 18.263784, 24.023735, 30.298878,
                        24.189499, 30.518213, 37.327896],
    }
    with wr.Graph().as_default():
        outs = [wr.image.resize_bicubic(image, [5, 3], half_pixel_centers=hp)
                for _, hp in want]
        method = wr.image.resize(image, [5, 3], method=wr.image.ResizeMethod.BICUBIC)
        got = run(outs + [method])
    for value, expected in zip(got, want.values()):
        np.testing.assert_allclose(value.ravel(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[2].ravel(), want[(False, False)], rtol=1e-6, atol=1e-6)


def test_crop_and_resize_and_its_gradients():
    rng = np.random.RandomState(2)
    image = rng.rand(2, 4, 5, 3).astype(np.float32)
    boxes = np.array([[0.13, 0.21, 0.77, 0.93], [0.0, 0.0, 1.0, 1.0]], np.float32)
    with wr.Graph().as_default():
        x = wr.constant(image)
        b = wr.constant(boxes)
        crops = wr.image.crop_and_resize(x, b, box_indices=[1, 0], crop_size=[4, 5])
        loss = wr.reduce_sum(crops * rng.randn(2, 4, 5, 3).astype(np.float32))
        dx, db = wr.gradients(loss, [x, b])
        crops_v, dx_v, db_v = run([crops, dx, db])
    # The whole-image box with the image's own size gives the image back.
    np.testing.assert_allclose(crops_v[1], image[0], rtol=1e-6, atol=1e-6)
    assert dx_v.shape == image.shape and db_v.shape == boxes.shape
    assert np.abs(dx_v[0]).sum() > 0 and np.abs(db_v).sum() > 0


def test_trigonometry_and_ensure_shape():
    x = np.array([-0.9, -0.2, 0.3, 0.8])
    fns = {"tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
           "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "atanh": np.arctanh}
    with wr.Graph().as_default():
        got = run([getattr(wr.math, name)(x) for name in fns] + [wr.math.acosh(x + 2)])
        p = wr.placeholder(wr.float32, [None, 3])
        checked = wr.ensure_shape(p, [2, None])
        assert checked.shape.as_list() == [2, 3]
        with wr.Session() as sess:
            np.testing.assert_array_equal(sess.run(checked, {p: np.ones((2, 3))}), np.ones((2, 3)))
            with pytest.raises(wr.errors.InvalidArgumentError, match="not compatible"):
                sess.run(checked, {p: np.ones((4, 3))})
    for value, fn in zip(got, fns.values()):
        np.testing.assert_allclose(value, fn(x), rtol=1e-14)
    np.testing.assert_allclose(got[-1], np.arccosh(x + 2), rtol=1e-14)
