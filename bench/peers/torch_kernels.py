"""PyTorch on the same kernel shapes as bench/kernels_bench.cc, for the
side-by-side table in docs/performance.md. Prints one JSON line per case,
named as bench/run_kernel_peers.sh names the Weir benchmarks.

Run by bench/run_kernel_peers.sh with the peers' virtualenv; settings are
PyTorch at its best on this machine: one thread per core, flush-to-zero on,
no autograd. Each convolution runs in both memory formats (NCHW and
channels_last) and reports the faster, naming it, and both figures; the
backprops call torch.nn.grad.conv2d_input / conv2d_weight, which run only
the asked-for half of aten.convolution_backward (autograd would add a
forward pass).
WEIR_PEERS_MIN_SECONDS (default 1) sets the time per measurement;
WEIR_PEERS_FILTER, a regular expression, runs only the cases it finds in
their names.
"""
import json
import os
import re
import time

import torch
import torch.nn.functional as F

# batch, image size (rows = cols), in channels, window, out channels; stride
# 1, SAME padding. As ConvShapes in bench/kernels_bench.cc.
CONV_SHAPES = [(100, 28, 1, 5, 32), (100, 14, 32, 5, 64),  # Fashion-MNIST CNN
               (32, 56, 64, 3, 64), (32, 28, 128, 3, 128), (32, 14, 256, 3, 256)]  # ResNet
DTYPES = {"float": torch.float32, "bfloat16": torch.bfloat16}
METHODS = {"forward": "F.conv2d", "backprop_input": "torch.nn.grad.conv2d_input",
           "backprop_filter": "torch.nn.grad.conv2d_weight"}


MIN_SECONDS = float(os.environ.get("WEIR_PEERS_MIN_SECONDS", "1"))
FILTER = re.compile(os.environ.get("WEIR_PEERS_FILTER", ""))


def report(case, fn, **values):
    """Times fn for `case` and prints values(seconds) as one JSON line."""
    if not FILTER.search(case):
        return
    seconds = timed(fn)
    print(json.dumps({"case": case, **{k: v(seconds) for k, v in values.items()}}), flush=True)


def timed(fn, min_seconds=None, warmup=3):
    min_seconds = MIN_SECONDS if min_seconds is None else min_seconds
    for _ in range(warmup):
        fn()
    iterations, start = 0, time.perf_counter()
    while True:
        fn()
        iterations += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / iterations


def conv_cases():
    """Conv2D forward, backprop_input and backprop_filter per shape and dtype."""
    for batch, size, cin, window, cout in CONV_SHAPES:
        pad = window // 2  # SAME for an odd window at stride 1
        flops = 2.0 * batch * size * size * cout * window * window * cin
        passes = {
            "forward": lambda x, w, g: F.conv2d(x, w, padding=pad),
            "backprop_input": lambda x, w, g: torch.nn.grad.conv2d_input(x.shape, w, g, padding=pad),
            "backprop_filter": lambda x, w, g: torch.nn.grad.conv2d_weight(x, w.shape, g, padding=pad),
        }
        for dtype_name, dtype in DTYPES.items():
            x = torch.rand(batch, cin, size, size, dtype=dtype)
            w = torch.rand(cout, cin, window, window, dtype=dtype)
            g = torch.rand(batch, cout, size, size, dtype=dtype)
            for pass_name, fn in passes.items():
                case = f"Conv2D/{pass_name}/{dtype_name}/{batch}x{size}x{cin}x{window}x{cout}"
                if not FILTER.search(case):
                    continue
                by_layout = {}
                for layout_name, layout in [("nchw", torch.contiguous_format),
                                            ("channels_last", torch.channels_last)]:
                    xs, ws, gs = (t.contiguous(memory_format=layout) for t in (x, w, g))
                    by_layout[layout_name] = batch / timed(lambda: fn(xs, ws, gs))
                layout_name = max(by_layout, key=by_layout.get)
                examples_per_s = by_layout[layout_name]
                print(json.dumps({
                    "case": case, "examples_per_s": examples_per_s,
                    "gflops": flops * examples_per_s / batch / 1e9,
                    "layout": layout_name, "examples_per_s_by_layout": by_layout,
                    "method": METHODS[pass_name]}), flush=True)


def main():
    threads = os.cpu_count()
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(0)
    settings = {"threads": threads, "flush_denormal": True, "torch": torch.__version__,
                "mkldnn": torch.backends.mkldnn.is_available(), "min_seconds": MIN_SECONDS,
                "filter": FILTER.pattern,
                "conv": "NCHW and channels_last per case, the faster kept; no autograd"}
    print(json.dumps({"settings": settings}))
    with torch.inference_mode():
        for m, k, n in [(128, 128, 128), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
                        (2048, 2048, 2048), (100, 784, 512), (100, 512, 512), (100, 512, 10)]:
            for dtype_name, dtype in DTYPES.items():
                a, b = torch.rand(m, k, dtype=dtype), torch.rand(k, n, dtype=dtype)
                prefix = "MatMul" if dtype == torch.float32 else f"MatMul/{dtype_name}"
                report(f"{prefix}/{m}x{k}x{n}", lambda: torch.matmul(a, b),
                       gflops=lambda s: 2 * m * n * k / s / 1e9)
        n = 1 << 24
        x, y = torch.rand(n), torch.rand(n)
        for name, fn, bytes_moved in [("Add", lambda: x + y, 3 * 4 * n), ("Mul", lambda: x * y, 3 * 4 * n),
                                      ("Relu", lambda: torch.relu(x), 2 * 4 * n), ("Neg", lambda: -x, 2 * 4 * n)]:
            report(name, fn, gb_per_s=lambda s: bytes_moved / s / 1e9)
        big = torch.rand(4096, 4096)
        bias = torch.rand(4096)
        report("BiasLikeAdd/4096x4096", lambda: big + bias,
               gb_per_s=lambda s: 2 * 4 * big.numel() / s / 1e9)
        for name, fn in [("Sum/all", lambda: big.sum()), ("Sum/axis0", lambda: big.sum(0)),
                         ("Sum/axis1", lambda: big.sum(1))]:
            report(name, fn, gb_per_s=lambda s: 4 * big.numel() / s / 1e9)
        conv_cases()


if __name__ == "__main__":
    main()
