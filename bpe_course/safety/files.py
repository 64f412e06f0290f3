"""Saving files so that nothing the user had is lost or half-written.

A tokenizer's files are written at the end of minutes of training, often over an earlier
version. A crash, a full disk or Ctrl-C in the middle must leave the old files as they
were, and a reader must never see half of a new file or a mix of old and new files in a
folder. The tools: write to a temporary name beside the target and rename it into place
(one step for the file system), and swap a finished folder with the old one in one step.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from .interrupts import stop_signals_deferred


def default_file_mode(directory: bool = False) -> int:
    """The permissions a plain ``open`` (or ``mkdir``) would give under the current umask.

    Temporary files and folders are created private (0600/0700) for safety; a finished
    file should be as readable as any other the user writes.
    """
    umask = os.umask(0)
    os.umask(umask)
    return (0o777 if directory else 0o666) & ~umask


@contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w") -> Iterator:
    """Write to a temporary file beside ``path`` and rename it over ``path`` at the end.

    Readers see the old file or the new one, never half of one, and a crash or Ctrl-C
    while writing leaves the old file as it was. An error names ``path`` (not the
    temporary file), and a folder at ``path`` is refused before anything is written.
    """
    path = os.fspath(path)
    if not path:
        raise ValueError("no file name given to save to")
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a folder; give the name of a file", path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding, newline=None if "b" in mode else "\n") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, default_file_mode())
        os.replace(temporary, path)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError) and error.errno is not None:  # a full disk, say
            raise OSError(error.errno, error.strerror, path) from None
        raise


#: ``renameat2``'s flag that swaps two paths in one step (Linux 3.15 and later).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange_paths(first: str, second: str) -> bool:
    """Swap two existing paths in one atomic step; False where the system cannot.

    Linux's ``renameat2(..., RENAME_EXCHANGE)`` does it, and readers of either path see
    the old entry or the new one, never nothing. Python's ``os`` module has no binding for
    it, so we call the C library directly.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
                       _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # this file system cannot swap
        return False
    raise OSError(code, os.strerror(code), second)


def publish_folder(staging: str, target: str) -> None:
    """Put the finished folder ``staging`` at ``target`` as one step, replacing what is there.

    A reader of ``target`` sees the whole old folder or the whole new one, never a mix of
    files from both (renaming files one by one would allow that). Where the system cannot
    swap two folders atomically, the old folder is moved aside and the new one moved in
    with stop signals held back between the two renames.
    """
    os.chmod(staging, default_file_mode(directory=True))
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    if exchange_paths(staging, target):
        shutil.rmtree(staging)  # now holds the old folder
        return
    aside = tempfile.mkdtemp(prefix=".replaced-", dir=os.path.dirname(target))
    old = os.path.join(aside, "old")
    with stop_signals_deferred():
        os.rename(target, old)
        os.rename(staging, target)
    shutil.rmtree(aside)
