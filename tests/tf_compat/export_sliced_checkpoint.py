"""Writes, with TensorFlow 2.21, a checkpoint of partitioned variables (saved
in slices) into OUT_DIR/ckpt, and what TensorFlow reads back from it into
OUT_DIR/sliced.json: each variable whole, and slices by shape-and-slice spec
(RestoreV2), including slices across partitions. (TensorFlow's RestoreV2
refuses sliced string tensors, so for "words" the expected values are the
saved ones.)

    python export_sliced_checkpoint.py OUT_DIR     # a python with tensorflow
    python export_sliced_checkpoint.py --read OUT.json PREFIX NAME SPEC DTYPE ...
        writes, as JSON, what TensorFlow's RestoreV2 reads for each
        (NAME, SPEC, DTYPE) from the checkpoint PREFIX (Weir-written ones)

Variables: "emb" float32 [70, 3] in 3 partitions (rows 24/23/23), "ids"
int64 [10] in 4 partitions, "words" string [5, 2] in 2 partitions, and
"part" float32 [1000, 2] of which SaveV2 saved only rows 400..402 (restoring
it whole must fail; that slice must read).
"""
import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

EMB = np.arange(70 * 3, dtype=np.float32).reshape(70, 3) * 0.5 - 7.0
IDS = np.arange(10, dtype=np.int64) * 1000003 - 4
WORDS = np.array([[f"w{i}{j}".encode() for j in range(2)] for i in range(5)], dtype=object)
PART = np.array([[1.5, -2.0], [3.0, 4.25], [-5.0, 6.0]], dtype=np.float32)

SLICES = [
    ("emb", "70 3 0,24:-"),       # exactly the first partition
    ("emb", "70 3 20,10:1,2"),    # across the first two partitions, some columns
    ("emb", "70 3 -:2,1"),        # every partition, one column
    ("ids", "10 3,5"),
    ("words", "5 2 2,2:-"),
    ("part", "1000 2 400,3:-"),
    ("part", "1000 2 401,2:1,1"),
]


def encode(value):
    value = np.asarray(value)
    if value.dtype == object:
        return {"dtype": "string", "shape": list(value.shape),
                "values": [v.decode() for v in value.reshape(-1)]}
    return {"dtype": str(value.dtype), "shape": list(value.shape),
            "values": value.reshape(-1).tolist()}


def read(out, prefix, triples):
    values = []
    for name, spec, dtype in triples:
        value = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=[name], shape_and_slices=[spec],
                                     dtypes=[tf.as_dtype(dtype)])[0].numpy()
        values.append(encode(value))
    with open(out, "w") as f:
        json.dump(values, f)


def main():
    if sys.argv[1] == "--read":
        args = sys.argv[4:]
        read(sys.argv[2], sys.argv[3], [tuple(args[i:i + 3]) for i in range(0, len(args), 3)])
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    prefix = os.path.join(out, "ckpt")
    with tf.Graph().as_default():
        part = tf.compat.v1.fixed_size_partitioner
        tf.compat.v1.get_variable("emb", initializer=tf.constant(EMB), partitioner=part(3),
                                  use_resource=True)
        tf.compat.v1.get_variable("ids", initializer=tf.constant(IDS), partitioner=part(4),
                                  use_resource=True)
        tf.compat.v1.get_variable("words", initializer=tf.constant(WORDS, dtype=tf.string),
                                  partitioner=part(2), use_resource=True)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            saved = saver.save(sess, prefix)
    assert saved == prefix, saved
    # A tensor only partly saved, to a second checkpoint: TF's SaveV2 merges
    # nothing here, so it is its own prefix.
    tf.raw_ops.SaveV2(prefix=prefix + "_part", tensor_names=["part"],
                      shape_and_slices=["1000 2 400,3:-"], tensors=[PART])

    def restore(pfx, name, spec, dtype):
        return tf.raw_ops.RestoreV2(prefix=pfx, tensor_names=[name], shape_and_slices=[spec],
                                    dtypes=[dtype])[0].numpy()

    dtypes = {"emb": tf.float32, "ids": tf.int64, "words": tf.string, "part": tf.float32}
    result = {"whole": {}, "slices": []}
    for name in ("emb", "ids"):
        result["whole"][name] = encode(restore(prefix, name, "", dtypes[name]))
    # TensorFlow's RestoreV2 refuses sliced string tensors; the expected
    # value is what was saved.
    result["whole"]["words"] = encode(WORDS)
    try:
        restore(prefix + "_part", "part", "", tf.float32)
        result["part_whole_fails"] = False
    except tf.errors.OpError:
        result["part_whole_fails"] = True
    for name, spec in SLICES:
        pfx = prefix + "_part" if name == "part" else prefix
        if name == "words":
            value = WORDS[2:4]
        else:
            value = restore(pfx, name, spec, dtypes[name])
        result["slices"].append({"name": name, "spec": spec, "prefix": os.path.basename(pfx),
                                 "value": encode(value)})
    with open(os.path.join(out, "sliced.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
