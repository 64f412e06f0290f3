"""The piece cache: most pretokens are answered by one dictionary lookup.

Encoding English prose or code, the same pretokens come back again and again ("the",
" of", four spaces), and almost every one is spelled exactly like one token. So the
tokenizer answers a pretoken from two tables before it runs a single merge:

- ``whole``: every token that the merges build whole from its own bytes, by its text
  (:func:`whole_tokens`). A pretoken spelled like one of those *is* that token.
- :class:`PieceTable`: the ids of the pretokens seen lately, at most :data:`CACHE_SIZE`
  of them, so memory never grows with the input.

Only a pretoken in neither is merged (:class:`bpe_course.speed.merging.PieceMerger`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence

from .merging import PairRanks, reachable_tokens

#: How many pretokens have their ids remembered at once; when that many are, the
#: older half is forgotten. 5 MB of Python's standard library has 23.6k distinct
#: pretokens, which fit; streaming it holds 4.7 MB of new memory at the peak, and a
#: 25 MB file 5.4 MB (tracemalloc, as ``python -m bench.encode`` measures it).
CACHE_SIZE = 24 * 1024

#: Pretokens longer than this many characters are encoded every time, not remembered:
#: they rarely come back, and one of them could be megabytes.
CACHE_LONGEST = 256


class PieceTable(dict):
    """Pretoken text -> its ids, for the pretokens seen lately; at most :data:`CACHE_SIZE`.

    A pretoken that is missing is looked up in ``whole`` (the tokens a pretoken may be
    answered with at once) or else encoded by ``encode_piece``, and then remembered,
    unless it is longer than :data:`CACHE_LONGEST`. When the table is full, the older half
    is forgotten. (Emptying all of it would also throw away the pretokens that keep
    coming back, and they would all have to be found again.)

    A ``dict`` subclass, so that a lookup that hits, which is almost every lookup, runs
    entirely in C; only a miss calls :meth:`__missing__`. ``whole`` stays a separate,
    fixed table. Put in this one, it would be slower to look up in (fewer of its entries
    stay in the processor's cache), and whenever forgetting made Python rebuild this
    table, a second copy of the whole vocabulary would appear in the middle of a stream.

    Two threads may encode with one tokenizer. Each step here is one C call that another
    thread cannot cut in half (``dict`` and ``deque`` operations), so at worst two threads
    remember one pretoken twice or forget more than half, which is harmless; ``order``
    never lists fewer pretokens than the table holds. (Reading the oldest keys off the
    table itself would not be safe: making the iterator or the list can start the garbage
    collector, which can run Python code and let another thread change the table.)
    """

    def __init__(
        self, whole: Mapping[str, int], encode_piece: Callable[[str], tuple[int, ...]]
    ) -> None:
        super().__init__()
        self.whole = whole
        self.encode_piece = encode_piece
        self.order: deque[str] = deque()  # the pretokens remembered, oldest first

    def __missing__(self, piece: str) -> tuple[int, ...]:
        whole = self.whole.get(piece)
        if whole is not None:
            ids: tuple[int, ...] = (whole,)
        else:
            ids = self.encode_piece(piece)
            if len(piece) > CACHE_LONGEST:
                return ids
        order = self.order
        if len(order) >= CACHE_SIZE:
            for _ in range(len(order) // 2 or 1):
                try:
                    self.pop(order.popleft(), None)
                except IndexError:  # another thread forgot the rest
                    break
        self[piece] = ids
        order.append(piece)  # after: a pretoken in the table is always in the list
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
