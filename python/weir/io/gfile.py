"""weir.io.gfile: TF's tf.io.gfile on local files (TF1's CamelCase names are
in weir.gfile).

Contract (TF 2.21's, on local paths): GFile(name, mode) opens the file on its
first read or write (a missing file is a NotFoundError then, not at
construction); mode "r"/"w"/"a" with "+" and "b" as Python's; text modes read
str, binary modes bytes, and write takes either. Failures are weir.errors
classes, as TF's: NotFoundError for a missing path, AlreadyExistsError when
rename/copy would overwrite without overwrite=True, FailedPreconditionError
for a directory where a file is wanted (or the reverse), PermissionDeniedError
for reading a file opened for writing (and the reverse). Writes are plain
file writes, not atomic (TF's local files are not either).
"""
import collections
import errno
import glob as _glob
import os
import shutil

from weir.framework import errors

__all__ = [
    "GFile", "exists", "makedirs", "mkdir", "glob", "listdir", "isdir", "remove", "rename",
    "rmtree", "copy", "stat", "walk", "join", "FileStatistics",
]

_MODES = ("r", "w", "a", "r+", "w+", "a+")

FileStatistics = collections.namedtuple("FileStatistics", ["length", "mtime_nsec",
                                                           "is_directory"])


def _path(name):
    if isinstance(name, bytes):
        return name.decode("utf-8")
    return os.fspath(name)


def _error(e, path):
    """The weir error for OSError `e` on `path`."""
    message = "%s; %s" % (path, e.strerror or e)
    code = e.errno
    if code == errno.ENOENT:
        return errors.NotFoundError(None, None, message)
    if code == errno.EEXIST:
        return errors.AlreadyExistsError(None, None, message)
    if code in (errno.EACCES, errno.EPERM):
        return errors.PermissionDeniedError(None, None, message)
    if code in (errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY):
        return errors.FailedPreconditionError(None, None, message)
    return errors.UnknownError(None, None, message)


class GFile:
    """A file with TF's tf.io.gfile.GFile interface (read, readline,
    readlines, iteration, write, seek, tell, size, flush, close, with)."""

    def __init__(self, name, mode="r"):
        self._name = _path(name)
        self._mode = mode
        self._binary = "b" in mode
        self._base_mode = mode.replace("b", "")
        self._file = None

    @property
    def name(self):
        return self._name

    @property
    def mode(self):
        return self._mode

    def _open(self):
        if self._file is None:
            if self._base_mode not in _MODES:
                raise errors.InvalidArgumentError(
                    None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
            try:
                self._file = open(self._name, self._base_mode + "b")
            except OSError as e:
                raise _error(e, self._name) from None
        return self._file

    def _check_readable(self):
        if self._base_mode in ("w", "a"):
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        return self._open()

    def _decode(self, data):
        return data if self._binary else data.decode("utf-8")

    def read(self, n=-1):
        """Up to n bytes (all when n < 0) from the current position."""
        f = self._check_readable()
        return self._decode(f.read() if n is None or n < 0 else f.read(n))

    def readline(self):
        return self._decode(self._check_readable().readline())

    def readlines(self):
        return [self._decode(line) for line in self._check_readable().readlines()]

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def write(self, file_content):
        if self._base_mode == "r":
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        data = file_content.encode("utf-8") if isinstance(file_content, str) else \
            bytes(file_content)
        self._open().write(data)

    def seek(self, offset=None, whence=0, position=None):
        if position is not None:
            offset = position
        self._open().seek(offset, whence)

    def tell(self):
        return self._open().tell()

    def size(self):
        try:
            return os.stat(self._name).st_size
        except OSError as e:
            raise _error(e, self._name) from None

    def seekable(self):
        return True

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        """Closes the file; a later read opens it again from the start."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001  (nothing to report to at collection)
            pass


def exists(path):
    return os.path.exists(_path(path))


def isdir(path):
    return os.path.isdir(_path(path))


def makedirs(path):
    """Creates `path` and its missing parents; an existing directory is fine."""
    path = _path(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise errors.FailedPreconditionError(None, None, "%s is not a directory" % path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise _error(e, path) from None


def mkdir(path):
    """Creates `path` (its parent must exist); an existing directory is fine."""
    path = _path(path)
    if os.path.isdir(path):
        return
    try:
        os.mkdir(path)
    except OSError as e:
        raise _error(e, path) from None


def glob(pattern):
    return _glob.glob(_path(pattern))


def listdir(path):
    """The names (not paths) in directory `path`."""
    path = _path(path)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, "Could not find directory %s" % path)
    try:
        return os.listdir(path)
    except OSError as e:
        raise _error(e, path) from None


def remove(path):
    path = _path(path)
    try:
        os.remove(path)
    except OSError as e:
        raise _error(e, path) from None


def _refuse_overwrite(dst, overwrite):
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, "file already exists")


def rename(src, dst, overwrite=False):
    src, dst = _path(src), _path(dst)
    _refuse_overwrite(dst, overwrite)
    try:
        os.replace(src, dst)
    except OSError as e:
        raise _error(e, src) from None


def copy(src, dst, overwrite=False):
    src, dst = _path(src), _path(dst)
    _refuse_overwrite(dst, overwrite)
    try:
        shutil.copyfile(src, dst)
    except OSError as e:
        raise _error(e, src) from None


def rmtree(path):
    """Deletes `path`: a directory with everything under it, or a file."""
    path = _path(path)
    if not os.path.lexists(path):
        raise errors.NotFoundError(None, None, "%s not found" % path)
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    except OSError as e:
        raise _error(e, path) from None


def stat(path):
    path = _path(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise _error(e, path) from None
    return FileStatistics(length=st.st_size, mtime_nsec=st.st_mtime_ns,
                          is_directory=os.path.isdir(path))


def walk(top, topdown=True, onerror=None):
    """(dirname, subdirectory names, file names) for `top` and each directory
    under it, parents first when topdown (TF1's in_order); nothing for a
    missing `top`."""
    yield from os.walk(_path(top), topdown=topdown, onerror=onerror)


def join(path, *paths):
    return os.path.join(_path(path), *[_path(p) for p in paths])
