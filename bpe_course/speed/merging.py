"""Applying merges inside one pretoken, in time close to linear in its length.

The rule is the one :func:`bpe_course.naive.encode_naive` spells out: start from the
bytes, join the adjacent pair whose merge was learned earliest (the leftmost if it occurs
more than once), and repeat until no adjacent pair is a merge. Written as "rescan, pick
the best, join", each step costs time proportional to the length of the pretoken, and a
pretoken of ``n`` bytes needs up to ``n - 1`` steps: ``n**2`` work. That is nothing for a
word of eight bytes and hours for pretokens that real text also contains: a ruler line of
100,000 dashes, a base64 blob, a long number, a page of Chinese with no spaces, a file of
blank lines (GPT-2's pattern makes each of these one pretoken).

So there are two loops here, and they always give the same tokens:

- :func:`merge_short` keeps a list of pair ranks and finds the best with ``min`` and
  ``index``. Each step is still proportional to the length, but it runs inside C, so for
  short pretokens (almost all of them) nothing beats it.
- :func:`merge_long` keeps the pretoken as a linked list of tokens and, for each rank, a
  bucket of the places where a pair of that rank was seen. It takes the lowest rank
  present and joins all its pairs from left to right; a join only looks at its two new
  neighbours, so the work is a few operations per join, plus sorting the buckets.

:func:`apply_merges` picks the loop by length: :data:`SHORT_PIECE` is about where the
buckets start to pay, measured on GPT-2's merges with words, code and single-character runs.

The tables they work from are built once per tokenizer by :func:`merge_tables`. The
tokenizer also asks which tokens it may return at once when a whole pretoken is spelled
like them, without merging: :func:`reachable_tokens` answers that once per tokenizer.
Both are built in passes that run in C (``map``, ``zip``, ``dict``) where they can: a rank
file of two million tokens took seconds in each Python loop.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from heapq import heapify, heappop, heappush
from itertools import chain, compress, islice
from operator import add, itemgetter, lt

from ..safety.quoting import quote

#: The rank of a pair that no merge joins: larger than any real rank.
NO_MERGE = sys.maxsize

#: Pretokens of at most this many bytes use :func:`merge_short`, longer ones :func:`merge_long`.
SHORT_PIECE = 48

#: ``(left id, right id) -> rank``, the lower the earlier the merge was learned.
PairRanks = Mapping[tuple[int, int], int]


class MergeNotInVocabError(ValueError):
    """A merge names (or makes) a token that the vocabulary does not have."""

    def __init__(self, rank: int, part: bytes) -> None:
        self.rank = rank
        self.part = part
        super().__init__(f"merge {rank} uses {quote(part)}, which is not in vocab")


def merge_list(merges: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``merges`` as a new list of ``(bytes, bytes)`` tuples, sharing the given tuples when
    they are such already: copying each of millions of merges took 110 MB more at the peak.

    >>> merge_list([(bytearray(b"a"), b"b")])
    [(b'a', b'b')]
    """
    merges = list(merges)
    if (
        set(map(type, merges)) <= {tuple}
        and set(map(len, merges)) <= {2}
        and set(map(type, chain.from_iterable(merges))) <= {bytes}
    ):
        return merges
    return [(bytes(left), bytes(right)) for left, right in merges]


def merge_tables(
    merges: Sequence[tuple[bytes, bytes]], ids_of: Mapping[bytes, int]
) -> tuple[dict[tuple[int, int], int], list[int]]:
    """``(left id, right id) -> rank`` (the lower, the earlier learned) and ``rank -> the
    id it makes``, for ``merges`` whose tokens ``ids_of`` knows.

    A pair listed twice keeps its first rank, the one that fires. Raises
    :class:`MergeNotInVocabError` for the first merge that names (or makes) bytes
    ``ids_of`` does not have.

    >>> ids_of = {b"a": 0, b"b": 1, b"ab": 2}
    >>> merge_tables([(b"a", b"b")], ids_of)
    ({(0, 1): 0}, [2])
    """
    get = ids_of.get
    firsts, seconds = itemgetter(0), itemgetter(1)
    lefts = list(map(get, map(firsts, merges)))
    rights = list(map(get, map(seconds, merges)))
    merged = list(map(get, map(add, map(firsts, merges), map(seconds, merges))))
    if None in lefts or None in rights or None in merged:
        for rank, (left, right) in enumerate(merges):
            for part in (left, right, left + right):
                if part not in ids_of:
                    raise MergeNotInVocabError(rank, part)
    pair_ranks = dict(zip(zip(lefts, rights), range(len(merged))))
    if len(pair_ranks) < len(merged):  # a pair listed twice: dict() kept its last rank
        pair_ranks = {}
        for rank, pair in enumerate(zip(lefts, rights)):
            pair_ranks.setdefault(pair, rank)
    return pair_ranks, merged


def merge_short(ids: list[int], pair_ranks: PairRanks, merged_ids: Sequence[int]) -> list[int]:
    """Join pairs in ``ids`` (changed in place and returned) by rescanning a list of ranks.

    ``ranks[i]`` is the rank of the pair that starts at ``ids[i]`` (``NO_MERGE`` when no
    merge joins it). Each step joins the lowest-ranked pair (``index`` finds the leftmost)
    and recomputes only the two ranks beside it.

    >>> # merges: (1, 2) -> 10 first, then (10, 3) -> 11
    >>> merge_short([1, 2, 3, 1, 2], {(1, 2): 0, (10, 3): 1}, [10, 11])
    [11, 10]
    """
    rank_of: Callable[..., int] = pair_ranks.get
    ranks = [rank_of(pair, NO_MERGE) for pair in zip(ids, ids[1:])]
    while ranks:
        best = min(ranks)
        if best == NO_MERGE:
            break
        i = ranks.index(best)
        ids[i] = merged_ids[best]
        del ids[i + 1], ranks[i]
        if i < len(ranks):
            ranks[i] = rank_of((ids[i], ids[i + 1]), NO_MERGE)
        if i:
            ranks[i - 1] = rank_of((ids[i - 1], ids[i]), NO_MERGE)
    return ids


def merge_long(ids: list[int], pair_ranks: PairRanks, merged_ids: Sequence[int]) -> list[int]:
    """Join pairs in ``ids`` with a linked list and one bucket of positions per rank.

    Position ``i`` names the token that starts at ``ids[i]``: ``token[i]`` is its id,
    ``next_start[i]`` where the next token starts (``n`` after the last), ``prev_start[i]``
    where the previous one starts (``-1`` before the first), and ``rank_at[i]`` the rank of
    the pair it begins. ``buckets[rank]`` lists the positions where a pair of that rank was
    seen, and a heap holds the ranks that have a bucket.

    Take the lowest rank, sort its bucket, and join its pairs from left to right: that is
    the rule, because a join never creates another pair of the *same* rank (the new token
    is longer than both halves of that pair), so no pair of this rank can appear to the
    left of where we are. A join that creates a pair of a *lower* rank (possible when
    merges are listed out of order) puts the rest of the bucket back and goes to that rank
    first. A position in a bucket is stale when ``rank_at`` has changed since; it can never
    have changed *back*, because a join only makes the tokens it touches longer, so the
    pair starting at ``i`` never returns to an earlier (left, right).

    Each join costs a few list operations and two dictionary lookups; the heap only sees
    the distinct ranks, which are few in a long run of one character.

    >>> merge_long([1, 2, 3, 1, 2], {(1, 2): 0, (10, 3): 1}, [10, 11])
    [11, 10]
    """
    n = len(ids)
    if n < 2:
        return ids
    rank_of: Callable[..., int] = pair_ranks.get
    token = ids
    rank_at = [rank_of(pair, NO_MERGE) for pair in zip(ids, ids[1:])]
    if min(rank_at) == NO_MERGE:
        return ids  # nothing to join (GPT-2 has no token of two spaces, for one)
    rank_at.append(NO_MERGE)
    next_start = list(range(1, n + 1))
    prev_start = list(range(-1, n - 1))
    buckets: dict[int, list[int]] = defaultdict(list)
    for i, rank in enumerate(rank_at):
        buckets[rank].append(i)
    del buckets[NO_MERGE]
    buckets = dict(buckets)
    pending = list(buckets)
    heapify(pending)

    def remember(position: int, rank: int) -> None:
        """Put ``position`` in the bucket of ``rank``, opening the bucket if it is new."""
        bucket = buckets.get(rank)
        if bucket is None:
            buckets[rank] = [position]
            heappush(pending, rank)
        else:
            bucket.append(position)

    while pending:
        current = heappop(pending)
        positions = buckets.pop(current)
        positions.sort()
        joined = merged_ids[current]
        for index, i in enumerate(positions):
            if rank_at[i] != current:
                continue  # stale: this pair changed after it was put in the bucket
            token[i] = joined
            right = next_start[i]
            rank_at[right] = NO_MERGE  # the right-hand token is gone
            after = next_start[i] = next_start[right]
            lowest = NO_MERGE
            if after < n:
                prev_start[after] = i
                lowest = rank_at[i] = rank_of((joined, token[after]), NO_MERGE)
                if lowest != NO_MERGE:
                    remember(i, lowest)
            else:
                rank_at[i] = NO_MERGE
            before = prev_start[i]
            if before >= 0:
                rank = rank_at[before] = rank_of((token[before], joined), NO_MERGE)
                if rank != NO_MERGE:
                    remember(before, rank)
                    lowest = min(lowest, rank)
            if lowest < current:
                # A lower rank appeared: it goes first, and the rest of this bucket waits.
                rest = positions[index + 1 :]
                if rest:
                    buckets[current] = rest
                    heappush(pending, current)
                break
    result = []
    i = 0
    while i < n:
        result.append(token[i])
        i = next_start[i]
    return result


def apply_merges(ids: list[int], pair_ranks: PairRanks, merged_ids: Sequence[int]) -> list[int]:
    """The tokens BPE makes of ``ids``: the scan for short pretokens, the heap for long ones.

    ``pair_ranks`` maps a pair of ids to the rank of the merge that joins it and
    ``merged_ids[rank]`` is the id that merge makes. ``ids`` may be changed in place.
    """
    if len(ids) <= SHORT_PIECE:
        return merge_short(ids, pair_ranks, merged_ids)
    return merge_long(ids, pair_ranks, merged_ids)


class PieceMerger:
    """The ids of one pretoken: its bytes, joined by the merges (:func:`apply_merges`).

    The fast tokenizer's answer for a pretoken that is neither a whole token nor in its
    piece cache. ``byte_ids[b]`` is the id of byte ``b``; when those are the ids 0-255 in any
    order (as in every vocabulary the course meets), ``bytes.translate`` turns a pretoken's
    bytes into ids in C.

    An object of the tables rather than a method of the tokenizer, because the tokenizer's
    piece cache keeps it: a bound method there would point back at the tokenizer, and that
    reference cycle kept every dropped tokenizer in memory until Python's cycle collector
    came round (for GPT-2's, 50 MB freed in a 21 ms pause, inside whatever call happened to
    set the collector off). Without the cycle it is freed the moment it is dropped.

    >>> merger = PieceMerger(list(range(256)), {(108, 108): 0}, [256])  # one merge: l + l
    >>> merger("hello")
    (104, 101, 256, 111)
    """

    def __init__(
        self, byte_ids: Sequence[int], pair_ranks: PairRanks, merged_ids: Sequence[int]
    ) -> None:
        self.byte_ids = byte_ids
        self.byte_table = bytes(byte_ids) if max(byte_ids) < 256 else None
        self.pair_ranks = pair_ranks
        self.merged_ids = merged_ids

    def __call__(self, piece: str) -> tuple[int, ...]:
        data = piece.encode("utf-8")
        if self.byte_table is not None:
            ids = list(data.translate(self.byte_table))
        else:
            ids = list(map(self.byte_ids.__getitem__, data))
        return tuple(apply_merges(ids, self.pair_ranks, self.merged_ids))


def reachable_tokens(
    vocab: Mapping[int, bytes],
    pair_ranks: PairRanks,
    merged_ids: Sequence[int],
    byte_ids: Sequence[int],
) -> set[int]:
    """The ids that the merges turn their own bytes into: BPE(bytes of t) == [t].

    Only such a token may be returned at once when a pretoken is spelled exactly like it;
    for any other, replaying the merges gives several tokens, and that is the answer.
    A vocabulary learned by BPE has only reachable tokens, and so do OpenAI's files, but a
    hand-made one need not (``"abc"`` with merges ``b+c``, ``a+b``, ``ab+c`` is [a, bc]).
    So does any rank file that :func:`bpe_course.formats.ranks.merges_from_ranks` can read: it
    rebuilt each token by running BPE over the lower ranks, which is this check. There,
    tiktoken's rule (a pretoken spelled like a token is that token) and ours agree.

    Encoding every token's bytes would answer this, at a few microseconds a token. When the
    merges are *in order* (each joins two tokens made by earlier merges, and no two merges
    make the same token, as with anything a trainer learns), there is a shortcut: joins
    then happen in rank order, and ``t = left + right`` comes out whole exactly when
    ``left`` and ``right`` do and no join crosses the border between them first. Until a
    join crosses it, each side evolves as if alone, and the tokens touching the border are
    the *spines*: ``left``, its right half, that one's right half, ... down to a byte (and
    ``right``, its left half, ...). A spine token lives from the rank that made it until
    the rank that made the next one up. Walking both spines back in time visits every pair
    that ever faces the border; a pair whose merge rank falls in the time both live would
    be joined. At equal ranks the left side goes first (the leftmost pair is joined first):
    a border pair with the rank that extends the left spine loses, one with the rank that
    extends the right spine wins.

    >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    >>> a, b, c = b"abc"
    >>> sorted(reachable_tokens(vocab, {(b, c): 0, (a, b): 1, (257, c): 2}, [256, 257, 258],
    ...                         list(range(256))))[256:]
    [256, 257]
    """
    size = max(vocab, default=0) + 1
    if size > 4 * len(vocab):
        # Ids far apart would make the lists below huge; such vocabularies are rare.
        return _reachable_by_encoding(vocab, pair_ranks, merged_ids, byte_ids)
    # The merges that can fire, in rank order: a pair listed twice fires at its first rank.
    # A tokenizer's table is built in rank order already, and then needs no sorting.
    effective: Iterable[tuple[tuple[int, int], int]] = pair_ranks.items()
    ranks = pair_ranks.values()
    if not all(map(lt, ranks, islice(ranks, 1, None))):
        effective = sorted(effective, key=itemgetter(1))
    unmade = NO_MERGE
    made_at = [unmade] * size  # the rank of the merge that makes each token; -1 for bytes
    left_half = [0] * size
    right_half = [0] * size
    reachable = bytearray(size)
    for byte_id in byte_ids:
        made_at[byte_id] = -1
        reachable[byte_id] = 1
    rank_of = pair_ranks.get
    for (left, right), made_rank in effective:
        made = merged_ids[made_rank]
        left_made, right_made = made_at[left], made_at[right]
        if left_made >= made_rank or right_made >= made_rank or made_at[made] != unmade:
            return _reachable_by_encoding(vocab, pair_ranks, merged_ids, byte_ids)
        made_at[made] = made_rank
        left_half[made] = left
        right_half[made] = right
        if not (reachable[left] and reachable[right]):
            continue
        left_ends = right_ends = NO_MERGE  # when the current spine tokens are used up
        while left_made >= 0 or right_made >= 0:
            if right_made >= left_made:  # step back past whichever was made last
                right_ends, right = right_made, left_half[right]
                right_made = made_at[right]
            else:
                left_ends, left = left_made, right_half[left]
                left_made = made_at[left]
            rank = rank_of((left, right), NO_MERGE)
            if rank < left_ends and rank <= right_ends:
                break  # this border pair is joined first: ``made`` cannot come out whole
        else:
            reachable[made] = 1
    # The vocabulary's own int objects: new ones for millions of ids took 56 MB more.
    return set(compress(vocab, map(reachable.__getitem__, vocab)))


def _reachable_by_encoding(
    vocab: Mapping[int, bytes],
    pair_ranks: PairRanks,
    merged_ids: Sequence[int],
    byte_ids: Sequence[int],
) -> set[int]:
    """:func:`reachable_tokens` the slow, obvious way: encode each candidate's bytes.

    Only single bytes and tokens some merge makes can be candidates: a longer token that
    no merge makes is never the result of one.
    """
    candidates = set(byte_ids) | {merged_ids[rank] for rank in pair_ranks.values()}
    return {
        token_id
        for token_id in candidates
        if apply_merges([byte_ids[byte] for byte in vocab[token_id]], pair_ranks, merged_ids)
        == [token_id]
    }
