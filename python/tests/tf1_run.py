"""The shared harness of the tests that run TF1 program text under TensorFlow
2.21 (the peers' interpreter, in a subprocess) and under Weir (in this
process), each with its own import line, and compare the RESULT each leaves
(through JSON, so both sides give the same types).

Two ways to use it:
- a test file keeps its programs in its own PROGRAMS dict, filled by the
  decorator `program = program_registry(PROGRAMS)`; each program is written
  for TensorFlow with a TF header (TF_HEADER or TF_V1_HEADER) that
  as_weir() swaps for WEIR_HEADER; run_tf_programs() runs a set of them
  under TensorFlow in one subprocess, tf_result() picks one result (failing
  with TensorFlow's traceback), run_weir_program() runs one under Weir;
- run_tf()/run_weir() run one body with a header prepended (the tests of
  TF1's everyday surface: metrics, app, flags, logging, gfile, graph_util),
  run_script() runs one as a script with command-line arguments.
"""
import json
import os
import pathlib
import subprocess
import textwrap

import pytest

from peers import PEERS_PYTHON

TF_HEADER = "import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()\n"
# With v2 behavior off TensorFlow builds v1 control flow and TensorArrayV3, as Weir does.
TF_V1_HEADER = "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n"
WEIR_HEADER = "import weir as tf\n"

# The key of a result whose program raised under TensorFlow (a program's own
# RESULT may hold an "error").
TRACEBACK = "__traceback__"

# Runs the programs of a JSON {name: text} on stdin; prints
# {name: RESULT or {TRACEBACK: traceback}} as JSON.
_DRIVER = r"""
import json, sys, traceback
programs = json.load(sys.stdin)
results = {}
for name, text in programs.items():
    namespace = {"__name__": "__main__"}
    try:
        exec(compile(text, name, "exec"), namespace)
        results[name] = namespace["RESULT"]
    except Exception:
        results[name] = {"%s": traceback.format_exc()}
print("RESULTS " + json.dumps(results))
""" % TRACEBACK

_KERAS_HINT = "\n(tf.layers needs tf-keras: /opt/weir-peers/bin/pip install --no-deps tf-keras==2.21.0)"


def program_registry(programs):
    """A decorator factory `program(name)`: the decorated function's docstring
    (dedented) is stored as programs[name]."""
    def program(name):
        def register(fn):
            programs[name] = textwrap.dedent(fn.__doc__).lstrip()
            return fn
        return register
    return program


# The import swap of the classic programs (tests/tf1_programs): only the import
# line changes; tf.disable_v2_behavior() stays (a no-op in weir.compat.v1).
TF_V1_IMPORT = "import tensorflow.compat.v1 as tf\n"
WEIR_V1_IMPORT = "import weir.compat.v1 as tf\n"


def as_weir(text, tf_header=TF_HEADER, weir_header=WEIR_HEADER):
    """`text` with its TensorFlow import lines replaced by Weir's."""
    assert text.count(tf_header) == 1, "each program imports TensorFlow the same way"
    return text.replace(tf_header, weir_header)


def tf_env(**extra):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_ENABLE_ONEDNN_OPTS="0", **extra)
    env.pop("PYTHONPATH", None)
    return env


def require_tf():
    if not pathlib.Path(PEERS_PYTHON).exists():
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing (bench/peers installs it)")


def run_tf_programs(programs, timeout=300, **env_extra):
    """Runs the {name: text} `programs` under TensorFlow in one subprocess
    (with `env_extra` in its environment); returns {name: RESULT or
    {TRACEBACK: traceback}}."""
    require_tf()
    proc = subprocess.run([PEERS_PYTHON, "-c", _DRIVER], input=json.dumps(programs), env=tf_env(**env_extra),
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULTS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(lines[-1][len("RESULTS "):])


def tf_result(results, name):
    """results[name], failing with TensorFlow's traceback where the program raised."""
    result = results[name]
    if isinstance(result, dict) and TRACEBACK in result:
        hint = _KERAS_HINT if "Keras 3" in result[TRACEBACK] else ""
        pytest.fail(f"{name} fails under TensorFlow:\n" + result[TRACEBACK] + hint)
    return result


def _exec_result(text, filename):
    namespace = {"__name__": "__main__"}
    exec(compile(text, filename, "exec"), namespace)
    return json.loads(json.dumps(namespace["RESULT"]))  # the same types as TensorFlow's side


def run_weir_program(text, name, tf_header=TF_HEADER, weir_header=WEIR_HEADER):
    """RESULT of the TF1 program `text` (importing TensorFlow by `tf_header`)
    under Weir, in this process."""
    return _exec_result(as_weir(text, tf_header, weir_header), f"<{name} under weir>")


def run_tf(body, header=TF_HEADER, timeout=300):
    """RESULT of `header + body` under TensorFlow."""
    return tf_result(run_tf_programs({"<program>": header + body}, timeout=timeout), "<program>")


def run_weir(body, header=WEIR_HEADER):
    """RESULT of `header + body` under Weir, in this process (a fresh default
    graph first)."""
    import weir
    weir.reset_default_graph()
    return _exec_result(header + body, "<program under weir>")


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
