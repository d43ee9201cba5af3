#!/usr/bin/env python3
"""Trains the MLP or the convnet on Fashion-MNIST with Weir's Python API.

The same models, data, optimizer and options as the C++ trainer
(examples/fashion_mnist, `weir-fashion-mnist`):

    python3 examples/python/fashion_mnist.py --model cnn --epochs 12 --checkpoint-dir ckpt/py_cnn

- mlp: dense 512 relu, dense 512 relu, dense 10;
- cnn: the TensorFlow layers tutorial's convnet: conv 5x5x32 relu, max-pool 2x2, conv 5x5x64 relu,
  max-pool 2x2, dense 1024 relu, dropout 0.4, dense 10.
Kernels are Glorot-uniform, biases zero; Adam (learning rate 1e-3), batches of 100 in an order drawn
from (seed, epoch) with the C++ trainer's generator (mt19937_64, Fisher-Yates), so both see the same
batches. One line per epoch on stdout, as the C++ trainer prints it:

    epoch N loss=... train_accuracy=... test_accuracy=... examples_per_sec=...

With --checkpoint-dir it saves every epoch and every --save-every-seconds, and a second run with the
same directory resumes from the newest checkpoint (the interrupted epoch continues with the same order).
Batches are fed through `Session.make_callable` with fresh C-contiguous float32 arrays, which Weir reads
in place (no copy).
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np

import weir as wr

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
IMAGE_SIZE = 28 * 28
NUM_CLASSES = 10


# ---------------------------------------------------------------------------------------------
# Data: the IDX files of Debian's dataset-fashion-mnist.

def read_idx(path):
    """An IDX file (gzip-compressed or not) as a uint8 array [n] or [n, rows, cols]."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SystemExit(f"error: cannot read '{path}': {e.strerror} "
                         "(apt-get install dataset-fashion-mnist, or pass --data-dir)")
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if len(data) < 8:
        raise SystemExit(f"error: '{path}' is too short to be an IDX file ({len(data)} bytes)")
    magic, = struct.unpack(">I", data[:4])
    rank = magic & 0xFF
    if magic >> 8 != 0x08 or rank not in (1, 3):
        raise SystemExit(f"error: '{path}' has IDX magic {magic:#x}, expected 0x801 or 0x803")
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    body = np.frombuffer(data, np.uint8, offset=4 + 4 * rank)
    if body.size != int(np.prod(dims)):
        raise SystemExit(f"error: '{path}' holds {body.size} bytes of data, its header says {dims}")
    return body.reshape(dims)


def load_split(data_dir, prefix, limit=0):
    """(images float32 [n, 784] in [0, 1], labels int32 [n]) of the first `limit` examples."""
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if len(images) != len(labels):
        raise SystemExit(f"error: {len(images)} images but {len(labels)} labels in {data_dir}/{prefix}")
    if limit > 0:
        images, labels = images[:limit], labels[:limit]
    images = images.reshape(len(images), IMAGE_SIZE).astype(np.float32) * np.float32(1.0 / 255.0)
    return np.ascontiguousarray(images), labels.astype(np.int32)


# ---------------------------------------------------------------------------------------------
# The epoch order: the C++ trainer's permutation, bit for bit.

class MT19937_64:
    """std::mt19937_64 (its output is specified by the C++ standard), vectorized with numpy."""
    N, M = 312, 156
    MATRIX_A = np.uint64(0xB5026F5AA96619E9)
    UPPER, LOWER = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)

    def __init__(self, seed):
        mask = (1 << 64) - 1
        mt = [seed & mask]
        for i in range(1, self.N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & mask)
        self.mt = np.array(mt, dtype=np.uint64)

    def _twist_part(self, x_hi, x_lo, far):
        x = (x_hi & self.UPPER) | (x_lo & self.LOWER)
        return far ^ (x >> np.uint64(1)) ^ np.where(x & np.uint64(1), self.MATRIX_A, np.uint64(0))

    def _twist(self):
        mt, n, m = self.mt, self.N, self.M
        # mt[i] depends on mt[i + 1] (old) and mt[i + m mod n] (old for i < n - m, new after).
        mt[:n - m] = self._twist_part(mt[:n - m], mt[1:n - m + 1], mt[m:])
        mt[n - m:n - 1] = self._twist_part(mt[n - m:n - 1], mt[n - m + 1:], mt[:m - 1])
        mt[n - 1:] = self._twist_part(mt[n - 1:], mt[:1], mt[m - 1:m])

    def block(self):
        """The next 312 outputs."""
        self._twist()
        y = self.mt.copy()
        y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
        y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
        y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
        y ^= y >> np.uint64(43)
        return y.tolist()


def epoch_order(n, seed, epoch):
    """The permutation of range(n) the C++ trainer uses in `epoch` (0-based) for `seed`."""
    rng = MT19937_64(seed * 1000003 + epoch)
    order = list(range(n))
    draws = []
    for i in range(n - 1, 0, -1):
        if not draws:
            draws = rng.block()[::-1]
        j = draws.pop() % (i + 1)
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# The models.

def build_model(kind, learning_rate):
    """The graph of one training run, in the default graph; returns a dict of its handles."""
    images = wr.placeholder(wr.float32, [None, IMAGE_SIZE], name="images")
    labels = wr.placeholder(wr.int32, [None], name="labels")
    dropout_rate = wr.placeholder(wr.float32, [], name="dropout_rate")
    if kind == "mlp":
        h = wr.layers.dense(images, 512, activation=wr.nn.relu, name="dense1")
        h = wr.layers.dense(h, 512, activation=wr.nn.relu, name="dense2")
        logits = wr.layers.dense(h, NUM_CLASSES, name="logits")
        default_rate = 0.0
    else:
        x = wr.reshape(images, [-1, 28, 28, 1])
        x = wr.layers.conv2d(x, 32, 5, padding="same", activation=wr.nn.relu, name="conv1")
        x = wr.layers.max_pooling2d(x, 2, 2, name="pool1")
        x = wr.layers.conv2d(x, 64, 5, padding="same", activation=wr.nn.relu, name="conv2")
        x = wr.layers.max_pooling2d(x, 2, 2, name="pool2")
        x = wr.layers.flatten(x)
        x = wr.layers.dense(x, 1024, activation=wr.nn.relu, name="dense")
        # A fed rate (0.4 training, 0 evaluating) rather than layers.dropout's `training` switch:
        # one graph without a conditional, as the C++ model builds it.
        x = wr.nn.dropout(x, rate=dropout_rate)
        logits = wr.layers.dense(x, NUM_CLASSES, name="logits")
        default_rate = 0.4
    xent = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    loss = wr.reduce_mean(xent, name="loss")
    predicted = wr.argmax(logits, 1, output_type=wr.int32)
    correct = wr.reduce_sum(wr.cast(wr.equal(predicted, labels), wr.int32), name="correct")
    global_step = wr.train.get_or_create_global_step()
    train_op = wr.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    return dict(images=images, labels=labels, dropout_rate=dropout_rate, default_rate=default_rate,
                loss=loss, correct=correct, global_step=global_step, train_op=train_op)


# ---------------------------------------------------------------------------------------------
# The loop.

class ProgressBar:
    """One line on stderr redrawn in place; nothing when disabled or stderr is not a terminal."""

    def __init__(self, enabled, epoch, total):
        self.enabled = enabled and sys.stderr.isatty()
        self.epoch, self.total, self.last = epoch, total, 0.0

    def update(self, done, loss, accuracy, examples_per_sec):
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < self.total):
            return
        self.last = now
        width = 30
        filled = width * done // max(self.total, 1)
        sys.stderr.write(f"\repoch {self.epoch} [{'=' * filled}{' ' * (width - filled)}] "
                         f"{done}/{self.total} loss={loss:.4f} accuracy={accuracy:.4f} "
                         f"{examples_per_sec:.0f} examples/s")
        sys.stderr.flush()

    def finish(self):
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def evaluate(eval_step, images, labels):
    """The fraction of `images` the model classifies right, in batches of 1000."""
    zero = np.zeros([], np.float32)
    correct = 0
    for begin in range(0, len(labels), 1000):
        correct += int(eval_step(images[begin:begin + 1000], labels[begin:begin + 1000], zero))
    return correct / len(labels) if len(labels) else 0.0


def train(options, on_epoch=None):
    """Trains per `options` (the parsed command line); returns the list of per-epoch results."""
    train_images, train_labels = load_split(options.data_dir, "train", options.train_limit)
    test_images, test_labels = load_split(options.data_dir, "t10k", options.test_limit)
    n = len(train_labels)
    steps_per_epoch = n // options.batch_size
    if steps_per_epoch == 0:
        raise SystemExit(f"error: batch size {options.batch_size} exceeds the {n} training examples")

    graph = wr.Graph()
    with graph.as_default():
        wr.set_random_seed(options.seed)
        m = build_model(options.model, options.learning_rate)
        init = wr.global_variables_initializer()
        saver = wr.train.Saver(max_to_keep=3)  # the C++ trainer keeps 3 too
    graph.finalize()  # the loop below must not grow the graph

    results = []
    # --threads sizes the intra-op pool only, as the C++ trainer's does (Session(threads=)
    # would size the inter-op pool too).
    config = wr.ConfigProto(intra_op_parallelism_threads=max(options.threads, 0))
    with wr.Session(graph=graph, config=config) as sess:
        step = 0
        latest = wr.train.latest_checkpoint(options.checkpoint_dir) if options.checkpoint_dir else None
        if latest:
            saver.restore(sess, latest)
            # The earlier run's checkpoints count towards max_to_keep, as in the C++ trainer.
            state = wr.train.get_checkpoint_state(options.checkpoint_dir)
            saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
            step = int(sess.run(m["global_step"]))
            print(f"resuming from {latest} (step {step})", file=sys.stderr)
        else:
            sess.run(init)
        feeds = [m["images"], m["labels"], m["dropout_rate"]]
        train_step = sess.make_callable([m["loss"], m["correct"], m["train_op"]], feeds)
        eval_step = sess.make_callable(m["correct"], feeds)
        rate = np.array(m["default_rate"], np.float32)

        if step >= steps_per_epoch * options.epochs:
            print(f"the checkpoint already holds {options.epochs} epochs; evaluating only",
                  file=sys.stderr)
            result = dict(epoch=options.epochs, loss=0.0, train_accuracy=0.0,
                          test_accuracy=evaluate(eval_step, test_images, test_labels),
                          examples_per_sec=0.0)
            return [result]

        last_save = time.monotonic()
        for epoch in range(step // steps_per_epoch, options.epochs):
            order = epoch_order(n, options.seed, epoch)
            bar = ProgressBar(options.progress, epoch + 1, steps_per_epoch * options.batch_size)
            loss_sum, correct, seen, untimed = 0.0, 0, 0, 0
            first = step % steps_per_epoch
            start = time.perf_counter()
            for i in range(first, steps_per_epoch):
                if options.untimed_steps > 0 and i - first == options.untimed_steps:
                    start, untimed = time.perf_counter(), seen
                rows = order[i * options.batch_size:(i + 1) * options.batch_size]
                # np.take makes a fresh C-contiguous, aligned array: fed without a copy.
                loss, batch_correct, _ = train_step(np.take(train_images, rows, axis=0),
                                                    np.take(train_labels, rows), rate)
                step += 1
                loss_sum += float(loss) * options.batch_size
                correct += int(batch_correct)
                seen += options.batch_size
                bar.update((i + 1) * options.batch_size, loss_sum / seen, correct / seen,
                           (seen - untimed) / max(time.perf_counter() - start, 1e-9))
                if (options.checkpoint_dir and i + 1 < steps_per_epoch and options.save_every_seconds > 0
                        and time.monotonic() - last_save >= options.save_every_seconds):
                    saver.save(sess, os.path.join(options.checkpoint_dir, "model.ckpt"), global_step=step,
                               write_meta_graph=False)
                    last_save = time.monotonic()
            elapsed = time.perf_counter() - start
            bar.finish()
            result = dict(epoch=epoch + 1, loss=loss_sum / seen if seen else 0.0,
                          train_accuracy=correct / seen if seen else 0.0,
                          test_accuracy=evaluate(eval_step, test_images, test_labels),
                          examples_per_sec=(seen - untimed) / max(elapsed, 1e-9))
            if options.checkpoint_dir:
                saver.save(sess, os.path.join(options.checkpoint_dir, "model.ckpt"), global_step=step,
                               write_meta_graph=False)
                last_save = time.monotonic()
            results.append(result)
            print("epoch {epoch} loss={loss:.4f} train_accuracy={train_accuracy:.4f} "
                  "test_accuracy={test_accuracy:.4f} examples_per_sec={examples_per_sec:.1f}"
                  .format(**result), flush=True)
            if on_epoch:
                on_epoch(result)
    return results


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["mlp", "cnn"], default="cnn")
    p.add_argument("--epochs", type=int, default=12, help="epochs to train")
    p.add_argument("--batch-size", type=int, default=100, help="examples per step")
    p.add_argument("--learning-rate", type=float, default=1e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=1, help="seed of initialization, dropout and shuffling")
    p.add_argument("--checkpoint-dir", default="", help="where to save checkpoints and resume from")
    p.add_argument("--save-every-seconds", type=float, default=60,
                   help="also checkpoint this often within an epoch (0: only per epoch)")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: every core)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="directory of the IDX files")
    p.add_argument("--train-limit", type=int, default=0, help="use only the first N training examples")
    p.add_argument("--test-limit", type=int, default=0, help="use only the first N test examples")
    p.add_argument("--untimed-steps", type=int, default=0,
                   help="leave each epoch's first N steps out of examples/s (benchmark warm-up)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    options = p.parse_args(argv)
    if options.epochs <= 0 or options.batch_size <= 0:
        p.error("--epochs and --batch-size must be positive")
    return options


if __name__ == "__main__":
    train(parse_args())
