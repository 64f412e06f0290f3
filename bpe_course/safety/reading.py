"""Reading a tokenizer's files: regular files of a sane size only, refused before reading.

A tokenizer is read whole from files the user names, and a name can point at something
that is not a file. Opening a FIFO waits for a writer forever; ``/dev/zero`` never ends,
so reading it whole runs out of memory and Python raises a ``MemoryError`` with no
message at all; a folder fails with an error that does not say which file was meant. A
regular file can also be absurdly large for what it claims to be, and a small ``.gz`` can
unpack to gigabytes.

So every file the package reads as a whole goes through :func:`read_bytes`, which looks
at what the path is before it opens it (opening can have effects of its own: a FIFO
blocks, a tape rewinds), refuses anything but a regular file of at most
:data:`MAX_FILE_BYTES`, checks again on the open file (the name may have been swapped in
between), and never reads more than the limit, even from a file that grows or unpacks to
more. Every refusal names the file and the reason, as coreutils' tools do.

The files that packages ship (OpenAI's, the open models') are found without
:mod:`importlib.metadata` and checked against the sha256 recorded for them
(:func:`packaged_file`); they live here, away from the tokenizers that read them, so that
finding and checking a file loads nothing else.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import sys
import zlib
from pathlib import Path
from typing import BinaryIO

#: The largest tokenizer file read, in bytes (also after unpacking a ``.gz``). Published
#: tokenizers' files are far smaller (o200k_base's rank file is 3.6 MB, the largest
#: ``tokenizer.json`` files some tens of MB), and a file of this size already takes
#: gigabytes of memory once its tokens are tables. Raise it here to read larger ones.
MAX_FILE_BYTES = 256 * 1024 * 1024

#: What each kind of file that is not a regular one is called in a message.
_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def kind_of(mode: int) -> str:
    """What a file of ``mode`` (``os.stat(...).st_mode``) is, in words.

    >>> kind_of(os.stat("/dev/null").st_mode)
    'a character device'
    """
    fallback = "a regular file" if stat.S_ISREG(mode) else "a special file"
    return _KINDS.get(stat.S_IFMT(mode), fallback)


def check_regular(path: str | os.PathLike[str], what: str = "file") -> os.stat_result:
    """``os.stat(path)`` if ``path`` is a regular file (a link is followed) of at most
    :data:`MAX_FILE_BYTES`; otherwise an error that names it and says what it is.

    ``FileNotFoundError`` ("``what`` not found"), ``PermissionError``, or ``ValueError`` for
    a folder, a FIFO, a device or a file that is too large.
    """
    name = os.fspath(path)
    try:
        status = os.stat(name)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {name}") from None
    except PermissionError:
        raise PermissionError(f"cannot read {name}: permission denied") from None
    except OSError as error:
        raise OSError(f"cannot read {name}: {error.strerror or error}") from None
    return _checked_status(status, name)


def _checked_status(status: os.stat_result, name: str) -> os.stat_result:
    if not stat.S_ISREG(status.st_mode):
        raise ValueError(
            f"{name} is {kind_of(status.st_mode)}, not a regular file; tokenizer files are "
            "read whole, so give a file saved on disk"
        )
    if status.st_size > MAX_FILE_BYTES:
        raise ValueError(_too_large(name, f"is {status.st_size:,} bytes"))
    return status


def _too_large(name: str, size: str) -> str:
    return (
        f"{name} {size}, larger than any tokenizer file should be (the limit is "
        f"{MAX_FILE_BYTES:,} bytes, set by bpe_course.safety.reading.MAX_FILE_BYTES)"
    )


def read_bytes(path: str | os.PathLike[str], what: str = "file", *, gunzip: bool = False) -> bytes:
    """The whole content of the regular file ``path``, at most :data:`MAX_FILE_BYTES`.

    ``gunzip``: the file is gzip data, returned unpacked (and the unpacked size is bounded
    too). Errors name the file: see :func:`check_regular`; a ``.gz`` that is not complete
    gzip data raises ``ValueError``.
    """
    name = os.fspath(path)
    check_regular(name, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:  # non-blocking: a FIFO swapped in since the check must not hang the open
        descriptor = os.open(name, flags)
    except OSError as error:
        raise type(error)(f"cannot read {name}: {error.strerror or error}") from None
    with open(descriptor, "rb") as file:
        _checked_status(os.fstat(descriptor), name)
        if not gunzip:
            data = file.read(MAX_FILE_BYTES + 1)
        else:
            try:
                with gzip.GzipFile(fileobj=file) as unpacked:
                    data = unpacked.read(MAX_FILE_BYTES + 1)
            except (gzip.BadGzipFile, EOFError, zlib.error) as error:
                raise ValueError(f"{name}: not complete gzip data ({error})") from None
    if len(data) > MAX_FILE_BYTES:
        grew = "unpacks to" if gunzip else "grew, while it was read, to"
        raise ValueError(_too_large(name, f"{grew} more than {MAX_FILE_BYTES:,} bytes"))
    return data


# Files that packages ship, checked against the sha256 recorded for them ------------------


def open_maybe_gzipped(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing it when its name ends in ``.gz``."""
    if os.fspath(path).endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of a file's contents (decompressed for ``.gz``), read in blocks.

    A ``.gz`` file that is not gzip, or is cut short, raises ``ValueError`` naming it, and
    so does a path that is not a regular file (``/dev/zero`` would never end).
    """
    check_regular(path)
    digest = hashlib.sha256()
    try:
        with open_maybe_gzipped(path) as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise ValueError(
            f"{os.fspath(path)}: not a complete gzip file ({error}); "
            "reinstall the package that ships it"
        ) from None
    return digest.hexdigest()


def check_sha256(
    path: str | os.PathLike[str], expected: str, recorded_by: str = "tiktoken"
) -> Path:
    """Return ``path`` if its sha256 is ``expected`` (the digest ``recorded_by`` records);
    otherwise raise naming the file."""
    actual = sha256_of(path)
    if actual != expected:
        raise ValueError(
            f"{os.fspath(path)}: sha256 is {actual}, but {recorded_by} expects {expected}; "
            "this is not the original file (reinstall the package that ships it)"
        )
    return Path(path)


def packaged_file(
    name: str, distribution: str, inside: str, expected: str, recorded_by: str = "tiktoken"
) -> Path:
    """The verified local path of the file ``inside`` the installed ``distribution``.

    A package that is not installed, a file it lacks and a file whose sha256 is not
    ``expected`` (changed or cut short) each raise an error naming the package and the file.
    """
    found = installed_file(distribution, inside)
    if found is not None:
        return check_sha256(found, expected, recorded_by)
    import importlib.metadata  # 50 ms to import: only to say what is missing, or to look wider

    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"{name} comes from the Python package {distribution!r} (file {inside}), which is "
            f"not installed; install it with: pip install {distribution}"
        ) from None
    path = Path(dist.locate_file(inside))
    if not path.is_file():
        raise FileNotFoundError(f"{name}: package {distribution!r} has no file {path}")
    return check_sha256(path, expected, recorded_by)


def installed_file(distribution: str, inside: str) -> Path | None:
    """The file ``inside`` an installed ``distribution``, found the quick way: in a folder
    of ``sys.path`` that also holds the distribution's ``*.dist-info`` (where pip puts both),
    without importing :mod:`importlib.metadata`, which took a fifth of a cold start. None
    when it is not there; :func:`packaged_file` then asks :mod:`importlib.metadata`.
    """
    prefix = distribution.replace("-", "_").replace(".", "_").lower() + "-"
    for entry in sys.path:
        folder = entry or os.curdir
        candidate = os.path.join(folder, inside)
        if not os.path.isfile(candidate):
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any(n.lower().startswith(prefix) and n.endswith(".dist-info") for n in names):
            return Path(candidate)
    return None
