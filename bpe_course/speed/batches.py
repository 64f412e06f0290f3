"""Encoding a batch of texts on several cores, when that pays.

tiktoken encodes a batch on threads, which run in parallel inside its Rust code. Python
threads take turns (the GIL lets one of them run Python at a time), so a batch here goes to
worker *processes*. They are forked: a child process starts as a copy of this one, so the
tokenizer (hundreds of thousands of tokens) and the texts are there without being sent,
and only the ids travel back, packed as one block of bytes. Starting workers still costs
tens of milliseconds and each worker starts with a cold cache, so a small batch is
encoded in this process, and where ``fork`` does not exist (Windows) every batch is.
"""

from __future__ import annotations

import multiprocessing
from array import array
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from .workers import process_count, started_pool, worker_ignores_ctrl_c

#: A batch with fewer characters than this is encoded in this process. Measured on 2 cores
#: (texts of 2-20 kB, gpt2 and o200k_base): counting the CPU time of this process and of two
#: forked workers, forking, the workers' cold caches and the trip back of the ids cost about
#: what the second core saves at 1 MB, and two workers would win 1.1-1.3x at 2 MB and
#: 1.2-1.5x at 4 MB on an idle machine. On the shared machine itself (load average 2.3 to 8,
#: so no core was idle) two workers lost in wall-clock time up to 4 MB (0.5-0.8x) and won
#: 1.1-1.2x only from 8 MB, with gpt2. So: 4 MB, where an idle core surely pays.
BATCH_PARALLEL_CHARS = 4 << 20

#: ``encode_batch`` cuts a batch into about this many tasks per worker process, so that no
#: worker idles while another finishes a long last task.
TASKS_PER_WORKER = 4


def map_texts(
    encoder: Any, method: str, texts: list[str], options: dict[str, Any], num_processes: int | None
) -> list[list[int]]:
    """``[encoder.method(text, **options) for text in texts]``, here or in forked workers.

    ``num_processes=None`` means every core; :func:`batch_workers` decides how many run.
    """
    workers = batch_workers(texts, num_processes)
    if workers == 1:
        encode = getattr(encoder, method)
        return [encode(text, **options) for text in texts]
    tasks = even_slices([len(text) for text in texts], workers * TASKS_PER_WORKER)
    context = multiprocessing.get_context("fork")
    setup = (encoder, texts, method, options)
    with started_pool(context, workers, _start_batch_worker, setup) as pool:
        packed = pool.map(_encode_batch_slice, tasks)
    return [ids for data, lengths in packed for ids in unpack_ids(data, lengths)]


def batch_workers(texts: Sequence[str], num_processes: int | None) -> int:
    """How many processes should encode this batch: 1 (this one) unless it is big enough
    to repay starting workers, there are several texts and cores, and ``fork`` exists."""
    wanted = process_count(num_processes)
    if (
        wanted == 1
        or len(texts) < 2
        or sum(map(len, texts)) < BATCH_PARALLEL_CHARS
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return 1
    return min(wanted, len(texts))


def even_slices(sizes: Sequence[int], parts: int) -> list[tuple[int, int]]:
    """Cut ``range(len(sizes))`` into at most ``parts`` runs of about equal total size.

    >>> even_slices([5, 1, 1, 1, 1, 1], 2)
    [(0, 1), (1, 6)]
    """
    total = sum(sizes)
    slices, start, running = [], 0, 0
    for index, size in enumerate(sizes):
        running += size
        cut = len(slices) + 1
        if cut < parts and running * parts >= cut * total and index + 1 < len(sizes):
            slices.append((start, index + 1))
            start = index + 1
    slices.append((start, len(sizes)))
    return slices


#: What a batch worker encodes: (tokenizer, texts, method name, keyword arguments).
_batch: tuple[Any, list[str], str, dict[str, Any]] | None = None


def _start_batch_worker(
    encoder: Any, texts: list[str], method: str, options: dict[str, Any]
) -> None:
    """Pool initializer. The pool forks, so the arguments arrive without being pickled."""
    global _batch
    worker_ignores_ctrl_c()
    _batch = (encoder, texts, method, options)


def _encode_batch_slice(bounds: tuple[int, int]) -> tuple[bytes, list[int]]:
    """Encode ``texts[start:end]`` in a worker; the ids go back packed (see :func:`pack_ids`)."""
    assert _batch is not None, "_start_batch_worker runs first"
    encoder, texts, method, options = _batch
    encode = getattr(encoder, method)
    return pack_ids([encode(text, **options) for text in texts[bounds[0] : bounds[1]]])


def pack_ids(lists: list[list[int]]) -> tuple[bytes, list[int]]:
    """Lists of ids as one block of 8-byte integers and the length of each list.

    Results come back from a worker pickled; a block of bytes pickles and unpickles as one
    copy, where a list of lists costs a step per id on both sides.

    >>> unpack_ids(*pack_ids([[1, 2], [], [70000]]))
    [[1, 2], [], [70000]]
    """
    flat = array("q")
    for ids in lists:
        flat.extend(ids)
    return flat.tobytes(), [len(ids) for ids in lists]


def unpack_ids(data: bytes, lengths: list[int]) -> list[list[int]]:
    """The lists of ids that :func:`pack_ids` packed."""
    flat = array("q")
    flat.frombytes(data)
    return [flat[end - length : end].tolist() for end, length in zip(accumulate(lengths), lengths)]
