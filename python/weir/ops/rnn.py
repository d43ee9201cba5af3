"""TF1's RNN drivers: dynamic_rnn (a while loop over time with TensorArrays),
static_rnn (unrolled), bidirectional_dynamic_rnn and static_bidirectional_rnn.

With sequence_length, a batch entry's outputs past its length are zeros and
its state is carried through unchanged, as TF does; dynamic_rnn's loop stops
after the longest sequence (the remaining outputs are zeros). The cell's
variables are made before the loop under scope "rnn" (or `scope`), named as
TF names them ("rnn/basic_lstm_cell/kernel").
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.ops import array_ops
from weir.ops import control_flow_ops
from weir.ops import math_ops
from weir.ops import rnn_cell_impl
from weir.ops import sequence_ops
from weir.ops import tensor_array_ops
from weir.ops import variable_scope as vs

__all__ = ["dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn", "static_bidirectional_rnn"]

_flatten = control_flow_ops._flatten
_pack = rnn_cell_impl._pack
_is_nested = control_flow_ops._is_nested


def _assert_like_rnncell(cell):
    ok = hasattr(cell, "output_size") and hasattr(cell, "state_size") and callable(cell) and \
        hasattr(cell, "zero_state")
    if not ok:
        raise TypeError("The argument 'cell' (%s) is not an RNNCell: 'output_size' property is "
                        "missing, 'state_size' property is missing, either 'zero_state' or "
                        "'get_initial_state' method is required, is not callable." % (cell,))


def _dim(shape, i):
    d = shape.dims[i]
    return d.value if hasattr(d, "value") else d


def _transpose_batch_time(x):
    """Swaps dims 0 and 1 of a rank >= 2 tensor."""
    shape = x.shape
    if shape.ndims is not None and shape.ndims < 2:
        raise ValueError("Expected input tensor %s to have rank at least 2, but saw shape: %s" % (
            x, shape))
    if shape.ndims is None:
        rank = array_ops.rank(x)
        perm = array_ops.concat([[1, 0], math_ops.range(2, rank)], 0)
        return array_ops.transpose(x, perm)
    out = array_ops.transpose(x, [1, 0] + list(range(2, shape.ndims)))
    out.set_shape([_dim(shape, 1), _dim(shape, 0)] + shape.as_list()[2:])
    return out


def _best_effort_batch_size(flat_input):
    """The batch size (dim 1 of time-major inputs): static where known."""
    for x in flat_input:
        shape = x.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError("Expected input tensor %s to have rank at least 2" % x)
        if _dim(shape, 1) is not None:
            return _dim(shape, 1)
    return array_ops.shape(flat_input[0])[1]


def _infer_state_dtype(explicit, state):
    if explicit is not None:
        return dtypes.as_dtype(explicit)
    flat = _flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    kinds = set(s.dtype.base_dtype for s in flat)
    if len(kinds) > 1:
        raise ValueError("State has tensors of different inferred_dtypes. Unable to infer a "
                         "single representative dtype. Dtypes received: %s" % sorted(
                             k.name for k in kinds))
    return flat[0].dtype.base_dtype


def _check_sequence_length(sequence_length):
    sequence_length = math_ops.cast(sequence_length, dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError("sequence_length must be a vector of length batch_size, but saw shape: "
                         "%s" % sequence_length.shape)
    return array_ops.identity(sequence_length, name="sequence_length")


def _mask_step(time, sequence_length, zero_output, state, new_output, new_state):
    """Outputs zero and state copied through where time >= sequence_length."""
    control_flow_ops._assert_same_structure(state, new_state, "rnn: the cell's state")
    copy = math_ops.greater_equal(time, sequence_length)
    out = [array_ops.where(copy, z, n) for z, n in zip(_flatten(zero_output),
                                                       _flatten(new_output))]
    st = [array_ops.where(copy, s, n) for s, n in zip(_flatten(state), _flatten(new_state))]
    return _pack(zero_output, out), _pack(state, st)


def _zero_output(cell, batch_size, dtype):
    def make(size):
        shape = rnn_cell_impl._concat_shape(batch_size, size)
        z = array_ops.zeros(shape, dtype)
        z.set_shape(rnn_cell_impl._concat_shape(batch_size, size, static=True))
        return z
    return rnn_cell_impl._map(make, cell.output_size)


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time dim of `inputs` ([batch, time, depth], or
    [time, batch, depth] with time_major; nested structures allowed) in a
    while loop. Returns (outputs of the same major order, final state)."""
    _assert_like_rnncell(cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = [ops.convert_to_tensor(x) for x in _flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length)
        batch_size = _best_effort_batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            expected = array_ops.reshape(
                ops.convert_to_tensor(batch_size, dtype=dtypes.int32), [1])
            ok = math_ops.reduce_all(math_ops.equal(array_ops.shape(sequence_length), expected))
            check = control_flow_ops.Assert(
                ok, ["Expected shape for Tensor sequence_length is ", expected,
                     " but saw shape: ", array_ops.shape(sequence_length)])
            with ops.control_dependencies([check]):
                sequence_length = array_ops.identity(sequence_length, name="CheckSeqLen")
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, flat_input, state,
                                                 parallel_iterations, swap_memory,
                                                 sequence_length, dtype)
        if not time_major:
            outputs = rnn_cell_impl._map(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, flat_input, state, parallel_iterations, swap_memory,
                      sequence_length, dtype):
    got_shapes = []
    for x in flat_input:
        shape = x.shape.with_rank_at_least(3)
        if not tensor_shape.TensorShape(shape.dims[2:]).is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape "
                             "inference, but saw value None (input %s, shape %s)." % (
                                 x.name, shape))
        got_shapes.append(shape)
    const_time, const_batch = _dim(got_shapes[0], 0), _dim(got_shapes[0], 1)
    for shape in got_shapes[1:]:
        if _dim(shape, 0) != const_time:
            raise ValueError("Time steps is not the same for all the elements in the input in a "
                             "batch.")
        if _dim(shape, 1) != const_batch:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_batch_size(flat_input)
    state_dtype = _infer_state_dtype(dtype, state)
    zero_output = _zero_output(cell, batch_size, state_dtype)
    if sequence_length is not None:
        max_sequence_length = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps

    # The variables outside the loop: their gradients need that. A user's
    # cell is called once here (on the first step's inputs; nothing runs it)
    # to make whatever variables it makes, and reuses them in the loop.
    reuse_in_loop = not rnn_cell_impl._prebuildable(cell)
    if reuse_in_loop:
        with ops.name_scope("make_variables"):
            cell(_pack(inputs, [x[0] for x in flat_input]), state)
    else:
        rnn_cell_impl._build_cell(cell, got_shapes[0][1:] if len(flat_input) == 1 else
                                  [s[1:] for s in got_shapes])

    with ops.name_scope("dynamic_rnn") as base_name:
        pass
    flat_output_size = _flatten(cell.output_size)
    output_ta = [tensor_array_ops.TensorArray(
        dtype=state_dtype, size=time_steps,
        element_shape=rnn_cell_impl._concat_shape(const_batch, size, static=True),
        tensor_array_name=base_name + "output_%d" % i)
        for i, size in enumerate(flat_output_size)]
    input_ta = [tensor_array_ops.TensorArray(
        dtype=x.dtype, size=time_steps, element_shape=x.shape[1:],
        tensor_array_name=base_name + "input_%d" % i).unstack(x)
        for i, x in enumerate(flat_input)]

    def time_step(time, output_ta_t, state):
        input_t = [ta.read(time) for ta in input_ta]
        for x, shape in zip(input_t, got_shapes):
            x.set_shape(shape[1:])
        input_t = _pack(inputs, input_t)
        if reuse_in_loop:
            with vs.variable_scope(vs.get_variable_scope(), reuse=True,
                                   auxiliary_name_scope=False):
                output, new_state = cell(input_t, state)
        else:
            output, new_state = cell(input_t, state)
        if sequence_length is not None:
            output, new_state = _mask_step(time, sequence_length, zero_output, state, output,
                                           new_state)
        else:
            control_flow_ops._assert_same_structure(state, new_state, "rnn: the cell's state")
        output_ta_t = [ta.write(time, out) for ta, out in zip(output_ta_t, _flatten(output))]
        return time + 1, output_ta_t, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, final_ta, final_state = control_flow_ops.while_loop(
        lambda time, *_: time < loop_bound, time_step, (0, output_ta, state),
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps,
        swap_memory=swap_memory)
    final_outputs = []
    for ta, size in zip(final_ta, flat_output_size):
        out = ta.stack()
        out.set_shape(tensor_shape.TensorShape([const_time]).concatenate(
            rnn_cell_impl._concat_shape(const_batch, size, static=True)))
        final_outputs.append(out)
    return _pack(cell.output_size, final_outputs), final_state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """The cell unrolled over the list `inputs` (each [batch, depth]).
    Returns (list of outputs, final state)."""
    _assert_like_rnncell(cell)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first = inputs[0]
        while _is_nested(first):
            first = _flatten(first)[0]
        first = ops.convert_to_tensor(first)
        fixed_batch = tensor_shape.Dimension(None)
        for x in _flatten(list(inputs)):
            shape = ops.convert_to_tensor(x).shape.with_rank_at_least(2)
            fixed_batch = fixed_batch.merge_with(shape.dims[0])
            for i, d in enumerate(shape.as_list()[1:]):
                if d is None:
                    raise ValueError("Input size (dimension %d of inputs) must be accessible via "
                                     "shape inference, but saw value None." % i)
        batch_size = fixed_batch.value if fixed_batch.value else array_ops.shape(first)[0]
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            state = cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length)
            zero_output = _zero_output(cell, batch_size, _infer_state_dtype(dtype, state))
        for time, x in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(x, state)
            if sequence_length is not None:
                output, new_state = _mask_step(time, sequence_length, zero_output, state, output,
                                               new_state)
            state = new_state
            outputs.append(output)
        return outputs, state


def _reverse_sequence(x, seq_lengths, seq_axis, batch_axis):
    return sequence_ops.reverse_sequence(x, seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """dynamic_rnn forward (scope "fw") and over the reversed sequences
    (scope "bw", its outputs reversed back). Returns ((output_fw,
    output_bw), (state_fw, state_bw))."""
    _assert_like_rnncell(cell_fw)
    _assert_like_rnncell(cell_bw)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length, initial_state=initial_state_fw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)

        def reverse(x):
            if sequence_length is not None:
                return _reverse_sequence(x, sequence_length, time_axis, batch_axis)
            return array_ops.reverse(x, axis=[time_axis])

        with vs.variable_scope("bw") as bw_scope:
            inputs_reversed = rnn_cell_impl._map(reverse, inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw, inputs_reversed, sequence_length=sequence_length,
                initial_state=initial_state_bw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
        output_bw = rnn_cell_impl._map(reverse, tmp)
        return (output_fw, output_bw), (state_fw, state_bw)


def _reverse_steps(steps, lengths):
    """A list of [batch, ...] steps reversed in time, within each batch
    entry's length when lengths are given."""
    if lengths is None:
        return list(reversed(steps))
    flat = [_flatten(step) for step in steps]
    columns = []
    for k in range(len(flat[0])):
        stacked = array_ops.stack([f[k] for f in flat])  # [time, batch, ...]
        columns.append(array_ops.unstack(_reverse_sequence(stacked, lengths, 0, 1)))
    return [_pack(steps[t], [col[t] for col in columns]) for t in range(len(steps))]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """static_rnn forward (scope "fw") and over the reversed steps (scope
    "bw"); each step's output is [output_fw, output_bw] concatenated on dim
    1. Returns (outputs, state_fw, state_bw)."""
    _assert_like_rnncell(cell_fw)
    _assert_like_rnncell(cell_bw)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a list")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            tmp, state_bw = static_rnn(cell_bw, _reverse_steps(list(inputs), sequence_length),
                                       initial_state_bw, dtype, sequence_length, scope=bw_scope)
    output_bw = _reverse_steps(tmp, sequence_length)
    outputs = [rnn_cell_impl._map(lambda f, b: array_ops.concat([f, b], 1), fw, bw)
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw
