"""Long pretokens: a run of one letter, of spaces or of digits is one pretoken, however long.

The adversarial tester's file of 10 MB of one letter took 91 s and 918 MB to train, and 200 MB
ended in a MemoryError. These tests pin down the causes without timing anything: the merge
loop did Python work, and held a string, for every merged spot of a word; the heap key of
each new token was built a Python step per byte; the search for safe cuts read a run with a
regular expression that costs hundreds of nanoseconds a character; writing the files spelt
and rebuilt each token a Python step per byte. Each is measured here by what it does (lines
of Python run, memory traced, characters handed to the slow regex), which does not depend on
how busy the machine is. The rest checks that the long-word path learns exactly the naive
trainer's merges, and that a pretoken too long to train on is refused by name, or cut when
asked.
"""

from __future__ import annotations

import random
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import add
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from strategies import nasty_text

from bpe_course import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    O200K_PATTERN,
    train_bpe,
    train_bpe_naive,
    train_from_counts,
    train_from_counts_naive,
)
from bpe_course import train as train_module
from bpe_course.app.cli import main as cli_main
from bpe_course.formats import ranks as ranks_module
from bpe_course.formats.gpt2 import token_to_str
from bpe_course.formats.ranks import RunJoiner, _join_below, merges_from_ranks
from bpe_course.speed import counting as chunks
from bpe_course.speed import sharing, wordtable
from bpe_course.speed.counting import count_file_pretokens
from bpe_course.speed.cuts import (
    CLASS_RUN,
    SAFE_CUTS,
    rule_cuts,
    safe_cut_regex,
    spans_between_safe_cuts,
)
from bpe_course.speed.wordtable import (
    LongPretokenError,
    WordTable,
    bound_pretokens,
    count_pairs,
    count_pairs_as_bytes,
    counted_neighbours,
    cut_pretoken,
    distinct_chars,
    split_neighbours,
)
from bpe_course.train import PairHeap, descending_key, heap_key

PATTERNS = [GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN]

#: The four shapes of the defect report (one letter, one repeated pair, spaces, digits), as
#: one word of 2**20 characters each; the digits vary, so that merges are not all runs.
MEGA = 2**20
SHAPES = {
    "one letter": "a" * MEGA,
    "a repeated pair": "ab" * (MEGA // 2),
    "spaces": " " * MEGA,
    "random digits": "".join(random.Random(0).choice("0123456789") for _ in range(MEGA)),
}


# What the merge loop does per spot: Python calls and memory --------------------------------


def python_steps(call: Callable[[], Any]) -> int:
    """How many lines of this package's Python ``call()`` runs (each turn of a loop counts).

    Work that C does for Python (``str.replace``, ``str.count``, a ``Counter`` fed by
    ``map``) is one step, however long the string: that is the cheap kind. A Python loop
    over a word's spots, pairs or bytes is at least a step per spot, pair or byte.
    """
    steps = 0
    package = str(Path(wordtable.__file__).parent)

    def trace(frame: Any, event: str, arg: object) -> Callable[..., Any] | None:
        nonlocal steps
        if not frame.f_code.co_filename.startswith(package):
            return None  # the standard library's lines (a first import, say) are not ours
        steps += event == "line"
        return trace

    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(None)
    return steps


@pytest.mark.parametrize("shape", SHAPES)
def test_training_on_one_long_pretoken_takes_no_python_step_per_spot_or_byte(shape):
    # Before: the table was built a Python step per pair, pairs_changed_by took a few steps
    # per merged spot (half a million in the first merge of a run), and descending_key one
    # per byte of each new token (megabytes for a run's last tokens): millions of steps.
    word = SHAPES[shape]
    assert python_steps(lambda: train_from_counts({word: 1}, 300)) < 30_000


@contextmanager
def traced() -> Iterator[Callable[[], int]]:
    """Trace allocations; yields a function that gives the peak so far, in bytes."""
    tracemalloc.start()
    try:
        yield lambda: tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "word, pair",
    [
        ("a" * MEGA, "aa"),  # half a million spots side by side: counted with str.count
        ("ab" * (MEGA // 2), "ab"),
        # a third of a million spots among 200 different characters: split a slice at a time
        ("".join(f"ab{chr(300 + index % 200)}" for index in range(MEGA // 3)), "ab"),
    ],
)
def test_merging_a_long_word_holds_no_object_per_spot(word, pair):
    # Before: the lists of lost and gained pairs held two 2-character strings per spot, about
    # 60 bytes each: 60 MB here, and a MemoryError on 200 MB of one letter.
    table = WordTable([(word.encode("utf-8"), 1)])
    with traced() as peak:
        table.merge(pair, chr(1000))
        # The merged word (two bytes a character now), and a few slices of it at most.
        assert peak() < 4 * len(word) + 2 * MEGA


@pytest.mark.parametrize("shape", SHAPES)
def test_building_the_table_of_a_long_word_takes_no_python_step_per_pair(shape):
    data = SHAPES[shape].encode()
    tables = []
    assert python_steps(lambda: tables.append(WordTable([(data, 3)]))) < 200
    assert tables[0].pair_counts == {pair: 3 * n for pair, n in all_pairs(SHAPES[shape]).items()}
    assert tables[0].pair_words == {pair: [0] for pair in all_pairs(SHAPES[shape])}


# The long-word path learns the naive trainer's merges -------------------------------------


def all_pairs(word: str) -> Counter[str]:
    return Counter(map(add, word, word[1:]))


runs = st.builds(lambda char, length: char * length, st.sampled_from("ab é"), st.integers(1, 60))
repeats = st.builds(
    lambda unit, times: unit * times,
    st.text(st.sampled_from("abc"), min_size=1, max_size=4),
    st.integers(1, 30),
)
mixed_runs = st.lists(runs | repeats, min_size=1, max_size=5).map("".join)
long_words = st.dictionaries(
    runs | repeats | mixed_runs,
    st.integers(1, 3) | st.integers(2**62, 2**64),
    min_size=1,
    max_size=5,
)


@given(
    counts=long_words,
    extra_merges=st.integers(0, 50),
    long_word=st.sampled_from([2, 3, 8]),
    slice_chars=st.sampled_from([1, 2, 5, 1 << 18]),
    spot_ns=st.sampled_from([0, 250, 10**9]),  # always split, the real model, always count
    few_chars=st.sampled_from([0, 6, 1000]),  # how a long word's pairs are first counted
)
def test_fast_trainer_equals_naive_on_long_runs_repeated_pairs_and_mixed_runs(
    counts, extra_merges, long_word, slice_chars, spot_ns, few_chars
):
    vocab_size = 257 + extra_merges
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wordtable, "LONG_WORD", long_word)  # short words take the long path too
        patch.setattr(wordtable, "SLICE_CHARS", slice_chars)
        patch.setattr(wordtable, "SPOT_NS", spot_ns)
        patch.setattr(wordtable, "FEW_CHARS", few_chars)
        fast = train_from_counts(counts, vocab_size)
    assert fast == train_from_counts_naive(counts, vocab_size)


@pytest.mark.parametrize("processes", [1, 2])
def test_train_bpe_equals_naive_on_runs_longer_than_a_long_word(tmp_path, monkeypatch, processes):
    # Real sizes: runs of 256 to 3,000 characters among ordinary words, once in one process
    # and once shared with a helper process (which hands its long words over at the end).
    monkeypatch.setattr(sharing, "SHARE_WORDS", 1)
    rng = random.Random(7)
    pieces = []
    for _ in range(40):
        kind = rng.randrange(4)
        length = rng.randint(256, 3000)
        if kind == 0:
            pieces.append(rng.choice("ab7") * length)
        elif kind == 1:
            pieces.append("ab" * (length // 2))
        elif kind == 2:
            pieces.append("".join(rng.choice("abcde") for _ in range(length)))
        else:
            pieces.append(rng.choice(["the cat", "a dog", "12 34"]))
    corpus = tmp_path / "runs.txt"
    corpus.write_text(" ".join(pieces) + " " * 500, encoding="utf-8")
    fast = train_bpe(corpus, 330, num_processes=processes)
    assert fast == train_bpe_naive(corpus, 330, num_processes=1)


@given(
    merged=st.text(st.sampled_from("abcN"), max_size=40),
    slice_chars=st.sampled_from([1, 2, 3, 7, 1 << 18]),
)
def test_counting_and_splitting_find_the_same_neighbours(merged, slice_chars):
    spots = merged.count("N")
    # Every N's neighbours, read off one position at a time.
    before = Counter(merged[i - 1] for i in range(1, len(merged)) if merged[i] == "N")
    after = Counter(merged[i + 1] for i in range(len(merged) - 1) if merged[i] == "N")
    side_by_side = before.pop("N", 0)
    del after["N"]
    counted = counted_neighbours(merged, "N", spots, set(merged))
    assert counted == (dict(before), dict(after), side_by_side)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wordtable, "SLICE_CHARS", slice_chars)
        split = split_neighbours(merged, "N")
    assert (dict(split[0]), dict(split[1]), split[2]) == counted


@given(word=st.text(st.sampled_from("aab\u0100\U0001f600"), min_size=2, max_size=60),
       few_chars=st.sampled_from([0, 2, 6]))
def test_count_pairs_counts_as_bpe_does(word, few_chars):
    # "aaaa" holds "aa" three times: every adjacent position counts, as in naive.get_pair_counts.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wordtable, "FEW_CHARS", few_chars)
        assert dict(count_pairs(word)) == dict(all_pairs(word))


@given(alphabet=st.lists(st.characters(max_codepoint=0x101), min_size=1, max_size=18, unique=True),
       data=st.data())
def test_count_pairs_as_bytes_counts_as_bpe_does(alphabet, data):
    # One byte per pair, for words of one-byte characters with at most 16 different ones.
    word = data.draw(st.text(st.sampled_from(alphabet), max_size=60))
    counted = count_pairs_as_bytes(word)
    if len(set(word)) <= 16 and len(word) >= 2 and max(word) <= "\xff":
        assert counted == dict(all_pairs(word))
    else:
        assert counted is None


@given(text=st.text(st.sampled_from("abc\u0100"), max_size=30), limit=st.integers(0, 5))
def test_distinct_chars_gives_up_past_its_limit(text, limit):
    found = distinct_chars(text, limit)
    if len(set(text)) > limit:
        assert found is None
    else:
        assert found is not None and sorted(found) == sorted(set(text))


def test_the_heap_key_of_a_new_token_is_the_key_of_its_bytes():
    # The key is now glued from the keys of the two tokens merged: the same bytes.
    vocab = {index: bytes([index]) for index in range(256)}
    heap = PairHeap({}, vocab)
    for left, right in [(97, 98), (256, 97), (257, 256), (0, 255), (259, 0)]:
        vocab[len(vocab)] = vocab[left] + vocab[right]
        heap.push_new_pairs([], chr(left) + chr(right))
    assert heap.keys == [heap_key(vocab[index]) for index in range(len(vocab))]


@given(tokens=st.lists(st.binary(min_size=1, max_size=6), min_size=4, max_size=4))
def test_heap_keys_sort_pairs_as_descending_keys_do(tokens):
    # One byte per byte (0 takes two) instead of a two-byte character: the same order, for
    # single tokens and for pairs compared as tuples, which is all the heap compares.
    by_bytes = [heap_key(token) for token in tokens]
    by_chars = [descending_key(token) for token in tokens]
    assert (by_bytes[:2] < by_bytes[2:]) == (by_chars[:2] < by_chars[2:])
    assert (by_bytes[:2] == by_bytes[2:]) == (by_chars[:2] == by_chars[2:])
    assert (heap_key(tokens[0]) < heap_key(tokens[1])) == (tokens[0] > tokens[1])


# Counting a long run: the search for safe cuts ----------------------------------------------


class CountingRule:
    """A cut-rule regex that counts the characters it is asked to search."""

    def __init__(self, rule: regex.Pattern[str]) -> None:
        self.rule, self.read = rule, 0

    def _span(self, text: str, pos: int | None = None, endpos: int | None = None) -> int:
        return (len(text) if endpos is None else min(endpos, len(text))) - (pos or 0)

    def search(self, text: str, *args: Any) -> Any:
        self.read += self._span(text, *args)
        return self.rule.search(text, *args)

    def finditer(self, text: str, *args: Any) -> Any:
        self.read += self._span(text, *args)
        return self.rule.finditer(text, *args)

    def match(self, text: str, *args: Any) -> Any:
        self.read += 1  # a zero-width match looks at one character on each side
        return self.rule.match(text, *args)


@pytest.mark.parametrize("run", ["a", "ab", " ", "7", "é", "中"])
def test_the_cut_search_reads_a_long_run_only_at_its_ends(tmp_path, monkeypatch, run):
    # Before: the cut rules read every character of the run, twice (once to cut the file
    # into chunks, once to cut a chunk into spans), at about 0.3 µs each: 10 MB of one
    # letter spent 14 s counting. A run of one class holds no cut, so only its ends are read.
    rule = CountingRule(safe_cut_regex(GPT2_PATTERN))
    monkeypatch.setattr(chunks, "safe_cut_regex", lambda pattern: rule)
    text = run * (MEGA // len(run)) + " tail"
    corpus = tmp_path / "run.txt"
    corpus.write_text(text, encoding="utf-8")
    with pytest.warns(chunks.LongChunkWarning):
        counts = count_file_pretokens(
            [str(corpus)], num_processes=1, chunk_bytes=chunks.MIN_CHUNK_BYTES
        )
    assert counts == Counter({run * (MEGA // len(run)): 1, " tail": 1})
    assert rule.read < 1000


@given(text=nasty_text, pattern=st.sampled_from(PATTERNS), data=st.data())
def test_rule_cuts_are_the_rule_regex_matches(text, pattern, data):
    rule = safe_cut_regex(pattern)
    pos = data.draw(st.integers(0, len(text)))
    endpos = data.draw(st.integers(pos, len(text)))
    expected = [match.start() for match in rule.finditer(text, pos, endpos)]
    assert list(rule_cuts(text, rule, pos, endpos)) == expected


@given(pair=st.lists(st.characters(codec="utf-8"), min_size=2, max_size=2).map("".join))
def test_no_cut_rule_cuts_between_two_characters_of_one_class(pair):
    # What rule_cuts relies on: within a run of CLASS_RUN, no rule of any pattern allows a cut.
    if CLASS_RUN.fullmatch(pair):
        for rules in SAFE_CUTS.values():
            for rule in rules:
                assert not regex.fullmatch(f"(?:{rule.before})(?:{rule.after})", pair), rule.name


def test_spans_of_a_long_run_are_found_without_reading_it_all():
    rule = CountingRule(safe_cut_regex(GPT2_PATTERN))
    text = "x " + "a" * MEGA + " y"
    assert list(spans_between_safe_cuts(text, rule, 1000)) == [(0, MEGA + 2), (MEGA + 2, MEGA + 4)]
    assert rule.read < 100


# A pretoken too long to train on ----------------------------------------------------------


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_pretoken_over_the_limit_is_refused_by_name_before_training(
    tmp_path, monkeypatch, capsys
):
    # Before: 200 MB of one letter trained until a bare MemoryError (after 397 s). Now the
    # longest pretoken is named as soon as the corpus is counted, with the option that bounds it.
    monkeypatch.setattr(wordtable, "MAX_PRETOKEN_BYTES", 1000)
    monkeypatch.setattr(train_module, "train_from_counts", pytest.fail)  # never reached
    corpus = tmp_path / "run.txt"
    corpus.write_text("a few words and\n" + "z" * 5000, encoding="utf-8")
    with pytest.raises(LongPretokenError, match="5,000 bytes .'zzzz.*max_pretoken_bytes=N"):
        train_bpe(corpus, 300)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(
        ["train", str(corpus), "--vocab-size", "300", "--out", "o", "--quiet"], capsys
    )
    assert code == 1 and out == ""
    assert "longest pretoken is 5,000 bytes ('zzzz" in err and "--max-pretoken-bytes N" in err
    assert "max_pretoken_bytes=" not in err  # the Python argument means nothing in a shell
    assert err.endswith("\n") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_max_pretoken_bytes_cuts_long_pretokens_at_character_starts(tmp_path, capsys):
    corpus = tmp_path / "runs.txt"
    corpus.write_text("a" * 1000 + "\n" + "é" * 300 + "\nhello", encoding="utf-8")
    vocab, merges = train_bpe(corpus, 300, max_pretoken_bytes=7)
    expected = Counter({b"aaaaaaa": 142, b"aaaaaa": 1, "\n": 2, "hello": 1})
    expected.update({"é".encode() * 3: 100})  # 7 bytes would split an é: 6 bytes a piece
    assert (vocab, merges) == train_from_counts_naive(expected, 300)
    assert (vocab, merges) == train_bpe_naive(corpus, 300, max_pretoken_bytes=7)
    code, out, _ = run_cli(["train", str(corpus), "--vocab-size", "300", "--quiet",
                            "--max-pretoken-bytes", "7", "--out", str(tmp_path / "o")], capsys)
    assert code == 0 and out.startswith(f"learned {len(merges)} merges")


@pytest.mark.parametrize("bound", [0, 3, -1])
def test_max_pretoken_bytes_is_checked_before_the_corpus_is_read(tmp_path, capsys, bound):
    with pytest.raises(ValueError, match="max_pretoken_bytes must be at least 4"):
        train_bpe(tmp_path / "missing.txt", 300, max_pretoken_bytes=bound)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("some text", encoding="utf-8")
    code, _, err = run_cli(["train", str(corpus), "--vocab-size", "300", "--max-pretoken-bytes",
                            str(bound), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "--max-pretoken-bytes: max_pretoken_bytes must be at least 4" in err


@given(text=st.text(st.characters(codec="utf-8"), max_size=40), size=st.integers(4, 12))
def test_cut_pretoken_splits_no_character(text, size):
    data = text.encode("utf-8")
    pieces = list(cut_pretoken(data, size))
    assert b"".join(pieces) == data
    assert all(len(piece) <= size for piece in pieces)
    assert "".join(piece.decode("utf-8") for piece in pieces) == text


def test_bound_pretokens_keeps_counts_at_or_under_the_limit_as_they_are():
    counts = Counter({"a" * 40: 2, "b": 1})
    assert bound_pretokens(counts, None) is counts
    assert bound_pretokens(counts, 40) is counts
    assert bound_pretokens(counts, 39) == Counter({b"a" * 39: 2, b"a": 2, "b": 1})


def test_the_limit_counts_bytes_not_characters(monkeypatch):
    monkeypatch.setattr(wordtable, "MAX_PRETOKEN_BYTES", 10)
    assert bound_pretokens({"é" * 5: 1}, None) == {"é" * 5: 1}  # 10 bytes: allowed
    with pytest.raises(LongPretokenError, match="12 bytes"):
        bound_pretokens({"é" * 6: 1}, None)


def test_merges_of_a_cut_run_stay_within_the_bound(tmp_path: Path):
    corpus = tmp_path / "run.txt"
    corpus.write_text("a" * 100_000, encoding="utf-8")
    vocab, _ = train_bpe(corpus, 400, max_pretoken_bytes=1000)
    assert max(map(len, vocab.values())) == 1000


# Writing the files of a vocabulary learned from a long run ----------------------------------


@pytest.fixture(scope="module")
def learned_from_a_run() -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """The vocabulary of one pretoken of 2**20 + 2**19 + 5 a's: tokens of up to a megabyte."""
    return train_from_counts({"a" * (MEGA + MEGA // 2 + 5): 1}, 300)


def test_rank_tables_of_long_runs_are_read_with_no_python_step_per_byte(learned_from_a_run):
    # Before: merges_from_ranks rebuilt each long token a Python step per byte (the tiktoken
    # export checks the rank table that way): bpe-course train on 10 MB of one letter spent
    # minutes writing tokenizer.tiktoken after training in a second.
    vocab, merges = learned_from_a_run
    ranks = {token: token_id for token_id, token in vocab.items()}
    found = []
    assert python_steps(lambda: found.append(merges_from_ranks(ranks))) < 100_000
    assert found[0] == merges


def test_writing_a_long_token_takes_no_python_step_per_byte(learned_from_a_run):
    vocab, _ = learned_from_a_run
    longest = max(vocab.values(), key=len)
    token_to_str(b"")  # its table is built on the first call
    spelled = []
    assert python_steps(lambda: spelled.append(token_to_str(longest + b" \n"))) < 10
    assert spelled[0] == "a" * len(longest) + "ĠĊ"


@pytest.mark.parametrize("glue_bytes", [0, 4096])
@pytest.mark.parametrize("few_parts", [1, 3, 16])
@given(data=st.data())
def test_run_joiner_rebuilds_tokens_as_join_below(glue_bytes, few_parts, data):
    # Random tables over "abc" in any order, readable or not: where the string path answers,
    # it gives _join_below's parts; where it gives up (varied parts, a lower rank made
    # beside a join), merges_from_ranks uses _join_below itself.
    ranks = {bytes([byte]): byte for byte in range(256)}
    tokens = [b"a", b"b", b"c"]
    for _ in range(data.draw(st.integers(0, 25))):
        token = data.draw(st.sampled_from(tokens)) + data.draw(st.sampled_from(tokens))
        if token not in ranks:
            ranks[token] = len(ranks)
            tokens.append(token)
    text = data.draw(st.sampled_from(tokens)) * data.draw(st.integers(1, 20))
    text += data.draw(st.text(st.sampled_from("abc"), max_size=20)).encode()
    limit = data.draw(st.integers(256, len(ranks)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranks_module, "GLUE_BYTES", glue_bytes)
        patch.setattr(ranks_module, "FEW_PARTS", few_parts)
        parts = RunJoiner(ranks).join_below(text, limit)
    if parts is not None:
        assert parts == _join_below(text, limit, ranks)
