"""Saving files so that nothing the user had is lost, half-written or loosened.

A tokenizer's files are written at the end of minutes of training, often over an earlier
version. A crash, a full disk or Ctrl-C in the middle must leave the old files as they
were, and a reader must never see half of a new file or a mix of old and new files in a
folder. The tools: write to a temporary name beside the target and rename it into place
(one step for the file system), and swap a finished folder with the old one in one step.

What stood at the target is respected as careful editors and ``install`` do:

- a symbolic link is written through: its target gets the new content, the link stays;
- a named pipe, a device or a socket is refused, never replaced by a file (saving to
  ``/dev/stdout`` as root would otherwise replace the system's node);
- the new file takes the old one's permissions (and owner and group, where allowed), so
  a private file stays private; a file that is new follows the umask;
- a replaced folder loses only the entries its caller vouches for: anything else (a file
  someone put there while the new folder was being written) is kept, and named.

A hard link is not followed: the file at the path is replaced, its other names keep the
old content. Access control lists and extended attributes are not copied.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Container, Iterator
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


#: What each kind of file is called in messages.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def kind_of(mode: int) -> str:
    """``"a named pipe"``, ``"a folder"``, ...: what a file of this ``st_mode`` is.

    >>> kind_of(stat.S_IFIFO | 0o644)
    'a named pipe'
    """
    return next((name for test, name in _KINDS if test(mode)), "a regular file")


def regular_target(path: str) -> tuple[str, os.stat_result | None]:
    """The file that writing ``path`` replaces, and its status (None: there is none yet).

    Symbolic links are followed to the file they lead to, so the link stays a link (a
    dangling one gets its file created, as editors do). A folder, named pipe, device or
    socket is refused with an ``OSError`` naming ``path``: a file in its place would break
    whatever uses it.
    """
    try:
        status = os.stat(path)  # follows links
    except FileNotFoundError:
        status = None
    except OSError as error:  # a loop of links, a file where a folder should be
        raise OSError(error.errno, error.strerror, path) from None
    if status is not None and stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder; give the name of a file", path)
    if status is not None and not stat.S_ISREG(status.st_mode):
        kind = kind_of(status.st_mode)
        raise OSError(errno.EINVAL, f"is {kind}, not a regular file; it is left as it is", path)
    if _through_proc(path):
        raise OSError(errno.EINVAL, "leads to a file a process has open (through /proc); "
                      "give the file's own name", path)
    real = os.path.realpath(path)
    if status is not None:
        try:
            same = os.path.samestat(os.stat(real), status)
        except OSError:
            same = False
        if not same:  # /proc's links to pipes and deleted files lead to no path
            raise OSError(errno.EINVAL, "cannot tell which file this link leads to", path)
    return real, status


def _through_proc(path: str) -> bool:
    """Does ``path`` lead through ``/proc``, as ``/dev/stdout`` and ``/dev/fd/1`` do?

    Such a link names an open file, say the one a shell sent a program's output to.
    Replacing that file's name would leave the program writing to a file no name leads to.
    """
    where = os.path.abspath(path)
    for _ in range(40):  # the most links Linux follows
        where = os.path.join(os.path.realpath(os.path.dirname(where)), os.path.basename(where))
        if where.startswith("/proc/"):
            return True
        if not os.path.islink(where):
            return False
        where = os.path.join(os.path.dirname(where), os.readlink(where))
    return False


def take_over(path: str, old: os.stat_result | None, directory: bool = False) -> None:
    """Give the new file (or folder) ``path`` the permissions of the ``old`` one it replaces.

    Owner and group are copied too where the system allows (root may; a user may pick any
    group of theirs). Where the group cannot be kept, the group's permissions are dropped:
    they would otherwise grant a different group what the old file granted its own. With no
    ``old``, ``path`` gets what a new file gets under the umask.
    """
    if old is None:
        os.chmod(path, default_file_mode(directory))
        return
    mode = stat.S_IMODE(old.st_mode) & (0o3777 if directory else 0o777)  # no set-user-id
    mine = os.stat(path)
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.chown(path, old.st_uid, old.st_gid)
        except OSError:
            try:
                os.chown(path, -1, old.st_gid)
            except OSError:
                mode &= ~(0o070 | stat.S_ISGID)
    os.chmod(path, mode)


#: Temporary files of :func:`atomic_write` start with this.
TEMPORARY_PREFIX = ".tmp-"


def is_temporary_of(name: str, names: Container[str]) -> bool:
    """Is ``name`` a temporary file :func:`atomic_write` makes on its way to one of ``names``?

    >>> is_temporary_of(".tmp-k2j_8x1avocab.json", {"vocab.json"})
    True
    """
    rest = name[len(TEMPORARY_PREFIX) + 8 :]
    return name.startswith(TEMPORARY_PREFIX) and rest in names


@contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w") -> Iterator:
    """Write to a temporary file beside ``path`` and rename it over ``path`` at the end.

    Readers see the old file or the new one, never half of one, and a crash or Ctrl-C
    while writing leaves the old file as it was. An error names ``path`` (not the
    temporary file). A folder, named pipe or device at ``path`` is refused before anything
    is written, a symbolic link is written through, and the new file keeps the old one's
    permissions (:func:`regular_target`, :func:`take_over`).
    """
    path = os.fspath(path)
    if not path:
        raise ValueError("no file name given to save to")
    real, old = regular_target(path)
    folder = os.path.dirname(os.path.abspath(real))
    try:
        fd, temporary = tempfile.mkstemp(
            dir=folder, prefix=TEMPORARY_PREFIX, suffix=os.path.basename(real)
        )
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding, newline=None if "b" in mode else "\n") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        take_over(temporary, old)
        os.replace(temporary, real)
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


def _everything(name: str) -> bool:
    return True


def publish_folder(
    staging: str,
    target: str,
    *,
    owned: Callable[[str], bool] = _everything,
    aside: str | None = None,
) -> str | None:
    """Put the finished folder ``staging`` at ``target`` as one step, replacing what is there.

    A reader of ``target`` sees the whole old folder or the whole new one, never a mix of
    files from both (renaming files one by one would allow that). Where the system cannot
    swap two folders atomically, the old folder is moved to ``aside`` (a path that does
    not exist yet, on the same file system) and the new one moved in, with stop signals
    held back between the two renames.

    The new folder and its files take the permissions of the old folder and of the old
    files of the same names. Of the replaced folder, only the entries ``owned`` accepts are
    deleted; if anything else is in it (put there while the new folder was written), it is
    kept beside ``target`` as ``TARGET.old-XXXXXXXX``, whose path is returned (else None).
    A ``target`` that is a symbolic link or not a folder is refused, naming it. Once the
    swap is done nothing raises.
    """
    try:
        old = os.lstat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISDIR(old.st_mode):
        kind = kind_of(old.st_mode)
        raise OSError(errno.ENOTDIR, f"is {kind}, not a folder; it is left as it is", target)
    _take_over_folder(staging, target, old)
    if old is None:
        os.rename(staging, target)
        return None
    holder = None
    if exchange_paths(staging, target):
        replaced = staging
    else:
        if aside is None:
            holder = tempfile.mkdtemp(prefix=".replaced-", dir=os.path.dirname(target))
            aside = os.path.join(holder, "old")
        with stop_signals_deferred():
            os.rename(target, aside)
            try:
                os.rename(staging, target)
            except BaseException:
                os.rename(aside, target)
                raise
        replaced = aside
    kept = None if not remove_owned(replaced, owned) else set_aside(replaced, target, "old")
    if holder is not None:
        remove_if_empty(holder)
    return kept


def _take_over_folder(staging: str, target: str, old: os.stat_result | None) -> None:
    """The permissions of ``target`` and its files, given to ``staging`` and its files."""
    take_over(staging, old, directory=True)
    if old is None:
        return
    for entry in os.scandir(staging):
        try:
            before = os.lstat(os.path.join(target, entry.name))
        except OSError:
            continue
        if stat.S_ISREG(before.st_mode) and entry.is_file(follow_symlinks=False):
            take_over(entry.path, before)


def remove_owned(folder: str, owned: Callable[[str], bool]) -> list[str]:
    """Delete the entries of ``folder`` that ``owned`` accepts, then ``folder`` if it is empty.

    Returns the names left in it (none once it is gone): entries ``owned`` refused, and
    any that could not be deleted. The folder's last step is ``rmdir``, which fails when a
    file arrived meanwhile, so nothing that was not vouched for is ever deleted.
    """
    left = []
    try:
        for entry in os.scandir(folder):
            if not owned(entry.name):
                left.append(entry.name)
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                left.append(entry.name)
        os.rmdir(folder)
    except FileNotFoundError:
        return []
    except OSError:
        try:
            return sorted(os.listdir(folder))
        except OSError:
            return sorted(left) or ["?"]
    return []


def set_aside(folder: str, target: str, label: str) -> str:
    """Move ``folder`` to a new, visible name ``TARGET.LABEL-XXXXXXXX`` beside ``target``.

    For a folder that must not be deleted and must not stay hidden either. Where it cannot
    be moved, it stays where it is, and that path is returned.
    """
    try:
        fresh = tempfile.mkdtemp(prefix=f"{os.path.basename(target)}.{label}-",
                                 dir=os.path.dirname(target))
    except OSError:
        return folder
    try:
        os.rename(folder, fresh)  # onto an empty folder of ours: allowed, in one step
    except OSError:
        remove_if_empty(fresh)
        return folder
    return fresh


def remove_if_empty(folder: str) -> None:
    """``rmdir``, which removes a folder only if it is empty; quiet if it is not."""
    try:
        os.rmdir(folder)
    except OSError:
        pass
