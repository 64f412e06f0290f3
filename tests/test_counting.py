"""Counting a corpus file in chunks: where the chunks are cut, and that the counts never depend
on the cuts, the executor or the memory of a worker (the cut rules themselves: test_cuts.py)."""

from __future__ import annotations

import pickle
import threading
import tracemalloc
import warnings
from collections import Counter
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import CUT_FRAGMENTS, corpora, cut_text_with_specials

from bpe_course.base import ENDOFTEXT
from bpe_course.pretokens import GPT2_PATTERN, GPT4_PATTERN, count_pretokens
from bpe_course.pretokens import NAMED_PATTERNS as PATTERNS
from bpe_course.safety.interrupts import worker_ignores_ctrl_c
from bpe_course.speed import counting
from bpe_course.speed.counting import (
    LongChunkWarning,
    count_chunk,
    count_file_pretokens,
    count_text_pretokens,
    find_chunk_boundaries,
)
from bpe_course.train import train_bpe


def write(tmp_path: Path, text: str, name: str = "corpus.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# Cuts in a file ----------------------------------------------------------------------------


def test_cuts_fall_at_the_start_of_special_tokens_when_one_is_near(tmp_path):
    text = "".join(f"document {i} is here.{ENDOFTEXT}" for i in range(50))
    path = write(tmp_path, text)
    data = path.read_bytes()
    bounds = find_chunk_boundaries(path, 200, [ENDOFTEXT])  # one within 50 bytes
    assert bounds[0] == 0 and bounds[-1] == len(data)
    assert bounds == sorted(set(bounds))
    assert len(bounds) > 5
    assert all(data[cut:].startswith(ENDOFTEXT.encode()) for cut in bounds[1:-1])


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize(
    ("shape", "text", "special_tokens"),
    [
        # Each gave one or two chunks before the cut rules: one special token in CRLF text,
        # lines that start and end in non-ASCII letters, text without a line break.
        ("crlf", "def f(x):\r\n    return x + 1\r\n" * 200 + ENDOFTEXT + "y = 2\r\n" * 500,
         [ENDOFTEXT]),
        ("non-ascii lines", "Жили были дед и баба\nи была у них курочка ряба\n" * 200, []),
        ("no line break", "the quick brown fox jumps over the lazy dog, " * 200, []),
    ],
)
def test_corpora_with_few_easy_cuts_get_many_chunks(tmp_path, name, shape, text, special_tokens):
    path = write(tmp_path, text)
    bounds = find_chunk_boundaries(path, 1000, special_tokens, PATTERNS[name])
    assert len(bounds) > len(text.encode()) // 2000
    # a chunk ends at the first safe cut after 1000 bytes, or at a special token up to 250
    # bytes further
    assert max(end - start for start, end in zip(bounds, bounds[1:])) <= 1250
    counts = count_file_pretokens(
        [str(path)], special_tokens, PATTERNS[name], num_processes=1, chunk_bytes=1000
    )
    assert counts == count_pretokens(text, special_tokens, PATTERNS[name])


@pytest.mark.parametrize("name", PATTERNS)
@given(
    text=cut_text_with_specials,
    special_tokens=st.sampled_from([[], [ENDOFTEXT], [ENDOFTEXT, "<s>"]]),
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_chunked_counts_equal_whole_counts_on_adversarial_text(
    tmp_path, name, text, special_tokens
):
    path = write(tmp_path, text)
    whole = count_pretokens(text, special_tokens, PATTERNS[name])
    for chunk_bytes in (1, 2, 5, 13):
        counts = count_file_pretokens(
            [str(path)], special_tokens, PATTERNS[name], num_processes=1, chunk_bytes=chunk_bytes
        )
        assert counts == whole


@given(corpus=corpora(), pattern=st.sampled_from(list(PATTERNS.values())))
def test_chunked_counts_equal_counts_of_the_whole_text(tmp_path, corpus, pattern):
    special_tokens, text = corpus
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    for chunk_bytes in (1, 7, 50):
        counts = count_file_pretokens(
            [str(path)], special_tokens, pattern, num_processes=1, chunk_bytes=chunk_bytes
        )
        assert counts == count_pretokens(text, special_tokens, pattern)


#: Bytes that are not UTF-8: a lone continuation byte, characters cut short, a byte never
#: used, an encoded surrogate.
INVALID_UTF8 = [b"\x80", b"\xc3", b"\xe4\xbd", b"\xf0\x9f\x98", b"\xff", b"\xed\xa0\x80"]


@given(
    parts=st.lists(
        st.sampled_from(CUT_FRAGMENTS).map(str.encode)
        | st.sampled_from(INVALID_UTF8),
        max_size=30,
    ),
    name=st.sampled_from(list(PATTERNS)),
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_invalid_utf8_is_never_split_by_a_cut(tmp_path, parts, name):
    # A cut inside an invalid sequence would give two U+FFFD where the whole file gives one.
    data = b"".join(parts)
    path = tmp_path / "corpus.bin"
    path.write_bytes(data)
    whole = count_pretokens(data.decode("utf-8", "replace"), [], PATTERNS[name])
    for chunk_bytes in (1, 3):
        counts = count_file_pretokens(
            [str(path)], [], PATTERNS[name], num_processes=1, chunk_bytes=chunk_bytes,
            errors="replace",
        )
        assert counts == whole


@pytest.mark.parametrize("before_block_end", range(-3, len(ENDOFTEXT) + 1))
def test_a_special_token_across_a_read_block_is_found(tmp_path, before_block_end):
    # The search for a special token after byte 280,000 reads 64 KiB blocks from just before
    # it. A token that starts a few bytes before a block ends must be found whole; missed, the
    # cut would fall at the first space after byte 280,000 instead.
    chunk_bytes = 280_000
    block_end = chunk_bytes - len(ENDOFTEXT) + counting.SEARCH_BLOCK
    token_at = block_end - before_block_end
    text = ("a " * chunk_bytes)[:token_at] + ENDOFTEXT + "b " * 100
    path = write(tmp_path, text)
    assert find_chunk_boundaries(path, chunk_bytes, [ENDOFTEXT])[:2] == [0, token_at]


@pytest.mark.parametrize("before_block_end", range(-3, 8))
def test_a_character_across_a_read_block_is_decoded_whole(tmp_path, before_block_end):
    # A three-byte letter that a 64 KiB read cuts in two must still be read as a letter: the
    # first safe cut is after it, before the space. And a search that starts inside a
    # character (byte 10 of a run of them) finds the cut at the end of the run.
    chunk_bytes = 10
    block_end = chunk_bytes - counting.MAX_CHAR_BYTES + counting.SEARCH_BLOCK
    letter_at = block_end - before_block_end
    text = "a" * letter_at + "日 b"
    path = write(tmp_path, text)
    assert find_chunk_boundaries(path, chunk_bytes, []) == [0, letter_at + 3, letter_at + 5]
    path = write(tmp_path, "日" * 30_000 + " b")
    assert find_chunk_boundaries(path, 10, []) == [0, 90_000, 90_002]


def test_an_unknown_pattern_without_special_tokens_is_one_chunk(tmp_path):
    path = write(tmp_path, "a\nb\n" * 1000)
    assert find_chunk_boundaries(path, 10, [], r"\S+|\s+") == [0, 4000]


def test_no_cut_point_means_one_long_chunk(tmp_path):
    path = write(tmp_path, "x" * 1000)
    assert find_chunk_boundaries(path, 10, [ENDOFTEXT]) == [0, 1000]
    assert find_chunk_boundaries(path, 10, []) == [0, 1000]


def test_empty_file(tmp_path):
    path = write(tmp_path, "")
    assert find_chunk_boundaries(path, 10, [ENDOFTEXT]) == [0, 0]
    assert count_file_pretokens([str(path)], [ENDOFTEXT], chunk_bytes=10) == {}


def test_a_cut_is_never_inside_a_special_token(tmp_path):
    # "<|endoftext|>" has rule cuts inside ("t|" is a letter before a symbol).
    text = f"x{ENDOFTEXT}" * 200
    path = write(tmp_path, text)
    data = path.read_bytes()
    for chunk_bytes in range(1, 16):
        for cut in find_chunk_boundaries(path, chunk_bytes, [ENDOFTEXT])[1:-1]:
            assert data[cut - 1 : cut] in (b"x", b">")


@pytest.mark.parametrize("chunk_bytes", [1, 3, 10, 1000])
def test_parallel_counts_equal_counts_of_the_whole_text(
    tmp_path, monkeypatch, pool_spy, chunk_bytes
):
    monkeypatch.setattr(counting, "PARALLEL_THRESHOLD", 0)
    text = f"Hello,  world!\n\n  {ENDOFTEXT}{ENDOFTEXT}  中文 😀 123456\r\nend.\nnext " * 60
    path = write(tmp_path, text)
    for special_tokens in ([ENDOFTEXT], []):
        counts = count_file_pretokens(
            [str(path)], special_tokens, num_processes=2, chunk_bytes=chunk_bytes
        )
        assert counts == count_pretokens(text, special_tokens)
    assert pool_spy == [2, 2]


def test_several_files_are_counted_together(tmp_path):
    first = write(tmp_path, "one two", "a.txt")
    second = write(tmp_path, " two three", "b.txt")
    counts = count_file_pretokens([str(first), str(second)], num_processes=1)
    assert counts == {"one": 1, " two": 2, " three": 1}


def test_a_special_token_inside_a_longer_one_is_not_a_cut(tmp_path):
    special_tokens = [ENDOFTEXT, f"[{ENDOFTEXT}]"]
    text = f"a[{ENDOFTEXT}]b" * 3
    path = write(tmp_path, text)
    for chunk_bytes in (1, 2, 18, 19):
        counts = count_file_pretokens(
            [str(path)], special_tokens, chunk_bytes=chunk_bytes, num_processes=1
        )
        assert counts == count_pretokens(text, special_tokens)


# Stretches without a safe cut ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "special_tokens", "pattern", "why"),
    [
        ("7" * 5000, [ENDOFTEXT], GPT4_PATTERN, "no special token and no place"),
        ("a b\n" * 1250, [], r"\S+|\s+", "none were given"),
        ("a b\n" * 1250, [ENDOFTEXT], r"\S+|\s+", "only special tokens are safe cuts"),
    ],
)
def test_a_stretch_without_a_safe_cut_is_reported_once(
    tmp_path, monkeypatch, text, special_tokens, pattern, why
):
    monkeypatch.setattr(counting, "MIN_CHUNK_BYTES", 100)
    path = write(tmp_path, "x y " * 100 + text + " z" * 100)
    with pytest.warns(LongChunkWarning) as caught:
        counts = count_file_pretokens(
            [str(path)], special_tokens, pattern, num_processes=1, chunk_bytes=100
        )
    assert len(caught) == 1
    assert caught[0].filename == str(path)  # shown as "corpus.txt:0: LongChunkWarning: ..."
    assert why in str(caught[0].message)
    assert counts == count_pretokens(path.read_text(encoding="utf-8"), special_tokens, pattern)


def test_a_corpus_with_safe_cuts_is_not_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(counting, "MIN_CHUNK_BYTES", 100)
    path = write(tmp_path, "x y\r\n" * 2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongChunkWarning)
        count_file_pretokens([str(path)], [ENDOFTEXT], num_processes=1, chunk_bytes=100)


# Memory inside a worker ----------------------------------------------------------------------


@pytest.mark.parametrize("name", PATTERNS)
@given(text=cut_text_with_specials, special_tokens=st.sampled_from([[], [ENDOFTEXT]]))
def test_counting_text_in_spans_gives_the_counts_of_the_whole(
    monkeypatch, name, text, special_tokens
):
    monkeypatch.setattr(counting, "SPAN_CHARS", 3)
    counts = count_text_pretokens(text, special_tokens, PATTERNS[name])
    assert counts == count_pretokens(text, special_tokens, PATTERNS[name])


def test_a_chunk_without_special_tokens_is_counted_with_flat_memory(tmp_path):
    # Counting 1 MB of CRLF lines in one findall built a list of every piece (about 15 bytes
    # per byte of text); counted a span at a time, the peak is the bytes, the text and a little.
    text = "".join(f"line {i % 100}, with words\r\n" for i in range(50_000))
    path = write(tmp_path, text)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        counts = count_chunk(str(path), 0, size, [], GPT2_PATTERN, "strict")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts == count_pretokens(text)
    assert peak < 6 * size


# Executors: the map of the map-reduce elsewhere --------------------------------------------


class RecordingExecutor(Executor):
    """Runs tasks on threads and keeps the pickled size of what crosses each way."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(2)
        self.sent: list[int] = []
        self.returned: list[int] = []

    def submit(self, fn, /, *args, **kwargs):
        self.sent.append(len(pickle.dumps((fn, args, kwargs))))

        def run():
            result = fn(*args, **kwargs)
            self.returned.append(len(pickle.dumps(result)))
            return result

        return self.pool.submit(run)

    def shutdown(self, wait=True, *, cancel_futures=False):
        self.pool.shutdown(wait, cancel_futures=cancel_futures)


def test_any_executor_counts_and_only_offsets_cross(tmp_path):
    text = ("A line of ordinary text, with 12 numbers.\n" * 2000 + ENDOFTEXT) * 10
    path = write(tmp_path, text)
    executor = RecordingExecutor()
    with executor:
        counts = count_file_pretokens(
            [str(path)], [ENDOFTEXT], executor=executor, chunk_bytes=20_000
        )
    assert counts == count_pretokens(text, [ENDOFTEXT])
    assert len(executor.sent) > 20
    assert max(executor.sent) < 500  # a path and two offsets, never the 20 kB of text
    assert max(executor.returned) < 2000  # the chunk's counts: a few distinct pieces


def test_a_process_pool_executor_learns_the_same_merges(tmp_path, small_chunks, pool_spy):
    text = ("The cat sat on the mat.\r\nThe dog sat on the log!\r\n" * 300 + ENDOFTEXT) * 4
    path = write(tmp_path, text)
    small_chunks(3000)
    alone = train_bpe(path, 400, [ENDOFTEXT], num_processes=1)
    with ProcessPoolExecutor(2, initializer=worker_ignores_ctrl_c) as executor:
        assert train_bpe(path, 400, [ENDOFTEXT], executor=executor) == alone
        counts = count_file_pretokens([str(path)], [ENDOFTEXT], executor=executor)
    assert counts == count_pretokens(text, [ENDOFTEXT])
    assert pool_spy == []  # the executor did the work, no pool of our own


def test_an_executor_gets_absolute_paths(tmp_path, monkeypatch):
    write(tmp_path, "some text")
    monkeypatch.chdir(tmp_path)
    executor = RecordingExecutor()
    seen = []
    real_submit = executor.submit

    def submit(fn, task):
        seen.append(task[0])
        return real_submit(fn, task)

    monkeypatch.setattr(executor, "submit", submit)
    assert count_file_pretokens(["corpus.txt"], executor=executor) == {"some": 1, " text": 1}
    assert seen == [str(tmp_path / "corpus.txt")]


def test_stopping_early_cancels_the_tasks_not_started(tmp_path, monkeypatch):
    # The first chunk is interrupted; the one worker thread may start a second, which waits
    # until the test is over. Every other chunk must be cancelled, not run.
    path = write(tmp_path, "word " * 10_000)
    started = []
    test_over = threading.Event()

    def interrupted(path, start, end, *args):
        started.append(start)
        if len(started) == 1:
            raise KeyboardInterrupt
        test_over.wait()
        return Counter()

    monkeypatch.setattr(counting, "count_chunk", interrupted)
    with ThreadPoolExecutor(1) as executor:
        with pytest.raises(KeyboardInterrupt):
            count_file_pretokens([str(path)], executor=executor, chunk_bytes=1000)
        test_over.set()
        assert executor.submit(sum, [1, 2]).result() == 3  # the caller's executor stays up
    assert len(started) <= 2  # of 50 chunks


@pytest.mark.parametrize("executor", ["dask", 4, object()])
def test_an_executor_without_submit_is_refused_before_reading(tmp_path, executor):
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor"):
        train_bpe(tmp_path / "missing.txt", 300, executor=executor)

