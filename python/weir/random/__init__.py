"""weir.random: tf.compat.v1.random — normal, uniform, truncated_normal,
shuffle, categorical/multinomial, the seed functions (TF1's graph-level +
op-level seed rules, see weir.ops.random_ops)."""
from weir.ops.random_ops import (  # noqa: F401
    categorical, get_seed, multinomial, random_crop, set_random_seed)
from weir.ops.random_ops import random_normal as normal  # noqa: F401
from weir.ops.random_ops import random_shuffle as shuffle  # noqa: F401
from weir.ops.random_ops import random_uniform as uniform  # noqa: F401
from weir.ops.random_ops import truncated_normal  # noqa: F401
from weir.ops.random_ops import random_gamma as gamma  # noqa: F401
from weir.ops.random_ops import random_poisson as poisson  # noqa: F401

from weir.ops.stateless_random_ops import stateless_normal, stateless_uniform  # noqa: F401

# TF2's name for the graph-level seed.
set_seed = set_random_seed

__all__ = ["categorical", "gamma", "get_seed", "poisson", "multinomial", "normal", "random_crop", "set_random_seed",
           "set_seed", "shuffle", "stateless_normal", "stateless_uniform", "truncated_normal",
           "uniform"]
