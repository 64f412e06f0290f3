"""The tokenizer: encode text to ids and decode ids to text with a learned vocabulary.

Encoding replays training in miniature. Special tokens are cut out first (longest first),
the rest is pretokenized with the same pattern, and inside each pretoken the merges are
applied in the order they were learned: always the earliest-learned merge that still
applies (:mod:`bpe_course.merging` does that in time close to linear in the pretoken).

Most of the work is not merging at all. The same pretokens come back again and again
("the", " of", four spaces), and most of them are spelled exactly like one token. So when
the tokenizer is made, it lists every token that the merges build whole from its own
bytes (a pretoken spelled like one of those *is* that token, with no merging), and while
encoding it keeps the ids of the pretokens it has seen lately in a cache of fixed size,
so memory never grows with the input. Encoding a text is then one regex scan and one
cache lookup per pretoken; only a pretoken not seen lately is looked up in the list or
merged.

A token the merges do not build whole is never a shortcut: with merges ``b+c``, ``a+b``,
``ab+c`` the text ``"abc"`` is ``a`` + ``bc`` even though ``"abc"`` is in the vocabulary
(tiktoken would answer ``abc``; vocabularies learned by BPE, and OpenAI's, have no such
tokens, so there the two rules agree).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import reduce
from itertools import islice
from operator import iconcat
from typing import Literal

from . import export
from .base import ENDOFTEXT, check_special_tokens
from .files import read_merge_lines, read_vocab_json, write_merges_txt, write_vocab_json
from .merging import apply_merges, reachable_tokens
from .naive import encode_naive, merge_ranks
from .pretokenize import GPT2_PATTERN, compile_pattern, special_token_regex
from .utf8 import decode_utf8

#: How many pretokens have their ids remembered at once; when that many are, the
#: older half is forgotten.
CACHE_SIZE = 1 << 14

#: Pretokens longer than this many characters are encoded every time, not remembered:
#: they rarely come back, and one of them could be megabytes.
CACHE_LONGEST = 256

#: ``encode_iterable`` collects at least this many characters before encoding them.
STREAM_BUFFER = 1 << 16

#: ``encode_iterable`` holds back the last pretokens within this many characters of what it
#: has read so far, since the next chunk could still change them (regex lookahead).
STREAM_MARGIN = 16

AllowedSpecial = Literal["all", "none"] | Collection[str]


class MergeNotInVocabError(ValueError):
    """A merge names (or makes) a token that the vocabulary does not have."""

    def __init__(self, rank: int, part: bytes) -> None:
        self.rank = rank
        self.part = part
        super().__init__(f"merge {rank} uses {part!r}, which is not in vocab")


class PieceTable(dict):
    """Pretoken text -> its ids, for the pretokens seen lately; at most :data:`CACHE_SIZE`.

    A pretoken that is missing is looked up in ``whole`` (the tokens a pretoken may be
    answered with at once) or else encoded by ``encode_piece``, and then remembered,
    unless it is longer than :data:`CACHE_LONGEST`. When the table is full, the older half
    is forgotten. (Emptying all of it would also throw away the pretokens that keep
    coming back, and they would all have to be found again.)

    A ``dict`` subclass, so that a lookup that hits, which is almost every lookup, runs
    entirely in C; only a miss calls :meth:`__missing__`. ``whole`` stays a separate,
    fixed table: if it were part of this one, forgetting and remembering would make
    Python rebuild a table of the whole vocabulary every so often, and memory would jump
    by that much in the middle of a long stream.
    """

    def __init__(
        self, whole: Mapping[str, tuple[int, ...]], encode_piece: Callable[[str], tuple[int, ...]]
    ) -> None:
        super().__init__()
        self.whole = whole
        self.encode_piece = encode_piece

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids = self.whole.get(piece)
        if ids is None:
            ids = self.encode_piece(piece)
            if len(piece) > CACHE_LONGEST:
                return ids
        if len(self) >= CACHE_SIZE:
            # Forget the oldest half. Another thread may be doing the same: iterate over a
            # copy (made in one step), and let a pretoken already forgotten be.
            for old in list(islice(self.copy(), len(self) // 2 or 1)):
                self.pop(old, None)
        self[piece] = ids
        return ids


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
        # When the 256 byte tokens have the ids 0-255 (in any order, as in every vocabulary
        # the course meets), bytes.translate turns a pretoken's bytes into its ids in C.
        self._byte_table = bytes(self._byte_ids) if max(self._byte_ids) < 256 else None

        # (left id, right id) -> rank, the lower the earlier learned; rank -> merged id.
        self._merge_ranks: dict[tuple[int, int], int] = {}
        self._merged_ids: list[int] = []
        for rank, (left, right) in enumerate(self.merges):
            for part in (left, right, left + right):
                if part not in self._ids_of:
                    raise MergeNotInVocabError(rank, part)
            self._merge_ranks.setdefault((self._ids_of[left], self._ids_of[right]), rank)
            self._merged_ids.append(self._ids_of[left + right])

        self._pieces = PieceTable(self._whole_tokens(), self._encode_piece)

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
        wait_for = STREAM_BUFFER
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
            parts.append(chunk)
            size += len(chunk)
            if size >= wait_for:
                ids, rest = self._encode_stable_prefix("".join(parts))
                yield from ids
                parts, size = [rest], len(rest)
                # What was held back is scanned again next time. Waiting until the buffer
                # is twice that long keeps the total scanning linear even when one pretoken
                # (a megabyte of newlines) stays unfinished for a thousand chunks.
                wait_for = max(STREAM_BUFFER, 2 * size)
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
        # One C-level lookup per pretoken and one C-level list extend with its ids; only
        # a pretoken not seen lately runs Python code (PieceTable.__missing__).
        reduce(iconcat, map(self._pieces.__getitem__, pieces), out)

    def _whole_tokens(self) -> dict[str, tuple[int]]:
        """``{text: (id,)}`` for every token a pretoken may be answered with at once.

        That is every token the merges build whole from its own bytes (for a vocabulary
        learned by BPE, and for OpenAI's files, every token), minus special tokens (they
        are found before pretokenizing, never by spelling) and tokens that are not whole
        UTF-8 characters (no pretoken is spelled like them). When two ids share bytes,
        the lower one is the one the merges make.
        """
        reachable = reachable_tokens(
            self.vocab, self._merge_ranks, self._merged_ids, self._byte_ids
        )
        special_ids = set(self.special_tokens.values())
        whole: dict[str, tuple[int]] = {}
        for token, token_id in self._ids_of.items():
            if token_id in reachable and token_id not in special_ids:
                try:
                    whole[token.decode("utf-8")] = (token_id,)
                except UnicodeDecodeError:
                    continue
        return whole

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """The ids of one pretoken: its bytes, joined by the merges (see :mod:`.merging`)."""
        data = piece.encode("utf-8")
        if self._byte_table is not None:
            ids = list(data.translate(self._byte_table))
        else:
            ids = list(map(self._byte_ids.__getitem__, data))
        return tuple(apply_merges(ids, self._merge_ranks, self._merged_ids))

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
