"""encode_batch and encode_ordinary_batch: the ids of one call per text, in this process or
in forked workers (speed/batches.py), as tiktoken's batches give them, and stopped cleanly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import ENDOFTEXT
from test_openai import HAND_PICKED
from test_surface import ENCODINGS, outcome
from test_tokenizer import TOKENIZER_NAMES

from bpe_course.course.data import english_prose
from bpe_course.safety.specials import DisallowedSpecialError
from bpe_course.speed import batches

BATCH = [
    "",
    "Hello, world!",
    f"a{ENDOFTEXT}b{ENDOFTEXT * 2}<pad>",
    "中文 \ud83d\ude00 \udc00",
    english_prose(3000),
    "   \n\n  x",
]


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_batches_give_the_ids_of_one_call_per_text(tokenizers, name, monkeypatch, pool_spy):
    tokenizer = tokenizers[name]
    texts = BATCH * 3
    expected = [tokenizer.encode(text) for text in texts]
    ordinary = [tokenizer.encode_ordinary(text) for text in texts]
    assert tokenizer.encode_batch(texts) == expected
    assert tokenizer.encode_ordinary_batch(iter(texts)) == ordinary
    assert pool_spy == []  # a small batch is encoded here
    monkeypatch.setattr(batches, "BATCH_PARALLEL_CHARS", 0)
    assert tokenizer.encode_batch(texts, num_processes=2) == expected
    assert tokenizer.encode_ordinary_batch(texts, num_threads=2) == ordinary
    assert pool_spy == [2, 2]
    allow = {
        "allowed_special": set(tokenizer.special_tokens_set) - {ENDOFTEXT},
        "disallowed_special": (),
    }
    assert tokenizer.encode_batch(texts, num_processes=2, **allow) == [
        tokenizer.encode(text, **allow) for text in texts
    ]
    assert tokenizer.encode_batch([]) == []


def test_batch_errors_are_clear(trained_tokenizer, monkeypatch, pool_spy):
    monkeypatch.setattr(batches, "BATCH_PARALLEL_CHARS", 0)
    with pytest.raises(DisallowedSpecialError, match="<pad>"):
        trained_tokenizer.encode_batch(["fine", "x<pad>"], allowed_special=set())
    with pytest.raises(TypeError, match="expects a list of strings, got str"):
        trained_tokenizer.encode_batch("one text")
    with pytest.raises(TypeError, match="text 1 is a bytes"):
        trained_tokenizer.encode_ordinary_batch(["a", b"b"])
    with pytest.raises(ValueError, match="num_processes must be at least 1"):
        trained_tokenizer.encode_batch(["a", "b"], num_processes=-1)
    assert pool_spy == []  # refused before any worker started


def test_even_slices_cover_every_text_once():
    for sizes in ([], [0], [1] * 10, [100, 1, 1, 1], [1, 1, 1, 100], [0, 0, 5, 0]):
        for parts in (1, 2, 3, 8):
            slices = batches.even_slices(sizes, parts)
            assert [i for start, end in slices for i in range(start, end)] == list(
                range(len(sizes))
            )
            assert len(slices) <= max(parts, 1)


#: A batch big enough to keep two workers busy for a while, then a report of how it ended.
BATCH_CHILD = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job starts ignoring it
from bpe_course import Tokenizer
from bpe_course.speed import batches
from bpe_course.utf8 import byte_vocab
batches.BATCH_PARALLEL_CHARS = 0
texts = ["the quick brown fox jumps over the lazy dog " * 200] * 4000
try:
    Tokenizer(byte_vocab(), []).encode_batch(texts, num_processes=2)
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
"""


#: Prepended to BATCH_CHILD: each worker waits a second before it starts ignoring Ctrl-C, so
#: a Ctrl-C sent once both exist surely lands between a worker's fork and its initializer.
SLOW_WORKER_START = """
import time
from bpe_course.speed import batches
ignore_now = batches.worker_ignores_ctrl_c
def ignore_later():
    time.sleep(1)
    ignore_now()
batches.worker_ignores_ctrl_c = ignore_later
"""


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("slow_start", [False, True], ids=["started", "before-initializer"])
def test_ctrl_c_during_a_parallel_batch_stops_every_worker(slow_start):
    # Its own process group, so that the signal goes to every process in it, as Ctrl-C in a
    # terminal does: the workers must ignore it and leave stopping to the main process, even
    # a worker that is forked but has not yet run its initializer (SLOW_WORKER_START).
    script = (SLOW_WORKER_START if slow_start else "") + BATCH_CHILD
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    workers: list[str] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
        listing = subprocess.run(["pgrep", "-P", str(child.pid)], capture_output=True, text=True)
        workers = listing.stdout.split()
    assert len(workers) == 2, "the batch never started its two workers"
    os.killpg(child.pid, signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert out.decode().strip() == "interrupted"
    assert err.decode() == ""  # no traceback from the workers either
    time.sleep(0.5)
    assert all(not os.path.exists(f"/proc/{pid}") for pid in workers)


# The same ids as tiktoken's batches ---------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("parallel", [False, True])
def test_batches_match_tiktoken(openai_pairs, name, parallel, monkeypatch):
    ours, theirs = openai_pairs[name]
    if parallel:
        monkeypatch.setattr(batches, "BATCH_PARALLEL_CHARS", 0)
    texts = HAND_PICKED[:40]
    assert ours.encode_ordinary_batch(texts, num_threads=2) == theirs.encode_ordinary_batch(
        texts, num_threads=2
    )
    assert ours.encode_batch(texts, num_threads=2) == theirs.encode_batch(
        texts, num_threads=2, allowed_special="all"
    )
    plain = {"allowed_special": set(), "disallowed_special": ()}
    assert ours.encode_batch(texts, **plain) == theirs.encode_batch(texts, **plain)
    refused = outcome(theirs.encode_batch, texts, allowed_special=set())
    assert outcome(ours.encode_batch, texts, allowed_special=set()) == refused


# How a batch is shared out ------------------------------------------------------------------


@given(
    sizes=st.lists(st.integers(0, 5) | st.integers(0, 1000), max_size=40),
    parts=st.integers(1, 12),
)
@example(sizes=[1, 1, 1, 1], parts=2)  # reaches its share exactly: cut there, not one later
def test_even_slices_cut_where_the_running_total_first_reaches_each_share(sizes, parts):
    slices = batches.even_slices(sizes, parts)
    assert [start for start, _ in slices] == [0, *[end for _, end in slices[:-1]]]
    assert slices[-1][1] == len(sizes) and len(slices) <= parts
    total, running = sum(sizes), 0
    for k, (start, end) in enumerate(slices[:-1], 1):
        before_last = running + sum(sizes[start : end - 1])
        running += sum(sizes[start:end])
        assert k * total <= running * parts  # the k-th run reaches k shares ...
        if end - start > 1:
            assert before_last * parts < k * total  # ... and ends as soon as it does


@given(lists=st.lists(st.lists(st.integers(0, 2**63 - 1), max_size=20), max_size=10))
def test_packed_ids_unpack_to_the_same_lists(lists):
    data, lengths = batches.pack_ids(lists)
    assert len(data) == 8 * sum(lengths)
    assert batches.unpack_ids(data, lengths) == lists


def test_only_a_big_batch_of_several_texts_goes_to_workers(monkeypatch):
    monkeypatch.setattr(batches, "BATCH_PARALLEL_CHARS", 100)
    big = ["x" * 60, "y" * 60, "z"]
    assert batches.batch_workers(big, 2) == 2
    assert batches.batch_workers(big, 8) == 3  # no more workers than texts
    assert batches.batch_workers(big, 1) == 1
    assert batches.batch_workers(["x" * 60, "y" * 39], 2) == 1  # 99 characters: too small
    assert batches.batch_workers(["x" * 500], 2) == 1  # one text: nothing to share
    monkeypatch.setattr(batches.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert batches.batch_workers(big, 2) == 1  # without fork, every batch stays here
