"""Writes SavedModels with TensorFlow 2.21 into OUT_DIR, and TensorFlow's own
outputs for them (loaded back by TensorFlow's loader) into OUT_DIR/cases.json.

    python export_saved_models.py OUT_DIR     # a python with tensorflow

Models (graph mode, tf.compat.v1, resource variables):
  tf1_simple   simple_save of a dense+relu layer: x [?,3] -> y [?,2]
  tf1_builder  SavedModelBuilder: tag sets {serve} and {train}; signatures
               "serving_default" (x -> logits, probs) and "scale" (x, k ->
               scaled); a main_op that initializes two local variables, one
               from an asset's path (assets/vocab.txt), so outputs are wrong
               or missing unless the loader runs it with the asset fed
Models saved by TF2 eager code (function libraries, StatefulPartitionedCall):
  tf2_module     tf.saved_model.save of a tf.Module with a tf.function
                 signature x [?,3] -> y
  keras_convnet  tf.saved_model.save of a Keras (tf_keras) convnet: image
                 [?,8,8,1] -> conv 3x3 + relu, max pool, flatten, dense
                 softmax -> probs [?,4]
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

W = np.arange(6, dtype=np.float32).reshape(3, 2) / 4.0 - 0.5
B = np.array([0.25, -1.0], dtype=np.float32)
X = np.array([[1.0, 2.0, 3.0], [-4.0, 0.5, 1.0], [0.0, 0.0, 0.0]], dtype=np.float32)


def tensor_json(value):
    value = np.asarray(value)
    if value.dtype.kind in "SOU":
        flat = [v.decode() if isinstance(v, bytes) else str(v) for v in value.reshape(-1)]
        return {"dtype": "string", "shape": list(value.shape), "values": flat}
    return {"dtype": str(value.dtype), "shape": list(value.shape),
            "values": value.reshape(-1).tolist()}


def dense_graph():
    x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    w = tf.compat.v1.get_variable("w", initializer=tf.constant(W), use_resource=True)
    b = tf.compat.v1.get_variable("b", initializer=tf.constant(B), use_resource=True)
    logits = tf.matmul(x, w) + b
    return x, logits


def export_tf1_simple(path):
    with tf.Graph().as_default():
        x, logits = dense_graph()
        y = tf.nn.relu(logits, name="y")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.saved_model.simple_save(sess, path, {"x": x}, {"y": y})


def export_tf1_builder(path):
    # The builder copies each asset from the path its tensor holds.
    vocab_dir = path + ".assets_src"
    os.makedirs(vocab_dir, exist_ok=True)
    with open(os.path.join(vocab_dir, "vocab.txt"), "w") as f:
        f.write("a\nb\nc\n")
    with tf.Graph().as_default():
        x, logits = dense_graph()
        probs = tf.nn.softmax(logits, name="probs")
        k = tf.compat.v1.placeholder(tf.float32, [], name="k")
        # Local variables: not in the checkpoint, set by the main op.
        offset = tf.compat.v1.get_variable(
            "offset", initializer=tf.constant(10.0), use_resource=True,
            collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES])
        asset_path = tf.constant(os.path.join(vocab_dir, "vocab.txt"), name="asset_path")
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.ASSET_FILEPATHS, asset_path)
        vocab_path = tf.compat.v1.get_variable(
            "vocab_path", initializer=asset_path, use_resource=True,
            collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES])
        scaled = tf.add(x * k, offset.read_value(), name="scaled")
        sig = tf.compat.v1.saved_model.signature_def_utils.build_signature_def
        info = tf.compat.v1.saved_model.utils.build_tensor_info
        serving = sig({"x": info(x)},
                      {"logits": info(logits), "probs": info(probs),
                       "vocab": info(tf.identity(vocab_path.read_value(), name="vocab"))},
                      "tensorflow/serving/predict")
        scale = sig({"x": info(x), "k": info(k)}, {"scaled": info(scaled)},
                    "tensorflow/serving/predict")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            builder = tf.compat.v1.saved_model.Builder(path)
            builder.add_meta_graph_and_variables(
                sess, ["serve"],
                signature_def_map={"serving_default": serving, "scale": scale},
                assets_collection=tf.compat.v1.get_collection(
                    tf.compat.v1.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.compat.v1.saved_model.main_op.main_op())
            # The main op stays in its collection, so this graph runs it too.
            builder.add_meta_graph(["train"], signature_def_map={"scale": scale})
            builder.save()
        shutil.rmtree(vocab_dir)


def run_with_tf_loader(path, tags, key, feeds):
    """TensorFlow's own outputs for signature `key` of the SavedModel."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, tags, path)
        sig = meta.signature_def[key]
        names = sorted(sig.outputs)
        values = sess.run([sig.outputs[n].name for n in names],
                          {sig.inputs[k].name: v for k, v in feeds.items()})
        return {n: tensor_json(v) for n, v in zip(names, values)}


def export_tf2_module(path):
    class Dense(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(W)
            self.b = tf.Variable(B)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return {"y": tf.nn.relu(tf.matmul(x, self.w) + self.b)}

    module = Dense()
    tf.saved_model.save(module, path, signatures={"serving_default": module.__call__})
    return {"y": tensor_json(module(tf.constant(X))["y"].numpy())}


IMAGE = np.random.RandomState(7).randn(2, 8, 8, 1).astype(np.float32)


def export_keras_convnet(path):
    import tf_keras as keras
    keras.utils.set_random_seed(3)
    image = keras.Input(shape=(8, 8, 1), name="image")
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(image)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Flatten()(h)
    probs = keras.layers.Dense(4, activation="softmax", name="probs")(h)
    model = keras.Model(image, probs)
    tf.saved_model.save(model, path)
    return {"probs": tensor_json(model(IMAGE).numpy())}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--tf2":
        json.dump({"tf2_module": export_tf2_module(os.path.join(sys.argv[2], "tf2_module")),
                   "keras_convnet": export_keras_convnet(
                       os.path.join(sys.argv[2], "keras_convnet"))}, sys.stdout)
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # Eager mode is process-wide: the TF2 model comes from a child process.
    tf2 = subprocess.run([sys.executable, __file__, "--tf2", out],
                         check=True, capture_output=True, text=True)
    tf2_outputs = json.loads(tf2.stdout)
    tf.compat.v1.disable_eager_execution()
    export_tf1_simple(os.path.join(out, "tf1_simple"))
    export_tf1_builder(os.path.join(out, "tf1_builder"))
    cases = []
    def case(model, tags, key, feeds):
        cases.append({"model": model, "tags": tags, "signature": key,
                      "inputs": {k: tensor_json(v) for k, v in feeds.items()},
                      "outputs": run_with_tf_loader(os.path.join(out, model), tags, key, feeds)})
    case("tf1_simple", ["serve"], "serving_default", {"x": X})
    case("tf1_builder", ["serve"], "serving_default", {"x": X})
    case("tf1_builder", ["serve"], "scale", {"x": X, "k": np.float32(-2.5)})
    case("tf1_builder", ["train"], "scale", {"x": X[:1], "k": np.float32(3.0)})
    cases.append({"model": "tf2_module", "tags": ["serve"], "signature": "serving_default",
                  "inputs": {"x": tensor_json(X)}, "outputs": tf2_outputs["tf2_module"]})
    cases.append({"model": "keras_convnet", "tags": ["serve"], "signature": "serving_default",
                  "inputs": {"image": tensor_json(IMAGE)}, "outputs": tf2_outputs["keras_convnet"]})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
