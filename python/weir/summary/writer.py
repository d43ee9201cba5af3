"""FileWriter (TF1's tf.summary.FileWriter): writes Event protos to a
TensorBoard event file, `<logdir>/events.out.tfevents.<10-digit unix
seconds>.<hostname><filename_suffix>` (".1", ".2" ... appended when another
writer took that name in the same second). The file is a TFRecord file whose
first event has file_version "brain.Event:2", as TensorBoard's writers make.

Events are written when added and become readable on flush(): every
flush_secs (a background thread), on flush() and on close(); as TF's, a
closed writer drops what it is given until reopen(). Thread-safe.
max_queue is accepted for TF's signature; weir writes without a queue.
"""
import os
import socket
import threading
import time

__all__ = ["FileWriter", "FileWriterCache", "summary_iterator"]


def _protos():
    from weir.core import protos
    return protos


def _open_event_file(logdir, suffix):
    from weir import _C
    from weir.framework import errors
    base = os.path.join(logdir, "events.out.tfevents.%010d.%s%s"
                        % (int(time.time()), socket.gethostname(), suffix or ""))
    path = base
    for attempt in range(1, 1000):
        try:
            return _C.RecordWriter(path, "", atomic=False, exclusive=True)
        except errors.AlreadyExistsError:
            path = "%s.%d" % (base, attempt)
    raise errors.AlreadyExistsError(None, None, "no free event file name near %s" % base)


class FileWriter(object):
    """Writes summaries, the graph and other events for TensorBoard."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) (summary-op writers) is not "
                                      "supported by weir")
        if not (flush_secs > 0):
            raise ValueError("flush_secs must be positive, got %r" % (flush_secs,))
        self._logdir = os.fspath(logdir)
        self._flush_secs = float(flush_secs)
        self._filename_suffix = filename_suffix
        self._lock = threading.Lock()
        self._run_metadata_tags = set()
        self._closed = True
        self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)
            # As TF's writer: the graph also as a MetaGraphDef (graph only).
            meta = _protos().MetaGraphDef()
            meta.graph_def.ParseFromString(self._graph_def_bytes(graph, graph_def))
            self.add_meta_graph(meta)

    def _open(self):
        os.makedirs(self._logdir, exist_ok=True)
        writer = _open_event_file(self._logdir, self._filename_suffix)
        with self._lock:
            self._writer = writer
            self._closed = False
            self._stop = threading.Event()
        event = _protos().Event(wall_time=time.time(), file_version="brain.Event:2")
        self._write(event.SerializeToString())
        self.flush()
        stop = self._stop
        self._flusher = threading.Thread(target=self._flush_periodically, args=(stop,),
                                         name="FileWriter flush", daemon=True)
        self._flusher.start()

    def _flush_periodically(self, stop):
        while not stop.wait(self._flush_secs):
            try:
                self.flush()
            except Exception:  # an error of a closed writer: the next call reports it
                return

    @property
    def event_file_path(self):
        return self._writer.path

    def get_logdir(self):
        return self._logdir

    def _write(self, serialized_event):
        with self._lock:
            if self._closed:
                return  # as TF's writer: events after close() are dropped
            self._writer.write(serialized_event)

    def add_event(self, event):
        """Writes an Event (a weir.core.protos.Event, or its bytes)."""
        if not isinstance(event, (bytes, bytearray)):
            event = event.SerializeToString()
        self._write(bytes(event))

    def _add(self, global_step, **fields):
        event = _protos().Event(wall_time=time.time(), **fields)
        if global_step is not None:
            event.step = int(global_step)
        self._write(event.SerializeToString())

    def add_summary(self, summary, global_step=None):
        """Writes a Summary: a fetched summary op's value (bytes) or a
        Summary proto."""
        protos = _protos()
        if isinstance(summary, (bytes, bytearray)) or (
                hasattr(summary, "dtype") and getattr(summary, "ndim", None) == 0):
            data = summary.item() if hasattr(summary, "item") else summary
            summary = protos.Summary.FromString(bytes(data))
        self._add(global_step, summary=summary)

    def add_session_log(self, session_log, global_step=None):
        """Writes a SessionLog (START / STOP / CHECKPOINT)."""
        self._add(global_step, session_log=session_log)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes a graph (a weir Graph, a GraphDef proto or its bytes) for
        TensorBoard's Graphs tab."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        self._add(global_step, graph_def=self._graph_def_bytes(graph, graph_def))

    @staticmethod
    def _graph_def_bytes(graph, graph_def):
        source = graph if graph is not None else graph_def
        if hasattr(source, "_c_graph"):
            return source._c_graph.to_graph_def()
        if isinstance(source, (bytes, bytearray)):
            return bytes(source)
        if hasattr(source, "SerializeToString"):
            return source.SerializeToString()
        raise TypeError("add_graph needs a Graph or GraphDef, got %r" % type(source))

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Writes a MetaGraphDef (a proto, as tf.train.export_meta_graph()
        returns, or its bytes) for TensorBoard's Graphs tab."""
        if hasattr(meta_graph_def, "SerializeToString"):
            data = meta_graph_def.SerializeToString()
        elif isinstance(meta_graph_def, (bytes, bytearray)):
            data = bytes(meta_graph_def)
        else:
            raise TypeError("meta_graph_def must be a MetaGraphDef, got %r" % type(meta_graph_def))
        self._add(global_step, meta_graph_def=data)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes a step's RunMetadata (from Session.run(options=
        RunOptions(trace_level=FULL_TRACE), run_metadata=...)) under `tag`,
        which TensorBoard shows as the step's compute time and memory.
        As TF's writer, a tag written twice is an error."""
        with self._lock:
            if tag in self._run_metadata_tags:
                raise ValueError("The provided run_metadata tag %r has already been used" % (tag,))
            self._run_metadata_tags.add(tag)
        tagged = _protos().TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add(global_step, tagged_run_metadata=tagged)

    def flush(self):
        """Makes every event added so far readable."""
        with self._lock:
            if self._closed:
                return
            self._writer.flush()

    def close(self):
        """Flushes and closes the file; reopen() starts a new one."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            writer = self._writer
        self._flusher.join()
        writer.close()

    def reopen(self):
        """Opens a new event file in the logdir after close() (no-op if open)."""
        if self._closed:
            self._open()

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()


class FileWriterCache(object):
    """One FileWriter per logdir (TF1's tf.summary.FileWriterCache)."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir)
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()


def summary_iterator(path):
    """The Event protos of the event file `path`, in order (TF1's
    tf.train.summary_iterator)."""
    from weir.io import tf_record
    protos = _protos()
    for record in tf_record.tf_record_iterator(path):
        yield protos.Event.FromString(record)
