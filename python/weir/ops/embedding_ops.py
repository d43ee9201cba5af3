"""embedding_lookup_sparse and safe_embedding_lookup_sparse (TF1's
tf.nn.*): the embeddings of a SparseTensor of ids combined per row ("sum",
"mean" or "sqrtn", optionally weighted by a SparseTensor of weights), as TF
builds them: the unique ids looked up once (so the table's gradient is an
IndexedSlices of those rows), then SparseSegment{Sum,Mean,SqrtN} over the
rows, or a weighted SegmentSum."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.sparse_tensor import SparseTensor, SparseTensorValue
from weir.ops import array_ops
from weir.ops import math_ops
from weir.ops import nn_ops
from weir.ops import sparse_ops

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]


def _check_combiner(combiner):
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum', got %r" % combiner)
    return combiner


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None, allow_fast_lookup=False):
    """[rows, dim]: row r combines the embeddings of the ids in sp_ids' row r
    (rows with no id are 0 when within the largest row given, as TF)."""
    combiner = _check_combiner(combiner)
    if isinstance(sp_ids, SparseTensorValue):
        sp_ids = SparseTensor.from_value(sp_ids)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")
    if not isinstance(params, (list, tuple)):
        params = [params]
    with ops.name_scope(name, "embedding_lookup_sparse", [sp_ids.indices]) as name:
        segment_ids = array_ops.reshape(
            array_ops.slice(sp_ids.indices, [0, 0], [-1, 1]), [-1])
        segment_ids = math_ops.cast(segment_ids, dtypes.int32)
        ids, idx = array_ops.unique(sp_ids.values)
        embeddings = nn_ops.embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                             max_norm=max_norm)
        if sp_weights is None:
            op = {"sum": sparse_ops.sparse_segment_sum, "mean": sparse_ops.sparse_segment_mean,
                  "sqrtn": sparse_ops.sparse_segment_sqrt_n}[combiner]
            return op(embeddings, idx, segment_ids, name=name)
        weights = sp_weights.values
        embeddings = array_ops.gather(embeddings, idx)
        if weights.dtype != embeddings.dtype:
            weights = math_ops.cast(weights, embeddings.dtype)
        # weights [n] as [n, 1, ...] to broadcast over the embedding dims.
        ones = array_ops.fill(array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0), 1)
        bcast = array_ops.concat([array_ops.shape(weights), ones], 0)
        weights = array_ops.reshape(weights, bcast)
        embeddings = embeddings * weights
        summed = math_ops.segment_sum(embeddings, segment_ids)
        if combiner == "sum":
            return array_ops.identity(summed, name=name)
        if combiner == "mean":
            total = math_ops.segment_sum(weights, segment_ids)
        else:
            total = math_ops.sqrt(math_ops.segment_sum(weights * weights, segment_ids))
        return math_ops.div_no_nan(summed, total, name=name)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None,
                                 allow_fast_lookup=False):
    """embedding_lookup_sparse made total: ids < 0 (and weights <= 0 unless
    "sum") are dropped, empty rows give the default_id's embedding (zeros
    without one), ids of any rank give [batch..., dim]."""
    combiner = _check_combiner(combiner)
    if not isinstance(embedding_weights, (list, tuple)):
        embedding_weights = [embedding_weights]
    if isinstance(sparse_ids, SparseTensorValue):
        sparse_ids = SparseTensor.from_value(sparse_ids)
    with ops.name_scope(name, "embedding_lookup", [sparse_ids.indices]) as scope:
        original_shape = sparse_ids.dense_shape
        rank = array_ops.size(original_shape)
        outer = array_ops.slice(original_shape, [0], array_ops.expand_dims(rank - 1, 0))
        sparse_ids = sparse_ops.sparse_reshape(
            sparse_ids, array_ops.stack([math_ops.reduce_prod(outer),
                                         array_ops.gather(original_shape, rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        # Prune invalid ids (and non-positive weights unless summing).
        keep = math_ops.greater_equal(sparse_ids.values, 0)
        if sparse_weights is not None and combiner != "sum":
            keep = math_ops.logical_and(keep, math_ops.greater(sparse_weights.values, 0))
        sparse_ids = sparse_ops.sparse_retain(sparse_ids, keep)
        if sparse_weights is not None:
            sparse_weights = sparse_ops.sparse_retain(sparse_weights, keep)
        sparse_ids, is_row_empty = sparse_ops.sparse_fill_empty_rows(
            sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_ops.sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(
            embedding_weights, sparse_ids, sparse_weights, combiner=combiner,
            partition_strategy=partition_strategy,
            name=None if default_id is None else scope, max_norm=max_norm)
        if default_id is None:
            empty = array_ops.tile(array_ops.reshape(is_row_empty, [-1, 1]),
                                   array_ops.stack([1, array_ops.shape(result)[1]]))
            result = array_ops.where(empty, array_ops.zeros_like(result), result)
        final_shape = array_ops.concat([math_ops.cast(outer, dtypes.int32),
                                        array_ops.slice(array_ops.shape(result), [1], [-1])], 0)
        return array_ops.reshape(result, final_shape, name=None if default_id else scope)
