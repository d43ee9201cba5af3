"""The iterators of weir.data (see its docstring): Iterator (one-shot and
initializable, made by Dataset.make_*_iterator), and the reinitializable
(Iterator.from_structure) and feedable (Iterator.from_string_handle) ones,
which run a dataset's map functions in a graph and session of their own
(_Converter)."""
import threading

import numpy as np

from weir.data.dataset import (_flatten, _flatten_spec, _flatten_up_to, _map_structure, _np_dtype, _pack,
                               _pack_spec, _wr)
from weir.framework import dtypes
from weir.framework import errors
from weir.framework import ops
from weir.framework import tensor_shape

__all__ = ["Iterator", "make_one_shot_iterator", "make_initializable_iterator", "get_output_types",
           "get_output_shapes", "get_output_classes"]


class Iterator(object):
    """Yields a Dataset's elements one run of get_next() at a time."""

    def __init__(self, dataset, initializable):
        self._dataset = dataset
        self._initializable = initializable
        self._lock = threading.Lock()
        self._iterator = None
        self._leaves = _flatten_spec(dataset._spec)
        wr = _wr()
        self._initializer = None
        _reset_with_new_sessions(self)
        if initializable:
            with ops.name_scope("Iterator"):
                self._initializer = wr.py_func(self._initialize, list(dataset._inputs), [],
                                               name="initializer")

    def _initialize(self, *values):
        iterator = self._dataset._make(list(values))
        with self._lock:
            self._iterator = iterator
        return []

    def _next(self, *values):
        with self._lock:
            if self._iterator is None:
                if self._initializable:
                    raise errors.FailedPreconditionError(
                        None, None, "GetNext() failed because the iterator has not been initialized. "
                        "Ensure that you have run the initializer operation for this iterator "
                        "before getting the next element.")
                self._iterator = self._dataset._make(list(values))
            try:
                element = next(self._iterator)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
        return [np.asarray(v, dtype=_np_dtype(d)) for v, (d, _) in zip(_flatten(element), self._leaves)]

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer (a one-shot iterator)")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        raise ValueError("make_initializer belongs to iterators made by Iterator.from_structure")

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """A reinitializable iterator: get_next() yields the elements of the
        dataset whose make_initializer(dataset) op ran last."""
        return _StructureIterator(output_types, output_shapes)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A feedable iterator: get_next() yields the next element of the
        iterator whose string_handle() value `string_handle` holds."""
        return _StructureIterator(output_types, output_shapes, string_handle=string_handle)

    def string_handle(self, name=None):
        """A string tensor naming this iterator for from_string_handle."""
        with self._lock:
            if getattr(self, "_handle", None) is None:
                self._handle = _register_handle(self)
        return _wr().constant(self._handle, name=name or "IteratorToStringHandle")

    def _next_output(self):
        """The next element as the output structure's flat numpy values (the
        maps run in a session of their own): what a feedable iterator yields."""
        with self._lock:
            if getattr(self, "_converter", None) is None:
                self._converter = _Converter(self._dataset)
        return self._converter(self._next())

    def get_next(self, name=None):
        """The next element (a structure of tensors): a new node each call,
        each run of which advances the iterator."""
        wr = _wr()
        inputs = [] if self._initializable else list(self._dataset._inputs)
        with ops.name_scope(name, "IteratorGetNext"):
            flat = wr.py_func(self._next, inputs, [d for d, _ in self._leaves])
            for t, (_, shape) in zip(flat, self._leaves):
                t.set_shape(shape)
            element = _pack_spec(self._dataset._spec, flat)
            if self._dataset._post is not None:
                element = self._dataset._post(element)
        return element

    @property
    def output_types(self):
        return self._dataset.output_types

    @property
    def output_shapes(self):
        return self._dataset.output_shapes

    @property
    def output_classes(self):
        return self._dataset.output_classes


def make_one_shot_iterator(dataset):
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


# --- reinitializable and feedable iterators ---------------------------------------------------
# Their get_next is built before (or apart from) the datasets it yields, so the
# datasets' map functions cannot be graph code after it: each dataset's maps run
# in a private graph and session (a callable), element by element, inside the
# get_next node. A map function must then not use tensors of the main graph.

_handles_lock = threading.Lock()
_handles = {}


def _register_handle(iterator):
    import weakref
    with _handles_lock:
        handle = "weir_iterator_%d" % (len(_handles) + 1)
        _handles[handle] = weakref.ref(iterator)
    return handle


class _Converter(object):
    """The map functions of `dataset` on a raw element (flat numpy values),
    run in a private session; the output's flat numpy values."""

    def __init__(self, dataset):
        self._leaves = [d for d, _ in _flatten_spec(dataset._output_spec())]
        self._call = None
        if dataset._post is None:
            return
        graph = ops.Graph()
        wr = _wr()
        try:
            with graph.as_default():
                raw = [wr.placeholder(d, s) for d, s in _flatten_spec(dataset._spec)]
                out = _flatten(_map_structure(ops.convert_to_tensor,
                                              dataset._post(_pack_spec(dataset._spec, raw))))
        except ValueError as e:
            raise NotImplementedError("a reinitializable or feedable iterator runs the dataset's map "
                                      "functions in a graph of their own: they may not use tensors of "
                                      "the main graph (%s)" % e) from None
        self._session = wr.Session(graph=graph)
        self._call = self._session.make_callable(out, raw)

    def __call__(self, flat):
        if self._call is not None:
            flat = self._call(*flat)
        return [np.asarray(v, dtype=_np_dtype(d)) for v, d in zip(flat, self._leaves)]


def _reset_with_new_sessions(iterator):
    """Forgets `iterator`'s position whenever a Session opens on the default
    graph (TF keeps an iterator's state in each session): a one-shot iterator
    starts again, an initializable one needs its initializer again. A session
    still open on the graph sees the reset too."""
    import weakref
    graph = ops.get_default_graph()
    resets = graph.__dict__.setdefault("_weir_session_state_resets", {})
    ref = weakref.ref(iterator)

    def reset():
        target = ref()
        if target is None:
            resets.pop(id(reset), None)
            return
        with target._lock:
            target._iterator = None
    resets[id(reset)] = reset


class _StructureIterator(object):
    """Iterator.from_structure / from_string_handle (see Iterator)."""

    def __init__(self, output_types, output_shapes=None, string_handle=None):
        self._types = output_types
        leaves = _flatten(output_types)
        shapes = [None] * len(leaves) if output_shapes is None else _flatten_up_to(output_types, output_shapes)
        self._leaves = [(dtypes.as_dtype(t), tensor_shape.unknown_shape() if s is None else tensor_shape.as_shape(s))
                        for t, s in zip(leaves, shapes)]
        self._spec = _pack(output_types, self._leaves)
        self._lock = threading.Lock()
        self._iterator = None
        self._converter = None
        self._string_handle = string_handle
        _reset_with_new_sessions(self)

    def _check(self, dataset):
        types = dataset.output_types
        try:
            _flatten_up_to(self._types, types)
        except (ValueError, TypeError, KeyError):
            raise ValueError("The two structures don't have the same nested structure: %r and %r"
                             % (self._types, types)) from None
        if _flatten_spec_types(types) != [d for d, _ in self._leaves]:
            raise TypeError("Expected output types %r but got dataset with output types %r."
                            % (self._types, types))

    def make_initializer(self, dataset, name=None):
        """An op that makes get_next() yield `dataset`'s elements from its start."""
        if self._string_handle is not None:
            raise ValueError("a feedable iterator (from_string_handle) has no initializers")
        self._check(dataset)
        converter = _Converter(dataset)

        def initialize(*values):
            iterator = dataset._make(list(values))
            with self._lock:
                self._iterator, self._converter = iterator, converter
            return []
        with ops.name_scope(name, "make_initializer"):
            return _wr().py_func(initialize, list(dataset._inputs), [], name="initializer")

    def _next(self, *handle):
        if self._string_handle is not None:
            key = handle[0].item() if hasattr(handle[0], "item") else handle[0]
            key = key.decode() if isinstance(key, bytes) else str(key)
            with _handles_lock:
                ref = _handles.get(key)
            target = ref() if ref is not None else None
            if target is None:
                raise errors.InvalidArgumentError(None, None, "%r is not the string_handle of a live "
                                                  "iterator" % key)
            values = target._next_output()
            return [np.asarray(v, dtype=_np_dtype(d)) for v, (d, _) in zip(values, self._leaves)]
        with self._lock:
            if self._iterator is None:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been initialized. "
                    "Ensure that you have run the initializer operation for this iterator before "
                    "getting the next element.")
            try:
                element = next(self._iterator)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
            converter = self._converter
        return converter(_flatten(element))

    def get_next(self, name=None):
        wr = _wr()
        inputs = [] if self._string_handle is None else [self._string_handle]
        with ops.name_scope(name, "IteratorGetNext"):
            flat = wr.py_func(self._next, inputs, [d for d, _ in self._leaves])
            for t, (_, shape) in zip(flat, self._leaves):
                t.set_shape(shape)
        return _pack(self._types, flat)

    @property
    def initializer(self):
        raise ValueError("Iterator does not have an initializer (use make_initializer(dataset))")

    @property
    def output_types(self):
        return self._types

    @property
    def output_shapes(self):
        return _pack(self._types, [s for _, s in self._leaves])

    @property
    def output_classes(self):
        return _pack(self._types, [ops.Tensor for _ in self._leaves])


def _flatten_spec_types(types):
    return [dtypes.as_dtype(t) for t in _flatten(types)]
