"""Sharing the first, heaviest merges of training with helper processes.

The merge loop is serial: each merge depends on the counts the one before left. But the
first merges are the heaviest (in text of three-byte characters the first one rewrites
every word), and the words of one merge can be shared out. :class:`MergeHelpers` lets other
processes each hold a share of the :class:`~bpe_course.speed.wordtable.WordTable` and merge it
alongside this process, which keeps the summed pair counts (and so the heap) of the whole
corpus. When the merges turn light, or the machine is too busy to run everyone at once,
the helpers hand their words over and stop; the merges learned are the same either way.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import accumulate, islice
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from .wordtable import WordTable
from .workers import ctrl_c_held, worker_ignores_ctrl_c

#: The fewest distinct pretokens worth a share of the first merges in a process of its own:
#: a helper with fewer would cost more to start than it saves (see :class:`MergeHelpers`).
SHARE_WORDS = 10_000

#: What sharing the merges is taken to have saved before the first one (seconds): enough
#: to outlast a few dozen light merges at the start (see :meth:`MergeHelpers.worth_keeping`).
FIRST_GAIN = 0.001

#: A helper hands its words over this many a message, then the lists of this many pairs.
HAND_OVER_WORDS = 10_000
HAND_OVER_PAIRS = 10_000


@contextmanager
def shared_word_table(
    words: list[tuple[bytes, int]], processes: int
) -> Iterator[WordTable | SharedWordTable]:
    """The :class:`WordTable` of ``words``, its first merges shared with up to ``processes - 1``
    helper processes when the table is large enough for that to pay.

    Either way the caller gets the same interface (``pair_counts``, and ``merge`` returning
    what each pair lost and the pairs it created), so the merge loop never knows whether
    helpers exist. The table keeps no reference to ``words``, and the list is emptied as the
    table reads it: if the caller drops it before the block starts, each word's bytes are
    freed as soon as it is in the table, and the table's strings take their place in memory.
    """
    # No more helpers than cores, even when asked: they would only wait for one another.
    shares = max(1, min(processes, os.cpu_count() or 1, len(words) // SHARE_WORDS))
    if multiprocessing.current_process().daemon:
        shares = 1  # a daemonic process (a pool's worker) may not start processes
    if shares == 1:
        yield WordTable(handed_over(words))
        return
    with MergeHelpers([words[start::shares] for start in range(1, shares)]) as helpers:
        mine = words[::shares]
        words.clear()
        table = WordTable(handed_over(mine))
        helpers.add_pair_counts(table)
        yield SharedWordTable(table, helpers)


def handed_over(items: list[Any]) -> Iterator[Any]:
    """The items of ``items`` in order, each taken out of the list as it is given.

    >>> items = [1, 2, 3]
    >>> next(handed_over(items)), items
    (1, [3, 2])
    """
    items.reverse()
    while items:
        yield items.pop()


class SharedWordTable:
    """A :class:`WordTable` of this process's share of the words, merged alongside helpers
    that hold the rest; its pair counts are those of all the words."""

    def __init__(self, table: WordTable, helpers: MergeHelpers) -> None:
        self.table = table
        self.helpers = helpers

    @property
    def pair_counts(self) -> dict[str, int]:
        return self.table.pair_counts

    def merge(self, pair: str, new_token: str) -> tuple[Mapping[str, int], Iterable[str]]:
        """:meth:`WordTable.merge` over every share: this one's losses, every new pair."""
        self.helpers.start_merge(pair, new_token, self.table)
        lost, gained = self.table.merge(pair, new_token)
        return lost, self.helpers.finish_merge(self.table, gained)


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
            with ctrl_c_held():  # until the helper ignores it (see ctrl_c_held)
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
        for connection, process in zip(self.connections, self.processes):
            self.send(connection, len(table.words))  # where its words will start
            self.take_words(connection, process, table)
        self.connections = []

    def take_words(self, connection: Connection, process: BaseProcess, table: WordTable) -> None:
        """Add a helper's words, counts and lists of words per pair to ``table``.

        Through a temporary file, read once the helper has ended: sent through the pipe, the
        words were held twice at once, the helper's copy and this process's, and that was the
        peak of training (45 MB more than the merge loop's own at 50 MB of text). Through
        the pipe only when no file can be made or written (a full disk, say).
        """
        try:
            handle, path = tempfile.mkstemp(prefix="bpe-course-words-", suffix=".pickle")
            os.close(handle)
        except OSError:
            path = None
        try:
            self.send(connection, path)
            if path is not None and self.receive(connection):
                process.join()
                with open(path, "rb") as handed:
                    add_words(table, lambda: pickle.load(handed))
            else:
                add_words(table, lambda: self.receive(connection))
        finally:
            if path is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)

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
    request, and when asked with a number instead, hand the words over to be numbered from
    there (:func:`send_words`): into the file named next, or, if there is none or it cannot be
    written, through the pipe.

    ``ours`` are the ends of the pipes that stay with the training process. A forked helper
    holds copies of them, and closes those first: else, were the training process killed,
    its own copy would keep its pipe open and it would wait for a request for ever.
    """
    for end in ours:
        end.close()
    worker_ignores_ctrl_c()
    gc.disable()  # no reference cycles here either (see cycle_collector_paused)
    table = WordTable(handed_over(given.pop()))
    path = None
    try:
        connection.send(table.pair_counts)
        while isinstance(request := connection.recv(), tuple):
            connection.send(table.merge(*request))
        path = connection.recv()
        written = path is not None and write_words(table, request, path)
        if path is not None:
            connection.send(written)
        if not written:
            send_words(table, request, connection.send)
    except (EOFError, BrokenPipeError):
        # The training process is gone: end quietly, and remove the file it will never read.
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)


def write_words(table: WordTable, first: int, path: str) -> bool:
    """:func:`send_words` into the file at ``path``; False if it could not be written.

    The training process made the file, empty. It is opened as it is, never made here: once
    the training process has removed it (interrupted, say), a file made again would be left
    behind when this process is stopped.
    """
    try:
        with open(path, "r+b") as handed:
            pickler = pickle.Pickler(handed, pickle.HIGHEST_PROTOCOL)
            pickler.fast = True  # no memo of every object written: lists of str and int
            send_words(table, first, pickler.dump)
    except OSError:
        return False
    return True


def send_words(table: WordTable, first: int, send: Callable[[Any], object]) -> None:
    """Send ``table``'s words and their counts, then the words of each pair, numbered from
    ``first``, each in batches ended by an empty one.

    A batch of words goes as one string and their lengths. Pickling a string of characters
    above U+007F stores its UTF-8 form inside it for good, so the words themselves, pickled
    one by one, would grow by about their own size (20 MB at 50 MB of text) just before
    this process ends; the joined string is freed once sent.
    """
    words, counts = table.words, table.counts
    for start in range(0, len(words), HAND_OVER_WORDS):
        batch = words[start : start + HAND_OVER_WORDS]
        send(("".join(batch), list(map(len, batch)), counts[start : start + HAND_OVER_WORDS]))
    send(("", [], []))
    pairs = iter(table.pair_words.items())  # not a list of them: 19 MB at 50 MB of text
    while batch := {pair: [i + first for i in indices]
                    for pair, indices in islice(pairs, HAND_OVER_PAIRS)}:
        send(batch)
    send({})


def add_words(table: WordTable, receive: Callable[[], Any]) -> None:
    """Add to ``table`` what :func:`send_words` sent, read by ``receive``."""
    while (words := receive())[1]:
        joined, lengths, counts = words
        ends = list(accumulate(lengths))
        table.words += map(joined.__getitem__, map(slice, [0, *ends[:-1]], ends))
        table.counts += counts
    while batch := receive():
        table.add_pair_words(batch)
