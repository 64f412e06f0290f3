"""SentencePiece BPE models (Mistral 7B v0.1, Llama 2), read by hand and encoded exactly.

A SentencePiece ``.model`` file is a protocol buffer (``ModelProto``): a list of pieces,
each with its text, a score and a type (normal, unknown, control, user-defined, unused,
byte), then the trainer's and the normalizer's settings. :func:`read_model_proto` reads
the few fields encoding needs straight from the wire format: a field is a number and a
wire type packed in a varint, followed by a varint, 4 or 8 bytes, or a length and bytes.

Encoding differs from byte-level BPE in four ways, each done here as SentencePiece does it:

- no split pattern: spaces become the meta-symbol ``▁`` (U+2581) and a dummy ``▁`` goes in
  front, so a word and its leading space are one unit (``"Hello world"`` is ``▁Hello▁world``);
- it starts from *characters*, not bytes, and joins the adjacent pair whose joined text is
  the piece of highest score (the leftmost on a tie), until no joined pair is a piece;
- a character no piece covers falls back to its UTF-8 bytes, as pieces ``<0xE4>`` and so on;
- decoding turns ``▁`` back into spaces, drops the dummy one, and control pieces
  (``<s>``, ``</s>``) decode to nothing.

There is no split pattern, so nothing says where the joining of a long text may be cut:
:meth:`SentencePieceBPE.encode_iterable` refuses, rather than guess. Joining never crosses
a place where no piece spans the two neighbours; the encoder cuts the text before each
``▁`` that follows another character when no piece holds that character before a ``▁``,
and remembers the ids of each part, as the byte-level tokenizer remembers pretokens.
"""

from __future__ import annotations

import codecs
import heapq
import os
import re
import struct
from array import array
from collections.abc import Iterable, Iterator, Sequence

from ..base import checked_ids, checked_text, checked_texts, token_id_of
from ..safety.specials import AllowedSpecial, DisallowedSpecial, SpecialTokens
from ..speed import cachefiles
from ..utf8 import replace_lone_surrogates
from .protobuf import read_fields

#: SentencePiece's meta-symbol for a space.
SPACE = "\u2581"

#: Piece types, as ``ModelProto.SentencePiece.Type`` numbers them.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}


class UnsupportedSentencePieceModel(ValueError):
    """A ``.model`` file this encoder does not implement; the message names the field."""


class ModelProto:
    """The fields of a ``.model`` file that encoding and decoding need, protobuf's defaults
    unless given (a plain class: importing ``dataclasses`` took 7 ms of a 30 ms start)."""

    def __init__(self, pieces: list[str] | None = None, scores: list[float] | None = None,
                 types: list[int] | None = None, **settings: object) -> None:
        self.pieces = [] if pieces is None else pieces
        self.scores = [] if scores is None else scores
        self.types = [] if types is None else types
        self.model_type = 1  # UNIGRAM, protobuf's default
        self.byte_fallback = self.treat_whitespace_as_suffix = False
        self.unk_surface = " \u2047 "
        self.normalizer_name, self.charsmap = "", b""
        self.add_dummy_prefix = self.remove_extra_whitespaces = self.escape_whitespaces = True
        for key, value in settings.items():
            if key not in vars(self):
                raise TypeError(f"ModelProto has no field {key!r}")
            setattr(self, key, value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelProto) and vars(self) == vars(other)


def read_usual_pieces(data: bytes) -> tuple[list[str], list[float], list[int], int]:
    """The pieces at the start of a ``ModelProto`` that are laid out as SentencePiece writes
    them (text, score, then the type unless NORMAL, each once, short), read by index: three
    times as fast as :func:`read_fields` (32,000 pieces: 25 ms, not 80). Returns their texts,
    scores and types, and where the first field it leaves to :func:`read_fields` begins."""
    pieces: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    position, end, score_at = 0, len(data), struct.Struct("<f").unpack_from
    while position + 1 < end and data[position] == 0x0A:  # field 1, a length: a piece
        start, size = position + 2, data[position + 1]
        stop = start + size
        if not 7 <= size < 0x80 or stop > end or data[start] != 0x0A:  # its field 1: text
            break
        after = start + 2 + data[start + 1]
        if data[start + 1] >= 0x80 or after + 5 > stop or data[after] != 0x15:  # 2: a float
            break
        if after + 5 == stop:
            kind = NORMAL
        elif after + 7 == stop and data[after + 5] == 0x18 and data[after + 6] < 0x80:
            kind = data[after + 6]  # field 3, the type
        else:
            break
        pieces.append(data[start + 2 : after].decode("utf-8"))
        scores.append(score_at(data, after + 1)[0])
        types.append(kind)
        position = stop
    return pieces, scores, types, position


def read_model_proto(data: bytes, source: str = "model") -> ModelProto:
    """Read a SentencePiece ``ModelProto`` from its bytes; ``ValueError`` names ``source``."""
    proto = ModelProto()
    try:
        proto.pieces, proto.scores, proto.types, start = read_usual_pieces(data)
        for number, value in read_fields(data[start:]):
            if number == 1 and isinstance(value, bytes):  # pieces
                piece, score, kind = "", 0.0, NORMAL
                for inner, item in read_fields(value):
                    if inner == 1:
                        piece = bytes(item).decode("utf-8")
                    elif inner == 2:
                        score = struct.unpack("<f", int(item).to_bytes(4, "little"))[0]
                    elif inner == 3:
                        kind = int(item)
                proto.pieces.append(piece)
                proto.scores.append(score)
                proto.types.append(kind)
            elif number == 2 and isinstance(value, bytes):  # trainer_spec
                for inner, item in read_fields(value):
                    if inner == 3:
                        proto.model_type = int(item)
                    elif inner == 24:
                        proto.treat_whitespace_as_suffix = bool(item)
                    elif inner == 35:
                        proto.byte_fallback = bool(item)
                    elif inner == 44:
                        proto.unk_surface = bytes(item).decode("utf-8")
            elif number == 3 and isinstance(value, bytes):  # normalizer_spec
                for inner, item in read_fields(value):
                    if inner == 1:
                        proto.normalizer_name = bytes(item).decode("utf-8")
                    elif inner == 2:
                        proto.charsmap = bytes(item)
                    elif inner == 3:
                        proto.add_dummy_prefix = bool(item)
                    elif inner == 4:
                        proto.remove_extra_whitespaces = bool(item)
                    elif inner == 5:
                        proto.escape_whitespaces = bool(item)
    except (ValueError, UnicodeDecodeError, struct.error) as error:
        raise ValueError(f"{source}: not a SentencePiece model ({error})") from None
    if not proto.pieces:
        raise ValueError(f"{source}: not a SentencePiece model (it has no pieces)")
    return proto


def check_supported(proto: ModelProto, source: str) -> None:
    """Refuse what this encoder does not implement, naming the field."""
    if proto.model_type != 2:
        kind = MODEL_TYPES.get(proto.model_type, proto.model_type)
        raise UnsupportedSentencePieceModel(
            f"{source}: trainer_spec.model_type = {kind}: only BPE models are implemented "
            "(a UNIGRAM model picks the most likely cut, which is another algorithm)"
        )
    if proto.charsmap and proto.normalizer_name != "identity":
        raise UnsupportedSentencePieceModel(
            f"{source}: normalizer_spec.name = {proto.normalizer_name!r}: its rule table "
            "(precompiled_charsmap) is not implemented, only the identity normalizer"
        )
    if proto.treat_whitespace_as_suffix:
        raise UnsupportedSentencePieceModel(
            f"{source}: trainer_spec.treat_whitespace_as_suffix = true: not implemented"
        )
    if USER_DEFINED in proto.types:
        piece = proto.pieces[proto.types.index(USER_DEFINED)]
        raise UnsupportedSentencePieceModel(
            f"{source}: pieces[{proto.types.index(USER_DEFINED)}] = {piece!r} is USER_DEFINED: "
            "user-defined pieces are not implemented"
        )
    if proto.byte_fallback:
        missing = [b for b in range(256) if f"<0x{b:02X}>" not in proto.pieces]
        if missing:
            raise UnsupportedSentencePieceModel(
                f"{source}: trainer_spec.byte_fallback = true, but no piece <0x{missing[0]:02X}>"
            )


# The encoder ----------------------------------------------------------------------------


class SentencePieceBPE:
    """A SentencePiece BPE model with the byte-level tokenizer's surface.

    ``encode`` reads the special tokens (the control pieces, such as ``<s>`` and ``</s>``)
    by tiktoken's policy, as :class:`~bpe_course.tokenizer.Tokenizer` does; SentencePiece
    itself never reads them from text, which is what :meth:`encode_ordinary` does. No BOS
    is added: ``[tokenizer.special_tokens["<s>"]] + ids`` is what Mistral's models read.

    >>> tokenizer = SentencePieceBPE.from_pieces(
    ...     ["<unk>", "<s>", "</s>", "▁", "l", "o", "w", "lo", "▁lo", "▁low"],
    ...     [0, 0, 0, -1, -2, -3, -4, -5, -6, -7], [2, 3, 3, 1, 1, 1, 1, 1, 1, 1])
    >>> ids = tokenizer.encode("low lo")
    >>> [tokenizer.id_to_piece(i) for i in ids], tokenizer.decode(ids)
    (['▁low', '▁lo'], 'low lo')
    """

    def __init__(self, proto: ModelProto, *, name: str = "sentencepiece",
                 source: str = "model", held: str | None = None) -> None:
        check_supported(proto, source)
        self.name = name
        self.proto = proto
        self.pieces = pieces = list(proto.pieces)
        self.vocab_size = size = len(pieces)
        types = proto.types
        # Tables made by C loops (dict, zip): 32,000 pieces in a few ms. Only
        # the few pieces that are not NORMAL (control, unknown, bytes) take a Python step.
        others = [(i, kind) for i, kind in enumerate(types) if kind != NORMAL]
        self._ids: dict[str, int] = dict(zip(pieces, range(size)))
        if len(self._ids) == size and "" not in self._ids:
            self._reserved = {pieces[i]: self._ids.pop(pieces[i]) for i, kind in others
                              if kind not in (USER_DEFINED, UNUSED)}
        else:  # a piece repeated (allowed once as reserved, once not) or empty
            self._ids, self._reserved = _tables(pieces, types, source)
        self._unused = {pieces[i] for i, kind in others if kind == UNUSED}
        self.unk_id = next((i for i, kind in others if kind == UNKNOWN), None)
        self._byte_ids = [self._reserved.get(f"<0x{b:02X}>") for b in range(256)]
        self.special_tokens = {pieces[i]: i for i, kind in others if kind == CONTROL}
        self._specials = SpecialTokens(self.special_tokens)
        self._cache: dict[str, tuple[int, ...]] = {}
        if held is None:  # the characters some piece holds before a ▁ (the cache keeps them)
            held = "".join(sorted({p[i - 1] for p in self._ids if SPACE in p[1:]
                                   for i in range(1, len(p)) if p[i] == SPACE != p[i - 1]}))
        self.held = held
        # Cut before a ▁ that follows a character no piece holds before a ▁.
        self._cuts = re.compile(f"(?<=[^{re.escape(held + SPACE)}])(?={SPACE})")

    @classmethod
    def from_pieces(cls, pieces: Sequence[str], scores: Sequence[float], types: Sequence[int],
                    **settings) -> SentencePieceBPE:
        """A model from its pieces (for examples and tests); ``settings`` as in
        :class:`ModelProto`, BPE with the identity normalizer unless said otherwise."""
        proto = ModelProto(list(pieces), list(scores), list(types), model_type=2,
                           normalizer_name="identity", remove_extra_whitespaces=False)
        for key, value in settings.items():
            setattr(proto, key, value)
        return cls(proto, name="sentencepiece")

    def __repr__(self) -> str:
        return (f"SentencePieceBPE(name={self.name!r}, pieces={self.vocab_size}, "
                f"byte_fallback={self.proto.byte_fallback})")

    # tiktoken's names
    @property
    def n_vocab(self) -> int:
        return self.vocab_size

    @property
    def max_token_value(self) -> int:
        return self.vocab_size - 1

    @property
    def eot_token(self) -> int | None:
        """The id of ``</s>`` (the end of a text), or None."""
        return self.special_tokens.get("</s>")

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    def id_to_piece(self, token_id: int) -> str:
        """The piece's text, ``▁`` and ``<0x41>`` spelled as in the model."""
        return self.pieces[self._checked(token_id)]

    # Encoding -----------------------------------------------------------------------------

    def normalize(self, text: str) -> str:
        """The text the merges see: spaces as ``▁``, a dummy ``▁`` in front (identity
        normalizer; extra spaces removed only when the model says so)."""
        if not text:
            return ""
        proto = self.proto
        if proto.remove_extra_whitespaces:
            text = " ".join(part for part in text.split(" ") if part)
            if not text:
                return ""
        if proto.add_dummy_prefix:
            text = " " + text
        return text.replace(" ", SPACE) if proto.escape_whitespaces else text

    def encode(self, text: str, *, allowed_special: AllowedSpecial = "all",
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        """Encode ``text``; allowed special tokens are read as their ids, and the text
        between them is encoded as SentencePiece encodes a text of its own (each part
        with its dummy ``▁``)."""
        parts = self._specials.split(text, allowed_special, disallowed_special, "encode")
        ids: list[int] = []
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
            elif part:
                ids += self._encode_normalized(self.normalize(part))
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids SentencePiece gives (``<s>`` in the text is plain text)."""
        text = replace_lone_surrogates(checked_text(text, "encode_ordinary"))
        return self._encode_normalized(self.normalize(text))

    def encode_batch(self, texts: Sequence[str], **options) -> list[list[int]]:
        """``[encode(text, ...) for text in texts]`` (in this process)."""
        specials = {k: v for k, v in options.items() if k.endswith("_special")}
        return [self.encode(text, **specials) for text in checked_texts(texts, "encode_batch")]

    def encode_ordinary_batch(self, texts: Sequence[str], **options) -> list[list[int]]:
        """``[encode_ordinary(text) for text in texts]`` (in this process)."""
        texts = checked_texts(texts, "encode_ordinary_batch")
        return [self.encode_ordinary(text) for text in texts]

    def encode_iterable(self, iterable: Iterable[str], **options) -> Iterator[int]:
        """Refused: a SentencePiece model has no split pattern, so no place in a text is
        known to be final before the text ends, and joining a stream cut anywhere would
        change the ids at the cut. Join the stream and call :meth:`encode`."""
        raise NotImplementedError(
            f"{self.name}: encode_iterable is not available for a SentencePiece model: with no "
            "split pattern, no place in a stream is safe to cut; use encode(''.join(chunks))"
        )

    def _encode_normalized(self, text: str) -> list[int]:
        ids: list[int] = []
        cache = self._cache
        for word in self._cuts.split(text):
            if not word:
                continue
            found = cache.get(word)
            if found is None:
                found = self._encode_word(word)
                if len(word) <= 256:
                    if len(cache) >= 1 << 15:
                        cache.clear()
                    cache[word] = found
            ids += found
        return ids

    def _encode_word(self, text: str) -> tuple[int, ...]:
        """Join characters by piece score, as SentencePiece's BPE does, then map to ids."""
        symbols = list(text)
        n = len(symbols)
        following = list(range(1, n + 1))
        previous = list(range(-1, n - 1))
        ids, scores, unused = self._ids, self.proto.scores, self._unused
        agenda: list[tuple[float, int, int, int]] = []
        made_of: dict[str, tuple[str, str]] = {}  # how each unused piece was joined

        def consider(left: int, right: int) -> None:
            if left < 0 or right >= n:
                return
            joined = symbols[left] + symbols[right]
            found = ids.get(joined)  # a piece joined by score (not a reserved one)
            if found is not None:
                heapq.heappush(agenda, (-scores[found], left, right, len(joined)))
                if joined in unused:
                    made_of[joined] = (symbols[left], symbols[right])

        for index in range(n - 1):
            consider(index, index + 1)
        while agenda:
            _, left, right, size = heapq.heappop(agenda)
            if not symbols[left] or not symbols[right] or \
                    len(symbols[left]) + len(symbols[right]) != size:
                continue  # a pair that has changed since it was seen
            symbols[left] += symbols[right]
            symbols[right] = ""
            following[left] = following[right]
            if following[right] < n:
                previous[following[right]] = left
            consider(previous[left], left)
            consider(left, following[left])
        ids: list[int] = []
        index = 0
        while index < n:
            self._piece_ids(symbols[index], ids, made_of)
            index = following[index]
        return tuple(ids)

    def _piece_ids(self, piece: str, out: list[int], made_of: dict[str, tuple[str, str]]) -> None:
        token_id = self._reserved.get(piece, self._ids.get(piece))
        if token_id is not None and piece in made_of:  # unused: cut back into what made it
            for part in made_of[piece]:
                self._piece_ids(part, out, made_of)
        elif token_id is not None:
            out.append(token_id)
        elif self.proto.byte_fallback:
            out += [self._byte_ids[byte] for byte in piece.encode("utf-8")]
        elif not (out and out[-1] == self.unk_id):  # runs of unknown characters: one <unk>
            out.append(self.unk_id)

    # Decoding -----------------------------------------------------------------------------

    def _checked(self, token_id: int) -> int:
        token_id = token_id_of(token_id, 0)
        if not 0 <= token_id < self.vocab_size:
            raise ValueError(f"unknown token id {token_id}: this model's ids are "
                             f"0..{self.vocab_size - 1}")
        return token_id

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """One id's bytes: a byte piece's byte, a piece's text with ``▁`` as a space, a
        special token's text."""
        token_id = self._checked(token_id)
        piece, kind = self.pieces[token_id], self.proto.types[token_id]
        if kind == BYTE:
            return bytes([int(piece[3:5], 16)])
        return piece.replace(SPACE, " ").encode("utf-8")

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(token_id) for token_id in checked_ids(ids)]

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every piece that is not a control, unknown or byte piece, sorted."""
        kinds = self.proto.types
        return sorted(piece.replace(SPACE, " ").encode("utf-8")
                      for piece, kind in zip(self.pieces, kinds) if kind in (NORMAL, UNUSED))

    def surfaces(self, ids: Iterable[int]) -> list[bytes]:
        """What each id adds to the decoded text's UTF-8, by SentencePiece's rules: a byte
        piece its byte, a control piece nothing, ``<unk>`` its surface `` ⁇ ``, any other
        piece its text with ``▁`` as a space, the dummy one at the start dropped."""
        types, proto = self.proto.types, self.proto
        out: list[bytes] = []
        at_start, saw_dummy, written = True, False, False
        strip = proto.add_dummy_prefix or proto.remove_extra_whitespaces
        for token_id in map(self._checked, checked_ids(ids)):
            kind, piece = types[token_id], self.pieces[token_id]
            if kind == BYTE:
                out.append(bytes([int(piece[3:5], 16)]))
                written = True
                continue
            if saw_dummy or written:
                at_start = False
            saw_dummy = False
            if kind == CONTROL:
                out.append(b"")
                continue
            if kind == UNKNOWN:
                piece = proto.unk_surface
            elif at_start and strip and piece.startswith(SPACE):
                piece = piece[1:]
                saw_dummy = not proto.remove_extra_whitespaces
            out.append(piece.replace(SPACE, " ").encode("utf-8"))
            written = written or bool(piece)
        return out

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The UTF-8 bytes :meth:`decode` reads (before it replaces invalid byte runs)."""
        return b"".join(self.surfaces(ids))

    def decode_with_offsets(self, ids: Iterable[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` (as :meth:`decode` gives it) and, for each token, the index of
        the character it starts in, by :meth:`Tokenizer.decode_with_offsets
        <bpe_course.tokenizer.Tokenizer.decode_with_offsets>`' rule. The bytes must be valid
        UTF-8."""
        from ..tokenizer import Tokenizer  # the byte-level tokenizer: 18 ms, only for this

        return Tokenizer.decode_with_offsets(_BySurface(self.surfaces), ids)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode as SentencePiece does: ``▁`` is a space, the first one (the dummy prefix)
        is dropped, control pieces give nothing, ``<unk>`` gives `` ⁇ ``, and each byte of
        an invalid byte run gives U+FFFD."""
        codecs.lookup_error(errors)
        types, proto = self.proto.types, self.proto
        out: list[str] = []
        pending = bytearray()
        at_start, saw_dummy = True, False  # SentencePiece's is_bos_ws and bos_ws_seen
        strip = proto.add_dummy_prefix or proto.remove_extra_whitespaces
        for token_id in map(self._checked, checked_ids(ids)):
            kind, piece = types[token_id], self.pieces[token_id]
            if kind == BYTE:
                pending.append(int(piece[3:5], 16))
                continue
            if pending:
                out.append(_decode_bytes(bytes(pending), errors))
                pending.clear()
            if saw_dummy or any(out):
                at_start = False
            saw_dummy = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                out.append(proto.unk_surface)
                continue
            if at_start and strip and piece.startswith(SPACE):
                piece = piece[1:]
                saw_dummy = not proto.remove_extra_whitespaces
            out.append(piece.replace(SPACE, " "))
        if pending:
            out.append(_decode_bytes(bytes(pending), errors))
        return "".join(out)


def _tables(pieces: list[str], types: list[int], source: str) -> tuple[dict, dict]:
    """The ids of the pieces joined by score and of the reserved ones (control, unknown,
    bytes), one Python step a piece; refuses a piece that is empty or repeated in its table."""
    ids: dict[str, int] = {}
    reserved: dict[str, int] = {}
    for token_id, (piece, kind) in enumerate(zip(pieces, types)):
        table = ids if kind in (NORMAL, USER_DEFINED, UNUSED) else reserved
        if piece in table or not piece:
            raise ValueError(f"{source}: pieces[{token_id}] {piece!r} is empty or repeated")
        table[piece] = token_id
    return ids, reserved


class _BySurface:
    """Lends :meth:`SentencePieceBPE.surfaces` as ``decode_tokens_bytes``, the one method
    ``Tokenizer.decode_with_offsets`` reads, so the offsets rule has one implementation."""

    def __init__(self, surfaces) -> None:
        self.decode_tokens_bytes = surfaces


def _decode_bytes(data: bytes, errors: str) -> str:
    """UTF-8 with one U+FFFD for each byte that starts no valid character (SentencePiece's
    rule; Python's ``replace`` would give one for a whole cut-off character)."""
    if errors != "replace":
        return data.decode("utf-8", errors)
    out: list[str] = []
    position = 0
    while position < len(data):
        for size in (1, 2, 3, 4):
            try:
                out.append(data[position : position + size].decode("utf-8"))
                position += size
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\ufffd")
            position += 1
    return "".join(out)


def load_sentencepiece(
    path: str | os.PathLike[str], *, name: str | None = None
) -> SentencePieceBPE:
    """A :class:`SentencePieceBPE` from a ``.model`` file; refuses a model of another type
    or with a normalizer not implemented, naming the field."""
    source = os.fspath(path)
    with open(source, "rb") as file:
        data = file.read()
    proto = read_model_proto(data, source)
    return SentencePieceBPE(proto, name=name or os.path.basename(source), source=source)


#: The settings of a :class:`ModelProto` besides its pieces (kept in a cache file's meta).
PROTO_SETTINGS = ("model_type", "byte_fallback", "treat_whitespace_as_suffix", "unk_surface",
                  "normalizer_name", "add_dummy_prefix", "remove_extra_whitespaces",
                  "escape_whitespaces")


def cached_sentencepiece(
    path: str | os.PathLike[str], settings: Sequence[object], *, name: str
) -> SentencePieceBPE:
    """:func:`load_sentencepiece` once; then the pieces (one UTF-8 text, split at NULs: a
    model with a NUL in a piece is not cached), scores, types and ``held`` come from the
    start-up cache (:mod:`bpe_course.speed.cachefiles`). ``settings`` must name the file's
    contents (its sha256)."""
    source = os.fspath(path)

    def pack(tokenizer: SentencePieceBPE) -> tuple[dict, dict] | None:
        proto = tokenizer.proto
        joined = "\0".join(proto.pieces)
        if type(tokenizer) is not SentencePieceBPE or joined.count("\0") != len(proto.pieces) - 1:
            return None
        meta = {key: getattr(proto, key) for key in PROTO_SETTINGS}
        return meta, {"pieces": joined.encode("utf-8"), "scores": array("d", proto.scores),
                      "types": cachefiles.ids_array(proto.types), "charsmap": proto.charsmap,
                      "held": tokenizer.held.encode("utf-8")}

    def unpack(meta: dict, sections: dict) -> SentencePieceBPE:
        pieces = sections["pieces"].decode("utf-8").split("\0")
        proto = ModelProto(pieces, sections["scores"].tolist(), sections["types"].tolist(),
                           charsmap=sections["charsmap"], **meta)
        if not len(pieces) == len(proto.scores) == len(proto.types):
            raise ValueError("sections of different lengths")
        return SentencePieceBPE(proto, name=name, source=source,
                                held=sections["held"].decode("utf-8"))

    return cachefiles.cached(name, settings, lambda: load_sentencepiece(source, name=name),
                             pack, unpack)
