"""weir.saved_model: TensorFlow SavedModel directories in TF1's API
(tf.compat.v1.saved_model): `load(sess, tags, export_dir)` (also
`loader.load`) returns the loaded MetaGraphDef; `tag_constants` and
`signature_constants` hold the standard names."""
from weir.saved_model import loader, signature_constants, tag_constants  # noqa: F401
from weir.saved_model.loader import load, maybe_saved_model_directory, contains_saved_model  # noqa: F401
from weir.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY  # noqa: F401
from weir.saved_model.tag_constants import SERVING, TRAINING, GPU, TPU  # noqa: F401
