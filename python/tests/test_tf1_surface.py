"""TF1's everyday surface besides the graph: tf.app.run and tf.app.flags /
tf.flags, tf.logging, tf.gfile / tf.io.gfile. Each is checked against
TensorFlow 2.21 running the same program (only the import differs): a
program's printed values, exit status and log lines, and the results and
error classes of the file operations."""
import os
import re

import pytest

import weir as wr
from tf1_run import TF_HEADER, WEIR_HEADER, run_script, run_tf, run_weir

APP_PROGRAM = '''
import sys
flags = tf.app.flags
flags.DEFINE_string("name", "world", "who to greet")
flags.DEFINE_integer("steps", 3, "how many", lower_bound=1)
flags.DEFINE_boolean("shout", False, "upper case")
flags.DEFINE_float("lr", 0.5, "learning rate")
flags.DEFINE_list("layers", "8,4", "sizes")
flags.DEFINE_enum("mode", "train", ["train", "eval"], "what to do")
FLAGS = tf.flags.FLAGS

def main(argv):
    tf.logging.set_verbosity(tf.logging.INFO)
    text = "hello %s" % FLAGS.name
    print(text.upper() if FLAGS.shout else text)
    print("steps=%d lr=%g layers=%s mode=%s" % (FLAGS.steps, FLAGS.lr, FLAGS.layers, FLAGS.mode))
    print("argv=%s" % argv[1:])
    tf.logging.info("running %d steps", FLAGS.steps)
    tf.logging.debug("not shown")
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every 3: %d", 3, i)
    tf.logging.vlog(tf.logging.ERROR, "vlog %s", "error")
    tf.logging.log_if(tf.logging.INFO, "shown if %s", FLAGS.shout, "shouting")
    tf.logging.set_verbosity(tf.logging.ERROR)
    tf.logging.warning("hidden")
    tf.logging.error("verbosity %d", tf.logging.get_verbosity())
    sys.stdout.flush()
    return FLAGS.steps if FLAGS.mode == "eval" else 0

if __name__ == "__main__":
    tf.app.run()
'''

APP_ARGS = {
    "defaults": [],
    "flags_and_positionals": ["--name=Ann", "--shout", "pos1", "--steps", "5", "--layers=a,b",
                              "--mode=eval", "--undefined=1", "-lr=0.25", "pos2"],
    "negated_and_dashes": ["--noshout", "--nope", "--", "--steps=9"],
}


def _log_lines(stderr, logger):
    # TF also writes each record through absl's handler in glog's format;
    # the "LEVEL:logger:message" lines are the ones both write.
    return [line.replace(":%s:" % logger, ":X:") for line in stderr.splitlines()
            if re.match(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):%s:" % logger, line)]


@pytest.mark.parametrize("case", sorted(APP_ARGS))
def test_app_run_with_flags_and_logging_as_tf(case, tmp_path):
    args = APP_ARGS[case]
    header = "import tensorflow.compat.v1 as tf\n"
    tf_rc, tf_out, tf_err = run_script(header, APP_PROGRAM, args, tmp_path, weir=False)
    wr_rc, wr_out, wr_err = run_script(WEIR_HEADER, APP_PROGRAM, args, tmp_path)
    assert (wr_rc, wr_out) == (tf_rc, tf_out), (wr_err, tf_err[-3000:])
    assert _log_lines(wr_err, "weir") == _log_lines(tf_err, "tensorflow"), (wr_err, tf_err)
    assert _log_lines(wr_err, "weir"), wr_err  # something was logged
    if case == "flags_and_positionals":
        assert wr_rc == 5 and "HELLO ANN" in wr_out and "lr=0.25" in wr_out
        assert "argv=['pos1', '--undefined=1', 'pos2']" in wr_out  # undefined flags pass through


@pytest.mark.parametrize("args", [["--steps=0"], ["--steps=x"], ["--mode=test"], ["--help"]])
def test_app_run_refuses_bad_flags_with_status_1_as_tf(args, tmp_path):
    header = "import tensorflow.compat.v1 as tf\n"
    tf_rc, tf_out, _ = run_script(header, APP_PROGRAM, args, tmp_path, weir=False)
    wr_rc, wr_out, wr_err = run_script(WEIR_HEADER, APP_PROGRAM, args, tmp_path)
    assert wr_rc == tf_rc == 1
    assert "hello" not in wr_out and "hello" not in tf_out
    if args != ["--help"]:
        assert "FATAL Flags parsing error: flag --%s" % args[0][2:].split("=")[0] in wr_err
    else:
        assert "--steps" in wr_out and "how many" in wr_out


FLAGS_PROGRAM = '''
import json
F = tf.app.flags
F.DEFINE_string("name", "def", "help")
F.DEFINE_integer("steps", 10, "help", lower_bound=0)
F.DEFINE_float("lr", 0.1, "help")
F.DEFINE_boolean("verbose", False, "help")
F.DEFINE_enum("mode", "train", ["train", "eval"], "help")
F.DEFINE_list("layers", "1,2", "help")
F.DEFINE_multi_string("tag", ["x"], "help")
FLAGS = F.FLAGS
out = []
def attempt(label, fn):
    try:
        out.append([label, fn()])
    except Exception as e:
        out.append([label, type(e).__name__, str(e)])
attempt("unparsed_read_parses_argv", lambda: FLAGS.name)
attempt("parse", lambda: FLAGS(["prog", "--name=x", "pos1", "--steps", "5", "--verbose", "--lr=0.5",
                                "--layers=a,b,c", "pos2", "--mode", "eval", "--tag=a", "--tag", "b"]))
attempt("values", lambda: [FLAGS.name, FLAGS.steps, FLAGS.lr, FLAGS.verbose, FLAGS.mode, FLAGS.layers,
                           FLAGS.tag])
attempt("nobool", lambda: [FLAGS(["p", "--noverbose"]), FLAGS.verbose])
attempt("bool_false", lambda: [FLAGS(["p", "--verbose=false"]), FLAGS.verbose])
attempt("bool_then_word", lambda: [FLAGS(["p", "--verbose", "true"]), FLAGS.verbose])
attempt("unknown", lambda: FLAGS(["p", "--bogus=1"]))
attempt("unknown_known_only", lambda: FLAGS(["p", "--bogus=1", "--steps=2"], known_only=True))
attempt("bad_int", lambda: FLAGS(["p", "--steps=abc"]))
attempt("below_bound", lambda: FLAGS(["p", "--steps=-1"]))
attempt("bad_enum", lambda: FLAGS(["p", "--mode=x"]))
attempt("missing_value", lambda: FLAGS(["p", "--steps"]))
attempt("dashdash", lambda: FLAGS(["p", "--", "--steps=3"]))
attempt("single_dash", lambda: [FLAGS(["p", "-steps=4"]), FLAGS.steps])
attempt("assign", lambda: [setattr(FLAGS, "steps", 7), FLAGS.steps])
attempt("item", lambda: [FLAGS["steps"].value, FLAGS["steps"].default, FLAGS["steps"].help])
attempt("contains", lambda: ["steps" in FLAGS, "zz" in FLAGS])
attempt("same_module", lambda: tf.flags is tf.app.flags)
attempt("undefined_read", lambda: FLAGS.zz)
attempt("duplicate", lambda: type(F.DEFINE_string("name", "d", "h")).__name__)
attempt("is_parsed", lambda: FLAGS.is_parsed())
RESULT = out
'''


def test_flags_parse_as_tf(tmp_path):
    import json
    body = FLAGS_PROGRAM + "\nprint('RESULT ' + json.dumps(RESULT))\n"
    args = ["--name=from_argv"]
    tf_rc, tf_out, tf_err = run_script("import tensorflow.compat.v1 as tf\n", body, args, tmp_path,
                                       weir=False)
    wr_rc, wr_out, wr_err = run_script(WEIR_HEADER, body, args, tmp_path)
    assert tf_rc == 0 and wr_rc == 0, (wr_err, tf_err[-3000:])
    expected = json.loads(tf_out.split("RESULT ", 1)[1])
    got = json.loads(wr_out.split("RESULT ", 1)[1])
    assert [row[0] for row in got] == [row[0] for row in expected]
    for mine, theirs in zip(got, expected):
        if mine[0] == "duplicate":  # absl's message adds where each was defined
            assert mine[1:3] == theirs[1:3] == ["DuplicateFlagError", mine[2]] or \
                mine[1] == theirs[1] == "DuplicateFlagError", (mine, theirs)
            assert mine[2].startswith("The flag 'name' is defined twice.")
            continue
        assert mine == theirs
    assert dict((row[0], row[1:]) for row in got)["unparsed_read_parses_argv"] == ["from_argv"]


def test_log_first_n_and_every_n_count_per_call_site(caplog):
    # TF 2.21's log_first_n shares one counter among call sites (its first
    # two calls in a loop after log_every_n log once); weir counts per line,
    # as the documented contract says.
    import logging
    caplog.set_level(logging.INFO, logger="weir")
    old = wr.logging.get_verbosity()
    wr.logging.set_verbosity(wr.logging.INFO)
    try:
        for i in range(7):
            wr.logging.log_every_n(wr.logging.INFO, "every %d", 3, i)
            wr.logging.log_first_n(wr.logging.WARN, "first %d", 2, i)
        with pytest.raises(ValueError):
            wr.logging.log_every_n(wr.logging.INFO, "never", 0)
    finally:
        wr.logging.set_verbosity(old)
    messages = [r.getMessage() for r in caplog.records if r.name == "weir"]
    assert messages == ["every 0", "first 0", "first 1", "every 3", "every 6"]
    assert wr.logging.WARN == 30 and wr.logging.FATAL == 50


GFILE_PROGRAM = '''
import os, tempfile
d = tempfile.mkdtemp()
out = []
def attempt(label, fn):
    try:
        value = fn()
        out.append([label, value if isinstance(value, (str, int, float, bool, list, type(None)))
                    else repr(value)])
    except Exception as e:
        out.append([label, type(e).__name__])
def rel(paths):
    return sorted(os.path.relpath(p, d) for p in paths)
p = os.path.join(d, "a.txt")
missing = os.path.join(d, "nope")
lazy = tf.gfile.GFile(missing)
attempt("read_missing", lambda: lazy.read())
with tf.gfile.GFile(p, "w") as f:
    f.write("line1\\nline2\\nline3")
    f.write(b"!")
attempt("read", lambda: tf.gfile.GFile(p).read())
attempt("read_binary", lambda: list(tf.gfile.GFile(p, "rb").read(5)))
attempt("readlines", lambda: tf.gfile.GFile(p).readlines())
attempt("iterate", lambda: list(tf.gfile.GFile(p)))
attempt("size", lambda: tf.gfile.GFile(p).size())
attempt("readline_tell", lambda: (lambda f: [f.readline(), f.readline(), f.tell(), f.readline(),
                                             f.readline()])(tf.gfile.GFile(p)))
attempt("seek", lambda: (lambda f: [f.seek(2), f.read(3)])(tf.gfile.GFile(p)))
attempt("seek_end", lambda: (lambda f: [f.seek(-3, 2), f.read()])(tf.gfile.GFile(p)))
attempt("append", lambda: [tf.gfile.GFile(p, "a").write("?"), tf.gfile.Open(p).read()])
attempt("fast", lambda: list(tf.gfile.FastGFile(p, "rb").read()[-2:]))
attempt("bad_mode", lambda: tf.gfile.GFile(p, "x").read())
attempt("write_on_read", lambda: tf.gfile.GFile(p, "r").write("x"))
attempt("read_on_write", lambda: tf.gfile.GFile(p + "5", "w").read())
attempt("exists", lambda: [tf.gfile.Exists(p), tf.gfile.Exists(missing), tf.io.gfile.exists(d)])
attempt("mkdir_existing", lambda: tf.gfile.MkDir(d))
attempt("mkdir_no_parent", lambda: tf.gfile.MkDir(os.path.join(d, "x", "y")))
attempt("makedirs", lambda: [tf.gfile.MakeDirs(os.path.join(d, "m", "n")), tf.gfile.IsDirectory(os.path.join(d, "m"))])
attempt("makedirs_existing", lambda: tf.gfile.MakeDirs(d))
attempt("makedirs_on_file", lambda: tf.gfile.MakeDirs(p))
attempt("listdir_missing", lambda: tf.gfile.ListDirectory(missing))
attempt("listdir_file", lambda: tf.gfile.ListDirectory(p))
attempt("remove_missing", lambda: tf.gfile.Remove(missing))
attempt("remove_dir", lambda: tf.gfile.Remove(d))
attempt("lazy_write_creates_nothing", lambda: tf.gfile.Exists(p + "5"))
with tf.gfile.GFile(p + "5", "w") as f:
    f.write("five")
attempt("rename_onto_existing", lambda: tf.gfile.Rename(p, p + "5"))
attempt("copy_onto_existing", lambda: tf.gfile.Copy(p, p + "5"))
attempt("copy", lambda: [tf.gfile.Copy(p, p + "c"), tf.gfile.GFile(p + "c").read()])
attempt("copy_overwrite", lambda: [tf.gfile.Copy(p, p + "5", overwrite=True), tf.gfile.GFile(p + "5").read()])
attempt("rename_overwrite", lambda: [tf.gfile.Rename(p + "c", p + "5", overwrite=True),
                                     tf.gfile.Exists(p + "c")])
attempt("rename_missing", lambda: tf.gfile.Rename(missing, p + "6"))
attempt("rmtree_missing", lambda: tf.gfile.DeleteRecursively(missing))
attempt("rmtree_file", lambda: [tf.gfile.DeleteRecursively(p + "5"), tf.gfile.Exists(p + "5")])
attempt("stat", lambda: [tf.gfile.Stat(p).length, tf.gfile.Stat(p).is_directory,
                         tf.gfile.Stat(d).is_directory, tf.gfile.Stat(p).mtime_nsec > 10 ** 18])
attempt("stat_missing", lambda: tf.gfile.Stat(missing))
attempt("walk_missing", lambda: list(tf.gfile.Walk(missing)))
attempt("glob", lambda: rel(tf.gfile.Glob(os.path.join(d, "*.txt*"))))
attempt("glob_missing_dir", lambda: tf.gfile.Glob(os.path.join(missing, "*")))
os.makedirs(os.path.join(d, "sub", "deeper"))
open(os.path.join(d, "sub", "f1"), "w").close()
walk = lambda **kw: [[os.path.relpath(a, d), sorted(b), sorted(c)] for a, b, c in tf.gfile.Walk(d, **kw)]
attempt("walk", lambda: walk())
attempt("walk_post_order", lambda: walk(in_order=False))
attempt("listdir", lambda: sorted(tf.gfile.ListDirectory(d)))
attempt("io_listdir", lambda: sorted(tf.io.gfile.listdir(os.path.join(d, "sub"))))
attempt("io_walk", lambda: [os.path.relpath(a, d) for a, _, _ in tf.io.gfile.walk(os.path.join(d, "sub"))])
attempt("io_rmtree", lambda: [tf.io.gfile.rmtree(os.path.join(d, "sub")), tf.io.gfile.isdir(os.path.join(d, "sub"))])
attempt("io_join", lambda: tf.io.gfile.join("a", "b", "c"))
attempt("io_gfile_text", lambda: [tf.io.gfile.GFile(p, "w").write("z"), tf.io.gfile.GFile(p).read()])
RESULT = out
'''


def test_gfile_as_tf():
    expected = run_tf(GFILE_PROGRAM)
    got = run_weir(GFILE_PROGRAM)
    assert [row[0] for row in got] == [row[0] for row in expected]
    for mine, theirs in zip(got, expected):
        assert mine == theirs
    rows = dict((row[0], row[1]) for row in got)
    assert rows["read"] == "line1\nline2\nline3!" and rows["read_missing"] == "NotFoundError"
    assert rows["rename_onto_existing"] == "AlreadyExistsError"


def test_compat_v1_is_weir_whole(tmp_path):
    # `import weir.compat.v1 as tf` (and wr.compat.v1.X) as TF1 scripts write it.
    body = ("tf.disable_eager_execution()\ntf.disable_v2_behavior()\n"
            "x = tf.placeholder(tf.float32, [None])\n"
            "acc, up = tf.compat.v1.metrics.mean(x)\n"
            "with tf.Session() as sess:\n"
            "    sess.run(tf.local_variables_initializer())\n"
            "    sess.run(up, {x: [1.0, 2.0]})\n"
            "    print('RESULT', float(sess.run(acc)), tf.compat.as_text(b'ok'),\n"
            "          tf.compat.v1.executing_eagerly())\n")
    rc, out, err = run_script("import weir.compat.v1 as tf\n", body, (), tmp_path)
    assert rc == 0, err
    assert "RESULT 1.5 ok False" in out
    import weir.compat.v1 as v1
    assert v1.placeholder is wr.placeholder and v1.metrics is wr.metrics
    assert "placeholder" in dir(v1)
    with pytest.raises(NotImplementedError, match="graph mode only"):
        v1.enable_eager_execution()
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        v1.no_such_name  # noqa: B018
    assert wr.compat.as_bytes("é") == "é".encode() and wr.compat.as_text(b"x") == "x"
    with pytest.raises(TypeError):
        wr.compat.as_bytes(3)
