"""tf1api: tf.compat.v1.saved_model's constants and signature helpers."""
from weir.saved_model.signature_constants import (  # noqa: F401
    CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
    PREDICT_INPUTS, PREDICT_METHOD_NAME, PREDICT_OUTPUTS, REGRESS_INPUTS, REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS)
from weir.saved_model import signature_constants, utils

ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"


def _info(t):
    return utils.build_tensor_info(t)


def classification_signature_def(examples, classes, scores):
    """A classify SignatureDef: examples a string Tensor; classes (string)
    and/or scores (float)."""
    from weir.framework import dtypes
    from weir.saved_model.signature_def_utils import build_signature_def
    if examples is None:
        raise ValueError("Classification `examples` cannot be None.")
    if examples.dtype.base_dtype != dtypes.string:
        raise ValueError("Classification `examples` must be a string Tensor. Found `examples` "
                         "of dtype %s, should be tf.string." % examples.dtype.name)
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    outputs = {}
    if classes is not None:
        if classes.dtype.base_dtype != dtypes.string:
            raise ValueError("Classification `classes` must be a string Tensor. Found `classes` "
                             "of dtype %s, should be tf.string." % classes.dtype.name)
        outputs[signature_constants.CLASSIFY_OUTPUT_CLASSES] = _info(classes)
    if scores is not None:
        if scores.dtype.base_dtype != dtypes.float32:
            raise ValueError("Classification `scores` must be a float32 Tensor. Found `scores` "
                             "of dtype %s, should be tf.float32." % scores.dtype.name)
        outputs[signature_constants.CLASSIFY_OUTPUT_SCORES] = _info(scores)
    return build_signature_def({signature_constants.CLASSIFY_INPUTS: _info(examples)}, outputs,
                               signature_constants.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A regress SignatureDef: examples a string Tensor, predictions float."""
    from weir.framework import dtypes
    from weir.saved_model.signature_def_utils import build_signature_def
    if examples is None:
        raise ValueError("Regression `examples` cannot be None.")
    if examples.dtype.base_dtype != dtypes.string:
        raise ValueError("Regression `examples` must be a string Tensor. Found `examples` of "
                         "dtype %s, should be tf.string." % examples.dtype.name)
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    if predictions.dtype.base_dtype != dtypes.float32:
        raise ValueError("Regression `predictions` must be a float32 Tensor. Found "
                         "`predictions` of dtype %s, should be tf.float32."
                         % predictions.dtype.name)
    return build_signature_def({signature_constants.REGRESS_INPUTS: _info(examples)},
                               {signature_constants.REGRESS_OUTPUTS: _info(predictions)},
                               signature_constants.REGRESS_METHOD_NAME)


def main_op():
    """The group of the local variables' and tables' initializers."""
    import weir as wr
    return wr.group(wr.local_variables_initializer(), wr.tables_initializer())


def main_op_with_restore(restore_op_name):
    """main_op run after the op named restore_op_name."""
    import weir as wr
    with wr.control_dependencies([restore_op_name]):
        return wr.group(wr.local_variables_initializer(), wr.tables_initializer())
