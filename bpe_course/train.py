"""Fast BPE training: the same merges as :mod:`bpe_course.naive`, without recounting.

Three ideas make the difference, and none of them needs a faster language:

1. **Count pretokens once.** The corpus only matters through how often each distinct
   pretoken occurs, so the merge loop works on a few hundred thousand words with counts,
   not on millions of words of text (:class:`WordTable`).
2. **Update, don't recount.** A merge of ``(a, b)`` changes only the words that contain
   ``a`` next to ``b``. We keep, for every pair, the list of words it occurs in, and after a
   merge we adjust the pair counts around each merged spot of just those words
   (:meth:`WordTable.merge`).
3. **A heap with lazy deletion** finds the best pair without scanning every pair
   (:class:`PairHeap`). When a count goes up we push an entry; when it goes down we leave
   the old entry in place, and correct or discard it only if it reaches the top.

The tie-break rule (equal counts go to the lexicographically greater pair of bytes) is built
into the heap key, so the result is exactly the naive trainer's.

One choice of representation makes all three cheap in Python: a word is a ``str`` with one
character per token, ``chr(token_id)``, and a pair is the two-character string of its tokens.
Finding a pair in a word is then ``str.find``, merging it everywhere is ``str.replace`` (which
works left to right without overlaps, exactly as a BPE merge does), and both run in C. A
string also takes a byte or two per token where a list of ints takes eight. The price is a
limit of ``sys.maxunicode + 1`` (1,114,112) token ids, far beyond any vocabulary in use.

The merge loop is serial: each merge depends on the counts the one before left. But the
first merges are the heaviest (in text of three-byte characters the first one rewrites
every word), and the words of one merge can be shared out: :class:`MergeHelpers` lets
other processes hold some of the words until the merges turn light.
"""

from __future__ import annotations

import functools
import gc
import heapq
import multiprocessing
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from multiprocessing.connection import Connection
from operator import add
from typing import Any, ParamSpec, TypeVar

from .base import (
    Merges,
    PathLike,
    Vocab,
    check_num_processes,
    check_special_tokens,
    corpus_paths,
    merges_to_learn,
    progress_bar,
    start_training,
    word_bytes,
)
from .chunks import check_executor, count_file_pretokens
from .fastsplit import Splitter
from .interrupts import worker_ignores_ctrl_c
from .naive import train_from_counts_naive
from .pretokenize import GPT2_PATTERN
from .utf8 import check_errors

P = ParamSpec("P")
R = TypeVar("R")

#: Ends every :func:`descending_key`; greater than the character of any byte (at most 256).
END_MARK = chr(257)

#: Token ids are characters in :class:`WordTable`, so there can be at most this many.
MAX_TOKEN_IDS = sys.maxunicode + 1

#: The fewest distinct pretokens worth a share of the first merges in a process of its own:
#: a helper with fewer would cost more to start than it saves (see :class:`MergeHelpers`).
SHARE_WORDS = 10_000

#: What sharing the merges is taken to have saved before the first one (seconds): enough
#: to outlast a few dozen light merges at the start (see :meth:`MergeHelpers.worth_keeping`).
FIRST_GAIN = 0.001

#: A helper hands its words over with the lists of this many pairs a message.
HAND_OVER_PAIRS = 10_000


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


def cycle_collector_paused(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` with Python's cycle collector paused (if it was running).

    Training builds millions of small strings, lists and tuples and never a reference
    cycle, so the collector would only walk the growing tables again and again for nothing
    (measured: 14% of the merge loop's time on 30 MB). Reference counting still frees everything,
    including the tables themselves when the function returns, before the collector resumes.
    """

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused


@cycle_collector_paused
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
    first, heaviest merges of a large table (:class:`MergeHelpers`); the merges are the same.

    >>> vocab, merges = train_from_counts({"low": 5, "lower": 2, "newest": 6}, 259)
    >>> merges
    [(b'w', b'e'), (b'l', b'o'), (b'we', b's')]
    """
    special_tokens, num_merges, vocab = start_training(vocab_size, special_tokens)
    processes = check_num_processes(num_processes) or os.cpu_count() or 1
    merges: Merges = []
    # 1. count pretokens once (a single byte has no pair and never changes)
    words = [(data, count) for data, count in word_bytes(word_counts, special_tokens) if data[1:]]
    last_id = len(vocab) - 1 + min(num_merges, sum(len(data) - 1 for data, _ in words))
    if last_id >= MAX_TOKEN_IDS:
        raise ValueError(
            f"vocab_size={vocab_size} could need token id {last_id:,}, but this trainer "
            f"stores a token as one character, so ids stop at {MAX_TOKEN_IDS - 1:,}"
        )
    shares = max(1, min(processes, os.cpu_count() or 1, len(words) // SHARE_WORDS))
    if multiprocessing.current_process().daemon:
        shares = 1  # a daemonic process (a pool's worker) may not start processes
    with MergeHelpers([words[start::shares] for start in range(1, shares)]) as helpers:
        table = WordTable(words[::shares])
        del words
        helpers.add_pair_counts(table)
        heap = PairHeap(table.pair_counts, vocab)  # 3. a heap with lazy deletion

        bar = progress_bar(progress, num_merges, desc="merges", unit="merge")
        for _ in range(num_merges):
            pair = heap.pop_best()
            if pair is None:
                break  # no pairs left: every word is a single token
            left, right = vocab[ord(pair[0])], vocab[ord(pair[1])]
            new_id = len(vocab)
            vocab[new_id] = left + right
            merges.append((left, right))
            helpers.start_merge(pair, chr(new_id), table)
            _, new_pairs = table.merge(pair, chr(new_id))  # 2. update, don't recount
            heap.push_new_pairs(helpers.finish_merge(table, new_pairs), vocab[new_id])
            bar.update(1)
        bar.close()
    return vocab, merges


class WordTable:
    """Every distinct pretoken once, with its count, and the pairs inside them.

    ``words[i]`` is a pretoken spelt with one character per token (a byte ``x`` is
    ``chr(x)``, the token with id ``n`` is ``chr(n)``) and ``counts[i]`` is how often it
    occurs. ``pair_counts`` maps each pair (a two-character string) to how often it occurs in
    the corpus; ``pair_words`` maps it to the indices of the words it occurs in. A word stays
    listed under a pair after losing it to another merge: those stale entries are skipped
    when the pair's turn comes, which is cheaper than removing them from long lists.
    """

    def __init__(self, word_counts: Iterable[tuple[bytes, int]]) -> None:
        self.words: list[str] = []
        self.counts: list[int] = []
        pair_counts: defaultdict[str, int] = defaultdict(int)
        pair_words: defaultdict[str, list[int]] = defaultdict(list)
        for data, count in word_counts:  # each of at least two bytes
            word = data.decode("latin-1")  # the one-character-per-byte spelling
            add_pairs(map(add, word, word[1:]), len(self.words), count, pair_counts, pair_words)
            self.words.append(word)
            self.counts.append(count)
        self.pair_counts = dict(pair_counts)  # plain dicts: a missing pair is an error
        self.pair_words = dict(pair_words)

    def add_pair_words(self, pair_words: dict[str, list[int]]) -> None:
        """List more words under each pair (words another table has handed over)."""
        for pair, indices in pair_words.items():
            listed = self.pair_words.get(pair)
            if listed is None:
                self.pair_words[pair] = indices
            else:
                listed += indices

    def merge(self, pair: str, new_token: str) -> tuple[dict[str, int], dict[str, int]]:
        """Replace ``pair`` by ``new_token`` in every word that has it; update the pair counts.

        Only the pairs next to a merged spot change (see :func:`pairs_changed_by`). Returns
        how much each pair's count went down (``pair`` itself left out) and the new pairs
        with their counts: these all contain ``new_token``, so none existed before.
        """
        # Local names for the tables: the loop below runs millions of times.
        words, counts, pair_words = self.words, self.counts, self.pair_words
        lost: defaultdict[str, int] = defaultdict(int)
        gained: defaultdict[str, int] = defaultdict(int)
        new_words: defaultdict[str, list[int]] = defaultdict(list)
        for index in pair_words.pop(pair, ()):
            word = words[index]
            if pair not in word:
                continue  # stale entry: an earlier merge took this word's pair away
            merged = word.replace(pair, new_token)
            words[index] = merged
            count = counts[index]
            size = len(merged)
            if size + 1 == len(word):
                # One merged spot, as in most words: pairs_changed_by's work, written out.
                # x a b y becomes x N y: it loses x a and b y, it gains x N and N y.
                spot = merged.find(new_token)
                if spot:
                    lost[word[spot - 1 : spot + 1]] += count
                    new_pair = merged[spot - 1 : spot + 1]
                    gained[new_pair] += count
                    new_words[new_pair].append(index)
                if spot + 1 < size:
                    lost[word[spot + 1 : spot + 3]] += count
                    new_pair = merged[spot : spot + 2]
                    gained[new_pair] += count
                    new_words[new_pair].append(index)
                continue
            old_pairs, new_pairs = pairs_changed_by(word, merged, pair)
            for old_pair in old_pairs:
                lost[old_pair] += count
            add_pairs(new_pairs, index, count, gained, new_words)
        lost.pop(pair, None)  # its count goes altogether
        self.pair_counts.pop(pair, None)
        self.count_changes(lost, gained)
        pair_words.update(new_words)
        return lost, gained

    def count_changes(self, lost: Mapping[str, int], gained: Mapping[str, int]) -> None:
        """Take ``lost`` from the pair counts and add ``gained``; forget pairs that reach 0."""
        pair_counts, pair_words = self.pair_counts, self.pair_words
        for old_pair, amount in lost.items():
            total = pair_counts[old_pair] - amount
            if total:
                pair_counts[old_pair] = total
            else:
                del pair_counts[old_pair]
                pair_words.pop(old_pair, None)
        for new_pair, amount in gained.items():
            pair_counts[new_pair] = pair_counts.get(new_pair, 0) + amount


def pairs_changed_by(word: str, merged: str, pair: str) -> tuple[list[str], list[str]]:
    """The pairs a merge takes from ``word`` and the pairs it adds, ``merged`` being the result.

    In ``x a b y`` becoming ``x N y`` the word loses ``x a`` and ``b y`` and gains ``x N``
    and ``N y``; ``a b`` itself is not listed. Occurrences are found left to right without
    overlaps, as ``str.replace`` merged them, and the ``k``-th one sits ``k`` characters
    further left in ``merged``. When two occurrences touch (``a b a b`` becoming ``N N``)
    the pair between them is listed once, as the left neighbour of the second.

    >>> pairs_changed_by("xabyab", "xNyN", "ab")
    (['xa', 'by', 'ya'], ['xN', 'Ny', 'yN'])
    >>> pairs_changed_by("abab", "NN", "ab")
    (['ba'], ['NN'])
    """
    lost: list[str] = []
    gained: list[str] = []
    last = len(word) - 2
    start = word.find(pair)
    shift = 0  # merges so far in this word: each one shortens it by a character
    while start >= 0:
        following = word.find(pair, start + 2)
        spot = start - shift
        if start > 0:
            lost.append(word[start - 1 : start + 1])
            gained.append(merged[spot - 1 : spot + 1])
        if start < last and following != start + 2:
            lost.append(word[start + 1 : start + 3])
            gained.append(merged[spot : spot + 2])
        shift += 1
        start = following
    return lost, gained


def add_pairs(
    pairs: Iterable[str],
    index: int,
    count: int,
    pair_counts: defaultdict[str, int],
    pair_words: defaultdict[str, list[int]],
) -> None:
    """Count each of ``pairs`` (all from word ``index``) ``count`` more times and list the
    word under each of them, once."""
    for pair in pairs:
        pair_counts[pair] += count
        listed = pair_words[pair]
        if not listed or listed[-1] != index:  # one word's pairs come together: this suffices
            listed.append(index)


class PairHeap:
    """The most frequent pair on top (the greatest bytes on a tie), kept up to date lazily.

    An entry is ``(-count, key of the left token, key of the right token, pair)`` with
    :func:`descending_key` keys, so Python's min-heap pops the highest count, then the
    greatest bytes, then the smallest ids (which only matters if two tokens share bytes).

    The lazy-deletion rule: push only when a count goes up; when it goes down, leave the
    entry as it is. So every live pair has an entry whose count is at least its true count,
    and an entry that reaches the top is checked against ``pair_counts``: if it is right it
    is the best pair, if the pair is gone it is dropped, otherwise it is corrected and sinks.
    """

    def __init__(self, pair_counts: dict[str, int], vocab: Vocab) -> None:
        self.pair_counts = pair_counts  # owned by the WordTable; only read here
        self.keys = [descending_key(vocab[token_id]) for token_id in range(len(vocab))]
        self.entries = [self._entry(pair, count) for pair, count in pair_counts.items()]
        heapq.heapify(self.entries)

    def _entry(self, pair: str, count: int) -> tuple[int, str, str, str]:
        return (-count, self.keys[ord(pair[0])], self.keys[ord(pair[1])], pair)

    def push_new_pairs(self, new_pairs: Iterable[str], new_token: bytes) -> None:
        """Push the pairs a merge created, with their counts, after learning the key of its
        ``new_token``.

        This is the only place a count goes up. A pair can gain occurrences only in the
        merge that creates the newer of its two tokens (later merges only take neighbours
        away), so every pair is pushed once, and its entry can only be too high, never too low.
        """
        keys, entries, pair_counts = self.keys, self.entries, self.pair_counts
        keys.append(descending_key(new_token))
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


class MergeHelpers:
    """Processes that each hold a share of the words while the merges are heavy.

    The first merges touch a large part of the words (the first one of text in a script
    of three-byte characters, every word), so they are the part of the merge loop worth
    sharing: while a helper merges its share, this process merges its own. A helper
    builds a :class:`WordTable` of its share, sends its pair counts, then for each merge
    sends back what :meth:`WordTable.merge` returns. This process adds those changes to
    its own, so its pair counts (and the heap) are those of the whole corpus; its
    ``pair_words`` list only its own words. When merges turn light, or the machine is too
    busy to run the helpers at once, the messages cost more than the work they share: the
    helpers then send their words over and stop.
    """

    def __init__(self, shares: list[list[tuple[bytes, int]]]) -> None:
        context = multiprocessing.get_context()
        self.connections: list[Connection] = []
        self.processes = []
        for share in shares:
            here, there = context.Pipe()
            # The share goes in a list emptied once the helper has it, so that this process
            # does not keep the helper's words alive (a Process keeps its arguments).
            given = [share]
            ours = [here, *self.connections]  # for the helper to close its copies of
            process = context.Process(target=help_merge, args=(there, ours, given), daemon=True)
            process.start()
            given.clear()
            there.close()
            self.connections.append(here)
            self.processes.append(process)
        self.gain = FIRST_GAIN  # seconds a shared merge saves, on average of late
        self.started = 0.0

    def __enter__(self) -> MergeHelpers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()

    def send(self, connection: Connection, message: object) -> None:
        try:
            connection.send(message)
        except OSError:  # a broken pipe: the helper is gone
            raise self.stopped() from None

    def receive(self, connection: Connection) -> Any:
        try:
            return connection.recv()
        except EOFError:
            raise self.stopped() from None

    def stopped(self) -> RuntimeError:
        codes = [process.exitcode for process in self.processes if not process.is_alive()]
        return RuntimeError(
            f"a helper process of the merge loop stopped unexpectedly (exit code "
            f"{codes[0] if codes else 'unknown'}; out of memory?)"
        )

    def add_pair_counts(self, table: WordTable) -> None:
        """Add the pair counts of every helper's share to ``table``'s."""
        for connection in self.connections:
            table.count_changes({}, self.receive(connection))

    def worth_keeping(self) -> bool:
        """Do shared merges still save time, on average over about the last 32?

        While this process merges its share, each helper merges one as large, so a shared
        merge saves what this process spent on its own share for each helper, and costs
        the time spent waiting for the helpers and adding their changes. Both are measured,
        so light merges and a busy machine (a helper waiting for a core) end the sharing.
        """
        return self.gain > 0

    def start_merge(self, pair: str, new_token: str, table: WordTable) -> None:
        """Ask the helpers to merge ``pair`` too, or, if that no longer pays, to hand their
        words over to ``table`` now."""
        if not self.connections:
            return
        if self.worth_keeping():
            for connection in self.connections:
                self.send(connection, (pair, new_token))
            self.started = time.perf_counter()
            return
        for connection in self.connections:
            self.send(connection, len(table.words))  # where its words will start
            table.words += self.receive(connection)
            table.counts += self.receive(connection)
            while batch := self.receive(connection):
                table.add_pair_words(batch)
        self.connections = []

    def finish_merge(self, table: WordTable, new_pairs: Iterable[str]) -> Iterable[str]:
        """Add the helpers' changes to ``table``'s pair counts; every pair the merge created."""
        if not self.connections:
            return new_pairs
        own = time.perf_counter() - self.started
        created = set(new_pairs)
        for connection in self.connections:
            lost, gained = self.receive(connection)
            table.count_changes(lost, gained)
            created.update(gained)
        cost = time.perf_counter() - self.started - own
        self.gain += (own * len(self.connections) - cost - self.gain) / 32
        return created


def help_merge(
    connection: Connection, ours: list[Connection], given: list[list[tuple[bytes, int]]]
) -> None:
    """A :class:`MergeHelpers` process: build the table of its share of the words, merge on
    request, and when asked with a number instead, send the words over to be numbered from
    there, and their ``pair_words`` in batches (so no message holds all of them at once).

    ``ours`` are the ends of the pipes that stay with the training process. A forked helper
    holds copies of them, and closes those first: else, were the training process killed,
    its own copy would keep its pipe open and it would wait for a request for ever.
    """
    for end in ours:
        end.close()
    worker_ignores_ctrl_c()
    gc.disable()  # no reference cycles here either (see cycle_collector_paused)
    table = WordTable(given.pop())
    try:
        connection.send(table.pair_counts)
        while isinstance(request := connection.recv(), tuple):
            connection.send(table.merge(*request))
        connection.send(table.words)
        connection.send(table.counts)
        pairs = list(table.pair_words.items())
        for start in range(0, len(pairs), HAND_OVER_PAIRS):
            batch = pairs[start : start + HAND_OVER_PAIRS]
            connection.send({pair: [i + request for i in indices] for pair, indices in batch})
        connection.send({})
    except (EOFError, BrokenPipeError):
        return  # the training process is gone: end quietly


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
    Splitter(pattern)  # checks the pattern, and spells its classes out once, before workers fork
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
    return train_from_counts(
        counts, vocab_size, specials, progress=progress, num_processes=num_processes
    )


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
