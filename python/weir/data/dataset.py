"""Dataset and Iterator (see weir.data's docstring for how they run).

A Dataset holds:
- `_spec`: the structure (tuples, dicts, leaves) of its raw elements, each
  leaf a (DType, TensorShape) pair: what its Python iterator yields;
- `_inputs`: the graph tensors its sources read (evaluated when an
  iterator is initialized);
- `_make(values)`: a Python iterator of raw elements (structures of numpy
  values) given the values of `_inputs`;
- `_post`: None, or a graph function from a raw element's tensors to the
  output element (the map functions, batched by map_fn after a batch).
"""
import itertools

import numpy as np

from weir.framework import dtypes
from weir.framework import errors
from weir.framework import ops
from weir.framework import tensor_shape

__all__ = ["AUTOTUNE", "Dataset", "TextLineDataset", "TFRecordDataset"]

AUTOTUNE = -1


def _wr():
    import weir
    return weir


# --- structures: tuples, lists (as tuples), dicts (sorted keys), leaves ------------

def _flatten(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k])]
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


def _pack(structure, flat):
    flat = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, (tuple, list)):
            items = [build(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(flat)
    return build(structure)


def _flatten_up_to(structure, x):
    """The parts of `x` at the leaves of `structure` (a shape, itself a list,
    is one part)."""
    if isinstance(structure, dict):
        return [p for k in sorted(structure) for p in _flatten_up_to(structure[k], x[k])]
    if isinstance(structure, (tuple, list)):
        if not isinstance(x, (tuple, list)) or len(x) != len(structure):
            raise ValueError("%r does not match the structure %r" % (x, structure))
        return [p for s, e in zip(structure, x) for p in _flatten_up_to(s, e)]
    return [x]


def _map_structure(fn, x):
    return _pack(x, [fn(leaf) for leaf in _flatten(x)])


def _is_tensor(x):
    return isinstance(x, ops.Tensor) or hasattr(x, "_as_graph_element")


def _as_array(value):
    """A Python or numpy value as numpy, with TF's dtypes for Python values
    (floats float32, ints int32 unless they need int64, str bytes)."""
    if isinstance(value, np.ndarray):
        return value
    array = np.asarray(value)
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype == np.int64 and array.size and np.abs(array).max() < 2 ** 31:
        return array.astype(np.int32)
    if array.dtype.kind == "U":
        return np.vectorize(lambda s: s.encode(), otypes=[object])(array) if array.size else \
            array.astype(object)
    if array.dtype.kind == "S":
        return array.astype(object)
    return array


def _dtype_of(array):
    if array.dtype == object or array.dtype.kind in "SU":
        return dtypes.string
    return dtypes.as_dtype(array.dtype)


def _np_dtype(dtype):
    return object if dtype == dtypes.string else dtype.as_numpy_dtype


class Dataset(object):
    """A pipeline of elements (tf.data.Dataset, TF1's methods included)."""

    def __init__(self, spec, inputs, make, post=None):
        self._spec = spec
        self._inputs = list(inputs)
        self._make = make
        self._post = post

    # --- sources ---------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of `tensors` (a structure whose leaves share
        their first dimension)."""
        return _source(tensors, slices=True)

    @staticmethod
    def from_tensors(tensors):
        """One element: `tensors`."""
        return _source(tensors, slices=False)

    @staticmethod
    def range(*args, **kwargs):
        """int64 scalars as Python's range(start, stop, step)."""
        output_type = dtypes.as_dtype(kwargs.pop("output_type", dtypes.int64))
        if kwargs:
            raise TypeError("range() got unexpected arguments %s" % sorted(kwargs))
        bounds = range(*[int(a) for a in args])
        np_type = output_type.as_numpy_dtype
        return Dataset((output_type, tensor_shape.TensorShape([])), [],
                       lambda values: (np_type(v) for v in bounds))

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """The values `generator(*args)` yields, converted to output_types."""
        types = _flatten(output_types)
        shapes = [None] * len(types) if output_shapes is None else _flatten_up_to(output_types, output_shapes)
        spec = _pack(output_types, [(dtypes.as_dtype(t), tensor_shape.as_shape(s) if s is not None
                                     else tensor_shape.unknown_shape()) for t, s in zip(types, shapes)])
        call_args = tuple(args or ())

        def make(values):
            for value in generator(*call_args):
                try:
                    flat = _flatten_up_to(output_types, value)
                except (ValueError, TypeError, KeyError):
                    flat = None
                if flat is None or len(flat) != len(types):
                    raise ValueError("the generator yielded %r, not a value of the structure %r"
                                     % (value, output_types))
                yield _pack(output_types, [np.asarray(v, dtype=_np_dtype(dtypes.as_dtype(t)))
                                           for v, t in zip(flat, types)])
        return Dataset(spec, [], make)

    @staticmethod
    def zip(datasets):
        """Elements of the structure `datasets`, one from each."""
        members = _flatten(datasets)
        for d in members:
            if not isinstance(d, Dataset):
                raise TypeError("zip needs a structure of Datasets, got %r" % (d,))
        inputs = [t for d in members for t in d._inputs]
        spec = _pack(datasets, [d._spec for d in members])

        def make(values):
            iters, start = [], 0
            for d in members:
                iters.append(d._make(values[start:start + len(d._inputs)]))
                start += len(d._inputs)
            for items in zip(*iters):
                yield _pack(datasets, items)
        post = None
        if any(d._post is not None for d in members):
            def post(element):
                parts = _flatten_top(datasets, element)
                return _pack(datasets, [d._post(p) if d._post is not None else p
                                        for d, p in zip(members, parts)])
        return Dataset(spec, inputs, make, post)

    # --- transformations -----------------------------------------------------------

    def _derive(self, make, spec=None, post="same"):
        return Dataset(self._spec if spec is None else spec, self._inputs, make,
                       self._post if post == "same" else post)

    def map(self, map_func, num_parallel_calls=None):
        """Elements map_func(element) (map_func(*element) for a tuple), built
        as graph code."""
        previous = self._post

        def post(element):
            if previous is not None:
                element = previous(element)
            result = map_func(*element) if isinstance(element, tuple) and \
                not hasattr(element, "_fields") else map_func(element)
            if isinstance(result, list):
                result = tuple(result)
            return _map_structure(ops.convert_to_tensor, result)
        return self._derive(self._make, post=post)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """Elements drawn at random from a buffer of the next `buffer_size`."""
        buffer_size = int(buffer_size)
        if buffer_size < 1:
            raise ValueError("shuffle's buffer_size must be positive, got %d" % buffer_size)
        from weir.ops import random_ops
        graph_seed, op_seed = random_ops.get_seed(seed)
        base = None if graph_seed is None else (int(graph_seed) * 1000003 + int(op_seed)) % 2 ** 32
        reshuffle = True if reshuffle_each_iteration is None else reshuffle_each_iteration
        epochs = itertools.count()
        inner = self._make

        def make(values):
            epoch = next(epochs) if reshuffle else 0
            rng = np.random.RandomState(None if base is None else (base + epoch) % 2 ** 32)
            buffer = []
            for element in inner(values):
                buffer.append(element)
                if len(buffer) == buffer_size:
                    i = rng.randint(len(buffer))
                    buffer[i], buffer[-1] = buffer[-1], buffer[i]
                    yield buffer.pop()
            while buffer:
                i = rng.randint(len(buffer))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        return self._derive(make)

    def repeat(self, count=None):
        """The elements `count` times over (forever when None or -1)."""
        count = None if count is None or int(count) < 0 else int(count)
        inner = self._make

        def make(values):
            epochs = itertools.count() if count is None else range(count)
            for _ in epochs:
                produced = False
                for element in inner(values):
                    produced = True
                    yield element
                if not produced:
                    return
        return self._derive(make)

    def batch(self, batch_size, drop_remainder=False):
        """Elements stacked `batch_size` at a time (the last batch smaller
        unless drop_remainder)."""
        batch_size = int(batch_size)
        if batch_size < 1:
            raise ValueError("batch_size must be positive, got %d" % batch_size)
        inner = self._make
        structure = self._spec

        def make(values):
            rows = []
            for element in inner(values):
                rows.append(_flatten(element))
                if len(rows) == batch_size:
                    yield _stack(structure, rows)
                    rows = []
            if rows and not drop_remainder:
                yield _stack(structure, rows)
        dim = batch_size if drop_remainder else None
        spec = _pack_spec(self._spec, [(dt, tensor_shape.TensorShape([dim]).concatenate(shape))
                                  for dt, shape in _flatten_spec(self._spec)])
        post = None
        if self._post is not None:
            per_element = self._post
            element_spec = self._spec

            def post(batch):
                return _map_batch(per_element, element_spec, batch)
        return self._derive(make, spec=spec, post=post)

    def take(self, count):
        count = int(count)
        inner = self._make
        return self._derive(lambda values: itertools.islice(inner(values), None if count < 0 else count))

    def skip(self, count):
        count = int(count)
        inner = self._make
        return self._derive(lambda values: itertools.islice(inner(values), max(count, 0), None)
                            if count >= 0 else iter(()))

    def concatenate(self, dataset):
        if self._post is not None or dataset._post is not None:
            raise NotImplementedError("weir's tf.data concatenates datasets before their maps only")
        if [d for d, _ in _flatten_spec(self._spec)] != [d for d, _ in _flatten_spec(dataset._spec)]:
            raise TypeError("concatenate: the datasets' element types differ")
        a, b, n = self._make, dataset._make, len(self._inputs)
        spec = _pack_spec(self._spec, [(d, s1 if s1.as_list() == s2.as_list() else tensor_shape.TensorShape(
            [a if a == b else None for a, b in zip(s1.as_list(), s2.as_list())])
            if s1.ndims is not None and s1.ndims == s2.ndims else tensor_shape.unknown_shape())
            for (d, s1), (_, s2) in zip(_flatten_spec(self._spec), _flatten_spec(dataset._spec))])
        return Dataset(spec, self._inputs + dataset._inputs,
                       lambda values: itertools.chain(a(values[:n]), b(values[n:])))

    def prefetch(self, buffer_size=None):
        return self

    def cache(self, filename=""):
        return self

    def apply(self, transformation_func):
        return transformation_func(self)

    def _materialized(self, extra=None):
        """(spec, make) of this dataset's output elements computed in Python:
        its maps (and `extra`, a function of the output element giving one
        more tensor) run in a graph and session of their own, element by
        element. make(values) yields (output element, extra value or None)."""
        spec = self._output_spec()
        if self._post is None and extra is None:
            inner = self._make
            return spec, lambda values: ((e, None) for e in inner(values))
        graph = ops.Graph()
        wr = _wr()
        try:
            with graph.as_default():
                raw = [wr.placeholder(d, s) for d, s in _flatten_spec(self._spec)]
                element = _pack_spec(self._spec, raw)
                if self._post is not None:
                    element = self._post(element)
                out = _flatten(_map_structure(ops.convert_to_tensor, element))
                if extra is not None:
                    out.append(ops.convert_to_tensor(extra(element)))
        except ValueError as e:
            raise NotImplementedError("filter and padded_batch run the dataset's functions in a graph of "
                                      "their own: they may not use tensors of the main graph (%s)" % e) from None
        session = wr.Session(graph=graph)
        call = session.make_callable(out, raw)
        leaves = [d for d, _ in _flatten_spec(spec)]
        inner = self._make

        def make(values):
            for element in inner(values):
                results = call(*_flatten(element))
                flat = [np.asarray(v, dtype=_np_dtype(d)) for v, d in zip(results, leaves)]
                yield _pack_spec(spec, flat), (results[-1] if extra is not None else None)
        make.session = session  # kept alive with the dataset
        return spec, make

    def filter(self, predicate):
        """The elements for which predicate(element) (a scalar bool tensor;
        predicate(*element) for a tuple) is true. Weir runs the predicate, and
        the maps before it, in a session of their own (see _materialized)."""
        def call(element):
            result = predicate(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") \
                else predicate(element)
            result = ops.convert_to_tensor(result)
            if result.dtype.base_dtype != dtypes.bool or result.shape.ndims not in (None, 0):
                raise ValueError("filter's predicate must return a scalar bool tensor, got %s" % result)
            return result
        spec, make = self._materialized(extra=call)

        def filtered(values):
            for element, keep in make(values):
                if bool(keep):
                    yield element
        return Dataset(spec, self._inputs, filtered)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        """Elements batched `batch_size` at a time, each component padded (at
        its end, with padding_values or zeros / b"") to padded_shapes (None or
        -1 dimensions: the batch's longest)."""
        batch_size = int(batch_size)
        if batch_size < 1:
            raise ValueError("batch_size must be positive, got %d" % batch_size)
        spec, make = self._materialized()
        leaves = _flatten_spec(spec)
        if padded_shapes is None:
            shapes = [s.as_list() if s.ndims is not None else None for _, s in leaves]
        else:
            shapes = [tensor_shape.as_shape(s).as_list() for s in _flatten_up_to(
                _map_spec(lambda d, s: 0, spec), padded_shapes)]
        if any(s is None for s in shapes):
            raise ValueError("padded_batch needs padded_shapes for components of unknown rank")
        pads = [None] * len(leaves) if padding_values is None else _flatten_up_to(
            _map_spec(lambda d, s: 0, spec), padding_values)

        def pad_rows(rows):
            out = []
            for i, ((dtype, _), shape) in enumerate(zip(leaves, shapes)):
                column = [np.asarray(r[i]) for r in rows]
                target = [max(c.shape[k] for c in column) if dim in (None, -1) else dim
                          for k, dim in enumerate(shape)]
                default = b"" if dtype == dtypes.string else 0
                value = default if pads[i] is None else pads[i]
                batch = np.full([len(column)] + target, value, dtype=_np_dtype(dtype))
                for j, c in enumerate(column):
                    if any(a > b for a, b in zip(c.shape, target)):
                        raise errors.DataLossError(  # TF's error class for it
                            None, None, "Attempted to pad to a smaller size than the input element: "
                            "%s into %s" % (list(c.shape), target))
                    batch[(j,) + tuple(slice(0, n) for n in c.shape)] = c
                out.append(batch)
            return _pack_spec(spec, out)

        def batched(values):
            rows = []
            for element, _ in make(values):
                rows.append(_flatten(element))
                if len(rows) == batch_size:
                    yield pad_rows(rows)
                    rows = []
            if rows and not drop_remainder:
                yield pad_rows(rows)
        dim = batch_size if drop_remainder else None
        out_spec = _pack_spec(spec, [(d, tensor_shape.TensorShape([dim] + [None if x in (None, -1) else x
                                                                           for x in shape]))
                                     for (d, _), shape in zip(leaves, shapes)])
        return Dataset(out_spec, self._inputs, batched)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The files matching a glob pattern (or patterns), found when the
        iterator starts; shuffled unless shuffle=False (then sorted)."""
        return _list_files(file_pattern, shuffle, seed)

    def _inner_datasets(self, map_func, what):
        """(spec, make) of the datasets map_func builds from each element:
        the element's values are fed to a graph of their own, where
        map_func's dataset reads them; make(values) yields, per element of
        this dataset, a Python iterator of that dataset's elements."""
        outer_spec, outer_make = self._materialized()
        graph = ops.Graph()
        wr = _wr()
        with graph.as_default():
            phs = [wr.placeholder(d, s) for d, s in _flatten_spec(outer_spec)]
            element = _pack_spec(outer_spec, phs)
            inner = map_func(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") \
                else map_func(element)
            if not isinstance(inner, Dataset):
                raise TypeError("%s's map_func must return a Dataset, got %r" % (what, inner))
            inner_spec, inner_make = inner._materialized()
            session = wr.Session(graph=graph)
            feed = session.make_callable(list(inner._inputs), phs) if inner._inputs else None

        def make(values):
            for element, _ in outer_make(values):
                flat = _flatten(element)
                inner_values = list(feed(*flat)) if feed is not None else []
                yield (e for e, _ in inner_make(inner_values))
        make.session = session
        return inner_spec, make

    def flat_map(self, map_func):
        """The elements of the datasets map_func(element) builds, one after
        another (map_func runs in a graph of its own, as filter's)."""
        spec, make = self._inner_datasets(map_func, "flat_map")
        return Dataset(spec, self._inputs, lambda values: itertools.chain.from_iterable(make(values)))

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None):
        """The elements of the datasets map_func(element) builds, taken
        block_length at a time from cycle_length of them in turn (a finished
        one replaced by the next element's), as TF's deterministic order."""
        cycle_length = 1 if cycle_length in (None, AUTOTUNE) else int(cycle_length)
        block_length = 1 if block_length is None else int(block_length)
        if cycle_length < 1 or block_length < 1:
            raise ValueError("cycle_length and block_length must be positive")
        spec, make = self._inner_datasets(map_func, "interleave")

        def interleaved(values):
            sources = make(values)
            slots = [next(sources, None) for _ in range(cycle_length)]
            while any(s is not None for s in slots):
                for i in range(cycle_length):
                    if slots[i] is None:
                        continue
                    for _ in range(block_length):
                        element = next(slots[i], None)
                        if element is None:
                            slots[i] = next(sources, None)
                            break
                        yield element
        return Dataset(spec, self._inputs, interleaved)

    # --- iterators and element types ------------------------------------------------

    def make_one_shot_iterator(self):
        from weir.data.iterator_ops import Iterator
        return Iterator(self, initializable=False)

    def make_initializable_iterator(self, shared_name=None):
        from weir.data.iterator_ops import Iterator
        return Iterator(self, initializable=True)

    def _output_spec(self):
        """(dtype, shape) leaves of the output elements (the maps traced in a
        scratch graph)."""
        if self._post is None:
            return self._spec
        with ops.Graph().as_default():
            wr = _wr()
            raw = _pack_spec(self._spec, [wr.placeholder(d, s) for d, s in _flatten_spec(self._spec)])
            out = self._post(raw)
            return _map_structure(lambda t: (t.dtype.base_dtype, t.shape), out)

    @property
    def output_types(self):
        return _map_spec(lambda d, s: d, self._output_spec())

    @property
    def output_shapes(self):
        return _map_spec(lambda d, s: s, self._output_spec())

    @property
    def output_classes(self):
        return _map_spec(lambda d, s: ops.Tensor, self._output_spec())



def _flatten_spec(spec):
    """The (dtype, shape) leaves of a spec structure."""
    if isinstance(spec, dict):
        return [leaf for k in sorted(spec) for leaf in _flatten_spec(spec[k])]
    if isinstance(spec, tuple) and not (len(spec) == 2 and isinstance(spec[0], dtypes.DType)):
        return [leaf for item in spec for leaf in _flatten_spec(item)]
    return [spec]


def _pack_spec(spec, flat):
    flat = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple) and not (len(s) == 2 and isinstance(s[0], dtypes.DType)):
            items = [build(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(flat)
    return build(spec)


def _map_spec(fn, spec):
    return _pack_spec(spec, [fn(d, s) for d, s in _flatten_spec(spec)])


def _flatten_top(structure, element):
    """The parts of `element` that correspond to the leaves (datasets) of `structure`."""
    if isinstance(structure, dict):
        return [p for k in sorted(structure) for p in _flatten_top(structure[k], element[k])]
    if isinstance(structure, (tuple, list)):
        return [p for s, e in zip(structure, element) for p in _flatten_top(s, e)]
    return [element]


def _stack(spec, rows):
    columns = list(zip(*rows))
    leaves = _flatten_spec(spec)
    out = []
    for (dtype, _), column in zip(leaves, columns):
        try:
            out.append(np.stack(column).astype(_np_dtype(dtype), copy=False))
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, "Cannot batch tensors with different shapes in one component: %s"
                % sorted({np.shape(c) for c in column})) from None
    return _pack_spec(spec, out)


def _map_batch(per_element, element_spec, batch):
    """per_element applied to each row of `batch` (map_fn; the output
    structure traced once on the first row)."""
    wr = _wr()
    probe = per_element(_map_structure(lambda t: t[0], batch))
    dtype = _map_structure(lambda t: t.dtype.base_dtype, probe)
    return wr.map_fn(per_element, batch, dtype=dtype, back_prop=False)


def _element_leaves(x):
    """The leaves of a source structure: tuples and dicts are structure, a
    list is one tensor (tf.data's rule)."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _element_leaves(x[k])]
    if isinstance(x, tuple):
        return [leaf for item in x for leaf in _element_leaves(item)]
    return [x]


def _element_structure(x):
    """`x` with its lists (tensors) replaced by a leaf marker, for _pack."""
    if isinstance(x, dict):
        return {k: _element_structure(v) for k, v in x.items()}
    if isinstance(x, tuple):
        items = [_element_structure(v) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    return 0


def _source(tensors, slices):
    leaves = _element_leaves(tensors)
    tensors = _element_structure(tensors)
    inputs, slots = [], []
    from weir.framework import tensor_util
    for leaf in leaves:
        if _is_tensor(leaf):
            t = ops.convert_to_tensor(leaf)
            value = tensor_util.constant_value(t) if t.op.type == "Const" else None
            if value is not None:  # a constant is read once, here, not copied into every get_next
                array = np.asarray(value)
                slots.append(("const", array, t.dtype.base_dtype, t.shape))
                continue
            slots.append(("input", len(inputs), t.dtype.base_dtype, t.shape))
            inputs.append(t)
        else:
            array = _as_array(leaf)
            slots.append(("const", array, _dtype_of(array), tensor_shape.TensorShape(array.shape)))
    spec_leaves = []
    rows = None
    for _, _, dtype, shape in slots:
        if slices:
            if shape.ndims == 0:
                raise ValueError("from_tensor_slices needs tensors of rank >= 1, got a scalar")
            if shape.ndims is not None:
                n = shape.as_list()[0]
                if n is not None:
                    if rows is not None and rows != n:
                        raise ValueError("from_tensor_slices: the tensors' first dimensions differ "
                                         "(%d and %d)" % (rows, n))
                    rows = n
            spec_leaves.append((dtype, shape[1:] if shape.ndims is not None else shape))
        else:
            spec_leaves.append((dtype, shape))
    spec = _pack_spec_from(tensors, spec_leaves)

    def make(values):
        arrays = []
        for kind, payload, dtype, _ in slots:
            array = payload if kind == "const" else values[payload]
            arrays.append(np.asarray(array, dtype=_np_dtype(dtype)))
        if not slices:
            yield _pack(tensors, arrays)
            return
        n = {len(a) for a in arrays}
        if len(n) != 1:
            raise errors.InvalidArgumentError(None, None, "from_tensor_slices: the tensors' first "
                                              "dimensions differ: %s" % sorted(n))
        for i in range(n.pop()):
            yield _pack(tensors, [a[i] for a in arrays])
    return Dataset(spec, inputs, make)


def _pack_spec_from(structure, leaves):
    """`structure` (of values) with its leaves replaced by the (dtype, shape) `leaves`."""
    flat = iter(leaves)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, (tuple, list)):
            items = [build(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(flat)
    return build(structure)


def _filename_source(filenames):
    """(inputs, names(values)) of a file-reading source: Python names, or a
    string tensor (a scalar or a vector, read when the iterator starts)."""
    if _is_tensor(filenames):
        tensor = ops.convert_to_tensor(filenames)
        if tensor.dtype.base_dtype != dtypes.string:
            raise TypeError("filenames must be a string tensor, got %s" % tensor.dtype.name)
        return [tensor], lambda values: [f.decode() if isinstance(f, bytes) else str(f)
                                         for f in np.asarray(values[0], dtype=object).ravel()]
    if isinstance(filenames, (str, bytes)):
        filenames = [filenames]
    names = [f.decode() if isinstance(f, bytes) else str(f) for f in filenames]
    return [], lambda values: names


def TextLineDataset(filenames, compression_type=None, buffer_size=None):  # noqa: N802  (TF's class name)
    """The lines of the files (without their line ends), as string scalars."""
    inputs, names = _filename_source(filenames)
    if compression_type:
        raise NotImplementedError("TextLineDataset(compression_type=...) is not supported by weir")

    def make(values):
        for name in names(values):
            with open(name, "rb") as f:
                for line in f:
                    yield np.array(line.rstrip(b"\n").rstrip(b"\r"), dtype=object)
    return Dataset((dtypes.string, tensor_shape.TensorShape([])), inputs, make)


def TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    """The records of TFRecord files, as string scalars."""
    inputs, names = _filename_source(filenames)

    def make(values):
        from weir.io import tf_record
        options = tf_record.TFRecordOptions(compression_type) if compression_type else None
        for name in names(values):
            for record in tf_record.tf_record_iterator(name, options):
                yield np.array(record, dtype=object)
    return Dataset((dtypes.string, tensor_shape.TensorShape([])), inputs, make)


def _list_files(file_pattern, shuffle=None, seed=None):
    """The files matching `file_pattern` (a glob, or a list of them), as string
    scalars: sorted, or shuffled (the default, as TF) with a seeded order."""
    import glob
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in patterns]
    shuffle = True if shuffle is None else shuffle
    from weir.ops import random_ops
    graph_seed, op_seed = random_ops.get_seed(seed)
    base = None if graph_seed is None else (int(graph_seed) * 1000003 + int(op_seed)) % 2 ** 32
    epochs = itertools.count()

    def make(values):
        names = sorted({name for p in patterns for name in glob.glob(p)})
        if not names:
            raise errors.InvalidArgumentError(None, None, "Expected 'tf.Tensor(False, shape=(), "
                                              "dtype=bool)' to be true: no files matched %s" % patterns)
        if shuffle:
            np.random.RandomState(None if base is None else (base + next(epochs)) % 2 ** 32).shuffle(names)
        for name in names:
            yield np.array(name.encode(), dtype=object)
    return Dataset((dtypes.string, tensor_shape.TensorShape([])), [], make)
