"""Loading a TensorFlow SavedModel directory into a session (TF1's
tf.compat.v1.saved_model.loader).

    with wr.Session(graph=wr.Graph()) as sess:
        meta = wr.saved_model.loader.load(sess, [tag_constants.SERVING], export_dir)
        sig = meta.signature_def["serving_default"]
        y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x})

load() picks the MetaGraphDef whose tags equal `tags`, imports its graph into
sess.graph (pruned, as Weir's C++ loader does, to what the signatures, the
restore op, the init op and the assets need), restores the variables by
running the SaverDef's restore op on <export_dir>/variables/variables, runs
the init op (the __saved_model_init_op signature, else the main op or
legacy init op collection) with each asset's tensor fed its path under
assets/, and returns the MetaGraphDef (weir.core.protos.MetaGraphDef).
"""
import os

from weir.framework import errors
from weir.framework import importer
from weir.framework import ops

__all__ = ["load", "maybe_saved_model_directory", "contains_saved_model"]

_PB = "saved_model.pb"
_PBTXT = "saved_model.pbtxt"
_INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
_MAIN_OP_KEYS = ("saved_model_main_op", "legacy_init_op")
_ASSETS_KEY = "saved_model_assets"


def maybe_saved_model_directory(export_dir):
    """True when `export_dir` holds a saved_model.pb or saved_model.pbtxt."""
    return any(os.path.isfile(os.path.join(export_dir, name)) for name in (_PB, _PBTXT))


contains_saved_model = maybe_saved_model_directory


def _read_saved_model(export_dir):
    from weir.core import protos
    model = protos.SavedModel()
    pb, pbtxt = os.path.join(export_dir, _PB), os.path.join(export_dir, _PBTXT)
    if os.path.isfile(pb):
        with open(pb, "rb") as f:
            data = f.read()
        try:
            model.ParseFromString(data)
        except Exception as e:  # protobuf's DecodeError differs between runtimes
            raise errors.DataLossError(None, None, f"could not parse '{pb}' ({len(data)} bytes) "
                                       f"as a SavedModel: {e}") from None
    elif os.path.isfile(pbtxt):
        from google.protobuf import text_format
        with open(pbtxt) as f:
            try:
                text_format.Parse(f.read(), model)
            except text_format.ParseError as e:
                raise errors.DataLossError(None, None, f"could not parse '{pbtxt}': {e}") from None
    else:
        raise errors.NotFoundError(None, None, f"no SavedModel in '{export_dir}': neither {_PB} "
                                   f"nor {_PBTXT} is there")
    return model


def _tag_set_string(tags):
    return "{" + ", ".join(sorted(tags)) + "}"


def _find_meta_graph(model, tags, export_dir):
    wanted = set(tags)
    available = []
    for meta in model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
        available.append(_tag_set_string(meta.meta_info_def.tags))
    raise RuntimeError(f"MetaGraphDef associated with tags {_tag_set_string(wanted)} could not be "
                       f"found in the SavedModel in '{export_dir}'; its tag sets are: "
                       f"{', '.join(available) or '(none)'}")


def _node_name(tensor_name):
    name = tensor_name[1:] if tensor_name.startswith("^") else tensor_name
    return name.rsplit(":", 1)[0] if ":" in name else name


def _init_op_name(meta):
    if _INIT_OP_SIGNATURE_KEY in meta.signature_def:
        outputs = meta.signature_def[_INIT_OP_SIGNATURE_KEY].outputs
        if _INIT_OP_SIGNATURE_KEY in outputs:
            return outputs[_INIT_OP_SIGNATURE_KEY].name
    for key in _MAIN_OP_KEYS:
        if key in meta.collection_def:
            values = meta.collection_def[key].node_list.value
            if len(values) != 1:
                raise RuntimeError(f"collection '{key}' must hold exactly one op, has "
                                   f"{len(values)}")
            return values[0]
    return None


def _assets(meta):
    from weir.core import protos
    assets = list(meta.asset_file_def)
    if _ASSETS_KEY in meta.collection_def:
        for any_value in meta.collection_def[_ASSETS_KEY].any_list.value:
            asset = protos.AssetFileDef()
            asset.ParseFromString(any_value.value)
            assets.append(asset)
    return assets


def _pruned_graph_def(graph_def, roots):
    """The nodes `roots` need through data and control inputs, in order."""
    from weir.core import protos
    by_name = {node.name: node for node in graph_def.node}
    keep, stack = set(), [_node_name(r) for r in roots]
    while stack:
        name = stack.pop()
        if name in keep or name not in by_name:
            continue
        keep.add(name)
        stack.extend(_node_name(i) for i in by_name[name].input)
    pruned = protos.GraphDef()
    pruned.CopyFrom(graph_def)
    del pruned.node[:]
    pruned.node.extend(n for n in graph_def.node if n.name in keep)
    return pruned


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraphDef tagged `tags` of the SavedModel in `export_dir`
    into `sess`; returns it. RuntimeError when no MetaGraphDef has those tags
    (as TensorFlow), NotFoundError for a missing saved_model.pb or checkpoint,
    DataLossError for a damaged one."""
    del saver_kwargs  # TF passes them to a Saver it builds; the graph's SaverDef is used here
    export_dir = os.fspath(export_dir)
    if isinstance(tags, str):
        tags = [tags]
    model = _read_saved_model(export_dir)
    meta = _find_meta_graph(model, tags, export_dir)
    prefix = (import_scope + "/") if import_scope else ""

    init_op = _init_op_name(meta)
    assets = _assets(meta)
    roots = []
    for key, signature in meta.signature_def.items():
        if key == _INIT_OP_SIGNATURE_KEY:
            continue
        roots += [t.name for t in signature.inputs.values()]
        roots += [t.name for t in signature.outputs.values()]
    saver = meta.saver_def if meta.HasField("saver_def") and meta.saver_def.restore_op_name \
        else None
    if saver is not None:
        roots += [saver.restore_op_name, saver.filename_tensor_name]
    if init_op:
        roots.append(init_op)
    roots += [asset.tensor_info.name for asset in assets]
    graph_def = _pruned_graph_def(meta.graph_def, roots)
    with sess.graph.as_default():
        importer.import_graph_def(graph_def, name=import_scope or "")

    asset_feeds = {}
    for asset in assets:
        name = asset.filename
        if not name or os.path.isabs(name) or ".." in name.split("/"):
            raise errors.InvalidArgumentError(None, None, f"asset file name '{name}' is not a "
                                              f"plain name under assets/")
        asset_feeds[prefix + asset.tensor_info.name] = os.path.join(export_dir, "assets", name)
    if saver is not None:
        checkpoint = os.path.join(export_dir, "variables", "variables")
        if not os.path.isfile(checkpoint + ".index"):
            raise errors.NotFoundError(None, None, f"the SavedModel in '{export_dir}' restores "
                                       f"variables (op '{saver.restore_op_name}') but has no "
                                       f"checkpoint '{checkpoint}.index'")
        feeds = dict(asset_feeds)
        feeds[prefix + saver.filename_tensor_name] = checkpoint
        sess.run(prefix + _node_name(saver.restore_op_name), feeds)
    if init_op:
        sess.run(prefix + _node_name(init_op), asset_feeds)
    return meta
