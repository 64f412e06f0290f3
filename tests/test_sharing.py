"""Sharing the first merges with helper processes: the same merges as one process, always.

Helper processes hold shares of the words, this process the sum of the pair counts, until the
merges turn light and the helpers hand their words over. Whatever happens to them (a hand-over
at any merge, a pool worker that may not start processes, a helper or the trainer killed),
training gives the naive trainer's merges or a clear error, and no helper is left behind.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from strategies import ENDOFTEXT, repetitive_word, word_count, word_counts
from test_wordtable import listed_words, words_with_pairs

from bpe_course import train_from_counts, train_from_counts_naive
from bpe_course.speed import sharing
from bpe_course.speed.sharing import MergeHelpers
from bpe_course.speed.wordtable import WordTable


def share_with_helpers(patch: pytest.MonkeyPatch, merges: int | None) -> list[int]:
    """Share every table; keep the helpers for ``merges`` merges (``None``: as long as they
    pay, as in training). Returns a list that gets an item per merge the helpers share."""
    patch.setattr(sharing, "SHARE_WORDS", 1)
    patch.setattr(sharing, "HAND_OVER_PAIRS", 3)  # several messages for a few words
    patch.setattr(sharing, "HAND_OVER_WORDS", 2)
    patch.setattr(os, "cpu_count", lambda: 3)
    shared: list[int] = []
    finish, worth_keeping = MergeHelpers.finish_merge, MergeHelpers.worth_keeping

    def counted(helpers, table, new_pairs):
        shared.extend([1] if helpers.connections else [])
        return finish(helpers, table, new_pairs)

    def for_a_while(helpers):
        return worth_keeping(helpers) if merges is None else len(shared) < merges

    patch.setattr(MergeHelpers, "finish_merge", counted)
    patch.setattr(MergeHelpers, "worth_keeping", for_a_while)
    return shared


@settings(max_examples=30, deadline=None)
@given(
    counts=word_counts(st.sampled_from("abc"))
    | word_counts(st.characters(codec="utf-8"))
    | st.dictionaries(repetitive_word, word_count, min_size=1, max_size=8),
    extra_merges=st.integers(0, 40),
    processes=st.sampled_from([2, 3]),
    merges=st.sampled_from([0, 1, 3, 10**6]),
)
def test_merges_shared_with_helper_processes_match_naive(counts, extra_merges, processes, merges):
    vocab_size = 257 + extra_merges
    with pytest.MonkeyPatch.context() as patch:
        shared = share_with_helpers(patch, merges)
        fast = train_from_counts(counts, vocab_size, [ENDOFTEXT], num_processes=processes)
    assert fast == train_from_counts_naive(counts, vocab_size, [ENDOFTEXT])
    event("shared merges" if shared else "no merge shared")


#: 300 words, "the0" to "the299": after the first merges (t h, th e), each merge touches a
#: word or two.
THE_WORDS = {f"the{index}": 1 + index % 7 for index in range(300)}


def test_helpers_hand_their_words_over_when_sharing_stops_paying(monkeypatch):
    # 300 merges of THE_WORDS: most touch less work than a message, so the helpers soon
    # hand over.
    shared = share_with_helpers(monkeypatch, None)
    vocab, merges = train_from_counts(THE_WORDS, 600, num_processes=2)
    assert (vocab, merges) == train_from_counts_naive(THE_WORDS, 600)
    assert 0 < len(shared) < len(merges) - 50



@settings(max_examples=25, deadline=None)
@given(
    counts=word_counts(st.sampled_from("abc")) | st.dictionaries(repetitive_word, word_count),
    shared_merges=st.integers(0, 12),
    merges_after=st.integers(0, 12),
)
def test_a_hand_over_leaves_the_table_one_process_would_have(counts, shared_merges, merges_after):
    # Merge the same pairs in one table, and in two shares of it (this process and a helper)
    # that merge together, then hand over: words, counts, pair counts and the words listed
    # under each pair must agree.
    words = [(word.encode(), count) for word, count in counts.items() if len(word.encode()) > 1]
    alone = WordTable(words)
    with pytest.MonkeyPatch.context() as patch, MergeHelpers([words[1::2]]) as helpers:
        share_with_helpers(patch, shared_merges)
        table = WordTable(words[::2])
        helpers.add_pair_counts(table)
        for step in range(shared_merges + merges_after):
            if not alone.pair_counts:
                break
            pair = max(alone.pair_counts, key=lambda pair: (alone.pair_counts[pair], pair))
            alone.merge(pair, chr(300 + step))
            helpers.start_merge(pair, chr(300 + step), table)
            _, new_pairs = table.merge(pair, chr(300 + step))
            helpers.finish_merge(table, new_pairs)
        if helpers.connections:
            patch.setattr(MergeHelpers, "worth_keeping", lambda helpers: False)
            helpers.start_merge("no pair", chr(299), table)  # a hand-over, then nothing
    assert not helpers.connections
    assert Counter(zip(table.words, table.counts)) == Counter(zip(alone.words, alone.counts))
    assert table.pair_counts == alone.pair_counts
    assert listed_words(table) == words_with_pairs(table) == words_with_pairs(alone)


KILLED_MID_MERGE = """
import os, signal
import bpe_course.train as train
import bpe_course.speed.sharing as sharing
sharing.SHARE_WORDS = 1
sharing.MergeHelpers.worth_keeping = lambda helpers: True

def killed(helpers, table, new_pairs):  # this process dies at the first shared merge
    print(*[process.pid for process in helpers.processes], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

sharing.MergeHelpers.finish_merge = killed
train.train_from_counts({f"w{i}x": 1 for i in range(50)}, 300, num_processes=2)
"""


def has_ended(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status  # a zombie has ended; nobody has collected it yet


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_helpers_end_when_the_training_process_is_killed():
    # SIGKILL leaves no chance to clean up: a helper must see its pipe close and end, not
    # wait for the next merge forever (it would, while it held the other end itself).
    # (Popen, not run: a helper left waiting would keep the output pipe open for ever.)
    with subprocess.Popen([sys.executable, "-c", KILLED_MID_MERGE], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as training:
        helpers = [int(pid) for pid in training.stdout.readline().split()]
        assert training.wait(timeout=60) == -signal.SIGKILL
        assert helpers
    for _ in range(200):  # up to 10 s
        if all(map(has_ended, helpers)):
            break
        time.sleep(0.05)
    left = [pid for pid in helpers if not has_ended(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "helpers still waiting after their training process was killed"


#: A training run in a fresh process that hands its helper's words over at the first merge,
#: the helper waiting DELAY seconds before it writes them; a script adds the rest.
HAND_OVER_AT_ONCE = """
import os, signal, tempfile, time
import bpe_course.train as train
import bpe_course.speed.sharing as sharing
sharing.SHARE_WORDS = 1
sharing.MergeHelpers.worth_keeping = lambda helpers: False
send_words = sharing.send_words

def slowly(*args):
    time.sleep(DELAY)
    send_words(*args)

sharing.send_words = slowly
"""

KILLED_AT_HAND_OVER = HAND_OVER_AT_ONCE.replace("DELAY", "0.5") + """
def killed(helpers, connection, process, table):  # this process dies once the file is named
    handle, path = tempfile.mkstemp(prefix="bpe-course-words-", suffix=".pickle")
    os.close(handle)
    print(path, flush=True)
    helpers.send(connection, path)
    os.kill(os.getpid(), signal.SIGKILL)

sharing.MergeHelpers.take_words = killed
train.train_from_counts({f"w{i}x": 1 for i in range(50)}, 300, num_processes=2)
"""


def test_a_helper_whose_training_process_is_killed_leaves_no_file(tmp_path):
    environment = {**os.environ, "TMPDIR": str(tmp_path)}
    with subprocess.Popen([sys.executable, "-c", KILLED_AT_HAND_OVER], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, env=environment) as training:
        path = Path(training.stdout.readline().strip())
        assert training.wait(timeout=60) == -signal.SIGKILL
    assert path.parent == tmp_path
    for _ in range(200):  # up to 10 s: the helper writes, finds no one to tell, and removes it
        if not path.exists():
            break
        time.sleep(0.05)
    assert not path.exists(), "the hand-over file outlived both processes"


STOPPED_AT_HAND_OVER = HAND_OVER_AT_ONCE.replace("DELAY", "2") + """
def interrupted(helpers, connection, process, table):
    # As after Ctrl-C: the file is removed before the helper opens it, then the helper is
    # stopped mid-write (by MergeHelpers.__exit__, as the interrupt leaves the block).
    handle, path = tempfile.mkstemp(prefix="bpe-course-words-", suffix=".pickle")
    os.close(handle)
    os.unlink(path)
    print(path, flush=True)
    helpers.send(connection, path)
    time.sleep(0.5)
    raise KeyboardInterrupt

sharing.MergeHelpers.take_words = interrupted
try:
    train.train_from_counts({f"w{i}x": 1 for i in range(50)}, 300, num_processes=2)
except KeyboardInterrupt:
    pass
"""


def test_a_helper_stopped_mid_hand_over_leaves_no_file(tmp_path):
    environment = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", STOPPED_AT_HAND_OVER], capture_output=True,
                          text=True, env=environment, timeout=60)
    path = Path(done.stdout.strip())
    assert done.returncode == 0, done.stderr
    assert path.parent == tmp_path
    assert not path.exists(), "the helper made the file again after it had been removed"


def train_small_table(counts: dict[str, int]) -> tuple:
    return train_from_counts(counts, 300, num_processes=2)


def test_training_in_a_pool_worker_starts_no_helpers(monkeypatch):
    # A pool's workers are daemonic, and a daemonic process may not start processes: the
    # merge loop then runs in the worker alone instead of failing.
    share_with_helpers(monkeypatch, 10**6)
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(train_small_table, (counts,)) == train_from_counts_naive(counts, 300)


def test_a_helper_process_that_dies_is_reported(monkeypatch):
    share_with_helpers(monkeypatch, 10**6)
    parent, merge = os.getpid(), WordTable.merge

    def dies_in_a_helper(table, pair, new_token):
        if os.getpid() != parent:
            os._exit(3)  # as if the system had killed it, say for memory
        return merge(table, pair, new_token)

    monkeypatch.setattr(WordTable, "merge", dies_in_a_helper)
    with pytest.raises(RuntimeError, match="helper process of the merge loop stopped"):
        train_from_counts({"low": 5, "lower": 2, "newest": 6}, 300, num_processes=2)


def hand_over_words(patch: pytest.MonkeyPatch) -> tuple[tuple, dict]:
    """Train :data:`THE_WORDS` with one helper that hands its words over; the vocabulary and
    merges, and whether the helper was still running when its first words reached this
    process's table."""
    share_with_helpers(patch, 5)
    patch.setattr(os, "cpu_count", lambda: 2)
    seen: dict = {}
    add = WordTable.add_pair_words

    def noted(table, batch):
        seen.setdefault("helpers running", bool(multiprocessing.active_children()))
        return add(table, batch)

    patch.setattr(WordTable, "add_pair_words", noted)
    return train_from_counts(THE_WORDS, 600, num_processes=2), seen


def test_a_helper_has_ended_before_its_words_are_added(monkeypatch, tmp_path):
    # Through a pipe, this process would hold the helper's words while the helper still
    # held its own copy: at 50 MB of text the summed peak rose by 45 MB during the hand-over.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    trained, seen = hand_over_words(monkeypatch)
    assert trained == train_from_counts_naive(THE_WORDS, 600)
    assert seen == {"helpers running": False}
    assert list(tmp_path.iterdir()) == []  # the file the words came through is gone


@pytest.mark.parametrize("trouble", ["no temporary file", "the helper cannot write it"])
def test_a_hand_over_without_a_file_goes_through_the_pipe(trouble, monkeypatch, tmp_path):
    if trouble == "no temporary file":
        def no_file(*args, **kwargs):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(tempfile, "mkstemp", no_file)
    else:  # a path the helper cannot open: its directory is gone
        monkeypatch.setattr(tempfile, "mkstemp",
                            lambda **kwargs: (os.open(os.devnull, os.O_RDONLY),
                                              str(tmp_path / "gone" / "words")))
    trained, seen = hand_over_words(monkeypatch)
    assert trained == train_from_counts_naive(THE_WORDS, 600)
    assert "helpers running" in seen  # the words did come over, through the pipe
