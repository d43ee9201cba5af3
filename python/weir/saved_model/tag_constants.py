"""The standard tags of a SavedModel's MetaGraphDefs (tf.saved_model.tag_constants)."""

__all__ = ["SERVING", "TRAINING", "EVAL", "GPU", "TPU"]

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"
