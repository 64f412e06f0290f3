"""Merging inside one pretoken: both loops equal the reference, at any length and merge order.

The merge lists here are made up, not learned: random pairs of tokens over a three-letter
alphabet, often listed out of order (a merge that uses a token before the merge that makes
it), sometimes making one token twice. Learned merges never do that, but a hand-made
vocabulary can, and the rule (:func:`bpe_course.naive.encode_naive`) still says what the
answer is.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from bpe_course.formats import ranks as ranks_module
from bpe_course.formats.ranks import merges_from_ranks
from bpe_course.naive import encode_naive
from bpe_course.openai import load_tiktoken_file
from bpe_course.pretokens import GPT2_PATTERN
from bpe_course.speed import merging
from bpe_course.speed.merging import (
    SHORT_PIECE,
    apply_merges,
    merge_long,
    merge_short,
    reachable_tokens,
)
from bpe_course.utf8 import byte_vocab

ALPHABET = b"abc"


@st.composite
def merge_lists(draw, shuffle: bool = True) -> list[tuple[bytes, bytes]]:
    """Up to 30 merges built from the alphabet; each joins two tokens that exist by then,
    and with ``shuffle`` the list is then put in any order."""
    tokens = [bytes([byte]) for byte in ALPHABET]
    merges: list[tuple[bytes, bytes]] = []
    for _ in range(draw(st.integers(0, 30))):
        left = draw(st.sampled_from(tokens))
        right = draw(st.sampled_from(tokens))
        merges.append((left, right))
        if left + right not in tokens:
            tokens.append(left + right)
    if shuffle:
        merges = draw(st.permutations(merges))
    return merges


def tables(merges: list[tuple[bytes, bytes]]):
    """What :class:`bpe_course.Tokenizer` builds: ids for the tokens, pair ranks, merged ids."""
    vocab = byte_vocab()
    ids_of = {token: token_id for token_id, token in vocab.items()}
    for left, right in merges:
        if left + right not in ids_of:
            ids_of[left + right] = len(vocab)
            vocab[len(vocab)] = left + right
    pair_ranks: dict[tuple[int, int], int] = {}
    for rank, (left, right) in enumerate(merges):
        pair_ranks.setdefault((ids_of[left], ids_of[right]), rank)
    merged_ids = [ids_of[left + right] for left, right in merges]
    return vocab, ids_of, pair_ranks, merged_ids


def reference(data: bytes, merges, ids_of) -> list[int]:
    return [ids_of[token] for token in encode_naive(data, merges)]


#: Text over the alphabet: short words, and runs long enough for the bucket loop.
alphabet_text = st.lists(
    st.binary(max_size=8).map(lambda raw: bytes(ALPHABET[byte % 3] for byte in raw))
    | st.tuples(st.sampled_from([b"a", b"ab", b"abc", b"cab", b"aab"]), st.integers(20, 90)).map(
        lambda run: run[0] * run[1]
    ),
    max_size=6,
).map(b"".join)


@given(merges=merge_lists(), data=alphabet_text)
def test_both_loops_equal_the_reference(merges, data):
    vocab, ids_of, pair_ranks, merged_ids = tables(merges)
    expected = reference(data, merges, ids_of)
    assert merge_short(list(data), pair_ranks, merged_ids) == expected
    assert merge_long(list(data), pair_ranks, merged_ids) == expected
    assert apply_merges(list(data), pair_ranks, merged_ids) == expected


def test_a_lower_rank_made_mid_bucket_goes_first():
    # (ab, c) is listed before (a, b): joining a+b makes a pair of a *lower* rank, which
    # must be joined before the next a+b to its right.
    merges = [(b"ab", b"c"), (b"a", b"b"), (b"c", b"a")]
    _, ids_of, pair_ranks, merged_ids = tables(merges)
    data = b"abc" * 40
    expected = reference(data, merges, ids_of)
    assert expected == [ids_of[b"abc"]] * 40
    assert merge_long(list(data), pair_ranks, merged_ids) == expected


def test_ties_go_to_the_leftmost_pair():
    _, ids_of, pair_ranks, merged_ids = tables([(b"a", b"a")])
    for n in (SHORT_PIECE - 1, SHORT_PIECE + 1, 1001):
        expected = [ids_of[b"aa"]] * (n // 2) + [ord("a")] * (n % 2)
        assert merge_long(list(b"a" * n), pair_ranks, merged_ids) == expected
        assert merge_short(list(b"a" * n), pair_ranks, merged_ids) == expected


def test_the_loop_is_chosen_by_length(monkeypatch):
    calls = []
    monkeypatch.setattr(merging, "merge_long", lambda ids, *_: calls.append(len(ids)) or ids)
    apply_merges([1] * SHORT_PIECE, {}, [])
    apply_merges([1] * (SHORT_PIECE + 1), {}, [])
    assert calls == [SHORT_PIECE + 1]


def test_nothing_to_merge():
    assert merge_long([], {}, []) == [] and merge_long([7], {}, []) == [7]
    assert merge_long([1, 2, 3] * 30, {}, []) == [1, 2, 3] * 30


# Reachable tokens ------------------------------------------------------------------------


def reachable_by_reference(merges) -> set[int]:
    vocab, ids_of, _, _ = tables(merges)
    return {i for i, token in vocab.items() if reference(token, merges, ids_of) == [i]}


@pytest.mark.parametrize("shuffle", [False, True])
@given(data=st.data())
def test_reachable_tokens_equal_encoding_each_token(shuffle, data):
    # In order (the shortcut through the spines) and shuffled (mostly the fallback).
    merges = data.draw(merge_lists(shuffle=shuffle))
    vocab, _, pair_ranks, merged_ids = tables(merges)
    found = reachable_tokens(vocab, pair_ranks, merged_ids, list(range(256)))
    assert found == reachable_by_reference(merges)


def test_abc_is_not_reachable_when_bc_is_merged_before_ab():
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
    vocab, ids_of, pair_ranks, merged_ids = tables(merges)
    found = reachable_tokens(vocab, pair_ranks, merged_ids, list(range(256)))
    assert ids_of[b"bc"] in found and ids_of[b"ab"] in found
    assert ids_of[b"abc"] not in found


@pytest.mark.parametrize(
    ("merges", "whole"),
    [
        # Equal ranks at the border: the leftmost pair goes first.
        ([(b"a", b"a"), (b"aa", b"a")], True),  # "aaa" = aa + a
        ([(b"a", b"a"), (b"a", b"aa")], False),  # "aaa" = a + aa, but aa forms on the left
        # The border pair b+c is learned after a+b, so it never gets a chance.
        ([(b"a", b"b"), (b"b", b"c"), (b"ab", b"c")], True),
        # ... and before it, so it always wins.
        ([(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], False),
        # "abcd" = ab + cd: b+c in the middle matters only if it comes before both halves.
        ([(b"a", b"b"), (b"b", b"c"), (b"c", b"d"), (b"ab", b"cd")], True),
        ([(b"c", b"d"), (b"b", b"c"), (b"a", b"b"), (b"ab", b"cd")], True),
        ([(b"b", b"c"), (b"c", b"d"), (b"a", b"b"), (b"ab", b"cd")], False),
    ],
)
def test_reachable_at_the_border(merges, whole):
    vocab, ids_of, pair_ranks, merged_ids = tables(merges)
    last = ids_of[merges[-1][0] + merges[-1][1]]
    assert (last in reachable_tokens(vocab, pair_ranks, merged_ids, list(range(256)))) == whole
    assert (last in reachable_by_reference(merges)) == whole


@given(merges=merge_lists(shuffle=False))
def test_merges_in_order_take_the_spine_walk(merges):
    # Learned merges are in order; the walk must decide them without encoding each token.
    vocab, _, pair_ranks, merged_ids = tables(merges)
    in_order = len({left + right for left, right in merges}) == len(merges)
    with pytest.MonkeyPatch.context() as patch:
        if in_order:
            patch.setattr(merging, "_reachable_by_encoding", None)  # calling it would fail
        found = reachable_tokens(vocab, pair_ranks, merged_ids, list(range(256)))
    assert found == reachable_by_reference(merges)


def test_far_apart_ids_are_answered_by_encoding():
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
    far = {10**9: b"bc", 10**9 + 1: b"ab", 7 * 10**9: b"abc"}
    vocab = {i: bytes([i]) for i in range(256)} | far
    ids_of = {token: i for i, token in vocab.items()}
    pair_ranks = {(ids_of[left], ids_of[right]): rank for rank, (left, right) in enumerate(merges)}
    merged_ids = [ids_of[left + right] for left, right in merges]
    found = reachable_tokens(vocab, pair_ranks, merged_ids, list(range(256)))
    assert found == set(range(256)) | {10**9, 10**9 + 1}


# Rank tables: tiktoken's rule ----------------------------------------------------------------


@st.composite
def rank_tables(draw) -> dict[bytes, int]:
    """A ``.tiktoken`` table over "abc": each new token joins two earlier ones, and is kept
    only if the table can still be read (BPE over the lower ranks builds every token from
    exactly two parts), the condition :func:`load_tiktoken_file` checks."""
    ranks = {bytes([byte]): byte for byte in range(256)}
    tokens = [bytes([byte]) for byte in ALPHABET]
    for _ in range(draw(st.integers(0, 30))):
        token = draw(st.sampled_from(tokens)) + draw(st.sampled_from(tokens))
        if token in ranks:
            continue
        try:
            merges_from_ranks(ranks | {token: len(ranks)})
        except ValueError:
            continue
        ranks[token] = len(ranks)
        tokens.append(token)
    return ranks


@given(ranks=rank_tables(), text=st.lists(alphabet_text, max_size=3).map(b" ".join))
def test_rank_files_give_tiktoken_ids(ranks, text):
    # tiktoken answers a piece spelled like a token with it, and joins any pair whose
    # concatenation is a token. For a table that merges_from_ranks can read, every token
    # comes out whole from its bytes and only the recovered merges ever join, so our
    # rule (merges, shortcut for reachable tokens) gives tiktoken's ids.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.tiktoken"
        path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
        ours = load_tiktoken_file(path, GPT2_PATTERN)
    theirs = tiktoken.Encoding(
        "table", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    tables = ours.vocab, ours._merge_ranks, ours._merged_ids, ours._byte_ids
    assert reachable_tokens(*tables) == set(ranks.values())
    assert ours.encode(text.decode()) == theirs.encode(text.decode())


def merges_by_rescanning(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The plain definition merges_from_ranks follows (its old loop): for each token in rank
    order, rescan every adjacent pair, join the lowest-ranked below the token's own rank."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = [bytes([byte]) for byte in token]
        while len(parts) > 2:
            best_index, best_rank = -1, rank
            for index in range(len(parts) - 1):
                joined_rank = ranks.get(parts[index] + parts[index + 1])
                if joined_rank is not None and joined_rank < best_rank:
                    best_index, best_rank = index, joined_rank
            if best_index < 0:
                break
            parts[best_index : best_index + 2] = [parts[best_index] + parts[best_index + 1]]
        if len(parts) != 2 or not all(ranks.get(part, rank) < rank for part in parts):
            raise ValueError(token)
        merges.append((parts[0], parts[1]))
    return merges


@pytest.mark.parametrize(("short_token", "many_joins"), [(64, 16), (0, 16), (0, 0)])
@given(data=st.data())
def test_merges_from_ranks_keeps_the_plain_definition(monkeypatch, short_token, many_joins, data):
    # Tables of random pairs over "abc", readable or not (any order, tokens made twice):
    # the faster loops give the same merges, or refuse the same tables. With SHORT_TOKEN 0
    # every token takes the loop for long tokens, and with MANY_JOINS 0 every rank's pairs
    # are joined by building new lists.
    monkeypatch.setattr(ranks_module, "SHORT_TOKEN", short_token)
    monkeypatch.setattr(ranks_module, "MANY_JOINS", many_joins)
    ranks = {bytes([byte]): byte for byte in range(256)}
    tokens = [bytes([byte]) for byte in ALPHABET]
    for _ in range(data.draw(st.integers(0, 25))):
        token = data.draw(st.sampled_from(tokens)) + data.draw(st.sampled_from(tokens))
        if token not in ranks:
            ranks[token] = len(ranks)
            tokens.append(token)
    try:
        expected = merges_by_rescanning(ranks)
    except ValueError:
        with pytest.raises(ValueError):
            merges_from_ranks(ranks)
        return
    assert merges_from_ranks(ranks) == expected


def test_merges_from_ranks_on_a_long_run_of_one_byte():
    # Tokens of 2, 4, ..., 4,096 a's, as a trainer learns from a long run of one character
    # (bpe-course train wrote such a table; rescanning took seconds per token, hours at 16k).
    ranks = {bytes([byte]): byte for byte in range(256)}
    length = 2
    while length <= 4096:
        ranks[b"a" * length] = len(ranks)
        length *= 2
    merges = merges_from_ranks(ranks)
    assert merges == [(b"a" * (n // 2), b"a" * (n // 2)) for n in (2 ** k for k in range(1, 13))]
