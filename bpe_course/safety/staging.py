"""A hidden staging folder beside an output, locked for as long as the run writing it lives.

A folder of files is built beside its target and swapped in whole at the end
(:func:`bpe_course.safety.files.publish_folder`). A run that is killed outright (SIGKILL,
the out-of-memory killer, a power cut) cannot remove its staging folder, so a later run
must, but only those it can prove are its own and dead:

- *its own*: named ``.TARGET.partial-XXXXXXXX``, and holding a lock file that starts with
  :data:`MARKER`;
- *dead*: nobody holds that lock. The run that made it holds an ``flock`` on it, and the
  system releases such a lock when its process ends, however it ends; a process number
  could have been reused by now, a lock cannot outlive its process.

A staging folder is made, and stale ones are looked for, under an ``flock`` on the parent
folder, so a run looking never meets a folder whose writer has not locked it yet. Even
then only files the caller vouches for are deleted: a stale folder that holds anything else
is moved to a visible name instead.

Layout: ``lock``, ``new/`` (the folder being built; after a swap it holds the replaced one)
and ``old/`` (where the replaced folder goes where the system cannot swap folders).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .files import remove_if_empty, remove_owned, set_aside
from .interrupts import stop_signals_deferred

#: The first bytes of a staging folder's lock file.
MARKER = b"bpe-course staging folder: its writer holds an flock on this file\n"

LOCK_NAME = "lock"

#: A staging folder's name: the target's name (at most 200 characters of it) between a dot
#: and ``.partial-``, then ``tempfile``'s eight random characters.
STAGING_NAME = re.compile(r"\.(.{1,200})\.partial-[a-z0-9_]{8}", re.DOTALL)
NAME_ROOM = 200


@contextmanager
def folder_locked(folder: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder`` for the block: runs that save beside each
    other take turns for their short critical steps (looking, creating, swapping)."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@dataclass
class Staging:
    """A staging folder for ``target`` and the open, locked lock file inside it."""

    target: str
    folder: str
    lock: int

    @property
    def new(self) -> str:
        return os.path.join(self.folder, "new")

    @property
    def old(self) -> str:
        return os.path.join(self.folder, "old")

    def close(self, discard_new: bool) -> None:
        """Remove the staging folder (``new/`` too if ``discard_new``: it holds only our own
        unpublished files), then let go of the lock, last, so no other run sees it early."""
        try:
            if discard_new:
                shutil.rmtree(self.new, ignore_errors=True)
            _remove_lock_and_folder(self.folder)
        finally:
            os.close(self.lock)


def start_staging(target: str, owned: Callable[[str], bool]) -> tuple[Staging, list[str]]:
    """Make a locked staging folder beside ``target`` (the parent must exist), after removing
    dead ones beside it (:func:`remove_stale`, with ``owned``).

    Returns the staging folder and the paths where stale folders holding other files were
    kept (for a warning). Stop signals wait until the lock is held, so an interrupted start
    leaves nothing behind.
    """
    parent, name = os.path.split(target)
    with folder_locked(parent), stop_signals_deferred():
        kept = remove_stale(parent, owned)
        folder = tempfile.mkdtemp(prefix=f".{name[:NAME_ROOM]}.partial-", dir=parent)
        try:
            lock = os.open(os.path.join(folder, LOCK_NAME),
                           os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(lock, MARKER + f"pid {os.getpid()}\n".encode())
            os.mkdir(os.path.join(folder, "new"), 0o700)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return Staging(target, folder, lock), kept


def remove_stale(parent: str, owned: Callable[[str], bool]) -> list[str]:
    """Remove the staging folders in ``parent`` whose writers are dead; call it holding
    :func:`folder_locked` on ``parent``.

    Of each, only entries ``owned`` accepts are deleted; a part holding anything else is
    moved to ``TARGET.old-XXXXXXXX`` and its new path returned. A folder without a lock file
    is ours only if empty (its writer was killed between making it and locking it), and is
    then removed; others are not touched.
    """
    kept: list[str] = []
    for entry in os.scandir(parent):
        match = STAGING_NAME.fullmatch(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        try:  # not blocking: a named pipe called "lock" must not stall every save here
            lock = os.open(os.path.join(entry.path, LOCK_NAME),
                           os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            remove_if_empty(entry.path)
            continue
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(lock).st_mode) or os.read(lock, len(MARKER)) != MARKER:
                continue
            if not _lock_free(lock):
                continue
            target = os.path.join(parent, match.group(1))
            for part in ("new", "old"):
                path = os.path.join(entry.path, part)
                if os.path.lexists(path) and remove_owned(path, owned):
                    kept.append(set_aside(path, target, "old"))
            _remove_lock_and_folder(entry.path)
        finally:
            os.close(lock)
    return kept


def _lock_free(lock: int) -> bool:
    """Could we take the lock, so that its writer is dead? (False where flock fails.)"""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _remove_lock_and_folder(folder: str) -> None:
    """The last steps of a staging folder; what fails is left for a later run to tidy."""
    try:
        os.unlink(os.path.join(folder, LOCK_NAME))
    except OSError:
        return
    remove_if_empty(folder)
