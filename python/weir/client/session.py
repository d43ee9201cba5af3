"""Sessions: run a Graph's tensors and ops (TensorFlow 1's tf.compat.v1.Session).

    with wr.Session(devices=2, threads=4) as sess:
        loss_value, _ = sess.run([loss, train_op], {x: batch})

`Session.run(fetches, feed_dict=None, options=None, run_metadata=None)`:
- fetches: a Tensor, an Operation, a name ("op:0" is a tensor, "op" an
  operation), an object with `_as_graph_element()` (a Variable), or any
  nesting of lists, tuples, namedtuples and dicts (OrderedDict too) of them.
  The result has the same structure; an Operation gives None, a 0-d tensor a
  numpy scalar, any other tensor a numpy array sharing Weir's buffer. A
  tensor named several times is fetched once.
- feed_dict: keys are Tensors (placeholders or any feedable tensor), their
  names, or objects with `_as_graph_element()`; values are numpy arrays or
  anything np.asarray converts, converted to the tensor's dtype (an aligned,
  C-contiguous array of that dtype is used without a copy) and checked
  against its static shape (ValueError, TF's text).
- Errors of the step raise the weir.errors class of their status code. When
  the message names a node of this graph, `.op` is that Operation and the
  message ends with the file:line of the user's code that created it.

The session grows with its graph: before each call it extends its C++
session with the nodes added since the previous call (by node id). The
processed fetch/feed structure of each call signature is cached (keyed by
the fetch objects and feed keys themselves, which the cache keeps alive, so
ids cannot be reused), which keeps the per-call overhead to a few
microseconds. Several threads may call run on one session at once: the C++
step runs without the GIL.

Weir-specific: `Session(devices=N, threads=T)` sets the number of virtual CPU
devices and the intra-op (per device) and inter-op pool sizes; `ConfigProto`
accepts TF1's common fields (see its docstring). RunMetadata.step_stats is
a list of per-node `NodeExecStats` (also grouped TF-style by `.dev_stats`),
and `RunMetadata.chrome_trace()` gives Weir's Chrome trace JSON.
"""
import collections.abc
import contextlib
import os
import threading
import weakref

import numpy as np

from weir import _C
from weir.framework import errors
from weir.framework import ops

__all__ = [
    "Session", "InteractiveSession", "BaseSession", "RunOptions", "RunMetadata", "ConfigProto",
    "GPUOptions", "GraphOptions", "get_default_session",
]

_ndarray = np.ndarray


# ---------------------------------------------------------------------------
# Options, metadata, config


class RunOptions:
    """Per-call options (TF's RunOptions fields Weir honours).

    trace_level: NO_TRACE (0) or FULL_TRACE (3; SOFTWARE_TRACE and
      HARDWARE_TRACE trace like FULL_TRACE): collect per-node step statistics
      into the RunMetadata passed to the same call.
    timeout_in_ms: > 0: the step fails with DeadlineExceededError after it
      (blocked queue ops and Recvs are cancelled).
    """

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    class TraceLevel:
        NO_TRACE = 0
        SOFTWARE_TRACE = 1
        HARDWARE_TRACE = 2
        FULL_TRACE = 3

    # Accepted for TF scripts' sake; they change nothing in Weir.
    _IGNORED = ("inter_op_thread_pool", "output_partition_graphs",
                "report_tensor_allocations_upon_oom", "debug_options", "experimental")

    def __init__(self, trace_level=0, timeout_in_ms=0, **kwargs):
        for key in kwargs:
            if key not in self._IGNORED:
                raise ValueError('Protocol message RunOptions has no "%s" field.' % key)
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms
        for key, value in kwargs.items():
            setattr(self, key, value)

    def _to_c(self, default_timeout=0):
        timeout = int(self.timeout_in_ms or default_timeout or 0)
        return {"trace_level": int(self.trace_level or 0), "timeout_in_ms": timeout}

    def __repr__(self):
        return "RunOptions(trace_level=%d, timeout_in_ms=%d)" % (self.trace_level, self.timeout_in_ms)


class NodeExecStats:
    """What one node did in a traced step: `node_name`, `op`, `device`,
    `thread_id`, `start_micros`/`end_micros` (since the Unix epoch),
    `bytes_allocated`, `frame_name` and `iteration` (loops); plus TF's names
    `all_start_micros`, `all_end_rel_micros`, `op_end_rel_micros`,
    `timeline_label`."""

    __slots__ = ("node_name", "op", "device", "thread_id", "start_micros", "end_micros",
                 "bytes_allocated", "frame_name", "iteration", "_extra")

    def __init__(self, node_name="", op="", device="", thread_id=0, start_micros=0, end_micros=0,
                 bytes_allocated=0, frame_name="", iteration=0, **extra):
        self.node_name = node_name
        self.op = op
        self.device = device
        self.thread_id = thread_id
        self.start_micros = start_micros
        self.end_micros = end_micros
        self.bytes_allocated = bytes_allocated
        self.frame_name = frame_name
        self.iteration = iteration
        self._extra = extra

    def __getattr__(self, name):
        extra = object.__getattribute__(self, "_extra")
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    @property
    def all_start_micros(self):
        return self.start_micros

    @property
    def op_start_rel_micros(self):
        return 0

    @property
    def op_end_rel_micros(self):
        return self.end_micros - self.start_micros

    @property
    def all_end_rel_micros(self):
        return self.end_micros - self.start_micros

    @property
    def timeline_label(self):
        return "%s = %s()" % (self.node_name, self.op)

    def __repr__(self):
        return "NodeExecStats(%r, %r, %r, %d us)" % (self.node_name, self.op, self.device,
                                                     self.end_micros - self.start_micros)


class DeviceStepStats:
    """The node statistics of one device (TF's DeviceStepStats)."""

    __slots__ = ("device", "node_stats")

    def __init__(self, device, node_stats):
        self.device = device
        self.node_stats = node_stats


class StepStats(list):
    """A step's NodeExecStats, in the order they finished; `dev_stats` groups
    them per device as TF's StepStats does."""

    @property
    def dev_stats(self):
        by_device = {}
        for stats in self:
            by_device.setdefault(stats.device, []).append(stats)
        return [DeviceStepStats(device, nodes) for device, nodes in by_device.items()]


def _proto_varint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _proto_key(number):
    return _proto_varint((number << 3) | 2)  # a length-delimited field


class RunMetadata:
    """Filled by `Session.run(..., run_metadata=m)`: `step_stats` (a StepStats,
    empty unless the RunOptions asked for a trace) and `chrome_trace()`
    (Chrome trace-event JSON, one track per device; chrome://tracing and
    Perfetto open it)."""

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
        self.cost_graph = None
        self._chrome_trace = ""

    def chrome_trace(self):
        if not self._chrome_trace and self.step_stats:
            from weir.client import timeline
            return timeline.Timeline(self.step_stats).generate_chrome_trace_format()
        return self._chrome_trace or '{"traceEvents": []}'

    def _fill(self, metadata):
        if not metadata:
            return
        stats = StepStats()
        for entry in metadata.get("step_stats") or ():
            stats.append(entry if isinstance(entry, NodeExecStats) else NodeExecStats(**entry))
        self.step_stats = stats
        self._chrome_trace = metadata.get("chrome_trace") or ""

    def Clear(self):  # noqa: N802  (TF's proto method)
        self.__init__()

    def SerializeToString(self):  # noqa: N802  (TF's proto method)
        """The step statistics as a serialized RunMetadata (TF's field numbers:
        step_stats = 1, with its DeviceStepStats and NodeExecStats), as
        FileWriter.add_run_metadata writes it for TensorBoard."""
        from weir.core import protos
        message = protos.StepStats()
        for device_stats in self.step_stats.dev_stats:
            dev = message.dev_stats.add(device=device_stats.device)
            for node in device_stats.node_stats:
                dev.node_stats.add(node_name=node.node_name, all_start_micros=int(node.start_micros),
                                   all_end_rel_micros=int(node.end_micros - node.start_micros),
                                   timeline_label=node.timeline_label, thread_id=int(node.thread_id),
                                   op=node.op, bytes_allocated=int(node.bytes_allocated),
                                   frame_name=node.frame_name, iteration=int(node.iteration))
        step_stats = message.SerializeToString()
        return _proto_key(1) + _proto_varint(len(step_stats)) + step_stats  # RunMetadata.step_stats


class _OptionsBag:
    """Accepts any attribute (TF's nested option protos, e.g.
    `config.gpu_options.allow_growth = True`); Weir ignores them."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        bag = _OptionsBag()
        setattr(self, name, bag)
        return bag


def GPUOptions(**kwargs):  # noqa: N802  (TF's class name)
    """Accepted so TF1 scripts run; Weir's CPU build ignores every field."""
    return _OptionsBag(**kwargs)


def GraphOptions(**kwargs):  # noqa: N802
    """Accepted so TF1 scripts run; Weir ignores every field."""
    return _OptionsBag(**kwargs)


class ConfigProto:
    """Session configuration, TF1's common fields:

    device_count: {"CPU": n} -> n virtual CPU devices (other device types ignored).
    intra_op_parallelism_threads: threads per device for one op (0: one per core).
    inter_op_parallelism_threads: threads running independent ops (0: one per core).
    operation_timeout_in_ms: the default RunOptions.timeout_in_ms of every call.
    allow_soft_placement: a node whose requested device this session lacks
      (a GPU, another job or task, a CPU index past the count) is placed as if
      it requested none, as TF's soft placement (without it, an error naming
      the node).
    log_device_placement, gpu_options, graph_options, use_per_session_threads,
      isolate_session_state: accepted, no effect.
    """

    _FIELDS = ("device_count", "intra_op_parallelism_threads", "inter_op_parallelism_threads",
               "operation_timeout_in_ms", "allow_soft_placement", "log_device_placement",
               "gpu_options", "graph_options", "use_per_session_threads", "isolate_session_state",
               "placement_period", "device_filters", "experimental")

    def __init__(self, **kwargs):
        for key in kwargs:
            if key not in self._FIELDS:
                raise ValueError('Protocol message ConfigProto has no "%s" field.' % key)
        self.device_count = dict(kwargs.pop("device_count", None) or {})
        self.intra_op_parallelism_threads = int(kwargs.pop("intra_op_parallelism_threads", 0))
        self.inter_op_parallelism_threads = int(kwargs.pop("inter_op_parallelism_threads", 0))
        self.operation_timeout_in_ms = int(kwargs.pop("operation_timeout_in_ms", 0))
        self.allow_soft_placement = bool(kwargs.pop("allow_soft_placement", False))
        self.log_device_placement = bool(kwargs.pop("log_device_placement", False))
        self.gpu_options = kwargs.pop("gpu_options", None) or _OptionsBag()
        self.graph_options = kwargs.pop("graph_options", None) or _OptionsBag()
        for key, value in kwargs.items():
            setattr(self, key, value)

    def _to_c(self):
        config = {}
        cpus = self.device_count.get("CPU")
        if cpus is not None:
            config["devices"] = cpus  # checked with the thread counts by _check_counts
        if self.intra_op_parallelism_threads:
            config["intra_op_threads"] = self.intra_op_parallelism_threads
        if self.inter_op_parallelism_threads:
            config["inter_op_threads"] = self.inter_op_parallelism_threads
        return config


# Every device owns an intra-op pool: devices x threads OS threads. Past these
# bounds thread creation fails inside the C++ runtime (a crash or a minutes-long
# hang), so they are refused here with the numbers.
_MAX_DEVICES = 1024
_MAX_POOL_THREADS = 4096
_MAX_TOTAL_THREADS = 1 << 15


def _check_counts(c_config):
    """Validates the device and thread counts of a _C.Session config in place:
    ints (TypeError for str/float), non-negative, within the bounds above
    (InvalidArgumentError)."""
    for key in ("devices", "intra_op_threads", "inter_op_threads"):
        if key not in c_config:
            continue
        value = c_config[key]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError("Session %s must be an int, got %r" % (key, value))
        c_config[key] = value = int(value)
        limit = _MAX_DEVICES if key == "devices" else _MAX_POOL_THREADS
        if not (0 <= value <= limit) or (key == "devices" and value == 0):
            raise errors.InvalidArgumentError(
                None, None, "Session config: %s must be in [%d, %d], got %d"
                % (key, int(key == "devices"), limit, value))
    intra = c_config.get("intra_op_threads") or (os.cpu_count() or 1)
    inter = c_config.get("inter_op_threads") or (os.cpu_count() or 1)
    total = c_config.get("devices", 1) * intra + inter
    if total > _MAX_TOTAL_THREADS:
        raise errors.InvalidArgumentError(
            None, None, "Session config: %d devices x %d intra-op threads + %d inter-op threads "
            "= %d threads, more than %d" % (c_config.get("devices", 1), intra, inter, total,
                                             _MAX_TOTAL_THREADS))


def _soften_devices(graph_def_bytes, num_devices):
    """TF's soft placement on a serialized GraphDef: device requests this
    in-process session cannot satisfy are cleared (the placer then chooses)."""
    from weir.core import protos
    graph_def = protos.GraphDef()
    graph_def.ParseFromString(graph_def_bytes)
    changed = False
    for node in graph_def.node:
        if not node.device:
            continue
        try:
            spec = ops.DeviceSpec.from_string(node.device)
        except ValueError:
            continue  # left for the placer's own error
        feasible = (spec.job in (None, "localhost") and spec.replica in (None, 0)
                    and spec.task in (None, 0) and spec.device_type in (None, "CPU")
                    and (not isinstance(spec.device_index, int)
                         or spec.device_index < num_devices))
        if not feasible:
            node.device = ""
            changed = True
    return graph_def.SerializeToString() if changed else graph_def_bytes


# ---------------------------------------------------------------------------
# The default session (thread-local stack, as TF's)


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []


_default_stack = _DefaultSessionStack()


def get_default_session():
    """The innermost session of `with sess.as_default():` (or of a `with
    Session() as sess:` block, or an InteractiveSession) in this thread, or
    None."""
    stack = _default_stack.stack
    return stack[-1] if stack else None


# ---------------------------------------------------------------------------
# Fetch and feed processing


def _fetch_type_error(fetch, detail):
    return TypeError('Argument `fetch` = %s has invalid type "%s" must be a string or Tensor. (%s)'
                     % (fetch, type(fetch).__name__, detail))


def _fetch_value_error(fetch, detail):
    return ValueError("Argument `fetch` = %s cannot be interpreted as a Tensor. (%s)" % (fetch, detail))


def _resolve_fetch(graph, fetch):
    """The Tensor or Operation of one fetch leaf (TF's errors otherwise)."""
    element = fetch
    convert = getattr(type(fetch), "_as_graph_element", None)
    if convert is not None and not isinstance(fetch, (ops.Tensor, ops.Operation)):
        element = fetch._as_graph_element()
    if isinstance(element, (ops.Tensor, ops.Operation)):
        if element.graph is not graph:
            kind = "Tensor" if isinstance(element, ops.Tensor) else "Operation"
            raise _fetch_value_error(fetch, "%s %s is not an element of this graph." % (kind, element))
        return element
    if isinstance(element, str):
        try:
            element = graph.as_graph_element(element, allow_tensor=True, allow_operation=True)
            if isinstance(element, ops.Tensor) and element.op.type == "VarHandleOp":
                # "w:0" names a TF1 ref variable's value; weir's variables are
                # resource variables, whose "w:0" is the handle: fetch the read.
                read = _variable_read(graph, element)
                return element if read is None else read
            return element
        except (ValueError, KeyError) as e:
            raise _fetch_value_error(fetch, e.args[0] if e.args else e) from None
        except TypeError as e:
            raise _fetch_type_error(fetch, e) from None
    raise _fetch_type_error(fetch, "Can not convert a %s into a Tensor or Operation."
                            % type(element).__name__)


def _variable_read(graph, handle):
    """The read tensor of the Variable whose handle is `handle`, or None."""
    for key in (ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.LOCAL_VARIABLES):
        for variable in graph.get_collection(key):
            if getattr(variable, "handle", None) is handle:
                return variable._as_graph_element()
    return None


def _scalar_or_array(value):
    # TF returns 0-d results as numpy scalars (bytes for strings).
    return value[()] if value.ndim == 0 else value


class _FetchPlan:
    """A fetch structure flattened: unique tensor names to fetch, unique op
    names to run, and `build(outputs)` giving the user's structure back."""

    __slots__ = ("fetch_names", "targets", "build", "single", "elements", "empty")

    def __init__(self, graph, fetches, fed_names=()):
        self.fetch_names = []
        self.targets = []
        self.elements = {}  # name -> Tensor/Operation (errors name them; tests read them)
        tensor_index = {}
        target_set = set()

        def leaf(fetch):
            if fetch is None:
                raise TypeError('Argument `fetch` = None has invalid type "NoneType". Cannot be None')
            element = _resolve_fetch(graph, fetch)
            if isinstance(element, ops.Operation):
                if element.name not in target_set:
                    target_set.add(element.name)
                    self.targets.append(element.name)
                self.elements[element.name] = element
                return None
            name = element.name
            index = tensor_index.get(name)
            if index is None:
                index = tensor_index[name] = len(self.fetch_names)
                self.fetch_names.append(name)
                self.elements[name] = element
            return index

        def compile_(fetch):
            # Returns a function outputs -> value for this (sub)structure.
            if isinstance(fetch, list):
                parts = [compile_(f) for f in fetch]
                return lambda outs: [p(outs) for p in parts]
            if isinstance(fetch, tuple):
                parts = [compile_(f) for f in fetch]
                if hasattr(fetch, "_fields"):  # a namedtuple
                    cls = type(fetch)
                    return lambda outs: cls(*[p(outs) for p in parts])
                cls = type(fetch)
                if cls is tuple:
                    return lambda outs: tuple([p(outs) for p in parts])
                return lambda outs: cls([p(outs) for p in parts])
            if isinstance(fetch, collections.abc.Mapping):
                keys = list(fetch.keys())
                parts = [compile_(fetch[k]) for k in keys]
                cls = type(fetch)
                factory = getattr(fetch, "default_factory", None)

                def build_mapping(outs):
                    items = [(k, p(outs)) for k, p in zip(keys, parts)]
                    if cls is dict:
                        return dict(items)
                    if factory is not None or hasattr(fetch, "default_factory"):
                        result = cls(factory)
                        result.update(items)
                        return result
                    try:
                        return cls(items)
                    except TypeError:
                        return dict(items)

                return build_mapping
            if getattr(type(fetch), "_as_fetches", None) is not None:
                # A composite (SparseTensor): its tensors, rebuilt by its
                # _fetch_result (a SparseTensorValue).
                parts = [compile_(f) for f in fetch._as_fetches()]
                rebuild = type(fetch)._fetch_result
                return lambda outs: rebuild([p(outs) for p in parts])
            index = leaf(fetch)
            if index is None:
                return lambda outs: None
            if self.fetch_names[index] in fed_names:
                return lambda outs: outs[index]  # the fed array itself, 0-d too (as TF)
            return lambda outs: _scalar_or_array(outs[index])

        self.single = None
        if isinstance(fetches, (list, tuple, collections.abc.Mapping)) or getattr(
                type(fetches), "_as_fetches", None) is not None:
            self.build = compile_(fetches)
        else:
            index = leaf(fetches)
            if index is not None and self.fetch_names[index] in fed_names:
                self.single = None
                self.build = lambda outs: outs[index]
            else:
                self.single = index
                self.build = (lambda outs: None) if index is None else None
        self.empty = not self.fetch_names and not self.targets


class _FeedEntry:
    """One feed key resolved: the tensor, its name, the numpy dtype values
    convert to, and its static shape (refreshed when set_shape changes it)."""

    __slots__ = ("tensor", "name", "np_dtype", "shape_obj", "dims", "int_range")

    def __init__(self, tensor):
        self.tensor = tensor
        self.name = tensor.name
        np_type = tensor.dtype.as_numpy_dtype
        if np_type is None:
            raise TypeError("Cannot feed Tensor %s: its dtype %s has no numpy equivalent"
                            % (tensor.name, tensor.dtype.name))
        self.np_dtype = np.dtype(np_type)
        if self.np_dtype.kind in "iu":
            info = np.iinfo(self.np_dtype)
            self.int_range = (int(info.min), int(info.max))
        else:
            self.int_range = None
        self.shape_obj = None
        self.dims = None
        self.refresh_shape()

    def refresh_shape(self):
        shape = self.tensor.shape
        self.shape_obj = shape
        self.dims = None if shape.ndims is None else tuple(shape.as_list())

    def convert(self, value):
        """The numpy array fed for `value` (TF's conversions and checks)."""
        if type(value) is _ndarray and (value.dtype is self.np_dtype or value.dtype == self.np_dtype):
            array = value
        else:
            if isinstance(value, ops.Tensor):
                raise TypeError(
                    "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                    "Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, "
                    "the tensor object was %s which was passed to the argument `feed_dict` with key %s."
                    % (value, self.tensor))
            if type(value) is int and self.int_range is not None and not (
                    self.int_range[0] <= value <= self.int_range[1]):
                raise TypeError(
                    "Type of feed value %s with type %s is not compatible with Tensor type %s. Try "
                    "explicitly setting the type of the feed tensor to a larger type (e.g. int64)."
                    % (value, type(value), self.np_dtype.type))
            array = np.asarray(value, dtype=self.np_dtype)
        if self.tensor.shape is not self.shape_obj:
            self.refresh_shape()
        dims = self.dims
        shape = array.shape
        if shape != dims and dims is not None:  # equal tuples: the common case, checked first
            if len(shape) != len(dims) or any(d is not None and d != s for d, s in zip(dims, shape)):
                raise ValueError("Cannot feed value of shape %s for Tensor '%s', which has shape '%s'"
                                 % (shape, self.name, self.shape_obj))
        return array


def _feed_key_error(detail):
    return TypeError("Cannot interpret feed_dict key as Tensor: %s" % detail)


class _NestedFeedKey(Exception):
    """Raised by _build_plan for a feed_dict with a tuple key (a nested
    structure of tensors, as an LSTMStateTuple); run() flattens it and retries,
    so plain feeds pay nothing for the case."""


def _flatten_feed_dict(feed_dict):
    """feed_dict with each tuple/list key (a nested structure of tensors, as
    TF allows) replaced by its leaves, each fed the matching leaf of the value."""
    flat = {}
    for key, value in feed_dict.items():
        if getattr(type(key), "_as_fetches", None) is not None:
            # A SparseTensor (of sparse_placeholder parts): fed a
            # SparseTensorValue or an (indices, values, dense_shape) tuple.
            keys = key._as_fetches()
            if not isinstance(value, (tuple, list)) or len(value) != len(keys):
                raise TypeError("A %s in feed_dict must be fed a %sValue or a tuple of its %d "
                                "parts, got %r" % (type(key).__name__, type(key).__name__,
                                                   len(keys), type(value).__name__))
            flat.update(zip(keys, value))
            continue
        if not isinstance(key, (tuple, list)):
            flat[key] = value
            continue
        keys = _flatten_structure(key)
        values = _flatten_structure(value) if isinstance(value, (tuple, list)) else None
        if values is None or len(values) != len(keys):
            raise ValueError("Shape of feed value %r does not match the structure of the feed key %r "
                             "(%d tensors)" % (type(value).__name__, key, len(keys)))
        flat.update(zip(keys, values))
    return flat


def _flatten_structure(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _flatten_structure(item)]
    return [x]


def _resolve_feed_key(graph, key):
    element = key
    if isinstance(key, (tuple, list)) or getattr(type(key), "_as_fetches", None) is not None:
        raise _NestedFeedKey()
    if not isinstance(key, ops.Tensor):
        if getattr(type(key), "_as_graph_element", None) is not None:
            element = key._as_graph_element()
        elif isinstance(key, str):
            try:
                element = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
            except (TypeError, ValueError, KeyError) as e:
                raise _feed_key_error(e.args[0] if e.args else e) from None
        else:
            raise _feed_key_error("Can not convert a %s into a Tensor." % type(key).__name__)
    if not isinstance(element, ops.Tensor):
        raise _feed_key_error("Can not convert a %s into a Tensor." % type(element).__name__)
    if element.graph is not graph:
        raise _feed_key_error("Tensor %s is not an element of this graph." % element)
    is_feedable = getattr(graph, "is_feedable", None)
    if is_feedable is not None and not is_feedable(element):
        raise ValueError("Tensor %s may not be fed." % element)
    return element


def _freeze(fetches):
    """A hashable key of a fetch structure (its leaves by identity/equality,
    its containers by type and order); raises TypeError for unhashable leaves."""
    t = type(fetches)
    if t is list or isinstance(fetches, tuple):
        return (t, tuple([_freeze(f) for f in fetches]))
    if isinstance(fetches, collections.abc.Mapping):
        return (t, tuple([(k, _freeze(v)) for k, v in fetches.items()]))
    hash(fetches)
    return fetches


class _RunPlan:
    __slots__ = ("fetch", "feeds", "key_refs", "fed")

    def __init__(self, fetch, feeds, key_refs):
        self.fetch = fetch
        self.feeds = feeds
        self.key_refs = key_refs  # keeps the keyed objects alive (no id reuse)
        # (output index, feed position) of each fetched tensor that is also
        # fed: TF returns the fed value as given (after dtype conversion).
        position = {entry.name: j for j, entry in enumerate(feeds)}
        self.fed = [(i, position[name]) for i, name in enumerate(fetch.fetch_names)
                    if name in position]


_CACHE_LIMIT = 256
_leaf_types = (None, None)  # (Tensor, Operation), set by the first Session (ops may load later)


# ---------------------------------------------------------------------------
# Sessions


class BaseSession:
    """The session machinery shared by Session and InteractiveSession."""

    def __init__(self, target="", graph=None, config=None, *, devices=None, threads=None,
                 remote=None):
        global _leaf_types
        if _leaf_types[0] is None:
            _leaf_types = (ops.Tensor, ops.Operation)
        if graph is None:
            graph = ops.get_default_graph()
        elif not isinstance(graph, ops.Graph):
            raise TypeError("Argument `graph` must be a weir Graph, got %s" % type(graph).__name__)
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError("config must be a ConfigProto, got %s" % type(config).__name__)
        if isinstance(target, bytes):
            target = target.decode()
        c_config = config._to_c() if config is not None else {}
        if devices is not None:
            c_config["devices"] = devices
        if threads is not None:
            c_config["intra_op_threads"] = threads
            c_config["inter_op_threads"] = threads
        _check_counts(c_config)
        if target:
            c_config["target"] = target
        if remote is not None:
            from weir.distribute.remote_session import RemoteSessionOptions
            if not isinstance(remote, RemoteSessionOptions):
                raise TypeError("remote must be a wr.distribute.RemoteSessionOptions, got %s"
                                % type(remote).__name__)
            if not target:
                raise ValueError("remote options need a grpc:// target; the in-process session "
                                 "has no master to reach")
            c_config.update(remote._to_c())
        self._graph = graph
        self._target = target
        self._config = config
        self._default_timeout = config.operation_timeout_in_ms if config is not None else 0
        self._soft_devices = None  # the device count, when allow_soft_placement
        if config is not None and config.allow_soft_placement:
            self._soft_devices = c_config.get("devices", 1)
        self._closed = False
        self._c = None  # set last: __del__ of a half-built session must not fail
        self._synced = 0  # nodes with id < _synced are in the C++ session
        self._rewrites_seen = 0  # graph rewrites by wr.gradients checked by _extend
        self._extend_lock = threading.Lock()
        self._cache = {}
        self._partial_runs = {}  # handle -> weir.client.partial_run.PartialRunState
        self._default_session_ctx = None
        self._default_graph_ctx = None
        self._c = _C.Session(b"", c_config)
        # State kept in Python for the graph's stateful py_func nodes (tf.data
        # iterators) is per session in TF (a resource): a new session starts it afresh.
        for reset in list(getattr(graph, "_weir_session_state_resets", {}).values()):
            reset()

    # -- properties

    @property
    def graph(self):
        """The Graph this session runs."""
        return self._graph

    @property
    def graph_def(self):
        """The session's graph as a GraphDef message (weir.core.protos.GraphDef)."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        """The session's devices: objects with `name`, `device_type`,
        `memory_limit_bytes` and `incarnation` (as TF's)."""
        self._check_open()
        return [_DeviceAttributes(name) for name in self._c.list_devices()]

    # -- lifetime

    def close(self):
        """Cancels running steps and frees the session; idempotent. Later
        calls raise RuntimeError."""
        if self._c is not None and not self._closed:
            self._closed = True
            self._cache.clear()
            self._c.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass

    def _check_open(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")

    @contextlib.contextmanager
    def as_default(self):
        """Makes this the default session of the block (Tensor.eval and
        Operation.run use it); does not close it at the end."""
        _default_stack.stack.append(self)
        try:
            yield self
        finally:
            stack = _default_stack.stack
            if stack and stack[-1] is self:
                stack.pop()
            elif self in stack:
                stack.remove(self)

    def __enter__(self):
        self._default_graph_ctx = self._graph.as_default()
        self._default_session_ctx = self.as_default()
        self._default_graph_ctx.__enter__()
        return self._default_session_ctx.__enter__()

    def __exit__(self, exc_type, exc_value, tb):
        try:
            self._default_session_ctx.__exit__(exc_type, exc_value, tb)
        finally:
            try:
                self._default_graph_ctx.__exit__(exc_type, exc_value, tb)
            finally:
                self._default_session_ctx = None
                self._default_graph_ctx = None
                self.close()

    # -- graph growth

    def _extend(self):
        c_graph = self._graph._c_graph
        with self._extend_lock:
            while True:
                start = self._synced
                count = c_graph.num_node_ids()
                if count <= start:
                    return
                self._check_rewrites(c_graph)
                data = c_graph.to_graph_def(start)
                # A node added by another thread while exporting: export again,
                # so that no node is sent twice or never.
                if c_graph.num_node_ids() != count:
                    continue
                if self._soft_devices is not None:
                    data = _soften_devices(data, self._soft_devices)
                try:
                    self._c.extend(data)
                except errors.OpError as e:
                    self._attach(e)
                    raise
                self._synced = count
                return

    def _check_rewrites(self, c_graph):
        """wr.gradients through a function call or If/While/Case expands that
        node in place; a session that already holds the node cannot take the
        expansion (it would be a second node of the same name)."""
        seen = self._rewrites_seen
        total = c_graph.num_rewritten()
        if total == seen:
            return
        for name, old_id, _ in c_graph.rewritten_nodes(seen):
            if old_id < self._synced:
                raise errors.FailedPreconditionError(
                    None, None,
                    "node '%s' was expanded in place by wr.gradients (gradients through a "
                    "function call or If/While/Case) after this session was given the graph; "
                    "build the gradients before the session first runs the graph, or use a "
                    "new session" % name)
        self._rewrites_seen = total

    # -- errors

    def _attach(self, error):
        """Points `error` at the Operation of this graph its message names."""
        name = error.node_name
        if name is None or error.op is not None:
            return
        try:
            node_id = self._graph._c_graph.find_node(name)
            if node_id < 0:
                return
            op = self._graph._op_for_id(node_id)
            location = error.source_location or self._graph._c_graph.node_source_location(node_id)
        except Exception:  # a message naming something odd must not hide the real error
            return
        error._attach_op(op, location or None)

    # -- run

    def _plan(self, fetches, feed_dict):
        """The cached _RunPlan of this call signature (built on a miss)."""
        t = type(fetches)
        if t is _leaf_types[0] or t is _leaf_types[1]:
            # Tensors and Operations by id (hashing them runs Python code); the
            # plan keeps them alive, so an id cannot come back as another object.
            if not feed_dict:
                key = id(fetches)
            elif len(feed_dict) == 1:
                for feed_key in feed_dict:  # the one key, without building an iterator object
                    key = (id(fetches), id(feed_key))
            else:
                key = (id(fetches), *map(id, feed_dict))
        else:
            key = None
        plan = self._cache.get(key) if key is not None else None
        if plan is None:
            plan = self._build_plan(fetches, feed_dict, key)
        return plan

    def _build_plan(self, fetches, feed_dict, key):
        feed_keys = tuple(feed_dict) if feed_dict else ()
        if key is None:
            try:
                # Containers by type and order: (a, b) and Point(a, b) are equal
                # tuples but build different results. Feed keys by id as above.
                key = ("frozen", _freeze(fetches), *map(id, feed_keys))
                plan = self._cache.get(key)
                if plan is not None:
                    return plan
            except TypeError:  # an unhashable leaf: no caching
                key = None
        graph = self._graph
        feeds = [_FeedEntry(_resolve_feed_key(graph, k)) for k in feed_keys]
        fetch = _FetchPlan(graph, fetches, {entry.name for entry in feeds})
        plan = _RunPlan(fetch, feeds, (fetches, feed_keys))
        if key is not None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = plan
        return plan

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the graph to compute `fetches` (see the module docstring);
        returns values in the structure of `fetches`."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._graph._c_graph.num_node_ids() != self._synced:
            self._extend()
        # self._plan inlined (a call costs a tenth of the per-call budget).
        t = type(fetches)
        plan = None
        if t is _leaf_types[0] or t is _leaf_types[1]:
            if not feed_dict:
                key = id(fetches)
            elif len(feed_dict) == 1:
                for feed_key in feed_dict:
                    key = (id(fetches), id(feed_key))
            else:
                key = (id(fetches), *map(id, feed_dict))
            plan = self._cache.get(key)
        else:
            key = None
        if plan is None:
            try:
                plan = self._build_plan(fetches, feed_dict, key)
            except _NestedFeedKey:
                return self.run(fetches, _flatten_feed_dict(feed_dict), options, run_metadata)
        feeds = []
        if feed_dict:
            for entry, value in zip(plan.feeds, feed_dict.values()):
                # The common case inline: an array of the right dtype and shape.
                if (type(value) is not _ndarray or value.dtype is not entry.np_dtype
                        or value.shape != entry.dims or entry.tensor.shape is not entry.shape_obj):
                    value = entry.convert(value)
                feeds.append((entry.name, value))
        fetch = plan.fetch
        index = fetch.single
        if index is None and fetch.empty:
            return fetch.build([])  # nothing to run: TF returns the (empty) structure
        if options is None and not self._default_timeout:
            c_options = None
        else:
            c_options = (options._to_c(self._default_timeout) if options is not None else
                         {"trace_level": 0, "timeout_in_ms": self._default_timeout})
        try:
            outputs, metadata = self._c.run(feeds, fetch.fetch_names, fetch.targets, c_options,
                                            run_metadata is not None)
        except errors.OpError as e:
            self._attach(e)
            raise
        if run_metadata is not None:
            run_metadata._fill(metadata)
        if plan.fed:
            outputs = list(outputs)
            for i, j in plan.fed:
                outputs[i] = feeds[j][1]
        if index is not None:
            value = outputs[index]
            return value[()] if value.ndim == 0 else value
        return fetch.build(outputs)

    def partial_run_setup(self, fetches, feeds=None):
        """Starts a partial run of `fetches` fed `feeds` (TF1's); returns its
        handle for partial_run (weir.client.partial_run says how it runs)."""
        from weir.client import partial_run
        self._check_open()
        return partial_run.setup(self, fetches, feeds)

    def partial_run(self, handle, fetches, feed_dict=None):
        """Continues the partial run `handle`: feeds `feed_dict`, returns
        `fetches` (in their structure)."""
        from weir.client import partial_run
        self._check_open()
        return partial_run.run(self, handle, fetches, feed_dict)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A Python function running `fetches` with positional feed values for
        `feed_list` (TF's Session.make_callable): compiled once, cheaper per
        call than run. With accept_options, it also takes keyword arguments
        `options` (RunOptions) and `run_metadata` (RunMetadata)."""
        self._check_open()
        if self._graph._c_graph.num_node_ids() != self._synced:
            self._extend()
        graph = self._graph
        fetch = _FetchPlan(graph, fetches)
        entries = [_FeedEntry(_resolve_feed_key(graph, k)) for k in (feed_list or [])]
        feed_names = [e.name for e in entries]
        try:
            handle = self._c.make_callable(feed_names, fetch.fetch_names, fetch.targets)
        except errors.OpError as e:
            self._attach(e)
            raise
        c_session = self._c
        run_callable = c_session.run_callable
        session = self
        count = len(entries)
        single = fetch.single
        build = fetch.build
        default_timeout = self._default_timeout

        def check_count(args):
            if len(args) != count:
                raise TypeError("this callable takes %d feed value%s (for %s), got %d"
                                % (count, "" if count == 1 else "s", feed_names, len(args)))

        def finish(outputs):
            if single is not None:
                value = outputs[0]
                return value[()] if value.ndim == 0 else value
            return build(outputs)

        def run_with(values, options, run_metadata):
            c_options = options._to_c(default_timeout) if options is not None else (
                {"trace_level": 0, "timeout_in_ms": default_timeout} if default_timeout else None)
            try:
                outputs, metadata = c_session.run(list(zip(feed_names, values)), fetch.fetch_names,
                                                  fetch.targets, c_options, run_metadata is not None)
            except errors.OpError as e:
                session._attach(e)
                raise
            if run_metadata is not None:
                run_metadata._fill(metadata)
            return finish(outputs)

        if count == 1 and single is not None and not accept_options and not default_timeout:
            # The fast path: one feed, one fetched tensor.
            entry = entries[0]
            np_dtype = entry.np_dtype
            convert = entry.convert

            def callable_1(*args):
                if len(args) != 1:
                    check_count(args)
                value = args[0]
                if session._closed:
                    raise RuntimeError("Attempted to use a closed Session.")
                if type(value) is not _ndarray or value.dtype != np_dtype or entry.dims != value.shape:
                    value = convert(value)
                try:
                    out = run_callable(handle, [value])[0]
                except errors.OpError as e:
                    session._attach(e)
                    raise
                return out[()] if out.ndim == 0 else out

            result = callable_1
        else:
            def callable_n(*args, **kwargs):
                options = kwargs.pop("options", None) if accept_options else None
                run_metadata = kwargs.pop("run_metadata", None) if accept_options else None
                if kwargs:
                    raise TypeError("unexpected keyword arguments %s" % sorted(kwargs))
                check_count(args)
                if session._closed:
                    raise RuntimeError("Attempted to use a closed Session.")
                values = [e.convert(v) for e, v in zip(entries, args)]
                if options is not None or run_metadata is not None or default_timeout:
                    return run_with(values, options, run_metadata)
                try:
                    outputs = run_callable(handle, values)
                except errors.OpError as e:
                    session._attach(e)
                    raise
                return finish(outputs)

            result = callable_n
        weakref.finalize(result, _release_callable, c_session, handle)
        return result


def _release_callable(c_session, handle):
    try:
        c_session.release_callable(handle)
    except Exception:  # a closed session released it already
        pass


class _DeviceAttributes:
    """One device of a session (TF's session.list_devices() entries)."""

    __slots__ = ("name", "device_type", "memory_limit_bytes", "incarnation")

    def __init__(self, name):
        self.name = name
        part = name.rsplit("/", 1)[-1]
        if part.startswith("device:"):
            part = part[len("device:"):]
        self.device_type = part.split(":", 1)[0]
        self.memory_limit_bytes = 0
        self.incarnation = 0

    def __repr__(self):
        return "_DeviceAttributes(%s, %s, %d)" % (self.name, self.device_type, self.memory_limit_bytes)


class Session(BaseSession):
    """A session running one Graph (the default graph when `graph` is None).

    Session(target="", graph=None, config=None, *, devices=None, threads=None, remote=None)
      target: "" (in-process) or "grpc://host:port" (the master of a Weir
        cluster: wr.distribute.Server, weir-server).
      config: a ConfigProto. devices: number of virtual CPU devices.
      threads: the intra-op (per device) and inter-op thread counts.
      remote: with a grpc:// target, a wr.distribute.RemoteSessionOptions
        (TLS, the auth token, the message limit, how long to wait for a
        master not listening yet: 30 s by default).

    As a context manager it is the default session and its graph the default
    graph inside the block, and is closed at the end.
    """


class InteractiveSession(BaseSession):
    """A Session that makes itself (and its graph) the default when created,
    for shells and notebooks: `t.eval()` works without a `with` block. Close
    it to undo that."""

    def __init__(self, target="", graph=None, config=None, *, devices=None, threads=None,
                 remote=None):
        super().__init__(target, graph, config, devices=devices, threads=threads, remote=remote)
        self._interactive_graph_ctx = self._graph.as_default()
        self._interactive_graph_ctx.__enter__()
        self._interactive_session_ctx = self.as_default()
        self._interactive_session_ctx.__enter__()

    def close(self):
        super().close()
        session_ctx = getattr(self, "_interactive_session_ctx", None)
        graph_ctx = getattr(self, "_interactive_graph_ctx", None)
        self._interactive_session_ctx = None
        self._interactive_graph_ctx = None
        if session_ctx is not None:
            try:
                session_ctx.__exit__(None, None, None)
            except Exception:  # closed from another thread: its stack is not ours
                pass
        if graph_ctx is not None:
            try:
                graph_ctx.__exit__(None, None, None)
            except Exception:
                pass
