"""Fast BPE training: the same merges as :mod:`bpe_course.naive`, without recounting.

Three ideas make the difference, and none of them needs a faster language:

1. **Count pretokens once.** The corpus only matters through how often each distinct
   pretoken occurs, so the merge loop works on a few hundred thousand words with counts,
   not on millions of words of text.
2. **Update, don't recount.** A merge of ``(a, b)`` changes only the words that contain
   ``a`` next to ``b``. We keep, for every pair, the set of words it occurs in, and after a
   merge we adjust the pair counts of just those words.
3. **A heap with lazy deletion** finds the best pair without scanning every pair. When a
   count changes we push a fresh entry and leave the old one in place; an entry whose count
   no longer matches is thrown away (or corrected) when it reaches the top.

The tie-break rule (equal counts go to the lexicographically greater pair of bytes) is built
into the heap key, so the result is exactly the naive trainer's.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor

from .base import (
    Merges,
    PathLike,
    Vocab,
    check_num_processes,
    check_special_tokens,
    corpus_paths,
    initial_vocab,
    merges_to_learn,
    progress_bar,
    word_bytes,
)
from .chunks import check_executor, count_file_pretokens
from .naive import train_from_counts_naive
from .pretokenize import GPT2_PATTERN, compile_pattern
from .utf8 import check_errors

#: Ends every :func:`descending_key`; greater than the character of any byte (at most 256).
END_MARK = chr(257)


def descending_key(token: bytes) -> str:
    """A string that sorts in the *opposite* order of ``token``.

    Python's heap pops the smallest item, but ties must go to the greatest bytes. Each byte
    ``x`` becomes the character ``256 - x`` and a final ``chr(257)`` marks the end, so a
    longer token (which is greater than its own prefix) gets the smaller key. Keys of two
    tokens can be concatenated and still compare like the pair ``(first, second)``, because
    the end mark is larger than any byte's character.

    >>> descending_key(b"b") < descending_key(b"a")       # greater bytes, smaller key
    True
    >>> descending_key(b"ab") < descending_key(b"a")      # a longer token is greater
    True
    """
    return "".join([chr(256 - byte) for byte in token]) + END_MARK


def train_from_counts(
    word_counts: Mapping[str | bytes, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    progress: bool = False,
) -> tuple[Vocab, Merges]:
    """Learn merges from pretoken counts, e.g. ``{"low": 5, "lower": 2}``.

    Returns ``(vocab, merges)``: ``vocab`` maps ids to bytes (0-255 the bytes, then the
    special tokens, then one id per merge) and ``merges`` lists the merged pairs of bytes in
    the order they were learned. Stops early when no pair is left to merge.
    """
    special_tokens = check_special_tokens(special_tokens)
    num_merges = merges_to_learn(vocab_size, special_tokens)
    vocab = initial_vocab(special_tokens)
    merges: Merges = []

    # Words of one byte have no pairs and never change, so they are left out.
    words: list[list[int]] = []
    freqs: list[int] = []
    for data, count in word_bytes(word_counts, special_tokens):
        if len(data) > 1:
            words.append(list(data))
            freqs.append(count)

    pair_counts: dict[tuple[int, int], int] = {}
    pair_words: dict[tuple[int, int], set[int]] = {}
    for index, (ids, freq) in enumerate(zip(words, freqs)):
        for pair in zip(ids, ids[1:]):
            pair_counts[pair] = pair_counts.get(pair, 0) + freq
            if pair in pair_words:
                pair_words[pair].add(index)
            else:
                pair_words[pair] = {index}

    keys = {token_id: descending_key(token) for token_id, token in vocab.items()}
    heap = [(-count, keys[a] + keys[b], a, b) for (a, b), count in pair_counts.items()]
    heapq.heapify(heap)

    bar = progress_bar(progress, num_merges, desc="merges", unit="merge")
    for _ in range(num_merges):
        best = _pop_best(heap, pair_counts)
        if best is None:
            break  # no pairs left: every word is a single token
        a, b = best
        new_id = len(vocab)
        vocab[new_id] = vocab[a] + vocab[b]
        keys[new_id] = descending_key(vocab[new_id])
        merges.append((vocab[a], vocab[b]))

        delta: dict[tuple[int, int], int] = {}
        for index in pair_words.pop(best):
            new_pairs: list[tuple[int, int]] = []
            merged = _merge_word(words[index], a, b, new_id, freqs[index], delta, new_pairs)
            if merged is None:
                continue  # this word lost the pair to an earlier merge
            words[index] = merged
            for pair in new_pairs:
                if pair in pair_words:
                    pair_words[pair].add(index)
                else:
                    pair_words[pair] = {index}

        for pair, change in delta.items():
            if change == 0:
                continue
            count = pair_counts.get(pair, 0) + change
            if count > 0:
                pair_counts[pair] = count
                if change > 0:
                    heapq.heappush(heap, (-count, keys[pair[0]] + keys[pair[1]], *pair))
            else:
                del pair_counts[pair]
                pair_words.pop(pair, None)
        bar.update(1)
    bar.close()
    return vocab, merges


def _pop_best(
    heap: list[tuple[int, str, int, int]], pair_counts: dict[tuple[int, int], int]
) -> tuple[int, int] | None:
    """Pop the most frequent pair (greatest bytes on a tie), skipping stale entries.

    Every live pair has at least one entry whose count is not below its true count, so the
    first entry that matches its pair's count exactly is the true best.
    """
    while heap:
        negative_count, key, a, b = heapq.heappop(heap)
        count = pair_counts.get((a, b), 0)
        if count == -negative_count:
            return a, b
        if 0 < count < -negative_count:
            heapq.heappush(heap, (-count, key, a, b))
    return None


def _merge_word(
    ids: list[int],
    a: int,
    b: int,
    new_id: int,
    freq: int,
    delta: dict[tuple[int, int], int],
    new_pairs: list[tuple[int, int]],
) -> list[int] | None:
    """Merge every ``a, b`` in ``ids`` into ``new_id``, recording pair-count changes in ``delta``
    and the pairs that now contain ``new_id`` in ``new_pairs``.

    Only the pairs touching a merge change: with ``x a b y`` becoming ``x N y`` the pairs
    ``(x, a)``, ``(a, b)`` and ``(b, y)`` lose ``freq`` and ``(x, N)`` and ``(N, y)`` gain it.
    The left neighbour is read from the *new* word, so in ``a b a b`` the second merge takes
    back the ``(N, a)`` the first one added. Words can be very long (a run of spaces, a
    base64 blob), so we never rescan a whole word's pairs. Returns None if ``a, b`` is absent.
    """
    merged: list[int] = []
    start = 0
    last = len(ids) - 1
    found = False
    while True:
        try:
            i = ids.index(a, start)
        except ValueError:
            break
        if i >= last:
            break
        if ids[i + 1] != b:
            merged.extend(ids[start : i + 1])
            start = i + 1
            continue
        merged.extend(ids[start:i])
        delta[a, b] = delta.get((a, b), 0) - freq
        if merged:
            left = merged[-1]
            delta[left, a] = delta.get((left, a), 0) - freq
            delta[left, new_id] = delta.get((left, new_id), 0) + freq
            new_pairs.append((left, new_id))
        if i + 2 <= last:
            right = ids[i + 2]
            delta[b, right] = delta.get((b, right), 0) - freq
            delta[new_id, right] = delta.get((new_id, right), 0) + freq
            new_pairs.append((new_id, right))
        merged.append(new_id)
        start = i + 2
        found = True
    if not found:
        return None
    merged.extend(ids[start:])
    return merged


def count_corpus(
    input_path: PathLike | Iterable[PathLike],
    vocab_size: int,
    special_tokens: Sequence[str],
    pattern: str,
    num_processes: int | None,
    progress: bool,
    errors: str,
    executor: Executor | None = None,
) -> tuple[list[str], Counter[str]]:
    """Check every argument, then count the corpus's pretokens: the part both trainers share.

    Everything that can be wrong with the arguments is reported before a byte is read.
    """
    special_tokens = check_special_tokens(special_tokens)
    merges_to_learn(vocab_size, special_tokens)
    compile_pattern(pattern)
    check_num_processes(num_processes)
    check_errors(errors)
    check_executor(executor)
    paths = corpus_paths(input_path)
    counts = count_file_pretokens(
        paths,
        special_tokens,
        pattern,
        num_processes=num_processes,
        progress=progress,
        errors=errors,
        executor=executor,
    )
    return special_tokens, counts


def train_bpe(
    input_path: PathLike | Iterable[PathLike],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    pattern: str = GPT2_PATTERN,
    num_processes: int | None = None,
    progress: bool = False,
    errors: str = "strict",
    executor: Executor | None = None,
) -> tuple[Vocab, Merges]:
    """Train a byte-level BPE tokenizer on one corpus file (or several).

    The text is split on ``special_tokens`` (which never take part in a merge), cut into
    pretokens with ``pattern``, counted by ``num_processes`` workers (default: every core)
    and merged until the vocabulary holds ``vocab_size`` tokens or no pair is left.
    ``errors="replace"`` reads invalid UTF-8 as U+FFFD instead of stopping.

    Counting is a map-reduce, and ``executor`` (any :class:`concurrent.futures.Executor`,
    such as Dask's ``Client.get_executor()``) can run the map instead of a local pool: its
    workers get file names and byte offsets and send back pretoken counts, and the merge
    loop runs here on the summed counts (see :func:`~bpe_course.chunks.count_file_pretokens`).

    Returns ``(vocab, merges)`` as :func:`train_from_counts` does.
    """
    specials, counts = count_corpus(
        input_path, vocab_size, special_tokens, pattern, num_processes, progress, errors, executor
    )
    return train_from_counts(counts, vocab_size, specials, progress=progress)


# train_bpe_naive repeats train_bpe's signature on purpose: the two are drop-in swaps.
def train_bpe_naive(
    input_path: PathLike | Iterable[PathLike],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    pattern: str = GPT2_PATTERN,
    num_processes: int | None = None,
    progress: bool = False,
    errors: str = "strict",
    executor: Executor | None = None,
) -> tuple[Vocab, Merges]:
    """:func:`train_bpe` with the naive merge loop: same arguments, same answer, slowly.

    The corpus is counted exactly as :func:`train_bpe` counts it; only the merge loop is
    :func:`bpe_course.naive.train_from_counts_naive`, which recounts every pair after each
    merge (and shows no progress bar of its own).
    """
    specials, counts = count_corpus(
        input_path, vocab_size, special_tokens, pattern, num_processes, progress, errors, executor
    )
    return train_from_counts_naive(counts, vocab_size, specials)
