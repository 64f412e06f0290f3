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

import codecs
import copy
import operator
import os
import warnings
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import partial, reduce
from typing import Any, Literal

import regex

from . import export
from .base import ENDOFTEXT, check_special_tokens
from .batches import map_texts
from .chunks import last_safe_cut, safe_cut_regex, spans_between_safe_cuts
from .fastsplit import Splitter
from .files import read_merge_lines, read_vocab_json, write_merges_txt, write_vocab_json
from .merging import PairRanks, apply_merges, reachable_tokens
from .naive import encode_naive, merge_ranks
from .pretokenize import GPT2_PATTERN, special_token_regex
from .utf8 import replace_lone_surrogates

#: How many pretokens have their ids remembered at once; when that many are, the
#: older half is forgotten. 5 MB of Python's standard library has 23.6k distinct
#: pretokens, which fit; streaming it holds 4.7 MB of new memory at the peak, and a
#: 25 MB file 5.4 MB (tracemalloc, as ``python -m bench.encode`` measures it).
CACHE_SIZE = 24 * 1024

#: Pretokens longer than this many characters are encoded every time, not remembered:
#: they rarely come back, and one of them could be megabytes.
CACHE_LONGEST = 256

#: ``encode_iterable`` collects at least this many characters before encoding them.
STREAM_BUFFER = 1 << 16

#: ``encode`` pretokenizes a longer text about this many characters at a time (cut where the
#: pattern provably never joins two neighbours), so only one span's pieces exist at once:
#: all the pieces of a text take about 15 bytes per character. It is a little faster too
#: (5% on English prose), since the next span reuses that memory while it is still in the
#: processor's cache. Spans from 4k to 64k characters measured alike.
ENCODE_SPAN = 1 << 14

#: How far a safe cut is looked for: past the end of a span of ``encode``, and back from the
#: end of what ``encode_iterable`` has read. In ordinary text one comes within a few
#: characters (after every word); a long run of one class of character has none, and
#: searching all of it would cost more than encoding it (about 0.2 microseconds a
#: character), so ``encode`` takes the rest of such a text in one go and a stream waits.
CUT_REACH = 1 << 10

#: ``encode_iterable`` warns (once) when it holds more than this many characters that it
#: cannot encode yet because no place in them is safe to cut.
HELD_TEXT_WARNING = 1 << 22

#: Which special tokens ``encode`` turns into their ids: ``"all"`` or a collection of them.
AllowedSpecial = Literal["all"] | Collection[str]

#: Which special tokens make ``encode`` raise if found: ``"all"`` (every one not allowed) or
#: a collection of them (``()`` for none: the ones not allowed are then plain text).
DisallowedSpecial = Literal["all"] | Collection[str]

#: The usual three answers to "what do I do with special tokens in this text?", as
#: keyword arguments for ``encode``; the command line's ``--special`` takes these names.
SPECIAL_POLICIES: dict[str, dict[str, Any]] = {
    "all": {"allowed_special": "all", "disallowed_special": ()},
    "none": {"allowed_special": frozenset(), "disallowed_special": ()},
    "raise": {"allowed_special": frozenset(), "disallowed_special": "all"},
}


class DisallowedSpecialError(ValueError):
    """The text holds a special token that ``encode`` was told to refuse."""

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(
            f"the text contains the special token {token!r}, which is disallowed: pass "
            f"allowed_special={{{token!r}}} (or 'all') to encode it as its id, or "
            "disallowed_special=() to encode it as plain text"
        )

    def __reduce__(self):  # so it survives the trip back from a worker process
        return (type(self), (self.token,))


class UnknownTokenError(KeyError, ValueError):
    """A token id that the vocabulary does not have.

    A ``KeyError``, as tiktoken raises, and a ``ValueError``, as for any other bad input,
    so code written for either catches it.
    """

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0])


class MergeNotInVocabError(ValueError):
    """A merge names (or makes) a token that the vocabulary does not have."""

    def __init__(self, rank: int, part: bytes) -> None:
        self.rank = rank
        self.part = part
        super().__init__(f"merge {rank} uses {part!r}, which is not in vocab")


class HeldTextWarning(UserWarning):
    """``encode_iterable`` holds a long stretch of text in memory: no place in it is safe to
    cut, so it waits for one (or for a special token, or the end of the stream)."""


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
        self, whole: Mapping[str, tuple[int, ...]], encode_piece: Callable[[str], tuple[int, ...]]
    ) -> None:
        super().__init__()
        self.whole = whole
        self.encode_piece = encode_piece
        self.order: deque[str] = deque()  # the pretokens remembered, oldest first

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids = self.whole.get(piece)
        if ids is None:
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


def piece_ids(
    piece: str,
    *,
    byte_table: bytes | None,
    byte_ids: Sequence[int],
    pair_ranks: PairRanks,
    merged_ids: Sequence[int],
) -> tuple[int, ...]:
    """The ids of one pretoken: its bytes, joined by the merges (see :mod:`.merging`).

    ``byte_table`` maps each byte to its id with ``bytes.translate`` when every byte's id is
    below 256 (else it is None, and ``byte_ids`` does it one byte at a time).

    A function of the tables rather than a method of the tokenizer, because the tokenizer's
    :class:`PieceTable` keeps it: a bound method there would point back at the tokenizer,
    and that reference cycle kept every dropped tokenizer in memory until Python's cycle
    collector came round (for GPT-2's, 50 MB freed in a 21 ms pause, inside whatever call
    happened to set the collector off). Without the cycle it is freed the moment it is dropped.

    >>> table = bytes(range(256))  # byte b has id b
    >>> piece_ids("hello", byte_table=table, byte_ids=list(range(256)),
    ...           pair_ranks={(108, 108): 0}, merged_ids=[256])  # one merge: l + l -> 256
    (104, 101, 256, 111)
    """
    data = piece.encode("utf-8")
    if byte_table is not None:
        ids = list(data.translate(byte_table))
    else:
        ids = list(map(byte_ids.__getitem__, data))
    return tuple(apply_merges(ids, pair_ranks, merged_ids))


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
        self._compiled = Splitter(pattern)
        self._safe_cuts = safe_cut_regex(pattern)  # None: no place is proven safe

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
        self._all_specials = frozenset(self.special_tokens)
        self._special_regexes: dict[frozenset[str], regex.Pattern[str] | None] = {}

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

        # A function of the tables, not a bound method: kept by the piece table, a method
        # would tie the table back to the tokenizer in a reference cycle (see piece_ids).
        encode_piece = partial(
            piece_ids,
            byte_table=self._byte_table,
            byte_ids=self._byte_ids,
            pair_ranks=self._merge_ranks,
            merged_ids=self._merged_ids,
        )
        self._pieces = PieceTable(self._whole_tokens(), encode_piece)

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

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encode ``text`` to token ids.

        Special tokens follow tiktoken's rules. Each one ``allowed_special`` names becomes
        its single id. Each one ``disallowed_special`` names (``"all"``: every special token
        that is not allowed) raises :class:`DisallowedSpecialError` if the text holds it.
        Any other is encoded as plain text; ``encode_ordinary`` does that for all of them.

        The default is the opposite of tiktoken's, on purpose. This package follows CS336's
        ``Tokenizer.encode``, which honours the special tokens the tokenizer was built
        with: a training corpus marks its documents with ``<|endoftext|>``, and that text
        must become the one id. tiktoken allows none by default because it encodes text
        that *users* typed: a user who can get ``<|endoftext|>`` or a prompt marker read as
        the real token can end a document or fake a turn in what the model sees. For text
        from outside, pass ``allowed_special=set()`` (tiktoken's default: refuse it) or
        call :meth:`encode_ordinary` (plain text).

        A lone surrogate (from a JSON escape such as ``"\\ud83d"``, or a file name decoded
        with ``surrogateescape``) is encoded as U+FFFD, after surrogate pairs are joined into
        the characters they stand for, as tiktoken does.
        """
        parts = self._special_split(text, allowed_special, disallowed_special, "encode")
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
        parts = self._special_split(text, allowed_special, disallowed_special, "encode_naive")
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
        text = replace_lone_surrogates(_checked_text(text, "encode_ordinary"))
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
        """``[encode(text, ...) for text in texts]``, by worker processes when that pays.

        tiktoken runs a batch on threads, which work in parallel inside its Rust code.
        Python threads would take turns (the GIL lets one run Python at a time), so a big
        batch goes to ``num_processes`` worker processes instead (default: every core;
        ``num_threads``, tiktoken's name, is taken to mean the same). A batch of fewer than
        ``BATCH_PARALLEL_CHARS`` characters is encoded here: starting the workers
        would cost more. Workers are forked, so they start with this tokenizer already
        built; where ``fork`` is not available the batch is encoded here
        (:mod:`bpe_course.batches` has the details and the measurements).
        """
        texts = _checked_texts(texts, "encode_batch")
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        finder = self._special_regex(disallowed)
        if finder is not None:
            for text in texts:
                refuse_disallowed(finder, text, 0, final=True)
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
        texts = _checked_texts(texts, "encode_ordinary_batch")
        return map_texts(self, "encode_ordinary", texts, {}, num_processes or num_threads)

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> Iterator[int]:
        """Encode a stream of strings (e.g. a file opened in text mode) lazily.

        Yields exactly the ids ``encode("".join(iterable), ...)`` would return, while
        holding only a small window of text: a pretoken or special token that might continue
        in the next chunk is kept back until it is complete, and so is a surrogate that
        could be the first half of a pair. A disallowed special token raises when the chunk
        that completes it is read, after the ids of the text before it came out.

        Text is encoded up to the last place where the split pattern provably never joins
        two neighbours. Such places are proven only for GPT-2's, GPT-4's and o200k's
        patterns; under any other, text waits for a special token or the end of the stream,
        and a :class:`HeldTextWarning` says so once more than :data:`HELD_TEXT_WARNING`
        characters wait (as it does for one pretoken that long under the three).
        """
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        encoder = self if allowed == self._all_specials else self._restricted_to(allowed)
        return encoder._encode_chunks(self._checked_chunks(iterable, disallowed))

    def _checked_chunks(self, iterable: Iterable[str], disallowed: frozenset[str]) -> Iterator[str]:
        """The chunks of a stream, checked for strings and disallowed special tokens (also
        those cut by a chunk boundary), with surrogates replaced as :meth:`encode` does."""
        finder = self._special_regex(disallowed)
        longest = max(map(len, disallowed), default=0)
        seen, held = "", ""
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
            if finder is not None:
                seen = refuse_disallowed(finder, seen + chunk, longest, final=False)
            text = held + chunk
            # A high surrogate at the end may pair with a low one at the start of the next.
            held = text[-1:] if text and "\ud800" <= text[-1] <= "\udbff" else ""
            yield replace_lone_surrogates(text[: len(text) - len(held)])
        if finder is not None:
            refuse_disallowed(finder, seen, longest, final=True)
        yield replace_lone_surrogates(held)

    def _restricted_to(self, allowed: frozenset[str]) -> Tokenizer:
        """A view of this tokenizer whose only special tokens are ``allowed`` (the others are
        plain text to it); it shares every table, so it costs nothing to make."""
        view = copy.copy(self)
        view.special_tokens = {
            token: token_id for token, token_id in self.special_tokens.items() if token in allowed
        }
        view._all_specials = allowed
        view._special_finder = self._special_regex(allowed)
        view._longest_special = max(map(len, allowed), default=0)
        return view

    def _encode_chunks(self, chunks: Iterable[str]) -> Iterator[int]:
        """The ids of a stream of strings, each pretoken encoded once it is complete."""
        parts: list[str] = []
        size = 0
        wait_for = STREAM_BUFFER
        warned = False
        for chunk in chunks:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
            parts.append(chunk)
            size += len(chunk)
            if size >= wait_for:
                ids, rest = self._encode_stable_prefix("".join(parts))
                yield from ids
                parts, size = [rest], len(rest)
                if size > HELD_TEXT_WARNING and not warned:
                    warnings.warn(self._held_text_warning(size), stacklevel=2)
                    warned = True
                # What was held back is scanned again next time. Waiting until the buffer
                # is twice that long keeps the total scanning linear even when one pretoken
                # (a megabyte of newlines) stays unfinished for a thousand chunks. Until it
                # has warned, it also looks once just past the threshold: doubling alone
                # could step over it (from 4M - 1 to 8M) and hold 7M characters unannounced.
                wait_for = max(STREAM_BUFFER, 2 * size)
                if not warned and size <= HELD_TEXT_WARNING:
                    wait_for = min(wait_for, HELD_TEXT_WARNING + 1)
        yield from self.encode("".join(parts))

    def _held_text_warning(self, size: int) -> HeldTextWarning:
        """What ``encode_iterable`` says when it holds ``size`` characters it cannot cut."""
        if self._safe_cuts is None:
            why = (
                "the split pattern has no proven place to cut (only GPT-2's, GPT-4's and "
                "o200k's have), so text waits for a special token or the end of the stream"
            )
        else:
            why = (
                f"in their last {CUT_REACH:,} the split pattern could join any two neighbours "
                "(one very long pretoken?), so they wait until it provably cannot"
            )
        return HeldTextWarning(f"encode_iterable is holding {size:,} characters in memory: {why}")

    def _special_split(
        self,
        text: str,
        allowed_special: AllowedSpecial,
        disallowed_special: DisallowedSpecial,
        method: str,
    ) -> list[str]:
        """``text`` cut around its allowed special tokens: plain text at even positions,
        special tokens at odd ones. A disallowed special token in it raises
        :class:`DisallowedSpecialError` first; then surrogates are replaced, as tiktoken does."""
        text = _checked_text(text, method)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        refuse = self._special_regex(disallowed)
        if refuse is not None:
            refuse_disallowed(refuse, text, 0, final=True)
        text = replace_lone_surrogates(text)
        finder = self._special_regex(allowed)
        return [text] if finder is None else finder.split(text)

    def _special_sets(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        """``allowed_special`` and ``disallowed_special`` checked and spelled out as sets."""
        if _is_all(allowed_special):
            allowed = self._all_specials
        else:
            allowed = self._named_specials(allowed_special, "allowed_special")
        if _is_all(disallowed_special):
            return allowed, self._all_specials - allowed
        return allowed, self._named_specials(disallowed_special, "disallowed_special")

    def _named_specials(self, tokens: object, argument: str) -> frozenset[str]:
        """The special tokens a collection names (read once: an iterator is fine)."""
        if tokens is None:
            raise TypeError(
                f"{argument}=None: pass 'all', or a set of special tokens (set() for none)"
            )
        if isinstance(tokens, str):
            if tokens == "none":
                raise ValueError(
                    f"{argument}='none' is not an option (nor in tiktoken): to encode "
                    "special tokens as plain text use encode_ordinary(text), or "
                    "allowed_special=set(), disallowed_special=()"
                )
            raise ValueError(
                f"{argument} must be 'all' or a collection of special tokens, got the string "
                f"{tokens!r} (for one token, write {{{tokens!r}}})"
            )
        if not isinstance(tokens, Iterable):
            raise TypeError(
                f"{argument} must be 'all' or a collection of special tokens, "
                f"got {type(tokens).__name__}"
            )
        try:
            named = frozenset(tokens)
        except TypeError:  # an unhashable member, such as a list
            raise TypeError(f"{argument} must hold strings, got {tokens!r:.80}") from None
        for token in named:
            if not isinstance(token, str):
                raise TypeError(f"{argument} must hold strings, got {token!r}")
        unknown = named - self._all_specials
        if unknown:
            known = sorted(self.special_tokens) or "none"
            raise ValueError(
                f"{argument} names {sorted(unknown)}, which are not special tokens of this "
                f"tokenizer (its special tokens: {known})"
            )
        return named

    def _special_regex(self, tokens: frozenset[str]) -> regex.Pattern[str] | None:
        """A regex finding ``tokens`` (longest first), or None for no tokens; remembered."""
        if tokens == self._all_specials:
            return self._special_finder
        found = self._special_regexes.get(tokens)
        if found is None and tokens:
            if len(self._special_regexes) >= 64:
                self._special_regexes.clear()
            found = self._special_regexes[tokens] = special_token_regex(sorted(tokens))
        return found

    def _encode_ordinary(self, text: str, out: list[int]) -> None:
        """Append the ids of ``text`` (no special tokens in it) to ``out``.

        A text longer than :data:`ENCODE_SPAN` is pretokenized a span at a time, each cut
        where the pattern provably never joins the two neighbours (see
        :mod:`bpe_course.chunks`), so the pieces are the same as in one go. If no such
        place comes within :data:`CUT_REACH` characters of a span's end, the rest of the
        text is one span.
        """
        findall = self._compiled.findall
        spans = spans_between_safe_cuts(text, self._safe_cuts, ENCODE_SPAN, CUT_REACH)
        for start, end in spans:
            self._encode_pieces(findall(text, start, end), out)

    def _encode_pieces(self, pieces: Iterable[str], out: list[int]) -> None:
        # One C-level lookup per pretoken and one C-level list extend with its ids; only
        # a pretoken not seen lately runs Python code (PieceTable.__missing__).
        reduce(operator.iconcat, map(self._pieces.__getitem__, pieces), out)

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

    def _encode_stable_prefix(self, text: str) -> tuple[list[int], str]:
        """Encode the part of ``text`` that no further text could change; return the rest.

        A special token is final once the longest special token would fit after its start.
        Ordinary text is final up to the last place where the pattern provably never joins
        the two neighbours (:func:`bpe_course.chunks.last_safe_cut`, within the last
        :data:`CUT_REACH` characters): both are read already, so what comes next cannot
        change a piece before it. Without such a place, the text waits; a pattern with
        nothing proven about it has none, and its text waits for a special token or the end.
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
        end = position + last_safe_cut(text[position:region_end], self._safe_cuts, CUT_REACH)
        self._encode_ordinary(text[position:end], ids)
        return ids, text[end:]

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
        """The bytes of one id, special tokens included (tiktoken's name).

        An id the vocabulary does not have raises :class:`UnknownTokenError`, a ``KeyError``
        as in tiktoken.
        """
        token_id = _token_id(token_id, 0)
        try:
            return self.vocab[token_id]
        except KeyError:
            raise self._unknown(token_id) from None

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """The bytes of each id, one entry per token (to see where tokens cut the text).

        Ids are Python or NumPy integers; anything else (``15496.0``, ``True``) raises
        ``TypeError``, and an id the vocabulary does not have :class:`UnknownTokenError`,
        naming it.
        """
        vocab = self.vocab
        ids = _checked_ids(ids)
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

    # The rest of tiktoken's Encoding surface, and pickling --------------------------------

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a text (or bytes) that is exactly one token, special tokens included.

        Anything else raises ``KeyError`` naming the bytes, as in tiktoken. When two ids
        share bytes, the lower one is returned (the one encoding produces).

        >>> from bpe_course.utf8 import byte_vocab
        >>> tokenizer = Tokenizer(byte_vocab() | {256: b"hi"}, [(b"h", b"i")], ["<|endoftext|>"])
        >>> tokenizer.encode_single_token("hi"), tokenizer.encode_single_token("<|endoftext|>")
        (256, 257)
        """
        if isinstance(text_or_bytes, str):
            data = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(text_or_bytes)
        else:
            raise TypeError(
                f"encode_single_token expects str or bytes, got {type(text_or_bytes).__name__}"
            )
        token_id = self._ids_of.get(data)
        if token_id is None:
            raise KeyError(data)
        return token_id

    def is_special_token(self, token_id: int) -> bool:
        """Whether ``token_id`` is the id of a special token."""
        return _token_id(token_id, 0) in self.special_tokens.values()

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ):
        """``encode`` as a read-only NumPy array of ``uint32``, as tiktoken returns it.

        NumPy is imported on the first call, not before.
        """
        import numpy as np

        ids = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        array = np.array(ids, dtype=np.uint32)
        array.flags.writeable = False
        return array

    def decode_batch(
        self,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        num_threads: int | None = None,
    ) -> list[str]:
        """``[decode(ids, errors) for ids in batch]``.

        ``num_threads`` is accepted for tiktoken's sake and not used: decoding is one
        dictionary lookup per id, and Python threads would only take turns at it.
        """
        return [self.decode(ids, errors) for ids in batch]

    def decode_bytes_batch(
        self, batch: Iterable[Iterable[int]], *, num_threads: int | None = None
    ) -> list[bytes]:
        """``[decode_bytes(ids) for ids in batch]`` (``num_threads`` as in :meth:`decode_batch`)."""
        return [self.decode_bytes(ids) for ids in batch]

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


# Checks and helpers for the methods above ------------------------------------------------


def _is_all(value: object) -> bool:
    """Is ``value`` the string ``"all"`` (not an array or set, which ``==`` would compare)?"""
    return isinstance(value, str) and value == "all"


def _checked_text(text: object, method: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{method} expects str, got {type(text).__name__}")
    return text


def _checked_texts(texts: object, method: str) -> list[str]:
    """A batch as a list of strings (a single string is refused: it is not a batch)."""
    if isinstance(texts, str) or not isinstance(texts, Iterable):
        raise TypeError(f"{method} expects a list of strings, got {type(texts).__name__}")
    texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{method}: text {index} is a {type(text).__name__}, not a str")
    return texts


def _token_id(value: object, position: int) -> int:
    """``value`` as an int id if it is an integer (NumPy's too); bools and floats are not."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(
        f"token ids are integers, but id {position} is {value!r} ({type(value).__name__})"
    )


def refuse_disallowed(
    finder: regex.Pattern[str], window: str, longest: int, *, final: bool
) -> str:
    """Raise :class:`DisallowedSpecialError` for the first disallowed special token in
    ``window`` that more text could not turn into a longer one; return the tail to keep.

    A match that starts within the last ``longest - 1`` characters waits for the next chunk
    (``final=False``), so a stream names the same token as a search of the whole text.
    """
    match = finder.search(window)
    if match and (final or match.start() + longest <= len(window)):
        raise DisallowedSpecialError(match.group())
    return window[max(0, len(window) - longest + 1) :]


def _checked_ids(ids: Iterable[int]) -> list[int]:
    """``ids`` as a list of Python ints, or ``TypeError`` naming the first that is not one."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"expected a sequence of token ids, got {type(ids).__name__} {ids!r:.40}")
    ids = ids if isinstance(ids, list) else list(ids)
    if set(map(type, ids)) <= {int}:  # the usual case, checked at C speed
        return ids
    return [_token_id(value, position) for position, value in enumerate(ids)]
