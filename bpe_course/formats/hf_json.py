"""Hugging Face ``tokenizer.json`` files of the byte-level BPE family, read exactly.

Open models ship their tokenizer as one JSON document that names each stage of Hugging
Face's pipeline. For the byte-level BPE family (GPT-2, Llama 3, Qwen, DeepSeek, and what
:func:`~bpe_course.formats.export.save_hf` writes) the stages are:

1. **added tokens**: cut out of the raw text first, leftmost, the longest at one place.
   ``special`` ones follow the special-token policy of ``encode``; the others are always
   read as their id. ``lstrip``/``rstrip`` take the whitespace beside the token with it,
   ``single_word`` finds the token only between non-word characters, and a ``normalized``
   token is looked for after the normalizer ran, not before.
2. **normalizer**: ``NFC``, ``NFKC``, ``NFD``, ``NFKD`` or a ``Sequence`` of them.
3. **pre-tokenizer**: ``Split`` (a regex or a string; ``Isolated``, ``Removed``,
   ``MergedWithPrevious``, ``MergedWithNext``, ``Contiguous``; ``invert``), ``Digits``,
   ``Sequence``, and ``ByteLevel`` last (with or without GPT-2's regex, with or without
   ``add_prefix_space``). Each step cuts every piece the step before it left.
4. **model**: ``BPE`` over GPT-2's byte characters; with ``ignore_merges`` a piece spelled
   like a token is that token, without it only the merges decide.

Anything else (a WordPiece or Unigram model, a ``Metaspace`` pre-tokenizer, a normalizer or
an option not implemented here) is refused with the field that says so: encoding it with
the wrong rules would give ids that look right and are not. The post-processor (which
would add a BOS id) is left to the caller, as tiktoken does; ``truncation`` and ``padding``
concern batches of fixed length, not the ids of a text.
"""

from __future__ import annotations

import json
import operator
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

import regex

from ..base import checked_text
from ..naive import encode_naive, merge_ranks
from ..pretokens import GPT2_PATTERN, compile_pattern
from ..safety.specials import AllowedSpecial, DisallowedSpecial
from ..speed.fastsplit import Splitter
from ..speed.piececache import PieceTable
from ..tokenizer import Tokenizer
from ..utf8 import replace_lone_surrogates
from .gpt2 import str_to_token, unicode_to_bytes

#: The regex ``ByteLevel`` splits with when ``use_regex`` is on (Hugging Face's own spelling).
BYTE_LEVEL_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)

NORMALIZERS = ("NFC", "NFKC", "NFD", "NFKD")
BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class UnsupportedTokenizerJson(ValueError):
    """A ``tokenizer.json`` outside the byte-level BPE family, or using an option not
    implemented here; the message names the field."""


def _refuse(source: str, field: str, value: Any, why: str) -> UnsupportedTokenizerJson:
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return UnsupportedTokenizerJson(f"{source}: {field} = {shown}: {why}")


# Pre-tokenizer steps -------------------------------------------------------------------


def split_segments(
    finditer: Callable[[str], Iterator[Any]], text: str, behavior: str, invert: bool
) -> list[str]:
    """Cut ``text`` as Hugging Face's ``Split`` does: the matches of the pattern are the
    delimiters (with ``invert``, the text between them is), and ``behavior`` says where a
    delimiter goes. Empty pieces are dropped.

    >>> dash = regex.compile("-").finditer
    >>> split_segments(dash, "The-final--countdown", "MergedWithPrevious", False)
    ['The-', 'final-', '-', 'countdown']
    >>> split_segments(dash, "The-final--countdown", "Contiguous", False)
    ['The', '-', 'final', '--', 'countdown']
    """
    marked: list[tuple[int, int, bool]] = []  # (start, end, is a delimiter)
    previous = 0
    for match in finditer(text):
        start, end = match.span()
        if start > previous:
            marked.append((previous, start, invert))
        marked.append((start, end, not invert))
        previous = end
    if previous < len(text):
        marked.append((previous, len(text), invert))
    pieces: list[list[int]] = []
    if behavior == "Removed":
        pieces = [[start, end] for start, end, delimiter in marked if not delimiter]
    elif behavior == "Isolated":
        pieces = [[start, end] for start, end, _ in marked]
    elif behavior == "MergedWithNext":
        glue = False
        for start, end, delimiter in reversed(marked):
            if delimiter and not glue and pieces:
                pieces[-1][0] = start
            else:
                pieces.append([start, end])
            glue = delimiter
        pieces.reverse()
    else:  # Contiguous, MergedWithPrevious
        glue = False
        for start, end, delimiter in marked:
            joins = delimiter == glue if behavior == "Contiguous" else delimiter and not glue
            if joins and pieces:
                pieces[-1][1] = end
            else:
                pieces.append([start, end])
            glue = delimiter
    return [text[start:end] for start, end in pieces if end > start]


@dataclass
class SplitStep:
    """One ``Split``, ``Digits`` or ``ByteLevel`` step of a pre-tokenizer."""

    splitter: Splitter | None  # None: the step does not cut (ByteLevel without its regex)
    behavior: str = "Isolated"
    invert: bool = False
    prefix_space: bool = False  # ByteLevel's add_prefix_space

    def __call__(self, text: str) -> list[str]:
        if self.prefix_space and not text.startswith(" "):
            text = " " + text
        if self.splitter is None:
            return [text]
        if self.behavior == "Isolated":
            pieces = self.splitter.findall(text)
            if sum(map(len, pieces)) == len(text):  # the matches cover the text: no gaps
                return [piece for piece in pieces if piece] if "" in pieces else pieces
        return split_segments(self.splitter.finditer, text, self.behavior, self.invert)


class PreTokenizer:
    """The steps of a ``pre_tokenizer``, each cutting every piece the one before it left:
    a splitter with ``findall``, as :class:`~bpe_course.tokenizer.Tokenizer` uses one."""

    def __init__(self, steps: Sequence[SplitStep]) -> None:
        self.steps = list(steps)

    def findall(self, text: str) -> list[str]:
        """The pieces of ``text``; no step sees an empty piece (so none gets a prefix space)."""
        if not text:
            return []
        pieces = [text]
        for step in self.steps:
            if len(pieces) == 1:
                pieces = step(pieces[0])
            else:
                pieces = [piece for part in pieces for piece in step(part)]
        return [piece for piece in pieces if piece]


# Reading the document -------------------------------------------------------------------


@dataclass(frozen=True)
class AddedToken:
    """One of ``added_tokens``: text cut out before everything else, read as one id."""

    id: int
    content: str
    special: bool = False
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False


def read_normalizer(spec: Any, source: str, field: str = "normalizer") -> list[str]:
    """The Unicode normalization forms a ``normalizer`` applies, in order."""
    if spec is None:
        return []
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind == "Sequence":
        forms: list[str] = []
        for index, inner in enumerate(spec.get("normalizers", [])):
            forms += read_normalizer(inner, source, f"{field}.normalizers[{index}]")
        return forms
    if kind in NORMALIZERS:
        return [kind]
    raise _refuse(
        source, f"{field}.type", kind,
        f"only {', '.join(NORMALIZERS)} and Sequence normalizers are implemented",
    )


def read_pre_tokenizer(spec: Any, source: str) -> list[SplitStep]:
    """The steps of a ``pre_tokenizer``; ``ByteLevel`` must come last, and must come."""
    if spec is None:
        raise _refuse(source, "pre_tokenizer", None,
                      "no ByteLevel step, so this is not a byte-level BPE tokenizer")
    if spec.get("type") == "Sequence":
        listed = [(f"pre_tokenizer.pretokenizers[{i}]", step)
                  for i, step in enumerate(spec.get("pretokenizers", []))]
    else:
        listed = [("pre_tokenizer", spec)]
    steps = []
    for position, (field, step) in enumerate(listed):
        kind = step.get("type")
        if kind == "ByteLevel":
            if position != len(listed) - 1:
                raise _refuse(source, f"{field}.type", kind, "a step after ByteLevel would "
                              "cut its byte characters; not implemented")
            regex_on = step.get("use_regex", True)
            steps.append(SplitStep(Splitter(BYTE_LEVEL_PATTERN) if regex_on else None,
                                   prefix_space=bool(step.get("add_prefix_space", True))))
        elif kind == "Split":
            steps.append(_split_step(step, field, source))
        elif kind == "Digits":
            individual = bool(step.get("individual_digits", False))
            steps.append(SplitStep(Splitter(r"\p{N}"),
                                   "Isolated" if individual else "Contiguous"))
        else:
            why = ("Metaspace marks spaces with '▁' as SentencePiece does; this is not byte-level"
                   if kind == "Metaspace" else "not a pre-tokenizer of the byte-level BPE family")
            raise _refuse(source, f"{field}.type", kind, why)
    if not listed or listed[-1][1].get("type") != "ByteLevel":
        raise _refuse(source, "pre_tokenizer", spec,
                      "no ByteLevel step at the end, so this is not a byte-level BPE tokenizer")
    return steps


def _split_step(step: Mapping[str, Any], field: str, source: str) -> SplitStep:
    pattern = step.get("pattern", {})
    if "Regex" in pattern:
        text = pattern["Regex"]
    elif "String" in pattern:
        text = regex.escape(pattern["String"])
    else:
        raise _refuse(source, f"{field}.pattern", pattern,
                      "expected {'Regex': ...} or {'String': ...}")
    behavior = step.get("behavior")
    if behavior not in BEHAVIORS:
        raise _refuse(source, f"{field}.behavior", behavior, f"expected one of {BEHAVIORS}")
    try:
        compile_pattern(text)
    except ValueError as error:
        raise _refuse(source, f"{field}.pattern.Regex", text, str(error)) from None
    return SplitStep(Splitter(text), behavior, bool(step.get("invert", False)))


def read_model(model: Any, source: str) -> tuple[dict[str, int], list[tuple[str, str]], bool]:
    """``(vocab, merges, ignore_merges)`` of a BPE ``model``, refusing other models and the
    options that would change its rules."""
    if not isinstance(model, dict):
        raise _refuse(source, "model", model, "expected an object")
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise _refuse(source, "model.type", kind,
                      "only BPE models are of the byte-level BPE family")
    for option, allowed in (("dropout", (None, 0, 0.0)), ("continuing_subword_prefix", (None, "")),
                            ("end_of_word_suffix", (None, "")), ("byte_fallback", (None, False))):
        if model.get(option) not in allowed:
            raise _refuse(source, f"model.{option}", model.get(option),
                          "an option that changes how BPE cuts; not implemented")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise _refuse(source, "model.vocab", type(vocab).__name__, "expected {token: id}")
    merges = [tuple(merge.split(" ")) if type(merge) is str
              else tuple(merge) if type(merge) is list else (merge,)
              for merge in model.get("merges", [])]
    for index, pair in enumerate(merges):
        if len(pair) != 2 or type(pair[0]) is not str or type(pair[1]) is not str:
            raise _refuse(source, f"model.merges[{index}]", model["merges"][index],
                          "expected 'left right' or [left, right]")
    for key, token_id in vocab.items():
        if type(token_id) is not int or token_id < 0:
            raise _refuse(source, f"model.vocab[{key!r}]", token_id, "expected an id >= 0")
    return vocab, merges, bool(model.get("ignore_merges", False))


def read_decoder(spec: Any, source: str) -> dict[str, str]:
    """The rewrites a ``decoder`` makes of whole tokens before its ``ByteLevel`` step (the
    anchored ``Replace`` steps :func:`~bpe_course.formats.export.hf_decoder` writes)."""
    listed = spec.get("decoders", []) if isinstance(spec, dict) and spec.get("type") == "Sequence" \
        else [spec]
    rewrites: dict[str, str] = {}
    for index, step in enumerate(listed):
        field = "decoder" if len(listed) == 1 and spec is step else f"decoder.decoders[{index}]"
        kind = step.get("type") if isinstance(step, dict) else None
        if kind == "ByteLevel" and index == len(listed) - 1:
            return rewrites
        pattern = step.get("pattern", {}).get("Regex", "") if kind == "Replace" else ""
        if kind == "Replace" and pattern.startswith("^") and pattern.endswith("$"):
            rewrites[regex.sub(r"\\(.)", r"\1", pattern[1:-1])] = step.get("content", "")
            continue
        raise _refuse(source, f"{field}.type", kind,
                      "only a ByteLevel decoder (after whole-token Replace steps) gives back the "
                      "bytes of byte-level tokens")
    raise _refuse(source, "decoder", spec, "no ByteLevel decoder")


def token_bytes(key: str) -> bytes:
    """The bytes a vocabulary entry stands for: GPT-2's byte characters mapped back, or, for
    an entry with other characters (an added token's text), its own UTF-8, as Hugging
    Face's ``ByteLevel`` decoder gives it."""
    try:
        return str_to_token(key)
    except ValueError:
        return key.encode("utf-8")


def read_added_tokens(spec: Any, source: str) -> list[AddedToken]:
    tokens = []
    for index, item in enumerate(spec or []):
        try:
            tokens.append(AddedToken(
                id=int(item["id"]), content=str(item["content"]),
                special=bool(item.get("special", False)), lstrip=bool(item.get("lstrip", False)),
                rstrip=bool(item.get("rstrip", False)),
                single_word=bool(item.get("single_word", False)),
                normalized=bool(item.get("normalized", not item.get("special", False))),
            ))
        except (KeyError, TypeError, ValueError):
            raise _refuse(source, f"added_tokens[{index}]", item,
                          "expected an object with an integer id and a content") from None
        if not tokens[-1].content:
            raise _refuse(source, f"added_tokens[{index}].content", "", "an empty added token")
    return tokens


def from_tokenizer_json(path: str | os.PathLike[str], *, name: str | None = None) -> HFTokenizer:
    """Load a Hugging Face ``tokenizer.json`` of the byte-level BPE family (see the module
    docstring for what that covers); anything else raises
    :class:`UnsupportedTokenizerJson` naming the field."""
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as file:
            document = json.load(file)
    except json.JSONDecodeError as error:
        raise ValueError(f"{source}:{error.lineno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{source}: not UTF-8 at byte {error.start}") from None
    if name is None:
        name = os.path.basename(os.path.dirname(os.path.abspath(source))) or "tokenizer"
    return from_tokenizer_document(document, source, name=name)


def from_tokenizer_document(document: Any, source: str, *, name: str) -> HFTokenizer:
    """:func:`from_tokenizer_json` for a document already parsed (``source`` names it)."""
    if not isinstance(document, dict):
        raise _refuse(source, "(document)", type(document).__name__, "expected a JSON object")
    vocab_keys, merge_keys, ignore_merges = read_model(document.get("model"), source)
    forms = read_normalizer(document.get("normalizer"), source)
    steps = read_pre_tokenizer(document.get("pre_tokenizer"), source)
    rewrites = read_decoder(document.get("decoder"), source)
    added = read_added_tokens(document.get("added_tokens"), source)
    alphabet = set(unicode_to_bytes())
    vocab: dict[int, bytes] = {}
    whole: dict[bytes, int] = {}  # what a piece may be at once, with ignore_merges
    for key, token_id in vocab_keys.items():
        vocab[token_id] = token_bytes(key)
        if ignore_merges and alphabet.issuperset(key):
            whole[vocab[token_id]] = token_id
    for token in added:
        vocab[token.id] = token_bytes(rewrites.get(token.content, token.content))
    merges = [(token_bytes(left), token_bytes(right)) for left, right in merge_keys]
    try:
        return HFTokenizer(vocab, merges, added, PreTokenizer(steps), forms,
                           whole if ignore_merges else None, name=name)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None


# The tokenizer -------------------------------------------------------------------------


class HFTokenizer(Tokenizer):
    """A tokenizer read from a ``tokenizer.json``, encoding as Hugging Face ``tokenizers``.

    The :class:`~bpe_course.tokenizer.Tokenizer` surface, with the file's own stages in
    place of one split pattern: added tokens, normalizer, pre-tokenizer steps, BPE.
    ``special_tokens`` are the added tokens marked ``special``; the policy arguments of
    :meth:`encode` apply to them (a special token read as text is also not looked for
    inside, as Hugging Face's ``split_special_tokens`` does), while the other added tokens
    are always read as their id, also by :meth:`encode_ordinary`.

    ``encode_iterable`` reads the whole stream before encoding: with several split steps
    and added tokens that take whitespace with them, no place is proven safe to cut.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        added: Sequence[AddedToken],
        pre_tokenizer: PreTokenizer,
        normalizations: Sequence[str] = (),
        whole: Mapping[bytes, int] | None = None,
        *,
        name: str = "bpe_course",
        tables: Any = None,
    ) -> None:
        """``tables``: as :class:`~bpe_course.tokenizer.Tokenizer` takes them (the start-up
        cache), whole tokens final; ``whole`` then only says that merges are ignored."""
        specials = {token.content: token.id for token in added if token.special}
        super().__init__(vocab, merges, None, GPT2_PATTERN, name=name, tables=tables)
        self.special_tokens = specials
        self._specials = type(self._specials)(specials)
        self.added_tokens = list(added)
        self.normalizations = list(normalizations)
        self.ignore_merges = whole is not None
        self.pre_tokenizer = pre_tokenizer
        self._compiled = pre_tokenizer  # type: ignore[assignment]
        self._safe_cuts = None
        simple = [s for s in pre_tokenizer.steps if s.splitter is not None or s.prefix_space]
        single = len(simple) == 1 and simple[0].behavior == "Isolated" and not simple[0].invert \
            and not simple[0].prefix_space
        self.pattern = simple[0].splitter.pattern if single else ""  # "" : no single pattern
        if whole is not None and tables is None:
            shortcuts: dict[str, int] = {}
            for token, token_id in whole.items():
                try:
                    shortcuts[token.decode("utf-8")] = token_id
                except UnicodeDecodeError:
                    continue
            self._pieces = PieceTable(shortcuts, self._pieces.encode_piece)
        self._raw_finder = _AddedFinder([t for t in added if not t.normalized])
        self._normalized_finder = _AddedFinder(
            [t for t in added if t.normalized], self.normalize
        )

    def __repr__(self) -> str:
        return (
            f"HFTokenizer(name={self.name!r}, vocab_size={len(self.vocab)}, "
            f"merges={len(self.merges)}, added_tokens={len(self.added_tokens)})"
        )

    def normalize(self, text: str) -> str:
        """The normalizer's forms applied in order (none: the text as it is)."""
        for form in self.normalizations:
            text = unicodedata.normalize(form, text)
        return text

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        text = checked_text(text, "encode")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        self._specials.refuse([text], disallowed)
        ids: list[int] = []
        self._encode_with(replace_lone_surrogates(text), allowed, ids, self._pieces.__getitem__)
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        text = replace_lone_surrogates(checked_text(text, "encode_ordinary"))
        ids: list[int] = []
        self._encode_with(text, frozenset(), ids, self._pieces.__getitem__)
        return ids

    def _encode_ordinary(self, text: str, out: list[int]) -> None:
        self._encode_with(text, frozenset(), out, self._pieces.__getitem__)

    def encode_iterable(self, iterable: Iterable[str], **options) -> Iterator[int]:
        """The ids of ``"".join(iterable)``: the whole stream is read first (see the class)."""
        chunks = []
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
            chunks.append(chunk)
        return iter(self.encode("".join(chunks), **options))

    def encode_naive(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """The reference for :meth:`encode`: the same stages, each piece merged by
        :func:`bpe_course.naive.encode_naive` (or taken whole, with ``ignore_merges``)."""
        text = checked_text(text, "encode_naive")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        self._specials.refuse([text], disallowed)
        ranks = merge_ranks(self.merges)
        whole = self._pieces.whole if self.ignore_merges else {}

        def naive(piece: str) -> Sequence[int]:
            if piece in whole:
                return [whole[piece]]
            return [self._ids_of[token] for token in encode_naive(piece.encode("utf-8"), ranks)]

        ids: list[int] = []
        self._encode_with(replace_lone_surrogates(text), allowed, ids, naive)
        return ids

    def _encode_with(
        self,
        text: str,
        allowed: frozenset[str],
        out: list[int],
        piece_ids: Callable[[str], Sequence[int]],
    ) -> None:
        """Added tokens, normalizer, pre-tokenizer, BPE: Hugging Face's order."""
        findall = self._compiled.findall
        for token_id, raw in self._raw_finder.cut(text, allowed):
            if token_id is not None:
                out.append(token_id)
                continue
            for inner_id, part in self._normalized_finder.cut(self.normalize(raw), allowed):
                if inner_id is not None:
                    out.append(inner_id)
                else:
                    reduce(operator.iconcat, map(piece_ids, findall(part)), out)

    def save_hf(self, path: str | os.PathLike[str]) -> None:
        if not self.pattern or self.added_tokens and any(
            not t.special or t.lstrip or t.rstrip or t.single_word for t in self.added_tokens
        ) or self.normalizations or self.ignore_merges:
            raise ValueError(
                f"{self.name}: its stages are more than one split pattern and special tokens; "
                "copy the tokenizer.json it was read from instead"
            )
        super().save_hf(path)


class _AddedFinder:
    """Finds added tokens as Hugging Face does: leftmost, the longest at one place, each
    match consumed even when it is not read as its token (a special token not allowed,
    a ``single_word`` token inside a word)."""

    def __init__(
        self, tokens: Sequence[AddedToken], normalize: Callable[[str], str] | None = None
    ) -> None:
        self.by_text = {(normalize(t.content) if normalize else t.content): t for t in tokens}
        ordered = sorted(self.by_text, key=len, reverse=True)
        # Literals only, so the standard library's re serves (it compiles DeepSeek's 1,237 in
        # a third of the time regex takes); the first alternative that matches is the longest.
        self.finder = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def cut(self, text: str, allowed: frozenset[str]) -> list[tuple[int | None, str]]:
        """``(id, text)`` for each added token read, ``(None, text)`` for the text between."""
        if self.finder is None or not text:
            return [(None, text)]
        out: list[tuple[int | None, str]] = []
        position = 0
        for match in self.finder.finditer(text):
            token = self.by_text[match.group()]
            start, end = match.span()
            if token.special and token.content not in allowed:
                continue
            if token.single_word and (
                (start and _WORD.match(text, start - 1)) or _WORD.match(text, end)
            ):
                continue
            if token.lstrip:
                while start > position and _SPACE.match(text, start - 1):
                    start -= 1
            if token.rstrip:
                end = _SPACES.match(text, end).end()
            if start > position:
                out.append((None, text[position:start]))
            out.append((token.id, text[start:end]))
            position = end
        if position < len(text):
            out.append((None, text[position:]))
        return out


#: What Hugging Face counts as a word character and as whitespace beside an added token.
_WORD = regex.compile(r"\w")
_SPACE = regex.compile(r"\s")
_SPACES = regex.compile(r"\s*")
