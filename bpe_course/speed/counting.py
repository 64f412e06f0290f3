"""Counting the pretokens of a large corpus, in chunks and in parallel.

Training needs only one thing from the corpus: how often each pretoken occurs. That table
stays small (hundreds of thousands of entries) while the corpus grows to gigabytes, so we
read the file a chunk at a time, count each chunk in a worker, and add the counts. Counting
is a map-reduce: what goes to a worker is a file name and two byte offsets, what comes back
is a ``Counter``. Any :class:`concurrent.futures.Executor` can run the map (the default is a
local process pool), so a cluster's executor can count a corpus too big for one machine.

The one subtle part is where to cut. A cut must fall where pretokenization would cut
anyway, or a piece like ``" hello"`` could be counted as ``" hel"`` and ``"lo"``. Two kinds
of place are safe: the start of a special token (text is split on special tokens before it
is pretokenized, so nothing is ever joined across one; we prefer these when one is near),
and a place where the split pattern provably never joins the two neighbours
(:mod:`bpe_course.speed.cuts` holds those rules and their proofs).

A stretch of text with neither (a long run of digits or letters, or any text under a custom
pattern without special tokens) is counted as one chunk, whatever its size: the counts stay
exact, but one worker holds the whole stretch. We say so with a :class:`LongChunkWarning`
rather than silently counting it in one process.
"""


from __future__ import annotations

import contextlib
import multiprocessing
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, as_completed
from typing import Any

import regex

from ..base import PathLike, check_special_tokens, merges_to_learn
from ..pretokens import GPT2_PATTERN, split_on_special_tokens
from ..safety.patterns import PatternError
from ..utf8 import check_errors, decode_text
from .cuts import cut_rules_of, rule_cuts, safe_cut_regex, spans_between_safe_cuts
from .fastsplit import Splitter
from .wordtable import bound_pretokens, check_max_pretoken_bytes
from .workers import (
    check_executor,
    check_num_processes,
    process_count,
    progress_bar,
    started_pool,
    worker_ignores_ctrl_c,
)

#: Files smaller than this are counted in the calling process: starting workers would cost
#: more than it saves.
PARALLEL_THRESHOLD = 2 * 1024 * 1024

#: A chunk holds this many bytes, and then runs on to the next safe cut (or to a special token
#: up to a quarter as many bytes further). This, not the file size, bounds a worker's memory.
CHUNK_BYTES = 4 * 1024 * 1024

#: The fewest bytes per task: smaller tasks would cost more in start-up than they save.
MIN_CHUNK_BYTES = 256 * 1024

#: A chunk runs on this fraction of its size further to end at a special token (a document
#: boundary) rather than at another safe cut: any more would make chunks uneven.
SPECIAL_TOKEN_REACH = 0.25

#: Bytes read at a time while looking for a cut.
SEARCH_BLOCK = 64 * 1024

#: A UTF-8 character is at most this many bytes: the context a cut rule needs on each side.
MAX_CHAR_BYTES = 4

#: A worker pretokenizes text between special tokens this many characters at a time (cut at
#: safe places), so the list of pieces one ``findall`` builds stays small: about 15 bytes
#: of list and string objects per character of text.
SPAN_CHARS = 64 * 1024


class LongChunkWarning(UserWarning):
    """A stretch of the corpus has no safe cut, so one worker counts all of it at once."""


# Finding the cuts in a file ----------------------------------------------------------------


def _rule_cuts(window: bytes, rule: regex.Pattern[str]) -> Iterator[int]:
    """Byte offsets in ``window`` where ``rule`` allows a cut, in order.

    The window may start or end inside a character; ``surrogateescape`` turns those bytes
    (and any invalid UTF-8) into lone surrogates, which no rule accepts on either side.
    """
    if window.isascii():
        yield from rule_cuts(window.decode("ascii"), rule)
        return
    text = window.decode("utf-8", "surrogateescape")
    chars = offset = 0
    for cut in rule_cuts(text, rule):
        offset += len(text[chars:cut].encode("utf-8", "surrogateescape"))
        chars = cut
        yield offset


def _straddled(window: bytes, cut: int, tokens: Sequence[bytes]) -> bool:
    """Does some special token occur in ``window`` starting before ``cut`` and ending after it?

    Any occurrence counts, even one the splitter would not pick (``"<|endoftext|>"`` inside
    ``"[<|endoftext|>]"``, or ``"bc"`` overlapping ``"ab"``): with none across the cut, the
    split on special tokens of the two sides is the split of the whole.
    """
    return any(
        window.find(token, max(0, cut - len(token) + 1), cut + len(token) - 1) != -1
        for token in tokens
        if len(token) > 1
    )


def _first_cut_in(
    window: bytes, low: int, high: int, tokens: Sequence[bytes], rule: regex.Pattern[str] | None
) -> int | None:
    """The first safe cut ``c`` in ``window`` with ``low <= c < high``, or None.

    The caller makes sure the window holds enough bytes on both sides of that range to see
    any special token across a cut and the characters a rule looks at.
    """
    best: int | None = None
    for token in tokens:
        found = window.find(token, low, high + len(token) - 1)
        while found != -1 and (best is None or found < best):
            if not _straddled(window, found, tokens):
                best = found
                break
            found = window.find(token, found + 1, high + len(token) - 1)
    if rule is not None:
        for cut in _rule_cuts(window, rule):
            if cut >= (high if best is None else best):
                break
            if cut >= low and not _straddled(window, cut, tokens):
                return cut
    return best


def _first_cut(
    file, position: int, stop: int | None, tokens: Sequence[bytes], rule: regex.Pattern[str] | None
) -> int | None:
    """The first safe cut at or after ``position`` (and before ``stop``, if given).

    The file is read in blocks; the window keeps ``context`` bytes before the range still
    to search, so a special token across a block boundary, or a character cut by it, is seen.
    """
    context = max([len(token) for token in tokens] + [MAX_CHAR_BYTES])
    window_start = max(0, position - context)
    file.seek(window_start)
    window = b""
    low = position
    while True:
        block = file.read(SEARCH_BLOCK)
        window += block
        end = window_start + len(window)
        high = end - context if block else end
        if stop is not None:
            high = min(high, stop)
        if high > low:
            cut = _first_cut_in(window, low - window_start, high - window_start, tokens, rule)
            if cut is not None:
                return window_start + cut
            low = high
        if not block or (stop is not None and low >= stop):
            return None
        drop = low - context - window_start
        if drop > 0:
            window = window[drop:]
            window_start += drop


def find_chunk_boundaries(
    path: str | os.PathLike[str],
    chunk_bytes: int,
    special_tokens: Sequence[str] = (),
    pattern: str = GPT2_PATTERN,
) -> list[int]:
    """Byte offsets ``[0, ..., file_size]`` that cut the file into chunks of about
    ``chunk_bytes`` where pretokenization would cut anyway.

    After each ``chunk_bytes``, the chunk ends at the next special token if one starts
    within another quarter of ``chunk_bytes``, else at the first place a rule allows
    (:func:`~.cuts.cut_rules_of`). A chunk is longer only where there is no safe cut at all
    (with a pattern that has no rules and no special tokens, the whole file is one chunk).
    """
    size = os.path.getsize(path)
    tokens = [token.encode("utf-8") for token in special_tokens]
    rule = safe_cut_regex(pattern)
    if not tokens and rule is None:
        return [0, size]
    boundaries = [0]
    with open(path, "rb") as file:
        while boundaries[-1] + chunk_bytes < size:
            target = boundaries[-1] + chunk_bytes
            reach = target + max(1, int(chunk_bytes * SPECIAL_TOKEN_REACH))
            cut = _first_cut(file, target, reach, tokens, None) if tokens else None
            if cut is None:
                cut = _first_cut(file, target, None, tokens, rule)
            if cut is None:
                break
            boundaries.append(cut)
    boundaries.append(size)
    return boundaries


def warn_about_long_chunks(
    chunks: Sequence[tuple[str, int, int]], chunk_bytes: int, special_tokens: Sequence[str],
    pattern: str,
) -> None:
    """One :class:`LongChunkWarning` for all chunks over twice ``chunk_bytes`` (and over
    ``MIN_CHUNK_BYTES``: a short stretch costs no memory worth a word), if any.

    Such a chunk holds a stretch without a safe cut. We count it whole (exact, but one worker
    then holds all of it) rather than cut it where a piece might be split.
    """
    too_long = max(2 * chunk_bytes, MIN_CHUNK_BYTES)
    long = [(path, start, end) for path, start, end in chunks if end - start > too_long]
    if not long:
        return
    path, start, end = max(long, key=lambda chunk: chunk[2] - chunk[1])
    if not cut_rules_of(pattern):
        why = "the pattern is not one of GPT-2's, GPT-4's or o200k's, so only special "
        why += "tokens are safe cuts" + ("" if special_tokens else ", and none were given")
    else:
        why = "no special token and no place the pattern provably never joins (such as "
        why += "a letter before a space) occurs there"
    more = f" ({len(long)} such stretches in all)" if len(long) > 1 else ""
    # The corpus, not a line of our code, is where the problem is: naming it as the warning's
    # file gives one line, "corpus.txt:0: LongChunkWarning: ...", with no source line under it.
    warnings.warn_explicit(
        f"the {end - start:,} bytes from byte {start:,} on have no safe place to cut{more}: "
        f"{why}. One worker counts each such stretch whole, so its memory grows with it.",
        LongChunkWarning,
        filename=path,
        lineno=0,
        module=__name__,
    )


def corpus_paths(input_path: PathLike | Iterable[PathLike]) -> list[str]:
    """Accept one corpus path or several; check each is an existing file, before any reading.

    A ``bytes`` path is refused with a reason: text corpora are named by text paths.
    """
    if isinstance(input_path, (bytes, bytearray)):
        raise TypeError(f"input_path must be a str or os.PathLike, not bytes: {input_path!r}")
    if isinstance(input_path, (str, os.PathLike)):
        candidates: list[Any] = [input_path]
    else:
        try:
            candidates = list(input_path)
        except TypeError:
            raise TypeError(
                f"input_path must be a path or a list of paths, got {type(input_path).__name__}"
            ) from None
    if not candidates:
        raise ValueError("input_path is an empty list: give at least one corpus file")
    paths = []
    for candidate in candidates:
        if not isinstance(candidate, (str, os.PathLike)):
            raise TypeError(f"corpus paths must be str or os.PathLike, got {candidate!r}")
        path = os.fspath(candidate)
        if not isinstance(path, str):
            raise TypeError(f"corpus paths must be text, not bytes: {path!r}")
        if not os.path.exists(path):
            raise FileNotFoundError(f"corpus file not found: {path}")
        if os.path.isdir(path):
            raise IsADirectoryError(f"corpus path is a directory, not a file: {path}")
        if not os.path.isfile(path):
            raise ValueError(
                f"corpus path is not a regular file: {path} (training reads files in "
                "chunks, so pipes and devices cannot be used; save the text to a file)"
            )
        paths.append(path)
    return paths


# Counting the chunks ------------------------------------------------------------------------

def count_text_pretokens(
    text: str, special_tokens: Sequence[str] = (), pattern: str = GPT2_PATTERN
) -> Counter[str]:
    """:func:`~bpe_course.pretokens.count_pretokens`, with memory that does not grow with
    the text between two special tokens: that text is pretokenized a span at a time.

    ``findall`` with an end position reads the text as if it ended there, which is what the
    proofs of the cut rules assume, and it copies nothing.
    """
    compiled = Splitter(pattern, guarded=True)
    rule = safe_cut_regex(pattern)
    counts: Counter[str] = Counter()
    for segment in split_on_special_tokens(text, special_tokens)[::2]:
        for start, end in spans_between_safe_cuts(segment, rule, SPAN_CHARS):
            counts.update(compiled.findall(segment, start, end))
    return counts


def count_chunk(
    path: str, start: int, end: int, special_tokens: Sequence[str], pattern: str, errors: str
) -> Counter[str]:
    """Pretoken counts of bytes ``start:end`` of ``path`` (runs in a worker)."""
    with open(path, "rb") as file:
        file.seek(start)
        data = file.read(end - start)
    if len(data) != end - start:
        raise ValueError(
            f"{path} changed while it was being read: bytes {start}..{end} were planned, "
            f"the file now ends at {start + len(data)}; train again on a file that stays put"
        )
    text = decode_text(data, path, errors, start)
    try:
        return count_text_pretokens(text, special_tokens, pattern)
    except PatternError as error:  # text the pattern would lose, or too long a split
        raise PatternError(f"{path}: {error}") from None


def count_chunk_task(task: tuple) -> tuple[int, Counter[str]]:
    """:func:`count_chunk` for one task tuple; returns the bytes done (for progress) too."""
    path, start, end, special_tokens, pattern, errors = task
    return end - start, count_chunk(path, start, end, special_tokens, pattern, errors)


def _results_from(executor: Executor, tasks: list[tuple]) -> Iterator[tuple[int, Counter[str]]]:
    """Run ``tasks`` on ``executor``, yielding results as they finish.

    A finished future is dropped at once, so the counts of only one chunk wait in memory.
    If we stop early (an error, Ctrl-C), the tasks not yet started are cancelled; the
    executor itself belongs to the caller and stays up.
    """
    pending = {executor.submit(count_chunk_task, task) for task in tasks}
    try:
        for future in as_completed(pending):
            pending.discard(future)
            yield future.result()
    finally:
        for future in pending:
            future.cancel()


def _results(
    tasks: list[tuple], num_processes: int, executor: Executor | None
) -> Iterator[tuple[int, Counter[str]]]:
    """The results of ``tasks``: on ``executor``, in this process, or on a local pool."""
    if executor is not None:
        yield from _results_from(executor, tasks)
        return
    total_bytes = sum(task[2] - task[1] for task in tasks)
    if num_processes == 1 or total_bytes < PARALLEL_THRESHOLD or len(tasks) == 1:
        yield from map(count_chunk_task, tasks)
        return
    workers = min(num_processes, len(tasks))
    # A Pool, not a ProcessPoolExecutor: leaving the block terminates the workers at once,
    # which is what Ctrl-C needs (an executor would first finish the running chunks).
    with started_pool(multiprocessing.get_context(), workers, worker_ignores_ctrl_c) as pool:
        yield from pool.imap_unordered(count_chunk_task, tasks)


def count_file_pretokens(
    paths: Sequence[str],
    special_tokens: Sequence[str] = (),
    pattern: str = GPT2_PATTERN,
    *,
    num_processes: int | None = None,
    progress: bool = False,
    errors: str = "strict",
    chunk_bytes: int | None = None,
    executor: Executor | None = None,
) -> Counter[str]:
    """Pretoken counts of every file in ``paths``, counted by ``num_processes`` workers.

    ``num_processes=None`` uses every core; ``1`` counts in this process. Small inputs
    are counted here, since starting workers would cost more than it saves.
    ``chunk_bytes=None`` picks about four tasks per worker (so no worker idles while
    another finishes a big last chunk), between ``MIN_CHUNK_BYTES`` and ``CHUNK_BYTES``.

    ``executor`` runs the tasks instead of a local pool: any
    :class:`concurrent.futures.Executor`, such as a ``ProcessPoolExecutor`` or the executor
    of a cluster (Dask's ``Client.get_executor()``). A task is a file name and two byte
    offsets and its result a ``Counter``, never text, so every worker must see the files
    under the same absolute path (a shared file system). ``num_processes`` then only sizes
    the chunks: give the number of workers the executor has.
    """
    check_errors(errors)
    executor = check_executor(executor)
    num_processes = process_count(num_processes)
    if executor is not None:  # a worker elsewhere has another working directory
        paths = [os.path.abspath(path) for path in paths]
    if chunk_bytes is None:
        total_size = sum(os.path.getsize(path) for path in paths)
        chunk_bytes = min(CHUNK_BYTES, max(MIN_CHUNK_BYTES, total_size // (4 * num_processes)))
    tasks = []
    for path in paths:
        bounds = find_chunk_boundaries(path, chunk_bytes, special_tokens, pattern)
        tasks += [
            (path, start, end, list(special_tokens), pattern, errors)
            for start, end in zip(bounds, bounds[1:])
        ]
    warn_about_long_chunks(
        [(path, start, end) for path, start, end, *_ in tasks], chunk_bytes, special_tokens, pattern
    )
    total_bytes = sum(task[2] - task[1] for task in tasks)
    counts: Counter[str] = Counter()
    # The bar closes on the way out of an error too, so that a message printed after it
    # (such as "interrupted") is not followed by the bar's last redraw.
    with (
        progress_bar(progress, total_bytes, unit="B", unit_scale=True, desc="pretokenize") as bar,
        contextlib.closing(_results(tasks, num_processes, executor)) as results,
    ):
        bar.refresh()  # drawn only now that the block will close it (see progress_bar)
        for done, chunk_counts in results:
            counts.update(chunk_counts)
            bar.update(done)
    return counts


def count_corpus(
    input_path: PathLike | Iterable[PathLike],
    vocab_size: int,
    special_tokens: Sequence[str],
    pattern: str,
    num_processes: int | None,
    progress: bool,
    errors: str,
    executor: Executor | None = None,
    max_pretoken_bytes: int | None = None,
) -> tuple[list[str], Mapping[str | bytes, int]]:
    """Check every argument, then count the corpus's pretokens: the part both trainers share.

    Everything that can be wrong with the arguments is reported before a byte is read.
    A pretoken too long to train on is refused or cut as soon as it is counted
    (:func:`~bpe_course.speed.wordtable.bound_pretokens`).
    """
    special_tokens = check_special_tokens(special_tokens)
    merges_to_learn(vocab_size, special_tokens)
    Splitter(pattern, guarded=True)  # checks it, and spells its classes out before workers fork
    check_num_processes(num_processes)
    check_errors(errors)
    check_executor(executor)
    check_max_pretoken_bytes(max_pretoken_bytes)
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
    return special_tokens, bound_pretokens(counts, max_pretoken_bytes)
