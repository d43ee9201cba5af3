"""weir.io (tf.io): TFRecord files, file ops and parsing, as TensorFlow's tf.io
(tf_record_iterator is TF1's tf.compat.v1.io.tf_record_iterator), gfile
(local files) and write_graph."""
from weir.io.tf_record import *  # noqa: F401,F403
from weir.ops.io_ops import matching_files, read_file, write_file  # noqa: F401
from weir.ops.string_convert_ops import decode_base64, encode_base64  # noqa: F401
from weir.ops.parsing_ops import (  # noqa: F401
    FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, SparseFeature, parse_example,
    parse_single_example, decode_raw, decode_csv, serialize_tensor, parse_tensor)
from weir.io import gfile  # noqa: F401,E402  (tf.io.gfile)
from weir.framework.graph_io import write_graph  # noqa: F401,E402  (tf.io.write_graph)
from weir.ops.image_codec_ops import (  # noqa: F401,E402  (tf.io's image codecs)
    decode_bmp, decode_jpeg, decode_png, decode_image, decode_and_crop_jpeg, encode_jpeg,
    encode_png, extract_jpeg_shape)
from weir.ops.data_flow_ops import (  # noqa: F401,E402  (tf1api: tf.io's queue classes)
    PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
from weir.ops.tf1_modules import match_filenames_once  # noqa: F401,E402  (tf1api)
