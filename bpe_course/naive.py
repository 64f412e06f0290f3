"""Naive BPE: training and encoding as the obvious loops, written to be read, not to be fast.

Byte pair encoding (Philip Gage, 1994) was a compression scheme: find the most frequent
pair of adjacent symbols, replace it by a new symbol, repeat. A tokenizer keeps the list
of replacements (the *merges*) and replays them on new text.

This module does exactly that and nothing clever. Training recounts every pair of every
word after each merge; encoding looks for the earliest-learned merge that still applies,
applies it, and looks again. :mod:`bpe_course.train` and :class:`bpe_course.Tokenizer`
give the very same answers much faster, and the tests check that they always agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .base import Merges, Pair, Vocab, start_training, word_bytes


def get_pair_counts(
    ids: Sequence[int], counts: dict[Pair, int] | None = None, weight: int = 1
) -> dict[Pair, int]:
    """Count adjacent pairs, adding to ``counts`` if given, ``weight`` times each.

    ``weight`` lets one call count a word that occurs ``weight`` times in the corpus.

    >>> get_pair_counts([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    >>> get_pair_counts(b"aaa", weight=10)   # overlapping pairs each count
    {(97, 97): 20}
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``ids`` by ``new_id``, left to right.

    An occurrence that overlaps one already merged is not merged again:

    >>> merge([1, 1, 1], (1, 1), 9)
    [9, 1]
    >>> merge(list(b"the cat"), (116, 104), 256)
    [256, 101, 32, 99, 97, 116]
    """
    merged: list[int] = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def train_from_counts_naive(
    word_counts: Mapping[str | bytes, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
) -> tuple[Vocab, Merges]:
    """The merge loop, recounting every pair of every word before each merge.

    ``word_counts`` maps each pretoken to how often it occurs. Each step merges the most
    frequent pair; a tie goes to the pair whose bytes are greater, compared as
    ``(bytes, bytes)``, so the result never depends on dictionary order. Returns
    ``(vocab, merges)``; stops early when every word is a single token.

    >>> vocab, merges = train_from_counts_naive({"low": 5, "lower": 2, "newest": 6}, 259)
    >>> merges
    [(b'w', b'e'), (b'l', b'o'), (b'we', b's')]
    """
    special_tokens, num_merges, vocab = start_training(vocab_size, special_tokens)
    merges: Merges = []
    words = [(list(data), count) for data, count in word_bytes(word_counts, special_tokens)]
    for _ in range(num_merges):
        pair_counts: dict[Pair, int] = {}
        for ids, count in words:
            get_pair_counts(ids, pair_counts, count)
        if not pair_counts:
            break  # every word is a single token: nothing left to merge
        best = max(pair_counts, key=lambda p: (pair_counts[p], vocab[p[0]], vocab[p[1]]))
        new_id = len(vocab)
        vocab[new_id] = vocab[best[0]] + vocab[best[1]]
        merges.append((vocab[best[0]], vocab[best[1]]))
        words = [(merge(ids, best, new_id), count) for ids, count in words]
    return vocab, merges


def merge_ranks(merges: Sequence[tuple[bytes, bytes]]) -> dict[tuple[bytes, bytes], int]:
    """``{pair: rank}``, rank 0 learned first; a pair listed twice keeps its first rank."""
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    return ranks


def encode_naive(
    data: bytes, merges: Sequence[tuple[bytes, bytes]] | Mapping[tuple[bytes, bytes], int]
) -> list[bytes]:
    """Split ``data`` into tokens by replaying ``merges``: the reference encoder.

    Start from single bytes. Among the adjacent pairs that some merge joins, pick the one
    learned earliest (the leftmost if it occurs twice), join it, and look again; stop when
    no adjacent pair is a merge. This is the rule the merges were learned by, so it is the
    definition every faster encoder in the course is tested against. Returns the tokens'
    bytes; a vocabulary turns them into ids. ``merges`` may also be :func:`merge_ranks`
    of the merges, to build that table once for many calls.

    >>> encode_naive(b"lower", [(b"l", b"o"), (b"lo", b"w"), (b"e", b"r")])
    [b'low', b'er']
    >>> encode_naive(b"aaa", [(b"a", b"a")])   # leftmost first: "aa" then "a"
    [b'aa', b'a']
    """
    rank = merges if isinstance(merges, Mapping) else merge_ranks(merges)
    parts = [bytes([byte]) for byte in data]
    while len(parts) > 1:
        ranked = [(rank.get(pair), i) for i, pair in enumerate(zip(parts, parts[1:]))]
        candidates = [(r, i) for r, i in ranked if r is not None]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts
