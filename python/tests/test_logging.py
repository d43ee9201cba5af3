"""wr.Print (tf.compat.v1.Print), wr.print (tf.print), wr.strings.format and
Assert's message against TensorFlow 2.21: one program runs under both (each
in a subprocess, so the kernels' writes to the process's stderr and stdout
are captured whole) and what they write must be the same text."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from peers import PEERS_PYTHON  # noqa: E402

TF_PYTHON = pathlib.Path(PEERS_PYTHON)

PROGRAM = textwrap.dedent('''
    import json, os, re, sys
    a = tf.constant([[1, 2, 3], [4, 5, 6]])
    b = tf.constant([1.5, -2.25, 3.0, 4.0, 5.0, 6.0, 7.0])
    s = tf.constant(["hello", "wo rld"])
    sc = tf.constant(3.25, tf.float64)
    bo = tf.constant([True, False])
    big = tf.reshape(tf.range(60), [3, 4, 5])
    h = tf.constant([1e-7, 123456789.0, float("nan"), -float("inf")])
    d = tf.constant([0.1, 1 / 3], tf.float64)
    q = tf.constant(['a"b', "c'd", "back\\\\slash", "new\\nline\\ttab\\rcr",
                     "\\x01\\x1b\\x7f", "\\u00e9", ""])
    qs = tf.constant('q"uote\\n')
    empties = [tf.zeros([2, 0]), tf.zeros([0, 3]), tf.zeros([2, 0, 3]), tf.zeros([1, 0, 2]),
               tf.zeros([0]), tf.zeros([3, 2, 0], tf.int32), tf.zeros([2, 0], tf.string)]
    v1_prints = [v1.Print(b, [a, b, s, sc, bo, big], "msg: "),
                 v1.Print(a, [b, big], summarize=-1),
                 v1.Print(b, [], "only a message"),
                 v1.Print(b, [q, qs] + empties, "edges: ")]
    for limit in [0, 1, 2, 3, 4, 5, 6, 21, 59, 60]:
        v1_prints.append(v1.Print(tf.constant(0), [big, a, tf.reshape(tf.range(6), [2, 3, 1])],
                                  summarize=limit))
    first_two = v1.Print(a, [b], "first_n ", first_n=2)
    passed = v1.Print(b, [a]) * 2.0
    prints = [tf.print("x:", a, b, s, sc, bo, big, h, d),
              tf.print(b, big, summarize=2, sep="|", end="END\\n"),
              tf.print(big, summarize=-1),
              tf.print({"k": a}, [sc, 1]),
              tf.print(tf.reshape(tf.range(126), [3, 7, 6]), summarize=1),
              tf.print(tf.reshape(tf.range(14), [7, 2]), summarize=2),
              tf.print("braces {} in text", a),
              tf.print(tf.zeros([0, 3]), tf.constant(7)),
              tf.print("edges", q, qs, *empties),
              tf.print(q, tf.zeros([3, 4]), tf.zeros([2, 0]), summarize=0),
              tf.print(qs),
              tf.print(*empties, summarize=-1)]
    to_stdout = tf.print("to stdout", a, output_stream=sys.stdout)
    formats = [tf.strings.format("a={} b={}", (a, b), summarize=2),
               tf.strings.format("{}", s),
               tf.strings.format("a%sb{}c", (tf.constant(1),), placeholder="%s"),
               tf.strings.format("{} and {}", [h, d]),
               tf.strings.format("no inputs", []),
               tf.strings.format("{} {}", [q, qs]),
               tf.strings.format("{} | {} | {}", [q, tf.zeros([2, 3]), tf.zeros([0, 2, 0])],
                                 summarize=0),
               tf.strings.format(" | ".join(["{}"] * len(empties)), empties)]
    check = v1.Assert(False, ["x =", a, s, sc], summarize=2)
    with v1.Session() as sess:
        sys.stderr.flush()
        os.write(2, b"@@BEGIN\\n")
        for op in v1_prints:
            sess.run(op)
        for _ in range(3):
            sess.run(first_two)
        passed_value = sess.run(passed).tolist()
        for op in prints:
            sess.run(op)
        sess.run(to_stdout)
        sys.stdout.flush()
        formatted = [sess.run(f).decode() for f in formats]
        try:
            sess.run(check)
            message = None
        except Exception as e:
            message = re.search(r"assertion failed: [^\\n\\t]*", e.message).group(0).rstrip()
    print("RESULT " + json.dumps({"formats": formatted, "assert": message, "passed": passed_value}))
''')

TF_HEADER = ("import tensorflow as tf\nv1 = tf.compat.v1\nv1.disable_eager_execution()\n")
WEIR_HEADER = "import weir as tf\nv1 = tf\n"


def _run(python, header, env):
    proc = subprocess.run([python, "-c", header + PROGRAM], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    stderr = proc.stderr.split("@@BEGIN\n", 1)[1]
    # TensorFlow's own log lines (none with TF_CPP_MIN_LOG_LEVEL=3, but its
    # Python warnings may come) are not part of what the ops wrote.
    stderr = "".join(l for l in stderr.splitlines(True) if not l.startswith("WARNING:"))
    lines = proc.stdout.splitlines(True)
    result = json.loads(lines[-1][len("RESULT "):])
    return stderr, "".join(lines[:-1]), result


@pytest.fixture(scope="module")
def outputs():
    if not TF_PYTHON.exists():
        pytest.skip(f"TensorFlow's interpreter {TF_PYTHON} is missing (bench/peers installs it)")
    tf_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
                  TF_ENABLE_ONEDNN_OPTS="0")
    tf_env.pop("PYTHONPATH", None)
    return {"tf": _run(str(TF_PYTHON), TF_HEADER, tf_env),
            "weir": _run(sys.executable, WEIR_HEADER, dict(os.environ))}


def test_stderr_is_what_tensorflow_writes(outputs):
    tf_err, weir_err = outputs["tf"][0], outputs["weir"][0]
    # Spot checks first, so a failure says what differs.
    assert "msg: [[1 2 3]...][1.5 -2.25 3...][hello wo rld][3.25][1 0][[[0 1 2...]]...]\n" in weir_err
    assert weir_err.count("first_n [1.5 -2.25 3...]\n") == 2
    assert "[1e-07 123456792 nan -inf] [0.1 0.33333333333333331]" in weir_err
    assert '[a\\"b c\\\'d back\\\\slash...][q\\"uote\\n]' in weir_err  # v1: escaped, unquoted
    assert ' [\n ...] [] [\n\n ...] [\n\n ...] []' in weir_err  # tensors of no elements
    assert weir_err.splitlines() == tf_err.splitlines()
    assert weir_err == tf_err


def test_stdout_stream(outputs):
    assert outputs["weir"][1] == outputs["tf"][1] == "to stdout [[1 2 3]\n [4 5 6]]\n"


def test_string_format_and_assert_message(outputs):
    tf_result, weir_result = outputs["tf"][2], outputs["weir"][2]
    assert weir_result["formats"] == tf_result["formats"]
    assert weir_result["assert"] == tf_result["assert"]
    assert weir_result["assert"] == "assertion failed: [x =] [[1 2...]...] [hello wo rld] [3.25]"
    # Print passes its input through.
    assert weir_result["passed"] == tf_result["passed"] == [3.0, -4.5, 6.0, 8.0, 10.0, 12.0, 14.0]


def test_errors_name_the_problem():
    import weir as wr
    g = wr.Graph()
    with g.as_default():
        bad_template = wr.strings.format("{} {}", [wr.constant(1)])
        bad_stream = wr.print(wr.constant(1), output_stream="stdout")
        with wr.Session() as sess:
            with pytest.raises(wr.errors.InvalidArgumentError, match="2 placeholders"):
                sess.run(bad_template)
            sess.run(bad_stream)  # a PrintV2 stream name is accepted as is
    with pytest.raises(ValueError, match="Unsupported output stream"):
        wr.print(1, output_stream="nowhere")
    from weir.framework.op_def_library import apply_op
    g = wr.Graph()
    with g.as_default():
        # The kernel refuses a stream it does not know, naming it.
        bogus = apply_op("PrintV2", None, input=wr.constant("x"), output_stream="bogus")
        with wr.Session() as sess:
            with pytest.raises(wr.errors.InvalidArgumentError, match="'bogus'"):
                sess.run(bogus)
        # PrintV2 prints one string: a vector is refused when the graph is built.
        with pytest.raises(wr.errors.InvalidArgumentError):
            apply_op("PrintV2", None, input=wr.constant(["a", "b"]))


def test_print_v2_appends_to_a_file(tmp_path):
    import weir as wr
    path = tmp_path / "log.txt"
    g = wr.Graph()
    with g.as_default():
        op = wr.print("value:", wr.constant([1.5, 2.0]), output_stream="file://" + str(path))
        with wr.Session() as sess:
            sess.run(op)
            sess.run(op)
    assert path.read_text() == "value: [1.5 2]\nvalue: [1.5 2]\n"
