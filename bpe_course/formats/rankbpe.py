"""tiktoken's rule for a rank table, exactly: how Llama 3 and 4, Qwen and Tekken encode.

A rank table (a ``.tiktoken`` file) gives each token one number, its rank. tiktoken encodes
a pretoken by two rules, and this module follows both:

1. a pretoken spelled exactly like a token *is* that token;
2. otherwise start from its bytes and join, again and again, the adjacent pair whose
   concatenation is the token of lowest rank (the leftmost when it occurs twice).

For OpenAI's tables that is what replaying the merges recovered by
:func:`~bpe_course.formats.ranks.merges_from_ranks` gives. The open models' tables were not
all grown by BPE alone: Llama 3 added 28,000 tokens to cl100k_base's, and some of them
cannot be built from two lower-ranked tokens (``b'.:.:'``, rank 100,421); Qwen 3.6 has
Chinese words of the same kind, and some tokens rank below their own parts. So
:class:`RankTokenizer` keeps the ranks themselves: every token is a whole-pretoken answer,
and the pairs rule 2 joins are found by encoding each token alone (:func:`merge_pairs`),
not by replaying merges in rank order. With that table, rule 2 runs on the merger the
OpenAI encodings use, joining pairs of ids instead of gluing bytes to look them up.

Everything else (pretokens, the piece cache, the merging loops, special tokens, decoding)
is :class:`~bpe_course.tokenizer.Tokenizer`'s. An optional Unicode normalization (Qwen
applies NFC to the whole text before encoding) runs first.
"""

from __future__ import annotations

import base64
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import eq

from ..base import check_special_tokens
from ..naive import encode_naive
from ..safety.files import atomic_write
from ..safety.specials import AllowedSpecial, DisallowedSpecial, SpecialTokens
from ..speed import startcache
from ..speed.merging import NO_MERGE, SHORT_PIECE, PieceMerger, merge_long
from ..speed.piececache import PieceTable
from ..speed.wordtable import cycle_collector_paused
from ..tokenizer import Tokenizer

#: The normalizations a rank tokenizer can apply to the text first (``None``: none).
NORMALIZATIONS = ("NFC", "NFKC")


#: Every single byte as a ``bytes`` object, to split a piece into its bytes at C speed.
_BYTES = [bytes([byte]) for byte in range(256)]


class _OtherRanks:
    """``(left id, right id) -> rank`` of the token spelled ``left + right``, looked up when
    asked, except ``excluded``: :func:`merge_long`'s pair table for :func:`merge_pairs`."""

    def __init__(self, token_at: Mapping[int, bytes], ranks: Mapping[bytes, int], excluded: int):
        self.token_at, self.ranks, self.excluded = token_at, ranks, excluded

    def get(self, pair: tuple[int, int], default: int) -> int:
        rank = self.ranks.get(self.token_at[pair[0]] + self.token_at[pair[1]], default)
        return default if rank == self.excluded else rank


def last_join(
    token: bytes, ranks: Mapping[bytes, int], token_at: Mapping[int, bytes]
) -> list[bytes] | None:
    """The two parts tiktoken's rule 2 joins last when it encodes ``token`` alone, or None
    when it never builds ``token``. Joining by rank with ``token``'s own rank left out stops
    at those two: a pair spelling all of ``token`` exists only when two parts are left.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
    >>> last_join(b"abc", ranks, {rank: token for token, rank in ranks.items()})
    [b'a', b'bc']
    """
    rank, get = ranks[token], ranks.get
    if len(token) > SHORT_PIECE:  # the bucketed loop: time close to linear in the length
        ids = merge_long([ranks[_BYTES[byte]] for byte in token],
                         _OtherRanks(token_at, ranks, rank), _SAME)  # type: ignore[arg-type]
        return [token_at[ids[0]], token_at[ids[1]]] if len(ids) == 2 else None
    parts = list(map(_BYTES.__getitem__, token))
    pair_ranks = [get(left + right, NO_MERGE) for left, right in zip(parts, parts[1:])]
    while len(parts) > 2:
        best = min(pair_ranks)
        if best == NO_MERGE:
            return None
        i = pair_ranks.index(best)
        parts[i] += parts[i + 1]
        del parts[i + 1], pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], NO_MERGE)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], NO_MERGE)
    return parts


class _Same:
    """``rank -> the id it makes`` when ids are the ranks themselves."""

    def __getitem__(self, rank: int) -> int:
        return rank


_SAME = _Same()


def merge_pairs(ranks: Mapping[bytes, int], offset: int = 0) -> dict[tuple[int, int], int]:
    """``(left id, right id) -> rank`` for each token that tiktoken's rule 2 builds from its
    own bytes, listed under the two parts its last join joins (ids are ranks + ``offset``).

    That is all rule 2 ever needs, although a token may be spelled by other pairs of tokens
    too. Whenever two adjacent parts ``left`` and ``right`` spell a token ``t`` in the middle
    of encoding a pretoken, no join so far crossed the edges of ``t``'s bytes, and inside
    them the joins came in the order they come when ``t`` is encoded alone (each was the
    lowest-ranked pair there, the leftmost of equals). So ``t`` alone also passes through
    ``[left, right]``, which is then its last join. A token that its own bytes never build
    (Llama 3's ``" việc"``) is no pair at all: only a pretoken spelled like it finds it.
    The parts of a pair may rank above the token (ranks need not follow the merge order).
    A token longer than :data:`~bpe_course.speed.merging.SHORT_PIECE` bytes is first
    checked to be two tokens end to end at all, at the lengths tokens have: a huge
    unbuildable one costs no join.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
    >>> merge_pairs(ranks)[(ord("a"), 256)]  # bc first, so abc = a + bc (not ab + c)
    258
    """
    token_at = dict(zip(ranks.values(), ranks))
    lengths: set[int] = set()
    pairs: dict[tuple[int, int], int] = {}
    for token, rank in ranks.items():
        size = len(token)
        if size < 2:
            continue
        if size > SHORT_PIECE:
            lengths = lengths or set(map(len, ranks))
            if not any(token[:cut] in ranks and token[cut:] in ranks
                       for cut in lengths if cut < size and size - cut in lengths):
                continue
        parts = last_join(token, ranks, token_at)
        if parts is not None:
            pairs[ranks[parts[0]] + offset, ranks[parts[1]] + offset] = rank
    return pairs


class RankTokenizer(Tokenizer):
    """A byte-level BPE tokenizer that encodes by a rank table as tiktoken does.

    ``ranks`` maps each ordinary token's bytes to its rank; its id is ``rank + offset``
    (Tekken numbers its 1,000 special tokens first, so its ordinary ids start at 1,000).
    ``special_tokens`` maps text to id, ``pattern`` is the split pattern, and
    ``normalization`` (``"NFC"`` or ``"NFKC"``) is applied to every text first.

    It has the whole :class:`~bpe_course.tokenizer.Tokenizer` surface. ``merges`` is empty:
    the ranks are the model, so the exports that need a merge list (GPT-2's files, Hugging
    Face's ``tokenizer.json``) refuse, and the tiktoken exports write the ranks.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"bc": 258}
    >>> tokenizer = RankTokenizer(ranks, r"\\S+|\\s+", {"<|end|>": 259})
    >>> tokenizer.encode("abc abcbc<|end|>")  # "abc" whole; "abcbc" = "abc" + "bc"
    [257, 32, 257, 258, 259]
    """

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        *,
        offset: int = 0,
        normalization: str | None = None,
        name: str = "bpe_course",
        whole: dict[str, int] | None = None,
        pairs: dict[tuple[int, int], int] | None = None,
    ) -> None:
        """``whole``: ``{text: id}`` of every token that decodes as UTF-8, and ``pairs``:
        :func:`merge_pairs`, when they are known already (the start-up cache,
        :func:`cached_rank_tokenizer`, whose ``ranks`` are then kept, not copied); else
        found here."""
        if normalization not in (None, *NORMALIZATIONS):
            raise ValueError(
                f"normalization={normalization!r}: expected None or one of {NORMALIZATIONS}"
            )
        special_tokens = dict(special_tokens or {})
        check_special_tokens(list(special_tokens))
        # The cache's own new table is kept (a copy of 200,000 tokens took 8 ms and 10 MB).
        ranks = ranks if whole is not None and type(ranks) is dict else dict(ranks)
        ids = list(map(offset.__add__, ranks.values())) if offset else list(ranks.values())
        vocab = dict(zip(ids, ranks))
        if len(vocab) != len(ranks):
            raise ValueError("two tokens of the rank table share a rank")
        for token, token_id in special_tokens.items():
            if token_id in vocab:
                raise ValueError(
                    f"special token {token!r} wants id {token_id}, which the rank table gives "
                    f"to {vocab[token_id]!r}"
                )
            vocab[token_id] = token.encode("utf-8")
        # No merge tables (the ranks are looked up instead) and no whole tokens yet.
        super().__init__(vocab, [], None, pattern, name=name, tables=({}, [], {}))
        # Given here, not to Tokenizer: a special token spelled like an ordinary token must
        # keep its own id, and the finder of special tokens is built once.
        self.special_tokens = special_tokens
        self._specials = SpecialTokens(special_tokens)
        self.ranks = ranks
        self.offset = offset
        self.normalization = normalization
        if whole is None:
            whole = {}
            for token, token_id in zip(ranks, ids):
                try:
                    whole[token.decode("utf-8")] = token_id
                except UnicodeDecodeError:
                    continue
        if len(self._ids_of) < len(vocab):  # a special token spelled like a ranked one
            self._ids_of.update(zip(ranks, ids))  # the ranked token keeps its bytes
        self._byte_ids = [self._ids_of[bytes([byte])] for byte in range(256)]
        # The tokenizer's own merger, on the pairs rule 2 can meet (see merge_pairs).
        self._merge_ranks = merge_pairs(ranks, offset) if pairs is None else pairs
        merged_ids = range(offset, offset + max(self.ranks.values(), default=-1) + 1)
        self._merged_ids = merged_ids  # type: ignore[assignment]
        merger = PieceMerger(self._byte_ids, self._merge_ranks, merged_ids)
        self._pieces = PieceTable(whole, merger)

    def __repr__(self) -> str:
        return (
            f"RankTokenizer(name={self.name!r}, ranks={len(self.ranks)}, "
            f"special_tokens={len(self.special_tokens)}, normalization={self.normalization!r})"
        )

    def normalize(self, text: str) -> str:
        """``text`` as the model sees it: normalized when the model normalizes (Qwen: NFC)."""
        if self.normalization is None or not isinstance(text, str):
            return text  # not a string: the method it was passed to says what is wrong
        return unicodedata.normalize(self.normalization, text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """:meth:`Tokenizer.encode <bpe_course.tokenizer.Tokenizer.encode>`, after normalizing."""
        return super().encode(
            self.normalize(text),
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )

    def encode_ordinary(self, text: str) -> list[int]:
        """Every special token read as plain text, after normalizing."""
        return super().encode_ordinary(self.normalize(text))

    def encode_ordinary_batch(self, texts: Sequence[str], **options) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text, in parallel as ``encode_batch``."""
        if self.normalization is not None and isinstance(texts, (list, tuple)):
            texts = [self.normalize(text) for text in texts]
        return super().encode_ordinary_batch(texts, **options)

    def encode_iterable(self, iterable: Iterable[str], **options) -> Iterator[int]:
        """The ids of a stream, as :meth:`encode` gives them for the whole of it.

        With a normalization, each chunk is normalized up to its last ASCII character and
        the rest waits for the next chunk: NFC and NFKC never join anything across an
        ASCII character, so normalizing in pieces cut there equals normalizing the whole.
        Text with no ASCII at all (a long page of Chinese) is held until one comes.
        """
        if self.normalization is not None:
            iterable = normalized_chunks(iterable, self.normalization)
        return super().encode_iterable(iterable, **options)

    def encode_naive(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """The reference for :meth:`encode`: tiktoken's two rules as plain loops."""
        parts = self._specials.split(
            self.normalize(text), allowed_special, disallowed_special, "encode_naive"
        )
        ids: list[int] = []
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
                continue
            for piece in self._compiled.findall(part):
                data = piece.encode("utf-8")
                if data in self.ranks:
                    ids.append(self.ranks[data] + self.offset)
                    continue
                for token in encode_naive(data, _PairsByBytes(self.ranks)):
                    ids.append(self.ranks[token] + self.offset)
        return ids

    # The exports that write a merge list cannot describe a token no merge builds.

    def save(self, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]):
        raise self._no_merges("GPT-2's vocab.json and merges.txt")

    def save_hf(self, path: str | os.PathLike[str]) -> None:
        raise self._no_merges("a Hugging Face tokenizer.json")

    def to_hf(self):
        raise self._no_merges("a Hugging Face tokenizer")

    def to_tiktoken_params(self, name: str) -> dict:
        """Keyword arguments for ``tiktoken.Encoding(**params)``: the ranks as they are."""
        if self.offset:
            raise ValueError(
                f"{self.name}: ids start at {self.offset}, but tiktoken's ids are the ranks; "
                "add the offset to tiktoken's ids instead"
            )
        return {
            "name": name,
            "pat_str": self.pattern,
            "mergeable_ranks": dict(self.ranks),
            "special_tokens": dict(self.special_tokens),
        }

    def to_tiktoken(self, name: str):
        import tiktoken

        return tiktoken.Encoding(**self.to_tiktoken_params(name))

    def save_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Write the rank table as a ``.tiktoken`` file (atomically)."""
        with atomic_write(path) as file:
            for token, rank in sorted(self.ranks.items(), key=lambda item: item[1]):
                file.write(f"{base64.b64encode(token).decode('ascii')} {rank}\n")

    def _no_merges(self, what: str) -> ValueError:
        return ValueError(
            f"{self.name} is a rank table (tiktoken's rule), which {what} cannot hold "
            "exactly: its format lists merges, and some tokens of a rank table are built by "
            "no merge; use save_tiktoken instead"
        )


def pack_rank_tokenizer(tokenizer: RankTokenizer) -> tuple[dict, dict] | None:
    """What :func:`unpack_rank_tokenizer` needs to build ``tokenizer`` again (None for a
    subclass): its ranks, its whole tokens by position, its pairs and its settings."""
    if type(tokenizer) is not RankTokenizer:
        return None
    position = dict(zip(tokenizer.ranks.values(), range(len(tokenizer.ranks))))
    offset = tokenizer.offset
    meta = {"pattern": tokenizer.pattern, "special_tokens": list(tokenizer.special_tokens.items()),
            "offset": offset, "normalization": tokenizer.normalization, "name": tokenizer.name}
    pairs, _, whole = tokenizer.built_tables()
    sections = {
        **startcache.pack_tokens(list(tokenizer.ranks)),
        "ranks": startcache.ids_array(list(tokenizer.ranks.values())),
        "whole": startcache.ids_array([position[i - offset] for i in whole.values()]),
        "lefts": startcache.ids_array([left - offset for left, _ in pairs]),
        "rights": startcache.ids_array([right - offset for _, right in pairs]),
        "pair_ranks": startcache.ids_array(list(pairs.values())),
    }
    return meta, sections


@cycle_collector_paused
def unpack_rank_tokenizer(meta: dict, sections: dict) -> RankTokenizer:
    """The :class:`RankTokenizer` that :func:`pack_rank_tokenizer` stored, its tables made
    by C loops (no Python step per token, no base64 to decode), with the cycle collector
    paused: the 127,000 tuples of Llama 3's pairs set it off for nothing (no cycle here)."""
    tokens = startcache.unpack_tokens(sections)
    numbers = sections["ranks"].tolist()
    ranks = dict(zip(tokens, numbers))
    if len(ranks) != len(tokens):
        raise ValueError("a token stored twice")
    offset = meta["offset"]
    chosen = list(map(tokens.__getitem__, sections["whole"]))
    ids = map(ranks.__getitem__, chosen)
    whole = dict(zip(map(bytes.decode, chosen), map(offset.__add__, ids) if offset else ids))
    columns = [sections[name] for name in ("lefts", "rights", "pair_ranks")]
    if all(map(eq, numbers, range(len(numbers)))):  # ranks 0, 1, 2, ...
        # One int object per number (the ranks' own): new ones for each pair took 10 MB
        # more (Llama 3); ids after an offset (Tekken's) are made once each.
        id_at = list(range(offset, offset + len(numbers))) if offset else numbers
        lefts, rights = (map(id_at.__getitem__, column) for column in columns[:2])
        made = map(numbers.__getitem__, columns[2])
    else:
        lefts, rights, made = (column.tolist() for column in columns)
        if offset:
            lefts, rights = map(offset.__add__, lefts), map(offset.__add__, rights)
    pairs = dict(zip(zip(lefts, rights), made))
    return RankTokenizer(ranks, meta["pattern"], dict(meta["special_tokens"]), offset=offset,
                         normalization=meta["normalization"], name=meta["name"], whole=whole,
                         pairs=pairs)


def cached_rank_tokenizer(
    label: str, settings: Sequence, build: Callable[[], RankTokenizer]
) -> RankTokenizer:
    """``build()`` a :class:`RankTokenizer` once, then read it back from the start-up cache
    (:mod:`bpe_course.speed.startcache`); ``settings`` must say all ``build`` depends on."""
    return startcache.cached(label, settings, build, pack_rank_tokenizer, unpack_rank_tokenizer)


class _PairsByBytes(Mapping):
    """``(left bytes, right bytes) -> rank of left + right``: tiktoken's rule 2 in the
    form :func:`bpe_course.naive.encode_naive` reads."""

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self.ranks = ranks

    def __getitem__(self, pair: tuple[bytes, bytes]) -> int:
        return self.ranks[pair[0] + pair[1]]

    def get(self, pair, default=None):
        return self.ranks.get(pair[0] + pair[1], default)

    def __iter__(self):
        raise TypeError("the pairs of a rank table are looked up, not listed")

    def __len__(self) -> int:
        return len(self.ranks)


def normalized_chunks(chunks: Iterable[str], form: str) -> Iterator[str]:
    """The chunks of a stream normalized to ``form``, equal when joined to normalizing the
    joined text. Each is cut before its last ASCII character: no composition or reordering
    ever crosses one (an ASCII character never combines with what precedes it, and a
    starter stops the reordering of marks)."""
    held = ""  # starts with an ASCII character, or is all the text so far; no other ASCII
    for chunk in chunks:
        if not isinstance(chunk, str):
            raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
        found = _LAST_ASCII.search(chunk)
        if found is None:
            held += chunk
            continue
        text, cut = held + chunk, len(held) + found.start()
        held = text[cut:]
        if cut:
            yield unicodedata.normalize(form, text[:cut])
    if held:
        yield unicodedata.normalize(form, held)


#: The last ASCII character of a text, and what follows it (one pass: each try reads on
#: only to the next ASCII character).
_LAST_ASCII = re.compile("[\\x00-\\x7f][^\\x00-\\x7f]*\\Z")
