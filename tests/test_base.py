"""What every lesson shares: the starting vocabulary, how many merges fit, and the checks that
refuse a bad argument the same way in every trainer and in the tokenizer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_course import Tokenizer
from bpe_course.base import (
    BPETables,
    check_int,
    check_special_tokens,
    checked_ids,
    checked_texts,
    first_difference,
    initial_vocab,
    merges_to_learn,
    word_bytes,
)
from bpe_course.utf8 import byte_vocab

# The starting vocabulary and how many merges fit ---------------------------------------------


def test_initial_vocab_is_the_bytes_then_the_special_tokens():
    vocab = initial_vocab(["<|endoftext|>", "<pad>"])
    assert len(vocab) == 258
    assert all(vocab[i] == bytes([i]) for i in range(256))
    assert vocab[256] == b"<|endoftext|>"
    assert vocab[257] == b"<pad>"


def test_merges_to_learn():
    assert merges_to_learn(256, []) == 0
    assert merges_to_learn(500, ["<|endoftext|>"]) == 243


def test_check_special_tokens_accepts_none_and_iterables():
    assert check_special_tokens(None) == []
    assert check_special_tokens(iter(["<a>", "<b>"])) == ["<a>", "<b>"]


# What training is given ------------------------------------------------------------------------


def test_word_bytes_keeps_what_occurs_as_bytes():
    counts = {"low": 5, "gone": 0, b"\xff\xfe": 2, "a\ud83d": 1, "a\ud83d\ude00": 3}
    assert word_bytes(counts) == [
        (b"low", 5),
        (b"\xff\xfe", 2),  # bytes need not be UTF-8
        ("a\ufffd".encode(), 1),  # a lone surrogate, as the tokenizer reads it
        ("a😀".encode(), 3),
    ]


@pytest.mark.parametrize("count", [1.0, True, "3", None])
def test_word_bytes_wants_whole_counts(count):
    with pytest.raises(TypeError, match="the count of 'low' must be an int"):
        word_bytes({"low": count})


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (True, TypeError, "max_bytes must be an int, got True"),
        (2.0, TypeError, "max_bytes must be an int, got 2.0"),
        (-1, ValueError, "max_bytes must be >= 0, got -1"),
    ],
)
def test_check_int_names_the_argument(value, error, message):
    with pytest.raises(error, match=message):
        check_int(value, "max_bytes")
    assert check_int(np.int64(7).item(), "max_bytes") == 7
    assert check_int(1, "num_processes", minimum=1) == 1


@given(
    left=st.lists(st.integers(0, 3), max_size=8), right=st.lists(st.integers(0, 3), max_size=8)
)
def test_first_difference_is_where_two_sequences_part(left, right):
    index = first_difference(left, right)
    if left == right:
        assert index is None
    else:
        assert left[:index] == right[:index]
        assert index == min(len(left), len(right)) or left[index] != right[index]


# What encode and decode are given ------------------------------------------------------------


def test_a_batch_is_any_iterable_of_strings_but_not_one_string():
    assert checked_texts(iter(["a", "b"]), "encode_batch") == ["a", "b"]
    with pytest.raises(TypeError, match="encode_batch expects a list of strings, got str"):
        checked_texts("ab", "encode_batch")
    with pytest.raises(TypeError, match="encode_batch: text 1 is a bytes, not a str"):
        checked_texts(["a", b"b"], "encode_batch")


def test_ids_of_any_integer_type_become_python_ints():
    ids = [1, 2, 3]
    assert checked_ids(ids) is ids  # plain ints: no copy
    converted = checked_ids(np.array([15496, 995], dtype=np.uint16))
    assert converted == [15496, 995] and {type(i) for i in converted} == {int}
    assert checked_ids(range(3)) == [0, 1, 2]
    with pytest.raises(TypeError, match="expected a sequence of token ids, got bytes"):
        checked_ids(b"\x01\x02")


def test_a_tokenizer_has_the_four_tables_files_and_exports_need():
    tokenizer = Tokenizer(byte_vocab(), [], ["<s>"])
    assert isinstance(tokenizer, BPETables)
    assert not isinstance(object(), BPETables)
