"""TensorInfo messages for signatures (tf.compat.v1.saved_model.utils)."""
from weir.framework import ops

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor):
    """The TensorInfo (name, dtype, shape) of a dense Tensor."""
    from weir.core import protos
    if not isinstance(tensor, ops.Tensor):
        raise TypeError(f"build_tensor_info takes a dense Tensor, not {type(tensor).__name__} "
                        "(sparse and composite tensors are not supported)")
    info = protos.TensorInfo(name=tensor.name, dtype=tensor.dtype.as_datatype_enum)
    if tensor.shape.ndims is None:
        info.tensor_shape.unknown_rank = True
    else:
        for dim in tensor.shape.as_list():
            info.tensor_shape.dim.add(size=-1 if dim is None else dim)
    return info


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor of `graph` (default: the default graph) that a TensorInfo names."""
    graph = graph or ops.get_default_graph()
    prefix = (import_scope + "/") if import_scope else ""
    return graph.get_tensor_by_name(prefix + tensor_info.name)
