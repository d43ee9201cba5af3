"""weir.data.experimental: AUTOTUNE (accepted by map's num_parallel_calls and
prefetch, which weir's Python-run pipelines ignore)."""
from weir.data.dataset import AUTOTUNE  # noqa: F401

__all__ = ["AUTOTUNE"]
