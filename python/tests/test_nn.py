"""weir.nn against numpy references (and TensorFlow 2.21 from /opt/weir-peers
for the padding rules of conv2d / pooling / conv2d_transpose and the
cross-entropies): values, static shapes, errors and a few gradients."""
import math
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


def rng(seed=0):
    return np.random.default_rng(seed)


# --- numpy references ---

def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def same_pads(size, k, s, d=1):
    k_eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + k_eff - size, 0)
    return out, total // 2, total - total // 2


def np_conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    sh, sw = strides
    dh, dw = dilations
    if padding == "SAME":
        oh, ph, _ = same_pads(h, kh, sh, dh)
        ow, pw, _ = same_pads(wd, kw, sw, dw)
    else:
        ph = pw = 0
        oh = (h - ((kh - 1) * dh + 1)) // sh + 1
        ow = (wd - ((kw - 1) * dw + 1)) // sw + 1
    out = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r = i * sh + a * dh - ph
                    q = j * sw + b * dw - pw
                    if 0 <= r < h and 0 <= q < wd:
                        out[:, i, j, :] += x[:, r, q, :] @ w[a, b]
    return out


def np_pool(x, k, s, padding, mode):
    n, h, wd, c = x.shape
    if padding == "SAME":
        oh, ph, _ = same_pads(h, k[0], s[0])
        ow, pw, _ = same_pads(wd, k[1], s[1])
    else:
        ph = pw = 0
        oh = (h - k[0]) // s[0] + 1
        ow = (wd - k[1]) // s[1] + 1
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, q0 = i * s[0] - ph, j * s[1] - pw
            window = x[:, max(r0, 0):min(r0 + k[0], h), max(q0, 0):min(q0 + k[1], wd), :]
            out[:, i, j, :] = window.max(axis=(1, 2)) if mode == "max" else \
                window.mean(axis=(1, 2))
    return out


# --- activations ---

def test_activations_against_numpy():
    x = np.array([[-7.5, -2.0, -0.5, 0.0], [0.25, 1.5, 6.5, 30.0]], np.float32)
    t = wr.constant(x)
    nn = wr.nn
    got = run({
        "relu": nn.relu(t), "relu6": nn.relu6(t), "elu": nn.elu(t), "selu": nn.selu(t),
        "softplus": nn.softplus(t), "leaky": nn.leaky_relu(t), "leaky2": nn.leaky_relu(t, 2.0),
        "softsign": nn.softsign(t), "swish": nn.swish(t), "sigmoid": nn.sigmoid(t),
        "tanh": nn.tanh(t), "crelu": nn.crelu(t), "gelu": nn.gelu(t),
        "gelu_tanh": nn.gelu(t, approximate=True),
    })
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    expected = {
        "relu": np.maximum(x, 0), "relu6": np.clip(x, 0, 6),
        "elu": np.where(x >= 0, x, np.expm1(x)),
        "selu": scale * np.where(x >= 0, x, alpha * np.expm1(x)),
        "softplus": np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0),
        "leaky": np.where(x >= 0, x, 0.2 * x), "leaky2": np.where(x >= 0, x, 2.0 * x),
        "softsign": x / (1 + np.abs(x)), "swish": x * np_sigmoid(x), "sigmoid": np_sigmoid(x),
        "tanh": np.tanh(x), "crelu": np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1),
        "gelu": 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2))),
        "gelu_tanh": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    }
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    assert nn.crelu(t).shape.as_list() == [2, 8]


def test_activation_op_names():
    t = wr.constant([1.0, -1.0])
    assert wr.nn.relu(t).op.type == "Relu"
    assert wr.nn.relu(t, name="act").op.name == "act"
    with wr.name_scope("block"):
        assert wr.nn.leaky_relu(t).op.name == "block/LeakyRelu"


def test_softmax_and_log_softmax_axes():
    x = rng().standard_normal((2, 3, 4)).astype(np.float32)
    t = wr.constant(x)
    got = run([wr.nn.softmax(t), wr.nn.softmax(t, axis=1), wr.nn.softmax(t, dim=0),
               wr.nn.log_softmax(t), wr.nn.log_softmax(t, axis=0)])
    np.testing.assert_allclose(got[0], np_softmax(x, -1), rtol=1e-5)
    np.testing.assert_allclose(got[1], np_softmax(x, 1), rtol=1e-5)
    np.testing.assert_allclose(got[2], np_softmax(x, 0), rtol=1e-5)
    np.testing.assert_allclose(got[3], np_log_softmax(x, -1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[4], np_log_softmax(x, 0), rtol=1e-5, atol=1e-6)
    assert wr.nn.softmax(t, axis=1).shape.as_list() == [2, 3, 4]
    with pytest.raises(ValueError):
        wr.nn.softmax(t, axis=3)


def test_bias_add_formats():
    x = rng().standard_normal((2, 3, 4, 5)).astype(np.float32)
    b5 = np.arange(5, dtype=np.float32)
    b3 = np.arange(3, dtype=np.float32)
    got = run([wr.nn.bias_add(x, b5), wr.nn.bias_add(x, b3, data_format="NCHW")])
    np.testing.assert_allclose(got[0], x + b5, rtol=1e-6)
    np.testing.assert_allclose(got[1], x + b3[None, :, None, None], rtol=1e-6)
    with pytest.raises(wr.errors.InvalidArgumentError):
        wr.nn.bias_add(x, b3)  # the shape function names the mismatch
    with pytest.raises(ValueError):
        wr.nn.bias_add(x, b5, data_format="HWCN")


# --- convolution and pooling ---

@pytest.mark.parametrize("strides,padding,dilations", [
    ((1, 1), "VALID", (1, 1)), ((2, 2), "SAME", (1, 1)), ((1, 2), "SAME", (1, 1)),
    ((1, 1), "SAME", (2, 2)), ((2, 1), "VALID", (1, 1)),
])
def test_conv2d_against_numpy(strides, padding, dilations):
    x = rng(1).standard_normal((2, 7, 6, 3)).astype(np.float32)
    w = rng(2).standard_normal((3, 2, 3, 4)).astype(np.float32)
    y = wr.nn.conv2d(x, w, strides=[1, strides[0], strides[1], 1], padding=padding,
                     dilations=[1, dilations[0], dilations[1], 1])
    expected = np_conv2d(x.astype(np.float64), w.astype(np.float64), strides, padding, dilations)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(y), expected, rtol=1e-4, atol=1e-4)


def test_conv2d_argument_forms():
    x = rng(1).standard_normal((1, 5, 5, 2)).astype(np.float32)
    w = rng(2).standard_normal((3, 3, 2, 1)).astype(np.float32)
    expected = np_conv2d(x, w, (2, 2), "SAME")
    # strides as an int, a pair, and TF2's `filters` keyword.
    got = run([wr.nn.conv2d(x, w, 2, "SAME"), wr.nn.conv2d(input=x, filters=w, strides=[2, 2],
                                                             padding="SAME")])
    for value in got:
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-5)
    explicit = wr.nn.conv2d(x, w, [1, 1, 1, 1], [[0, 0], [1, 1], [2, 0], [0, 0]])
    padded = np.pad(x, [(0, 0), (1, 1), (2, 0), (0, 0)])
    np.testing.assert_allclose(run(explicit), np_conv2d(padded, w), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        wr.nn.conv2d(x, w, [1, 1, 1], "SAME")


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_pools_against_numpy(padding):
    x = rng(3).standard_normal((2, 7, 5, 3)).astype(np.float32)
    got = run([wr.nn.max_pool(x, [1, 3, 2, 1], [1, 2, 2, 1], padding),
               wr.nn.avg_pool(x, 3, 2, padding), wr.nn.max_pool2d(x, 2, 1, padding)])
    np.testing.assert_allclose(got[0], np_pool(x, (3, 2), (2, 2), padding, "max"), rtol=1e-6)
    np.testing.assert_allclose(got[1], np_pool(x, (3, 3), (2, 2), padding, "avg"), rtol=1e-5)
    np.testing.assert_allclose(got[2], np_pool(x, (2, 2), (1, 1), padding, "max"), rtol=1e-6)


def test_conv2d_transpose_is_the_adjoint_of_conv2d():
    # <conv2d(x, w), y> == <x, conv2d_transpose(y, w)> for every x, y.
    x = rng(4).standard_normal((2, 7, 7, 3))
    w = rng(5).standard_normal((3, 3, 3, 4))
    y = rng(6).standard_normal((2, 4, 4, 4))
    forward = wr.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
    backward = wr.nn.conv2d_transpose(y, w, output_shape=[2, 7, 7, 3], strides=[1, 2, 2, 1],
                                      padding="SAME")
    assert backward.shape.as_list() == [2, 7, 7, 3]
    fx, by = run([forward, backward])
    assert fx.shape == y.shape
    np.testing.assert_allclose(np.sum(fx * y), np.sum(x * by), rtol=1e-9)


def test_conv1d_pool1d_atrous_against_numpy():
    x = rng(21).standard_normal((2, 9, 3)).astype(np.float32)
    w = rng(22).standard_normal((3, 3, 4)).astype(np.float32)
    w2 = rng(23).standard_normal((2, 2, 3, 2)).astype(np.float32)
    img = rng(24).standard_normal((1, 7, 7, 3)).astype(np.float32)
    c1 = wr.nn.conv1d(x, w, stride=2, padding="SAME")
    c1d = wr.nn.conv1d(x, w, 1, "VALID", dilations=2)
    got = run([c1, c1d, wr.nn.max_pool1d(x, 3, 2, "VALID"), wr.nn.avg_pool1d(x, 2, 2, "SAME"),
               wr.nn.atrous_conv2d(img, w2, 2, "VALID")])
    as_2d = x[:, None]
    np.testing.assert_allclose(got[0], np_conv2d(as_2d, w[None], (1, 2), "SAME")[:, 0],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], np_conv2d(as_2d, w[None], dilations=(1, 2))[:, 0],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], np_pool(as_2d, (1, 3), (1, 2), "VALID", "max")[:, 0])
    np.testing.assert_allclose(got[3], np_pool(as_2d, (1, 2), (1, 2), "SAME", "avg")[:, 0],
                               rtol=1e-6)
    np.testing.assert_allclose(got[4], np_conv2d(img, w2, dilations=(2, 2)), rtol=1e-4,
                               atol=1e-5)
    assert c1.shape.as_list() == [2, 5, 4]
    with pytest.raises(ValueError, match="NWC"):
        wr.nn.conv1d(x, w, 1, "SAME", data_format="NCW")


# --- dropout ---

def test_dropout_scaling_and_statistics():
    x = np.ones((200, 100), np.float32)
    y = wr.nn.dropout(x, keep_prob=0.75, seed=3)
    z = wr.nn.dropout(x, rate=0.5, seed=4)
    a, b = run([y, z])
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((a != 0).mean() - 0.75) < 0.02
    assert set(np.unique(b)) == {0.0, 2.0}
    assert abs((b != 0).mean() - 0.5) < 0.02
    assert abs(b.mean() - 1.0) < 0.04  # the expectation is preserved
    assert y.shape.as_list() == [200, 100]


def test_dropout_keep_all_returns_x_and_noise_shape_broadcasts():
    x = wr.constant(np.arange(12, dtype=np.float32).reshape(3, 4) + 1)
    assert wr.nn.dropout(x, keep_prob=1.0) is x
    assert wr.nn.dropout(x, rate=0.0) is x
    rows = wr.nn.dropout(wr.ones([400, 6]), rate=0.5, noise_shape=[400, 1], seed=7)
    value = run(rows)
    # one keep/drop decision per row
    assert np.all((value == 0).all(axis=1) | (value == 2).all(axis=1))
    assert 0.35 < (value[:, 0] != 0).mean() < 0.65


def test_dropout_with_a_fed_keep_prob():
    keep = wr.placeholder(wr.float32, [])
    y = wr.nn.dropout(wr.ones([1000]), keep_prob=keep, seed=11)
    with wr.Session() as sess:
        full = sess.run(y, {keep: 1.0})
        half = sess.run(y, {keep: 0.5})
    np.testing.assert_array_equal(full, np.ones(1000))
    assert set(np.unique(half)) == {0.0, 2.0}


def test_dropout_with_a_fed_rate():
    rate = wr.placeholder(wr.float32, [])
    y = wr.nn.dropout(wr.ones([2000]), rate=rate, seed=12)
    with wr.Session() as sess:
        quarter = sess.run(y, {rate: 0.25})
    assert set(np.unique(quarter)) == {0.0, np.float32(1 / 0.75)}
    assert abs((quarter == 0).mean() - 0.25) < 0.04


def test_losses_of_unknown_rank_logits():
    logits = wr.placeholder(wr.float32)  # no static shape at all
    labels = wr.placeholder(wr.int32, [None])
    dense_labels = wr.placeholder(wr.float32, [None, 3])
    sparse = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    dense = wr.nn.softmax_cross_entropy_with_logits_v2(labels=dense_labels, logits=logits)
    values = rng(20).standard_normal((4, 3)).astype(np.float32)
    targets = np.array([0, 2, 1, 1], np.int32)
    got = run([sparse, dense], {logits: values, labels: targets,
                                dense_labels: np.eye(3, dtype=np.float32)[targets]})
    expected = -np_log_softmax(values)[np.arange(4), targets]
    np.testing.assert_allclose(got[0], expected, rtol=1e-5)
    np.testing.assert_allclose(got[1], expected, rtol=1e-5)


def test_dropout_errors():
    x = wr.constant([1.0, 2.0])
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="keep_prob"):
            wr.nn.dropout(x, keep_prob=bad)
    with pytest.raises(ValueError, match="rate"):
        wr.nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError):
        wr.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="floating point"):
        wr.nn.dropout(wr.constant([1, 2]), keep_prob=0.5)


def test_dropout_seeded_is_deterministic_across_sessions():
    wr.set_random_seed(5)
    y = wr.nn.dropout(wr.ones([50]), rate=0.5)
    with wr.Session() as s1:
        first = s1.run(y)
    with wr.Session() as s2:
        second = s2.run(y)
    np.testing.assert_array_equal(first, second)


# --- losses ---

def test_l2_loss_and_zero_fraction():
    x = np.array([[1.0, -2.0], [0.0, 3.0]], np.float32)
    loss, fraction = run([wr.nn.l2_loss(x), wr.nn.zero_fraction(x)])
    assert loss == pytest.approx(7.0)
    assert fraction == pytest.approx(0.25)


def test_softmax_cross_entropy_against_numpy():
    logits = rng(7).standard_normal((4, 5)).astype(np.float32)
    labels = np_softmax(rng(8).standard_normal((4, 5))).astype(np.float32)
    expected = -(labels * np_log_softmax(logits)).sum(-1)
    v1 = wr.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    got = run([v1, v2])
    np.testing.assert_allclose(got[0], expected, rtol=1e-5)
    np.testing.assert_allclose(got[1], expected, rtol=1e-5)
    assert v1.shape.as_list() == [4]
    with pytest.raises(ValueError, match="named arguments"):
        wr.nn.softmax_cross_entropy_with_logits(labels, logits)


def test_softmax_cross_entropy_other_ranks_and_axis():
    logits = rng(9).standard_normal((2, 3, 4)).astype(np.float32)
    labels = np_softmax(rng(10).standard_normal((2, 3, 4))).astype(np.float32)
    last = wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    first = wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0)
    vector = wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels[0, 0], logits=logits[0, 0])
    got = run([last, first, vector])
    np.testing.assert_allclose(got[0], -(labels * np_log_softmax(logits, -1)).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(got[1], -(labels * np_log_softmax(logits, 0)).sum(0), rtol=1e-5)
    np.testing.assert_allclose(got[2], -(labels[0, 0] * np_log_softmax(logits[0, 0])).sum(),
                               rtol=1e-5)
    assert last.shape.as_list() == [2, 3]
    assert first.shape.as_list() == [3, 4]
    assert got[2].shape == ()


def test_softmax_cross_entropy_label_gradient_v1_vs_v2():
    logits = wr.constant(rng(11).standard_normal((3, 4)).astype(np.float32))
    labels = wr.constant(np_softmax(rng(12).standard_normal((3, 4))).astype(np.float32))
    v1 = wr.reduce_sum(wr.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    v2 = wr.reduce_sum(wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
    assert wr.gradients(v1, [labels])[0] is None
    g_logits, g_labels = wr.gradients(v2, [logits, labels])
    got_logits, got_labels, lv, lb = run([g_logits, g_labels, logits, labels])
    np.testing.assert_allclose(got_logits, np_softmax(lv) - lb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_labels, -np_log_softmax(lv), rtol=1e-5, atol=1e-6)


def test_sparse_softmax_cross_entropy():
    logits = rng(13).standard_normal((2, 3, 5)).astype(np.float32)
    labels = np.array([[0, 4, 2], [1, 1, 3]], np.int64)
    expected = -np.take_along_axis(np_log_softmax(logits), labels[..., None], -1)[..., 0]
    loss3 = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    loss2 = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[0].astype(np.int32),
                                                           logits=logits[0])
    got = run([loss3, loss2])
    np.testing.assert_allclose(got[0], expected, rtol=1e-5)
    np.testing.assert_allclose(got[1], expected[0], rtol=1e-5)
    assert loss3.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="Rank mismatch"):
        wr.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits[0])
    bad = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([0, 7]),
                                                         logits=logits[0, :2])
    with pytest.raises(wr.errors.InvalidArgumentError):
        run(bad)


def test_sigmoid_and_weighted_cross_entropy():
    x = np.array([-100.0, -3.0, -0.5, 0.0, 0.5, 3.0, 100.0], np.float32)
    z = np.array([0.0, 1.0, 0.3, 0.5, 1.0, 0.0, 1.0], np.float32)
    q = 2.5
    sig = wr.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    weighted = wr.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=q)
    old_name = wr.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=q)
    got = run([sig, weighted, old_name])
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    log_sig = -np.logaddexp(0, -xd)       # log(sigmoid(x)) without overflow
    log_one_minus = -np.logaddexp(0, xd)  # log(1 - sigmoid(x))
    np.testing.assert_allclose(got[0], -zd * log_sig - (1 - zd) * log_one_minus, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(got[1], -q * zd * log_sig - (1 - zd) * log_one_minus, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(got[2], got[1])
    assert np.all(np.isfinite(got[0]))
    with pytest.raises(ValueError, match="same shape"):
        wr.nn.sigmoid_cross_entropy_with_logits(labels=z[:3], logits=x)


def test_sigmoid_cross_entropy_gradient_is_sigmoid_minus_labels():
    x = wr.constant(np.array([-2.0, 0.0, 0.0, 1.5], np.float32))
    z = np.array([1.0, 0.0, 1.0, 0.25], np.float32)
    loss = wr.reduce_sum(wr.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x))
    grad = run(wr.gradients(loss, [x])[0])
    np.testing.assert_allclose(grad, np_sigmoid(np.array([-2.0, 0.0, 0.0, 1.5])) - z, rtol=1e-5)


def _check_gradient(fn, x0, seed=0, eps=1e-6):
    """d/dx of sum(fn(x) * r) from wr.gradients against central differences (float64)."""
    x = wr.placeholder(wr.float64, x0.shape)
    y = fn(x)
    r = rng(seed).standard_normal([d if d is not None else 1 for d in y.shape.as_list()])
    loss = wr.reduce_sum(y * r)
    grad = wr.gradients(loss, [x])[0]
    with wr.Session() as sess:
        analytic = sess.run(grad, {x: x0})
        numeric = np.zeros_like(x0)
        for i in range(x0.size):
            step = np.zeros(x0.size)
            step[i] = eps
            step = step.reshape(x0.shape)
            numeric.flat[i] = (sess.run(loss, {x: x0 + step}) -
                               sess.run(loss, {x: x0 - step})) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name,fn", [
    ("leaky_relu", lambda x: wr.nn.leaky_relu(x, 0.3)),
    ("softsign", wr.nn.softsign),
    ("depthwise_conv2d", lambda x: wr.nn.depthwise_conv2d(
        wr.reshape(x, [1, 1, 2, 3]), np.arange(12.0).reshape(1, 2, 3, 2) / 10, 1, "SAME")),
    ("swish", wr.nn.swish),
    ("gelu", wr.nn.gelu),
    ("softmax_axis0", lambda x: wr.nn.softmax(x, axis=0)),
    ("log_softmax", wr.nn.log_softmax),
    ("l2_normalize", lambda x: wr.nn.l2_normalize(x, axis=1)),
    ("sigmoid_xent", lambda x: wr.nn.sigmoid_cross_entropy_with_logits(
        labels=np.array([[0.0, 1.0, 0.5], [1.0, 0.2, 0.0]]), logits=x)),
    ("weighted_xent", lambda x: wr.nn.weighted_cross_entropy_with_logits(
        labels=np.array([[0.0, 1.0, 0.5], [1.0, 0.2, 0.0]]), logits=x, pos_weight=2.0)),
    ("softmax_xent_axis0", lambda x: wr.nn.softmax_cross_entropy_with_logits_v2(
        labels=np.array([[0.3, 0.5, 0.1], [0.7, 0.5, 0.9]]), logits=x, axis=0)),
    ("moments_variance", lambda x: wr.nn.moments(x, [0])[1]),
    ("batch_normalization", lambda x: wr.nn.batch_normalization(
        x, *wr.nn.moments(x, [0]), np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5]), 1e-3)),
])
def test_gradients_of_composed_functions(name, fn):
    x0 = np.array([[0.3, -1.2, 2.0], [-0.4, 0.8, 1.1]])
    _check_gradient(fn, x0)


# --- statistics and normalization ---

def test_moments():
    x = rng(14).standard_normal((3, 4, 5)).astype(np.float32)
    mean, variance = wr.nn.moments(wr.constant(x), axes=[0, 2])
    kmean, kvar = wr.nn.moments(wr.constant(x), axes=[1], keep_dims=True)
    got = run([mean, variance, kmean, kvar])
    np.testing.assert_allclose(got[0], x.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], x.var(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(got[2], x.mean(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], x.var(axis=1, keepdims=True), rtol=1e-5)
    assert mean.shape.as_list() == [4]
    assert kvar.shape.as_list() == [3, 1, 5]


def test_weighted_and_normalized_moments():
    x = rng(25).standard_normal((4, 3)).astype(np.float32)
    weights = np.array([[1.0], [2.0], [0.0], [3.0]], np.float32)
    mean, var = wr.nn.weighted_moments(x, [0], weights)
    zero_mean, _ = wr.nn.weighted_moments(x, [0], np.zeros((4, 1), np.float32))
    counts = np.float32(4)
    shift = np.float32(0.5)
    n_mean, n_var = wr.nn.normalize_moments(counts, (x - shift).sum(0), ((x - shift) ** 2).sum(0),
                                            shift)
    got = run([mean, var, zero_mean, n_mean, n_var])
    w = np.broadcast_to(weights, x.shape)
    expected_mean = (w * x).sum(0) / w.sum(0)
    np.testing.assert_allclose(got[0], expected_mean, rtol=1e-5)
    np.testing.assert_allclose(got[1], (w * (x - expected_mean) ** 2).sum(0) / w.sum(0),
                               rtol=1e-5)
    np.testing.assert_array_equal(got[2], np.zeros(3))  # div_no_nan: no weight, no NaN
    np.testing.assert_allclose(got[3], x.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[4], x.var(0), rtol=1e-4, atol=1e-6)


def test_batch_normalization_and_fused():
    x = rng(15).standard_normal((4, 3, 3, 2)).astype(np.float32) * 3 + 1
    scale = np.array([0.5, 2.0], np.float32)
    offset = np.array([1.0, -1.0], np.float32)
    mean = x.mean(axis=(0, 1, 2))
    var = x.var(axis=(0, 1, 2))
    bn = wr.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    bare = wr.nn.batch_normalization(x, mean, var, None, None, 1e-3)
    y, batch_mean, batch_var = wr.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)
    y_inf, _, _ = wr.nn.fused_batch_norm(x, scale, offset, mean=mean, variance=var + 1.0,
                                         epsilon=1e-3, is_training=False)
    got = run([bn, bare, y, batch_mean, batch_var, y_inf])
    normalized = (x - mean) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(got[0], normalized * scale + offset, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], normalized, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], normalized * scale + offset, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[3], mean, rtol=1e-5, atol=1e-6)
    n = x.size // 2
    np.testing.assert_allclose(got[4], var * n / (n - 1), rtol=1e-4)  # unbiased, as TF
    np.testing.assert_allclose(got[5], (x - mean) / np.sqrt(var + 1.0 + 1e-3) * scale + offset,
                               rtol=1e-4, atol=1e-5)


def test_local_response_normalization():
    x = rng(26).standard_normal((2, 3, 3, 7)).astype(np.float32)
    got = run([wr.nn.lrn(x, depth_radius=2, bias=2.0, alpha=0.5, beta=0.75),
               wr.nn.local_response_normalization(x)])
    for value, (r, bias, alpha, beta) in zip(got, [(2, 2.0, 0.5, 0.75), (5, 1.0, 1.0, 0.5)]):
        sq = np.pad(x ** 2, [(0, 0)] * 3 + [(r, r)])
        window = sum(sq[..., i:i + 7] for i in range(2 * r + 1))
        np.testing.assert_allclose(value, x / (bias + alpha * window) ** beta, rtol=1e-5)
    _check_gradient(lambda t: wr.nn.lrn(t, 1, 1.0, 0.3, 0.75),
                    rng(27).standard_normal((1, 1, 2, 4)))


def test_l2_normalize():
    x = rng(16).standard_normal((3, 4)).astype(np.float32)
    got = run([wr.nn.l2_normalize(x, axis=1), wr.nn.l2_normalize(x, dim=0),
               wr.nn.l2_normalize(x), wr.nn.l2_normalize(np.zeros(3, np.float32), 0)])
    np.testing.assert_allclose(got[0], x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(got[1], x / np.linalg.norm(x, axis=0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(got[2], x / np.linalg.norm(x), rtol=1e-5)
    np.testing.assert_array_equal(got[3], np.zeros(3))


# --- embeddings and metrics ---

def test_embedding_lookup_single_and_sharded():
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    ids = np.array([[3, 0], [9, 3], [5, 6]], np.int32)
    single = wr.nn.embedding_lookup(table, ids)
    # "mod": row i in shard i % 3 at i // 3; "div": contiguous blocks of 4, 3, 3.
    mod_shards = [table[i::3] for i in range(3)]
    div_shards = [table[0:4], table[4:7], table[7:10]]
    mod = wr.nn.embedding_lookup([wr.constant(s) for s in mod_shards], ids)
    div = wr.nn.embedding_lookup([wr.constant(s) for s in div_shards], ids,
                                 partition_strategy="div")
    clipped = wr.nn.embedding_lookup(table, np.array([1, 9]), max_norm=10.0)
    got = run([single, mod, div, clipped])
    assert single.shape.as_list() == [3, 2, 4]
    for value in got[:3]:
        np.testing.assert_array_equal(value, table[ids])
    rows = table[[1, 9]]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.testing.assert_allclose(got[3], rows * np.minimum(1.0, 10.0 / norms), rtol=1e-5)


def test_top_k():
    x = np.array([[3.0, 1.0, 3.0, 7.0, -np.inf], [0.5, 0.25, 2.0, 2.0, 1.0]], np.float32)
    values, indices = wr.nn.top_k(x, 3)
    result = wr.nn.top_k(x, k=1)
    got = run([values, indices, result.values, result.indices])
    np.testing.assert_array_equal(got[0], [[7, 3, 3], [2, 2, 1]])
    np.testing.assert_array_equal(got[1], [[3, 0, 2], [2, 3, 4]])  # ties in index order
    np.testing.assert_array_equal(got[2], [[7], [2]])
    assert values.shape.as_list() == [2, 3] and indices.dtype == wr.int32
    ints = run(wr.nn.top_k(np.array([4, 9, 1, 9]), 2))
    np.testing.assert_array_equal(ints[0], [9, 9])
    np.testing.assert_array_equal(ints[1], [1, 3])
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError), match="at least k = 6"):
        wr.nn.top_k(x, 6)  # the shape function's error, at graph construction as in TF
    # the gradient of the values goes to the picked entries
    t = wr.constant(np.array([[1.0, 5.0, 2.0, 4.0]]))
    grad = run(wr.gradients(wr.reduce_sum(wr.nn.top_k(t, 2).values * [[10.0, 1.0]]), [t])[0])
    np.testing.assert_array_equal(grad, [[0, 10, 0, 1]])


def test_in_top_k():
    predictions = np.array([[0.1, 0.8, 0.3, 0.5], [0.9, 0.2, 0.2, 0.1], [0.4, 0.4, 0.1, 0.0]],
                           np.float32)
    targets = np.array([3, 2, 1], np.int32)
    got = run([wr.nn.in_top_k(predictions, targets, 1), wr.nn.in_top_k(predictions, targets, 2)])
    np.testing.assert_array_equal(got[0], [False, False, True])  # ties count as in
    np.testing.assert_array_equal(got[1], [True, True, True])


# --- TensorFlow as the reference for padding rules and losses ---

TF_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorflow as tf
    d = dict(np.load(sys.argv[1]))
    out = {}
    x, w = d["x"], d["w"]
    out["conv_same_s2"] = tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME").numpy()
    out["conv_same_s3"] = tf.nn.conv2d(x, w, [1, 3, 1, 1], "SAME").numpy()
    out["conv_dilated"] = tf.nn.conv2d(x, w, 1, "SAME", dilations=2).numpy()
    out["max_same"] = tf.nn.max_pool2d(x, [3, 2], [2, 3], "SAME").numpy()
    out["avg_same"] = tf.nn.avg_pool2d(x, 3, 2, "SAME").numpy()
    out["deconv"] = tf.nn.conv2d_transpose(d["y"], w, [2, 9, 8, 3], [1, 2, 2, 1], "SAME").numpy()
    out["sig"] = tf.nn.sigmoid_cross_entropy_with_logits(labels=d["z"], logits=d["l"]).numpy()
    out["wce"] = tf.nn.weighted_cross_entropy_with_logits(labels=d["z"], logits=d["l"],
                                                          pos_weight=3.0).numpy()
    out["lrelu"] = tf.nn.leaky_relu(d["l"], 0.3).numpy()
    out["lrn"] = tf.nn.lrn(x, 2, 2.0, 0.5, 0.75).numpy()
    out["depthwise"] = tf.nn.depthwise_conv2d(x, d["dw"], [1, 2, 2, 1], "SAME").numpy()
    out["separable"] = tf.nn.separable_conv2d(x, d["dw"], d["pw"], [1, 1, 1, 1], "VALID",
                                              dilations=[2, 2]).numpy()
    out["topk_values"], out["topk_indices"] = [t.numpy() for t in tf.nn.top_k(x, 3)]
    np.savez(sys.argv[2], **out)
""")


@pytest.fixture(scope="module")
def tf_reference(tmp_path_factory):
    if not os.path.exists(PEER_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEER_PYTHON)
    folder = tmp_path_factory.mktemp("tf_nn")
    r = rng(17)
    inputs = {"x": r.standard_normal((2, 9, 8, 3)).astype(np.float32),
              "w": r.standard_normal((3, 3, 3, 4)).astype(np.float32),
              "y": r.standard_normal((2, 5, 4, 4)).astype(np.float32),
              "l": (r.standard_normal(20) * 4).astype(np.float32),
              "z": r.uniform(size=20).astype(np.float32),
              "dw": r.standard_normal((3, 2, 3, 2)).astype(np.float32),
              "pw": r.standard_normal((1, 1, 6, 4)).astype(np.float32)}
    np.savez(folder / "in.npz", **inputs)
    (folder / "ref.py").write_text(TF_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEER_PYTHON, str(folder / "ref.py"), str(folder / "in.npz"),
                    str(folder / "out.npz")], check=True, env=env, timeout=120,
                   stdout=subprocess.DEVNULL)
    return inputs, dict(np.load(folder / "out.npz"))


def test_against_tensorflow(tf_reference):
    d, ref = tf_reference
    x, w = d["x"], d["w"]
    nn = wr.nn
    got = run({
        "conv_same_s2": nn.conv2d(x, w, [1, 2, 2, 1], "SAME"),
        "conv_same_s3": nn.conv2d(x, w, [1, 3, 1, 1], "SAME"),
        "conv_dilated": nn.conv2d(x, w, 1, "SAME", dilations=2),
        "max_same": nn.max_pool2d(x, [3, 2], [2, 3], "SAME"),
        "avg_same": nn.avg_pool2d(x, 3, 2, "SAME"),
        "deconv": nn.conv2d_transpose(d["y"], w, [2, 9, 8, 3], [1, 2, 2, 1], "SAME"),
        "sig": nn.sigmoid_cross_entropy_with_logits(labels=d["z"], logits=d["l"]),
        "wce": nn.weighted_cross_entropy_with_logits(labels=d["z"], logits=d["l"],
                                                     pos_weight=3.0),
        "lrelu": nn.leaky_relu(d["l"], 0.3),
        "lrn": nn.lrn(x, 2, 2.0, 0.5, 0.75),
        "depthwise": nn.depthwise_conv2d(x, d["dw"], [1, 2, 2, 1], "SAME"),
        "separable": nn.separable_conv2d(x, d["dw"], d["pw"], [1, 1, 1, 1], "VALID",
                                         dilations=[2, 2]),
        "topk_values": nn.top_k(x, 3).values,
        "topk_indices": nn.top_k(x, 3).indices,
    })
    for key, value in ref.items():
        assert got[key].shape == value.shape, key
        np.testing.assert_allclose(got[key], value, rtol=1e-4, atol=1e-4, err_msg=key)


def test_errors_name_the_op_and_the_users_line():
    x = wr.placeholder(wr.float32, [1, 5, 5, 3])
    with pytest.raises(wr.errors.InvalidArgumentError) as built:
        wr.nn.conv2d(x, np.zeros((3, 3, 4, 2), np.float32), 1, "SAME")  # in_channels 4 != 3
    assert "Conv2D" in str(built.value) and "test_nn.py:" in str(built.value)
    loss = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=[5],
                                                          logits=np.zeros((1, 3), np.float32))
    with pytest.raises(wr.errors.InvalidArgumentError) as ran:
        run(loss)
    assert "SparseSoftmaxCrossEntropyWithLogits" in str(ran.value)
    assert "test_nn.py:" in str(ran.value) and "5" in str(ran.value)
