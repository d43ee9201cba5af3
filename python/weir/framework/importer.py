"""import_graph_def (TF1's tf.import_graph_def): adds the nodes of a GraphDef
— weir's or TensorFlow's message, its binary serialization, or its text
format — to the default graph under the name scope `name` ("import").
input_map replaces imported tensors ("name:idx", "name" = ":0") or control
inputs ("^name") by existing ones; return_elements names the imported
Operations ("name") and Tensors ("name:idx") to return. The C++ importer
validates every node (unknown op or attr, bad input) with an error naming it.
producer_op_list (an OpList message or its bytes: the OpDefs of the graph's
producer, as in a MetaGraphDef's stripped_op_list) applies TensorFlow's
forward-compatibility rule: an attr weir's op does not declare is dropped when
its value is the producer's default for it, and is an error otherwise.
"""
from weir.framework import ops

__all__ = ["import_graph_def"]


def _graph_def_bytes(graph_def):
    if isinstance(graph_def, (bytes, bytearray, memoryview)):
        return bytes(graph_def)
    if isinstance(graph_def, str):
        from google.protobuf import text_format
        from weir.core import protos
        message = protos.GraphDef()
        try:
            text_format.Parse(graph_def, message)
        except text_format.ParseError as e:
            raise ValueError(f"import_graph_def: the text is not a GraphDef in text format: "
                             f"{e}") from None
        return message.SerializeToString()
    serialize = getattr(graph_def, "SerializeToString", None)
    if serialize is None:
        raise TypeError(f"graph_def must be a GraphDef proto (or its bytes or text), not "
                        f"{type(graph_def).__name__}.")
    return serialize()


def _op_list_bytes(op_list):
    if op_list is None:
        return None
    if isinstance(op_list, (bytes, bytearray, memoryview)):
        return bytes(op_list)
    serialize = getattr(op_list, "SerializeToString", None)
    if serialize is None:
        raise TypeError(f"producer_op_list must be an OpList proto (or its bytes), not "
                        f"{type(op_list).__name__}.")
    return serialize()


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Imports `graph_def` into the default graph; returns the elements
    `return_elements` names (None when it is None)."""
    del op_dict  # TF's deprecated argument; defaults come from the registry
    data = _graph_def_bytes(graph_def)
    producer = _op_list_bytes(producer_op_list)
    input_map = dict(input_map or {})
    for key in input_map:
        if not isinstance(key, str):
            raise ValueError(f"input_map must be a dictionary mapping strings to Tensor objects, "
                             f"got key {key!r}")
    if return_elements is not None:
        return_elements = list(return_elements)
        for element in return_elements:
            if not isinstance(element, str):
                raise TypeError(f"return_elements must be a list of strings, got {element!r}")

    values = list(input_map.values())
    g = ops._get_graph_from_inputs([v for v in values if isinstance(v, (ops.Tensor,
                                                                         ops.Operation))])
    mapped = {}
    for key, value in input_map.items():
        if key.startswith("^"):
            op = ops._as_operation(value, for_control_dependencies=True)
            if op.graph is not g:
                raise ValueError(f"input_map[{key!r}] is not an element of this graph.")
            mapped[key] = op._id
        else:
            if not isinstance(value, ops.Tensor):
                value = ops.convert_to_tensor(value)
            if value.graph is not g:
                raise ValueError(f"input_map[{key!r}] is not an element of this graph.")
            mapped[key] = value._as_endpoint()

    with g.as_default(), ops.name_scope(name, "import", None) as scope:
        prefix = scope[:-1] if scope else ""
        g._check_not_finalized()
        location = ops._user_source_location()
        new_ids = g._c_graph.import_graph_def(data, prefix, mapped, location, producer)
        for node_id in new_ids:
            g._op_for_id(node_id)  # registers the names as taken

    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        full = f"{prefix}/{element}" if prefix else element
        try:
            results.append(g.as_graph_element(full))
        except (KeyError, ValueError):
            raise ValueError(f"Requested return_element {element!r} not found in graph_def."
                             ) from None
    return results
