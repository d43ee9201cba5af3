"""Trains the Fashion-MNIST LSTM in PyTorch or TensorFlow for a fixed number of
steps and prints one JSON line: examples/s and the settings used.

Same model as `weir-fashion-mnist --model lstm` (examples/fashion_mnist/
model.cc): one 128-unit LSTM layer reading each image as 28 rows of 28
pixels, then a dense layer of 10 logits on the last output; batch 100, Adam
1e-3, the same thread count, the same data and batch order as
train_peers.py. Also prints the CPU time (user + sys, all threads) per timed
step, which the machine's load changes far less than examples/s. Peak RSS is measured from outside (bench/lstm_bench.sh runs
every framework under /usr/bin/time).

  python lstm_peers.py --framework torch --threads 2 --steps 200
  python lstm_peers.py --framework tf --threads 2 --steps 200 [--unroll] [--xla]
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_peers import batches, load  # noqa: E402  (same data, same batch order)

ROWS, COLUMNS, UNITS, CLASSES = 28, 28, 128, 10


def run_torch(args):
    import torch
    from torch import nn
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.inter_op_threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(COLUMNS, UNITS, batch_first=True)
            self.logits = nn.Linear(UNITS, CLASSES)

        def forward(self, x):
            _, (h, _) = self.lstm(x.view(-1, ROWS, COLUMNS))
            return self.logits(h[-1])

    model = Model()
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, foreach=True)
    loss_fn = nn.CrossEntropyLoss()
    model.train()

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(torch.from_numpy(xb)), torch.from_numpy(yb))
        loss.backward()
        opt.step()
        return loss

    settings = {"threads": torch.get_num_threads(), "interop_threads": args.inter_op_threads,
                "flush_denormal": True, "mkldnn": torch.backends.mkldnn.is_available(),
                "version": torch.__version__, "adam": "foreach", "compile": args.compile}
    return step, settings


def run_tf(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    tf.random.set_seed(args.seed)
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Input((ROWS * COLUMNS,)), L.Reshape((ROWS, COLUMNS)),
                                 L.LSTM(UNITS, unroll=args.unroll), L.Dense(CLASSES)])
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
                "tf_function": True, "xla": args.xla, "unroll": args.unroll,
                "keras": tf.keras.__version__ if hasattr(tf.keras, "__version__") else "",
                "version": tf.__version__}
    return (lambda xb, yb: step(xb, yb.astype("int32"))), settings


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--framework", choices=["torch", "tf"], required=True)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--inter-op-threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--xla", action="store_true", help="TensorFlow: jit_compile the step")
    p.add_argument("--unroll", action="store_true", help="TensorFlow: Keras LSTM(unroll=True)")
    p.add_argument("--compile", action="store_true", help="PyTorch: torch.compile the model")
    args = p.parse_args()
    x, y = load()
    step, settings = (run_torch if args.framework == "torch" else run_tf)(args)
    it = batches(x, y, args.batch_size, args.warmup + args.steps, args.seed)
    for _ in range(args.warmup):
        step(*next(it))
    start = time.perf_counter()
    cpu_start = time.process_time()  # user + sys of every thread of the process
    for xb, yb in it:
        loss = step(xb, yb)
    last_loss = float(loss)  # waits for the last step
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print(json.dumps({"framework": args.framework, "model": "lstm",
                      "batch_size": args.batch_size, "steps": args.steps,
                      "examples_per_sec": args.steps * args.batch_size / elapsed,
                      "cpu_ms_per_step": 1000 * cpu / args.steps,
                      "last_loss": round(last_loss, 4), "settings": settings}))


if __name__ == "__main__":
    main()
