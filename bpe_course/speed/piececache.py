"""The piece cache: most pretokens are answered by one dictionary lookup.

Encoding English prose or code, the same pretokens come back again and again ("the",
" of", four spaces), and almost every one is spelled exactly like one token. So the
tokenizer answers a pretoken from two tables before it runs a single merge:

- ``whole``: every token that the merges build whole from its own bytes, by its text
  (:func:`whole_tokens`). A pretoken spelled like one of those *is* that token.
- :class:`PieceTable`: the ids of the pretokens seen lately, in at most a set number of
  megabytes (:data:`CACHE_MB` unless the tokenizer's ``cache_mb`` says otherwise), so
  memory never grows with the input.

Only a pretoken in neither is merged (:class:`bpe_course.speed.merging.PieceMerger`).
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from .merging import PairRanks, reachable_tokens

#: The piece table's default bound, in megabytes (10**6 bytes) of the entries' own memory:
#: the pretokens' strings, their tuples of ids, and :data:`ENTRY_BYTES` each for the table.
#: 5 MB of C headers has about 33k distinct pretokens (about 6 MB of entries) and 5 MB of
#: manual pages in 25 languages about 71k (about 18 MB), so both fit: a tokenizer that meets
#: such a text again answers every pretoken with one lookup. Set ``tokenizer.cache_mb``.
CACHE_MB = 32.0

#: What one entry costs beyond its string and its tuple: the table's slot and index (with
#: the spare room a ``dict`` keeps) and the slot in the list of the order.
ENTRY_BYTES = 64

#: Pretokens longer than this many characters are encoded every time, not remembered:
#: they rarely come back, and one of them could be megabytes.
CACHE_LONGEST = 256


class PieceTable(dict):
    """Pretoken text -> its ids, for the pretokens seen lately, in at most ``cache_mb``
    megabytes (:data:`CACHE_MB` unless given).

    A pretoken that is missing is looked up in ``whole`` (the tokens a pretoken may be
    answered with at once) or else encoded by ``encode_piece``, and then remembered,
    unless it is longer than :data:`CACHE_LONGEST`. Each entry is counted at the size of
    its string and its tuple (``sys.getsizeof``) plus :data:`ENTRY_BYTES`, and ``size`` is
    the sum. When remembering one more would pass the bound, the oldest entries are
    forgotten until the table holds at most half of it. (Emptying all of it would also
    throw away the pretokens that keep coming back, and they would all have to be found
    again.) A bound is in bytes, not entries, because entries differ: a Chinese phrase and
    its ids take several times what " the" and its one id take.

    A ``dict`` subclass, so that a lookup that hits, which is almost every lookup, runs
    entirely in C; only a miss calls :meth:`__missing__`. ``whole`` stays a separate,
    fixed table. Put in this one, it would be slower to look up in (fewer of its entries
    stay in the processor's cache), and whenever forgetting made Python rebuild this
    table, a second copy of the whole vocabulary would appear in the middle of a stream.

    Two threads may encode with one tokenizer. Each step here is one C call that another
    thread cannot cut in half (``dict`` and ``deque`` operations), so at worst two threads
    remember one pretoken twice or forget more than half, which is harmless; ``order``
    never lists fewer pretokens than the table holds, and ``size`` is only a count, which a
    race can leave a little off until the table is next emptied. (Reading the oldest keys
    off the table itself would not be safe: making the iterator or the list can start the
    garbage collector, which can run Python code and let another thread change the table.)

    >>> table = PieceTable({"a": 97}, lambda piece: tuple(map(ord, piece)), cache_mb=0.0003)
    >>> table["a"], table["bc"], table["de"], table.size <= table.limit == 300
    ((97,), (98, 99), (100, 101), True)
    >>> list(table)  # the oldest two were forgotten to make room for "de"
    ['de']
    """

    def __init__(
        self,
        whole: Mapping[str, int],
        encode_piece: Callable[[str], tuple[int, ...]],
        cache_mb: float | None = None,
    ) -> None:
        super().__init__()
        self.whole = whole
        self.encode_piece = encode_piece
        self.order: deque[str] = deque()  # the pretokens remembered, oldest first
        self.size = 0  # bytes of the entries remembered, as counted above
        self.limit = 0
        self.set_limit(CACHE_MB if cache_mb is None else cache_mb)

    def set_limit(self, cache_mb: float) -> None:
        """Bound the table to ``cache_mb`` megabytes, forgetting what no longer fits.

        >>> PieceTable({}, tuple).set_limit(-1)
        Traceback (most recent call last):
        ValueError: cache_mb must be a number >= 0 (megabytes), got -1
        """
        if isinstance(cache_mb, bool) or not isinstance(cache_mb, (int, float)) or not (
            0 <= cache_mb < float("inf")
        ):
            raise ValueError(f"cache_mb must be a number >= 0 (megabytes), got {cache_mb!r}")
        self.limit = int(cache_mb * 1_000_000)
        if self.size > self.limit:
            self.forget(self.limit // 2)

    def forget(self, keep: int) -> None:
        """Forget the oldest entries until at most ``keep`` bytes of them are left."""
        order, getsizeof = self.order, sys.getsizeof
        while self.size > keep:
            try:
                piece = order.popleft()
            except IndexError:  # another thread forgot the rest
                self.size = 0
                break
            ids = self.pop(piece, None)
            if ids is not None:
                self.size -= getsizeof(piece) + getsizeof(ids) + ENTRY_BYTES
        if not order:
            self.size = 0

    def clear(self) -> None:
        """Forget every entry (the bound stays)."""
        super().clear()
        self.order.clear()
        self.size = 0

    def __missing__(self, piece: str) -> tuple[int, ...]:
        whole = self.whole.get(piece)
        if whole is not None:
            ids: tuple[int, ...] = (whole,)
        else:
            ids = self.encode_piece(piece)
            if len(piece) > CACHE_LONGEST:
                return ids
        cost = sys.getsizeof(piece) + sys.getsizeof(ids) + ENTRY_BYTES
        if self.size + cost > self.limit:
            self.forget(self.limit // 2 - cost)
            if cost > self.limit:
                return ids
        self[piece] = ids
        self.order.append(piece)  # after: a pretoken in the table is always in the list
        self.size += cost
        return ids


def whole_tokens(
    vocab: Mapping[int, bytes],
    ids_of: Mapping[bytes, int],
    pair_ranks: PairRanks,
    merged_ids: Sequence[int],
    byte_ids: Sequence[int],
    special_ids: set[int],
) -> dict[str, int]:
    """``{text: id}`` for every token a pretoken may be answered with at once.

    That is every token the merges build whole from its own bytes (for a vocabulary
    learned by BPE, and for OpenAI's files, every token), minus special tokens (they
    are found before pretokenizing, never by spelling) and tokens that are not whole
    UTF-8 characters (no pretoken is spelled like them). ``ids_of`` maps each token's bytes
    to its id; when two ids share bytes it holds the lower one, the one the merges make.
    The ids are kept bare, not as the 1-tuples a pretoken's ids are: for a vocabulary of
    millions of tokens, the tuples alone were 100 MB.

    >>> ids_of = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    >>> vocab = {i: token for token, i in ids_of.items()}
    >>> whole = whole_tokens(vocab, ids_of, {(97, 98): 0}, [256], list(range(256)), set())
    >>> whole["ab"], whole["a"], len(whole)  # the 128 ASCII bytes and "ab"
    (256, 97, 129)
    """
    reachable = reachable_tokens(vocab, pair_ranks, merged_ids, byte_ids)
    whole: dict[str, int] = {}
    for token, token_id in ids_of.items():
        if token_id in reachable and token_id not in special_ids:
            try:
                whole[token.decode("utf-8")] = token_id
            except UnicodeDecodeError:
                continue
    return whole
