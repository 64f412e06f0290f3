"""Notebook 05 (OpenAI's files): its exercise checks reject wrong answers and accept the
solutions.

The checkers live in :mod:`bpe_course.course.checks.openai_files`; the solutions are the
notebook's hidden ``solution`` cells, run here with the checks module's names and the few
notebook globals a solution uses. Every wrong answer below is one a learner could plausibly
write; each must make its checker return False with a hint that names the mistake.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    hinted_in_chinese,
    run_cells,
)

from bpe_course.course.checks import openai_files
from bpe_course.formats.gpt2 import bytes_to_unicode


@pytest.fixture(scope="module")
def nb05() -> dict[str, Any]:
    namespace = {"__name__": "exercises", **vars(openai_files),
                 "byte_to_char": bytes_to_unicode(), "base64": base64}
    return run_cells("05_openai_files", "solution", namespace)


SPELL_WRONG = [  # check_spell: (wrong answer, what its hint must say)
        (lambda data: data.decode("latin-1"), "not itself"),
        (lambda data: data.decode("utf-8", errors="replace"), "need not be valid UTF-8"),
        (lambda data: data.decode("utf-8", errors="ignore"), "one character per byte"),
        (lambda data: "".join(chr(256 + byte) for byte in data), "byte 33 is written '!'"),
        (lambda data: data, "return a str"),
]


VISIBLE = [byte for byte, char in bytes_to_unicode().items() if char == chr(byte)]


BYTE_ID_WRONG = [  # check_byte_id: (wrong answer, what its hint must say)
        (lambda byte: byte, "that is its value"),
        (lambda byte: ord(bytes_to_unicode()[byte]) - 33, "without gaps"),
        (lambda byte: VISIBLE.index(byte), "raised"),
        (lambda byte: VISIBLE.index(byte) if byte in VISIBLE else 188 + byte, "68 shifted bytes"),
]


def b64(token: bytes) -> str:
    return base64.b64encode(token).decode("ascii")


def file_of(line, order=sorted, keep_specials=False, end="\n", rank=None):
    """A tiktoken_file answer built from ``line(token, rank)``, with one step changed."""

    def tiktoken_file(vocab, special_tokens):
        specials = {token.encode() for token in special_tokens}
        kept = [(i, t) for i, t in order(vocab.items()) if keep_specials or t not in specials]
        lines = [line(t, i if rank is None else rank(n, i)) for n, (i, t) in enumerate(kept)]
        return "".join(text + end for text in lines) if end else "\n".join(lines)

    return tiktoken_file


TIKTOKEN_FILE_WRONG = [  # check_tiktoken_file: (wrong answer, what its hint must say)
        (file_of(lambda token, rank: f"{base64.b64encode(token)} {rank}"), "returns bytes"),
        (file_of(lambda token, rank: f"{base64.urlsafe_b64encode(token).decode()} {rank}"),
         "URL-safe"),
        (file_of(lambda token, rank: f"{b64(token)} {rank}", end=None), "newline"),
        (file_of(lambda token, rank: f"{token.hex()} {rank}"), "in base64, one space"),
        (file_of(lambda token, rank: f"{b64(token)} {rank + 1}"), "in base64"),
        (file_of(lambda token, rank: f"{b64(token)} {rank}", keep_specials=True),
         "special tokens are not in a .tiktoken file"),
        (file_of(lambda token, rank: f"{b64(token)} {rank}", order=list), "in rank order"),
        (file_of(lambda token, rank: f"{b64(token)} {rank}", rank=lambda line, token_id: line),
         "not its line number"),
        (lambda vocab, special_tokens: None, "a `return` is missing"),
]


# Every checker against every wrong answer above, and against its solution -------------------

WRONG = {
    "check_spell": SPELL_WRONG,
    "check_byte_id": BYTE_ID_WRONG,
    "check_tiktoken_file": TIKTOKEN_FILE_WRONG,
}
REJECTIONS = [(check, wrong, hint) for check, wrongs in WRONG.items() for wrong, hint in wrongs]


@pytest.mark.parametrize(
    ("check", "wrong", "hint"),
    REJECTIONS,
    ids=[f"{check}: {hint}" for check, _, hint in REJECTIONS],
)
def test_check_rejects_the_wrong_answer(nb05, capsys, check, wrong, hint):
    assert_rejected(capsys, nb05[check], (wrong,), hint)


SOLUTIONS = [
    ("check_spell", "solution_spell"),
    ("check_byte_id", "solution_byte_id"),
    ("check_tiktoken_file", "solution_tiktoken_file"),
]


@pytest.mark.parametrize(("check", "solution"), SOLUTIONS)
def test_check_accepts_the_solution(nb05, capsys, check, solution):
    assert_accepted(capsys, nb05[check], (nb05[solution],))


# The Chinese edition: every wrong answer above gets its hint in Chinese, in the same order ---

ZH_HINTS = {
    "check_spell": ["而不是它自己", "词元不一定是合法的 UTF-8", "每个字节对应一个字符",
                    "字节 33 写作 '!'", "要返回 str"],
    "check_byte_id": ["这是字节本身的值", "中间没有空缺", "抛出了", "被挪位的 68 个字节"],
    "check_tiktoken_file": ["base64.b64encode 返回的是 bytes", "不是给网址用的那套字母表",
                            "每一行都要以换行符结尾", "词元的 base64 编码，接一个空格",
                            "词元的 base64 编码，接一个空格", ".tiktoken 文件里没有特殊词元",
                            "都要按合并次序（即 id）列出词元", "不是行号", "漏了 `return`"],
}


@hinted_in_chinese(WRONG, ZH_HINTS)
def test_05_checks_hint_in_chinese(nb05, capsys, check, wrong, hint, english):
    assert_rejected_in_chinese(capsys, nb05[check], (wrong,), hint, english)
