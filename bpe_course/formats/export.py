"""Exports: hand a trained tokenizer to Hugging Face ``tokenizers`` and to ``tiktoken``.

Both libraries run byte-level BPE, so a vocabulary and its merges carry over; what needs
care is making them split and merge *exactly* as :class:`~bpe_course.tokenizer.Tokenizer`
does, so the ids are the same for every text.

Hugging Face ``tokenizer.json``
    Special tokens become "added tokens" (cut out before anything else, longest match
    first, as we do). The text between them goes through a ``Split`` pre-tokenizer with our
    regex, then ``ByteLevel`` turns each piece's bytes into GPT-2's printable characters,
    and a ``BPE`` model (vocab and merges spelled the same way) applies the merges in
    order. ``ignore_merges`` is off: with it on, HF returns any piece spelled like a token
    as that token, even one the merges would split (``"abc"`` with merges ``b+c``,
    ``a+b``, ``ab+c``). Our encoder takes that shortcut only for tokens the merges build
    whole, so it always gives what the merges give, as HF does with the flag off.

    HF runs the regex with Oniguruma, which reads a few things differently from Python's
    ``regex``: ``\\p{N}{1,3}+`` (possessive "one to three digits" in GPT-4's pattern)
    means "one or more groups of one to three digits" to Oniguruma, so numbers would not
    be cut in threes. :func:`onig_pattern` writes GPT-4's pattern without it; because
    nothing follows that quantifier inside its alternative, greedy and possessive match
    the same text. The tests check the two spellings split identically, and that the
    character classes (``\\p{L}``, ``\\p{N}``, ``\\s``) agree on every code point except
    the characters new in Unicode 17, which ``regex`` already knows and the Oniguruma in
    ``tokenizers`` 0.23 does not yet (text using them could split differently).

    o200k_base's pattern needs one change of another kind. Its word classes use the
    general categories (``\\p{Lu}``, ``\\p{Ll}``, ``\\p{Lo}``, ...), and Unicode (after
    14.0, by 16.0) moved one old letter, U+0295 ``ʕ``, from lower case (Ll) to "other
    letter" (Lo), which the pattern counts as upper *and* lower case. ``regex`` and
    tiktoken read it the new way, Oniguruma the old way, so ``ʕAa`` would be one piece to
    them and ``ʕ`` + ``Aa`` to HF.
    :func:`onig_pattern` names ``ʕ`` in the upper-case class, which gives Oniguruma the new
    reading (and changes nothing once its tables catch up). The tests check that every other
    code point is in the same classes in both engines, Unicode 17's new characters aside.

tiktoken
    A tiktoken encoding has no merge list: each token's *rank* is both its id and its merge
    priority, and tiktoken joins any adjacent pair whose concatenation has the lowest
    rank. That equals our merge order only when ids follow merge order and each token is
    rebuilt from exactly the pair that created it; :func:`to_tiktoken_params` checks both
    and refuses clearly otherwise.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..base import BPETables, first_difference
from ..pretokens import GPT4_PATTERN, O200K_PATTERN
from ..safety.files import atomic_write
from ..safety.quoting import quote
from .gpt2 import token_to_str, unicode_to_bytes
from .ranks import check_mergeable_rank, merges_from_ranks

#: GPT-4's split pattern spelled for Oniguruma: ``\p{N}{1,3}`` instead of ``\p{N}{1,3}+``.
GPT4_ONIG_PATTERN = GPT4_PATTERN.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")

#: o200k_base's pattern spelled for Oniguruma: U+0295 added to its upper-case class (see above).
O200K_ONIG_PATTERN = O200K_PATTERN.replace(
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}\u0295]"
)

#: A possessive counted repeat such as ``{1,3}+``, which Oniguruma reads as a repeat of a repeat.
_POSSESSIVE_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}\+")


def onig_pattern(pattern: str) -> str:
    """``pattern`` spelled so Hugging Face's regex engine (Oniguruma) splits text the same way.

    GPT-2's pattern needs no change, GPT-4's loses one possessive ``+`` and o200k_base's
    names one letter whose category changed (see the module docstring). Any other pattern
    is passed on unchanged, unless it uses a possessive counted repeat, which would
    silently change meaning, so that raises ``ValueError``.
    """
    if pattern == GPT4_PATTERN:
        return GPT4_ONIG_PATTERN
    if pattern == O200K_PATTERN:
        return O200K_ONIG_PATTERN
    if _POSSESSIVE_INTERVAL.search(pattern):
        raise ValueError(
            "the split pattern uses a possessive counted repeat such as {1,3}+, which "
            "Hugging Face's regex engine reads as '{1,3} repeated'; rewrite it as an atomic "
            "group (?>...{1,3}) or a plain {1,3} before exporting"
        )
    return pattern


def _ordinary_tokens(tokenizer: BPETables) -> list[tuple[int, bytes]]:
    """``(id, bytes)`` of every token except special tokens, in id order.

    Special tokens are exported separately (HF "added tokens", tiktoken ``special_tokens``);
    one is kept here only if BPE itself needs its bytes (a single byte or a merge result).
    """
    special_ids = set(tokenizer.special_tokens.values())
    needed = {left + right for left, right in tokenizer.merges}
    return [
        (token_id, token)
        for token_id, token in sorted(tokenizer.vocab.items())
        if token_id not in special_ids or len(token) == 1 or token in needed
    ]


# Hugging Face ---------------------------------------------------------------------------


def decodes_back(content: str) -> bool:
    """Would HF's ``ByteLevel`` decoder turn this added token back into its own UTF-8?

    The decoder maps each character through GPT-2's byte table when *every* character is
    in it, else it keeps the token's UTF-8. A token like ``<|é|>`` or ``«eos»`` is all table
    characters, and ``é`` (U+00E9) stands for the byte 0xE9 there, so it would decode to
    invalid UTF-8; :func:`hf_decoder` rewrites such tokens first.

    >>> decodes_back("<|endoftext|>"), decodes_back("<|é|>")
    (True, False)
    """
    table = unicode_to_bytes()
    if not all(char in table for char in content):
        return True
    return bytes(table[char] for char in content) == content.encode("utf-8")


def onig_literal(text: str) -> str:
    """``text`` as an Oniguruma regex that matches exactly it (ASCII punctuation escaped)."""
    return "".join("\\" + char if char.isascii() and not char.isalnum() else char for char in text)


def hf_decoder(special_tokens: Iterable[str]) -> dict[str, Any]:
    """HF's ``ByteLevel`` decoder, preceded by a rewrite of each special token it would garble.

    Decoders run token by token, so a ``Replace`` anchored at both ends (``^«eos»$``) sees
    only a token that *is* the special token, and swaps it for its byte-level spelling
    (``Â«eosÂ»``), which ``ByteLevel`` then turns into the right UTF-8. An ordinary token
    cannot be spelled the same way (:func:`hf_json` refuses such a collision).
    """
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": False}
    rewrites = [
        {"type": "Replace", "pattern": {"Regex": f"^{onig_literal(content)}$"},
         "content": token_to_str(content.encode("utf-8"))}
        for content in special_tokens
        if not decodes_back(content)
    ]
    return {"type": "Sequence", "decoders": [*rewrites, byte_level]} if rewrites else byte_level


def hf_json(tokenizer: BPETables) -> dict[str, Any]:
    """The ``tokenizer.json`` document (as a dict) for Hugging Face ``tokenizers``."""
    vocab: dict[str, int] = {}
    for token_id, token in _ordinary_tokens(tokenizer):
        key = token_to_str(token)
        if key in vocab:
            raise ValueError(
                f"ids {vocab[key]} and {token_id} have the same bytes {quote(token)}; a Hugging "
                "Face vocabulary maps each token string to one id"
            )
        vocab[key] = token_id
    added = []
    for content, token_id in tokenizer.special_tokens.items():
        # HF gives an added token the id the model has for its text, so the model's vocab
        # must know the token under its plain text.
        if vocab.setdefault(content, token_id) != token_id:
            raise ValueError(
                f"special token {quote(content)} (id {token_id}) has the same spelling as "
                f"ordinary token id {vocab[content]} in the Hugging Face vocabulary"
            )
        added.append(
            {
                "id": token_id,
                "content": content,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": onig_pattern(tokenizer.pattern)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": hf_decoder(tokenizer.special_tokens),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,  # always what the merges give, as Tokenizer.encode
            "vocab": vocab,
            "merges": [[token_to_str(a), token_to_str(b)] for a, b in tokenizer.merges],
        },
    }


def save_hf(tokenizer: BPETables, path: str | os.PathLike[str]) -> None:
    """Write ``tokenizer.json`` for ``tokenizers.Tokenizer.from_file`` (atomically).

    The layout is the one ``tokenizers`` 0.23 writes itself (merges as pairs of strings).
    """
    document = hf_json(tokenizer)
    with atomic_write(path) as file:
        json.dump(document, file, ensure_ascii=False)
        file.write("\n")


def to_hf(tokenizer: BPETables):
    """A live ``tokenizers.Tokenizer`` (needs the ``tokenizers`` package)."""
    from tokenizers import Tokenizer as HFTokenizer

    return HFTokenizer.from_str(json.dumps(hf_json(tokenizer)))


# tiktoken -------------------------------------------------------------------------------


def tiktoken_ranks(tokenizer: BPETables) -> dict[bytes, int]:
    """``{token bytes: rank}`` with rank = id, after checking tiktoken would merge as we do.

    Raises ``ValueError`` when two ids share bytes (a rank table maps bytes to one rank) or
    when ranks do not reproduce the merges: tiktoken always joins the adjacent pair whose
    result has the lowest rank, so merge ``k`` must create a higher id than every earlier
    merge, and each token must be rebuilt from the very pair that made it. The id 2**32 - 1
    means "no merge" to tiktoken, so no token of two or more bytes may have it.
    """
    ranks: dict[bytes, int] = {}
    for token_id, token in _ordinary_tokens(tokenizer):
        if token in ranks:
            raise ValueError(
                f"ids {ranks[token]} and {token_id} share the bytes {quote(token)}; tiktoken's "
                "rank table gives each byte string exactly one rank (= id)"
            )
        check_mergeable_rank(token, token_id, "tiktoken cannot hold this tokenizer")
        ranks[token] = token_id
    merged_ids = [ranks[left + right] for left, right in tokenizer.merges]
    for rank, (before, after) in enumerate(zip(merged_ids, merged_ids[1:])):
        if after <= before:
            raise ValueError(
                f"merge {rank + 1} makes id {after}, lower than id {before} from merge {rank}; "
                "tiktoken merges in id order, so ids must follow the order merges were learned"
            )
    try:
        rebuilt = merges_from_ranks(ranks)
    except ValueError as error:
        raise ValueError(f"tiktoken would not reproduce the merges: {error}") from None
    index = first_difference(rebuilt, tokenizer.merges)
    if index is not None:
        raise ValueError(
            f"tiktoken would build token {quote(b''.join(rebuilt[index]))} from "
            f"{quote(rebuilt[index])} but merge {index} makes it from "
            f"{quote(tokenizer.merges[index])}; its rank-based BPE "
            "would give different ids"
        )
    return ranks


def to_tiktoken_params(tokenizer: BPETables, name: str) -> dict[str, Any]:
    """Keyword arguments for ``tiktoken.Encoding(**params)``: same ids as ``tokenizer``."""
    params = {
        "name": name,
        "pat_str": tokenizer.pattern,
        "mergeable_ranks": tiktoken_ranks(tokenizer),
        "special_tokens": dict(tokenizer.special_tokens),
    }
    check_tiktoken_specials(params)
    return params


def check_tiktoken_specials(params: dict[str, Any]) -> None:
    """Raise ``ValueError`` if tiktoken would cut these special tokens out differently.

    We match special tokens longest first. tiktoken joins them into one regex in an order
    of its own (its hash table's), and a regex takes the first alternative that matches, so
    when one special token starts another (``<|end`` and ``<|endoftext|>``) tiktoken may
    find the shorter one. Only such nested tokens can differ, and only at their start, so
    encoding each longer one alone with a real ``tiktoken.Encoding`` settles it.
    """
    specials = params["special_tokens"]
    longer = [t for t in specials if any(o != t and t.startswith(o) for o in specials)]
    if not longer:
        return
    import tiktoken

    encoding = tiktoken.Encoding(**params)
    for token in longer:
        got = encoding.encode(token, allowed_special="all")
        if got != [specials[token]]:
            raise ValueError(
                f"tiktoken would read special token {quote(token)} as ids {quote(got)}, not "
                f"[{specials[token]}]: it tries special tokens in an order of its own, not "
                "longest first; rename the shorter one so that neither starts the other"
            )


def to_tiktoken(tokenizer: BPETables, name: str):
    """A live ``tiktoken.Encoding`` with the same ids as ``tokenizer``."""
    import tiktoken

    return tiktoken.Encoding(**to_tiktoken_params(tokenizer, name))


def save_tiktoken(tokenizer: BPETables, path: str | os.PathLike[str]) -> None:
    """Write a ``.tiktoken`` rank file (``base64-token rank`` per line), atomically.

    The file holds no pattern and no special tokens (tiktoken keeps those in code), so
    save them beside it; :func:`bpe_course.openai.load_tiktoken_file` takes both.
    """
    ranks = tiktoken_ranks(tokenizer)
    with atomic_write(path) as file:
        for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
            file.write(f"{base64.b64encode(token).decode('ascii')} {rank}\n")


def check_exportable(special_tokens: Iterable[str], pattern: str) -> None:
    """Raise ``ValueError`` now if a tokenizer with these special tokens and this pattern
    could not be exported, so a long training does not end in a failed save.

    Whether an export works depends only on the special tokens and the pattern, not on
    the merges, so an empty tokenizer (just the 256 bytes) stands in for the trained one.
    """
    vocab = {byte: bytes([byte]) for byte in range(256)}
    for token in special_tokens:
        data = token.encode("utf-8")
        if len(data) == 1:
            raise ValueError(
                f"special token {quote(token)} is the single byte 0x{data[0]:02x}, which is "
                f"already token {data[0]}; the files give each token's bytes one id, so a "
                "special token needs at least two bytes"
            )
        vocab[len(vocab)] = data
    specials = {token: 256 + index for index, token in enumerate(special_tokens)}
    stand_in = _StandIn(vocab, [], specials, pattern)
    hf_json(stand_in)
    tiktoken_ranks(stand_in)


class ExportMethods:
    """The exports as methods of a tokenizer (``tokenizer.save_hf(path)``): the tokenizer
    class inherits them, so its own file holds only what it does itself."""

    def save_hf(self: BPETables, path: str | os.PathLike[str]) -> None:
        """Write a Hugging Face ``tokenizer.json`` that encodes exactly as this tokenizer."""
        save_hf(self, path)

    def to_hf(self: BPETables):
        """This tokenizer as a live ``tokenizers.Tokenizer`` (same ids)."""
        return to_hf(self)

    def to_tiktoken_params(self: BPETables, name: str) -> dict:
        """Keyword arguments for ``tiktoken.Encoding(**params)`` with the same ids."""
        return to_tiktoken_params(self, name)

    def to_tiktoken(self: BPETables, name: str):
        """This tokenizer as a live ``tiktoken.Encoding`` (same ids)."""
        return to_tiktoken(self, name)

    def save_tiktoken(self: BPETables, path: str | os.PathLike[str]) -> None:
        """Write a ``.tiktoken`` rank file (special tokens and pattern are not in it)."""
        save_tiktoken(self, path)


@dataclass
class _StandIn:
    """The four tables of :class:`~bpe_course.base.BPETables`, for :func:`check_exportable`."""

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: dict[str, int]
    pattern: str
