"""wr.image resizing, wr.nn.depthwise_conv2d(_native) and NCHW convolution,
pooling and bias against TensorFlow 2.21 (run from /opt/weir-peers in a
subprocess): values and gradients, every align_corners / half_pixel_centers
combination TF allows, strides, dilations, explicit padding, channel
multipliers. TF's CPU kernels have no NCHW Conv2D / depthwise, so TF's NCHW
references are its NHWC results transposed."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON as PEER_PYTHON  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


RESIZE_ATTRS = [(False, False), (True, False), (False, True)]
RESIZE_SIZES = [(8, 4), (3, 10)]
# (strides, padding, dilations) of the depthwise / conv cases, NHWC order
# (TF's CPU depthwise backprops take equal row and col strides only).
CONV_CASES = [
    ([1, 1, 1, 1], "SAME", [1, 1, 1, 1]),
    ([1, 2, 2, 1], "SAME", [1, 1, 1, 1]),
    ([1, 2, 2, 1], "VALID", [1, 1, 1, 1]),
    ([1, 1, 1, 1], "SAME", [1, 2, 2, 1]),
    ([1, 2, 2, 1], [[0, 0], [1, 2], [0, 1], [0, 0]], [1, 1, 1, 1]),
]

TF_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorflow as tf
    d = dict(np.load(sys.argv[1]))
    out = {}
    def grads(fn, *args):
        args = [tf.constant(a) for a in args]
        with tf.GradientTape() as tape:
            for a in args:
                tape.watch(a)
            y = fn(*args)
            loss = tf.reduce_sum(tf.cast(y, tf.float64) * tf.cast(
                tf.reshape(tf.range(tf.size(y)) %% 7, tf.shape(y)), tf.float64))
        return [y.numpy()] + [g.numpy() for g in tape.gradient(loss, args)]
    ATTRS = %(attrs)r
    SIZES = %(sizes)r
    CASES = %(cases)r
    for i, (ac, hp) in enumerate(ATTRS):
        for j, size in enumerate(SIZES):
            k = "%%d_%%d" %% (i, j)
            r = grads(lambda x: tf.raw_ops.ResizeBilinear(
                images=x, size=size, align_corners=ac, half_pixel_centers=hp), d["img"])
            out["bl_" + k], out["bl_grad_" + k] = r
            r = grads(lambda x: tf.raw_ops.ResizeNearestNeighbor(
                images=x, size=size, align_corners=ac, half_pixel_centers=hp), d["img"])
            out["nn_" + k], out["nn_grad_" + k] = r
            out["bl_u8_" + k] = tf.raw_ops.ResizeBilinear(
                images=d["img_u8"], size=size, align_corners=ac, half_pixel_centers=hp).numpy()
            out["nn_i32_" + k] = tf.raw_ops.ResizeNearestNeighbor(
                images=d["img_i32"], size=size, align_corners=ac,
                half_pixel_centers=hp).numpy()
            out["bl_f16_" + k] = tf.raw_ops.ResizeBilinear(
                images=d["img"].astype(np.float16), size=size, align_corners=ac,
                half_pixel_centers=hp).numpy()
    out["v1_bilinear"] = tf.compat.v1.image.resize(d["img"][0], [6, 9]).numpy()
    out["v1_nearest"] = tf.compat.v1.image.resize(
        d["img_u8"][0], [6, 9], method=tf.compat.v1.image.ResizeMethod.NEAREST_NEIGHBOR).numpy()
    out["v1_aligned"] = tf.compat.v1.image.resize(d["img"], [6, 9], align_corners=True).numpy()
    for i, (strides, padding, dilations) in enumerate(CASES):
        if isinstance(padding, list):
            flat = [p for pair in padding for p in pair]
            dw = lambda x, f: tf.raw_ops.DepthwiseConv2dNative(
                input=x, filter=f, strides=strides, padding="EXPLICIT",
                explicit_paddings=flat)
            cv = lambda x, f: tf.nn.conv2d(x, f, strides, padding)
        else:
            dw = lambda x, f: tf.nn.depthwise_conv2d(x, f, strides, padding,
                                                     dilations=dilations[1:3])
            cv = lambda x, f: tf.nn.conv2d(x, f, strides, padding, dilations=dilations)
        out["dw_%%d" %% i], out["dw_dx_%%d" %% i], out["dw_df_%%d" %% i] = grads(
            dw, d["x"], d["dw"])
        out["cv_%%d" %% i], out["cv_dx_%%d" %% i], out["cv_df_%%d" %% i] = grads(
            cv, d["x"], d["w"])
    def net(x, f, b):
        y = tf.nn.conv2d(x, f, [1, 2, 1, 1], "SAME")
        y = tf.nn.bias_add(y, b)
        y = tf.nn.max_pool2d(tf.nn.relu(y), [2, 2], [1, 1], "VALID")
        return tf.nn.avg_pool2d(y, [2, 2], [2, 1], "SAME")
    out["net"], out["net_dx"], out["net_df"], out["net_db"] = grads(
        net, d["x"], d["w"], d["b"])
    np.savez(sys.argv[2], **out)
""") % {"attrs": RESIZE_ATTRS, "sizes": RESIZE_SIZES, "cases": CONV_CASES}


@pytest.fixture(scope="module")
def tf_reference(tmp_path_factory):
    if not os.path.exists(PEER_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEER_PYTHON)
    folder = tmp_path_factory.mktemp("tf_image")
    r = np.random.default_rng(5)
    inputs = {"img": r.standard_normal((2, 5, 7, 3)).astype(np.float32),
              "img_u8": r.integers(0, 256, (2, 5, 7, 3)).astype(np.uint8),
              "img_i32": r.integers(-1000, 1000, (2, 5, 7, 3)).astype(np.int32),
              "x": r.standard_normal((2, 9, 8, 3)).astype(np.float32),
              "dw": r.standard_normal((3, 2, 3, 2)).astype(np.float32),
              "w": r.standard_normal((3, 3, 3, 4)).astype(np.float32),
              "b": r.standard_normal(4).astype(np.float32)}
    np.savez(folder / "in.npz", **inputs)
    (folder / "ref.py").write_text(TF_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEER_PYTHON, str(folder / "ref.py"), str(folder / "in.npz"),
                    str(folder / "out.npz")], check=True, env=env, timeout=300,
                   stdout=subprocess.DEVNULL)
    return inputs, dict(np.load(folder / "out.npz"))


def weights_like(y):
    """The loss weights of the TF script: range(size) % 7, shaped like y."""
    shape = y.shape.as_list()
    return np.reshape(np.arange(int(np.prod(shape))) % 7, shape)


def with_grads(y, xs):
    w = wr.constant(weights_like(y).astype(y.dtype.as_numpy_dtype))
    return [y] + wr.gradients(wr.reduce_sum(y * w), xs)


def test_resize_matches_tensorflow(tf_reference):
    d, ref = tf_reference
    img = wr.constant(d["img"])
    fetches = {}
    for i, (ac, hp) in enumerate(RESIZE_ATTRS):
        for j, size in enumerate(RESIZE_SIZES):
            k = "%d_%d" % (i, j)
            fetches["bl_" + k], fetches["bl_grad_" + k] = with_grads(
                wr.image.resize_bilinear(img, size, align_corners=ac, half_pixel_centers=hp),
                [img])
            fetches["nn_" + k], fetches["nn_grad_" + k] = with_grads(
                wr.image.resize_nearest_neighbor(img, size, align_corners=ac,
                                                 half_pixel_centers=hp), [img])
            fetches["bl_u8_" + k] = wr.image.resize_bilinear(
                d["img_u8"], size, align_corners=ac, half_pixel_centers=hp)
            fetches["nn_i32_" + k] = wr.image.resize_nearest_neighbor(
                d["img_i32"], size, align_corners=ac, half_pixel_centers=hp)
            fetches["bl_f16_" + k] = wr.image.resize_bilinear(
                d["img"].astype(np.float16), size, align_corners=ac, half_pixel_centers=hp)
    got = run(fetches)
    for key, value in got.items():
        assert value.dtype == ref[key].dtype, key
        assert value.shape == ref[key].shape, key
        if key.startswith("nn_i32") or key.startswith("nn_") and "grad" not in key:
            np.testing.assert_array_equal(value, ref[key], err_msg=key)
        else:
            np.testing.assert_allclose(value, ref[key], rtol=1e-5, atol=1e-5, err_msg=key)


def test_v1_resize_matches_tensorflow(tf_reference):
    d, ref = tf_reference
    got = run({
        "v1_bilinear": wr.image.resize(d["img"][0], [6, 9]),
        "v1_nearest": wr.image.resize(d["img_u8"][0], [6, 9],
                                      method=wr.image.ResizeMethod.NEAREST_NEIGHBOR),
        "v1_aligned": wr.image.resize_images(d["img"], [6, 9], align_corners=True),
    })
    for key, value in got.items():
        assert value.dtype == ref[key].dtype and value.shape == ref[key].shape, key
        np.testing.assert_allclose(value, ref[key], rtol=1e-5, atol=1e-5, err_msg=key)
    same = wr.image.resize(wr.constant(d["img_u8"]), [5, 7])
    assert same.dtype == wr.uint8  # an unchanged size is returned as it is, as in TF1


def to_nchw(a):
    return np.transpose(a, [0, 3, 1, 2])


def nchw_list(v):
    return [v[0], v[3], v[1], v[2]]


def nchw_padding(p):
    return p if isinstance(p, str) else [p[0], p[3], p[1], p[2]]


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_depthwise_and_conv_match_tensorflow(tf_reference, data_format):
    d, ref = tf_reference
    nchw = data_format == "NCHW"
    x = wr.constant(to_nchw(d["x"]) if nchw else d["x"])
    dw, w = wr.constant(d["dw"]), wr.constant(d["w"])
    fetches = {}
    for i, (strides, padding, dilations) in enumerate(CONV_CASES):
        s = nchw_list(strides) if nchw else strides
        dl = nchw_list(dilations) if nchw else dilations
        p = nchw_padding(padding) if nchw else padding
        if i % 2:
            y = wr.nn.depthwise_conv2d_native(x, dw, s, p, data_format=data_format, dilations=dl)
        else:
            y = wr.nn.depthwise_conv2d(x, dw, s, p, data_format=data_format,
                                       rate=dilations[1:3])
        fetches["dw_%d" % i], fetches["dw_dx_%d" % i], fetches["dw_df_%d" % i] = with_grads(
            y, [x, dw])
        y = wr.nn.conv2d(x, w, s, p, data_format=data_format, dilations=dl)
        fetches["cv_%d" % i], fetches["cv_dx_%d" % i], fetches["cv_df_%d" % i] = with_grads(
            y, [x, w])
    got = run(fetches)
    for key, value in got.items():
        want = ref[key]
        if nchw and "_df_" not in key:
            want = to_nchw(want)
        # The TF losses weight elements in NHWC order; in NCHW the
        # weights differ, so only the forward values compare there.
        if nchw and ("_dx_" in key or "_df_" in key):
            continue
        assert value.shape == want.shape, key
        np.testing.assert_allclose(value, want, rtol=1e-4, atol=1e-4, err_msg=key)


def test_nchw_gradients_match_nhwc_tensorflow(tf_reference):
    """An NCHW conv / bias / relu / max pool / avg pool net: values and the
    gradients of all inputs equal TF's NHWC ones (loss weights transposed)."""
    d, ref = tf_reference
    x, w, b = wr.constant(to_nchw(d["x"])), wr.constant(d["w"]), wr.constant(d["b"])
    y = wr.nn.conv2d(x, w, [1, 1, 2, 1], "SAME", data_format="NCHW")
    y = wr.nn.bias_add(y, b, data_format="NCHW")
    y = wr.nn.max_pool2d(wr.nn.relu(y), [2, 2], [1, 1], "VALID", data_format="NCHW")
    y = wr.nn.avg_pool2d(y, [2, 2], [2, 1], "SAME", data_format="NCHW")
    nhwc_shape = ref["net"].shape
    weights = to_nchw(np.reshape(np.arange(int(np.prod(nhwc_shape))) % 7, nhwc_shape))
    gx, gw, gb = wr.gradients(wr.reduce_sum(y * weights.astype(np.float32)), [x, w, b])
    got = run({"net": y, "net_dx": gx, "net_df": gw, "net_db": gb})
    np.testing.assert_allclose(got["net"], to_nchw(ref["net"]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["net_dx"], to_nchw(ref["net_dx"]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["net_df"], ref["net_df"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["net_db"], ref["net_db"], rtol=1e-4, atol=1e-4)
    ops = {op.type for op in wr.get_default_graph().get_operations()}
    assert "Transpose" not in ops  # NCHW runs on the ops' own data_format


def test_channels_first_layers_match_channels_last():
    r = np.random.default_rng(3)
    x = r.standard_normal((2, 8, 7, 3)).astype(np.float32)
    kernel = r.standard_normal((3, 3, 3, 5)).astype(np.float32)
    bias = r.standard_normal(5).astype(np.float32)
    outs = {}
    for fmt in ["channels_last", "channels_first"]:
        with wr.variable_scope(fmt):
            inp = wr.constant(to_nchw(x) if fmt == "channels_first" else x)
            y = wr.layers.conv2d(inp, 5, 3, strides=(2, 1), padding="same", data_format=fmt,
                                 kernel_initializer=wr.constant_initializer(kernel),
                                 bias_initializer=wr.constant_initializer(bias),
                                 activation=wr.nn.relu)
            y = wr.layers.max_pooling2d(y, 2, 1, data_format=fmt)
            y = wr.layers.batch_normalization(y, axis=1 if fmt == "channels_first" else -1,
                                              training=True)
            outs[fmt] = (y, wr.gradients(wr.reduce_sum(y * y), inp)[0])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        got = sess.run(outs)
    last, first = got["channels_last"], got["channels_first"]
    ops = wr.get_default_graph().get_operations()
    formats = {op.get_attr("data_format") for op in ops if op.type == "FusedBatchNormV3"}
    assert formats == {b"NCHW", b"NHWC"} or formats == {"NCHW", "NHWC"}, formats
    np.testing.assert_allclose(first[0], to_nchw(last[0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(first[1], to_nchw(last[1]), rtol=1e-4, atol=1e-4)


def test_bad_inputs_raise_invalid_argument():
    img = wr.constant(np.zeros((1, 4, 4, 1), np.float32))
    with pytest.raises((wr.errors.InvalidArgumentError, ValueError), match="half_pixel_centers"):
        run(wr.image.resize_bilinear(img, [2, 2], align_corners=True, half_pixel_centers=True))
    size = wr.placeholder(wr.int32, [2])
    with pytest.raises(wr.errors.InvalidArgumentError, match="positive"):
        run(wr.image.resize_nearest_neighbor(img, size), {size: [0, 3]})
    x = wr.placeholder(wr.float32, [None, None, None, None])
    y = wr.nn.depthwise_conv2d_native(x, np.ones((3, 3, 2, 2), np.float32), [1, 1, 1, 1], "SAME")
    with pytest.raises(wr.errors.InvalidArgumentError, match="DepthwiseConv2dNative"):
        run(y, {x: np.zeros((1, 5, 5, 3), np.float32)})
