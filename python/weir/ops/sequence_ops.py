"""wr.reverse_sequence (TF1's tf.reverse_sequence): Weir has no
ReverseSequence op, so it is composed: a GatherNd whose indices send step t
of batch entry b to step len[b] - 1 - t (t < len[b]; later steps stay), its
own inverse, so the gradient (GatherNd's, a ScatterNd) is exact. A length
outside [0, dim(seq_axis)] fails the step with InvalidArgumentError, as TF's
kernel does."""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import control_flow_ops
from weir.ops import math_ops

__all__ = ["reverse_sequence"]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """`input` with, for each b along batch_axis, its first seq_lengths[b]
    entries along seq_axis reversed (the rest kept)."""
    if seq_dim is not None:
        if seq_axis is not None and seq_axis != seq_dim:
            raise ValueError("seq_axis and seq_dim must be the same if both are given")
        seq_axis = seq_dim
    if batch_dim is not None:
        if batch_axis is not None and batch_axis != batch_dim:
            raise ValueError("batch_axis and batch_dim must be the same if both are given")
        batch_axis = batch_dim
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis is required")
    batch_axis = 0 if batch_axis is None else int(batch_axis)
    seq_axis = int(seq_axis)
    with ops.name_scope(name, "ReverseSequence", [input, seq_lengths]):
        x = ops.convert_to_tensor(input, name="input")
        lengths = ops.convert_to_tensor(seq_lengths, name="seq_lengths")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("reverse_sequence: the input's rank must be known (%s)" % x.name)
        for what, axis in (("seq_axis", seq_axis), ("batch_axis", batch_axis)):
            if not 0 <= axis < rank:
                raise ValueError("reverse_sequence: %s %d is out of range for the input's rank %d"
                                 % (what, axis, rank))
        if seq_axis == batch_axis:
            raise ValueError("reverse_sequence: seq_axis == batch_axis == %d" % seq_axis)
        if lengths.shape.ndims not in (None, 1):
            raise ValueError("reverse_sequence: seq_lengths must be a vector, got shape %s"
                             % lengths.shape)
        if lengths.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("reverse_sequence: seq_lengths must be int32 or int64, got %s"
                            % lengths.dtype.name)
        batch_dim = x.shape.as_list()[batch_axis]
        if lengths.shape.ndims == 1 and None not in (batch_dim, lengths.shape.as_list()[0]) and \
                batch_dim != lengths.shape.as_list()[0]:
            raise ValueError("reverse_sequence: len(seq_lengths) %d != input.dims(%d) %d" % (
                lengths.shape.as_list()[0], batch_axis, batch_dim))
        # [batch, seq, the rest...]
        perm = [batch_axis, seq_axis] + [i for i in range(rank) if i not in (batch_axis, seq_axis)]
        inverse = [perm.index(i) for i in range(rank)]
        moved = array_ops.transpose(x, perm) if perm != list(range(rank)) else x
        lengths = math_ops.cast(lengths, dtypes.int32)
        shape = array_ops.shape(moved)
        batch, time = shape[0], shape[1]
        ok = math_ops.logical_and(
            math_ops.reduce_all(math_ops.greater_equal(lengths, 0)),
            math_ops.reduce_all(math_ops.less_equal(lengths, time)))
        check = control_flow_ops.Assert(
            ok, ["reverse_sequence: seq_lengths must be in [0, dim(seq_axis)] = [0, ", time,
                 "], got ", lengths])
        with ops.control_dependencies([check]):
            lengths = array_ops.identity(lengths)
        t = array_ops.expand_dims(math_ops.range(time), 0)       # [1, T]
        lens = array_ops.expand_dims(lengths, 1)                   # [B, 1]
        src = array_ops.where_v2(t < lens, lens - 1 - t, t)        # [B, T]
        rows = array_ops.tile(array_ops.expand_dims(math_ops.range(batch), 1),
                              array_ops.stack([1, time]))
        out = array_ops.gather_nd(moved, array_ops.stack([rows, src], axis=2))
        out.set_shape(moved.shape)
        if inverse != list(range(rank)):
            out = array_ops.transpose(out, inverse)
        out.set_shape(x.shape)
        return out
