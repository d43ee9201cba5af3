"""weir.python_io (TF1's tf.python_io): TFRecordWriter, tf_record_iterator and
their options."""
from weir.io.tf_record import *  # noqa: F401,F403
