"""Runs one TF1 program text under TensorFlow 2.21 (the peers' interpreter, in
a subprocess) or under Weir (in this process), each with its own import line,
and returns the RESULT the program leaves (through JSON, so both sides give
the same types). Used by the tests of TF1's everyday surface (metrics, app,
flags, logging, gfile, graph_util)."""
import json
import os
import pathlib
import subprocess

import pytest

from peers import PEERS_PYTHON

TF_HEADER = "import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()\n"
WEIR_HEADER = "import weir as tf\n"

_DRIVER = r"""
import json, sys
text = sys.stdin.read()
namespace = {"__name__": "__main__"}
exec(compile(text, "<program>", "exec"), namespace)
print("RESULT " + json.dumps(namespace["RESULT"]))
"""


def tf_env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_ENABLE_ONEDNN_OPTS="0")
    env.pop("PYTHONPATH", None)
    return env


def require_tf():
    if not pathlib.Path(PEERS_PYTHON).exists():
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (bench/peers installs it)")


def run_tf(body, header=TF_HEADER, timeout=300):
    """RESULT of `header + body` under TensorFlow."""
    require_tf()
    proc = subprocess.run([PEERS_PYTHON, "-c", _DRIVER], input=header + body, env=tf_env(),
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(lines[-1][len("RESULT "):])


def run_weir(body, header=WEIR_HEADER):
    """RESULT of `header + body` under Weir, in this process (a fresh default
    graph first)."""
    import weir
    weir.reset_default_graph()
    namespace = {"__name__": "__main__"}
    exec(compile(header + body, "<program under weir>", "exec"), namespace)
    return json.loads(json.dumps(namespace["RESULT"]))


def run_script(header, body, args=(), tmp_path=None, weir=True, timeout=300):
    """Runs `header + body` as a script file with command-line `args` under
    Weir (this interpreter, this PYTHONPATH) or TensorFlow; returns
    (returncode, stdout, stderr)."""
    import sys
    import tempfile
    if not weir:
        require_tf()
    folder = tmp_path or tempfile.mkdtemp()
    script = os.path.join(str(folder), "weir_prog.py" if weir else "tf_prog.py")
    with open(script, "w") as f:
        f.write(header + body)
    python = sys.executable if weir else PEERS_PYTHON
    env = dict(os.environ) if weir else tf_env()
    proc = subprocess.run([python, script, *args], env=env, capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr
