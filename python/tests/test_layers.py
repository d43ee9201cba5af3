"""weir.layers: TF1's variable names, shapes and collections, unique layer
names, reuse, regularizers, forward values against numpy, training flags of
dropout and batch normalization (UPDATE_OPS), and a finite-difference check of
the gradients of a conv + pool + dense model through wr.gradients."""
import numpy as np
import pytest

import weir as wr


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def rng(seed=0):
    return np.random.default_rng(seed)


def names(variables):
    return [v.name for v in variables]


def test_dense_variables_names_and_values():
    x = wr.placeholder(wr.float32, [None, 3])
    y = wr.layers.dense(x, 4, activation=wr.nn.relu)
    z = wr.layers.dense(y, 2, use_bias=False)
    assert y.shape.as_list() == [None, 4] and z.shape.as_list() == [None, 2]
    assert names(wr.trainable_variables()) == ["dense/kernel:0", "dense/bias:0",
                                               "dense_1/kernel:0"]
    assert y.op.name == "dense/Relu"
    kernel, bias, kernel1 = wr.trainable_variables()
    assert kernel.shape.as_list() == [3, 4] and bias.shape.as_list() == [4]
    data = rng().standard_normal((5, 3)).astype(np.float32)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        k, b, k1, got_y, got_z = sess.run([kernel, bias, kernel1, y, z], {x: data})
    np.testing.assert_array_equal(b, np.zeros(4))  # zeros bias
    limit = np.sqrt(6 / (3 + 4))  # glorot_uniform kernel
    assert np.abs(k).max() <= limit and np.abs(k).std() > 0
    np.testing.assert_allclose(got_y, np.maximum(data @ k + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_z, got_y @ k1, rtol=1e-5, atol=1e-6)


def test_dense_on_rank3_inputs_and_initializers():
    x = wr.constant(rng(1).standard_normal((2, 3, 4)).astype(np.float32))
    y = wr.layers.dense(x, 5, kernel_initializer=wr.ones_initializer(),
                        bias_initializer=wr.constant_initializer(0.5))
    assert y.shape.as_list() == [2, 3, 5]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        got, xv = sess.run([y, x])
    np.testing.assert_allclose(got, np.repeat(xv.sum(-1, keepdims=True), 5, -1) + 0.5, rtol=1e-5)


def test_named_layers_reuse_and_errors():
    x = wr.placeholder(wr.float32, [None, 3])
    a = wr.layers.dense(x, 2, name="fc")
    with pytest.raises(ValueError, match="already exists"):
        wr.layers.dense(x, 2, name="fc")
    b = wr.layers.dense(x, 2, name="fc", reuse=True)
    assert names(wr.trainable_variables()) == ["fc/kernel:0", "fc/bias:0"]
    with wr.variable_scope("tower"):
        wr.layers.dense(x, 2)
        wr.layers.dense(x, 2)
    assert "tower/dense/kernel:0" in names(wr.global_variables())
    assert "tower/dense_1/kernel:0" in names(wr.global_variables())
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        va, vb = sess.run([a, b], {x: np.ones((1, 3), np.float32)})
    np.testing.assert_array_equal(va, vb)


def test_layer_objects_share_variables_across_calls():
    layer = wr.layers.Dense(3, name="shared")
    x1 = wr.constant(np.ones((2, 4), np.float32))
    x2 = wr.constant(np.full((2, 4), 2.0, np.float32))
    y1, y2 = layer(x1), layer.apply(x2)
    assert layer.kernel.name == "shared/kernel:0" and layer.bias.name == "shared/bias:0"
    assert names(layer.trainable_variables) == ["shared/kernel:0", "shared/bias:0"]
    assert names(layer.variables) == names(layer.trainable_weights)
    assert len(wr.trainable_variables()) == 2
    assert y2.op.name.startswith("shared/")
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        v1, v2 = sess.run([y1, y2])
    np.testing.assert_allclose(v2, 2 * v1, rtol=1e-5)  # zero bias: linear in x


def test_a_user_layer_subclass():
    class Scale(wr.layers.Layer):
        def build(self, input_shape):
            self.factor = self.add_weight("factor", [input_shape.as_list()[-1]],
                                          initializer=wr.constant_initializer(3.0))
            self.counter = self.add_variable("counter", [], trainable=False,
                                             initializer=wr.zeros_initializer())
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.factor

        def compute_output_shape(self, input_shape):
            return input_shape

    layer = Scale()
    y = layer(wr.constant([[1.0, 2.0]]))
    assert layer.name == "scale" and names(layer.trainable_weights) == ["scale/factor:0"]
    assert names(layer.non_trainable_weights) == ["scale/counter:0"]
    assert Scale()(wr.constant([[1.0]])).op.name.startswith("scale_1/")
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(y), [[3.0, 6.0]])


def test_regularizers_and_non_trainable():
    x = wr.constant(np.ones((1, 3), np.float32))
    wr.layers.dense(x, 2, kernel_initializer=wr.ones_initializer(),
                    kernel_regularizer=lambda w: wr.reduce_sum(w) * 0.5, name="reg")
    wr.layers.dense(x, 2, name="reg", reuse=True, kernel_regularizer=lambda w: wr.reduce_sum(w))
    frozen = wr.layers.Dense(2, trainable=False, name="frozen")
    frozen(x)
    losses = wr.get_collection(wr.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1  # not again for the reused variable
    assert "frozen/kernel:0" in names(wr.global_variables())
    assert "frozen/kernel:0" not in names(wr.trainable_variables())
    assert frozen.trainable_variables == [] and len(frozen.non_trainable_variables) == 2
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        assert sess.run(losses[0]) == pytest.approx(3.0)


def np_conv_same(x, w):
    kh, kw = w.shape[:2]
    padded = np.pad(x, [(0, 0), ((kh - 1) // 2, kh // 2), ((kw - 1) // 2, kw // 2), (0, 0)])
    out = np.zeros(x.shape[:3] + (w.shape[3],))
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            patch = padded[:, i:i + kh, j:j + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv2d_pooling_flatten():
    data = rng(2).standard_normal((2, 6, 6, 3)).astype(np.float32)
    x = wr.placeholder(wr.float32, [None, 6, 6, 3])
    c = wr.layers.conv2d(x, 4, 3, padding="same", activation=wr.nn.relu)
    c2 = wr.layers.conv2d(c, 2, (2, 3), strides=2)
    p = wr.layers.max_pooling2d(c, 2, 2)
    a = wr.layers.average_pooling2d(c, pool_size=3, strides=1, padding="same")
    f = wr.layers.flatten(p)
    assert names(wr.trainable_variables()) == ["conv2d/kernel:0", "conv2d/bias:0",
                                               "conv2d_1/kernel:0", "conv2d_1/bias:0"]
    assert c.shape.as_list() == [None, 6, 6, 4]
    assert c2.shape.as_list() == [None, 3, 2, 2]  # VALID: (6-2)//2+1, (6-3)//2+1
    assert p.shape.as_list() == [None, 3, 3, 4] and a.shape.as_list() == [None, 6, 6, 4]
    assert f.shape.as_list() == [None, 36]
    kernel = wr.trainable_variables()[0]
    assert kernel.shape.as_list() == [3, 3, 3, 4]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        k, vc, vp, vf = sess.run([kernel, c, p, f], {x: data})
    np.testing.assert_allclose(vc, np.maximum(np_conv_same(data, k), 0), rtol=1e-4, atol=1e-5)
    pooled = vc.reshape(2, 3, 2, 3, 2, 4).max(axis=(2, 4))
    np.testing.assert_allclose(vp, pooled, rtol=1e-6)
    np.testing.assert_allclose(vf, pooled.reshape(2, -1), rtol=1e-6)


def test_conv2d_channels_first_shapes_and_transpose():
    x = wr.placeholder(wr.float32, [None, 3, 8, 8])
    assert wr.layers.max_pooling2d(x, 2, 2, data_format="channels_first").shape.as_list() == \
        [None, 3, 4, 4]
    assert wr.layers.flatten(x).shape.as_list() == [None, 192]
    y = wr.placeholder(wr.float32, [None, 4, 4, 3])
    up = wr.layers.conv2d_transpose(y, 5, 3, strides=2, padding="same")
    valid = wr.layers.conv2d_transpose(y, 2, 3, strides=2)
    assert up.shape.as_list() == [None, 8, 8, 5]
    assert valid.shape.as_list() == [None, 9, 9, 2]
    assert wr.trainable_variables()[0].shape.as_list() == [3, 3, 5, 3]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        assert sess.run(up, {y: np.ones((2, 4, 4, 3), np.float32)}).shape == (2, 8, 8, 5)


def test_channels_first_layers_match_channels_last():
    # Weir's CPU kernels are NHWC; channels_first layers transpose around them.
    data = rng(7).standard_normal((2, 5, 6, 3)).astype(np.float32)
    last = wr.constant(data)
    first = wr.constant(data.transpose(0, 3, 1, 2))
    init = wr.random_normal_initializer(seed=5)
    conv_last = wr.layers.conv2d(last, 4, 3, strides=(2, 1), padding="same",
                                 kernel_initializer=init, bias_initializer=init, name="c")
    conv_first = wr.layers.conv2d(first, 4, 3, strides=(2, 1), padding="same",
                                  data_format="channels_first", name="c", reuse=True)
    pool_first = wr.layers.max_pooling2d(conv_first, 2, 1, data_format="channels_first")
    pool_last = wr.layers.max_pooling2d(conv_last, 2, 1)
    up_first = wr.layers.conv2d_transpose(first, 2, 3, strides=2, padding="same",
                                          data_format="channels_first", name="t")
    up_last = wr.layers.conv2d_transpose(last, 2, 3, strides=2, padding="same", name="t",
                                         reuse=True)
    bn_first = wr.layers.batch_normalization(first, axis=1, training=True, name="bn")
    bn_last = wr.layers.batch_normalization(last, training=True, name="bn", reuse=True)
    flat_first = wr.layers.flatten(first, data_format="channels_first")
    assert conv_first.shape.as_list() == [2, 4, 3, 6]
    assert pool_first.shape.as_list() == [2, 4, 2, 5]
    assert up_first.shape.as_list() == [2, 2, 10, 12]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        got = sess.run([conv_first, conv_last, pool_first, pool_last, up_first, up_last,
                        bn_first, bn_last, flat_first])
    to_first = (0, 3, 1, 2)
    np.testing.assert_allclose(got[0], got[1].transpose(to_first), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], got[3].transpose(to_first), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[4], got[5].transpose(to_first), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[6], got[7].transpose(to_first), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got[8], data.reshape(2, -1))  # TF's channels_last order


def test_conv2d_transpose_layer_values():
    data = rng(8).standard_normal((1, 3, 3, 2)).astype(np.float32)
    y = wr.layers.conv2d_transpose(data, 1, 2, strides=2, use_bias=False,
                                   kernel_initializer=wr.ones_initializer())
    assert y.shape.as_list() == [1, 6, 6, 1]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        got = sess.run(y)
    # stride 2, kernel 2 of ones: each input pixel's channel sum fills a 2x2 block.
    expected = np.kron(data.sum(-1)[0], np.ones((2, 2)))
    np.testing.assert_allclose(got[0, :, :, 0], expected, rtol=1e-5)


def test_dense_shapes_with_unknown_dims():
    x = wr.placeholder(wr.float32, [None, 7, 3])
    y = wr.layers.dense(x, 2)
    assert y.shape.as_list() == [None, 7, 2]
    z = wr.layers.dense(y, 5)  # builds from the static last dim
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        assert sess.run(z, {x: np.ones((4, 7, 3), np.float32)}).shape == (4, 7, 5)
    with pytest.raises(ValueError, match="last dimension"):
        wr.layers.dense(wr.placeholder(wr.float32, [None, None]), 3)


def test_dropout_layer_training_flag():
    x = wr.constant(np.ones((100, 100), np.float32))
    off = wr.layers.dropout(x, 0.5)  # training=False by default, as TF
    on = wr.layers.dropout(x, 0.5, training=True, seed=1)
    flag = wr.placeholder(wr.bool, [])
    fed = wr.layers.dropout(x, rate=0.25, training=flag, seed=2)
    with wr.Session() as sess:
        np.testing.assert_array_equal(sess.run(off), np.ones((100, 100)))
        dropped = sess.run(on)
        assert set(np.unique(dropped)) == {0.0, 2.0}
        np.testing.assert_array_equal(sess.run(fed, {flag: False}), np.ones((100, 100)))
        trained = sess.run(fed, {flag: True})
        assert abs((trained == 0).mean() - 0.25) < 0.03


@pytest.mark.parametrize("rank", [2, 4])
def test_batch_normalization_training_and_updates(rank):
    shape = (8, 3) if rank == 2 else (4, 3, 3, 3)
    data = (rng(3).standard_normal(shape) * 2 + 5).astype(np.float32)
    x = wr.placeholder(wr.float32, [None] + list(shape[1:]))
    train = wr.layers.batch_normalization(x, training=True, momentum=0.9, name="bn")
    infer = wr.layers.batch_normalization(x, training=False, name="bn", reuse=True)
    assert names(wr.trainable_variables()) == ["bn/gamma:0", "bn/beta:0"]
    assert "bn/moving_mean:0" in names(wr.global_variables())
    assert "bn/moving_variance:0" in names(wr.global_variables())
    updates = wr.get_collection(wr.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2  # the inference call adds none
    axes = tuple(range(rank - 1))
    mean, var = data.mean(axis=axes), data.var(axis=axes)
    n = data.size // 3
    # The fused (4-D) path moves the variance with the unbiased estimate, as TF.
    batch_var = var * n / (n - 1) if rank == 4 else var
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        y = sess.run(train, {x: data})
        np.testing.assert_allclose(y, (data - mean) / np.sqrt(var + 1e-3), rtol=1e-3, atol=1e-3)
        sess.run(updates, {x: data})
        moving_mean, moving_var = sess.run(
            [wr.global_variables()[2], wr.global_variables()[3]])
        np.testing.assert_allclose(moving_mean, 0.1 * mean, rtol=1e-4)
        np.testing.assert_allclose(moving_var, 0.9 + 0.1 * batch_var, rtol=1e-4)
        y_inf = sess.run(infer, {x: data})
        np.testing.assert_allclose(y_inf, (data - moving_mean) / np.sqrt(moving_var + 1e-3),
                                   rtol=1e-4, atol=1e-4)


def test_batch_normalization_with_a_training_tensor():
    data = (rng(4).standard_normal((16, 2)) + 3).astype(np.float32)
    flag = wr.placeholder(wr.bool, [])
    y = wr.layers.batch_normalization(data, training=flag, momentum=0.5)
    updates = wr.get_collection(wr.GraphKeys.UPDATE_OPS)
    moving_mean = [v for v in wr.global_variables() if "moving_mean" in v.name][0]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        sess.run(updates, {flag: False})
        np.testing.assert_array_equal(sess.run(moving_mean), [0.0, 0.0])  # no update
        sess.run(updates, {flag: True})
        np.testing.assert_allclose(sess.run(moving_mean), 0.5 * data.mean(0), rtol=1e-5)
        moving_var = 1 - (1 - data.var(0)) * 0.5
        inferred = sess.run(y, {flag: False})
        np.testing.assert_allclose(inferred, (data - 0.5 * data.mean(0)) /
                                   np.sqrt(moving_var + 1e-3), rtol=1e-4, atol=1e-5)
        trained = sess.run(y, {flag: True})
        np.testing.assert_allclose(trained, (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-3),
                                   rtol=1e-4, atol=1e-4)


def test_gradients_of_conv_dense_model_against_finite_differences():
    # float64 so central differences are accurate.
    data = rng(5).standard_normal((2, 5, 5, 2))
    x = wr.constant(data)
    h = wr.layers.conv2d(x, 3, 3, padding="same", activation=wr.nn.tanh,
                         kernel_initializer=wr.random_normal_initializer(0, 0.5, seed=1),
                         bias_initializer=wr.random_normal_initializer(0, 0.5, seed=2))
    h = wr.layers.average_pooling2d(h, 2, 2)
    h = wr.layers.flatten(h)
    logits = wr.layers.dense(h, 4, kernel_initializer=wr.random_normal_initializer(0, 0.5,
                                                                                     seed=3))
    loss = wr.reduce_mean(wr.nn.sparse_softmax_cross_entropy_with_logits(
        labels=np.array([1, 3]), logits=logits))
    params = wr.trainable_variables()
    assert [v.dtype.base_dtype for v in params] == [wr.float64] * 4
    grads = wr.gradients(loss, params)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        values = sess.run(params)
        analytic = sess.run(grads)
        eps = 1e-5
        for var, value, grad in zip(params, values, analytic):
            flat = value.reshape(-1)
            for index in rng(6).choice(flat.size, size=min(4, flat.size), replace=False):
                shifted = []
                for sign in (1, -1):
                    trial = flat.copy()
                    trial[index] += sign * eps
                    var.load(trial.reshape(value.shape), sess)
                    shifted.append(sess.run(loss))
                var.load(value, sess)
                numeric = (shifted[0] - shifted[1]) / (2 * eps)
                assert grad.reshape(-1)[index] == pytest.approx(numeric, rel=1e-5, abs=1e-8), \
                    var.name


@pytest.mark.parametrize("rank", [2, 4])
def test_batch_normalization_gradients_against_finite_differences(rank):
    shape = (6, 2) if rank == 2 else (2, 3, 2, 2)
    data = rng(9).standard_normal(shape) * 2 + 1
    x = wr.placeholder(wr.float64, shape)
    y = wr.layers.batch_normalization(x, training=True,
                                      gamma_initializer=wr.constant_initializer([1.5, 0.5]),
                                      beta_initializer=wr.constant_initializer([0.2, -0.1]))
    weights = rng(10).standard_normal(shape)
    loss = wr.reduce_sum(y * weights)
    gamma, beta = wr.trainable_variables()
    grads = wr.gradients(loss, [x, gamma, beta])
    eps = 1e-6
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        gx, ggamma, gbeta = sess.run(grads, {x: data})
        for index in range(0, data.size, 5):
            step = np.zeros(data.size)
            step[index] = eps
            step = step.reshape(shape)
            numeric = (sess.run(loss, {x: data + step}) - sess.run(loss, {x: data - step})) / \
                (2 * eps)
            assert gx.flat[index] == pytest.approx(numeric, rel=1e-4, abs=1e-6)
    axes = tuple(range(rank - 1))
    normalized = (data - data.mean(axes)) / np.sqrt(data.var(axes) + 1e-3)
    np.testing.assert_allclose(ggamma, (weights * normalized).sum(axes), rtol=1e-6)
    np.testing.assert_allclose(gbeta, weights.sum(axes), rtol=1e-9)
