"""Writing SavedModel directories (tf.compat.v1.saved_model.Builder and
simple_save): saved_model.pb with one MetaGraphDef per tag set, the
variables as the checkpoint variables/variables, assets copied to assets/.
TensorFlow and Weir's loaders read what it writes.

    builder = wr.saved_model.Builder(export_dir)
    builder.add_meta_graph_and_variables(sess, [tag_constants.SERVING],
                                         signature_def_map={"serving_default": sig})
    builder.save()
"""
import os
import shutil

from weir.framework import ops
from weir.saved_model import signature_constants
from weir.saved_model import signature_def_utils
from weir.saved_model import tag_constants

__all__ = ["SavedModelBuilder", "Builder", "simple_save"]

_MAIN_OP_KEY = "saved_model_main_op"
_LEGACY_INIT_OP_KEY = "legacy_init_op"


class SavedModelBuilder:
    """Builds a SavedModel: add_meta_graph_and_variables once (it saves the
    variables), add_meta_graph for more tag sets of the same graph, then save."""

    def __init__(self, export_dir):
        export_dir = os.fspath(export_dir)
        if os.path.exists(export_dir) and os.listdir(export_dir):
            raise AssertionError(f"Export directory already exists, and isn't empty. Please "
                                 f"choose a different export directory, or delete all the "
                                 f"contents of the specified directory: {export_dir}")
        os.makedirs(export_dir, exist_ok=True)
        self._export_dir = export_dir
        from weir.core import protos
        self._saved_model = protos.SavedModel(saved_model_schema_version=1)
        self._saver = None
        self._graph = None

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None, strip_default_attrs=False,
                                     saver=None, init_op=None, train_op=None):
        """Saves the variables of sess and adds the MetaGraphDef for `tags`."""
        del strip_default_attrs, train_op  # defaults are kept; no train op collection
        if self._saver is not None:
            raise AssertionError("Graph state including variables and assets has already been "
                                 "saved. Please invoke `add_meta_graph()` instead.")
        from weir.train import saver as saver_lib
        with sess.graph.as_default():
            self._saver = saver or saver_lib.Saver(allow_empty=True)
        self._graph = sess.graph
        variables_dir = os.path.join(self._export_dir, "variables")
        os.makedirs(variables_dir, exist_ok=True)
        if self._saver.saver_def is not None:
            self._saver.save(sess, os.path.join(variables_dir, "variables"),
                             write_meta_graph=False, write_state=False)
        self._add_meta_graph(sess, tags, signature_def_map, assets_collection,
                             main_op or legacy_init_op or init_op,
                             _MAIN_OP_KEY if (main_op or init_op) else _LEGACY_INIT_OP_KEY,
                             clear_devices)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        """Adds another tag set's MetaGraphDef of the same graph and variables."""
        del strip_default_attrs, saver
        if self._saver is None:
            raise AssertionError("Variables and assets have not been saved yet. Please invoke "
                                 "`add_meta_graph_and_variables()` first.")
        self._add_meta_graph(None, tags, signature_def_map, assets_collection,
                             main_op or legacy_init_op,
                             _MAIN_OP_KEY if main_op else _LEGACY_INIT_OP_KEY, clear_devices)

    def _add_meta_graph(self, sess, tags, signature_def_map, assets_collection, init_op,
                        init_key, clear_devices):
        if isinstance(tags, str):
            tags = [tags]
        for key, signature in (signature_def_map or {}).items():
            if not signature_def_utils.is_valid_signature(signature):
                raise ValueError(f"signature '{key}' needs inputs, outputs and a method name")
        meta = self._saved_model.meta_graphs.add()
        meta.meta_info_def.tags.extend(tags)
        meta.meta_info_def.meta_graph_version = "weir"
        meta.graph_def.CopyFrom(self._graph.as_graph_def())
        if clear_devices:
            for node in meta.graph_def.node:
                node.device = ""
        fields = self._saver.saver_def
        if fields is not None:
            meta.saver_def.filename_tensor_name = fields["filename_tensor_name"]
            meta.saver_def.save_tensor_name = fields["save_tensor_name"]
            meta.saver_def.restore_op_name = fields["restore_op_name"]
            meta.saver_def.max_to_keep = fields["max_to_keep"]
            meta.saver_def.keep_checkpoint_every_n_hours = fields["keep_checkpoint_every_n_hours"]
            meta.saver_def.version = 2
        for key, signature in (signature_def_map or {}).items():
            meta.signature_def[key].CopyFrom(signature)
        if init_op is not None:
            op = init_op if isinstance(init_op, ops.Operation) else init_op.op
            meta.collection_def[init_key].node_list.value.append(op.name)
        self._add_assets(meta, sess, assets_collection)

    def _add_assets(self, meta, sess, assets_collection):
        assets_dir = os.path.join(self._export_dir, "assets")
        for tensor in assets_collection or []:
            value = tensor.op.get_attr("value") if tensor.op.type == "Const" else None
            if value is None or len(value.string_val) != 1:
                raise ValueError(f"asset tensor '{tensor.name}' must be a string constant "
                                 "holding the asset's path")
            source = value.string_val[0].decode()
            filename = os.path.basename(source)
            os.makedirs(assets_dir, exist_ok=True)
            destination = os.path.join(assets_dir, filename)
            if not os.path.exists(destination):
                shutil.copyfile(source, destination)
            asset = meta.asset_file_def.add()
            asset.tensor_info.name = tensor.name
            asset.filename = filename

    def save(self, as_text=False):
        """Writes saved_model.pb (saved_model.pbtxt with as_text); returns its path."""
        if as_text:
            from google.protobuf import text_format
            path = os.path.join(self._export_dir, "saved_model.pbtxt")
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, "saved_model.pb")
            data = self._saved_model.SerializeToString()
        temp = path + ".tmp"
        with open(temp, "wb") as f:
            f.write(data)
        os.replace(temp, path)
        return path


Builder = SavedModelBuilder


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves a serving SavedModel of `session`'s graph: tag "serve", one
    predict signature "serving_default" from dicts of key -> Tensor, the
    graph's asset_filepaths collection as its assets."""
    signature = signature_def_utils.predict_signature_def(inputs, outputs)
    builder = SavedModelBuilder(export_dir)
    assets = session.graph.get_collection(ops.GraphKeys.ASSET_FILEPATHS)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING],
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
        assets_collection=assets, main_op=legacy_init_op)
    builder.save()
