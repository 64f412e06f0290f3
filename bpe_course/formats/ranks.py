"""Rank tables: tiktoken's way of storing a BPE tokenizer without a list of merges.

A ``.tiktoken`` file gives every token one number, its *rank*, which is both its id and
its merge priority: to encode, repeatedly join the adjacent pair whose concatenation has
the lowest rank. For a tokenizer learned by BPE, joining by rank and replaying the merges
in the order they were learned are the same thing, because each merge made a new token
with the next rank. So the merge list can be recovered from the ranks alone: rebuild each
token from its bytes using only lower-ranked tokens, and the last two parts standing are
the merge that made it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping

from ..base import Merges


def merges_from_ranks(ranks: Mapping[bytes, int]) -> Merges:
    """Recover the merge list, in rank order, from a ``{token: rank}`` table.

    For each multi-byte token, run BPE on its bytes using only lower-ranked tokens; with a
    consistent table that leaves exactly two parts, and those two are the merge that made
    the token.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"lo": 256, b"low": 257, b"er": 258}
    >>> merges_from_ranks(ranks)
    [(b'l', b'o'), (b'lo', b'w'), (b'e', b'r')]
    """
    merges: Merges = []
    runs: RunJoiner | None = None  # made for the first long token
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        if len(token) <= SHORT_TOKEN:
            parts = _rescan_below(token, rank, ranks)
        else:
            runs = runs or RunJoiner(ranks)
            parts = runs.join_below(token, rank) or _join_below(token, rank, ranks)
        built = len(parts) == 2 and all(ranks.get(part, rank) < rank for part in parts)
        if not built:
            raise ValueError(
                f"token {token!r} (rank {rank}) cannot be built by merging two lower-ranked tokens"
            )
        merges.append((parts[0], parts[1]))
    return merges


#: Tokens of at most this many bytes are rebuilt by :func:`_rescan_below`, longer ones by
#: :func:`_join_below` (on OpenAI's tables, where almost every token is short, the plain
#: rescan is the faster: 0.55 s against 0.94 s for cl100k_base's 100k tokens).
SHORT_TOKEN = 64


def _rescan_below(token: bytes, limit: int, ranks: Mapping[bytes, int]) -> list[bytes]:
    """What :func:`_join_below` returns, found the plain way: after each join, look at every
    adjacent pair again. Time grows with the cube of the token's length, which is nothing
    for a short token.

    >>> _rescan_below(b"lower", 258, {b"lo": 256, b"low": 257, b"er": 258})
    [b'low', b'e', b'r']
    """
    parts = [token[index : index + 1] for index in range(len(token))]
    while len(parts) > 2:
        best_index, best_rank = -1, limit
        for index in range(len(parts) - 1):
            joined_rank = ranks.get(parts[index] + parts[index + 1], limit)
            if joined_rank < best_rank:
                best_index, best_rank = index, joined_rank
        if best_index < 0:
            break
        parts[best_index : best_index + 2] = [parts[best_index] + parts[best_index + 1]]
    return parts


#: :func:`_join_below` joins the pairs of one rank by building new lists when there are more
#: than this many: deleting from a list one join at a time moves the rest of the list each
#: time (a run of 300,000 a's took 46 s to rebuild so, and 1 MB hours).
MANY_JOINS = 16


def _join_below(token: bytes, limit: int, ranks: Mapping[bytes, int]) -> list[bytes]:
    """``token``'s bytes after joining, again and again, the adjacent pair whose
    concatenation has the lowest rank below ``limit`` (the leftmost on a tie), until two
    parts are left or no pair ranks below ``limit``.

    The rank of each adjacent pair is kept in a list, and a join recomputes only the two
    beside it. Once the lowest rank is found, all its pairs are joined from left to right
    (the next one is searched for from the join on; :func:`_join_all` when there are
    many), unless a join makes a lower rank beside it. Rescanning every pair after each
    join, and gluing each pair again to look it up, cost time that grew with the cube of
    the token's length: seconds at 4,000 bytes, hours at 20,000 (a vocabulary learned from
    a long run of one character has such tokens).

    >>> _join_below(b"lower", 258, {b"lo": 256, b"low": 257, b"er": 258})
    [b'low', b'e', b'r']
    """
    parts = [token[index : index + 1] for index in range(len(token))]

    def rank_of(left: bytes, right: bytes) -> int:
        """The rank of ``left + right``, or ``limit`` if they may not be joined."""
        rank = ranks.get(left + right, limit)
        return rank if rank < limit else limit

    pair_ranks = [rank_of(left, right) for left, right in zip(parts, parts[1:])]
    while len(parts) > 2:
        best = min(pair_ranks)
        if best >= limit:
            break
        index = pair_ranks.index(best)
        if pair_ranks.count(best) > MANY_JOINS:
            parts, pair_ranks = _join_all(parts, pair_ranks, index, best, rank_of)
            continue
        while True:  # join every pair of this rank, left to right, while it stays the lowest
            parts[index : index + 2] = [parts[index] + parts[index + 1]]
            del pair_ranks[index]
            beside = []
            if index < len(pair_ranks):
                pair_ranks[index] = rank_of(parts[index], parts[index + 1])
                beside.append(pair_ranks[index])
            if index:
                pair_ranks[index - 1] = rank_of(parts[index - 1], parts[index])
                beside.append(pair_ranks[index - 1])
            if len(parts) <= 2 or min(beside, default=limit) < best:
                break  # done, or a lower rank appeared beside the join: look again
            try:  # nothing left of index - 1 has this rank, or it would have come first
                index = pair_ranks.index(best, max(index - 1, 0))
            except ValueError:
                break
    return parts


def _join_all(
    parts: list[bytes],
    pair_ranks: list[int],
    start: int,
    best: int,
    rank_of: Callable[[bytes, bytes], int],
) -> tuple[list[bytes], list[int]]:
    """``parts`` and their ``pair_ranks`` after joining every pair of rank ``best`` from
    ``start`` on, left to right, in one pass that builds new lists.

    Joining stops where a join makes a pair of a lower rank beside it (that pair goes
    first), or where two parts are left; the rest is copied. Only a pair beside a join
    gets its rank looked up; the others keep theirs. (A pair with a new part never has
    rank ``best``: it is longer than the token of that rank.)

    >>> ranks = {b"aa": 1, b"aaaa": 2}
    >>> _join_all([b"a"] * 6, [1] * 5, 0, 1, lambda x, y: ranks.get(x + y, 9))
    ([b'aa', b'aa', b'aa'], [2, 2])
    """
    new_parts, new_ranks = parts[:start], pair_ranks[: max(start - 1, 0)]
    previous: int | None = start - 1  # where new_parts[-1] stood in parts; None if joined
    joining, index, count = True, start, len(parts)
    while index < count:
        if joining and index + 1 < count and pair_ranks[index] == best:
            part, where = parts[index] + parts[index + 1], None
            index += 2
        else:
            part, where = parts[index], index
            index += 1
        if new_parts:
            kept = where is not None and previous == where - 1
            new_ranks.append(pair_ranks[previous] if kept else rank_of(new_parts[-1], part))
        new_parts.append(part)
        previous = where
        if where is None and joining:
            left = new_ranks[-1] if len(new_parts) > 1 else best
            right = rank_of(part, parts[index]) if index < count else best
            if min(left, right) < best or len(new_parts) + count - index <= 2:
                joining = False
    return new_parts, new_ranks


#: :class:`RunJoiner` works on a token while its parts are at most this many different
#: tokens (it tries each pair of them at every step); beyond, :func:`_join_below` does.
FEW_PARTS = 16

#: Two parts up to this many bytes long in all are glued to look their token up; longer
#: ones are compared with the few tokens of their total length instead.
GLUE_BYTES = 4096


class RunJoiner:
    """:func:`_join_below` with whole-string operations, for tokens made of few different
    parts, such as those learned from a long run of one character (megabytes of ``a``).

    The parts are a string with one character per part, ``chr(rank)``. Each round joins
    every pair of the lowest rank at once, left to right, with ``str.replace`` (or ``re.sub``
    when several pairs of parts spell that token): what joining them one at a time does, as
    long as no join puts a pair of a lower rank beside it. When one might, or when the parts
    are too varied, :meth:`join_below` gives up and returns None. :func:`_join_below` took a
    Python step per byte: minutes for the tokens of 10 MB of one letter.
    """

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self.ranks = ranks
        self.spelling = {rank: token for token, rank in ranks.items()}
        bytes_known = all(bytes([byte]) in ranks for byte in range(256))
        self.usable = (
            bytes_known
            and len(self.spelling) == len(ranks)  # one token a rank: a character names it
            and max(self.spelling, default=0) <= sys.maxunicode
        )
        self.byte_chars = [chr(ranks[bytes([byte])]) for byte in range(256)] if bytes_known else []
        self.long_tokens: dict[int, list[int]] = {}  # length -> the ranks of tokens that long
        for token, rank in ranks.items():
            if len(token) > GLUE_BYTES:
                self.long_tokens.setdefault(len(token), []).append(rank)
        self.joined: dict[str, int | None] = {}  # two parts (characters) -> their token's rank

    def rank_of(self, pair: str) -> int | None:
        """The rank of the token two parts spell (``pair``: their two characters), or None.

        Parts can be megabytes, so long ones are not glued to look the result up: only a
        token of the right length can be it, and comparing its two ends with them is enough.
        """
        if pair not in self.joined:
            left, right = self.spelling[ord(pair[0])], self.spelling[ord(pair[1])]
            if len(left) + len(right) <= GLUE_BYTES:
                self.joined[pair] = self.ranks.get(left + right)
            else:
                self.joined[pair] = next(
                    (rank for rank in self.long_tokens.get(len(left) + len(right), ())
                     if self.spelling[rank].startswith(left)
                     and self.spelling[rank].endswith(right)),
                    None,
                )
        return self.joined[pair]

    def join_below(self, token: bytes, limit: int) -> list[bytes] | None:
        """``_join_below(token, limit, ranks)``, or None if this token needs it done there.

        >>> RunJoiner({bytes([b]): b for b in range(256)} | {b"aa": 256}).join_below(b"aaaaa", 257)
        [b'aa', b'aa', b'a']
        """
        if not self.usable:
            return None
        word = token.decode("latin-1").translate(self.byte_chars)
        chars = _distinct_chars(word, FEW_PARTS)
        while len(word) > 2:
            if chars is None or len(chars) > FEW_PARTS:
                return None
            found = self._lowest_join(word, chars, limit)
            if found is None:
                break
            rank, pairs = found
            new = chr(rank)
            # A join sees the parts to its right as they were, those to its left as joined.
            for char in chars:
                beside = self.rank_of(new + char)
                if beside is not None and beside < rank and any(p + char in word for p in pairs):
                    return None
            if len(pairs) == 1:
                word = word.replace(pairs[0], new)
            else:
                word = re.sub("|".join(map(re.escape, pairs)), new, word)
            chars = list(dict.fromkeys([char for char in chars if char in word] + [new]))
            for char in chars:
                beside = self.rank_of(char + new)
                if beside is not None and beside < rank and char + new in word:
                    return None
        return [self.spelling[ord(char)] for char in word]

    def _lowest_join(
        self, word: str, chars: list[str], limit: int
    ) -> tuple[int, list[str]] | None:
        """The lowest rank below ``limit`` that two neighbouring parts of ``word`` make, with
        every pair of parts (two characters) that spells its token and occurs; or None."""
        joins: dict[int, list[str]] = {}
        for left in chars:
            for right in chars:
                rank = self.rank_of(left + right)
                if rank is not None and rank < limit:
                    joins.setdefault(rank, []).append(left + right)
        for rank in sorted(joins):
            pairs = [pair for pair in joins[rank] if pair in word]
            if pairs:
                return rank, pairs
        return None


def _distinct_chars(text: str, limit: int) -> list[str] | None:
    """The different characters of ``text``, or None if there are more than ``limit``: one
    ``str.replace`` pass takes each out. (:func:`bpe_course.speed.wordtable.distinct_chars` does the
    same, but that lesson comes after this one.)

    >>> _distinct_chars("abracadabra", 5), _distinct_chars("abracadabra", 4)
    (['a', 'b', 'r', 'c', 'd'], None)
    """
    chars: list[str] = []
    while text:
        if len(chars) == limit:
            return None
        chars.append(text[0])
        text = text.replace(text[0], "")
    return chars
