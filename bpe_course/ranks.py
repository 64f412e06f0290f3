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

from collections.abc import Mapping

from .base import Merges


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
        built = len(parts) == 2 and all(ranks.get(part, rank) < rank for part in parts)
        if not built:
            raise ValueError(
                f"token {token!r} (rank {rank}) cannot be built by merging two lower-ranked tokens"
            )
        merges.append((parts[0], parts[1]))
    return merges
