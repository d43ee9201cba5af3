"""Input pipelines of queues (TF1's tf.train.string_input_producer,
input_producer, range_input_producer, slice_input_producer, limit_epochs,
batch, shuffle_batch, batch_join, shuffle_batch_join, maybe_batch,
maybe_shuffle_batch), and the
tf.train.Example family of proto classes (Example, Features, Feature,
BytesList, FloatList, Int64List, SequenceExample, FeatureList(s)), reached as
weir.train.<Name> and loaded with protobuf on first use.

Each producer or batcher adds a queue, its enqueue ops and a QueueRunner to
the QUEUE_RUNNERS collection; start_queue_runners starts them. num_epochs
counts epochs in a local variable (run wr.local_variables_initializer()
first); after the last one the runner's enqueue fails with OutOfRangeError,
the queue closes, and its consumers get OutOfRangeError once it is drained.
Unlike TF1, no queue-fullness summaries are added.
"""
from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op
from weir.ops import data_flow_ops
from weir.ops.data_flow_ops import _get_seed
from weir.train import queue_runner

__all__ = [
    "limit_epochs", "input_producer", "string_input_producer", "range_input_producer",
    "slice_input_producer", "batch", "shuffle_batch", "batch_join", "shuffle_batch_join",
    "maybe_batch", "maybe_shuffle_batch",
]

# The proto classes of example.proto / feature.proto, as tf.train's.
EXAMPLE_PROTOS = ("Example", "Features", "Feature", "BytesList", "FloatList", "Int64List",
                  "SequenceExample", "FeatureList", "FeatureLists")


def proto_class(name):
    from weir.core import protos
    return getattr(protos, name)


def limit_epochs(tensor, num_epochs=None, name=None):
    """tensor, failing with OutOfRangeError once it has been evaluated
    num_epochs times (None: no limit). The count is a local int64 variable
    named "epochs"."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    from weir.ops import variables
    with ops.name_scope(name, "limit_epochs", [tensor]) as scope:
        epochs = variables.Variable(
            0, dtype=_dtypes.int64, name="epochs", trainable=False,
            collections=[ops.GraphKeys.LOCAL_VARIABLES])
        handle = getattr(epochs, "handle", None)
        if handle is None:
            handle = epochs._handle
        counter = apply_op("ResourceCountUpTo", "CountUpTo", resource=handle,
                           limit=int(num_epochs), T=_dtypes.int64)
        with ops.control_dependencies([counter]):
            return apply_op("Identity", scope, input=tensor)


def _random_shuffle(tensor, seed):
    seed1, seed2 = _get_seed(seed)
    return apply_op("RandomShuffle", None, value=tensor, seed=seed1, seed2=seed2)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue filled with the rows of input_tensor (dim 0), again each
    epoch, shuffled per epoch when shuffle, by a QueueRunner."""
    with ops.name_scope(name, "input_producer", [input_tensor]) as scope:
        input_tensor = ops.convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.get_shape()[1:].merge_with(
            tensor_shape.as_shape(element_shape) if element_shape is not None
            else tensor_shape.unknown_shape())
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = _random_shuffle(input_tensor, seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = data_flow_ops.FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                                    shapes=[element_shape], shared_name=shared_name, name=scope)
        enq = q.enqueue_many([input_tensor])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(q, [enq], cancel_op=cancel_op))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of the strings of string_tensor (file names, usually) for a
    reader. An empty list is a ValueError, or, when only known at run time,
    an InvalidArgumentError of the runner."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, ops.Tensor) and len(string_tensor) == 0:
        raise ValueError(not_null_err)
    with ops.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = ops.convert_to_tensor(string_tensor, dtype=_dtypes.string)
        size = apply_op("Size", None, input=string_tensor)
        non_empty = apply_op("Greater", None, x=size, y=ops.convert_to_tensor(0))
        not_null = ops.convert_to_tensor(not_null_err, dtype=_dtypes.string)
        assertion = apply_op("Assert", None, condition=non_empty, data=[not_null])
        with ops.control_dependencies([assertion]):
            string_tensor = apply_op("Identity", None, input=string_tensor)
        return input_producer(string_tensor, [], num_epochs=num_epochs, shuffle=shuffle,
                              seed=seed, capacity=capacity, shared_name=shared_name,
                              name=scope, cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the int32 values 0 .. limit-1, each epoch."""
    with ops.name_scope(name, "input_producer", [limit]) as scope:
        rng = apply_op("Range", None, start=ops.convert_to_tensor(0),
                       limit=ops.convert_to_tensor(limit, dtype=_dtypes.int32),
                       delta=ops.convert_to_tensor(1))
        return input_producer(rng, [], num_epochs, shuffle, seed, capacity, shared_name,
                              name=scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of every tensor of tensor_list (all of one dim 0) per
    dequeue: a range_input_producer of row indices, and a gather."""
    with ops.name_scope(name, "input_producer", tensor_list):
        tensor_list = [ops.convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        first = tensor_list[0].get_shape()
        range_size = first[0].value if first.ndims else None
        if range_size is None:
            raise ValueError("slice_input_producer needs a static dim 0 of the first tensor")
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        output = []
        for t in tensor_list:
            row = apply_op("GatherV2", None, params=t, indices=index,
                           axis=ops.convert_to_tensor(0))
            row.set_shape(t.get_shape()[1:])
            output.append(row)
        return output


def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original, tensors):
    """The dequeued tensors as the caller passed them: a dict for a dict,
    else the queue's result (as TF: one Tensor when there is one component,
    even for a one-element list)."""
    if isinstance(original, dict):
        if not isinstance(tensors, list):
            tensors = [tensors]
        return {k: tensors[i] for i, k in enumerate(sorted(original, key=str))}
    return tensors


def _validate(tensor_list):
    tensors = []
    for t in tensor_list:
        if hasattr(t, "_as_fetches") and not isinstance(t, ops.Tensor):
            raise TypeError("batching SparseTensors is not supported by weir")
        tensors.append(ops.convert_to_tensor(t))
    if not tensors:
        raise ValueError("Expected at least one tensor in batch().")
    return tensors


def _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad=False):
    if shapes is None:
        tensor_list = tensor_list_list[0]
        shapes = [t.get_shape()[1:] if enqueue_many else t.get_shape() for t in tensor_list]
        for other in tensor_list_list[1:]:
            shapes = [s.merge_with(t.get_shape()[1:] if enqueue_many else t.get_shape())
                      for s, t in zip(shapes, other)]
    shapes = [tensor_shape.as_shape(s) for s in shapes]
    if not dynamic_pad and not all(s.is_fully_defined() for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % shapes)
    return shapes


def _dtypes_of(tensor_list_list):
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        if [t.dtype.base_dtype for t in other] != types:
            raise TypeError("Expected types to be consistent: %s vs. %s."
                            % (", ".join(d.name for d in types),
                               ", ".join(t.dtype.name for t in other)))
    return types


def _kept(tensor_list, keep_input, enqueue_many):
    """tensor_list as a batch holding only the kept examples: keep_input is
    a scalar bool (keep the example, or the whole batch with enqueue_many)
    or, with enqueue_many, a vector (one bool per example). Enqueued with
    enqueue_many; an empty batch enqueues nothing at once."""
    from weir.ops import array_ops
    keep = ops.convert_to_tensor(keep_input, dtype=_dtypes.bool, name="keep_input")
    rank = keep.get_shape().ndims
    if rank is None:
        raise ValueError("keep_input dimensions must be known at graph construction.")
    if rank > 1:
        raise ValueError("keep_input must be a scalar or a vector, got shape %s"
                         % keep.get_shape())
    if rank == 1 and not enqueue_many:
        raise ValueError("A vector keep_input needs enqueue_many=True (one bool per example)")
    if not enqueue_many:
        tensor_list = [array_ops.expand_dims(t, 0) for t in tensor_list]
    if rank == 0:
        batch = array_ops.shape(tensor_list[0], out_type=_dtypes.int32)[:1]
        keep = apply_op("Fill", None, dims=batch, value=keep)
    return [array_ops.boolean_mask(t, keep) for t in tensor_list]


def _enqueue(queue, tensor_list_list, threads_per_list, enqueue_many, keep_input=None):
    enqueue_ops = []
    for tensor_list in tensor_list_list:
        if keep_input is not None:
            op = queue.enqueue_many(_kept(tensor_list, keep_input, enqueue_many))
        elif enqueue_many:
            op = queue.enqueue_many(tensor_list)
        else:
            op = queue.enqueue(tensor_list)
        enqueue_ops.extend([op] * threads_per_list)
    queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, enqueue_ops))


def _dequeue(queue, batch_size, allow_smaller_final_batch):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size)
    return queue.dequeue_many(batch_size)


def _batch(tensors_list, original, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
           allow_smaller_final_batch, shared_name, name, threads_per_list, shuffle=False,
           min_after_dequeue=0, seed=None, default_name="batch", keep_input=None):
    if batch_size is None:
        raise ValueError("batch_size must be given")
    tensor_list_list = [_validate(_as_tensor_list(t)) for t in tensors_list]
    with ops.name_scope(name, default_name, tensor_list_list[0]):
        types = _dtypes_of(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad)
        if shuffle:
            queue = data_flow_ops.RandomShuffleQueue(
                capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
                shapes=shapes, shared_name=shared_name)
        elif dynamic_pad:
            queue = data_flow_ops.PaddingFIFOQueue(capacity=capacity, dtypes=types, shapes=shapes,
                                                   shared_name=shared_name)
        else:
            queue = data_flow_ops.FIFOQueue(capacity=capacity, dtypes=types, shapes=shapes,
                                            shared_name=shared_name)
        _enqueue(queue, tensor_list_list, threads_per_list, enqueue_many, keep_input)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch)
        return _as_original_type(original, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of batch_size examples, in order, through a FIFOQueue (a
    PaddingFIFOQueue with dynamic_pad) fed by num_threads threads. With
    allow_smaller_final_batch the last batch may be smaller (dim 0 is None)."""
    return _batch([tensors], tensors, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, num_threads)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """batch of several example lists, one enqueue thread each."""
    return _batch(list(tensors_list), tensors_list[0], batch_size, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name, 1)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Batches of random examples through a RandomShuffleQueue that keeps at
    least min_after_dequeue examples until its input ends."""
    return _batch([tensors], tensors, batch_size, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, num_threads, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed, default_name="shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """shuffle_batch of several example lists, one enqueue thread each."""
    return _batch(list(tensors_list), tensors_list[0], batch_size, capacity, enqueue_many,
                  shapes, False, allow_smaller_final_batch, shared_name, name, 1, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed,
                  default_name="shuffle_batch_join")


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    """batch of only the examples whose keep_input is true."""
    return _batch([tensors], tensors, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, num_threads,
                  keep_input=keep_input)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """shuffle_batch of only the examples whose keep_input is true."""
    return _batch([tensors], tensors, batch_size, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, num_threads, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed, default_name="shuffle_batch",
                  keep_input=keep_input)
