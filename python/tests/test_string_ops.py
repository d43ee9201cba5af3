"""wr.strings.regex_full_match / regex_replace (and wr.regex_replace, TF1's tf.regex_replace) over
the RE2 kernels, and wr.where on strings. Values are checked by hand and against Python's re on
patterns both engines read alike; TensorFlow's own values are tests/tf_compat's
(test_tf_sharded_saver_graph.py)."""
import re

import numpy as np
import pytest

import weir as wr


def test_weir_regex_wrappers_match_tensorflow_names():
    # The Python API: a str pattern makes the Static* op, a tensor pattern the other.
    with wr.Graph().as_default() as graph:
        x = wr.constant(["s3://a", "b1c22"])
        static = wr.strings.regex_full_match(x, "^s3://.*")
        dynamic = wr.strings.regex_full_match(x, wr.constant("[a-z0-9]+"))
        replaced = wr.strings.regex_replace(x, "[0-9]+", "#", replace_global=False)
        replaced_all = wr.regex_replace(x, wr.constant("[0-9]+"), "#")
        picked = wr.where(static, wr.fill([2], ".part"), wr.fill([2], "_temp/part"))
        assert static.op.type == "StaticRegexFullMatch" and dynamic.op.type == "RegexFullMatch"
        assert replaced.op.type == "StaticRegexReplace" and replaced_all.op.type == "RegexReplace"
        assert static.shape.as_list() == [2] and replaced.dtype == wr.string
        with wr.Session(graph=graph) as sess:
            got = sess.run([static, dynamic, replaced, replaced_all, picked])
    assert got[0].tolist() == [True, False]
    assert got[1].tolist() == [False, True]
    assert [bytes(v) for v in got[2]] == [b"s#://a", b"b#c22"]
    assert [bytes(v) for v in got[3]] == [b"s#://a", b"b#c#"]
    assert [bytes(v) for v in got[4]] == [b".part", b"_temp/part"]
    with wr.Graph().as_default():
        with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
            wr.strings.regex_full_match(wr.constant(["a"]), wr.constant(["a", "b"]))


def test_regex_ops_agree_with_pythons_re():
    inputs = ["a1b22c333", "", "mail bob@home and al@work", "  two  spaces\there ", "café"]
    rules = [("[0-9]+", "#", "#"), (r"(\w+)@(\w+)", r"\2 at \1", r"\2 at \1"),
             (r"\s+", "_", "_"), ("(é)", r"[\1]", r"[\1]"), ("o", r"\0\0", r"\g<0>\g<0>")]
    with wr.Graph().as_default() as graph:
        x = wr.placeholder(wr.string, [None])
        fetches = []
        for pattern, rewrite, _ in rules:
            fetches += [wr.strings.regex_replace(x, pattern, rewrite),
                        wr.strings.regex_replace(x, pattern, rewrite, replace_global=False),
                        wr.strings.regex_full_match(x, pattern + ".*")]
        with wr.Session(graph=graph) as sess:
            got = sess.run(fetches, {x: np.array([s.encode() for s in inputs], dtype=object)})
    for k, (pattern, _, python_rewrite) in enumerate(rules):
        every, first, matched = got[3 * k:3 * k + 3]
        assert [bytes(v).decode() for v in every] == [
            re.sub(pattern, python_rewrite, s) for s in inputs], pattern
        assert [bytes(v).decode() for v in first] == [
            re.sub(pattern, python_rewrite, s, count=1) for s in inputs], pattern
        assert matched.tolist() == [re.fullmatch(pattern + ".*", s, re.S) is not None
                                    and "\n" not in s for s in inputs], pattern


def test_invalid_patterns_name_the_node():
    with wr.Graph().as_default() as graph:
        x = wr.constant(["a"])
        bad_static = wr.strings.regex_full_match(x, "(unclosed", name="bad_static")
        bad_rewrite = wr.strings.regex_replace(x, "(a)", r"\2", name="bad_rewrite")
        pattern = wr.placeholder(wr.string, [])
        dynamic = wr.strings.regex_full_match(x, pattern, name="dynamic")
        with wr.Session(graph=graph) as sess:
            with pytest.raises(wr.errors.InvalidArgumentError, match="bad_static.*'[(]unclosed'"):
                sess.run(bad_static)
            with pytest.raises(wr.errors.InvalidArgumentError, match="bad_rewrite"):
                sess.run(bad_rewrite)
            with pytest.raises(wr.errors.InvalidArgumentError, match="dynamic.*pattern too large"):
                sess.run(dynamic, {pattern: r"\pL{1000}"})
            # The same kernel goes on with a good pattern.
            assert sess.run(dynamic, {pattern: "[a-z]"}).tolist() == [True]
