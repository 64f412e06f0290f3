"""The tokenizer: encode text to ids and decode ids to text with a learned vocabulary.

Encoding replays training in miniature. Special tokens are cut out first (longest first; see
:mod:`bpe_course.safety.specials`), the rest is pretokenized with the same pattern, and inside
each pretoken the merges are applied in the order they were learned: always the
earliest-learned merge that still applies. :meth:`Tokenizer.encode_naive` is that sentence
as a loop, and the definition every fast path is tested against.

:meth:`Tokenizer.encode` gives the same ids faster, through three named objects, one per
idea, each in :mod:`bpe_course.speed`:

- ``Splitter``: the same pretokens, found by the standard library's faster ``re``;
- ``PieceTable``: most pretokens are a whole token or were seen lately, so one dictionary
  lookup answers them;
- ``PieceMerger``: the rest are merged in time close to linear in their length.

A token the merges do not build whole is never a shortcut: with merges ``b+c``, ``a+b``,
``ab+c`` the text ``"abc"`` is ``a`` + ``bc`` even though ``"abc"`` is in the vocabulary
(tiktoken would answer ``abc``; vocabularies learned by BPE, and OpenAI's, have no such
tokens, so there the two rules agree).
"""

from __future__ import annotations

import codecs
import copy
import operator
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial, reduce

from .base import (
    check_special_tokens,
    checked_ids,
    checked_text,
    checked_texts,
    token_id_of,
)
from .formats import export
from .formats.gpt2 import read_merge_lines, read_vocab_json, write_merges_txt, write_vocab_json
from .naive import encode_naive, merge_ranks
from .pretokens import GPT2_PATTERN
from .safety.quoting import quote
from .safety.specials import AllowedSpecial, DisallowedSpecial, SpecialTokens
from .speed.batches import map_texts
from .speed.cuts import CUT_REACH, ENCODE_SPAN, safe_cut_regex, spans_between_safe_cuts
from .speed.fastsplit import Splitter
from .speed.merging import MergeNotInVocabError, PieceMerger, merge_list, merge_tables
from .speed.piececache import PieceTable, whole_tokens
from .speed.streaming import StreamEncoder, checked_chunks
from .tiktoken_methods import TiktokenMethods
from .utf8 import replace_lone_surrogates


class UnknownTokenError(KeyError, ValueError):
    """A token id that the vocabulary does not have.

    A ``KeyError``, as tiktoken raises, and a ``ValueError``, as for any other bad input,
    so code written for either catches it.
    """

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0])


class Tokenizer(TiktokenMethods, export.ExportMethods):
    """A byte-level BPE tokenizer built from a vocabulary and its merges.

    ``vocab`` maps ids to bytes and must contain every single byte; ``merges`` lists pairs
    of tokens in the order they were learned, and each pair's concatenation must be in
    ``vocab``. A special token missing from ``vocab`` is appended with the next free id.
    It saves itself in GPT-2's files here, and in Hugging Face's and tiktoken's formats
    through :class:`~bpe_course.formats.export.ExportMethods`; the rest of tiktoken's
    surface comes from :class:`~bpe_course.tiktoken_methods.TiktokenMethods`.

    >>> from bpe_course import train_from_counts
    >>> vocab, merges = train_from_counts({"low": 5, "lower": 2, "newest": 6}, 259)
    >>> tokenizer = Tokenizer(vocab, merges, ["<|endoftext|>"])
    >>> ids = tokenizer.encode("lowest<|endoftext|>")
    >>> [tokenizer.decode([i]) for i in ids], ids[-1]
    (['lo', 'wes', 't', '<|endoftext|>'], 259)
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]] | None,
        special_tokens: Iterable[str] | None = None,
        pattern: str = GPT2_PATTERN,
        *,
        name: str = "bpe_course",
        tables: tuple[dict[tuple[int, int], int], list[int], dict[str, int]] | None = None,
    ) -> None:
        """``tables``: the merge tables and whole tokens, already built and trusted (from the
        start-up cache, :mod:`bpe_course.speed.startcache`); ``vocab`` is then kept as given,
        and ``merges`` may be None: made from the tables when first asked for."""
        self.name = name
        if tables is None:
            vocab = {int(i): bytes(token) for i, token in vocab.items()}
        self.vocab: dict[int, bytes] = vocab  # type: ignore[assignment]  # (a new dict)
        self._merges = None if merges is None else merge_list(merges)
        self.pattern = pattern
        self._compiled = Splitter(pattern, guarded=True)  # a pattern from a file, perhaps
        self._safe_cuts = safe_cut_regex(pattern)  # None: no place is proven safe

        # When two ids share the same bytes, the lower id is the one encoding produces.
        self._ids_of: dict[bytes, int] = dict(zip(self.vocab.values(), self.vocab))
        if len(self._ids_of) < len(self.vocab):  # some do: write the lowest id last, so it wins
            self._ids_of = {token: i for i, token in sorted(self.vocab.items(), reverse=True)}

        self.special_tokens: dict[str, int] = {}
        for token in check_special_tokens(special_tokens):
            encoded = token.encode("utf-8")
            if encoded not in self._ids_of:
                new_id = max(self.vocab, default=-1) + 1
                self.vocab[new_id] = encoded
                self._ids_of[encoded] = new_id
            self.special_tokens[token] = self._ids_of[encoded]
        self._specials = SpecialTokens(self.special_tokens)

        missing = [byte for byte in range(256) if bytes([byte]) not in self._ids_of]
        if missing:
            raise ValueError(
                f"vocab has no token for {len(missing)} single bytes (first: 0x{missing[0]:02x}); "
                "a byte-level vocabulary needs all 256"
            )
        self._byte_ids = [self._ids_of[bytes([byte])] for byte in range(256)]

        # (left id, right id) -> rank, the lower the earlier learned; rank -> merged id.
        if tables is not None:
            self._merge_ranks, self._merged_ids, whole = tables
        else:
            self._merge_ranks, self._merged_ids = merge_tables(self.merges, self._ids_of)
            whole = whole_tokens(self.vocab, self._ids_of, self._merge_ranks, self._merged_ids,
                                 self._byte_ids, set(self.special_tokens.values()))
        merger = PieceMerger(self._byte_ids, self._merge_ranks, self._merged_ids)
        self._pieces = PieceTable(whole, merger)

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges in the order learned (made on first use from a cached tokenizer's
        tables: 16 MB for o200k_base, which encoding never needs)."""
        if self._merges is None:
            vocab = self.vocab
            self._merges = [(vocab[left], vocab[right]) for left, right in self._merge_ranks]
        return self._merges

    def built_tables(self) -> tuple[dict[tuple[int, int], int], list[int], dict[str, int]]:
        """What ``tables=`` takes: the merge tables and the whole tokens, to be stored."""
        return self._merge_ranks, self._merged_ids, self._pieces.whole

    def __reduce__(self):
        """Pickle what defines the tokenizer (vocabulary, merges, special tokens, pattern,
        name) and build it again on loading; the caches and lookup tables stay behind."""
        rebuild = partial(type(self), name=self.name)
        return rebuild, (self.vocab, self.merges, list(self.special_tokens), self.pattern)

    def __copy__(self) -> Tokenizer:
        """A new object sharing every table (``copy.copy`` would otherwise go through
        :meth:`__reduce__` and build the tokenizer again)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def __repr__(self) -> str:
        return (
            f"Tokenizer(vocab_size={len(self.vocab)}, merges={len(self.merges)}, "
            f"special_tokens={list(self.special_tokens)})"
        )

    @property
    def vocab_size(self) -> int:
        """How many ids this tokenizer knows (bytes, merges and special tokens)."""
        return len(self.vocab)

    # Encoding -----------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encode ``text`` to token ids.

        Special tokens follow tiktoken's rules (:mod:`bpe_course.safety.specials`), but the
        default reads every one as its id, as CS336's tokenizer does: a training corpus marks
        its documents with ``<|endoftext|>``. For text from users, pass
        ``allowed_special=set()`` (tiktoken's default: refuse it) or call
        :meth:`encode_ordinary` (plain text). A lone surrogate is encoded as U+FFFD, after
        surrogate pairs are joined into the characters they stand for, as tiktoken does.
        """
        parts = self._specials.split(text, allowed_special, disallowed_special, "encode")
        ids: list[int] = []
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
            elif part:
                self._encode_ordinary(part, ids)
        return ids

    def encode_naive(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """The reference for :meth:`encode`: the same steps with no shortcut and no cache.

        Special tokens are cut out, the rest is pretokenized, and each pretoken is split
        by :func:`bpe_course.naive.encode_naive`, which replays the merges in the order they
        were learned. Slow (it rescans a pretoken after every merge), and the definition the
        fast path is tested against.
        """
        parts = self._specials.split(text, allowed_special, disallowed_special, "encode_naive")
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
        """Encode ``text`` reading every special token as plain text (never raises on one).

        The same as ``encode(text, allowed_special=set(), disallowed_special=())``, and
        tiktoken's ``encode_ordinary``.
        """
        text = replace_lone_surrogates(checked_text(text, "encode_ordinary"))
        ids: list[int] = []
        self._encode_ordinary(text, ids)
        return ids

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_processes: int | None = None,
        num_threads: int | None = None,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        """``[encode(text, ...) for text in texts]``, by ``num_processes`` worker processes
        (tiktoken's ``num_threads`` means the same) when the batch is big enough to pay
        (:mod:`bpe_course.speed.batches`)."""
        texts = checked_texts(texts, "encode_batch")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        self._specials.refuse(texts, disallowed)
        options = {"allowed_special": allowed, "disallowed_special": ()}
        return map_texts(self, "encode", texts, options, num_processes or num_threads)

    def encode_ordinary_batch(
        self,
        texts: Sequence[str],
        *,
        num_processes: int | None = None,
        num_threads: int | None = None,
    ) -> list[list[int]]:
        """``[encode_ordinary(text) for text in texts]``, in parallel as :meth:`encode_batch`."""
        texts = checked_texts(texts, "encode_ordinary_batch")
        return map_texts(self, "encode_ordinary", texts, {}, num_processes or num_threads)

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> Iterator[int]:
        """Encode a stream of strings (e.g. a file opened in text mode) lazily.

        Yields exactly the ids ``encode("".join(iterable), ...)`` would return, holding only
        the text that more text could still change (:mod:`bpe_course.speed.streaming`). A
        disallowed special token raises when the chunk that completes it is read, after the
        ids of the text before it came out.
        """
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        encoder = self if allowed == self._specials.all else self._restricted_to(allowed)
        # The view's own special tokens are exactly the allowed ones, whatever the defaults.
        encode = partial(encoder.encode, allowed_special="all", disallowed_special=())
        stream = StreamEncoder(encode, encoder._encode_ordinary, encoder._specials, self._safe_cuts)
        return stream.ids(checked_chunks(iterable, self._specials, disallowed))

    def _restricted_to(self, allowed: frozenset[str]) -> Tokenizer:
        """A view of this tokenizer whose only special tokens are ``allowed`` (the others are
        plain text to it); it shares every table, so it costs nothing to make."""
        view = copy.copy(self)
        view._specials = self._specials.only(allowed)
        view.special_tokens = view._specials.ids
        return view

    def _encode_ordinary(self, text: str, out: list[int]) -> None:
        """Append the ids of ``text`` (no special tokens in it) to ``out``: the fast path.

        A text longer than :data:`ENCODE_SPAN` is pretokenized a span at a time, each cut
        where the pattern provably never joins the two neighbours
        (:mod:`bpe_course.speed.cuts`), so the pieces are the same as in one go. Each piece
        costs one lookup in the piece table, at C speed: only a piece not seen lately runs
        Python code (``PieceTable.__missing__``, which asks the ``PieceMerger``).
        """
        findall, lookup = self._compiled.findall, self._pieces.__getitem__
        for start, end in spans_between_safe_cuts(text, self._safe_cuts, ENCODE_SPAN, CUT_REACH):
            reduce(operator.iconcat, map(lookup, findall(text, start, end)), out)

    # Decoding -----------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined together."""
        return b"".join(self.decode_tokens_bytes(ids))

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode ids to text; bytes that are not valid UTF-8 become U+FFFD.

        Token ids can stop inside a character (a model cut off mid-emoji), so the default
        never fails; ``errors="strict"`` raises instead, as in tiktoken and ``bytes.decode``.
        """
        codecs.lookup_error(errors)  # an unknown name fails now, not at the first bad byte
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id, special tokens included (tiktoken's name)."""
        token_id = token_id_of(token_id, 0)
        try:
            return self.vocab[token_id]
        except KeyError:
            raise self._unknown(token_id) from None

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """The bytes of each id, one entry per token (to see where tokens cut the text).

        Ids are Python or NumPy integers; anything else (``15496.0``, ``True``) raises
        ``TypeError``, and an id the vocabulary does not have :class:`UnknownTokenError`.
        """
        vocab = self.vocab
        ids = checked_ids(ids)
        try:
            return [vocab[token_id] for token_id in ids]
        except KeyError:
            raise self._unknown(next(i for i in ids if i not in vocab)) from None

    def decode_with_offsets(self, ids: Iterable[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` and, for each token, the index of the character it starts in.

        A token that begins in the middle of a character (its first byte is a UTF-8
        continuation byte, 0x80-0xBF) is given the character it continues, so each offset
        points at the first character the token contributes to: the rule tiktoken uses.
        The bytes must be valid UTF-8 (as tiktoken requires); a text cut inside a character
        raises ``ValueError``.
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
            raise ValueError(
                f"the tokens' bytes are not valid UTF-8 at byte {error.start} ({error.reason}); "
                "decode_with_offsets needs whole characters"
            ) from None
        return text, offsets

    def _unknown(self, token_id: int) -> UnknownTokenError:
        vocab = self.vocab
        return UnknownTokenError(
            f"unknown token id {token_id}: this tokenizer's ids are "
            f"{min(vocab)}..{max(vocab)} ({len(vocab)} tokens)"
        )

    # Files --------------------------------------------------------------------------------

    def save(self, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> None:
        """Save in GPT-2's format: ``vocab.json`` ``{token: id}`` and ``merges.txt``, each
        written whole or not at all (:mod:`bpe_course.safety.files`)."""
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
                f"{os.fspath(merges_path)}:{line}: merge uses {quote(error.part)}, "
                f"which is not in {os.fspath(vocab_path)}"
            ) from None
