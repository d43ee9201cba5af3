"""TensorFlow 1 reference-variable graphs (VariableV2, Assign, ApplyGradientDescent, RefIdentity)
through wr.compat.v1.import_graph_def: Weir imports them as resource variables under the same
names (src/weir/graph/ref_variables.h). The GraphDef is written here by hand in TensorFlow's
text format; TensorFlow's own exports are run in tests/tf_compat/test_tf_ref_variables.py."""
import numpy as np
import pytest

import weir as wr
from weir.core import protos

GRAPH = '''
node { name: "w" op: "VariableV2"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } }
       attr { key: "container" value { s: "" } }
       attr { key: "shared_name" value { s: "" } } }
node { name: "w/initial_value" op: "Const"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                            float_val: 1 float_val: 2 } } } }
node { name: "w/Assign" op: "Assign" input: "w" input: "w/initial_value"
       attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "use_locking" value { b: true } }
       attr { key: "validate_shape" value { b: true } }
       attr { key: "_class" value { list { s: "loc:@w" } } } }
node { name: "w/read" op: "Identity" input: "w"
       attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "_class" value { list { s: "loc:@w" } } } }
node { name: "x" op: "Placeholder"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "y" op: "Mul" input: "w/read" input: "x"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "lr" op: "Const"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }
node { name: "sgd" op: "ApplyGradientDescent" input: "w" input: "lr" input: "x"
       attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "use_locking" value { b: false } } }
node { name: "alias" op: "RefIdentity" input: "w"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "alias_twice" op: "Add" input: "alias" input: "alias"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "is_init" op: "IsVariableInitialized" input: "w"
       attr { key: "dtype" value { type: DT_FLOAT } } }
'''


def graph_def(text):
    from google.protobuf import text_format
    message = protos.GraphDef()
    text_format.Parse(text, message)
    return message


def test_compat_v1_import_graph_def_runs_reference_variables():
    graph = wr.Graph()
    with graph.as_default():
        wr.compat.v1.import_graph_def(graph_def(GRAPH), name="")
        assert graph.get_operation_by_name("w").type == "ReadVariableOp"
        assert graph.get_operation_by_name("w/_handle").type == "VarHandleOp"
        assert graph.get_operation_by_name("sgd/_update").type == "ResourceApplyGradientDescent"
        with wr.Session() as sess:
            assert not sess.run("is_init:0")
            np.testing.assert_array_equal(sess.run("w/Assign:0"), [1, 2])
            assert sess.run("is_init:0")
            x = np.array([2.0, -4.0], np.float32)
            np.testing.assert_array_equal(sess.run("y:0", {"x:0": x}), [2, -8])
            # w -= 0.5 * x; the update's output is the new value.
            np.testing.assert_array_equal(sess.run("sgd:0", {"x:0": x}), [0, 4])
            np.testing.assert_array_equal(sess.run("w:0"), [0, 4])
            np.testing.assert_array_equal(sess.run("alias_twice:0"), [0, 8])


def test_compat_v1_import_graph_def_with_a_prefix():
    graph = wr.Graph()
    with graph.as_default():
        wr.compat.v1.import_graph_def(graph_def(GRAPH), name="model")
        with wr.Session() as sess:
            sess.run("model/w/Assign")
            np.testing.assert_array_equal(sess.run("model/w:0"), [1, 2])


def test_reference_op_without_a_resource_form_is_an_error():
    text = GRAPH + '''
node { name: "tmp" op: "TemporaryVariable"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
'''
    with wr.Graph().as_default():
        with pytest.raises(wr.errors.InvalidArgumentError, match="'tmp'.*TemporaryVariable"):
            wr.compat.v1.import_graph_def(graph_def(text), name="")


def test_scatter_row_and_slice_updates_of_variables():
    """The resource ops that TF1's ScatterMul... and ScatterNdUpdate... import as, from Python:
    values worked out by hand."""
    with wr.Graph().as_default():
        v = wr.Variable(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32), name="v")
        steps = [
            (wr.scatter_mul, [2], [[2.0, -1.0]], [[1, 2], [3, 4], [10, -6]]),
            (wr.scatter_div, [0], [[4.0, 0.5]], [[0.25, 4], [3, 4], [10, -6]]),
            (wr.scatter_max, [1, 2], [[3.5, 0.0], [9.0, 0.0]], [[0.25, 4], [3.5, 4], [10, 0]]),
            (wr.scatter_min, [2], [[2.0, 7.0]], [[0.25, 4], [3.5, 4], [2, 0]]),
            (wr.scatter_nd_update, [[1, 0]], [8.0], [[0.25, 4], [8, 4], [2, 0]]),
            (wr.scatter_nd_add, [[0]], [[1.0, 1.0]], [[1.25, 5], [8, 4], [2, 0]]),
            (wr.scatter_nd_sub, [[2, 1], [2, 1]], [1.0, 2.0], [[1.25, 5], [8, 4], [2, -3]]),
        ]
        updates = [op(v, np.array(i), np.array(u, np.float32)) for op, i, u, _ in steps]
        with wr.Session() as sess:
            sess.run(v.initializer)
            for update, (op, _, _, want) in zip(updates, steps):
                np.testing.assert_allclose(sess.run(update), want, err_msg=op.__name__)
