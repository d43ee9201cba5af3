#!/usr/bin/env python3
"""Feeding and fetching a 100 MB float32 tensor from Python, against one numpy copy of it.

    PYTHONPATH=build/py/python python3 bench/python_transfer_bench.py [--mb 100] [--rounds 15]

Weir reads a fed C-contiguous, aligned array in place and hands fetched tensors back as numpy arrays
over its own buffer, so moving a tensor across the boundary costs no copy: each line below should be
far below `np.copy`. The cases (median wall time of `rounds` calls, after 2 warm-up calls):

- np.copy: one copy of the array (the cost zero-copy avoids);
- run feed+fetch Identity: sess.run(identity(x), {x: a}) (the fetched array may be `a`'s memory);
- callable feed+fetch Identity: the same through make_callable;
- run feed only: sess.run(shape(x), {x: a}) (the op reads no data, so this is the feed's cost);
- run fetch variable: sess.run of a 100 MB variable's value (no feed);
- run feed non-contiguous (copied): a transposed 2-D view fed, which weir must copy, against
  numpy's own copy of that view (np.ascontiguousarray: a strided copy, slower than np.copy).
"""
import argparse
import statistics
import time

import numpy as np

import weir as wr


def median_seconds(fn, rounds):
    fn()
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=100.0, help="tensor size in MB (10^6 bytes)")
    p.add_argument("--rounds", type=int, default=15)
    options = p.parse_args()
    n = int(options.mb * 1e6) // 4
    side = int(np.sqrt(n))
    a = np.random.RandomState(0).rand(n).astype(np.float32)
    square = a[:side * side].reshape(side, side)

    graph = wr.Graph()
    with graph.as_default():
        x = wr.placeholder(wr.float32, [None], name="x")
        y = wr.identity(x, name="y")
        x_shape = wr.shape(x)
        x2 = wr.placeholder(wr.float32, [None, None], name="x2")
        x2_shape = wr.shape(x2)
        v = wr.Variable(wr.zeros([n]), name="v")
        v_value = v.read_value()
        init = wr.global_variables_initializer()

    with wr.Session(graph=graph) as sess:
        sess.run(init)
        identity = sess.make_callable(y, feed_list=[x])
        out = sess.run(y, {x: a})
        assert out.shape == a.shape and np.array_equal(out, a)
        shares = np.shares_memory(out, a)
        del out
        cases = [
            ("np.copy", lambda: np.copy(a)),
            ("run feed+fetch Identity", lambda: sess.run(y, {x: a})),
            ("callable feed+fetch Identity", lambda: identity(a)),
            ("run feed only (Shape)", lambda: sess.run(x_shape, {x: a})),
            ("run fetch variable", lambda: sess.run(v_value)),
            ("run feed non-contiguous (copied)", lambda: sess.run(x2_shape, {x2: square.T})),
            ("np.ascontiguousarray of that view", lambda: np.ascontiguousarray(square.T)),
        ]
        print(f"{a.nbytes / 1e6:.0f} MB float32, median of {options.rounds} rounds; "
              f"the Identity fetch shares the fed array's memory: {shares}")
        copy_time = None
        for name, fn in cases:
            t = median_seconds(fn, options.rounds)
            copy_time = copy_time or t
            print(f"{name:34s} {t * 1e6:11.1f} us  {t / copy_time:9.5f} x np.copy")


if __name__ == "__main__":
    main()
