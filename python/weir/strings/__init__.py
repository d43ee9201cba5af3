"""weir.strings: TF's tf.strings names that Weir has."""
from weir.ops.io_ops import string_join as join  # noqa: F401  (tf.strings.join)
from weir.ops.logging_ops import string_format as format  # noqa: F401,A001  (tf.strings.format)
from weir.ops.string_ops import regex_full_match, regex_replace, substr  # noqa: F401
from weir.ops.string_ops import string_length as length  # noqa: F401  (tf.strings.length)
from weir.ops.string_convert_ops import (  # noqa: F401
    as_string, lower, reduce_join, upper, string_strip as strip,
    string_to_hash_bucket_fast as to_hash_bucket_fast)

__all__ = ["format", "join", "length", "regex_full_match", "regex_replace", "substr", "as_string",
           "lower", "reduce_join", "strip", "to_hash_bucket_fast", "upper"]
