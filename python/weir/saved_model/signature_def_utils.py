"""SignatureDef messages (tf.compat.v1.saved_model.signature_def_utils)."""
from weir.saved_model import signature_constants
from weir.saved_model import utils

__all__ = ["build_signature_def", "predict_signature_def", "is_valid_signature"]


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef from dicts of key -> TensorInfo."""
    from weir.core import protos
    signature = protos.SignatureDef()
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    for key, value in (defaults or {}).items():
        from weir.framework import tensor_util
        signature.defaults[key].CopyFrom(tensor_util.make_tensor_proto(value))
    return signature


def predict_signature_def(inputs, outputs):
    """A predict SignatureDef from dicts of key -> Tensor."""
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: utils.build_tensor_info(t) for k, t in inputs.items()},
                               {k: utils.build_tensor_info(t) for k, t in outputs.items()},
                               signature_constants.PREDICT_METHOD_NAME)


def is_valid_signature(signature_def):
    """True for a SignatureDef with inputs, outputs and a method name."""
    return bool(signature_def.inputs and signature_def.outputs and signature_def.method_name)
