"""TensorFlow's TFRecord reading, the peer of bench/tfrecord_bench.cc, over the
very file Weir's bench wrote ($WEIR_TFRECORD_BENCH_DIR, default
/tmp/weir_tfrecord_bench: 100,000 records of 1,000 bytes, ~101.6 MB, in the
page cache), in MB/s of the uncompressed record stream:

  plain read       Python reading the file in 256 KiB pieces (the ceiling)
  dataset reduce   tf.data.TFRecordDataset, batched by 1000 and counted
                   inside one tf.function (no Python per record or batch):
                   TensorFlow's fastest path
  dataset batch    TFRecordDataset.batch(1000) iterated from Python
  reader up_to     TensorFlow's TFRecordReader op, read_up_to(1000) per
                   Session.run (the graph-mode pipeline Weir's ops mirror)
  ... and the GZIP file with dataset reduce.

Best of --repeats runs. With --weir BINARY it runs Weir's tfrecord_bench
first (which writes the files if missing) and prints both:

  /opt/weir-peers/bin/python bench/peers/tfrecord_peers.py --weir build/release/bench/tfrecord_bench
"""
import argparse
import json
import os
import subprocess
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

RECORDS, RECORD_BYTES = 100000, 1000
STREAM_BYTES = RECORDS * (RECORD_BYTES + 16)


def best(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def plain_read(path):
    def run():
        with open(path, "rb", buffering=0) as f:
            while f.read(256 * 1024):
                pass
    return run


def dataset_reduce(path, compression=""):
    @tf.function
    def total():
        ds = tf.data.TFRecordDataset(path, compression_type=compression).batch(1000)
        return ds.reduce(tf.constant(0, tf.int64), lambda acc, b: acc + tf.size(b, tf.int64))

    def run():
        assert int(total()) == RECORDS
    return run


def dataset_batch(path):
    def run():
        n = 0
        for batch in tf.data.TFRecordDataset(path).batch(1000):
            n += int(batch.shape[0])
        assert n == RECORDS
    return run


def reader_up_to(path):
    g = tf.Graph()
    with g.as_default():
        queue = tf.compat.v1.FIFOQueue(4, [tf.string])
        enqueue = queue.enqueue([path])
        _, values = tf.compat.v1.TFRecordReader().read_up_to(queue, 1000)
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    sess = tf.compat.v1.Session(graph=g, config=config)

    def run():
        sess.run(enqueue)
        n = 0
        while n < RECORDS:
            n += len(sess.run(values))
    return run


def weir(binary):
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=2"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"]: b["bytes_per_second"] / 1e6 for b in json.loads(out)["benchmarks"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weir", help="Weir's tfrecord_bench binary, run first")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    weir_results = weir(args.weir) if args.weir else {}
    directory = os.environ.get("WEIR_TFRECORD_BENCH_DIR", "/tmp/weir_tfrecord_bench")
    path = os.path.join(directory, "records.tfrecord")
    gz = os.path.join(directory, "records.tfrecord.gz")
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing: run Weir's tfrecord_bench first (or pass --weir)")
    cases = [("plain read (Python, 256 KiB)", plain_read(path)),
             ("TFRecordDataset reduce", dataset_reduce(path)),
             ("TFRecordDataset batch(1000)", dataset_batch(path)),
             ("TFRecordReader read_up_to(1000)", reader_up_to(path))]
    if os.path.exists(gz):
        cases.append(("TFRecordDataset reduce, GZIP", dataset_reduce(gz, "GZIP")))
    print(f"TensorFlow {tf.__version__}, {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    for name, fn in cases:
        fn()  # warm up (tracing, page cache)
        seconds = best(fn, args.repeats)
        print(f"  {name:40s} {STREAM_BYTES / seconds / 1e6:9.0f} MB/s")
    if weir_results:
        print("Weir (tfrecord_bench, MB/s):")
        for name, mbps in weir_results.items():
            print(f"  {name:40s} {mbps:9.0f}")


if __name__ == "__main__":
    main()
