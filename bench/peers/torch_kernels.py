"""PyTorch on the same kernel shapes as bench/kernels_bench.cc, for the
side-by-side table in docs/performance.md. Prints one JSON line per case.

Run by bench/run_kernel_peers.sh with the peers' virtualenv; settings are
PyTorch at its best on this machine: one thread per core, flush-to-zero on,
no autograd.
"""
import json
import os
import time

import torch


def timed(fn, min_seconds=1.0, warmup=3):
    for _ in range(warmup):
        fn()
    iterations, start = 0, time.perf_counter()
    while True:
        fn()
        iterations += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / iterations


def main():
    threads = os.cpu_count()
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(0)
    settings = {"threads": threads, "flush_denormal": True, "torch": torch.__version__,
                "mkldnn": torch.backends.mkldnn.is_available()}
    print(json.dumps({"settings": settings}))
    with torch.inference_mode():
        for m, k, n in [(128, 128, 128), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
                        (2048, 2048, 2048), (100, 784, 512), (100, 512, 512), (100, 512, 10)]:
            a, b = torch.rand(m, k), torch.rand(k, n)
            seconds = timed(lambda: torch.matmul(a, b))
            print(json.dumps({"case": f"MatMul/{m}x{k}x{n}", "gflops": 2 * m * n * k / seconds / 1e9}))
        n = 1 << 24
        x, y = torch.rand(n), torch.rand(n)
        for name, fn, bytes_moved in [("Add", lambda: x + y, 3 * 4 * n), ("Mul", lambda: x * y, 3 * 4 * n),
                                      ("Relu", lambda: torch.relu(x), 2 * 4 * n), ("Neg", lambda: -x, 2 * 4 * n)]:
            seconds = timed(fn)
            print(json.dumps({"case": name, "gb_per_s": bytes_moved / seconds / 1e9}))
        big = torch.rand(4096, 4096)
        bias = torch.rand(4096)
        seconds = timed(lambda: big + bias)
        print(json.dumps({"case": "BiasLikeAdd/4096x4096", "gb_per_s": 2 * 4 * big.numel() / seconds / 1e9}))
        for name, fn in [("Sum/all", lambda: big.sum()), ("Sum/axis0", lambda: big.sum(0)),
                         ("Sum/axis1", lambda: big.sum(1))]:
            seconds = timed(fn)
            print(json.dumps({"case": name, "gb_per_s": 4 * big.numel() / seconds / 1e9}))
    # Convolutions in NHWC (channels_last), forward and both backprops.
    for name, (batch, h, w, cin, kh, kw, cout) in [("fmnist_conv1", (100, 28, 28, 1, 5, 5, 32)),
                                                   ("fmnist_conv2", (100, 14, 14, 32, 5, 5, 64)),
                                                   ("resnet_3x3", (32, 56, 56, 64, 3, 3, 64))]:
        x = torch.rand(batch, cin, h, w).to(memory_format=torch.channels_last).requires_grad_(True)
        conv = torch.nn.Conv2d(cin, cout, (kh, kw), padding="same", bias=False).to(
            memory_format=torch.channels_last)
        with torch.inference_mode():
            seconds = timed(lambda: conv(x))
        print(json.dumps({"case": f"Conv2D/{name}/forward", "examples_per_s": batch / seconds}))
        out = conv(x)
        grad = torch.rand_like(out)

        def backward():
            x.grad = None
            conv.weight.grad = None
            torch.autograd.grad(conv(x), (x, conv.weight), grad)

        seconds = timed(backward)
        print(json.dumps({"case": f"Conv2D/{name}/forward+both_backprops", "examples_per_s": batch / seconds}))


if __name__ == "__main__":
    main()
