"""TensorFlow 2.21's own sharded-saver graph (tf.compat.v1.train.Saver(sharded=True), the default
inside MonitoredTrainingSession's Scaffold) imported and run by Weir: its save graph picks the
temporary path's suffix with StaticRegexFullMatch("^s3://.*") and a Select on strings. Weir
restores TensorFlow's checkpoint with the imported restore op, saves with the imported save op,
and TensorFlow reads that checkpoint back. Also TensorFlow's regex string ops on a string tensor
against the values TensorFlow computes."""
import json

import numpy as np
import pytest

import weir as wr

CPUS = {"device_count": {"CPU": 2}}

# The variables: name -> (device, initial value, value TensorFlow assigns before it saves).
VARIABLES = '''
VARIABLES = {
    "w": ("/cpu:0", np.arange(12, dtype=np.float32).reshape(3, 4),
          np.full([3, 4], -2.5, np.float32)),
    "layer/b": ("/cpu:1", np.array([1.0, 2.0, 3.0]), np.array([0.25, -7.0, 1e300])),
    "step": ("/cpu:1", np.int64(0), np.int64(2 ** 40 + 3)),
    "words": ("/cpu:0", np.array([b"alpha", b""], dtype=object),
              np.array([b"s3://bucket/x", b"\\xff\\x00\\xe9"], dtype=object)),
}
'''

SAVE = VARIABLES + '''
config = v1.ConfigProto(device_count={"CPU": 2})
g = tf.Graph()
with g.as_default():
    variables = {}
    for name, (device, initial, _) in VARIABLES.items():
        with tf.device(device):
            variables[name] = v1.Variable(initial, name=name, use_resource=True)
            tf.identity(variables[name], name="value/" + name)
    assign = tf.group(*[v.assign(VARIABLES[n][2]) for n, v in variables.items()], name="assign")
    saver = v1.train.Saver(sharded=True)
    os.makedirs(os.path.join(OUT, "tf"))
    with v1.Session(graph=g, config=config) as s:
        s.run(v1.global_variables_initializer())
        s.run(assign)
        path = saver.save(s, os.path.join(OUT, "tf", "model.ckpt"), global_step=5)
with open(os.path.join(OUT, "save.json"), "w") as f:
    json.dump({"path": path, "ops": sorted({n.op for n in g.as_graph_def().node}),
               "sharded": saver.saver_def.sharded}, f)
'''

READ = VARIABLES + '''
def same(got):
    return sorted(got) == sorted(VARIABLES) and all(
        got[n].dtype == np.asarray(VARIABLES[n][1]).dtype and
        np.array_equal(got[n], VARIABLES[n][1]) for n in VARIABLES)
r = tf.train.load_checkpoint(PATH)
read = {name: r.get_tensor(name) for name in r.get_variable_to_shape_map()}
# The .meta Weir wrote beside it: TensorFlow imports it and restores through it.
g = tf.Graph()
with g.as_default():
    saver = v1.train.import_meta_graph(PATH + ".meta")
    with v1.Session(graph=g, config=v1.ConfigProto(device_count={"CPU": 2})) as s:
        saver.restore(s, PATH)
        restored = dict(zip(VARIABLES, s.run(["value/" + n + ":0" for n in VARIABLES])))
with open(os.path.join(OUT, "read.json"), "w") as f:
    json.dump({"read": same(read), "restored": same(restored), "sharded": saver.saver_def.sharded,
               "got": {n: repr(v) for n, v in read.items()}}, f)
'''


def expected_values():
    scope = {"np": np}
    exec(VARIABLES, scope)  # noqa: S102  (the same table TensorFlow's scripts use)
    return scope["VARIABLES"]


def read_values(sess, graph):
    names = sorted(expected_values())
    got = sess.run([graph.get_tensor_by_name(f"value/{n}:0") for n in names])
    return dict(zip(names, got))


def assert_values(got, column):
    for name, entry in expected_values().items():
        want = np.asarray(entry[column])
        value = np.asarray(got[name])
        assert value.shape == want.shape, name
        if want.dtype == object:
            assert [bytes(x) for x in value.ravel()] == list(want.ravel()), name
        else:
            assert value.dtype == want.dtype, name
            np.testing.assert_array_equal(value, want, err_msg=name)


def test_tf_sharded_saver_meta_graph_restores_and_saves(run_tf, tmp_path):
    out = run_tf("import json\n" + SAVE, "sharded_saver")
    saved = json.loads((out / "save.json").read_text())
    assert saved["sharded"]
    # What this test is about: TensorFlow's sharded save graph holds these.
    assert {"StaticRegexFullMatch", "Select", "StringJoin", "ShardedFilename",
            "MergeV2Checkpoints"} <= set(saved["ops"])
    tf_path = saved["path"]
    graph = wr.Graph()
    with graph.as_default():
        saver = wr.train.import_meta_graph(tf_path + ".meta")
        assert saver is not None
        types = {op.type for op in graph.get_operations()}
        assert {"StaticRegexFullMatch", "Select"} <= types
        with wr.Session(graph=graph, config=wr.ConfigProto(**CPUS)) as sess:
            sess.run(graph.get_operation_by_name("init"))
            assert_values(read_values(sess, graph), 1)
            # TensorFlow's values, through the graph's own RestoreV2 ops.
            saver.restore(sess, tf_path)
            assert_values(read_values(sess, graph), 2)
            # Back to the initial values, saved by the graph's own sharded save
            # (regex, Select, StringJoin, one SaveV2 per device, MergeV2Checkpoints).
            sess.run(graph.get_operation_by_name("init"))
            (tmp_path / "weir").mkdir()
            weir_path = saver.save(sess, str(tmp_path / "weir" / "model.ckpt"), global_step=6)
            assert weir_path == str(tmp_path / "weir" / "model.ckpt-6")
            # Restoring it gives them back after TensorFlow's values were restored again.
            saver.restore(sess, tf_path)
            saver.restore(sess, weir_path)
            assert_values(read_values(sess, graph), 1)
    # The merged checkpoint only: the temporary shards are gone.
    names = sorted(p.name for p in (tmp_path / "weir").iterdir())
    assert names == ["checkpoint", "model.ckpt-6.data-00000-of-00002",
                     "model.ckpt-6.data-00001-of-00002", "model.ckpt-6.index",
                     "model.ckpt-6.meta"], names
    # TensorFlow reads Weir's checkpoint, and restores it through the .meta Weir wrote.
    read = json.loads((run_tf(f"PATH = {weir_path!r}\nimport json\n" + READ, "read_back")
                       / "read.json").read_text())
    assert read["read"] and read["restored"] and read["sharded"], read


INPUTS = ["s3://bucket/model", "/tmp/s3://x", "", "abc123 def45", "café é", "aaa", "xx yy",
          "mail bob@home and al@work"]

REGEX_GRAPH = '''
INPUTS = %r
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.string, [None], name="x")
    pattern = v1.placeholder(tf.string, [], name="pattern")
    rewrite = v1.placeholder(tf.string, [], name="rewrite")
    outputs = {
        "s3": tf.strings.regex_full_match(x, "^s3://.*"),
        "words": tf.strings.regex_full_match(x, "[a-z]+[0-9]* [a-z]+[0-9]*"),
        "dynamic_match": tf.strings.regex_full_match(x, pattern),
        "digits": tf.strings.regex_replace(x, "[0-9]+", "#"),
        "first_digits": tf.strings.regex_replace(x, "[0-9]+", "#", replace_global=False),
        "swap": tf.strings.regex_replace(x, "(\\\\w+)@(\\\\w+)", "\\\\2 at \\\\1"),
        "empty": tf.strings.regex_replace(x, "a*", "<\\\\0>"),
        "utf8": tf.strings.regex_replace(x, "", "|"),
        "dynamic_replace": tf.strings.regex_replace(x, pattern, rewrite),
        "dynamic_first": tf.strings.regex_replace(x, pattern, rewrite, replace_global=False),
        "suffix": v1.where(tf.strings.regex_full_match(x, "^s3://.*"),
                           tf.fill(tf.shape(x), ".part"), tf.fill(tf.shape(x), "_temp/part")),
        "suffix_v2": tf.where(tf.strings.regex_full_match(x, "^s3://.*"), ".part", "_temp/part"),
    }
    outputs = {k: tf.identity(v, name="out_" + k) for k, v in outputs.items()}
    feeds = [("(y)", "\\\\1\\\\1"), ("([ae])", "[\\\\1]"), ("", "-")]
    cases = []
    with v1.Session(graph=g) as s:
        for p, r in feeds:
            got = s.run(outputs, {x: INPUTS, pattern: p, rewrite: r})
            cases.append({"pattern": p, "rewrite": r, "outputs": {
                k: [e.decode("latin-1") if isinstance(e, bytes) else bool(e) for e in v.tolist()]
                for k, v in got.items()}})
        try:
            s.run(outputs["dynamic_match"], {x: INPUTS, pattern: "(unclosed", rewrite: ""})
            error = None
        except tf.errors.InvalidArgumentError as e:
            error = e.message
save_graph(g.as_graph_def(), "regex")
import json
with open(os.path.join(OUT, "regex.json"), "w") as f:
    json.dump({"cases": cases, "error": error}, f)
''' % (INPUTS,)


def test_tf_regex_string_graph(run_tf):
    out = run_tf(REGEX_GRAPH, "regex")
    recorded = json.loads((out / "regex.json").read_text())
    assert recorded["error"] is not None
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "regex.pb").read_bytes(), name="")
    names = sorted(recorded["cases"][0]["outputs"])
    fetches = [graph.get_tensor_by_name(f"out_{k}:0") for k in names]
    picks = {k: graph.get_tensor_by_name(f"out_{k}:0").op.inputs[0].op.type
             for k in ("suffix", "suffix_v2")}
    assert picks == {"suffix": "Select", "suffix_v2": "SelectV2"}, picks
    x = np.array([s.encode() for s in INPUTS], dtype=object)
    with wr.Session(graph=graph) as sess:
        for case in recorded["cases"]:
            got = sess.run(fetches, {"x:0": x, "pattern:0": case["pattern"],
                                     "rewrite:0": case["rewrite"]})
            for name, value in zip(names, got):
                want = case["outputs"][name]
                if isinstance(want[0], bool):
                    assert value.dtype == np.bool_, name
                    assert value.tolist() == want, (name, case["pattern"])
                else:
                    assert [bytes(v) for v in value.tolist()] == [w.encode("latin-1")
                                                                 for w in want], (name, case)
        with pytest.raises(wr.errors.InvalidArgumentError) as info:
            sess.run(fetches[names.index("dynamic_match")],
                     {"x:0": x, "pattern:0": "(unclosed", "rewrite:0": ""})
    message = str(info.value)
    assert "'(unclosed'" in message and "missing )" in message, message
    assert "RegexFullMatch" in message, message

