"""The Python examples run: examples/python/fashion_mnist.py trains both models briefly (the loss falls,
accuracy is far above chance), checkpoints and resumes; its batch order is the C++ trainer's
(std::mt19937_64 as the standard specifies it); examples/python/first_steps.py runs its checks."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "python"
DATA_DIR = "/usr/share/datasets/fashion-mnist"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fashion_mnist():
    return _load("fashion_mnist")


needs_data = pytest.mark.skipif(not os.path.exists(f"{DATA_DIR}/train-images-idx3-ubyte.gz"),
                                reason=f"Fashion-MNIST is not in {DATA_DIR} (apt-get install dataset-fashion-mnist)")


def test_mt19937_64_is_the_standard_generator(fashion_mnist):
    # [rand.predef]: the 10000th output of a default-constructed std::mt19937_64 (seed 5489).
    rng = fashion_mnist.MT19937_64(5489)
    out = []
    while len(out) < 10000:
        out += rng.block()
    assert out[9999] == 9981545732273789042


def test_epoch_order_is_the_cpp_trainers(fashion_mnist):
    order = fashion_mnist.epoch_order(1000, 1, 2)
    assert sorted(order.tolist()) == list(range(1000))
    # The first entries and a checksum printed by the C++ trainer's EpochOrder(1000, 1, 2).
    assert order[:8].tolist() == [735, 135, 385, 461, 140, 654, 841, 288]
    assert int((np.arange(1000) * order).sum()) == 248318471
    assert not np.array_equal(order, fashion_mnist.epoch_order(1000, 1, 3))


def _options(fashion_mnist, *args):
    return fashion_mnist.parse_args(["--no-progress", "--data-dir", DATA_DIR, *args])


@needs_data
def test_mlp_trains_checkpoints_and_resumes(fashion_mnist, tmp_path, capsys):
    ckpt = tmp_path / "ckpt"
    first = fashion_mnist.train(_options(fashion_mnist, "--model", "mlp", "--epochs", "2", "--train-limit", "2000",
                                         "--test-limit", "500", "--checkpoint-dir", str(ckpt)))
    assert [r["epoch"] for r in first] == [1, 2]
    assert first[1]["loss"] < first[0]["loss"] < 2.3  # ln(10) = 2.303 is chance
    assert first[1]["test_accuracy"] > 0.6, first
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("epoch ")]
    assert len(lines) == 2 and "examples_per_sec=" in lines[1], lines
    assert (ckpt / "checkpoint").exists()
    # A third epoch resumes from the newest checkpoint (step 40) and trains only epoch 3.
    third = fashion_mnist.train(_options(fashion_mnist, "--model", "mlp", "--epochs", "3", "--train-limit", "2000",
                                         "--test-limit", "500", "--checkpoint-dir", str(ckpt)))
    err = capsys.readouterr().err
    assert "resuming from" in err and "(step 40)" in err, err
    assert [r["epoch"] for r in third] == [3]
    assert third[0]["loss"] < first[1]["loss"]


@needs_data
def test_cnn_trains(fashion_mnist):
    results = fashion_mnist.train(_options(fashion_mnist, "--model", "cnn", "--epochs", "1", "--train-limit", "1000",
                                           "--test-limit", "300", "--batch-size", "50"))
    assert results[0]["loss"] < 2.0, results
    assert results[0]["test_accuracy"] > 0.4, results


def test_first_steps_runs_its_checks():
    env = dict(os.environ)
    result = subprocess.run([sys.executable, str(EXAMPLES / "first_steps.py")], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all first steps checked" in result.stdout
