"""The trainer's word table: what a merge changes, and what the table must hold after it.

:class:`~bpe_course.speed.wordtable.WordTable` spells each word one character per token and
lists, under every pair, the words it occurs in. After any merges its pair counts must be a
recount of its words, and every word holding a pair must be listed under it (stale entries may
stay: they are skipped). Training through the table is checked against the naive trainer in
``test_train.py``, and shared with helper processes in ``test_sharing.py``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from operator import add

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import repetitive_word, word_count, word_counts

from bpe_course import train_from_counts, train_from_counts_naive
from bpe_course.speed.wordtable import MAX_TOKEN_IDS, WordTable, pairs_changed_by


def all_pairs(word: str) -> Counter[str]:
    return Counter(map(add, word, word[1:]))


def listed_words(table: WordTable) -> dict[str, set[tuple[str, int]]]:
    """Each pair's words (with counts) that hold it, among those listed under it."""
    listed = {
        pair: {(table.words[i], table.counts[i]) for i in indices if pair in table.words[i]}
        for pair, indices in table.pair_words.items()
    }
    return {pair: words for pair, words in listed.items() if words}


def words_with_pairs(table: WordTable) -> dict[str, set[tuple[str, int]]]:
    """Each pair's words (with counts) that hold it, found by looking at every word."""
    found = defaultdict(set)
    for word, count in zip(table.words, table.counts):
        for pair in all_pairs(word):
            found[pair].add((word, count))
    return dict(found)


def recounted(table: WordTable) -> dict[str, int]:
    """The pair counts of the table's words, counted from scratch."""
    counts: Counter[str] = Counter()
    for word, count in zip(table.words, table.counts):
        for pair, times in all_pairs(word).items():
            counts[pair] += times * count
    return dict(counts)


# What one merge changes ----------------------------------------------------------------------


@given(
    word=st.text(st.sampled_from("abN"), max_size=30),
    pair=st.sampled_from(["aa", "ab", "ba", "bb"]),
)
def test_pairs_changed_by_a_merge_are_exactly_the_difference(word, pair):
    # Before: the pairs the merge removes, the merged occurrences, and the rest.
    # After: the pairs it adds, and the same rest. Lost pairs never hold the new token N
    # (it is not in the word yet, so "N" stands for some other token here), gained ones do.
    word = word.replace("N", "c")
    merged = word.replace(pair, "N")
    lost, gained = pairs_changed_by(word, merged, pair)
    before, after = all_pairs(word), all_pairs(merged)
    before.subtract(lost)
    before.subtract({pair: word.count(pair)})
    after.subtract(gained)
    assert min(before.values(), default=0) >= 0 and min(after.values(), default=0) >= 0
    assert +before == +after
    assert all("N" in gained_pair for gained_pair in gained)
    assert all("N" not in lost_pair for lost_pair in lost)


def test_token_ids_beyond_one_character_are_refused_before_training():
    # A word of 1.2 million bytes could take more merges than there are characters.
    with pytest.raises(ValueError, match="vocab_size=2000000 could need token id"):
        train_from_counts({"a" * 1_200_000: 1}, 2_000_000)
    # A huge vocab_size on a small corpus is fine: training stops when no pair is left.
    assert len(train_from_counts({"ab": 1}, 10 * MAX_TOKEN_IDS)[1]) == 1


@pytest.mark.parametrize("first_new_id", [0xD800, 0x10000])
def test_new_token_ids_in_the_surrogate_range_and_beyond_two_bytes(first_new_id):
    # Enough special tokens push the first merged token's id (and so its character in the
    # word table) to the first surrogate code point, or past the two-byte characters.
    special_tokens = [f"<s{i}>" for i in range(first_new_id - 256)]
    counts = {"abababab": 3, "aaaaa": 2, "ba ba": 5, "abcabcab": 1, "cab": 4}
    vocab_size = first_new_id + 20
    fast = train_from_counts(counts, vocab_size, special_tokens)
    assert fast == train_from_counts_naive(counts, vocab_size, special_tokens)
    assert min(fast[0].keys() - range(first_new_id)) == first_new_id


# The table after merges ----------------------------------------------------------------------


@given(
    counts=word_counts(st.sampled_from("abc")) | st.dictionaries(repetitive_word, word_count),
    merges=st.integers(0, 15),
)
def test_after_each_merge_the_table_holds_what_a_recount_finds(counts, merges):
    words = [(word.encode(), count) for word, count in counts.items() if len(word.encode()) > 1]
    table = WordTable(words)
    assert table.pair_counts == recounted(table)
    for step in range(merges):
        if not table.pair_counts:
            break
        pair = max(table.pair_counts, key=lambda pair: (table.pair_counts[pair], pair))
        new_token = chr(300 + step)
        before = dict(table.pair_counts)
        lost, gained = table.merge(pair, new_token)
        assert pair not in table.pair_counts
        assert table.pair_counts == recounted(table)
        assert listed_words(table) == words_with_pairs(table)
        # What merge reports is the change: losses of old pairs, and new pairs only.
        assert all(new_token in new_pair and new_pair not in before for new_pair in gained)
        for old_pair, count in before.items():
            if old_pair != pair:
                assert table.pair_counts.get(old_pair, 0) == count - lost.get(old_pair, 0)


def test_a_merge_takes_a_pair_out_of_every_word_and_keeps_the_counts():
    table = WordTable([(b"abab", 3), (b"xab", 2), (b"ba", 1)])
    assert table.pair_counts == {"ab": 8, "ba": 4, "xa": 2}
    lost, gained = table.merge("ab", "N")
    assert table.words == ["NN", "xN", "ba"]
    assert table.counts == [3, 2, 1]
    assert table.pair_counts == {"NN": 3, "xN": 2, "ba": 1}
    assert dict(lost) == {"ba": 3, "xa": 2}
    assert dict(gained) == {"NN": 3, "xN": 2}
    assert table.merge("ab", "M") == ({}, {})  # a pair that is gone changes nothing
