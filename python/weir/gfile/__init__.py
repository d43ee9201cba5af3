"""weir.gfile: TF1's tf.gfile (tf.compat.v1.gfile) names over weir.io.gfile
(local files; see that module for the contract)."""
from weir.io import gfile as _gfile
from weir.io.gfile import GFile

__all__ = ["GFile", "FastGFile", "Open", "Exists", "IsDirectory", "MakeDirs", "MkDir", "Glob",
           "ListDirectory", "Remove", "Rename", "DeleteRecursively", "Copy", "Stat", "Walk"]

Open = GFile


class FastGFile(GFile):
    """TF1's FastGFile (deprecated there for GFile): the same file."""


def Exists(filename):  # noqa: N802  (TF's names)
    return _gfile.exists(filename)


def IsDirectory(dirname):  # noqa: N802
    return _gfile.isdir(dirname)


def MakeDirs(dirname):  # noqa: N802
    _gfile.makedirs(dirname)


def MkDir(dirname):  # noqa: N802
    _gfile.mkdir(dirname)


def Glob(filename):  # noqa: N802
    return _gfile.glob(filename)


def ListDirectory(dirname):  # noqa: N802
    return _gfile.listdir(dirname)


def Remove(filename):  # noqa: N802
    _gfile.remove(filename)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    _gfile.rename(oldname, newname, overwrite)


def DeleteRecursively(dirname):  # noqa: N802
    _gfile.rmtree(dirname)


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    _gfile.copy(oldpath, newpath, overwrite)


def Stat(filename):  # noqa: N802
    return _gfile.stat(filename)


def Walk(top, in_order=True):  # noqa: N802
    return _gfile.walk(top, topdown=in_order)
