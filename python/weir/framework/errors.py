"""Exception classes of Weir's status codes (TensorFlow's `tf.errors`).

Every failing `weir._C` call raises the class registered here for its
Status code, as `cls(None, None, message)` (TF's OpError(node_def, op,
message) order). All share the base `OpError`, which parses the node the
C++ message names ("node 'NAME' (OP) created at FILE:LINE") into
`node_name`, `op_type` and `source_location`. When a Session knows that
node, it sets `.op` to the Python Operation and appends the line of user
code that created it to the message (`_attach_op`).

There is no status-object API (no raise_exception_on_not_ok_status): the
binding raises directly.
"""
import re

__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED", "exception_type_from_error_code", "error_code_from_exception_type",
]

# TensorFlow's canonical code numbering (error_codes.proto).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16

# "node 'NAME' (OP)" optionally followed by " created at FILE:LINE" — the
# form of weir::NodeDef::Describe(). The first such mention is the node at
# fault (the executor prefixes its errors with it).
_NODE_RE = re.compile(r"node '([^']+)' \(([^)\s]+)\)(?: created at (.+?:\d+)(?=[:\s),]|$))?")


class OpError(Exception):
    """The base of every Weir runtime error (TF's tf.errors.OpError)."""

    error_code_default = UNKNOWN

    def __init__(self, node_def, op, message, error_code=None, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = self.error_code_default if error_code is None else error_code
        match = _NODE_RE.search(message) if isinstance(message, str) else None
        self.node_name = match.group(1) if match else None
        self.op_type = match.group(2) if match else None
        self.source_location = match.group(3) if match else None

    @property
    def message(self):
        """The error message (with the user's creation line when known)."""
        return self._message

    @property
    def op(self):
        """The Operation that failed, or None when not known."""
        return self._op

    @property
    def node_def(self):
        """The NodeDef of the failed node (a weir.core.protos.NodeDef), or None."""
        if self._node_def is None and self._op is not None:
            try:
                self._node_def = self._op.node_def
            except Exception:  # the op's graph may be gone; the message still names it
                return None
        return self._node_def

    @property
    def error_code(self):
        """The integer status code (weir.errors.INVALID_ARGUMENT, ...)."""
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        # Picklable (multiprocessing, pytest-xdist) with its parsed fields.
        return (type(self), (None, None, self._message))

    def _attach_op(self, op, location=None):
        """Records `op` as the failing Operation and appends where the user
        created it (TF's "Original stack trace" section, one frame: Weir
        stores only file:line)."""
        self._op = op
        if location is None:
            location = self.source_location
        if location:
            path, _, line = location.rpartition(":")
            self._message = "%s\n\nOriginal stack trace for '%s':\n  File \"%s\", line %s" % (
                self._message, op.name, path, line)
            self.args = (self._message,) + self.args[1:]
            if self.source_location is None:
                self.source_location = location


def _make(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "error_code_default": code,
                                    "__module__": __name__})


CancelledError = _make("CancelledError", CANCELLED,
                       "The step was cancelled (a closed session or queue, a cancelled run).")
UnknownError = _make("UnknownError", UNKNOWN, "An error of no other class.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An op got an argument it cannot accept (a shape, dtype or value).")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED,
                              "The step ran past its deadline (RunOptions.timeout_in_ms).")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A named entity (file, node, op) does not exist.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS,
                           "An entity that was to be created exists already.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED,
                              "The caller may not run the operation.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "A resource (memory, a quota) ran out.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in the state the operation needs "
                                "(e.g. an uninitialized variable).")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted (a concurrency conflict).")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "An operation went past a valid range (e.g. a closed, empty queue).")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED,
                           "The operation is not implemented or not supported.")
InternalError = _make("InternalError", INTERNAL, "An invariant of the system broke (a bug).")
UnavailableError = _make("UnavailableError", UNAVAILABLE,
                         "The service is unavailable for now (retrying may help).")
DataLossError = _make("DataLossError", DATA_LOSS, "Data was lost or corrupted (a damaged file).")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED,
                             "The request has no valid credentials.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}
_CLASS_TO_CODE = {cls: code for code, cls in _CODE_TO_CLASS.items()}


def exception_type_from_error_code(error_code):
    """The exception class of a status code (KeyError for OK or an unknown code)."""
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    """The status code of an exception class (KeyError for a class not here)."""
    return _CLASS_TO_CODE[cls]


def _register():
    # Imported here, not at the top, so that a tool loading only this module
    # (no extension built yet) still gets the classes.
    try:
        from weir import _C
    except ImportError:
        return
    if hasattr(_C, "set_error_classes"):
        _C.set_error_classes(dict(_CODE_TO_CLASS))


_register()
