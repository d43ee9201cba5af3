"""Packaging: a clean clone builds a wheel (`pip wheel . -w DIR`) and installs (`pip install .`); the
wheel installs into a fresh virtualenv (numpy and protobuf from PyPI) and runs a small graph there.

Slow (marked `slow`): it compiles the C++ core in the clone's build/wheel/<tag>. With a warm ccache
(CCACHE_BASEDIR is set to the clone, so keys do not depend on where it lives) that takes a few
minutes; cold, as long as a release build. `pytest -m "not slow"` leaves it out.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import time
import zipfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Runs in the fresh virtualenv, outside any source tree: imports the installed package only.
PROGRAM = r"""
import sys, numpy as np, weir as wr
assert "site-packages" in wr.__file__, wr.__file__
x = wr.placeholder(wr.float32, [None, 2], name="x")
w = wr.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
y = wr.nn.relu(wr.matmul(x, w) - 5.0)
g, = wr.gradients(wr.reduce_sum(y), [x])
with wr.Session() as sess:
    sess.run(wr.global_variables_initializer())
    out, grad = sess.run([y, g], {x: np.array([[1.0, 1.0], [2.0, 0.5]], np.float32)})
try:
    wr.matmul(wr.constant([[1.0, 2.0]]), wr.constant([[1.0, 2.0]]))
    raise SystemExit("a shape error was not raised")
except (ValueError, wr.errors.InvalidArgumentError) as e:  # shape inference at build time
    assert "MatMul" in str(e), str(e)
# The wheel has no gRPC: ClusterSpec works, Server says why it cannot.
assert wr.train.ClusterSpec({"worker": ["localhost:1"]}).num_tasks("worker") == 1
try:
    wr.distribute.Server({"worker": ["localhost:0"]})
    raise SystemExit("wr.distribute.Server did not raise in a build without gRPC")
except wr.errors.UnimplementedError as e:
    assert "no distributed runtime" in str(e), str(e)
try:  # the wheel has no distributed runtime: a grpc target is a clear error
    wr.Session("grpc://localhost:1")
    raise SystemExit("the wheel accepted a grpc:// target")
except wr.errors.InvalidArgumentError as e:
    assert "WEIR_PYTHON_ONLY" in str(e), str(e)
print("OK", out.tolist(), grad.tolist())
"""


def _run(cmd, cwd, env, timeout):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({result.returncode}):\n"
                    f"{result.stdout[-3000:]}\n{result.stderr[-6000:]}")
    return result


@pytest.mark.slow
def test_wheel_builds_installs_and_runs_in_a_fresh_venv(tmp_path):
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and the repository (a clean clone is what gets built)")
    started = time.monotonic()
    clone = tmp_path / "clone"
    _run(["git", "clone", "-q", str(REPO), str(clone)], tmp_path, os.environ.copy(), 300)
    env = os.environ.copy()
    env["CCACHE_BASEDIR"] = str(clone)
    env.pop("PYTHONPATH", None)  # the build-tree package must not leak into the builds or the venv
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", ".", "-w", str(dist)], clone, env, 3600)
    wheels = list(dist.glob("weir-0.1.0-*.whl"))
    assert len(wheels) == 1, list(dist.iterdir())
    built = time.monotonic()

    names = zipfile.ZipFile(wheels[0]).namelist()
    for expected in ["weir/__init__.py", "weir/py.typed", "weir/ops/gen_ops.py", "weir/ops/gen_ops.pyi",
                     "weir/core/weir_protos.binpb", "weir/client/session.py", "weir/train/saver.py"]:
        assert expected in names, expected
    assert any(n.startswith("weir/_C.") and n.endswith(".so") for n in names), names
    # oneDNN's library travels beside the extension (found through its $ORIGIN RPATH).
    assert any(n.startswith("weir/libdnnl.so") for n in names), names

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env, 300)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(wheels[0])], tmp_path, env, 900)
    out = _run([str(python), "-c", PROGRAM], tmp_path, env, 300).stdout
    # relu([1,1] @ w - 5) = relu([-1, 1]) = [0, 1]; relu([2,.5] @ w - 5) = relu([-1.5, 1]) = [0, 1];
    # d sum / dx = (y > 0) @ w^T = [0, 1] @ [[1, 3], [2, 4]] = [2, 4] per row.
    assert out.strip() == "OK [[0.0, 1.0], [0.0, 1.0]] [[2.0, 4.0], [2.0, 4.0]]", out

    # `pip install .` from the clone: the same build tree, now incremental.
    venv2 = tmp_path / "venv2"
    _run([sys.executable, "-m", "venv", str(venv2)], tmp_path, env, 300)
    python2 = venv2 / "bin" / "python"
    _run([str(python2), "-m", "pip", "install", "-q", "."], clone, env, 3600)
    out = _run([str(python2), "-c", PROGRAM], tmp_path, env, 300).stdout
    assert out.startswith("OK "), out
    print(f"\nwheel built in {built - started:.0f} s; install, run and pip install . "
          f"in {time.monotonic() - built:.0f} s")
