"""QueueRunner (TF1's tf.train.QueueRunner, add_queue_runner,
start_queue_runners): Python threads that run a queue's enqueue ops.

Each enqueue op gets one thread that runs it until the coordinator stops or
the op fails. One of queue_closed_exception_types (OutOfRangeError: its input
ran out, e.g. an epoch limit) ends that thread, and the last such thread
closes the queue, so consumers drain it and then see OutOfRangeError. Any
other error is given to the coordinator (request_stop), which re-raises it in
join(). With a coordinator, one more thread waits for the stop and runs the
cancel op (close with cancel_pending_enqueues), so enqueues blocked on a full
queue end at once: shutdown never hangs on a producer.
"""
import threading
import weakref

from weir.framework import ops

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]


class QueueRunner(object):
    """Holds a queue, its enqueue ops and its close and cancel ops."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise NotImplementedError("QueueRunner(queue_runner_def=...) is not supported by weir")
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (cancel_op if cancel_op is not None else
                           queue.close(cancel_pending_enqueues=True))
        if queue_closed_exception_types is None:
            from weir.framework import errors
            queue_closed_exception_types = (errors.OutOfRangeError,)
        elif (not isinstance(queue_closed_exception_types, tuple) or not queue_closed_exception_types
              or not all(isinstance(t, type) and issubclass(t, Exception)
                         for t in queue_closed_exception_types)):
            raise TypeError("queue_closed_exception_types, when provided, must be a tuple of "
                            "Exception types, but saw: %s" % (queue_closed_exception_types,))
        self._queue_closed_exception_types = queue_closed_exception_types
        self._lock = threading.Lock()
        # Threads still running per session (weakly keyed: a session's entry
        # goes with it).
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: self._enqueue_ops)
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._queue_closed_exception_types)

    @property
    def exceptions_raised(self):
        """The exceptions the threads raised without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            make_callable = getattr(sess, "make_callable", None)
            run = make_callable(enqueue_op) if make_callable else (lambda: sess.run(enqueue_op))
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    run()
                except self._queue_closed_exception_types:
                    # This input is exhausted; the last thread closes the queue.
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception:  # closed or cancelled already: nothing to do
                            pass
                    return
        except Exception as e:
            if coord is not None:
                coord.request_stop(e)
            else:
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception:  # the session may be closed already: the ops ended with it
            pass

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """The threads that run the enqueue ops in sess (and, with coord, the
        one that cancels pending enqueues on stop), registered with coord.
        [] if threads of this runner still run in sess."""
        with self._lock:
            try:
                if self._runs_per_session[sess] > 0:
                    return []
            except KeyError:
                pass
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name="QueueRunnerThread-%s-%s" % (self.name, op.name))
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord),
                                            name="QueueRunnerThread-%s-close_on_stop"
                                            % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Adds qr to the default graph's collection (start_queue_runners starts it)."""
    ops.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in the collection of sess's
    graph; returns them."""
    if sess is None:
        from weir.client import session as session_lib
        sess = session_lib.get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    graph = getattr(sess, "graph", None) or ops.get_default_graph()
    with graph.as_default():
        threads = []
        for qr in graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
