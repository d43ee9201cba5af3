"""Weir: a dataflow machine-learning system. `import weir as wr` gives
TensorFlow 1's graph API (tf.compat.v1): build a graph, run it in a Session.

    import weir as wr
    x = wr.placeholder(wr.float32, [None, 3])
    y = wr.reduce_sum(x * 2.0, axis=1)
    with wr.Session() as sess:
        print(sess.run(y, {x: [[1, 2, 3]]}))   # [12.]

Each module below defines __all__; their names are re-exported here.
"""
from weir.framework import errors  # noqa: F401  (registers the exception classes first)
from weir.framework.dtypes import *  # noqa: F401,F403
from weir.framework import dtypes  # noqa: F401,E402  (wr.dtypes.float32, as tf.dtypes)
from weir.framework.tensor_shape import *  # noqa: F401,F403
from weir.framework.ops import *  # noqa: F401,F403
from weir.framework.constant_op import *  # noqa: F401,F403
from weir.framework.importer import *  # noqa: F401,F403
from weir.framework.versions import *  # noqa: F401,F403
from weir.framework.tensor_util import make_tensor_proto, make_ndarray  # noqa: F401
from weir.client.session import *  # noqa: F401,F403
from weir.ops.array_ops import *  # noqa: F401,F403
from weir.ops.math_ops import *  # noqa: F401,F403
from weir.ops.linalg_ops import *  # noqa: F401,F403  (tf.matrix_inverse, tf.diag, ...; wins over array_ops' matrix_diag)
from weir.ops.nn_ops import *  # noqa: F401,F403
from weir.ops.random_ops import *  # noqa: F401,F403
from weir.ops.init_ops import *  # noqa: F401,F403
from weir.ops.control_flow_ops import *  # noqa: F401,F403
from weir.ops.check_ops import *  # noqa: F401,F403
from weir.ops.clip_ops import *  # noqa: F401,F403
from weir.ops.variables import *  # noqa: F401,F403
from weir.ops.state_ops import *  # noqa: F401,F403
from weir.ops.gradients_impl import *  # noqa: F401,F403
from weir.ops.variable_scope import *  # noqa: F401,F403
from weir.ops.data_flow_ops import *  # noqa: F401,F403
from weir.ops.accumulator_ops import *  # noqa: F401,F403
from weir.ops.io_ops import *  # noqa: F401,F403
from weir.ops.parsing_ops import *  # noqa: F401,F403
from weir.ops.sparse_ops import *  # noqa: F401,F403  (SparseTensor, IndexedSlices, tf.sparse_*)
from weir.ops.summary_ops import *  # noqa: F401,F403
from weir.ops.logging_ops import *  # noqa: F401,F403  (wr.print shadows print only as wr.print)
from weir.ops.string_ops import *  # noqa: F401,F403  (wr.regex_replace, TF1's tf.regex_replace)
from weir.ops.string_convert_ops import *  # noqa: F401,F403  (tf.as_string, tf.reduce_join...)
# TensorArray, map_fn/scan/foldl/foldr (the loops dynamic_rnn-style graphs use)
from weir.ops.tensor_array_ops import *  # noqa: F401,F403
from weir.ops.functional_ops import *  # noqa: F401,F403
from weir.ops.sequence_ops import *  # noqa: F401,F403  (reverse_sequence)
from weir.ops.numerics import *  # noqa: F401,F403  (check_numerics, add_check_numerics_ops)
from weir.ops.special_math_ops import *  # noqa: F401,F403  (TF1's tf.igamma, tf.complex, ...)
from weir.ops.array_extra_ops import *  # noqa: F401,F403  (roll, tensor_scatter_nd_*, bincount)
from weir.ops.signal_ops import fft, ifft, fft2d, ifft2d, fft3d, ifft3d  # noqa: F401,E402  (TF1's tf.fft)
from weir import nn, math, random, layers, initializers, summary, linalg, train  # noqa: F401
from weir import losses  # noqa: F401
from weir import debugging  # noqa: F401
from weir import image  # noqa: F401
from weir import io, python_io  # noqa: F401
from weir import saved_model  # noqa: F401
from weir import strings  # noqa: F401
from weir import signal  # noqa: F401
spectral = signal  # TF1's tf.spectral
from weir import raw_ops  # noqa: F401
from weir import distribute  # noqa: F401
from weir import sparse  # noqa: F401
# TF1's everyday surface besides the graph API (tf1misc).
from weir import metrics  # noqa: F401
from weir import app, flags, logging, gfile  # noqa: F401
from weir import compat, graph_util  # noqa: F401
from weir import data  # noqa: F401  (tf.data, run in Python: see weir.data)
from weir import lookup  # noqa: F401  (tf.lookup: hash tables)
from weir import test  # noqa: F401  (tf.test: TestCase and friends)
from weir.ops.script_ops import *  # noqa: F401,F403  (py_func, numpy_function)
from weir.ops.template_ops import *  # noqa: F401,F403  (make_template, confusion_matrix)
from weir.ops.custom_gradient import *  # noqa: F401,F403  (RegisterGradient, custom_gradient)
from weir.ops.tf1_extras import *  # noqa: F401,F403  (tf1api: TF1 top-level helpers)
from weir.debugging import (  # noqa: F401,E402  (tf1api: TF1's top-level asserts)
    assert_near, assert_rank_in, assert_same_float_dtype, assert_proper_iterable)
from weir import queue, manip, config, nest  # noqa: F401,E402  (tf1api)
from weir.ops.image_augment import random_crop  # noqa: F401  (tf.random_crop)
from weir.linalg import band_part as matrix_band_part  # noqa: F401,E402  (tf.matrix_band_part)


def tables_initializer(name="init_all_tables"):
    """The group of the TABLE_INITIALIZERS collection (TF1's: every static lookup
    table's initializer; a NoOp when there is none)."""
    from weir.ops import variables as _variables
    return _variables._group(get_collection(GraphKeys.TABLE_INITIALIZERS), name) \
        if get_collection(GraphKeys.TABLE_INITIALIZERS) else no_op(name=name)


initialize_all_tables = tables_initializer

__version__ = "0.1.0"


_PROTO_NAMES = ("GraphDef", "NodeDef", "AttrValue", "NameAttrList", "TensorProto",
                "TensorShapeProto", "VersionDef", "Summary", "SummaryMetadata", "HistogramProto",
                "Event", "SessionLog", "MetaGraphDef", "TensorInfo", "LogMessage")


def __getattr__(name):
    # tf.GraphDef & co. (TF1 scripts parse frozen graphs with them); protobuf
    # is imported on first use only.
    if name in _PROTO_NAMES:
        from weir.core import protos
        return getattr(protos, name)
    raise AttributeError(f"module 'weir' has no attribute {name!r}")
