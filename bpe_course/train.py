"""Fast BPE training: the same merges as :mod:`bpe_course.naive`, without recounting.

Three ideas make the difference, and none of them needs a faster language:

1. **Count pretokens once.** The corpus only matters through how often each distinct
   pretoken occurs, so the merge loop works on a few hundred thousand words with counts,
   not on millions of words of text (counted in parallel by :mod:`bpe_course.speed.counting`).
2. **Update, don't recount.** A merge of ``(a, b)`` changes only the words that contain
   ``a`` next to ``b``; :class:`~bpe_course.speed.wordtable.WordTable` lists, for every pair, the
   words it occurs in, and adjusts the pair counts around each merged spot of just those.
3. **A heap with lazy deletion** finds the best pair without scanning every pair
   (:class:`PairHeap`). When a count goes up we push an entry; when it goes down we leave
   the old entry in place, and correct or discard it only if it reaches the top.

The tie-break rule (equal counts go to the lexicographically greater pair of bytes) is built
into the heap key, so the result is exactly the naive trainer's. On a large table the first,
heaviest merges are shared with helper processes (:mod:`bpe_course.speed.sharing`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor

from .base import Merges, PathLike, Vocab, start_training, word_bytes
from .naive import train_from_counts_naive
from .pretokens import GPT2_PATTERN
from .speed.counting import count_corpus
from .speed.sharing import shared_word_table
from .speed.wordtable import MAX_TOKEN_IDS, cycle_collector_paused
from .speed.workers import process_count, progress_bar

#: Ends every :func:`descending_key`; greater than the character of any byte (at most 256).
END_MARK = chr(257)

def descending_key(token: bytes) -> str:
    """A string that sorts in the *opposite* order of ``token``.

    Python's heap pops the smallest item, but ties must go to the greatest bytes. Each byte
    ``x`` becomes the character ``256 - x`` and a final ``chr(257)`` marks the end, so a
    longer token (which is greater than its own prefix) gets the smaller key. Keys of two
    tokens can be concatenated and still compare like the pair ``(first, second)``, because
    the end mark is larger than any byte's character; comparing the tuple of the two keys
    gives the same order without building a new string.

    >>> descending_key(b"b") < descending_key(b"a")       # greater bytes, smaller key
    True
    >>> descending_key(b"ab") < descending_key(b"a")      # a longer token is greater
    True
    """
    return "".join([chr(256 - byte) for byte in token]) + END_MARK


#: :func:`heap_key`'s translation of byte ``x`` to ``255 - x`` (byte 0 to 0xFF, which is then
#: written as two bytes), and its end mark: two bytes above every other code.
COMPLEMENT = bytes(255 - byte for byte in range(256))
KEY_END = b"\xff\x01"


def heap_key(token: bytes) -> bytes:
    """:func:`descending_key`'s order in a byte per byte, where its string takes two.

    Byte ``x`` becomes the byte ``255 - x``, except 0, which becomes the two bytes ``FF 00``,
    and ``FF 01`` marks the end: no code starts another, and each compares as its byte
    (or the end) should, so these keys sort as :func:`descending_key`'s do, and two keys
    joined (the first without its end mark) are the key of the two tokens joined. Built in
    C: the tokens learned from a long run are megabytes long, and the heap keeps a key for
    each, so a second byte per byte cost hundreds of megabytes.

    >>> heap_key(b"b") < heap_key(b"a") and heap_key(b"ab") < heap_key(b"a") < heap_key(b"\\x00")
    True
    """
    return token.translate(COMPLEMENT).replace(b"\xff", b"\xff\x00") + KEY_END


def train_from_counts(
    word_counts: Mapping[str | bytes, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    progress: bool = False,
    num_processes: int | None = 1,
) -> tuple[Vocab, Merges]:
    """Learn merges from pretoken counts, e.g. ``{"low": 5, "lower": 2}``.

    Returns ``(vocab, merges)``: ``vocab`` maps ids to bytes (0-255 the bytes, then the
    special tokens, then one id per merge) and ``merges`` lists the merged pairs of bytes in
    the order they were learned. Stops early when no pair is left to merge.
    ``num_processes`` other than 1 (``None``: every core) lets helper processes share the
    first, heaviest merges of a large table (:mod:`bpe_course.speed.sharing`); the merges are
    the same.

    >>> vocab, merges = train_from_counts({"low": 5, "lower": 2, "newest": 6}, 259)
    >>> merges
    [(b'w', b'e'), (b'l', b'o'), (b'we', b's')]
    """
    return _train([word_counts], vocab_size, special_tokens, progress, num_processes)


@cycle_collector_paused
def _train(handed: list[Mapping[str | bytes, int]], vocab_size: int,
           special_tokens: Sequence[str], progress: bool, num_processes: int | None):
    """:func:`train_from_counts` on the counts in ``handed``, a list it empties once it has read
    them, so that counts nobody else keeps (:func:`train_bpe`'s) are freed before tables grow."""
    special_tokens, num_merges, vocab = start_training(vocab_size, special_tokens)
    processes = process_count(num_processes)
    merges: Merges = []
    # 1. count pretokens once (a single byte has no pair and never changes)
    words = [(data, count) for data, count in word_bytes(handed.pop(), special_tokens) if data[1:]]
    last_id = len(vocab) - 1 + min(num_merges, sum(len(data) - 1 for data, _ in words))
    if last_id >= MAX_TOKEN_IDS:
        raise ValueError(f"vocab_size={vocab_size} could need token id {last_id:,}, but a token "
                         f"is one character here, so ids stop at {MAX_TOKEN_IDS - 1:,}")
    sharing = shared_word_table(words, processes)  # helper processes, if they pay
    del words  # the table reads the words and frees them as it goes
    with sharing as table:
        heap = PairHeap(table.pair_counts, vocab)
        with progress_bar(progress, num_merges, desc="merges", unit="merge") as bar:
            bar.refresh()  # drawn only now that the block will close it (see progress_bar)
            for _ in range(num_merges):
                pair = heap.pop_best()  # 3. the best pair, from a heap with lazy deletion
                if pair is None:
                    break  # no pairs left: every word is a single token
                left, right = vocab[ord(pair[0])], vocab[ord(pair[1])]
                new_id = len(vocab)
                vocab[new_id] = left + right
                merges.append((left, right))
                _, new_pairs = table.merge(pair, chr(new_id))  # 2. update, don't recount
                heap.push_new_pairs(new_pairs, pair)
                bar.update(1)
    return vocab, merges


class PairHeap:
    """The most frequent pair on top (the greatest bytes on a tie), kept up to date lazily.

    An entry is ``(-count, key of the left token, key of the right token, pair)`` with
    :func:`heap_key` keys, so Python's min-heap pops the highest count, then the
    greatest bytes, then the smallest ids (which only matters if two tokens share bytes).

    The lazy-deletion rule: push only when a count goes up; when it goes down, leave the
    entry as it is. So every live pair has an entry whose count is at least its true count,
    and an entry that reaches the top is checked against ``pair_counts``: if it is right it
    is the best pair, if the pair is gone it is dropped, otherwise it is corrected and sinks.
    """

    def __init__(self, pair_counts: dict[str, int], vocab: Vocab) -> None:
        self.pair_counts = pair_counts  # owned by the WordTable; only read here
        self.keys = [heap_key(vocab[token_id]) for token_id in range(len(vocab))]
        self.entries = [self._entry(pair, count) for pair, count in pair_counts.items()]
        heapq.heapify(self.entries)

    def _entry(self, pair: str, count: int) -> tuple[int, bytes, bytes, str]:
        return (-count, self.keys[ord(pair[0])], self.keys[ord(pair[1])], pair)

    def push_new_pairs(self, new_pairs: Iterable[str], merged_pair: str) -> None:
        """Push the pairs a merge created, with their counts, after learning the key of the
        token made by merging ``merged_pair``.

        This is the only place a count goes up. A pair can gain occurrences only in the
        merge that creates the newer of its two tokens (later merges only take neighbours
        away), so every pair is pushed once, and its entry can only be too high, never too low.
        The new token's key is its two parts' keys joined, the first without its end mark:
        a copy in C (a token learned from a long run of one letter can be megabytes long).
        """
        keys, entries, pair_counts = self.keys, self.entries, self.pair_counts
        keys.append(keys[ord(merged_pair[0])][: -len(KEY_END)] + keys[ord(merged_pair[1])])
        for pair in new_pairs:
            entry = (-pair_counts[pair], keys[ord(pair[0])], keys[ord(pair[1])], pair)
            heapq.heappush(entries, entry)

    def pop_best(self) -> str | None:
        """Remove and return the most frequent pair, or None when no pair is left."""
        entries, pair_counts = self.entries, self.pair_counts
        while entries:
            negative_count, left_key, right_key, pair = entries[0]
            count = pair_counts.get(pair, 0)
            if count == -negative_count:
                heapq.heappop(entries)
                return pair
            if count:  # stale: the count went down since the push; correct it and let it sink
                heapq.heapreplace(entries, (-count, left_key, right_key, pair))
            else:  # stale: the pair is gone (merged away, or merged into other tokens)
                heapq.heappop(entries)
        return None


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
    max_pretoken_bytes: int | None = None,
) -> tuple[Vocab, Merges]:
    """Train a byte-level BPE tokenizer on one corpus file (or several).

    The text is split on ``special_tokens`` (which never take part in a merge), cut into
    pretokens with ``pattern``, counted by ``num_processes`` workers (default: every core)
    and merged until the vocabulary holds ``vocab_size`` tokens or no pair is left.
    ``errors="replace"`` reads invalid UTF-8 as U+FFFD instead of stopping.

    Counting is a map-reduce, and ``executor`` (any :class:`concurrent.futures.Executor`,
    such as Dask's ``Client.get_executor()``) can run the map instead of a local pool: its
    workers get file names and byte offsets and send back pretoken counts, and the merge
    loop runs here on the summed counts (see
    :func:`~bpe_course.speed.counting.count_file_pretokens`).

    A pretoken over 32 MiB (a file of one letter is a single pretoken) is refused with an
    error that names it, unless ``max_pretoken_bytes`` is given: pretokens longer than that
    are then cut into pieces of at most that many bytes.

    Returns ``(vocab, merges)`` as :func:`train_from_counts` does.
    """
    specials, counts = count_corpus(
        input_path, vocab_size, special_tokens, pattern, num_processes, progress, errors, executor,
        max_pretoken_bytes,
    )
    handed = [counts]  # _train takes the counts out of the list, and so frees them
    del counts
    return _train(handed, vocab_size, specials, progress, num_processes)


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
    max_pretoken_bytes: int | None = None,
) -> tuple[Vocab, Merges]:
    """:func:`train_bpe` with the naive merge loop: same arguments, same answer, slowly.

    The corpus is counted exactly as :func:`train_bpe` counts it; only the merge loop is
    :func:`bpe_course.naive.train_from_counts_naive`, which recounts every pair after each
    merge (and shows no progress bar of its own).
    """
    specials, counts = count_corpus(
        input_path, vocab_size, special_tokens, pattern, num_processes, progress, errors, executor,
        max_pretoken_bytes,
    )
    return train_from_counts_naive(counts, vocab_size, specials)
