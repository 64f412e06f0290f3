"""The fast trainer's table of words: every distinct pretoken once, and where each pair is.

This is the second of :mod:`bpe_course.train`'s three ideas, **update, don't recount**. A merge of
``(a, b)`` changes only the words that contain ``a`` next to ``b``. So we keep, for every
pair, how often it occurs and the list of words it occurs in; a merge visits just those
words and adjusts the counts of the pairs next to each merged spot (:meth:`WordTable.merge`).

One choice of representation makes this cheap in Python: a word is a ``str`` with one
character per token, ``chr(token_id)``, and a pair is the two-character string of its tokens.
Finding a pair in a word is then ``str.find``, merging it everywhere is ``str.replace`` (which
works left to right without overlaps, exactly as a BPE merge does), and both run in C. A
string also takes a byte or two per token where a list of ints takes eight. The price is a
limit of ``sys.maxunicode + 1`` (1,114,112) token ids, far beyond any vocabulary in use.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from operator import add
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

#: Token ids are characters in :class:`WordTable`, so there can be at most this many.
MAX_TOKEN_IDS = sys.maxunicode + 1


class WordTable:
    """Every distinct pretoken once, with its count, and the pairs inside them.

    ``words[i]`` is a pretoken spelt with one character per token (a byte ``x`` is
    ``chr(x)``, the token with id ``n`` is ``chr(n)``) and ``counts[i]`` is how often it
    occurs. ``pair_counts`` maps each pair (a two-character string) to how often it occurs in
    the corpus; ``pair_words`` maps it to the indices of the words it occurs in. A word stays
    listed under a pair after losing it to another merge: those stale entries are skipped
    when the pair's turn comes, which is cheaper than removing them from long lists.
    """

    def __init__(self, word_counts: Iterable[tuple[bytes, int]]) -> None:
        self.words: list[str] = []
        self.counts: list[int] = []
        pair_counts: defaultdict[str, int] = defaultdict(int)
        pair_words: defaultdict[str, list[int]] = defaultdict(list)
        for data, count in word_counts:  # each of at least two bytes
            word = data.decode("latin-1")  # the one-character-per-byte spelling
            add_pairs(map(add, word, word[1:]), len(self.words), count, pair_counts, pair_words)
            self.words.append(word)
            self.counts.append(count)
        self.pair_counts = dict(pair_counts)  # plain dicts: a missing pair is an error
        self.pair_words = dict(pair_words)

    def add_pair_words(self, pair_words: dict[str, list[int]]) -> None:
        """List more words under each pair (words another table has handed over)."""
        for pair, indices in pair_words.items():
            listed = self.pair_words.get(pair)
            if listed is None:
                self.pair_words[pair] = indices
            else:
                listed += indices

    def merge(self, pair: str, new_token: str) -> tuple[dict[str, int], dict[str, int]]:
        """Replace ``pair`` by ``new_token`` in every word that has it; update the pair counts.

        Only the pairs next to a merged spot change (see :func:`pairs_changed_by`). Returns
        how much each pair's count went down (``pair`` itself left out) and the new pairs
        with their counts: these all contain ``new_token``, so none existed before.
        """
        # Local names for the tables: the loop below runs millions of times.
        words, counts, pair_words = self.words, self.counts, self.pair_words
        lost: defaultdict[str, int] = defaultdict(int)
        gained: defaultdict[str, int] = defaultdict(int)
        new_words: defaultdict[str, list[int]] = defaultdict(list)
        for index in pair_words.pop(pair, ()):
            word = words[index]
            if pair not in word:
                continue  # stale entry: an earlier merge took this word's pair away
            merged = word.replace(pair, new_token)
            words[index] = merged
            count = counts[index]
            size = len(merged)
            if size + 1 == len(word):
                # One merged spot, as in most words: pairs_changed_by's work, written out.
                # x a b y becomes x N y: it loses x a and b y, it gains x N and N y.
                spot = merged.find(new_token)
                if spot:
                    lost[word[spot - 1 : spot + 1]] += count
                    new_pair = merged[spot - 1 : spot + 1]
                    gained[new_pair] += count
                    new_words[new_pair].append(index)
                if spot + 1 < size:
                    lost[word[spot + 1 : spot + 3]] += count
                    new_pair = merged[spot : spot + 2]
                    gained[new_pair] += count
                    new_words[new_pair].append(index)
                continue
            old_pairs, new_pairs = pairs_changed_by(word, merged, pair)
            for old_pair in old_pairs:
                lost[old_pair] += count
            add_pairs(new_pairs, index, count, gained, new_words)
        lost.pop(pair, None)  # its count goes altogether
        self.pair_counts.pop(pair, None)
        self.count_changes(lost, gained)
        pair_words.update(new_words)
        return lost, gained

    def count_changes(self, lost: Mapping[str, int], gained: Mapping[str, int]) -> None:
        """Take ``lost`` from the pair counts and add ``gained``; forget pairs that reach 0."""
        pair_counts, pair_words = self.pair_counts, self.pair_words
        for old_pair, amount in lost.items():
            total = pair_counts[old_pair] - amount
            if total:
                pair_counts[old_pair] = total
            else:
                del pair_counts[old_pair]
                pair_words.pop(old_pair, None)
        for new_pair, amount in gained.items():
            pair_counts[new_pair] = pair_counts.get(new_pair, 0) + amount


def pairs_changed_by(word: str, merged: str, pair: str) -> tuple[list[str], list[str]]:
    """The pairs a merge takes from ``word`` and the pairs it adds, ``merged`` being the result.

    In ``x a b y`` becoming ``x N y`` the word loses ``x a`` and ``b y`` and gains ``x N``
    and ``N y``; ``a b`` itself is not listed. Occurrences are found left to right without
    overlaps, as ``str.replace`` merged them, and the ``k``-th one sits ``k`` characters
    further left in ``merged``. When two occurrences touch (``a b a b`` becoming ``N N``)
    the pair between them is listed once, as the left neighbour of the second.

    >>> pairs_changed_by("xabyab", "xNyN", "ab")
    (['xa', 'by', 'ya'], ['xN', 'Ny', 'yN'])
    >>> pairs_changed_by("abab", "NN", "ab")
    (['ba'], ['NN'])
    """
    lost: list[str] = []
    gained: list[str] = []
    last = len(word) - 2
    start = word.find(pair)
    shift = 0  # merges so far in this word: each one shortens it by a character
    while start >= 0:
        following = word.find(pair, start + 2)
        spot = start - shift
        if start > 0:
            lost.append(word[start - 1 : start + 1])
            gained.append(merged[spot - 1 : spot + 1])
        if start < last and following != start + 2:
            lost.append(word[start + 1 : start + 3])
            gained.append(merged[spot : spot + 2])
        shift += 1
        start = following
    return lost, gained


def add_pairs(
    pairs: Iterable[str],
    index: int,
    count: int,
    pair_counts: defaultdict[str, int],
    pair_words: defaultdict[str, list[int]],
) -> None:
    """Count each of ``pairs`` (all from word ``index``) ``count`` more times and list the
    word under each of them, once."""
    for pair in pairs:
        pair_counts[pair] += count
        listed = pair_words[pair]
        if not listed or listed[-1] != index:  # one word's pairs come together: this suffices
            listed.append(index)


def cycle_collector_paused(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` with Python's cycle collector paused (if it was running).

    Training builds millions of small strings, lists and tuples and never a reference
    cycle, so the collector would only walk the growing tables again and again for nothing
    (measured: 14% of the merge loop's time on 30 MB). Reference counting still frees everything,
    including the tables themselves when the function returns, before the collector resumes.
    """

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused
