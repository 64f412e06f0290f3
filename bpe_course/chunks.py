"""Counting the pretokens of a large corpus, in chunks and in parallel.

Training needs only one thing from the corpus: how often each pretoken occurs. That table
stays small (hundreds of thousands of entries) while the corpus grows to gigabytes, so we
read the file a chunk at a time, count each chunk in a worker process, and add the counts.

The one subtle part is where to cut. A cut must fall where pretokenization would cut
anyway, or a piece like ``" hello"`` could be counted as ``" hel"`` and ``"lo"``. Special
tokens are perfect cut points: text is split on them before pretokenizing. Without special
tokens we cut just after a newline that sits between two visible ASCII characters, which
GPT-2's and GPT-4's patterns always treat as a piece of its own.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from collections.abc import Sequence

import regex

from .base import check_num_processes, progress_bar
from .interrupts import worker_ignores_ctrl_c
from .pretokenize import GPT2_PATTERN, GPT4_PATTERN, count_pretokens
from .utf8 import check_errors, decode_text

#: Files smaller than this are counted in the calling process: starting workers would cost
#: more than it saves.
PARALLEL_THRESHOLD = 2 * 1024 * 1024

#: The most bytes one worker task reads at once. This, not the file size, bounds the
#: memory of a worker.
CHUNK_BYTES = 4 * 1024 * 1024

#: The fewest bytes per task: smaller tasks would cost more in start-up than they save.
MIN_CHUNK_BYTES = 256 * 1024

#: A newline between two visible ASCII characters: a safe cut for GPT-2 and GPT-4 patterns.
_SAFE_NEWLINE = regex.compile(rb"[!-~]\n(?=[!-~])")


def _find_cut(
    file, position: int, special_tokens: Sequence[bytes], newline_is_safe: bool
) -> int | None:
    """The first safe cut at or after ``position``, or None if the file ends first.

    We read a little before ``position`` too, so that a special token that starts before it
    and runs past it is seen (a cut inside it would be wrong).
    """
    reach = max([len(token) - 1 for token in special_tokens] + [1])
    window_start = max(0, position - reach)
    file.seek(window_start)
    window = b""
    search_from = position - window_start
    while True:
        block = file.read(64 * 1024)
        window += block
        complete = not block
        cut = _first_cut_in(window, search_from, special_tokens, newline_is_safe, complete)
        if cut is not None:
            return window_start + cut
        if complete:
            return None
        # Keep only the tail that later candidates may need to look back into; a candidate
        # is searched for only where ``reach`` bytes before it are still in the window.
        drop = max(0, len(window) - 2 * reach - 1)
        if drop:
            window = window[drop:]
            window_start += drop
            search_from = max(position - window_start, reach)


def _first_cut_in(
    window: bytes, start: int, tokens: Sequence[bytes], newline_is_safe: bool, complete: bool
) -> int | None:
    """The first safe cut in ``window`` at or after index ``start``.

    A special token's start is a safe cut unless some special token occurrence begins
    before it and ends after it (``"<|endoftext|>"`` inside ``"[<|endoftext|>]"``, or
    ``"bc"`` overlapping ``"ab"``). Unless the window reaches the end of the file, a cut is
    only trusted where every such occurrence would fit inside the window.
    """
    start = max(start, 0)
    if not tokens:
        if not newline_is_safe:
            return None
        match = _SAFE_NEWLINE.search(window, start)
        return match.end() if match else None
    longest = max(map(len, tokens))
    limit = len(window) if complete else len(window) - longest + 1
    best: int | None = None
    for token in tokens:
        found = window.find(token, start, limit + len(token) - 1)
        while found != -1 and (best is None or found < best):
            if not _straddled(window, found, tokens):
                best = found
                break
            found = window.find(token, found + 1, limit + len(token) - 1)
    return best


def _straddled(window: bytes, cut: int, tokens: Sequence[bytes]) -> bool:
    """Does some token occur in ``window`` starting before ``cut`` and ending after it?"""
    return any(
        window.find(token, max(0, cut - len(token) + 1), cut + len(token) - 1) != -1
        for token in tokens
        if len(token) > 1
    )


def find_chunk_boundaries(
    path: str | os.PathLike[str],
    chunk_bytes: int,
    special_tokens: Sequence[str] = (),
    pattern: str = GPT2_PATTERN,
) -> list[int]:
    """Byte offsets ``[0, ..., file_size]`` that cut the file into chunks of about
    ``chunk_bytes`` where pretokenization would cut anyway.

    A chunk may be longer than asked when no safe cut is near (with an unknown pattern and
    no special tokens the whole file is one chunk).
    """
    size = os.path.getsize(path)
    tokens = [token.encode("utf-8") for token in special_tokens]
    newline_is_safe = pattern in (GPT2_PATTERN, GPT4_PATTERN)
    if not tokens and not newline_is_safe:
        return [0, size]
    boundaries = [0]
    with open(path, "rb") as file:
        while boundaries[-1] + chunk_bytes < size:
            cut = _find_cut(file, boundaries[-1] + chunk_bytes, tokens, newline_is_safe)
            if cut is None:
                break
            if cut > boundaries[-1]:
                boundaries.append(cut)
    boundaries.append(size)
    return boundaries


def count_chunk(
    path: str, start: int, end: int, special_tokens: Sequence[str], pattern: str, errors: str
) -> Counter[str]:
    """Pretoken counts of bytes ``start:end`` of ``path`` (runs in a worker process)."""
    with open(path, "rb") as file:
        file.seek(start)
        data = file.read(end - start)
    return count_pretokens(decode_text(data, path, errors, start), special_tokens, pattern)


def _count_chunk_task(args: tuple) -> tuple[int, Counter[str]]:
    start, end = args[1], args[2]
    return end - start, count_chunk(*args)


def count_file_pretokens(
    paths: Sequence[str],
    special_tokens: Sequence[str] = (),
    pattern: str = GPT2_PATTERN,
    *,
    num_processes: int | None = None,
    progress: bool = False,
    errors: str = "strict",
    chunk_bytes: int | None = None,
) -> Counter[str]:
    """Pretoken counts of every file in ``paths``, counted by ``num_processes`` workers.

    ``num_processes=None`` uses every core; ``1`` counts in this process. Small inputs
    are always counted here, since starting workers would cost more than it saves.
    ``chunk_bytes=None`` picks about four tasks per worker (so no worker idles while
    another finishes a big last chunk), between ``MIN_CHUNK_BYTES`` and ``CHUNK_BYTES``.
    """
    check_errors(errors)
    num_processes = check_num_processes(num_processes) or os.cpu_count() or 1
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
    total_bytes = sum(task[2] - task[1] for task in tasks)
    bar = progress_bar(progress, total_bytes, unit="B", unit_scale=True, desc="pretokenize")
    counts: Counter[str] = Counter()
    if num_processes == 1 or total_bytes < PARALLEL_THRESHOLD or len(tasks) == 1:
        results = map(_count_chunk_task, tasks)
        for done, chunk_counts in results:
            counts.update(chunk_counts)
            bar.update(done)
    else:
        workers = min(num_processes, len(tasks))
        with multiprocessing.get_context().Pool(workers, initializer=worker_ignores_ctrl_c) as pool:
            for done, chunk_counts in pool.imap_unordered(_count_chunk_task, tasks):
                counts.update(chunk_counts)
                bar.update(done)
    bar.close()
    return counts
