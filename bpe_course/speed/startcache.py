"""The start-up cache: what a tokenizer file makes, derived once and read back in milliseconds.

Building o200k_base from its rank file means decoding 200,000 lines of base64, rebuilding
every merge from the ranks and building the tables encoding looks things up in: seconds of
Python, the same seconds every time a program starts. None of it depends on anything but
the file and the few settings beside it (the split pattern, the special tokens). So the
first build writes what it derived (the vocabulary, the merges as ids, the tokens a whole
pretoken may be answered with) to a cache file, and later starts read that instead.

The cache is never needed, and never trusted further than it can be checked
(:mod:`.cachefiles`, which also keeps the split patterns' translations): its key holds the
*verified* source file's sha256 and the settings, its payload has a sha256 of its own, it
is written atomically, and anything wrong with it (corrupt, foreign, unwritable, ``off``)
only means the slow path.

The source file itself is still hashed on every start: the key holds its sha256, so a
changed file never meets an old cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tokenizer import Tokenizer
from .cachefiles import (
    CACHE_ENV,
    ID_TYPE,
    KINDS,
    LARGEST,
    MAGIC,
    cache_folder,
    cache_key,
    cache_path,
    cached,
    code_stamp,
    ids_array,
    pack_tokens,
    read_sections,
    unpack_tokens,
    write_sections,
)

#: The generic part lives in :mod:`.cachefiles`; its names stay importable from here.
__all__ = [
    "CACHE_ENV", "ID_TYPE", "KINDS", "LARGEST", "MAGIC", "cache_folder", "cache_key",
    "cache_path", "cached", "code_stamp", "ids_array", "pack_tokens", "read_sections",
    "unpack_tokens", "write_sections", "pack_tables", "unpack_tables", "pack_tokenizer",
    "unpack_tokenizer", "cached_tokenizer",
]


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
