"""Naive BPE training: the obvious loop, written to be read, not to be fast.

Byte pair encoding (Philip Gage, 1994) was a compression scheme: find the most frequent
pair of adjacent symbols, replace it by a new symbol, repeat. A tokenizer keeps the list
of replacements (the *merges*) and replays them on new text.

This module does exactly that and nothing clever: after every merge it recounts every pair
in the corpus. :mod:`bpe_course.train` learns the very same merges much faster, and the
tests check that the two always agree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from .pretokenize import GPT2_PATTERN, check_special_tokens, count_pretokens
from .utf8 import NUM_BYTES, byte_vocab, decode_strict

Pair = tuple[int, int]
Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]
PathLike = str | os.PathLike[str]


def get_pair_counts(
    ids: Sequence[int], counts: dict[Pair, int] | None = None, weight: int = 1
) -> dict[Pair, int]:
    """Count adjacent pairs: ``[1, 2, 3, 1, 2]`` -> ``{(1, 2): 2, (2, 3): 1, (3, 1): 1}``.

    Pass ``counts`` to add to an existing table and ``weight`` to count a word that
    occurs ``weight`` times in the corpus.
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``ids`` by ``new_id``, left to right.

    ``merge([1, 1, 1], (1, 1), 9)`` gives ``[9, 1]``: an occurrence that overlaps one
    already merged is not merged again.
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


def initial_vocab(special_tokens: Sequence[str]) -> Vocab:
    """Ids 0-255 are the bytes, then one id per special token in the given order."""
    vocab = byte_vocab()
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    return vocab


def count_merges(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """How many merges fit in ``vocab_size`` after the 256 bytes and the special tokens."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    smallest = NUM_BYTES + len(special_tokens)
    if vocab_size < smallest:
        raise ValueError(
            f"vocab_size={vocab_size} is smaller than the {NUM_BYTES} byte tokens plus "
            f"{len(special_tokens)} special tokens = {smallest}"
        )
    return vocab_size - smallest


def as_path_list(input_path: PathLike | Iterable[PathLike]) -> list[str]:
    """Accept one corpus path or several; check that each one is a readable file."""
    if isinstance(input_path, (str, os.PathLike)):
        paths = [os.fspath(input_path)]
    else:
        paths = [os.fspath(path) for path in input_path]
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"corpus file not found: {path}")
        if os.path.isdir(path):
            raise IsADirectoryError(f"corpus path is a directory, not a file: {path}")
    return paths


def read_corpus(path: PathLike, errors: str = "strict") -> str:
    """Read a whole corpus file as UTF-8, naming the file and byte offset if it is not."""
    data = open(path, "rb").read()
    if errors == "strict":
        return decode_strict(data, path)
    return data.decode("utf-8", errors=errors)


def train_from_counts_naive(
    word_counts: Mapping[str | bytes, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
) -> tuple[Vocab, Merges]:
    """The merge loop, recounting every pair of every word before each merge.

    ``word_counts`` maps each pretoken to how often it occurs. Each step merges the most
    frequent pair; a tie goes to the pair whose bytes are greater, compared as
    ``(bytes, bytes)``, so the result never depends on dictionary order.
    """
    special_tokens = check_special_tokens(special_tokens)
    num_merges = count_merges(vocab_size, special_tokens)
    vocab = initial_vocab(special_tokens)
    merges: Merges = []
    words = [
        (list(word.encode("utf-8") if isinstance(word, str) else word), count)
        for word, count in word_counts.items()
        if count > 0
    ]
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


def train_bpe_naive(
    input_path: PathLike | Iterable[PathLike],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    pattern: str = GPT2_PATTERN,
    num_processes: int | None = None,
    progress: bool = False,
    errors: str = "strict",
) -> tuple[Vocab, Merges]:
    """Train byte-level BPE the slow, obvious way; same answer as :func:`train_bpe`.

    ``num_processes`` and ``progress`` are accepted so the two trainers can be swapped,
    but the naive trainer reads the corpus in one piece and shows no progress.
    """
    special_tokens = check_special_tokens(special_tokens)
    count_merges(vocab_size, special_tokens)  # fail on a bad size before reading anything
    word_counts: dict[str, int] = {}
    for path in as_path_list(input_path):
        for word, count in count_pretokens(
            read_corpus(path, errors), special_tokens, pattern
        ).items():
            word_counts[word] = word_counts.get(word, 0) + count
    return train_from_counts_naive(word_counts, vocab_size, special_tokens)
