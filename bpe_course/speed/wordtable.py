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

Most words are short, and a merge visits their merged spots one by one. A long word (a run
of one letter, of spaces or of digits is a single pretoken, however long) would make that a
Python loop over millions of spots, and a list of millions of small strings: 10 MB of one
letter took 15 s and 900 MB, and 200 MB ran out of memory. So a word of :data:`LONG_WORD`
characters or more is merged with whole-string operations only
(:meth:`WordTable._merge_long_word`): what a merge changes around its spots follows from the
characters beside the new token, which ``str.count`` or ``str.split`` (a slice at a time)
count in C (:func:`neighbours`). Nothing is held per spot.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import add, itemgetter
from typing import ParamSpec, TypeVar

from ..utf8 import replace_lone_surrogates

P = ParamSpec("P")
R = TypeVar("R")

#: Token ids are characters in :class:`WordTable`, so there can be at most this many.
MAX_TOKEN_IDS = sys.maxunicode + 1

#: Words of at least this many characters are merged by :meth:`WordTable._merge_long_word`.
#: Below it the per-spot loop is cheaper: a word this short has few spots, and the
#: whole-string operations cost a few microseconds each, whatever the length.
LONG_WORD = 256

#: :func:`split_neighbours` splits the merged word this many characters at a time, so the
#: list of parts (one per new token) never holds more than this many strings.
SLICE_CHARS = 1 << 16

#: The cost model that picks :func:`counted_neighbours` or :func:`split_neighbours`, in
#: nanoseconds (measured with CPython 3.11 on x86-64; only their ratio matters): reading one
#: character in ``str.count``, ``str.replace`` or ``str.split``, and handling one new token
#: in a split (a part, two slices, two ``Counter`` entries).
SCAN_NS = 1.5
SPOT_NS = 250

#: A long word's pairs are counted with ``str.count`` when it has at most this many
#: different characters (that many squared scans), else by a ``Counter`` of all its pairs.
FEW_CHARS = 6

#: Pretokens longer than this many bytes are refused unless ``max_pretoken_bytes`` says what
#: to do (:func:`bound_pretokens`). The merges inside one pretoken can each make a token
#: nearly as long as it, and the vocabulary keeps every token: 200 MB of one letter would
#: learn about 2.4 GB of tokens at vocabulary size 300.
MAX_PRETOKEN_BYTES = 1 << 25  # 32 MiB

#: The last and the first character of a string, or "" for an empty one, at C speed.
last_char = itemgetter(slice(-1, None))
first_char = itemgetter(slice(None, 1))


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
            index = len(self.words)
            if len(word) >= LONG_WORD:  # count its pairs in C, not one by one
                for pair, occurrences in count_pairs(word).items():
                    pair_counts[pair] += occurrences * count
                    pair_words[pair].append(index)
            else:
                add_pairs(map(add, word, word[1:]), index, count, pair_counts, pair_words)
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
            if len(word) >= LONG_WORD:
                self._merge_long_word(index, pair, new_token, lost, gained, new_words)
                continue
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

    def _merge_long_word(
        self,
        index: int,
        pair: str,
        new_token: str,
        lost: defaultdict[str, int],
        gained: defaultdict[str, int],
        new_words: defaultdict[str, list[int]],
    ) -> None:
        """:meth:`merge`'s work on one long word, with no Python loop over its spots.

        Every pair a merge of ``a b`` into ``N`` changes touches a merged spot, so the
        characters beside ``N`` in the merged word tell all: a character ``c`` before an
        ``N`` stood before an ``a`` (the word lost ``c a`` and gained ``c N``), one after an
        ``N`` stood after a ``b`` (lost ``b c``, gained ``N c``), and two ``N`` side by side
        were ``a b a b`` (lost ``b a``, gained ``N N``). :func:`neighbours` counts them.
        """
        word = self.words[index]
        merged = word.replace(pair, new_token)
        spots = len(word) - len(merged)
        if not spots:
            return  # stale entry: an earlier merge took this word's pair away
        self.words[index] = merged
        count = self.counts[index]
        before, after, side_by_side = neighbours(merged, new_token, spots)
        first, second = pair
        changes = [(char + first, char + new_token, times) for char, times in before.items()]
        changes += [(second + char, new_token + char, times) for char, times in after.items()]
        if side_by_side:
            changes.append((second + first, new_token + new_token, side_by_side))
        for old_pair, new_pair, times in changes:  # each new_pair once: the word is listed once
            lost[old_pair] += times * count
            gained[new_pair] += times * count
            new_words[new_pair].append(index)

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


# Long words: whole-string operations only ----------------------------------------------------


def neighbours(
    merged: str, new_token: str, spots: int
) -> tuple[dict[str, int], dict[str, int], int]:
    """The characters beside ``new_token`` in ``merged``, where it occurs ``spots`` times.

    Returns how often each character (other than ``new_token``) stands just before it, how
    often each stands just after it, and how often two of it stand side by side. Two ways
    count them, and the cheaper one is taken (:data:`SCAN_NS`, :data:`SPOT_NS`):
    :func:`counted_neighbours` scans the word twice per different character in it, whatever
    the number of spots, which wins on a run (one letter merged into ever longer tokens);
    :func:`split_neighbours` costs one scan plus some work per spot, which wins when the
    word holds many different characters and the merged spots are comparatively few.

    >>> neighbours("xNyN", "N", 2)
    ({'x': 1, 'y': 1}, {'y': 1}, 0)
    >>> neighbours("NNNa", "N", 3)
    ({}, {'a': 1}, 2)
    """
    size = len(merged)
    split_cost = spots * SPOT_NS + size * SCAN_NS
    # Counting with k other characters: k + 1 passes to find them, two scans for each.
    most = int((split_cost / (size * SCAN_NS) - 1) / 3)
    chars = distinct_chars(merged, most + 1) if most >= 1 else None
    if chars is None:
        before, after, side_by_side = split_neighbours(merged, new_token)
        return dict(before), dict(after), side_by_side
    return counted_neighbours(merged, new_token, spots, chars)


def counted_neighbours(
    merged: str, new_token: str, spots: int, chars: Iterable[str]
) -> tuple[dict[str, int], dict[str, int], int]:
    """:func:`neighbours`, counted with ``str.count``; ``chars`` are all of ``merged``'s.

    ``c N`` and ``N c`` with ``c`` not ``N`` cannot overlap, so ``str.count`` finds them
    all. ``N N`` can (``N N N`` holds two), so it is found from the others: every ``N``
    stands at the start of the word, after some other character, or after an ``N``.

    >>> counted_neighbours("NNNa", "N", 3, "Na")
    ({}, {'a': 1}, 2)
    """
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for char in chars:
        if char == new_token:
            continue
        if times := merged.count(char + new_token):
            before[char] = times
        if times := merged.count(new_token + char):
            after[char] = times
    side_by_side = spots - merged.startswith(new_token) - sum(before.values())
    return before, after, side_by_side


def split_neighbours(merged: str, new_token: str) -> tuple[Counter[str], Counter[str], int]:
    """:func:`neighbours`, found by splitting ``merged`` on ``new_token``, a slice at a time.

    The last character of each part is the one before the next ``N``, the first character of
    each part the one after the last ``N``. An empty part between two ``N`` means they stand
    side by side; one at the edge of a slice means the neighbour is in the next slice (or
    there is none, at the edge of the word). Slices of :data:`SLICE_CHARS` keep the list of
    parts short; ``N`` is one character, so no slice edge ever cuts through one.

    >>> split_neighbours("xNyN", "N")
    (Counter({'x': 1, 'y': 1}), Counter({'y': 1}), 0)
    """
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    side_by_side = 0
    size = len(merged)
    for start in range(0, size, SLICE_CHARS):
        end = min(start + SLICE_CHARS, size)
        parts = merged[start:end].split(new_token)
        if len(parts) == 1:
            continue  # no new token in this slice
        before.update(map(last_char, parts[:-1]))
        after.update(map(first_char, parts[1:]))
        # An empty part before an N follows another N, or starts the slice; an empty part
        # after an N is the same pair of N seen from the other side, or ends the slice.
        side_by_side += before.pop("", 0)
        del after[""]
        if not parts[0]:  # the slice starts with an N: its neighbour is in the slice before
            side_by_side -= 1
            if start and merged[start - 1] == new_token:
                side_by_side += 1
            elif start:
                before[merged[start - 1]] += 1
        if not parts[-1] and end < size and merged[end] != new_token:
            after[merged[end]] += 1  # an N that ends the slice, and its neighbour in the next
    return before, after, side_by_side


def distinct_chars(text: str, limit: int) -> list[str] | None:
    """The different characters of ``text``, or None if there are more than ``limit``.

    One ``str.replace`` pass takes each character out, so this is cheap when they are few
    (``set(text)`` would make a string object for every character).

    >>> distinct_chars("abracadabra", 5), distinct_chars("abracadabra", 4)
    (['a', 'b', 'r', 'c', 'd'], None)
    """
    if len(set(text[:4096])) > limit:
        return None  # a look at the start is enough to give up without a pass
    chars: list[str] = []
    while text:
        if len(chars) == limit:
            return None
        chars.append(text[0])
        text = text.replace(text[0], "")
    return chars


def count_pairs(word: str) -> dict[str, int]:
    """How often each pair occurs in ``word``, as BPE counts them: ``"aaa"`` holds ``"aa"``
    twice. Counted in C, never one pair at a time in Python.

    With few different characters, by ``str.count`` of each possible pair: ``x y`` with
    ``x`` not ``y`` cannot overlap, so ``str.count`` finds them all, and ``y y`` is what
    is left of the occurrences of ``y`` (each stands at the start, after another character,
    or after a ``y``). With up to 16, each pair made one byte (:func:`count_pairs_as_bytes`);
    with more, by a ``Counter`` of all pairs.

    >>> count_pairs("aaabab")
    {'ba': 1, 'aa': 2, 'ab': 2}
    """
    chars = distinct_chars(word, FEW_CHARS)
    if chars is None:
        as_bytes = count_pairs_as_bytes(word)
        return Counter(map(add, word, word[1:])) if as_bytes is None else as_bytes
    counts: dict[str, int] = {}
    for second in chars:
        after_others = 0  # occurrences of `second` just after a different character
        for first in chars:
            if first != second and (times := word.count(first + second)):
                counts[first + second] = times
                after_others += times
        if same := word.count(second) - word.startswith(second) - after_others:
            counts[second + second] = same
    return counts


# Pretokens too long to train on ----------------------------------------------------------


class LongPretokenError(ValueError):
    """A pretoken is longer than :data:`MAX_PRETOKEN_BYTES` and no bound was given.

    ``length`` is its size in bytes, ``count`` how often it occurs, ``preview`` its start
    (the command line says the same with its own option's name).
    """

    def __init__(self, length: int, count: int, preview: str) -> None:
        self.length, self.count, self.preview = length, count, preview
        self.limit = MAX_PRETOKEN_BYTES
        super().__init__(
            f"the longest pretoken is {length:,} bytes ({preview}, {count:,} time(s)), over "
            f"the {MAX_PRETOKEN_BYTES:,} bytes training takes by default: each merge inside it "
            "can make a token nearly as long, and the vocabulary keeps them all; pass "
            "max_pretoken_bytes=N to cut longer pretokens into pieces of at most N bytes "
            "(e.g. 1000000), or an N above its length to train on it whole"
        )


def check_max_pretoken_bytes(max_pretoken_bytes: int | None) -> int | None:
    """``None`` or a whole number of at least 4 (a UTF-8 character takes up to 4 bytes)."""
    if max_pretoken_bytes is None:
        return None
    if isinstance(max_pretoken_bytes, bool) or not isinstance(max_pretoken_bytes, int):
        raise TypeError(f"max_pretoken_bytes must be an int or None, got {max_pretoken_bytes!r}")
    if max_pretoken_bytes < 4:
        raise ValueError(
            f"max_pretoken_bytes must be at least 4 (a UTF-8 character can take 4 bytes), "
            f"got {max_pretoken_bytes}"
        )
    return max_pretoken_bytes


def bound_pretokens(
    counts: Mapping[str, int], max_pretoken_bytes: int | None
) -> Mapping[str | bytes, int]:
    """``counts`` with no pretoken over ``max_pretoken_bytes`` bytes: longer ones are cut into
    pieces of at most that many bytes, each ending where a UTF-8 character does
    (:func:`cut_pretoken`), and the pieces are counted instead.

    With ``None``, ``counts`` is returned as it is, unless a pretoken is longer than
    :data:`MAX_PRETOKEN_BYTES`: then :class:`LongPretokenError` names the longest, before
    training starts on something that would fill the memory. A run of one character with
    no place the split pattern cuts (a file of one letter, of spaces, of digits) makes such
    a pretoken.

    >>> bound_pretokens({"aaaaaaa": 2, "ab": 1}, 3)
    Counter({b'aaa': 4, b'a': 2, 'ab': 1})
    """
    limit = MAX_PRETOKEN_BYTES if max_pretoken_bytes is None else max_pretoken_bytes
    # A character is at most 4 bytes, so only words of over limit / 4 characters can be long.
    long = [word for word in counts if len(word) * 4 > limit and utf8_length(word) > limit]
    if not long:
        return counts
    if max_pretoken_bytes is None:
        word = max(long, key=utf8_length)
        raise LongPretokenError(utf8_length(word), counts[word], f"{word[:20]!r}...")
    bounded: Counter[str | bytes] = Counter(counts)
    for word in long:
        count = bounded.pop(word)
        for piece in cut_pretoken(replace_lone_surrogates(word).encode(), max_pretoken_bytes):
            bounded[piece] += count
    return bounded


def utf8_length(word: str) -> int:
    """The bytes of ``word`` in UTF-8 (as training encodes it), without a copy for ASCII."""
    return len(word) if word.isascii() else len(replace_lone_surrogates(word).encode())


def cut_pretoken(data: bytes, size: int) -> Iterator[bytes]:
    """``data`` in pieces of at most ``size`` bytes (at least 4), each cut before the first
    byte of a UTF-8 character, so that no character is split between two pieces.

    >>> list(cut_pretoken("aéééé".encode(), 4))
    [b'a\\xc3\\xa9', b'\\xc3\\xa9\\xc3\\xa9', b'\\xc3\\xa9']
    """
    start = 0
    while len(data) - start > size:
        end = start + size
        while data[end] & 0xC0 == 0x80:  # a continuation byte: the character began before
            end -= 1
        yield data[start:end]
        start = end
    yield data[start:]


def count_pairs_as_bytes(word: str) -> dict[str, int] | None:
    """:func:`count_pairs` for a word of one-byte characters (as every word of the table
    starts) with at most 16 different ones, such as a run of digits; None for another word.

    Each character becomes its index among the word's characters, a number below 16 in a
    byte of its own; :func:`pair_bytes` turns each pair into one byte, and a ``Counter`` of
    those bytes counts the pairs in C (small ints are shared objects): 0.3 s for 10 million
    digits, against 0.7 s for a ``Counter`` of two-character strings. A slice at a time, so
    that the big numbers stay small.

    >>> count_pairs_as_bytes("31415")
    {'31': 1, '14': 1, '41': 1, '15': 1}
    """
    chars = sorted(set(word[:4096]))  # the start shows them all, or the check below fails
    if len(chars) > 16 or len(word) < 2 or max(chars) > "\xff":
        return None
    indices = bytearray(b"\xff" * 256)  # a character the start did not show becomes 0xFF
    for index, char in enumerate(chars):
        indices[ord(char)] = index
    data = word.encode("latin-1").translate(indices)
    if 0xFF in data:
        return None
    counts: Counter[int] = Counter()
    for start in range(0, len(data) - 1, SLICE_CHARS):
        counts.update(pair_bytes(data[start : start + SLICE_CHARS + 1]))  # + the next pair's
    return {chars[code >> 4] + chars[code & 15]: times for code, times in counts.items()}


def pair_bytes(indices: bytes) -> bytes:
    """Each pair of neighbouring bytes (each below 16) as one byte, ``16 * first + second``.

    Read as one big number, ``indices`` shifted left by 4 bits holds 16 times each byte in
    its place, and ``indices`` without its first byte, shifted left by a byte, holds the
    next byte there: their sum holds every pair in the place of its first byte, with no
    carry (``16 * 15 + 15`` is 255), and the last place, which starts no pair, is dropped.

    >>> list(pair_bytes(bytes([3, 1, 4, 1])))
    [49, 20, 65]
    """
    size = len(indices)
    number = int.from_bytes(indices, "big")
    rest = number - (indices[0] << 8 * (size - 1))  # all but the first byte
    return ((number << 4) + (rest << 8)).to_bytes(size, "big")[:-1]


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
