"""Float convolutions with 5x5 windows, stride 1 and 16+ channels in and out,
which Weir computes by Winograd's F(2x2, 5x5) (src/weir/kernels/
conv_winograd.h), against TensorFlow 2.21 run on the same inputs in its own
interpreter: every padding mode, both data formats, odd output sizes, with
and without the bias + relu that the session fuses into the convolution."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

PEER_PYTHON = os.environ.get("WEIR_PEERS_PYTHON", "/opt/weir-peers/bin/python")

# (input shape NHWC, out channels, padding); each with the 64 or more 2x2
# output tiles the path needs.
CASES = [
    ((2, 14, 14, 32), 64, "SAME"),  # the convnet's second layer (bench/saved_model_bench.py)
    ((3, 13, 11, 16), 17, "SAME"),  # partial 2x2 tiles, depths past a vector
    ((8, 9, 10, 20), 16, "VALID"),
    ((8, 7, 6, 16), 24, [[0, 0], [1, 3], [0, 2], [0, 0]]),
    ((64, 1, 1, 16), 16, "SAME"),  # one output, all but the center is padding
]

TF_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorflow as tf
    d = dict(np.load(sys.argv[1]))
    out = {}
    for i, (_, _, padding) in enumerate(%(cases)r):
        x, w, b = d["x%%d" %% i], d["w%%d" %% i], d["b%%d" %% i]
        y = tf.nn.conv2d(x, w, 1, padding)
        out["conv%%d" %% i] = y.numpy()
        out["fused%%d" %% i] = tf.nn.relu(tf.nn.bias_add(y, b)).numpy()
    np.savez(sys.argv[2], **out)
""")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    if not os.path.exists(PEER_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEER_PYTHON)
    folder = tmp_path_factory.mktemp("tf_winograd")
    r = np.random.default_rng(7)
    inputs = {}
    for i, (shape, out, _) in enumerate(CASES):
        inputs["x%d" % i] = r.standard_normal(shape).astype(np.float32)
        inputs["w%d" % i] = (r.standard_normal((5, 5, shape[3], out)) / 10).astype(np.float32)
        inputs["b%d" % i] = r.standard_normal(out).astype(np.float32)
    np.savez(folder / "in.npz", **inputs)
    (folder / "ref.py").write_text(TF_SCRIPT % {"cases": CASES})
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    subprocess.run([PEER_PYTHON, str(folder / "ref.py"), str(folder / "in.npz"),
                    str(folder / "out.npz")], check=True, env=env, timeout=300,
                   stdout=subprocess.DEVNULL)
    return inputs, dict(np.load(folder / "out.npz"))


def to_nchw(a):
    return np.transpose(a, [0, 3, 1, 2])


def exact(x, w, padding):
    """The convolution in double, and the sum of |terms| of each output."""
    if padding == "SAME":
        padding = [[0, 0], [2, 2], [2, 2], [0, 0]]
    elif padding == "VALID":
        padding = [[0, 0]] * 4
    xp = np.pad(x.astype(np.float64), padding)
    patches = np.lib.stride_tricks.sliding_window_view(xp, (5, 5), axis=(1, 2))
    w = w.astype(np.float64)
    return (np.einsum("nhwcij,ijco->nhwo", patches, w),
            np.einsum("nhwcij,ijco->nhwo", np.abs(patches), np.abs(w)))


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_winograd_shapes_match_tensorflow(reference, data_format):
    d, ref = reference
    nchw = data_format == "NCHW"
    fetches = {}
    with wr.Graph().as_default():
        for i, (_, _, padding) in enumerate(CASES):
            x = wr.constant(to_nchw(d["x%d" % i]) if nchw else d["x%d" % i])
            if nchw and not isinstance(padding, str):
                padding = [padding[0], padding[3], padding[1], padding[2]]
            y = wr.nn.conv2d(x, wr.constant(d["w%d" % i]), 1, padding, data_format=data_format)
            fetches["conv%d" % i] = y
            fetches["fused%d" % i] = wr.nn.relu(
                wr.nn.bias_add(y, wr.constant(d["b%d" % i]), data_format=data_format))
            if not nchw:  # conv + b: the session fuses the addition like BiasAdd
                fetches["added%d" % i] = wr.nn.relu(y + wr.constant(d["b%d" % i]))
        with wr.Session() as sess:
            got = sess.run(fetches)
    for i, (_, _, padding) in enumerate(CASES):
        want, scale = exact(d["x%d" % i], d["w%d" % i], padding)
        fused_want = np.maximum(want + d["b%d" % i], 0)
        outputs = [("conv%d" % i, got["conv%d" % i], want),
                   ("fused%d" % i, got["fused%d" % i], fused_want)]
        if not nchw:
            outputs.append(("fused%d" % i, got["added%d" % i], fused_want))
        for key, value, exact_value in outputs:
            tf_value = ref[key]
            if nchw:
                value = np.transpose(value, [0, 2, 3, 1])
            assert value.shape == tf_value.shape, key
            # TF's direct convolution and Weir's Winograd round differently.
            # Measured against the exact value, relative to the sum of
            # |terms| (400-800 terms here): TF's error is at most 2.1e-7,
            # Weir's 1.4e-6 (the transforms scale inputs by up to 5 before
            # the products are summed); the bounds leave 3x room.
            np.testing.assert_allclose(value, tf_value, rtol=1e-4, atol=1e-4, err_msg=key)
            assert np.all(np.abs(value - exact_value) <= 4e-6 * (scale + 1)), key
            tf_error = np.max(np.abs(tf_value - exact_value) / (scale + 1))
            weir_error = np.max(np.abs(value - exact_value) / (scale + 1))
            assert weir_error <= 20 * tf_error + 1e-7, (key, weir_error, tf_error)
