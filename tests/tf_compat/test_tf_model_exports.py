"""Graphs that people commonly export from TensorFlow 2.21, frozen the way
TensorFlow freezes them (convert_variables_to_constants_v2 with
lower_control_flow, so while loops become Enter/Exit/NextIteration and
TensorLists), imported into Weir unchanged and run on the same input: each
output must match TensorFlow's to ~1e-4 relative.

The graphs are made by TensorFlow during the test: a Keras MobileNetV2, Keras
LSTM, GRU and Bidirectional text models with masking, a Transformer block
(MultiHeadAttention, LayerNormalization, Dense with exact GELU: Erfc), dilated
Conv1D/Conv2D (SpaceToBatchND/BatchToSpaceND) with softsign and other
activations, tf.image resizes (bicubic too) and crop_and_resize, and tf.reverse_sequence, check_numerics,
space_to_depth/depth_to_space and linalg.band_part."""
import numpy as np
import pytest

import weir as wr

EXPORT = '''
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
tf.random.set_seed(0)
rng = np.random.RandomState(0)
K = tf.keras
L = K.layers

def freeze(name, fn, inputs):
    specs = [tf.TensorSpec(x.shape, tf.as_dtype(x.dtype)) for x in inputs]
    concrete = tf.function(fn).get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=True)
    outs = frozen(*[tf.constant(x) for x in inputs])
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    save_graph(frozen.graph.as_graph_def(), name)
    save_arrays(name, in_names=np.array([t.name for t in frozen.inputs]),
                out_names=np.array([t.name for t in frozen.outputs]),
                **{f"in_{i}": x for i, x in enumerate(inputs)},
                **{f"out_{i}": o.numpy() for i, o in enumerate(outs)})

def keras(name, model, x):
    freeze(name, lambda t: model(t, training=False), [x])

keras("mobilenetv2", K.applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0.35,
                                                classes=10),
      rng.rand(2, 32, 32, 3).astype(np.float32))

def text_model(kind):
    inp = K.Input((7,), dtype="int32")
    e = L.Embedding(50, 8, mask_zero=True)(inp)
    if kind == "lstm":
        h = L.LSTM(6)(e)
    elif kind == "gru":
        h = L.GRU(6)(e)
    else:
        h = L.GlobalAveragePooling1D()(L.Bidirectional(L.LSTM(5, return_sequences=True))(e))
    return K.Model(inp, L.Dense(3, activation="softmax")(h))

tokens = rng.randint(1, 50, (4, 7)).astype(np.int32)
tokens[1, 5:] = 0
tokens[2, 3:] = 0
for kind in ["lstm", "gru", "bilstm"]:
    keras("text_" + kind, text_model(kind), tokens)

inp = K.Input((6, 16))
attention = L.MultiHeadAttention(num_heads=2, key_dim=8)(inp, inp)
h = L.LayerNormalization()(inp + attention)
f = L.Dense(16)(L.Dense(32, activation="gelu")(h))
keras("transformer", K.Model(inp, L.LayerNormalization()(h + f)),
      rng.randn(2, 6, 16).astype(np.float32))

keras("dilated_conv2d", K.Sequential([
    K.Input((16, 16, 3)), L.Conv2D(4, 3, dilation_rate=2, padding="same", activation="softsign"),
    L.Conv2D(4, 3, dilation_rate=(2, 3), padding="valid", activation="elu"),
    L.SeparableConv2D(4, 3, dilation_rate=2, activation="selu"),
    L.UpSampling2D(interpolation="bilinear"), L.GlobalMaxPooling2D(), L.Dense(3)]),
    rng.randn(2, 16, 16, 3).astype(np.float32))
keras("dilated_conv1d", K.Sequential([
    K.Input((20, 5)), L.Conv1D(4, 3, dilation_rate=2, padding="causal", activation="softplus"),
    L.Conv1D(4, 3, dilation_rate=4, padding="same"), L.BatchNormalization(), L.Flatten(),
    L.Dense(2, activation="softsign")]),
    rng.randn(3, 20, 5).astype(np.float32))

def images(x):
    return (tf.image.resize(x, (13, 11), method="bilinear"),
            tf.image.resize(x, (5, 17), method="nearest"),
            tf.image.resize(x, (4, 4), method="bilinear", antialias=False),
            tf.image.resize(x, (12, 7), method="bicubic"),
            tf.compat.v1.image.resize_bicubic(x, (5, 13), align_corners=True),
            tf.compat.v1.image.resize_bicubic(x, (3, 4)),
            tf.image.crop_and_resize(x, [[0.1, 0.2, 0.8, 0.9], [-0.2, 0.3, 0.5, 1.3]], [1, 0],
                                     (4, 3), extrapolation_value=-1.0),
            tf.image.crop_and_resize(x, [[0.9, 0.1, 0.2, 0.7]], [1], (1, 5), method="nearest"),
            tf.image.flip_left_right(x), tf.image.per_image_standardization(x),
            tf.image.rgb_to_grayscale(x))
freeze("images", images, [rng.rand(2, 8, 9, 3).astype(np.float32)])

def sequences(x, lengths):
    return (tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0),
            tf.reverse_sequence(x, tf.cast(lengths[:2], tf.int32), seq_axis=1, batch_axis=2),
            tf.debugging.check_numerics(x * 2.0, "x doubled"),
            tf.math.erfc(x), tf.nn.softsign(x),
            tf.space_to_batch_nd(x, [2], [[1, 0]]),
            tf.nn.space_to_depth(tf.reshape(x[:, :4, :], [3, 2, 2, 2]), 2),
            tf.nn.depth_to_space(tf.reshape(x[:, :4, :], [3, 1, 2, 4]), 2),
            tf.linalg.band_part(x, 1, 0), tf.linalg.band_part(x, -1, 0),
            tf.math.atan(x), tf.math.asinh(x), tf.math.tan(x * 0.5), tf.math.sinh(x),
            tf.math.acos(tf.tanh(x)), tf.math.divide_no_nan(x, tf.round(x)),
            tf.linspace(0.5, 3.0, 7), tf.ensure_shape(x, [3, None, 2]),
            tf.raw_ops.FusedBatchNorm(x=tf.reshape(x, [3, 5, 1, 2]), scale=[1.5, -0.5],
                                      offset=[0.1, 0.2], mean=[0.3, -0.1], variance=[2.0, 0.5],
                                      is_training=False)[0],
            tf.raw_ops.FusedBatchNormV2(x=tf.reshape(x, [3, 5, 1, 2]), scale=[1.5, -0.5],
                                        offset=[0.1, 0.2], mean=[0.0, 0.0], variance=[0.0, 0.0],
                                        is_training=True)[0])
freeze("sequences", sequences, [rng.randn(3, 5, 2).astype(np.float32),
                                np.array([5, 2, 0], np.int64)])
'''

NAMES = ["mobilenetv2", "text_lstm", "text_gru", "text_bilstm", "transformer", "dilated_conv2d",
         "dilated_conv1d", "images", "sequences"]


@pytest.fixture(scope="module")
def exported(run_tf):
    return run_tf(EXPORT, "model_exports")


def run_in_weir(out, name, feeds=None):
    data = np.load(out / f"{name}.npz")
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / f"{name}.pb").read_bytes(), name="")
    inputs = [str(n) for n in data["in_names"]]
    outputs = [str(n) for n in data["out_names"]]
    if feeds is None:
        feeds = {n: data[f"in_{i}"] for i, n in enumerate(inputs)}
    with wr.Session(graph=graph) as sess:
        return sess.run(outputs, feeds), [data[f"out_{i}"] for i in range(len(outputs))], inputs


@pytest.mark.parametrize("name", NAMES)
def test_frozen_graph_runs_with_tensorflows_outputs(exported, name):
    got, want, _ = run_in_weir(exported, name)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, (name, i)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{name} output {i}")


def test_frozen_check_numerics_fails_on_nan(exported):
    data = np.load(exported / "sequences.npz")
    x = data["in_0"].copy()
    x[1, 2, 0] = np.nan
    inputs = [str(n) for n in data["in_names"]]
    with pytest.raises(wr.errors.InvalidArgumentError, match="x doubled : Tensor had NaN values"):
        run_in_weir(exported, "sequences", {inputs[0]: x, inputs[1]: data["in_1"]})
    with pytest.raises(wr.errors.InvalidArgumentError, match=r"seq_lengths\[2\] = 6"):
        run_in_weir(exported, "sequences",
                    {inputs[0]: data["in_0"], inputs[1]: np.array([5, 2, 6], np.int64)})
