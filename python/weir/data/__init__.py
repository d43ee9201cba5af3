"""weir.data: TF1's tf.data input pipelines, graph mode (Dataset,
make_one_shot_iterator, make_initializable_iterator).

How weir runs them: the structure of a pipeline (sources, shuffle, repeat,
batch, take, skip, zip, concatenate) runs in Python, inside the iterator's
get_next node (a py_func: one element, or one batch, per run; the end is an
OutOfRangeError); the functions given to `map` are graph code applied to what
get_next yields, per element (a map followed by a batch runs under map_fn
over the batch). Since map commutes with shuffle, repeat, take, skip and zip,
this gives tf.data's results for stateless map functions; a map function's
random ops still draw per element. Source tensors (from_tensor_slices of a
placeholder, as TF1's initializable-iterator idiom) are inputs of the
initializer node, read when it runs. Shuffle seeds come from the graph seed
and the op seed (set_random_seed), but the order differs from TensorFlow's.

Iterator.from_structure (reinitializable: make_initializer(dataset)) and
Iterator.from_string_handle (feedable: an iterator's string_handle() fed)
build get_next before knowing the datasets, so there the map functions run in
a graph and session of their own, element by element (they may not use the
main graph's tensors).

filter, padded_batch, flat_map and interleave run the functions before them
(and their own) in a session of their own too, and continue in Python;
TextLineDataset / TFRecordDataset take a string tensor of file names (read
when the iterator starts), and list_files globs when the iterator starts.

An iterator's position is kept in Python and forgotten whenever a Session
opens on its graph (TF keeps one per session: a new session starts one-shot
iterators again and needs the initializers run again); two sessions open on
one graph at once share it.
"""
from weir.data.dataset import AUTOTUNE, Dataset, TextLineDataset, TFRecordDataset  # noqa: F401
from weir.data.iterator_ops import (  # noqa: F401
    Iterator, get_output_classes, get_output_shapes, get_output_types, make_initializable_iterator,
    make_one_shot_iterator)
from weir.data import experimental  # noqa: F401

__all__ = ["Dataset", "Iterator", "TextLineDataset", "TFRecordDataset", "experimental",
           "get_output_classes", "get_output_shapes", "get_output_types",
           "make_initializable_iterator", "make_one_shot_iterator"]
from weir.data.fixed_length import FixedLengthRecordDataset  # noqa: F401,E402  (tf1api)
__all__ = __all__ + ["FixedLengthRecordDataset"]
INFINITE_CARDINALITY = -1  # tf.data's cardinality constants (tf1api)
UNKNOWN_CARDINALITY = -2
__all__ = __all__ + ["INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
