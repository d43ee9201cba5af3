#!/usr/bin/env python3
"""Checks that TensorFlow reads Weir's checkpoints and Weir reads TensorFlow's.

Weir -> TensorFlow: weir_write_test_checkpoint writes a checkpoint of known
tensors (every dtype a checkpoint holds, scalars, empty tensors, binary
strings) and prints their bytes; TensorFlow must list every tensor with the
same dtype and shape and load the same bytes, and its RestoreV2 must restore
a slice of one.

TensorFlow -> Weir: TensorFlow writes two checkpoints (raw SaveV2 of many
dtypes, and tf.train.Checkpoint of a small model); Weir's BundleReader, through
`weir_write_test_checkpoint --read`, must list and load every tensor with the
bytes TensorFlow loads.

Needs TensorFlow (not a CI dependency); see README.md. Exits non-zero on any
mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# Weir's dtype names -> TensorFlow's.
TF_NAMES = {"float": "float32", "double": "float64", "half": "float16"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("  MISMATCH:", message)


def run_tool(tool, *args):
    result = subprocess.run([tool, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{tool} {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def tf_bytes(value):
    """The little-endian element bytes of a loaded numeric value."""
    return np.ascontiguousarray(np.asarray(value)).tobytes()


def tf_strings(value):
    return [bytes(s) for s in np.asarray(value, dtype=object).reshape(-1)]


def compare(weir_entry, tf_value, tf_dtype_name, tf_shape, where):
    name = weir_entry["name"]
    expected_dtype = TF_NAMES.get(weir_entry["dtype"], weir_entry["dtype"])
    check(tf_dtype_name == expected_dtype,
          f"{where}: {name}: dtype {tf_dtype_name} vs Weir's {weir_entry['dtype']}")
    check(list(tf_shape) == weir_entry["shape"],
          f"{where}: {name}: shape {list(tf_shape)} vs Weir's {weir_entry['shape']}")
    if "strings_hex" in weir_entry:
        expected = [bytes.fromhex(h) for h in weir_entry["strings_hex"]]
        check(tf_strings(tf_value) == expected, f"{where}: {name}: string values differ")
    else:
        check(tf_bytes(tf_value) == bytes.fromhex(weir_entry["hex"]),
              f"{where}: {name}: element bytes differ")


def weir_to_tf(tool, directory):
    prefix = os.path.join(directory, "weir", "model.ckpt-1")
    # 3000 more scalars with long names spread the index over several blocks.
    written = json.loads(run_tool(tool, prefix, "--many", "3000"))
    index_bytes = os.path.getsize(prefix + ".index")
    print(f"Weir wrote {len(written)} tensors to {prefix} ({index_bytes} bytes of index)")
    listed = dict(tf.train.list_variables(prefix))
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    check(sorted(listed) == sorted(e["name"] for e in written),
          f"TensorFlow lists {sorted(listed)}")
    for entry in written:
        name = entry["name"]
        if name not in listed:
            continue
        compare(entry, reader.get_tensor(name), dtypes[name].name, listed[name], "Weir->TF")
    print(f"  TensorFlow listed {len(listed)} tensors and loaded each one")

    # TensorFlow's RestoreV2 with a slice spec on Weir's file, against NumPy.
    kernel = next(e for e in written if e["name"].startswith("dense/kernel"))
    full = np.frombuffer(bytes.fromhex(kernel["hex"]), np.float32).reshape(kernel["shape"])
    spec = "2 3 4 1,1:0,2:-"
    (part,) = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=[kernel["name"]],
                                   shape_and_slices=[spec], dtypes=[tf.float32])
    check(np.array_equal(part.numpy(), full[1:2, 0:2, :]),
          f"TensorFlow's RestoreV2 of '{spec}' differs from NumPy's slice")
    print(f"  TensorFlow's RestoreV2 of slice '{spec}' matches")


def tf_raw_save(prefix):
    tensors = {
        "float": tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)),
        "double": tf.constant([np.pi, -1e300, 5e-324], tf.float64),
        "half": tf.constant([1.5, -65504.0, 6e-8], tf.float16),
        "bfloat16": tf.constant([1.0, -3.0e38, 0.1], tf.bfloat16),
        "int8": tf.constant([-128, 127], tf.int8),
        "int16": tf.constant([-32768, 32767], tf.int16),
        "int32": tf.constant([[-2**31, 2**31 - 1]], tf.int32),
        "int64": tf.constant(np.arange(1000, dtype=np.int64) * 1000003 - 2**40),
        "uint8": tf.constant([0, 255], tf.uint8),
        "uint16": tf.constant([0, 65535], tf.uint16),
        "uint32": tf.constant([0, 2**32 - 1], tf.uint32),
        "uint64": tf.constant([0, 2**64 - 1], tf.uint64),
        "bool": tf.constant([True, False, True]),
        "complex64": tf.constant([1 + 2j, -3j], tf.complex64),
        "complex128": tf.constant(1e100 - 1e-100j, tf.complex128),
        "scalar": tf.constant(42.0),
        "empty": tf.zeros([0, 5]),
        "strings": tf.constant([b"tf", b"", b"\x00\xff\x80 binary", b"L" * 300]),
        "string_scalar": tf.constant(b"hello"),
        "string_empty": tf.constant([], tf.string),
    }
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=list(tensors),
                      shape_and_slices=[""] * len(tensors), tensors=list(tensors.values()))
    return len(tensors)


def tf_raw_save_many(prefix):
    """Enough long names that TensorFlow's index spans several blocks."""
    names = [f"many/{i:06d}/" + "x" * 80 for i in range(3000)]
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(i, tf.int32) for i in range(len(names))])
    return len(names)


def tf_checkpoint_save(prefix):
    dense = tf.keras.layers.Dense(3)
    dense.build((None, 4))
    step = tf.Variable(7, dtype=tf.int64)
    vocab = tf.Variable([b"a", b"bb"], dtype=tf.string)
    return tf.train.Checkpoint(dense=dense, step=step, vocab=vocab).write(prefix)


def tf_to_weir(tool, directory):
    raw_prefix = os.path.join(directory, "tf_raw", "raw")
    count = tf_raw_save(raw_prefix)
    print(f"TensorFlow's SaveV2 wrote {count} tensors to {raw_prefix}")
    many_prefix = os.path.join(directory, "tf_many", "many")
    count = tf_raw_save_many(many_prefix)
    print(f"TensorFlow's SaveV2 wrote {count} tensors to {many_prefix} "
          f"({os.path.getsize(many_prefix + '.index')} bytes of index)")
    object_prefix = tf_checkpoint_save(os.path.join(directory, "tf_object", "ckpt"))
    print(f"tf.train.Checkpoint wrote {object_prefix}")
    for prefix in (raw_prefix, many_prefix, object_prefix):
        print(f"  weir_write_test_checkpoint --read {prefix}:")
        lines = run_tool(tool, "--read", prefix).splitlines()
        for line in lines[:20]:
            print("    " + line)
        if len(lines) > 20:
            print(f"    ... {len(lines) - 20} more")
        read = json.loads(run_tool(tool, "--read", "--json", prefix))
        listed = dict(tf.train.list_variables(prefix))
        reader = tf.train.load_checkpoint(prefix)
        dtypes = reader.get_variable_to_dtype_map()
        check(sorted(e["name"] for e in read) == sorted(listed),
              f"Weir lists {[e['name'] for e in read]}, TensorFlow {sorted(listed)}")
        for entry in read:
            name = entry["name"]
            if name in listed:
                compare(entry, reader.get_tensor(name), dtypes[name].name, listed[name],
                        "TF->Weir")
        print(f"  Weir listed {len(read)} tensors and loaded each one")


def weir_saver_to_tf(tool, trainer, directory):
    """A checkpoint directory of Weir's Saver, as weir-fashion-mnist leaves it."""
    ckpt_dir = os.path.join(directory, "trainer")
    subprocess.run([trainer, "--model", "mlp", "--epochs", "2", "--train-limit", "1000",
                    "--test-limit", "100", "--no-progress", "--checkpoint-dir", ckpt_dir],
                   check=True, capture_output=True)
    latest = tf.train.latest_checkpoint(ckpt_dir)
    check(latest == os.path.join(ckpt_dir, "model.ckpt-20"),
          f"TensorFlow's latest_checkpoint is {latest}, expected model.ckpt-20")
    state = tf.train.get_checkpoint_state(ckpt_dir)
    print(f"Weir's Saver wrote {ckpt_dir}; TensorFlow's latest_checkpoint: {latest}; "
          f"all: {[os.path.basename(p) for p in state.all_model_checkpoint_paths]}")
    listed = dict(tf.train.list_variables(latest))
    for name, shape in [("dense1/kernel", [784, 512]), ("dense1/kernel/Adam", [784, 512]),
                        ("logits/bias/Adam_1", [10]), ("global_step", [])]:
        check(listed.get(name) == shape, f"trainer checkpoint: {name} is {listed.get(name)}")
    reader = tf.train.load_checkpoint(latest)
    dtypes = reader.get_variable_to_dtype_map()
    read = json.loads(run_tool(tool, "--read", "--json", latest))
    check(sorted(e["name"] for e in read) == sorted(listed), "trainer checkpoint listings differ")
    for entry in read:
        if entry["name"] in listed:
            compare(entry, reader.get_tensor(entry["name"]), dtypes[entry["name"]].name,
                    listed[entry["name"]], "Saver->TF")
    check(reader.get_tensor("global_step") == 20, "global_step is not 20")
    print(f"  TensorFlow listed {len(listed)} variables and loaded each one")


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", default=os.path.join(
        root, "build", "tests", "tf_compat", "weir_write_test_checkpoint"))
    parser.add_argument("--trainer", default=os.path.join(
        root, "build", "examples", "weir-fashion-mnist"))
    args = parser.parse_args()
    print(f"TensorFlow {tf.__version__}")
    with tempfile.TemporaryDirectory(prefix="weir_tf_compat.") as directory:
        weir_to_tf(args.tool, directory)
        tf_to_weir(args.tool, directory)
        weir_saver_to_tf(args.tool, args.trainer, directory)
    if failures:
        print(f"FAILED: {len(failures)} mismatches")
        return 1
    print("OK: TensorFlow and Weir read each other's checkpoints, bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
