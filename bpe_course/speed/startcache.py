"""The start-up cache: what a tokenizer file makes, derived once and read back in milliseconds.

Building o200k_base from its rank file means decoding 200,000 lines of base64, rebuilding
every merge from the ranks and building the tables encoding looks things up in: seconds of
Python, the same seconds every time a program starts. None of it depends on anything but
the file and the few settings beside it (the split pattern, the special tokens). So the
first build writes what it derived (the vocabulary, the merges as ids, the tokens a whole
pretoken may be answered with) to a cache file, and later starts read that instead.

The cache is never needed, and never trusted further than it can be checked:

- it lives in ``$BPE_COURSE_CACHE`` if set (``off`` turns it off), else in
  ``$XDG_CACHE_HOME/bpe_course`` or ``~/.cache/bpe_course``;
- a file is used only if its key (a sha256 of the *verified* source file's sha256, the
  settings and this format's version) and the sha256 of its own payload both match, so a
  file that is corrupt, cut short, from another source or another version is ignored,
  and the slow path builds the tokenizer and writes the file again;
- it is written to a temporary file and renamed over the old one
  (:func:`~bpe_course.safety.files.atomic_write`): two processes at once each write a
  whole file, and a reader sees one or the other, never half;
- a folder that cannot be made or written to (read-only, full) means only the slow path.

The source file itself is still hashed on every start: the key holds its sha256, so a
changed file never meets an old cache.
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

from ..safety.files import atomic_write
from ..tokenizer import Tokenizer

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


def pack_tables(tokenizer: Tokenizer) -> dict[str, Any] | None:
    """The sections that hold a tokenizer's vocabulary, merges and whole tokens (None when
    its merges list a pair twice: the tables cannot be told from the merges then)."""
    pair_ranks, merged_ids, whole = tokenizer.built_tables()
    if list(pair_ranks.values()) != list(range(len(merged_ids))):
        return None
    vocab = tokenizer.vocab
    return {
        "ids": ids_array(list(vocab)),
        **pack_tokens(list(vocab.values())),
        "lefts": ids_array([left for left, _ in pair_ranks]),
        "rights": ids_array([right for _, right in pair_ranks]),
        "merged": ids_array(merged_ids),
        "whole": ids_array(list(whole.values())),
    }


def unpack_tables(sections: dict[str, Any]) -> tuple[dict[int, bytes], Any]:
    """``(vocab, tables)`` from :func:`pack_tables`'s sections (used up), for
    ``Tokenizer(vocab, None, ..., tables=tables)``; the merge list is made when first asked
    for (:attr:`Tokenizer.merges`). Every table is made by C loops (``map``, ``zip``,
    ``dict``), with one int object per id, shared by every table that holds it, as in a
    tokenizer built the long way; merge ranks reuse them too (o200k_base: 11 MB less)."""
    ids, lefts, rights, merged, whole_ids = (
        sections.pop(name) for name in ("ids", "lefts", "rights", "merged", "whole")
    )
    tokens = unpack_tokens(sections)
    if len(tokens) != len(ids) or not len(lefts) == len(rights) == len(merged):
        raise ValueError("sections of different lengths")
    top = max(ids, default=0)
    if top < 4 * len(ids) + 1024:
        shared = list(range(max(top + 1, len(merged)))).__getitem__
    else:
        known = dict(zip(ids, ids))
        shared = lambda i: known.get(i, i)  # noqa: E731
    ids = list(map(shared, ids))
    vocab = dict(zip(ids, tokens))
    del tokens, sections["blob"]
    merged, whole_ids = list(map(shared, merged)), list(map(shared, whole_ids))
    pairs = zip(map(shared, lefts), map(shared, rights))
    pair_ranks = dict(zip(pairs, map(shared, range(len(merged)))))
    whole = dict(zip(map(bytes.decode, map(vocab.__getitem__, whole_ids)), whole_ids))
    return vocab, (pair_ranks, merged, whole)


def pack_tokenizer(tokenizer: Tokenizer) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """What :func:`unpack_tokenizer` needs to build ``tokenizer`` again, or None for a
    subclass or for merges it could not store."""
    if type(tokenizer) is not Tokenizer:
        return None
    sections = pack_tables(tokenizer)
    meta = {"name": tokenizer.name, "pattern": tokenizer.pattern,
            "special_tokens": list(tokenizer.special_tokens)}
    return None if sections is None else (meta, sections)


def unpack_tokenizer(meta: dict[str, Any], sections: dict[str, Any]) -> Tokenizer:
    """The :class:`~bpe_course.tokenizer.Tokenizer` that :func:`pack_tokenizer` stored."""
    vocab, tables = unpack_tables(sections)
    return Tokenizer(vocab, None, meta["special_tokens"], meta["pattern"], name=meta["name"],
                     tables=tables)


def cached_tokenizer(label: str, settings: Sequence[Any], build: Callable[[], Tokenizer]) -> Any:
    """``build()`` a :class:`~bpe_course.tokenizer.Tokenizer` once; after that, read it from
    the cache file of ``label`` and ``settings`` (which must say all ``build`` depends on)."""
    return cached(label, settings, build, pack_tokenizer, unpack_tokenizer)
