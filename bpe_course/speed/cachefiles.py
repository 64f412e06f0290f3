"""Cache files: something derived once, stored, and read back only where it checks out.

Start-up work that depends only on a few inputs (a tokenizer file's tables, a split
pattern's translation for ``re``) is done once and kept in a file; later processes read
the file instead. The file is never needed, and never trusted further than it can be checked:

- it lives in ``$BPE_COURSE_CACHE`` if set (``off`` turns it off), else in
  ``$XDG_CACHE_HOME/bpe_course`` or ``~/.cache/bpe_course``;
- a file is used only if its key (a sha256 of the settings its content depends on, this
  format's version and the package's code, :func:`code_stamp`) and the sha256 of its own
  payload both match, so a file that is corrupt, cut short, from other settings or other
  code is ignored, and the caller's slow path makes the value and writes the file again;
- it is written to a temporary file and renamed over the old one
  (:func:`~bpe_course.safety.files.atomic_write`): two processes at once each write a
  whole file, and a reader sees one or the other, never half;
- a folder that cannot be made or written to (read-only, full) means only the slow path.

Users: :mod:`.fastsplit` (split patterns) and :mod:`.startcache` (tokenizers).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

#: The environment variable that names the cache folder (``off``: no cache).
CACHE_ENV = "BPE_COURSE_CACHE"

#: The first bytes of every cache file; the last one is the format's version.
MAGIC = b"bpe_course start-up cache\n\x01"

#: Cache files larger than this are not read (o200k_base's is 5 MB; 2 million tokens 60 MB).
LARGEST = 1 << 30

#: Arrays of ids are stored as unsigned 32-bit integers, in this machine's byte order.
ID_TYPE = "I"

#: What a section can be: bytes, or an array of ids or of floats (``d``: a Python float
#: exactly), in this machine's byte order.
KINDS = ("bytes", ID_TYPE, "d")


def cache_folder() -> Path | None:
    """Where cache files go, or None when ``$BPE_COURSE_CACHE`` is ``off`` (or empty)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "bpe_course")


def cache_key(*settings: Any) -> str:
    """The sha256 that names one build: the format, the machine's byte order, the package's
    code (:func:`code_stamp`) and ``settings`` (JSON values: the source's sha256, the
    pattern, the special tokens...)."""
    spelled = json.dumps([MAGIC.decode(), sys.byteorder, ID_TYPE, code_stamp(), *settings],
                         sort_keys=True)
    return hashlib.sha256(spelled.encode("utf-8")).hexdigest()


def code_stamp() -> list[list[Any]]:
    """The name, size and modification time of every module of the package: a change to
    the code that builds a tokenizer (or any other) makes old cache files never match.
    Fifty ``stat`` calls, well under a millisecond; reading the sources would be more."""
    package = Path(__file__).resolve().parent.parent
    stamp = []
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith((".", "_")))
        for name in sorted(files):
            if name.endswith(".py"):
                status = os.stat(os.path.join(folder, name))
                stamp.append([os.path.relpath(os.path.join(folder, name), package),
                              status.st_size, status.st_mtime_ns])
    return stamp


def cache_path(label: str, key: str) -> Path | None:
    """The cache file of a build named ``label`` (a tokenizer's name) with ``key``."""
    folder = cache_folder()
    if folder is None:
        return None
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in label)
    return folder / f"{safe[:64]}-{key[:32]}.cache"


def read_sections(label: str, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(meta, sections)`` stored for ``key``, or None when there is no usable file.

    A section is ``bytes`` or an ``array`` (:data:`KINDS`). Anything wrong with the file (missing,
    unreadable, too large, not ours, another key, cut short, changed) gives None.
    """
    path = cache_path(label, key)
    if path is None or array(ID_TYPE).itemsize != 4:
        return None
    try:
        with open(path, "rb") as file:
            if not os.path.isfile(path) or os.fstat(file.fileno()).st_size > LARGEST:
                return None
            data = file.read()
    except OSError:
        return None
    try:
        if not data.startswith(MAGIC):
            return None
        start = len(MAGIC) + 8
        header_size = int.from_bytes(data[len(MAGIC) : start], "little")
        header = json.loads(data[start : start + header_size])
        payload = memoryview(data)[start + header_size :]
        if header["key"] != key or hashlib.sha256(payload).hexdigest() != header["sha256"]:
            return None
        sections: dict[str, Any] = {}
        offset = 0
        for name, kind, size in header["sections"]:
            chunk = payload[offset : offset + size]
            offset += size
            if kind == "bytes":
                sections[name] = bytes(chunk)
            elif kind in KINDS:
                sections[name] = array(kind)
                sections[name].frombytes(chunk)
            else:
                return None
        if offset != len(payload):
            return None
        return header["meta"], sections
    except (ValueError, KeyError, TypeError, OverflowError):
        return None


def write_sections(label: str, key: str, meta: dict[str, Any], sections: dict[str, Any]) -> bool:
    """Store ``meta`` (JSON) and ``sections`` (``bytes`` or arrays, :data:`KINDS`) for ``key``;
    False, and nothing changed, when the folder cannot take the file."""
    path = cache_path(label, key)
    if path is None or array(ID_TYPE).itemsize != 4:
        return False
    parts = [
        (name, value.typecode, value.tobytes()) if isinstance(value, array)
        else (name, "bytes", bytes(value))
        for name, value in sections.items()
    ]
    if any(kind not in KINDS for _, kind, _ in parts):
        return False
    digest = hashlib.sha256()
    for _, _, chunk in parts:
        digest.update(chunk)
    header = json.dumps({"key": key, "sha256": digest.hexdigest(), "meta": meta,
                         "sections": [[name, kind, len(chunk)] for name, kind, chunk in parts]})
    encoded = header.encode("utf-8")
    from ..safety.files import atomic_write  # tempfile, shutil, ctypes: 7 ms a reader skips

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "wb") as file:
            file.write(MAGIC + len(encoded).to_bytes(8, "little") + encoded)
            for _, _, chunk in parts:
                file.write(chunk)
    except (OSError, ValueError):
        return False
    return True


def ids_array(values: Sequence[int]) -> array:
    """``values`` as an array of ids (``OverflowError`` for one that does not fit 32 bits)."""
    return array(ID_TYPE, values)


def pack_tokens(tokens: Sequence[bytes]) -> dict[str, Any]:
    """Byte strings as two sections: their lengths and their bytes end to end."""
    return {"lengths": ids_array(list(map(len, tokens))), "blob": b"".join(tokens)}


def unpack_tokens(sections: Mapping[str, Any]) -> list[bytes]:
    """The byte strings :func:`pack_tokens` stored (sliced in C: no Python step per token)."""
    lengths, blob = sections["lengths"], sections["blob"]
    ends = list(accumulate(lengths))
    if (ends[-1] if ends else 0) != len(blob):
        raise ValueError("the lengths do not add up to the bytes")
    return list(map(blob.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def cached(
    label: str,
    settings: Sequence[Any],
    build: Callable[[], Any],
    pack: Callable[[Any], tuple[dict[str, Any], dict[str, Any]] | None],
    unpack: Callable[[dict[str, Any], dict[str, Any]], Any],
) -> Any:
    """``build()``, or what ``unpack(meta, sections)`` makes of the cache file of
    ``settings``; after a build, ``pack(built)`` is written for next time (None: not)."""
    key = cache_key(label, *settings)
    stored = read_sections(label, key)
    if stored is not None:
        try:
            return unpack(*stored)
        except (ValueError, KeyError, TypeError, IndexError):
            pass  # a file that checks out but does not fit: built again and replaced
    built = build()
    try:
        packed = pack(built)
    except (OverflowError, ValueError):  # ids beyond 32 bits: nothing to store
        packed = None
    if packed is not None:
        write_sections(label, key, *packed)
    return built
