"""The naive trainer and its two building blocks, ``get_pair_counts`` and ``merge``."""

from __future__ import annotations

import pytest

from bpe_course import get_pair_counts, merge, train_from_counts, train_from_counts_naive

#: The word counts of the textbook example (Sennrich et al.'s "low lower widest newest").
TEXTBOOK_COUNTS = {"low": 5, "lower": 2, "widest": 3, "newest": 6}

#: The merges that example learns first, with ties going to the greater pair of bytes:
#: ``(s, t)`` and ``(e, s)`` both occur 9 times, and ``"st" > "es"`` wins.
TEXTBOOK_MERGES = [
    (b"s", b"t"),
    (b"e", b"st"),
    (b"o", b"w"),
    (b"l", b"ow"),
    (b"w", b"est"),
    (b"n", b"e"),
]


def test_get_pair_counts_counts_adjacent_pairs():
    assert get_pair_counts([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}


def test_get_pair_counts_counts_overlapping_pairs():
    # (1, 1) occurs twice in [1, 1, 1]: counting does not care about overlaps, merging does.
    assert get_pair_counts([1, 1, 1]) == {(1, 1): 2}


def test_get_pair_counts_of_short_sequences_is_empty():
    assert get_pair_counts([]) == {}
    assert get_pair_counts([7]) == {}


def test_get_pair_counts_adds_weighted_counts_to_an_existing_table():
    counts = get_pair_counts([1, 2], weight=3)
    returned = get_pair_counts([1, 2, 5], counts, weight=2)
    assert returned is counts
    assert counts == {(1, 2): 5, (2, 5): 2}


@pytest.mark.parametrize(
    ("ids", "pair", "expected"),
    [
        ([1, 2, 3, 1, 2], (1, 2), [9, 3, 9]),
        ([1, 1, 1], (1, 1), [9, 1]),  # overlapping occurrences: left to right, once
        ([1, 1, 1, 1], (1, 1), [9, 9]),
        ([1, 2, 1, 2, 1], (2, 1), [1, 9, 9]),
        ([3, 4], (1, 2), [3, 4]),  # absent pair: unchanged
        ([], (1, 2), []),
        ([1], (1, 2), [1]),
        ([2, 1], (1, 2), [2, 1]),  # the order of a pair matters
    ],
)
def test_merge(ids, pair, expected):
    assert merge(ids, pair, 9) == expected


def test_merge_does_not_modify_its_input():
    ids = [1, 2, 1, 2]
    merge(ids, (1, 2), 9)
    assert ids == [1, 2, 1, 2]


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_textbook_example_first_merges(train):
    vocab, merges = train(TEXTBOOK_COUNTS, 256 + 6)
    assert merges == TEXTBOOK_MERGES
    # Each merge adds the concatenation of its pair under the next id.
    assert [vocab[256 + i] for i in range(6)] == [a + b for a, b in TEXTBOOK_MERGES]
    assert len(vocab) == 262


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_textbook_example_with_a_special_token_shifts_merge_ids(train):
    vocab, merges = train(TEXTBOOK_COUNTS, 256 + 1 + 6, ["<|endoftext|>"])
    assert merges == TEXTBOOK_MERGES
    assert vocab[256] == b"<|endoftext|>"
    assert vocab[257] == b"st"


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_training_stops_early_when_no_pair_is_left(train):
    # "ab" x 3 and "b": one merge is possible, however large the vocabulary may be.
    vocab, merges = train({"ab": 3, "b": 1}, 1000)
    assert merges == [(b"a", b"b")]
    assert len(vocab) == 257


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_bytes_and_str_keys_train_alike(train):
    as_bytes = {word.encode("utf-8"): count for word, count in TEXTBOOK_COUNTS.items()}
    assert train(as_bytes, 270) == train(TEXTBOOK_COUNTS, 270)


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_words_with_zero_count_are_ignored(train):
    assert train({"ab": 0, "cd": 1}, 300)[1] == [(b"c", b"d")]


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_ties_go_to_the_greater_pair_of_bytes(train):
    # Every pair occurs once; (b"c", b"d") is the greatest, then ("b", "cd"), ...
    _, merges = train({"abcd": 1}, 259)
    assert merges == [(b"c", b"d"), (b"b", b"cd"), (b"a", b"bcd")]


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_multibyte_characters_are_merged_byte_by_byte(train):
    # "é" is two bytes, so its first merge joins them before anything else can use them.
    _, merges = train({"é": 5}, 300)
    assert merges == [(b"\xc3", b"\xa9")]
