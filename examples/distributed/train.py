#!/usr/bin/env python3
"""Trains the Fashion-MNIST MLP on a ps/worker cluster and survives a task that dies.

The TF1 parameter-server layout: the variables (the MLP's kernels and biases, the global step and
Adam's slots, which the optimizer colocates with them) live on /job:ps/task:0, the model's
computation on /job:worker/task:0, and this client drives the worker's master through
wr.Session("grpc://WORKER"):

    examples/distributed/start_cluster.sh -- \\
        python3 examples/distributed/train.py --checkpoint-dir /tmp/dist_ckpt

(start_cluster.sh exports WEIR_PS_ADDRESS and WEIR_WORKER_ADDRESS, which --ps and --worker default
to.) It saves a checkpoint every --save-every steps (Saver writes each file to a temporary name
and renames it, so a checkpoint is whole or absent). When a step fails with UnavailableError or
AbortedError (a task was killed) or DeadlineExceededError (a task hung past --step-timeout), it
logs the failure, waits until every task listens again, makes a new session, restores the newest
checkpoint and goes on from its global step. The batch
of global step s is a function of s alone (the epoch order of the Python trainer,
examples/python/fashion_mnist.py, for epoch s // steps_per_epoch), so a recovered run replays the
batches the lost steps saw and ends where an uninterrupted run ends.

Log lines go to stderr, each prefixed with a wall-clock time in seconds ("[trainer 1765...]"), so
that a supervisor's log and this one can be lined up. The last line on stdout is the result:

    final global_step=600 test_accuracy=0.8130 loss=0.4512 variables_sha256=3f9c... recoveries=2
"""
import argparse
import hashlib
import os
import pathlib
import socket
import sys
import time

import numpy as np

import weir as wr
from weir.framework import errors

# The data reader and the epoch order of the single-process trainer, shared rather than copied.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import fashion_mnist  # noqa: E402

PS_DEVICE = "/job:ps/task:0"
WORKER_DEVICE = "/job:worker/task:0"
# Errors that mean "a task went away" (or hung past --step-timeout): the step is lost, the
# cluster's state may be, the checkpoint is not.
RECOVERABLE = (errors.UnavailableError, errors.AbortedError, errors.DeadlineExceededError)


def log(message):
    print(f"[trainer {time.time():.3f}] {message}", file=sys.stderr, flush=True)


def build_graph(options):
    """The MLP with its state on ps and its math on the worker; returns (graph, handles)."""
    graph = wr.Graph()
    with graph.as_default():
        wr.set_random_seed(options.seed)
        # The state: every variable on ps. get_variable's default initializer for a float
        # kernel is Glorot-uniform; biases start at zero (the single-process MLP's choices).
        sizes = [fashion_mnist.IMAGE_SIZE, 512, 512, fashion_mnist.NUM_CLASSES]
        layers = []
        with wr.device(PS_DEVICE):
            global_step = wr.train.get_or_create_global_step()
            for name, (fan_in, fan_out) in zip(["dense1", "dense2", "logits"],
                                               zip(sizes[:-1], sizes[1:])):
                with wr.variable_scope(name):
                    layers.append((wr.get_variable("kernel", [fan_in, fan_out]),
                                   wr.get_variable("bias", [fan_out],
                                                   initializer=wr.zeros_initializer())))
        # The computation: on the worker, which reads the variables from ps each step and sends
        # the gradients back; minimize puts each variable's Adam update (and the slots, which
        # the optimizer colocates with their variable) beside the variable, on ps.
        with wr.device(WORKER_DEVICE):
            images = wr.placeholder(wr.float32, [None, fashion_mnist.IMAGE_SIZE], name="images")
            labels = wr.placeholder(wr.int32, [None], name="labels")
            h = images
            for i, (kernel, bias) in enumerate(layers):
                h = wr.matmul(h, kernel) + bias
                if i + 1 < len(layers):
                    h = wr.nn.relu(h)
            logits = h
            xent = wr.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            loss = wr.reduce_mean(xent, name="loss")
            predicted = wr.argmax(logits, 1, output_type=wr.int32)
            correct = wr.reduce_sum(wr.cast(wr.equal(predicted, labels), wr.int32), name="correct")
            train_op = wr.train.AdamOptimizer(options.learning_rate).minimize(
                loss, global_step=global_step)
        init = wr.global_variables_initializer()
        saver = wr.train.Saver(max_to_keep=3)
        variables = wr.global_variables()
        # Whether the ps kept its variables (a restarted worker) or lost them (a restarted ps):
        # logged before each restore.
        uninitialized = wr.report_uninitialized_variables(variables)
    graph.finalize()
    return graph, dict(images=images, labels=labels, loss=loss, correct=correct,
                       global_step=global_step, train_op=train_op, init=init, saver=saver,
                       variables=variables, uninitialized=uninitialized)


def batch_rows(step, n, batch_size, seed, cache):
    """The example indices of global step `step`: a function of the step only."""
    steps_per_epoch = n // batch_size
    epoch, i = divmod(step, steps_per_epoch)
    if cache.get("epoch") != epoch:
        cache["epoch"], cache["order"] = epoch, fashion_mnist.epoch_order(n, seed, epoch)
    return cache["order"][i * batch_size:(i + 1) * batch_size]


def wait_for_cluster(addresses, timeout):
    """Returns once every address accepts a TCP connection; raises SystemExit after `timeout` s."""
    deadline = time.monotonic() + timeout
    for address in addresses:
        host, port = address.rsplit(":", 1)
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=0.5).close()
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise SystemExit(f"error: {address} did not come back within {timeout} s: {e}")
                time.sleep(0.1)


def open_session(target, graph, config, timeout):
    """A session whose master sees both tasks' devices.

    A master that has just lost a task may make a session without that task's devices (its
    channel to the task is still backing off after the task restarted); such a session is closed
    and the next try made, until `timeout` s have passed."""
    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        sess = None
        tries += 1
        try:
            # The session's own wait for a master not yet listening stays within ours.
            wait_ms = int(max(0.0, deadline - time.monotonic()) * 1000)
            sess = wr.Session(target, graph=graph, config=config,
                              remote=wr.distribute.RemoteSessionOptions(connect_timeout_ms=wait_ms))
            names = {d.name for d in sess.list_devices()}
            missing = [job for job in ("/job:ps/", "/job:worker/")
                       if not any(name.startswith(job) for name in names)]
            if not missing:
                return sess
            problem = f"the master sees no device of {', '.join(missing)}"
        except RECOVERABLE as e:
            problem = f"{type(e).__name__}: {e}"
        if sess is not None:
            close_quietly(sess)
        if tries == 1:
            log(f"no session yet ({problem}); trying again every 0.2 s")
        if time.monotonic() > deadline:
            raise SystemExit(f"error: no session with every task within {timeout} s: {problem}")
        time.sleep(0.2)


def close_quietly(sess):
    try:
        sess.close()
    except errors.OpError as e:  # the master may be the task that died
        log(f"closing the old session: {type(e).__name__}: {str(e).splitlines()[0]}")


def variables_digest(sess, variables):
    """sha256 over every variable's bytes in name order: equal digests mean identical models."""
    digest = hashlib.sha256()
    values = sess.run({v.op.name: v for v in variables})
    for name in sorted(values):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(values[name]).tobytes())
    return digest.hexdigest()


def train(options):
    train_images, train_labels = fashion_mnist.load_split(options.data_dir, "train",
                                                          options.train_limit)
    test_images, test_labels = fashion_mnist.load_split(options.data_dir, "t10k",
                                                        options.test_limit)
    n = len(train_labels)
    if n < options.batch_size:
        raise SystemExit(f"error: batch size {options.batch_size} exceeds the {n} training "
                         "examples")
    graph, m = build_graph(options)
    target = "grpc://" + options.worker
    # Every call has a deadline: a task that hangs instead of dying (the worker is the master
    # this client calls, so no health monitor watches it) fails the step instead of holding it.
    # (The tasks' thread pools are weir-server's --intra-op-threads.)
    config = wr.ConfigProto(operation_timeout_in_ms=int(options.step_timeout * 1000))
    prefix = os.path.join(options.checkpoint_dir, "model.ckpt")
    os.makedirs(options.checkpoint_dir, exist_ok=True)
    order_cache = {}
    recoveries = 0
    loss = float("nan")
    while True:
        sess = open_session(target, graph, config, options.wait_seconds)
        try:
            latest = wr.train.latest_checkpoint(options.checkpoint_dir)
            if latest:
                lost = len(sess.run(m["uninitialized"]))
                log(f"variables uninitialized before the restore: {lost} of "
                    f"{len(m['variables'])}")
                m["saver"].restore(sess, latest)
                state = wr.train.get_checkpoint_state(options.checkpoint_dir)
                m["saver"].recover_last_checkpoints(list(state.all_model_checkpoint_paths))
                step = int(sess.run(m["global_step"]))
                log(f"restored {latest} (global step {step})")
            else:
                sess.run(m["init"])
                step = 0
                log("initialized the variables on ps")
            train_step = sess.make_callable([m["loss"], m["train_op"]], [m["images"], m["labels"]])
            while step < options.steps:
                rows = batch_rows(step, n, options.batch_size, options.seed, order_cache)
                loss, _ = train_step(np.take(train_images, rows, axis=0),
                                     np.take(train_labels, rows))
                step += 1
                if step % options.log_every == 0:
                    log(f"step {step} loss={float(loss):.4f}")
                if step % options.save_every == 0 or step == options.steps:
                    path = m["saver"].save(sess, prefix, global_step=step, write_meta_graph=False)
                    log(f"saved {path}")
            correct = 0
            for begin in range(0, len(test_labels), 1000):
                feed = {m["images"]: test_images[begin:begin + 1000],
                        m["labels"]: test_labels[begin:begin + 1000]}
                correct += int(sess.run(m["correct"], feed))
            accuracy = correct / len(test_labels)
            digest = variables_digest(sess, m["variables"])
            sess.close()
            break
        except RECOVERABLE as e:
            first_line = str(e).splitlines()[0] if str(e) else ""
            log(f"step failed: {type(e).__name__}: {first_line}")
            close_quietly(sess)
            recoveries += 1
            if recoveries > options.max_recoveries:
                raise SystemExit(f"error: giving up after {options.max_recoveries} recoveries")
            log(f"waiting for the cluster (recovery {recoveries} of at most "
                f"{options.max_recoveries})")
            wait_for_cluster([options.ps, options.worker], options.wait_seconds)
            log("recreating the session")
    print(f"final global_step={step} test_accuracy={accuracy:.4f} loss={float(loss):.4f} "
          f"variables_sha256={digest} recoveries={recoveries}", flush=True)
    return accuracy


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ps", default=os.environ.get("WEIR_PS_ADDRESS", ""),
                   help="host:port of /job:ps/task:0 (default: $WEIR_PS_ADDRESS)")
    p.add_argument("--worker", default=os.environ.get("WEIR_WORKER_ADDRESS", ""),
                   help="host:port of /job:worker/task:0, whose master runs the steps "
                        "(default: $WEIR_WORKER_ADDRESS)")
    p.add_argument("--checkpoint-dir", required=True, help="where checkpoints are saved and found")
    p.add_argument("--steps", type=int, default=6000,
                   help="global steps to train (6000: 10 epochs)")
    p.add_argument("--save-every", type=int, default=200, help="checkpoint every N global steps")
    p.add_argument("--log-every", type=int, default=100, help="log the loss every N steps")
    p.add_argument("--batch-size", type=int, default=100, help="examples per step")
    p.add_argument("--learning-rate", type=float, default=1e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=1, help="seed of initialization and data order")
    p.add_argument("--data-dir", default=fashion_mnist.DEFAULT_DATA_DIR,
                   help="directory of the IDX files (Debian's dataset-fashion-mnist)")
    p.add_argument("--train-limit", type=int, default=0,
                   help="use only the first N training examples")
    p.add_argument("--test-limit", type=int, default=0, help="use only the first N test examples")
    p.add_argument("--max-recoveries", type=int, default=10,
                   help="give up after this many failed steps")
    p.add_argument("--wait-seconds", type=float, default=60,
                   help="how long to wait for a task to come back")
    p.add_argument("--step-timeout", type=float, default=60,
                   help="seconds a call (a step, a save, a restore) may take before it fails")
    options = p.parse_args(argv)
    if not options.ps or not options.worker:
        p.error("--ps and --worker (or WEIR_PS_ADDRESS and WEIR_WORKER_ADDRESS) are required")
    for name in ("steps", "save_every", "log_every", "batch_size", "step_timeout"):
        if getattr(options, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    return options


if __name__ == "__main__":
    train(parse_args())
