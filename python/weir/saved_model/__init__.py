"""weir.saved_model: TensorFlow SavedModel directories in TF1's API
(tf.compat.v1.saved_model): `load(sess, tags, export_dir)` (also
`loader.load`) returns the loaded MetaGraphDef; `simple_save` and `Builder`
write SavedModels that TensorFlow loads; `tag_constants`,
`signature_constants`, `utils` and `signature_def_utils` hold the standard
names and build signatures."""
from weir.saved_model import loader, signature_constants, tag_constants  # noqa: F401
from weir.saved_model import builder, signature_def_utils, utils  # noqa: F401
from weir.saved_model.builder import Builder, SavedModelBuilder, simple_save  # noqa: F401
from weir.saved_model.loader import load, maybe_saved_model_directory, contains_saved_model  # noqa: F401
from weir.saved_model.signature_def_utils import build_signature_def, predict_signature_def  # noqa: F401
from weir.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY  # noqa: F401
from weir.saved_model.tag_constants import SERVING, TRAINING, GPU, TPU  # noqa: F401
from weir.saved_model.utils import build_tensor_info  # noqa: F401
from weir.saved_model.tf1_extras import *  # noqa: F401,F403,E402  (tf1api: constants, signatures)
from weir.saved_model.signature_def_utils import is_valid_signature  # noqa: F401,E402
from weir.saved_model.utils import get_tensor_from_tensor_info  # noqa: F401,E402
