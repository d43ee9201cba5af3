#!/usr/bin/env python3
"""TFRecord interop between TensorFlow and Weir, both ways.

  /opt/weir-peers/bin/python tests/tf_compat/export_records.py [--out tests/data]
      TensorFlow writes small TFRecord files (no compression, GZIP, ZLIB) into
      --out, each holding the same records (an empty one, binary ones), and
      tf_records.json: the records (hex) and per file its compression and the
      keys TensorFlow's own TFRecordReader gives them ("<file>:<offset>", the
      offsets kept). Read by
      tests/tf_compat/tf_records_test.cc (no TensorFlow at test time).

  /opt/weir-peers/bin/python tests/tf_compat/export_records.py --check DIR
      Reads the files Weir wrote into DIR (weir_write_test_records DIR, which
      writes DIR/manifest.json in the same shape) with tf.data.TFRecordDataset
      and TensorFlow's TFRecordReader op, and compares every record. Prints
      OK and exits 0, or lists each mismatch and exits 1.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1

FILES = [("tf_records_none.tfrecord", ""), ("tf_records_gzip.tfrecord.gz", "GZIP"),
         ("tf_records_zlib.tfrecord.zz", "ZLIB")]


def sample_records():
    return [
        b"",                                     # an empty record
        b"hello, weir",
        bytes(range(256)),                       # every byte value
        b"\x00\xff" * 700 + b"\n\r\x80",         # binary, longer than one small buffer
        bytes((i * 37 + 11) % 256 for i in range(3000)),
    ]


def tf_reader_keys(path, compression):
    """The keys of TensorFlow's TFRecordReader (graph mode) for one file."""
    g = tf.Graph()
    with g.as_default():
        queue = v1.FIFOQueue(4, [tf.string])
        enqueue = queue.enqueue([path])
        close = queue.close()
        reader = v1.TFRecordReader(options=tf.io.TFRecordOptions(compression_type=compression))
        key, value = reader.read(queue)
        out = []
        with v1.Session(graph=g) as sess:
            sess.run(enqueue)
            sess.run(close)
            try:
                while True:
                    k, v = sess.run([key, value])
                    out.append((k.decode(), v))
            except tf.errors.OutOfRangeError:
                pass
    return out


def tf_dataset_records(path, compression):
    return [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]


def export(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    records = sample_records()
    manifest = {"records": [r.hex() for r in records], "files": []}
    for name, compression in FILES:
        path = os.path.join(out_dir, name)
        with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as w:
            for r in records:
                w.write(r)
        read = tf_reader_keys(path, compression)
        assert [v for _, v in read] == records, name
        offsets = [int(k.rsplit(":", 1)[1]) for k, _ in read]
        manifest["files"].append({"file": name, "compression": compression, "offsets": offsets})
    with open(os.path.join(out_dir, "tf_records.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print("wrote", ", ".join(name for name, _ in FILES), "and tf_records.json to", out_dir)


def check(weir_dir):
    with open(os.path.join(weir_dir, "manifest.json")) as f:
        manifest = json.load(f)
    problems = []
    checked = 0
    for entry in manifest["files"]:
        path = os.path.join(weir_dir, entry["file"])
        compression = entry["compression"]
        expected = [bytes.fromhex(h) for h in manifest["records"]]
        try:
            from_dataset = tf_dataset_records(path, compression)
        except tf.errors.OpError as e:
            problems.append(f"{entry['file']}: tf.data.TFRecordDataset failed: {e.message}")
            continue
        if from_dataset != expected:
            problems.append(f"{entry['file']}: TFRecordDataset read {len(from_dataset)} records, "
                            f"Weir wrote {len(expected)}, or their bytes differ")
        from_reader = tf_reader_keys(path, compression)
        if [v for _, v in from_reader] != expected:
            problems.append(f"{entry['file']}: TFRecordReader records differ")
        offsets = [int(k.rsplit(":", 1)[1]) for k, _ in from_reader]
        if "offsets" in entry and offsets != entry["offsets"]:
            problems.append(f"{entry['file']}: TensorFlow's keys {offsets} != Weir's {entry['offsets']}")
        checked += len(expected)
    if problems:
        print("\n".join(problems))
        return 1
    print(f"OK: TensorFlow read all {checked} records of {len(manifest['files'])} Weir-written files "
          f"({', '.join(e['compression'] or 'none' for e in manifest['files'])}) "
          "with TFRecordDataset and TFRecordReader, keys equal")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data"))
    parser.add_argument("--check", metavar="DIR", help="check the files Weir wrote into DIR")
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args.check))
    export(os.path.normpath(args.out))


if __name__ == "__main__":
    main()
