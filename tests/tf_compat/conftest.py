"""Shared fixture of the TensorFlow corpus tests: `run_tf(script)` runs a
Python script under TensorFlow 2.21 (the peers' interpreter that
scripts/install_deps.sh installs) in a subprocess, with the output folder as
its argument, and returns that folder. TensorFlow missing is a failure, not a
skip: these tests are how Weir knows it runs TensorFlow's graphs."""
import os
import subprocess
import textwrap

import pytest

from peers import PEERS_PYTHON

PRELUDE = textwrap.dedent('''
    import os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1
    OUT = sys.argv[1]

    def save_graph(graph_def, name):
        with open(os.path.join(OUT, name + ".pb"), "wb") as f:
            f.write(graph_def.SerializeToString())

    def save_arrays(name, **arrays):
        np.savez(os.path.join(OUT, name + ".npz"), **arrays)
''')


@pytest.fixture(scope="session")
def run_tf(tmp_path_factory):
    def run(script, name="tf"):
        assert os.path.exists(PEERS_PYTHON), (
            f"TensorFlow's interpreter {PEERS_PYTHON} is missing: run scripts/install_deps.sh "
            "(or set WEIR_PEERS)")
        out = tmp_path_factory.mktemp(name)
        path = out / "make.py"
        path.write_text(PRELUDE + textwrap.dedent(script))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run([PEERS_PYTHON, str(path), str(out)], capture_output=True,
                              text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return out
    return run
