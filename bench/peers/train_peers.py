"""Trains the Fashion-MNIST MLP or convnet in PyTorch or TensorFlow for a fixed
number of steps and prints one JSON line: examples/s and the settings used.

Same models as examples/fashion_mnist/model.cc (784-512-512-10 MLP; the
TensorFlow layers tutorial's convnet with dropout 0.4), same batch size, Adam
with the same learning rate, same thread count, same data (Debian's IDX
files), batches built from a shuffled permutation each epoch as Weir's
trainer does. Peak RSS is measured from outside (bench/train_bench.sh).

  python train_peers.py --framework torch --model cnn --threads 2 --steps 300
"""
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load():
    x = read_idx(f"{DATA}/train-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255
    y = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz").astype(np.int64)
    return x, y


def batches(x, y, batch, steps, seed):
    rng = np.random.default_rng(seed)
    n = len(y) // batch
    done = 0
    while True:
        order = rng.permutation(len(y))
        for i in range(n):
            if done == steps:
                return
            idx = order[i * batch:(i + 1) * batch]
            yield x[idx], y[idx]
            done += 1


def run_torch(args, x, y):
    import torch
    from torch import nn
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.inter_op_threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)
    if args.model == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        shape = (-1, 784)
    else:
        model = nn.Sequential(
            nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Dropout(0.4), nn.Linear(1024, 10))
        shape = (-1, 1, 28, 28)
    if args.channels_last and args.model == "cnn":
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, foreach=True)
    loss_fn = nn.CrossEntropyLoss()
    model.train()

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        x = torch.from_numpy(xb).view(*shape)
        if args.channels_last and args.model == "cnn":
            x = x.contiguous(memory_format=torch.channels_last)
        loss = loss_fn(model(x), torch.from_numpy(yb))
        loss.backward()
        opt.step()
        return loss

    settings = {"threads": torch.get_num_threads(), "interop_threads": args.inter_op_threads, "flush_denormal": True,
                "mkldnn": torch.backends.mkldnn.is_available(), "version": torch.__version__,
                "adam": "foreach", "channels_last": args.channels_last, "compile": args.compile}
    return step, settings


def run_tf(args, x, y):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    tf.random.set_seed(args.seed)
    L = tf.keras.layers
    if args.model == "mlp":
        model = tf.keras.Sequential([L.Input((784,)), L.Dense(512, activation="relu"),
                                     L.Dense(512, activation="relu"), L.Dense(10)])
    else:
        model = tf.keras.Sequential([
            L.Input((784,)), L.Reshape((28, 28, 1)),
            L.Conv2D(32, 5, padding="same", activation="relu"), L.MaxPool2D(2),
            L.Conv2D(64, 5, padding="same", activation="relu"), L.MaxPool2D(2), L.Flatten(),
            L.Dense(1024, activation="relu"), L.Dropout(0.4), L.Dense(10)])
    opt = tf.keras.optimizers.Adam(args.lr)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=args.xla)
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    settings = {"intra_op_threads": args.threads, "inter_op_threads": args.inter_op_threads,
                "tf_function": True,
                "xla": args.xla, "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
                "version": tf.__version__}
    return (lambda xb, yb: step(xb, yb.astype(np.int32))), settings


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--framework", choices=["torch", "tf"], required=True)
    p.add_argument("--model", choices=["mlp", "cnn"], required=True)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--inter-op-threads", type=int, default=1,
                   help="ops run side by side (TensorFlow; PyTorch's eager mode runs one at a time)")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--xla", action="store_true", help="TensorFlow: jit_compile")
    p.add_argument("--channels-last", action="store_true", help="PyTorch: channels_last convnet")
    p.add_argument("--compile", action="store_true", help="PyTorch: torch.compile the model")
    args = p.parse_args()
    x, y = load()
    step, settings = (run_torch if args.framework == "torch" else run_tf)(args, x, y)
    it = batches(x, y, args.batch_size, args.warmup + args.steps, args.seed)
    for _ in range(args.warmup):
        step(*next(it))
    start = time.perf_counter()
    for xb, yb in it:
        loss = step(xb, yb)
    float(loss)  # wait for the last step
    elapsed = time.perf_counter() - start
    print(json.dumps({"framework": args.framework, "model": args.model,
                      "batch_size": args.batch_size, "steps": args.steps,
                      "examples_per_sec": args.steps * args.batch_size / elapsed,
                      "settings": settings}))


if __name__ == "__main__":
    main()
