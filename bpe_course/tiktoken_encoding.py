"""tiktoken's ``Encoding``, as one of this package's tokenizers.

An :class:`Encoding` is a :class:`~bpe_course.tokenizer.Tokenizer` built from a rank table
(the merges are recovered with :func:`bpe_course.formats.ranks.merges_from_ranks`), so
everything the course's tokenizer does it does too (``encode_iterable``, ``save_hf``, ...),
with tiktoken's constructor, checks and extras (``encode_with_unstable``, ``_encode_bytes``)
and one change of default: ``encode`` and its relatives take tiktoken's rules for special
tokens. Text that holds a special token raises unless ``allowed_special`` names it, because
an ``Encoding`` usually encodes text that users typed (``Tokenizer`` allows them all by
default, as a training corpus needs). The named encodings (``get_encoding``) are in
:mod:`bpe_course.encodings`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from importlib import import_module

from .base import ENDOFTEXT, Merges, check_special_tokens
from .formats.gpt2 import check_id
from .formats.ranks import merges_from_ranks
from .pretokens import GPT2_PATTERN
from .safety.specials import AllowedSpecial, DisallowedSpecial, SpecialTokens
from .speed.merging import apply_merges
from .tokenizer import Tokenizer

#: The encodings :func:`bpe_course.encodings.get_encoding` has built, by name: each pickles
#: as its name.
REGISTERED: dict[str, Encoding] = {}

#: GPT-2's split pattern as tiktoken spells it (``r50k_pat_str``): possessive quantifiers and
#: ``\s++$`` make it faster in Rust, and it cuts every text into the same pieces as
#: :data:`~bpe_course.pretokens.GPT2_PATTERN`, which the tokenizer runs in its place.
R50K_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)

#: Spellings of a pattern that the tokenizer runs as another, faster for it and proven to
#: split alike (the tests compare the two); ``Encoding._pat_str`` keeps the spelling given.
SAME_SPLITS = {R50K_PATTERN: GPT2_PATTERN}

#: The empty set of special tokens.
NO_TOKENS: frozenset[str] = frozenset()

# Encoding ---------------------------------------------------------------------------------

#: The characters Rust's ``char::is_whitespace`` accepts (Unicode's White_Space property);
#: ``str.isspace`` differs (it accepts U+001C-U+001F). ``encode_with_unstable`` needs Rust's.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(map(chr, range(0x2000, 0x200B)))
)


class TiktokenSpecials(SpecialTokens):
    """Special tokens read with tiktoken's rules: a name in ``allowed_special`` that is not a
    special token is ignored, and every name in ``disallowed_special`` is searched for, a
    special token or not. (``Tokenizer`` refuses names it does not know.)

    The usual arguments take a short way that builds no set: o200k_harmony has 1,091
    special tokens, and sets of them cost tens of microseconds per call.
    """

    def resolve(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        known = self.all
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
        tables: tuple | None = None,
    ) -> None:
        """Check the arguments and build the tokenizer; ``merges`` are recovered from the
        ranks unless given (they are when another encoding has the same ranks) or unless
        ``tables`` (:meth:`Tokenizer.built_tables` of a tokenizer with these ranks and
        splits, trusted) hold them already."""
        if not isinstance(pat_str, str):
            raise TypeError(f"pat_str must be a str, got {type(pat_str).__name__}")
        if tables is None:
            vocab = rank_vocab(mergeable_ranks)
        else:  # ranks that came with their tables were checked when the tables were made
            vocab = dict(zip(mergeable_ranks.values(), mergeable_ranks))
        first_names = check_special_ids(special_tokens, mergeable_ranks, vocab)
        max_token_value = max(max(vocab), max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            count = len(mergeable_ranks) + len(special_tokens)
            if count != explicit_n_vocab or max_token_value != explicit_n_vocab - 1:
                raise AssertionError(
                    f"explicit_n_vocab={explicit_n_vocab}, but there are {count} tokens "
                    f"and the largest id is {max_token_value}"
                )
        if merges is None and tables is None:
            try:
                merges = merges_from_ranks(mergeable_ranks)
            except ValueError as error:
                raise ValueError(f"mergeable_ranks: {error}") from None
        for token_id, token in first_names.items():
            vocab[token_id] = token.encode("utf-8")
        pattern = SAME_SPLITS.get(pat_str, pat_str)
        super().__init__(vocab, merges, list(special_tokens), pattern, name=name, tables=tables)
        # A special token sharing its id with an earlier one was given a new id of its own
        # (the tokenizer keeps one text per id); it takes the shared id back.
        for token, token_id in special_tokens.items():
            if first_names[token_id] != token:
                del self.vocab[self.special_tokens[token]]
                self.special_tokens[token] = self._ids_of[token.encode("utf-8")] = token_id
        self._specials = TiktokenSpecials(self.special_tokens)

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
        if REGISTERED.get(self.name) is self:
            return import_module("bpe_course.encodings").get_encoding, (self.name,)
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

        >>> from bpe_course import get_encoding
        >>> enc = get_encoding("gpt2")
        >>> stable, completions = enc.encode_with_unstable("hello fanta")
        >>> stable, [5113, 265] in completions, [8842] in completions
        ([31373], True, True)
        """
        parts = self._specials.split(
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
        """The ids of text cut around its special tokens (as ``SpecialTokens.split`` cuts it:
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
            for piece in pieces:
                ids += self._pieces[piece]
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


