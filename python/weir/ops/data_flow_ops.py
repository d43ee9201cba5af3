"""Queues (tf.queue / tf.compat.v1.FIFOQueue ...): FIFOQueue, RandomShuffleQueue,
PaddingFIFOQueue, PriorityQueue over weir's *QueueV2 ops.

A queue object holds a resource handle (`queue_ref`); its methods add ops that
act on it. Blocking enqueues and dequeues wait without holding a thread; a
closed, drained queue makes a dequeue fail with OutOfRangeError; a step's
timeout (RunOptions.timeout_in_ms) or Session.close wakes a waiting op.

As TensorFlow: values are converted to the queue's dtypes and checked against
its shapes when the op is built (ValueError), dequeued tensors carry the
queue's static shapes, and a queue created with `names` takes and gives dicts.
"""
from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op

__all__ = ["QueueBase", "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue"]


def _get_seed(op_seed):
    """(seed, seed2) as TensorFlow derives them from the graph and op seeds
    (0, 0: nondeterministic)."""
    from weir.ops import random_ops
    seed1, seed2 = random_ops.get_seed(op_seed)
    return seed1 or 0, seed2 or 0


def _first_tensor(result):
    if isinstance(result, ops.Tensor):
        return result
    if isinstance(result, (list, tuple)):
        for item in result:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


def _as_op(result):
    """The Operation behind an apply_op result (a Tensor, a possibly nested
    list/tuple of Tensors, or the Operation itself)."""
    if isinstance(result, ops.Operation):
        return result
    tensor = _first_tensor(result)
    if tensor is None:
        raise ValueError("op has no outputs to find it by")
    return tensor.op


def _outputs(result):
    """All output Tensors of the op apply_op built, in output order."""
    return list(_as_op(result).outputs)


def _shape_attr(shape):
    """A TensorShape as the `shape` attr value of _C (None: unknown rank)."""
    shape = tensor_shape.as_shape(shape)
    if shape.ndims is None:
        return None
    return shape.as_list()


def _as_type_list(dtypes):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]  # one component
    return [_dtypes.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes, dtypes, unknown_dim_allowed=False, unknown_rank_allowed=False):
    """The queue's shapes: one TensorShape per component (unknown if None)."""
    if shapes is None:
        return [tensor_shape.unknown_shape() for _ in dtypes]
    if isinstance(shapes, tensor_shape.TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (tuple, list)):
        raise TypeError("Shapes must be a TensorShape or a list or tuple of TensorShapes, got %r"
                        % (shapes,))
    if all(s is None or isinstance(s, int) for s in shapes):
        # One component given as a bare shape (ints; [] is a scalar), as TF reads it.
        shapes = [shapes]
    shapes = [tensor_shape.as_shape(s) for s in shapes]
    if len(shapes) != len(dtypes):
        raise ValueError("Queue shapes must have the same length as dtypes: %d shapes for %d dtypes"
                         % (len(shapes), len(dtypes)))
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % shapes)
    if not unknown_rank_allowed and any(s.ndims is None for s in shapes):
        raise ValueError("All shapes must have a defined rank: %s" % shapes)
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


class QueueBase(object):
    """The base of the queue classes: the ops on a queue handle (TF1's
    tf.queue.QueueBase)."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [tensor_shape.as_shape(s) for s in shapes]
        else:
            self._shapes = [tensor_shape.unknown_shape() for _ in dtypes]
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
            self._names = list(names)
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues):
        """A queue that is `queues[index]` when it runs (TF's from_list) needs
        RefSelect, which weir does not have."""
        raise NotImplementedError("QueueBase.from_list is not supported by weir")

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    def _check_enqueue_dtypes(self, vals):
        """vals as a list of Tensors of the queue's dtypes (dicts by names)."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue.  "
                                 "Dictionary: (%s), Queue: (%s)"
                                 % (sorted(vals.keys(), key=str), sorted(self._names, key=str)))
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Queue '%s' has %d components (%s), got %d values to enqueue"
                             % (self.name, len(self._dtypes), [d.name for d in self._dtypes],
                                len(vals)))
        tensors = []
        for i, (val, dtype) in enumerate(zip(vals, self._dtypes)):
            tensors.append(ops.convert_to_tensor(val, dtype=dtype, name="component_%d" % i))
        return tensors

    def _scope_name(self, name, default):
        return name if name is not None else "%s_%s" % (self._name, default)

    def enqueue(self, vals, name=None):
        """Enqueues one element (a tuple/list of components, a single tensor
        for a one-component queue, or a dict for a queue with names)."""
        vals = self._check_enqueue_dtypes(vals)
        for i, (val, shape) in enumerate(zip(vals, self._shapes)):
            if not val.get_shape().is_compatible_with(shape):
                raise ValueError("Queue '%s' component %d has shape %s, but the value to enqueue "
                                 "(%s) has shape %s" % (self.name, i, shape, val.name,
                                                        val.get_shape()))
        return apply_op("QueueEnqueueV2", self._scope_name(name, "enqueue"),
                        handle=self._queue_ref, components=vals)

    def enqueue_many(self, vals, name=None):
        """Enqueues the elements along dimension 0 of every component."""
        vals = self._check_enqueue_dtypes(vals)
        batch_dim = tensor_shape.Dimension(None)
        for i, (val, shape) in enumerate(zip(vals, self._shapes)):
            val_shape = val.get_shape()
            if val_shape.ndims is None:
                continue
            if val_shape.ndims < 1:
                raise ValueError("Shape %s of %s must have rank at least 1 to enqueue_many"
                                 % (val_shape, val.name))
            try:
                batch_dim = batch_dim.merge_with(val_shape[0])
            except ValueError:
                raise ValueError("enqueue_many to queue '%s': the components' dimension 0 "
                                 "differ (%s at component %d)" % (self.name, val_shape, i))
            if not val_shape[1:].is_compatible_with(shape):
                raise ValueError("Queue '%s' component %d has shape %s, but the elements to "
                                 "enqueue (%s) have shape %s" % (self.name, i, shape, val.name,
                                                                  val_shape[1:]))
        return apply_op("QueueEnqueueManyV2", self._scope_name(name, "EnqueueMany"),
                        handle=self._queue_ref, components=vals)

    def _dequeue_return_value(self, tensors):
        if self._names:
            return {n: t for n, t in zip(self._names, tensors)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def dequeue(self, name=None):
        """Dequeues one element; its components have the queue's shapes."""
        if name is None:
            name = "%s_Dequeue" % self._name
        tensors = _outputs(apply_op("QueueDequeueV2", name, handle=self._queue_ref,
                                    component_types=self._dtypes))
        for tensor, shape in zip(tensors, self._shapes):
            tensor.set_shape(shape)
        return self._dequeue_return_value(tensors)

    @staticmethod
    def _batch_dim(n):
        """n as a static dimension (None unless it is a Python or Const int)."""
        if isinstance(n, ops.Tensor):
            if n.op.type != "Const":
                return None
            value = n.op.get_attr("value")
            return int(value) if getattr(value, "ndim", 1) == 0 else None
        try:
            return int(n)
        except (TypeError, ValueError):
            return None

    def dequeue_many(self, n, name=None):
        """Dequeues n elements as components with a leading dimension n;
        OutOfRangeError if the queue is closed with fewer than n left."""
        if name is None:
            name = "%s_DequeueMany" % self._name
        tensors = _outputs(apply_op("QueueDequeueManyV2", name, handle=self._queue_ref,
                                    n=ops.convert_to_tensor(n, dtype=_dtypes.int32),
                                    component_types=self._dtypes))
        batch = tensor_shape.TensorShape([self._batch_dim(n)])
        for tensor, shape in zip(tensors, self._shapes):
            tensor.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(tensors)

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but a closed queue with 0 < k < n elements left
        gives those k (OutOfRangeError only when it is empty)."""
        if name is None:
            name = "%s_DequeueUpTo" % self._name
        tensors = _outputs(apply_op("QueueDequeueUpToV2", name, handle=self._queue_ref,
                                    n=ops.convert_to_tensor(n, dtype=_dtypes.int32),
                                    component_types=self._dtypes))
        batch = tensor_shape.TensorShape([None])
        for tensor, shape in zip(tensors, self._shapes):
            tensor.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(tensors)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: later enqueues fail; dequeues drain what is left,
        then fail with OutOfRangeError. cancel_pending_enqueues also cancels
        the enqueues waiting for room."""
        if name is None:
            name = "%s_Close" % self._name
        return apply_op("QueueCloseV2", name, handle=self._queue_ref,
                        cancel_pending_enqueues=bool(cancel_pending_enqueues))

    def is_closed(self, name=None):
        if name is None:
            name = "%s_IsClosed" % self._name
        return apply_op("QueueIsClosedV2", name, handle=self._queue_ref)

    def size(self, name=None):
        """The number of elements in the queue (int32)."""
        if name is None:
            name = "%s_Size" % self._name
        return apply_op("QueueSizeV2", name, handle=self._queue_ref)


def _queue_op(op_type, name, dtypes, shapes, capacity, shared_name, **attrs):
    return apply_op(op_type, name, component_types=dtypes,
                    shapes=[_shape_attr(s) for s in shapes] if shapes else [],
                    capacity=int(capacity), container="",
                    shared_name=shared_name if shared_name is not None else "", **attrs)


def _given_shapes(shapes):
    """Whether the user gave shapes (the op's attr is [] otherwise)."""
    return shapes is not None


class FIFOQueue(QueueBase):
    """A queue that gives its elements in the order they were enqueued."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        given = _given_shapes(shapes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        queue_ref = _queue_op("FIFOQueueV2", name, dtypes, shapes if given else None, capacity,
                              shared_name)
        super().__init__(dtypes, shapes, names, queue_ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose shapes may have unknown dimensions: dequeue_many pads
    each component to the largest element of the batch with zeros (empty
    strings)."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError("Shapes must be provided for all components, but received %d dtypes "
                             "and %d shapes." % (len(dtypes), len(shapes)))
        queue_ref = _queue_op("PaddingFIFOQueueV2", name, dtypes, shapes, capacity, shared_name)
        super().__init__(dtypes, shapes, names, queue_ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues a random element, keeping at least
    min_after_dequeue elements in it until it is closed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        given = _given_shapes(shapes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = _get_seed(seed)
        queue_ref = _queue_op("RandomShuffleQueueV2", name, dtypes, shapes if given else None,
                              capacity, shared_name, min_after_dequeue=int(min_after_dequeue),
                              seed=seed1, seed2=seed2)
        super().__init__(dtypes, shapes, names, queue_ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element with the smallest int64 priority.
    Elements are (priority, component...); `types` and `shapes` name the
    components after the priority (a scalar int64)."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes, types)
        queue_ref = _queue_op("PriorityQueueV2", name, types, shapes, capacity, shared_name)
        priority_dtypes = [_dtypes.int64] + types
        priority_shapes = [tensor_shape.TensorShape([])] + shapes
        # As TF, names (if any) name every component, the priority first.
        super().__init__(priority_dtypes, priority_shapes, names, queue_ref)
