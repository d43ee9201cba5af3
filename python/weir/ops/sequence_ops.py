"""wr.reverse_sequence (TF1's tf.reverse_sequence) on the ReverseSequence
op: for each batch entry b, its first seq_lengths[b] steps along seq_axis
reversed, the rest kept. Its gradient is the same reversal of the gradient.
A length outside [0, dim(seq_axis)] fails the step with InvalidArgumentError
naming the node, the batch index and the value."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

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
    with ops.name_scope(name, "ReverseSequence", [input, seq_lengths]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        lengths = ops.convert_to_tensor(seq_lengths, name="seq_lengths")
        rank = x.shape.ndims
        if seq_axis < 0 or batch_axis < 0:
            raise ValueError("reverse_sequence: seq_axis %d and batch_axis %d must be >= 0"
                             % (seq_axis, batch_axis))
        if rank is not None:
            for what, axis in (("seq_axis", seq_axis), ("batch_axis", batch_axis)):
                if axis >= rank:
                    raise ValueError("reverse_sequence: %s %d is out of range for the input's "
                                     "rank %d" % (what, axis, rank))
        if seq_axis == batch_axis:
            raise ValueError("reverse_sequence: seq_axis == batch_axis == %d" % seq_axis)
        if lengths.shape.ndims not in (None, 1):
            raise ValueError("reverse_sequence: seq_lengths must be a vector, got shape %s"
                             % lengths.shape)
        if lengths.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("reverse_sequence: seq_lengths must be int32 or int64, got %s"
                            % lengths.dtype.name)
        if rank is not None and lengths.shape.ndims == 1:
            batch_dim = x.shape.as_list()[batch_axis]
            count = lengths.shape.as_list()[0]
            if None not in (batch_dim, count) and batch_dim != count:
                raise ValueError("reverse_sequence: len(seq_lengths) %d != input.dims(%d) %d"
                                 % (count, batch_axis, batch_dim))
        return apply_op("ReverseSequence", scope, input=x, seq_lengths=lengths,
                        seq_dim=seq_axis, batch_dim=batch_axis)
