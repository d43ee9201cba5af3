"""weir.graph_util: TF1's tf.graph_util (tf.compat.v1.graph_util) — freezing
a trained graph and trimming GraphDefs.

    frozen = wr.graph_util.convert_variables_to_constants(
        sess, sess.graph.as_graph_def(), ["logits"])
    wr.io.write_graph(frozen, "model", "frozen.pb", as_text=False)

The GraphDefs are weir.core.protos.GraphDef messages (TensorFlow's wire
format: TF imports them and computes the same values)."""
import copy
import re

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.importer import import_graph_def  # noqa: F401  (tf.graph_util.import_graph_def)

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes",
           "must_run_on_cpu", "tensor_shape_from_node_def_name", "import_graph_def"]

_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _node_name(input_name):
    """"^a" / "a:1" / "a" -> "a"."""
    name = input_name[1:] if input_name.startswith("^") else input_name
    return name.split(":")[0]


def _check_graph_def(graph_def, fn):
    if not hasattr(graph_def, "node") or not hasattr(graph_def, "SerializeToString"):
        raise TypeError("%s: graph_def must be a GraphDef proto, got %s"
                        % (fn, type(graph_def).__name__))


def extract_sub_graph(graph_def, dest_nodes):
    """The nodes `dest_nodes` need (by data and control inputs), in their
    original order, with the library and versions of graph_def."""
    _check_graph_def(graph_def, "extract_sub_graph")
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be an iterable of strings.")
    by_name = {}
    order = {}
    for i, node in enumerate(graph_def.node):
        by_name[node.name] = node
        order[node.name] = i
    dest_nodes = list(dest_nodes)
    for name in dest_nodes:
        if name not in by_name:
            raise AssertionError("%s is not in graph" % name)
    keep = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        for inp in by_name[name].input:
            source = _node_name(inp)
            if source not in by_name:
                raise ValueError("extract_sub_graph: node %s has input %s, which names no node "
                                 "of the graph" % (name, inp))
            stack.append(source)
    out = type(graph_def)()
    out.node.extend(copy.deepcopy(by_name[n]) for n in sorted(keep, key=order.__getitem__))
    out.library.CopyFrom(graph_def.library)
    out.versions.CopyFrom(graph_def.versions)
    return out


def remove_training_nodes(input_graph, protected_nodes=None):
    """Drops CheckNumerics nodes and splices out Identity nodes (not those
    protected, those with or serving as control inputs, nor those another
    node is colocated with), as TF's remove_training_nodes."""
    _check_graph_def(input_graph, "remove_training_nodes")
    protected = set(protected_nodes or [])
    removed = {node.name for node in input_graph.node
               if node.op == "CheckNumerics" and node.name not in protected}
    after_removal = []
    for node in input_graph.node:
        if node.name in removed:
            continue
        new_node = copy.deepcopy(node)
        del new_node.input[:]
        new_node.input.extend(i for i in node.input if re.sub(r"^\^", "", i) not in removed)
        after_removal.append(new_node)
    control_targets = set()
    with_control_input = set()
    colocated = set()
    for node in after_removal:
        for inp in node.input:
            if inp.startswith("^"):
                control_targets.add(inp[1:])
                with_control_input.add(node.name)
        if "_class" in node.attr:
            for entry in node.attr["_class"].list.s:
                text = entry.decode("utf-8") if isinstance(entry, bytes) else entry
                if text.startswith("loc:@"):
                    colocated.add(text[len("loc:@"):])
    splice = {}
    for node in after_removal:
        if node.op != "Identity" or node.name in protected or node.name in colocated:
            continue
        if node.name in control_targets or node.name in with_control_input or not node.input:
            continue
        splice[node.name] = node.input[0]
    out = type(input_graph)()
    for node in after_removal:
        if node.name in splice:
            continue
        inputs = list(node.input)
        del node.input[:]
        for full in inputs:
            name = re.sub(r"^\^", "", full)
            while name in splice:
                full = splice[name]
                name = re.sub(r"^\^", "", full)
            node.input.append(full)
        out.node.append(node)
    return out


def _read_variable_values(sess, graph_def, names):
    """{variable node name: numpy value} read in `sess`: ref variables by
    their output, resource variables through a ReadVariableOp of the graph
    (one is added to sess.graph when the graph has none)."""
    graph = sess.graph
    fetches = {}
    readers = {}
    for node in graph_def.node:
        if node.op == "ReadVariableOp" and node.input:
            readers.setdefault(_node_name(node.input[0]), node.name + ":0")
    for name, op in names.items():
        if op != "VarHandleOp":
            fetches[name] = name + ":0"
            continue
        reader = readers.get(name)
        if reader is None or not _in_graph(graph, reader):
            from weir.framework.op_def_library import apply_op
            handle = graph.get_tensor_by_name(name + ":0")
            dtype = graph.get_operation_by_name(name).get_attr("dtype")
            with graph.as_default(), ops.name_scope(None):
                reader = apply_op("ReadVariableOp", name + "/FreezeRead", resource=handle,
                                  dtype=dtype).name
        fetches[name] = reader
    if not fetches:
        return {}
    keys = sorted(fetches)
    values = sess.run([fetches[k] for k in keys])
    return dict(zip(keys, values))


def _in_graph(graph, tensor_name):
    try:
        graph.get_tensor_by_name(tensor_name)
        return True
    except (KeyError, ValueError):
        return False


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """The part of input_graph_def that output_node_names need, with each of
    its variables (VariableV2 or VarHandleOp, limited by the white/black
    lists of variable node names) replaced by a Const of its value in `sess`:
    a ReadVariableOp of a converted variable becomes an Identity and a
    ResourceGather a GatherV2, as TF's. Logs how many were frozen."""
    _check_graph_def(input_graph_def, "convert_variables_to_constants")
    from weir.framework import tensor_util
    from weir import logging as wr_logging
    inference = extract_sub_graph(input_graph_def, output_node_names)
    whitelist = None if variable_names_whitelist is None else set(variable_names_whitelist)
    blacklist = set(variable_names_blacklist or [])
    to_convert = {}
    for node in inference.node:
        if node.op not in _VARIABLE_OPS:
            continue
        if (whitelist is not None and node.name not in whitelist) or node.name in blacklist:
            continue
        to_convert[node.name] = node.op
    values = _read_variable_values(sess, inference, to_convert)
    out = type(inference)()
    for node in inference.node:
        if node.name in to_convert:
            const = out.node.add()
            const.name = node.name
            const.op = "Const"
            dtype = node.attr["dtype"].type
            const.attr["dtype"].type = dtype
            value = values[node.name]
            proto = tensor_util.make_tensor_proto(value, dtype=dtypes.as_dtype(dtype),
                                                  shape=list(value.shape))
            const.attr["value"].tensor.ParseFromString(proto.SerializeToString())
            continue
        source = _node_name(node.input[0]) if node.input else None
        if node.op == "ReadVariableOp" and source in to_convert:
            ident = out.node.add()
            ident.CopyFrom(node)
            ident.op = "Identity"
            ident.attr["T"].type = node.attr["dtype"].type
            del ident.attr["dtype"]
            if "_class" in ident.attr:
                del ident.attr["_class"]
            continue
        if node.op == "ResourceGather" and source in to_convert:
            axis = out.node.add()
            axis.name = node.name + "/axis"
            axis.op = "Const"
            axis.attr["dtype"].type = dtypes.int32.as_datatype_enum
            axis_proto = tensor_util.make_tensor_proto(0, dtype=dtypes.int32)
            axis.attr["value"].tensor.ParseFromString(axis_proto.SerializeToString())
            if node.device:
                axis.device = node.device
            gather = out.node.add()
            gather.name = node.name
            gather.op = "GatherV2"
            gather.input.extend([node.input[0], node.input[1], axis.name])
            gather.input.extend(i for i in node.input[2:] if i.startswith("^"))
            gather.device = node.device
            gather.attr["Tparams"].type = node.attr["dtype"].type
            gather.attr["Tindices"].type = node.attr["Tindices"].type
            gather.attr["Taxis"].type = dtypes.int32.as_datatype_enum
            if "batch_dims" in node.attr:
                gather.attr["batch_dims"].i = node.attr["batch_dims"].i
            continue
        out.node.add().CopyFrom(node)
    out.library.CopyFrom(inference.library)
    out.versions.CopyFrom(inference.versions)
    wr_logging.info("Froze %d variables.", len(to_convert))
    wr_logging.info("Converted %d variables to const ops.", len(to_convert))
    return out


def must_run_on_cpu(node, pin_variables_on_cpu=False):
    """Whether TF's device functions keep `node` (an Operation or NodeDef) on
    the CPU: variables when pinned, int32 and string constants, int32
    (Parallel)DynamicStitch and casts from int32."""
    node_def = node.node_def if isinstance(node, ops.Operation) else node
    op = node_def.op
    if pin_variables_on_cpu and op in _VARIABLE_OPS:
        return True
    if op == "Const":
        return node_def.attr["dtype"].type in (dtypes.string.as_datatype_enum,
                                                dtypes.int32.as_datatype_enum)
    if op in ("DynamicStitch", "ParallelDynamicStitch"):
        return node_def.attr["T"].type == dtypes.int32.as_datatype_enum
    if op == "Cast":
        return node_def.attr["SrcT"].type == dtypes.int32.as_datatype_enum
    return False


def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of tensor `input_name` ("name" means "name:0")."""
    if ":" not in input_name:
        input_name += ":0"
    return graph.get_tensor_by_name(input_name).shape
