"""Rank tables: tiktoken's way of storing a BPE tokenizer without a list of merges.

A ``.tiktoken`` file gives every token one number, its *rank*, which is both its id and
its merge priority: to encode, repeatedly join the adjacent pair whose concatenation has
the lowest rank. For a tokenizer learned by BPE, joining by rank and replaying the merges
in the order they were learned are the same thing, because each merge made a new token
with the next rank. So the merge list can be recovered from the ranks alone: rebuild each
token from its bytes using only lower-ranked tokens, and the last two parts standing are
the merge that made it.

The file itself is one line per token, ``base64-token rank``; :func:`read_tiktoken_ranks`
reads it as strictly as it can, since what it accepts must mean the same to tiktoken.
"""

from __future__ import annotations

import binascii
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from operator import itemgetter, lt

from ..base import Merges
from ..safety.quoting import quote
from ..safety.reading import read_bytes
from .gpt2 import MAX_ID

#: tiktoken keeps ranks in 32 bits and uses the largest one to mean "these two do not
#: merge" (``Rank::MAX`` in its Rust core). A token of two or more bytes with this rank is
#: found by tiktoken only when a whole piece is spelled like it, never built by merging.
NO_MERGE_RANK = 2**32 - 1


def check_mergeable_rank(token: bytes, rank: int, where: str) -> None:
    """Raise ``ValueError`` (starting with ``where``) if tiktoken cannot hold ``token`` at
    ``rank``: :data:`NO_MERGE_RANK` on a token of two or more bytes.

    >>> check_mergeable_rank(b"ab", 2**32 - 1, "r.tiktoken:257")
    Traceback (most recent call last):
    ...
    ValueError: r.tiktoken:257: token b'ab' has rank 4294967295 (2**32 - 1), which tiktoken \
reserves to mean 'no merge': it would never build this token by merging, so it would encode \
'abab' as bytes where this package gives tokens; give the token a lower rank
    """
    if rank == NO_MERGE_RANK and len(token) > 1:
        raise ValueError(
            f"{where}: token {quote(token)} has rank {rank} (2**32 - 1), which tiktoken "
            "reserves to mean 'no merge': it would never build this token by merging, so it "
            f"would encode {quote((token * 2).decode('utf-8', 'replace'))} as bytes where this "
            "package gives tokens; give the token a lower rank"
        )


#: A byte order mark, which Windows editors put at the start of a text file.
BOM = b"\xef\xbb\xbf"


def read_tiktoken_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file (gzipped if its name ends in ``.gz``): ``base64-token rank``
    on each line.

    Lines may end in LF, CRLF or a lone CR, as tiktoken's own loader accepts; a byte order
    mark at the start is skipped, and so are blank lines. A token is written in canonical
    base64 and a rank in ASCII digits; ranks fit in 32 bits, and no two tokens share one
    (tiktoken refuses that too). Every error names the file and the line; the file is read
    only if it is a regular file of a sane size (:mod:`bpe_course.safety.reading`).
    """
    path = os.fspath(path)
    data = read_bytes(path, "rank file", gunzip=path.endswith(".gz"))
    ranks: dict[bytes, int] = {}
    for number, token, rank in _rank_lines(path, data):
        size = len(ranks)
        ranks[token] = rank
        if len(ranks) == size:
            first = next(line for line, seen, _ in _rank_lines(path, data) if seen == token)
            raise ValueError(f"{path}:{number}: token {quote(token)} appears twice (first on "
                             f"line {first})")
    if len(set(ranks.values())) < len(ranks):
        raise _shared_rank(path, data)
    return ranks


def _rank_lines(path: str, data: bytes) -> Iterator[tuple[int, bytes, int]]:
    """``(line number, token, rank)`` for each line of a rank file, each line checked."""
    decode, encode = binascii.a2b_base64, binascii.b2a_base64
    for number, line in enumerate(data.removeprefix(BOM).splitlines(), start=1):
        parts = line.split()
        if len(parts) != 2:
            if not parts:
                continue
            raise _bad_line(path, number, line)
        text, digits = parts
        try:
            token = decode(text)
        except binascii.Error:
            raise _bad_line(path, number, line) from None
        if encode(token, newline=False) != text:  # '!', '=' inside, bits after the end...
            raise _bad_line(path, number, line, "(the token is not canonical base64)")
        if not digits.isdigit():  # int() would also take "-5", "+5", "2_56" or " 5"
            shown = quote(digits.decode(errors="replace"))
            raise _bad_line(path, number, line, f"({shown} is not a rank: digits 0-9 only)")
        if len(digits) > 10:  # int() refuses 4,300 digits and more, leading zeros too
            digits = digits.lstrip(b"0") or b"0"
        if len(digits) > 10 or (rank := int(digits)) > MAX_ID:
            raise ValueError(
                f"{path}:{number}: token {quote(token)} has rank {quote(parts[1].decode())}, "
                "too large (ranks must be below 2**32)"
            )
        if rank == NO_MERGE_RANK:
            check_mergeable_rank(token, rank, f"{path}:{number}")
        yield number, token, rank


def _bad_line(path: str, number: int, line: bytes, why: str = "") -> ValueError:
    got = f"{path}:{number}: expected 'base64-token rank', got {quote(line, 80)}"
    return ValueError(f"{got} {why}" if why else got)


def _shared_rank(path: str, data: bytes) -> ValueError:
    """The error for the first rank that two lines of a rank file give to two tokens."""
    owner: dict[int, tuple[int, bytes]] = {}
    for number, token, rank in _rank_lines(path, data):
        if rank in owner:
            line, first = owner[rank]
            return ValueError(
                f"{path}:{number}: rank {rank} is given to {quote(token)} here and to "
                f"{quote(first)} on line {line}; a rank is a token's id, so each token needs "
                "one of its own"
            )
        owner[rank] = (number, token)
    raise AssertionError("no rank is shared")  # pragma: no cover (only called when one is)


def merges_from_ranks(ranks: Mapping[bytes, int]) -> Merges:
    """Recover the merge list, in rank order, from a ``{token: rank}`` table.

    For each multi-byte token, run BPE on its bytes using only lower-ranked tokens; with a
    consistent table that leaves exactly two parts, and those two are the merge that made
    the token. Each part is the table's own ``bytes`` object, not a new copy: for a table
    of millions of tokens the copies took 100 MB, and lookups of them hashed them again.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"lo": 256, b"low": 257, b"er": 258}
    >>> merges_from_ranks(ranks)
    [(b'l', b'o'), (b'lo', b'w'), (b'e', b'r')]
    """
    get = ranks.get
    byte_rank = [get(bytes([byte]), NO_MERGE_RANK + 1) for byte in range(256)]
    items: Iterable[tuple[bytes, int]] = ranks.items()
    values = ranks.values()
    if all(map(lt, values, islice(values, 1, None))):  # files list tokens in rank order
        dense = not ranks or next(reversed(values)) == len(ranks) - 1  # ranks 0, 1, 2, ...
    else:
        items, dense = sorted(items, key=itemgetter(1)), False
    # rank -> the table's bytes object; a list when ranks are 0..n-1 (one memory access)
    token_at: Sequence[bytes] | Mapping[int, bytes] = (
        list(ranks) if dense else dict(zip(values, ranks))
    )
    merges: Merges = []
    lengths: set[int] = set()  # of all tokens, once a long token needs them
    runs: RunJoiner | None = None  # made for the first long token
    for token, rank in items:
        size = len(token)
        if size < 4:  # most tokens of a large vocabulary: answered without a loop
            if size == 1:
                continue
            parts = _parts_of_three(token, rank, get, token_at) if size == 3 else [
                token[:1], token[1:]]
        elif size <= SHORT_TOKEN:
            parts = _rescan_below(token, rank, ranks, token_at)
        else:
            # A long run of few different parts (a token learned from a run of one letter):
            # joined with whole-string operations; anything else by the general join.
            runs = runs or RunJoiner(ranks)
            joined = runs.join_below(token, rank)
            if joined is not None:
                parts = joined
            else:
                lengths = lengths or set(map(len, ranks))
                found = _may_have_parts(token, rank, get, lengths)
                parts = _join_below(token, rank, ranks) if found else [token]
            if len(parts) == 2:  # the table's own objects
                parts = [part if len(part) == 1 else token_at[ranks[part]] for part in parts]
        # A joined part ranks below ``rank`` by construction; a single byte may not.
        first, second = parts[0], parts[-1]
        if (
            len(parts) != 2
            or (len(first) == 1 and byte_rank[first[0]] >= rank)
            or (len(second) == 1 and byte_rank[second[0]] >= rank)
        ):
            raise ValueError(
                f"token {quote(token)} (rank {rank}) cannot be built by merging two "
                "lower-ranked tokens"
            )
        merges.append((first, second))
    return merges


#: :func:`_may_have_parts` gives up (and says maybe) beyond this many places to look.
MANY_SPLITS = 64


def _may_have_parts(
    token: bytes, limit: int, get: Callable[..., int], lengths: set[int]
) -> bool:
    """Could ``token`` be two tokens ranked below ``limit``, end to end? False only if no
    place to cut it leaves two such tokens (``lengths``: the lengths tokens have).

    Joining the bytes of a long token costs time and memory that grow with its length, and
    one of 100 MB that cannot be built took 20 s and 2.6 GB to refuse; this looks only at
    the few lengths the two parts could have (at most :data:`MANY_SPLITS` of them).

    >>> _may_have_parts(b"abcd", 9, {b"ab": 1, b"cd": 2}.get, {1, 2})
    True
    >>> _may_have_parts(b"x" * 10**6, 9, {}.get, {1, 2})
    False
    """
    size = len(token)
    cuts = [length for length in lengths if length < size and size - length in lengths]
    if len(cuts) > MANY_SPLITS:
        return True
    return any(get(token[:cut], limit) < limit and get(token[cut:], limit) < limit for cut in cuts)


def _parts_of_three(
    token: bytes, limit: int, get: Callable[..., int], token_at: Sequence[bytes] | Mapping
) -> list[bytes]:
    """:func:`_rescan_below` for a token of three bytes: its lower-ranked pair (the left one
    on a tie) joined, if that ranks below ``limit``; the pair is ``token_at``'s object.

    >>> _parts_of_three(b"abc", 9, {b"ab": 5, b"bc": 3}.get, {5: b"ab", 3: b"bc"})
    [b'a', b'bc']
    """
    left, right = get(token[:2], limit), get(token[1:], limit)
    if min(left, right) >= limit:
        return [token[:1], token[1:2], token[2:]]
    return [token_at[left], token[2:]] if left <= right else [token[:1], token_at[right]]


#: Tokens of at most this many bytes are rebuilt by :func:`_rescan_below`, longer ones by
#: :func:`_join_below` (on OpenAI's tables, where almost every token is short, the plain
#: rescan is the faster: 0.55 s against 0.94 s for cl100k_base's 100k tokens).
SHORT_TOKEN = 64


def _rescan_below(
    token: bytes, limit: int, ranks: Mapping[bytes, int], token_at: Sequence[bytes] | Mapping
) -> list[bytes]:
    """What :func:`_join_below` returns, found the plain way: after each join, look at every
    adjacent pair again. Time grows with the cube of the token's length, which is nothing
    for a short token. A joined part is ``token_at[its rank]``, the table's own object.

    >>> ranks = {b"lo": 256, b"low": 257, b"er": 258}
    >>> _rescan_below(b"lower", 258, ranks, {rank: token for token, rank in ranks.items()})
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
        parts[best_index : best_index + 2] = [token_at[best_rank]]
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
        from ..speed.wordtable import distinct_chars  # the trainer's: 10 ms to import

        word = token.decode("latin-1").translate(self.byte_chars)
        chars = distinct_chars(word, FEW_PARTS)
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
