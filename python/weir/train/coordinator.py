"""Coordinator (TF1's tf.train.Coordinator): lets threads stop together.

Threads check should_stop() and end; any thread may request_stop(), with the
exception that made it stop. The first exception reported before the stop (an
OutOfRangeError, by default, counts as a clean stop and is not kept) is
re-raised by join() in the caller's thread. join() waits for the threads,
gives them stop_grace_period_secs after a stop request, and raises a
RuntimeError naming those still running.
"""
import contextlib
import sys
import threading
import time

__all__ = ["Coordinator", "LooperThread"]


class Coordinator(object):
    """A coordinator for threads."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            from weir.framework import errors
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        """ex as an exc_info triple, or None for a clean stop."""
        if isinstance(ex, tuple):
            ex2 = ex[1]
        else:
            ex2 = ex
        if ex2 is None or isinstance(ex2, self._clean_stop_exception_types):
            return None
        if isinstance(ex, tuple):
            return ex
        return (type(ex), ex, ex.__traceback__)

    def request_stop(self, ex=None):
        """Requests that the threads stop. ex (an exception or exc_info) is
        kept for join() if it is the first one and the stop was not requested
        yet; a clean-stop exception is not kept. Raises it at once if join()
        already returned."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if ex is not None and self._exc_info_to_raise is None:
                    # A thread failed after join(): let it see its error.
                    raise ex[1].with_traceback(ex[2])
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    if not isinstance(ex[1], BaseException):
                        raise TypeError("ex must be an exception or an exc_info tuple, got %r"
                                        % (ex[1],))
                    self._exc_info_to_raise = ex
                self._stop_event.set()

    def clear_stop(self):
        """Forgets the stop request and the exception (to reuse the
        coordinator)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context whose exception requests the stop (and is swallowed)."""
        try:
            yield
        except:  # noqa: E722  (as TF: any exception, SystemExit included)
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits for a stop request; True if one came within timeout."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        """Makes join() wait for thread too."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads (and the registered ones) to end.

        Returns when all ended, or stop_grace_period_secs after a stop was
        requested; then re-raises the exception given to request_stop, if
        any, else RuntimeError naming the threads still running (unless
        ignore_live_threads)."""
        with self._lock:
            if threads is None:
                threads = set(self._registered_threads)
            else:
                threads = set(self._registered_threads) | set(threads)
        threads = list(threads)
        # Until a stop is requested, wait for the threads (checking both).
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            t.join(remaining)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                exc_type, exc_value, exc_tb = self._exc_info_to_raise
                raise exc_value.with_traceback(exc_tb)
        if stragglers:
            if ignore_live_threads:
                return
            raise RuntimeError("Coordinator stopped with threads still running: %s"
                               % " ".join(stragglers))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception given to request_stop, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                exc_type, exc_value, exc_tb = self._exc_info_to_raise
                raise exc_value.with_traceback(exc_tb)


class LooperThread(threading.Thread):
    """A thread that calls target(*args) every timer_interval_secs (or back
    to back when None) until the coordinator stops; its exception stops it."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_timer_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_timer_time -
                                                        time.monotonic())):
                    next_timer_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        pass

    def stop_loop(self):
        pass

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)
