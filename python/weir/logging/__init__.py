"""weir.logging: TF1's tf.logging (tf.compat.v1.logging) on Python's logging.

Messages go to the "weir" logger, the parent of the loggers Weir's own
modules use ("weir.train", ...), so set_verbosity() governs them too. The
default verbosity is WARN, as TF's. Until the program configures logging
itself (a handler on the root logger), messages are written to stderr as
"LEVEL:weir:message" (TF writes "LEVEL:tensorflow:message"); records still
propagate to the root logger, so pytest's caplog and the program's own
handlers see them.

    wr.logging.set_verbosity(wr.logging.INFO)
    wr.logging.info("step %d: loss %.3f", step, loss)
    wr.logging.log_every_n(wr.logging.INFO, "still training", 100)
"""
import logging as _logging
import sys as _sys
import threading as _threading

__all__ = [
    "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "debug", "info", "warn", "warning", "error",
    "fatal", "log", "log_if", "log_every_n", "log_first_n", "vlog", "get_verbosity",
    "set_verbosity", "flush", "TaskLevelStatusMessage", "get_logger",
]

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("weir")
_lock = _threading.Lock()
_handler = None


def get_logger():
    """The "weir" logger, given a stderr handler on first use unless the
    root logger has handlers of its own (the program configured logging)."""
    global _handler
    with _lock:
        if _handler is None and not _logging.getLogger().handlers:
            _handler = _logging.StreamHandler(_sys.stderr)
            _handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT))
            _logger.addHandler(_handler)
    return _logger


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def warn(msg, *args, **kwargs):
    warning(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL; as TF's, it does not end the program."""
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level, msg, condition, *args):
    if condition:
        vlog(level, msg, *args)


# Calls seen per call site (file, line) for log_every_n / log_first_n.
_counts = {}


def _count_at_call_site():
    frame = _sys._getframe(2)
    key = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        count = _counts.get(key, 0)
        _counts[key] = count + 1
    return count


def log_every_n(level, msg, n, *args):
    """Logs the 1st, (n+1)th, (2n+1)th ... call made from this line."""
    if n < 1:
        raise ValueError("log_every_n: n must be positive, got %r" % (n,))
    log_if(level, msg, _count_at_call_site() % n == 0, *args)


def log_first_n(level, msg, n, *args):
    """Logs only the first n calls made from this line."""
    log_if(level, msg, _count_at_call_site() < n, *args)


def get_verbosity():
    """The effective level of Weir's logger (WARN unless set)."""
    return _logger.getEffectiveLevel()


def set_verbosity(v):
    """Logs messages of level `v` (DEBUG, INFO, WARN, ERROR, FATAL) and above."""
    _logger.setLevel(v)


def flush():
    for handler in get_logger().handlers:
        handler.flush()


def TaskLevelStatusMessage(msg):  # noqa: N802  (TF's name)
    error(msg)
