"""The tokenizer: encode text to ids and decode ids to text with a learned vocabulary.

Encoding replays training in miniature. Special tokens are cut out first (longest first),
the rest is pretokenized with the same pattern, and inside each pretoken the merges are
applied in the order they were learned: always the earliest-learned merge that still
applies. Because the same pretoken comes back again and again ("the", " of", four spaces),
each one's ids are cached; the cache has a fixed size so memory never grows with the input.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Literal

from . import export
from .base import ENDOFTEXT, check_special_tokens
from .files import read_merge_lines, read_vocab_json, write_merges_txt, write_vocab_json
from .naive import encode_naive, merge_ranks
from .pretokenize import GPT2_PATTERN, compile_pattern, special_token_regex
from .utf8 import decode_utf8

#: Pretokens whose ids are remembered at once; the cache is emptied when it is full.
CACHE_SIZE = 1 << 14

#: ``encode_iterable`` collects at least this many characters before encoding them.
STREAM_BUFFER = 1 << 16

#: ``encode_iterable`` holds back the last pretokens within this many characters of what it
#: has read so far, since the next chunk could still change them (regex lookahead).
STREAM_MARGIN = 16

#: The rank of a pair that no merge joins: larger than any real rank.
NO_MERGE = sys.maxsize

AllowedSpecial = Literal["all", "none"] | Collection[str]


class MergeNotInVocabError(ValueError):
    """A merge names (or makes) a token that the vocabulary does not have."""

    def __init__(self, rank: int, part: bytes) -> None:
        self.rank = rank
        self.part = part
        super().__init__(f"merge {rank} uses {part!r}, which is not in vocab")


class Tokenizer:
    """A byte-level BPE tokenizer built from a vocabulary and its merges.

    ``vocab`` maps ids to bytes and must contain every single byte; ``merges`` lists pairs
    of tokens in the order they were learned, and each pair's concatenation must be in
    ``vocab``. A special token missing from ``vocab`` is appended with the next free id.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Iterable[str] | None = None,
        pattern: str = GPT2_PATTERN,
        *,
        name: str = "bpe_course",
    ) -> None:
        self.name = name
        self.vocab: dict[int, bytes] = {int(i): bytes(token) for i, token in vocab.items()}
        self.merges: list[tuple[bytes, bytes]] = [(bytes(a), bytes(b)) for a, b in merges]
        self.pattern = pattern
        self._compiled = compile_pattern(pattern)

        # When two ids share the same bytes, the lower id is the one encoding produces.
        self._ids_of: dict[bytes, int] = {}
        for token_id, token in sorted(self.vocab.items()):
            self._ids_of.setdefault(token, token_id)

        self.special_tokens: dict[str, int] = {}
        for token in check_special_tokens(special_tokens):
            encoded = token.encode("utf-8")
            if encoded not in self._ids_of:
                new_id = max(self.vocab, default=-1) + 1
                self.vocab[new_id] = encoded
                self._ids_of[encoded] = new_id
            self.special_tokens[token] = self._ids_of[encoded]
        self._special_finder = special_token_regex(list(self.special_tokens))
        self._longest_special = max(map(len, self.special_tokens), default=0)

        missing = [byte for byte in range(256) if bytes([byte]) not in self._ids_of]
        if missing:
            raise ValueError(
                f"vocab has no token for {len(missing)} single bytes (first: 0x{missing[0]:02x}); "
                "a byte-level vocabulary needs all 256"
            )
        self._byte_ids = [self._ids_of[bytes([byte])] for byte in range(256)]
        # Pretokens that are whole tokens skip the merge loop (special tokens never do).
        special_ids = set(self.special_tokens.values())
        self._whole_tokens = {
            token: token_id
            for token, token_id in self._ids_of.items()
            if token_id not in special_ids
        }

        # (left id, right id) -> rank, the lower the earlier learned; rank -> merged id.
        self._merge_ranks: dict[tuple[int, int], int] = {}
        self._merged_ids: list[int] = []
        for rank, (left, right) in enumerate(self.merges):
            for part in (left, right, left + right):
                if part not in self._ids_of:
                    raise MergeNotInVocabError(rank, part)
            self._merge_ranks.setdefault((self._ids_of[left], self._ids_of[right]), rank)
            self._merged_ids.append(self._ids_of[left + right])
        self._cache: dict[str, tuple[int, ...]] = {}

    def __repr__(self) -> str:
        return (
            f"Tokenizer(vocab_size={len(self.vocab)}, merges={len(self.merges)}, "
            f"special_tokens={list(self.special_tokens)})"
        )

    @property
    def vocab_size(self) -> int:
        """How many ids this tokenizer knows (bytes, merges and special tokens)."""
        return len(self.vocab)

    # tiktoken's names for the same facts, so code written for tiktoken.Encoding runs here.

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``; ids may have gaps)."""
        return self.max_token_value + 1

    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included."""
        return max(self.vocab)

    @property
    def eot_token(self) -> int | None:
        """The id of ``<|endoftext|>``, or None when this tokenizer has no such token."""
        return self.special_tokens.get(ENDOFTEXT)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts."""
        return set(self.special_tokens)

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary (not special) token, sorted."""
        special_ids = set(self.special_tokens.values())
        return sorted(token for i, token in self.vocab.items() if i not in special_ids)

    # Encoding -----------------------------------------------------------------------------

    def encode(self, text: str, *, allowed_special: AllowedSpecial = "all") -> list[int]:
        """Encode ``text`` to token ids.

        By default every special token in ``text`` becomes its single id. Pass
        ``allowed_special="none"`` (or a set naming the ones to honour) to encode the others
        as ordinary text, as you would for text typed by a user.
        """
        if not isinstance(text, str):
            raise TypeError(f"encode expects str, got {type(text).__name__}")
        finder = self._finder_for(allowed_special)
        ids: list[int] = []
        if finder is None:
            self._encode_ordinary(text, ids)
            return ids
        for index, part in enumerate(finder.split(text)):
            if index % 2:
                ids.append(self.special_tokens[part])
            elif part:
                self._encode_ordinary(part, ids)
        return ids

    def encode_naive(self, text: str, *, allowed_special: AllowedSpecial = "all") -> list[int]:
        """The reference for :meth:`encode`: the same steps with no shortcut and no cache.

        Special tokens are cut out, the rest is pretokenized, and each pretoken is split
        by :func:`bpe_course.naive.encode_naive`, which replays the merges in the order they
        were learned. Slow (it rescans a pretoken after every merge), and the definition the
        fast path is tested against.
        """
        finder = self._finder_for(allowed_special)
        parts = [text] if finder is None else finder.split(text)
        ranks = merge_ranks(self.merges)
        ids: list[int] = []
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
                continue
            for piece in self._compiled.findall(part):
                tokens = encode_naive(piece.encode("utf-8"), ranks)
                ids += [self._ids_of[token] for token in tokens]
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating special tokens as plain text."""
        return self.encode(text, allowed_special="none")

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Encode a stream of strings (e.g. a file opened in text mode) lazily.

        Yields exactly the ids ``encode("".join(iterable))`` would return, while holding
        only a small window of text: a pretoken or special token that might continue in the
        next chunk is kept back until it is complete.
        """
        parts: list[str] = []
        size = 0
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
            parts.append(chunk)
            size += len(chunk)
            if size >= STREAM_BUFFER:
                ids, rest = self._encode_stable_prefix("".join(parts))
                yield from ids
                parts, size = [rest], len(rest)
        yield from self.encode("".join(parts))

    def _finder_for(self, allowed_special: AllowedSpecial):
        if allowed_special == "all":
            return self._special_finder
        if allowed_special == "none":
            return None
        if isinstance(allowed_special, str):
            raise ValueError(
                f"allowed_special must be 'all', 'none' or a set of tokens, got {allowed_special!r}"
            )
        unknown = set(allowed_special) - set(self.special_tokens)
        if unknown:
            raise ValueError(f"allowed_special names unknown special tokens: {sorted(unknown)}")
        return special_token_regex(list(allowed_special))

    def _encode_ordinary(self, text: str, out: list[int]) -> None:
        """Append the ids of ``text`` (no special tokens in it) to ``out``."""
        self._encode_pieces(self._compiled.findall(text), out)

    def _encode_pieces(self, pieces: Iterable[str], out: list[int]) -> None:
        cache = self._cache
        for piece in pieces:
            ids = cache.get(piece)
            if ids is None:
                ids = self._encode_piece(piece)
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                cache[piece] = ids
            out.extend(ids)

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """Apply merges inside one pretoken: the earliest-learned applicable merge first.

        A pretoken that is itself a token is returned as that token, as tiktoken does. For a
        vocabulary learned by BPE this is exactly what the merges would give (training
        split every word the way this loop does), and common words skip the loop.

        ``ranks[i]`` is the rank of the pair that starts at ``ids[i]`` (``NO_MERGE`` when no
        merge joins it). Each step merges the lowest-ranked pair (the leftmost on a tie) and
        recomputes only the two ranks next to it, so a step costs one ``min`` and a few
        list operations.
        """
        data = piece.encode("utf-8")
        whole = self._whole_tokens.get(data)
        if whole is not None:
            return (whole,)
        byte_ids = self._byte_ids
        ids = [byte_ids[byte] for byte in data]
        rank_of = self._merge_ranks.get
        merged_ids = self._merged_ids
        ranks = [rank_of(pair, NO_MERGE) for pair in zip(ids, ids[1:])]
        while len(ids) > 1:
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
        return tuple(ids)

    def _encode_stable_prefix(self, text: str) -> tuple[list[int], str]:
        """Encode the part of ``text`` that no further text could change; return the rest.

        A special token is final once the longest special token would fit after its start.
        In ordinary text, a pretoken is final when it ends well before the trailing
        whitespace (a whitespace run can grow, and the patterns look one character ahead).
        """
        ids: list[int] = []
        position = 0
        longest = self._longest_special
        if self._special_finder is not None:
            for match in self._special_finder.finditer(text):
                if match.start() + longest > len(text):
                    break
                self._encode_ordinary(text[position : match.start()], ids)
                ids.append(self.special_tokens[match.group()])
                position = match.end()
        # A special token could still begin in the last ``longest - 1`` characters.
        region_end = max(position, len(text) - max(longest - 1, 0))
        region = text[position:region_end]
        stable_end = len(region.rstrip()) - STREAM_MARGIN
        pieces = self._compiled.findall(region)
        end = len(region)
        if sum(map(len, pieces)) == end:
            # The pieces tile the region (true of GPT-2's and GPT-4's patterns), so walking
            # back from the end finds where the last stable piece stops.
            while pieces and end > stable_end:
                end -= len(pieces.pop())
        else:
            # A pattern that skips characters: locate each piece instead.
            pieces, end = [], 0
            for match in self._compiled.finditer(region):
                if match.end() > stable_end:
                    break
                pieces.append(match.group())
                end = match.end()
        self._encode_pieces(pieces, ids)
        return ids, text[position + end :]

    # Decoding -----------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined together."""
        vocab = self.vocab
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        try:
            return b"".join([vocab[token_id] for token_id in ids])
        except (KeyError, TypeError):
            bad = next(i for i in ids if not isinstance(i, int) or i not in vocab)
            raise ValueError(
                f"unknown token id {bad!r}: this tokenizer's ids are "
                f"{min(vocab)}..{max(vocab)} ({len(vocab)} tokens)"
            ) from None

    def decode(self, ids: Iterable[int]) -> str:
        """Decode ids to text; bytes that are not valid UTF-8 become U+FFFD."""
        return decode_utf8(self.decode_bytes(ids))

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id (tiktoken's name); an unknown id raises ``KeyError``."""
        try:
            return self.vocab[token_id]
        except (KeyError, TypeError):
            raise KeyError(f"unknown token id {token_id!r}") from None

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """The bytes of each id, one entry per token."""
        return [self.decode_single_token_bytes(token_id) for token_id in ids]

    def decode_with_offsets(self, ids: Iterable[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` and, for each token, the index of the character it starts in.

        A token that begins in the middle of a character (its first byte is a UTF-8
        continuation byte, 0x80-0xBF) is given the character it continues, so each offset
        points at the first character the token contributes to. The bytes must be valid
        UTF-8 (as tiktoken requires); a text cut inside a character raises ``ValueError``.
        """
        pieces = self.decode_tokens_bytes(ids)
        offsets: list[int] = []
        characters = 0
        for piece in pieces:
            continues = bool(piece) and 0x80 <= piece[0] < 0xC0
            offsets.append(max(0, characters - continues))
            characters += sum(1 for byte in piece if not 0x80 <= byte < 0xC0)
        try:
            text = b"".join(pieces).decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"the tokens' bytes are not valid UTF-8 ({error.reason})") from None
        return text, offsets

    # Files --------------------------------------------------------------------------------

    def save(self, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> None:
        """Save in GPT-2's format: ``vocab.json`` ``{token: id}`` and ``merges.txt``.

        Each file is written to a temporary name and renamed, so a crash never leaves a
        half-written file behind.
        """
        write_vocab_json(vocab_path, self.vocab)
        write_merges_txt(merges_path, self.merges)

    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike[str],
        merges_path: str | os.PathLike[str],
        special_tokens: Iterable[str] | None = None,
        pattern: str = GPT2_PATTERN,
    ) -> Tokenizer:
        """Load a tokenizer saved by :meth:`save` (or GPT-2's ``encoder.json``/``vocab.bpe``)."""
        vocab = read_vocab_json(vocab_path)
        numbered = read_merge_lines(merges_path)
        merges = [(left, right) for _, left, right in numbered]
        try:
            return cls(vocab, merges, special_tokens, pattern)
        except MergeNotInVocabError as error:
            line = numbered[error.rank][0]
            raise ValueError(
                f"{os.fspath(merges_path)}:{line}: merge uses {error.part!r}, "
                f"which is not in {os.fspath(vocab_path)}"
            ) from None

    # Exports (the work and the explanations are in bpe_course/export.py) ------------------

    def save_hf(self, path: str | os.PathLike[str]) -> None:
        """Write a Hugging Face ``tokenizer.json`` that encodes exactly as this tokenizer."""
        export.save_hf(self, path)

    def to_hf(self):
        """This tokenizer as a live ``tokenizers.Tokenizer`` (same ids)."""
        return export.to_hf(self)

    def to_tiktoken_params(self, name: str) -> dict:
        """Keyword arguments for ``tiktoken.Encoding(**params)`` with the same ids."""
        return export.to_tiktoken_params(self, name)

    def to_tiktoken(self, name: str):
        """This tokenizer as a live ``tiktoken.Encoding`` (same ids)."""
        return export.to_tiktoken(self, name)

    def save_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Write a ``.tiktoken`` rank file (special tokens and pattern are not in it)."""
        export.save_tiktoken(self, path)
