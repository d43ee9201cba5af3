"""wr.nn.conv3d / conv3d_transpose / max_pool3d / avg_pool3d and
wr.image.extract_patches against TensorFlow 2.21 (run from /opt/weir-peers in
a subprocess): values and gradients (weighted sums differentiated by
tf.GradientTape and by wr.gradients), strides, dilations, SAME and VALID;
a TF graph with Conv3D and pools exported by TF imports and runs; hostile
shapes and attrs raise errors."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON as PEER_PYTHON  # noqa: E402

CONV_CASES = [  # (strides, padding, dilations)
    ([1, 1, 1, 1, 1], "SAME", [1, 1, 1, 1, 1]),
    ([1, 2, 1, 2, 1], "VALID", [1, 1, 1, 1, 1]),
    ([1, 2, 2, 2, 1], "SAME", [1, 1, 1, 1, 1]),
    ([1, 1, 1, 1, 1], "VALID", [1, 1, 2, 1, 1]),
]
POOL_CASES = [  # (ksize, strides, padding)
    ([1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
    ([1, 3, 2, 3, 1], [1, 1, 2, 2, 1], "SAME"),
    ([1, 1, 3, 3, 1], [1, 1, 1, 1, 1], "SAME"),
]
PATCH_CASES = [  # (sizes, strides, rates, padding)
    ([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
    ([1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
    ([1, 2, 3, 1], [1, 1, 2, 1], [1, 2, 1, 1], "SAME"),
]

TF_SCRIPT = textwrap.dedent("""
    import sys, os
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
    for i, (s, p, dl) in enumerate(%(conv)r):
        out["conv_%%d" %% i], out["conv_dx_%%d" %% i], out["conv_df_%%d" %% i] = grads(
            lambda x, f: tf.nn.conv3d(x, f, s, p, dilations=dl), d["x"], d["f"])
    for i, (k, s, p) in enumerate(%(pool)r):
        out["max_%%d" %% i], out["max_dx_%%d" %% i] = grads(
            lambda x: tf.nn.max_pool3d(x, k, s, p), d["x"])
        out["avg_%%d" %% i], out["avg_dx_%%d" %% i] = grads(
            lambda x: tf.nn.avg_pool3d(x, k, s, p), d["x"])
    for i, (k, s, p) in enumerate(%(pool)r):
        y = tf.nn.max_pool3d(d["x"], k, s, p)
        out["max_gg_%%d" %% i] = tf.raw_ops.MaxPool3DGradGrad(
            orig_input=d["x"], orig_output=y, grad=d["x"] * 3 + 1, ksize=k, strides=s,
            padding=p).numpy()
    out["avg_same"] = tf.nn.avg_pool3d(d["x"], [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "SAME").numpy()
    out["transpose"] = tf.nn.conv3d_transpose(d["dy"], d["f"], [2, 4, 5, 6, 3], [1, 2, 1, 2, 1],
                                              "SAME").numpy()
    for i, (k, s, r, p) in enumerate(%(patch)r):
        out["patch_%%d" %% i], out["patch_dx_%%d" %% i] = grads(
            lambda x: tf.image.extract_patches(x, k, s, r, p), d["img"])
        out["patch_i32_%%d" %% i] = tf.image.extract_patches(d["img_i32"], k, s, r, p).numpy()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4, 5, 6, 3], name="x")
        y = tf.nn.conv3d(x, tf.constant(d["f"]), [1, 1, 1, 1, 1], "SAME")
        y = tf.nn.relu(tf.nn.max_pool3d(y, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"))
        tf.identity(tf.nn.avg_pool3d(y, [1, 1, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"), name="out")
        with tf.compat.v1.Session() as sess:
            out["graph"] = sess.run("out:0", {x: d["x"]})
    with open(sys.argv[3], "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    # A frozen Keras model with Conv3D and a grouped Conv2D (groups=2).
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    tf.keras.utils.set_random_seed(7)
    inp3 = tf.keras.Input((4, 5, 6, 3))
    y3 = tf.keras.layers.Conv3D(4, 2, padding="same", activation="relu")(inp3)
    y3 = tf.keras.layers.MaxPool3D(2, padding="same")(y3)
    inp2 = tf.keras.Input((6, 7, 4))
    y2 = tf.keras.layers.Conv2D(6, 3, groups=2, padding="same")(inp2)
    model = tf.keras.Model([inp3, inp2], [y3, y2])
    fn = tf.function(lambda a, b: model([a, b])).get_concrete_function(
        tf.TensorSpec([None, 4, 5, 6, 3], tf.float32), tf.TensorSpec([None, 6, 7, 4], tf.float32))
    frozen = convert_variables_to_constants_v2(fn)
    k3, k2 = frozen(tf.constant(d["x"]), tf.constant(d["img4"]))
    out["keras3d"], out["keras_grouped"] = k3.numpy(), k2.numpy()
    with open(sys.argv[3] + ".keras", "wb") as f:
        f.write(frozen.graph.as_graph_def().SerializeToString())
    with open(sys.argv[3] + ".names", "w") as f:
        f.write(" ".join(t.name for t in frozen.inputs + frozen.outputs))
    np.savez(sys.argv[2], **out)
""") % {"conv": CONV_CASES, "pool": POOL_CASES, "patch": PATCH_CASES}


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(scope="module")
def tf_reference(tmp_path_factory):
    if not os.path.exists(PEER_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEER_PYTHON)
    folder = tmp_path_factory.mktemp("tf_vision")
    r = np.random.default_rng(3)
    inputs = {"x": r.standard_normal((2, 4, 5, 6, 3)).astype(np.float32),
              "f": r.standard_normal((2, 3, 2, 3, 4)).astype(np.float32),
              "dy": r.standard_normal((2, 2, 5, 3, 4)).astype(np.float32),
              "img": r.standard_normal((2, 6, 7, 3)).astype(np.float32),
              "img4": r.standard_normal((2, 6, 7, 4)).astype(np.float32),
              "img_i32": r.integers(-100, 100, (2, 6, 7, 3)).astype(np.int32)}
    np.savez(folder / "in.npz", **inputs)
    (folder / "ref.py").write_text(TF_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEER_PYTHON, str(folder / "ref.py"), str(folder / "in.npz"),
                    str(folder / "out.npz"), str(folder / "graph.pb")], check=True, env=env,
                   timeout=300, stdout=subprocess.DEVNULL)
    return inputs, dict(np.load(folder / "out.npz")), folder


def with_grads(y, xs):
    shape = y.shape.as_list()
    w = np.reshape(np.arange(int(np.prod(shape))) % 7, shape).astype(np.float32)
    return [y] + wr.gradients(wr.reduce_sum(y * w), xs)


def close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=what)


def test_conv3d_values_and_gradients(tf_reference):
    inputs, ref, _ = tf_reference
    x, f = wr.constant(inputs["x"]), wr.constant(inputs["f"])
    fetches = [with_grads(wr.nn.conv3d(x, f, s, p, dilations=dl), [x, f])
               for s, p, dl in CONV_CASES]
    for i, (y, dx, df) in enumerate(run(fetches)):
        close(y, ref["conv_%d" % i], "conv %d" % i)
        close(dx, ref["conv_dx_%d" % i], "conv dx %d" % i)
        close(df, ref["conv_df_%d" % i], "conv df %d" % i)
    got = run(wr.nn.conv3d_transpose(inputs["dy"], inputs["f"], [2, 4, 5, 6, 3], [1, 2, 1, 2, 1],
                                     "SAME"))
    close(got, ref["transpose"], "conv3d_transpose")


def test_pool3d_values_and_gradients(tf_reference):
    inputs, ref, _ = tf_reference
    x = wr.constant(inputs["x"])
    fetches = [(with_grads(wr.nn.max_pool3d(x, k, s, p), [x]),
                with_grads(wr.nn.avg_pool3d(x, k, s, p), [x])) for k, s, p in POOL_CASES]
    for i, ((my, mdx), (ay, adx)) in enumerate(run(fetches)):
        close(my, ref["max_%d" % i], "max %d" % i)
        close(mdx, ref["max_dx_%d" % i], "max dx %d" % i)
        close(ay, ref["avg_%d" % i], "avg %d" % i)
        close(adx, ref["avg_dx_%d" % i], "avg dx %d" % i)
    # TF's CPU has no double AvgPool3D: weir's against TF's float one.
    got = run(wr.nn.avg_pool3d(inputs["x"].astype(np.float64), 2, 1, "SAME"))
    close(got, ref["avg_same"], "avg f64")


def test_max_pool3d_grad_grad_matches_tensorflow(tf_reference):
    inputs, ref, _ = tf_reference
    x = inputs["x"]
    fetches = []
    for k, s, p in POOL_CASES:
        y = wr.nn.max_pool3d(x, k, s, p)
        fetches.append(wr.raw_ops.MaxPool3DGradGrad(orig_input=x, orig_output=y, grad=x * 3 + 1,
                                                    ksize=k, strides=s, padding=p))
    for i, got in enumerate(run(fetches)):
        close(got, ref["max_gg_%d" % i], "MaxPool3DGradGrad %d" % i)


def test_extract_patches_values_and_gradients(tf_reference):
    inputs, ref, _ = tf_reference
    img = wr.constant(inputs["img"])
    fetches = [(with_grads(wr.image.extract_patches(img, k, s, r, p), [img]),
                wr.image.extract_image_patches(inputs["img_i32"], k, s, r, p))
               for k, s, r, p in PATCH_CASES]
    for i, ((y, dx), y32) in enumerate(run(fetches)):
        np.testing.assert_array_equal(y, ref["patch_%d" % i])
        close(dx, ref["patch_dx_%d" % i], "patch dx %d" % i)
        np.testing.assert_array_equal(y32, ref["patch_i32_%d" % i])


def test_tensorflow_conv3d_graph_imports_and_runs(tf_reference):
    inputs, ref, folder = tf_reference
    out, = wr.import_graph_def((folder / "graph.pb").read_bytes(), return_elements=["out:0"])
    x = wr.get_default_graph().get_tensor_by_name("import/x:0")
    close(run(out, {x: inputs["x"]}), ref["graph"], "imported graph")


def test_frozen_keras_conv3d_and_grouped_conv2d_import_and_run(tf_reference):
    inputs, ref, folder = tf_reference
    names = (folder / "graph.pb.names").read_text().split()
    outs = wr.import_graph_def((folder / "graph.pb.keras").read_bytes(), return_elements=names)
    a, b = outs[0], outs[1]
    got = run(list(outs[2:]), {a: inputs["x"], b: inputs["img4"]})
    by_rank = {g.ndim: g for g in got}
    close(by_rank[5], ref["keras3d"], "keras Conv3D")
    close(by_rank[4], ref["keras_grouped"], "keras grouped Conv2D")


def test_grouped_conv2d_matches_per_group_convolutions():
    r = np.random.default_rng(9)
    x = r.standard_normal((2, 5, 6, 6)).astype(np.float32)
    f = r.standard_normal((3, 3, 2, 6)).astype(np.float32)  # 3 groups of 2 -> 2
    grouped = wr.nn.conv2d(x, f, 1, "SAME")
    parts = [wr.nn.conv2d(x[..., 2 * g:2 * g + 2], f[..., 2 * g:2 * g + 2], 1, "SAME")
             for g in range(3)]
    got, want = run([grouped, wr.concat(parts, -1)])
    close(got, want, "grouped conv2d")
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        run(wr.nn.conv2d(x, f[..., :5], 1, "SAME"))  # 5 out channels, 3 groups


def test_hostile_shapes_and_attrs_raise():
    x = np.zeros((1, 3, 3, 3, 2), np.float32)
    f = np.zeros((2, 2, 2, 2, 1), np.float32)
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        run(wr.nn.conv3d(x, np.zeros((2, 2, 2, 3, 1), np.float32), 1, "SAME"))  # depth mismatch
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        run(wr.nn.conv3d(x, f, [2, 1, 1, 1, 1], "SAME"))  # batch stride
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        run(wr.nn.max_pool3d(x, [1, 5, 1, 1, 1], 1, "VALID"))  # window wider than the input
    with pytest.raises((ValueError, wr.errors.UnimplementedError, wr.errors.InvalidArgumentError)):
        run(wr.nn.conv3d(np.zeros((1, 2, 3, 3, 3), np.float32), f, 1, "SAME",
                         data_format="NCDHW"))
    sizes = wr.placeholder(wr.int32, [5])
    grad = wr.nn.conv3d_transpose(np.zeros((1, 3, 3, 3, 1), np.float32), f, sizes, 1, "SAME")
    for bad in ([1, 3, 3, 3, 3], [-1, 3, 3, 3, 2], [1, 2**31 - 1, 2**31 - 1, 2**31 - 1, 2]):
        with pytest.raises(wr.errors.InvalidArgumentError):
            run(grad, {sizes: bad})
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        run(wr.image.extract_patches(np.zeros((1, 4, 4, 1), np.float32), [1, 0, 2, 1],
                                     [1, 1, 1, 1], [1, 1, 1, 1], "VALID"))
    empty = run(wr.nn.conv3d(np.zeros((0, 3, 3, 3, 2), np.float32), f, 1, "SAME"))
    assert empty.shape == (0, 3, 3, 3, 1)


def test_layers_conv3d_and_pooling3d():
    r = np.random.default_rng(4)
    x = r.standard_normal((2, 4, 5, 6, 3)).astype(np.float32)
    inputs = wr.placeholder(wr.float32, [None, 4, 5, 6, 3])
    y = wr.layers.conv3d(inputs, 4, (2, 3, 3), strides=(1, 2, 1), padding="same",
                         activation=wr.nn.relu, name="c3")
    pooled = wr.layers.max_pooling3d(y, 2, 2, padding="same")
    averaged = wr.layers.average_pooling3d(y, (1, 2, 2), 1)
    assert y.shape.as_list() == [None, 4, 3, 6, 4]
    assert pooled.shape.as_list() == [None, 2, 2, 3, 4]
    assert averaged.shape.as_list() == [None, 4, 2, 5, 4]
    kernel = [v for v in wr.global_variables() if v.name == "c3/kernel:0"][0]
    bias = [v for v in wr.global_variables() if v.name == "c3/bias:0"][0]
    assert kernel.shape.as_list() == [2, 3, 3, 3, 4]
    want = wr.nn.relu(wr.nn.conv3d(inputs, kernel, [1, 1, 2, 1, 1], "SAME") + bias)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        got, expected, p, a = sess.run([y, want, pooled, averaged], {inputs: x})
    close(got, expected, "layers.conv3d")
    close(p, run_pool(expected, "max"), "layers.max_pooling3d")
    assert a.shape == (2, 4, 2, 5, 4)


def run_pool(x, kind):
    """2x2x2 SAME pooling with stride 2 in NumPy (max only)."""
    n, d, h, w, c = x.shape
    pad = np.full((n, d + d % 2, h + h % 2, w + w % 2, c), -np.inf, x.dtype)
    pad[:, :d, :h, :w] = x
    blocks = pad.reshape(n, pad.shape[1] // 2, 2, pad.shape[2] // 2, 2, pad.shape[3] // 2, 2, c)
    assert kind == "max"
    return blocks.max(axis=(2, 4, 6))
