"""Notebook 05 (OpenAI's files): its exercise checks reject wrong answers and accept the
solutions.

Each checker cell (tag ``exercise-checker``) is run in a fresh namespace together with the
notebook's solution cells (tag ``solution``); the few notebook globals a solution uses are
supplied here. Every wrong answer below is one a learner could plausibly write; each must make
its checker return False with a hint that names the mistake.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from notebook_cells import assert_accepted, assert_rejected, load_exercises

from bpe_course.formats.gpt2 import bytes_to_unicode


@pytest.fixture(scope="module")
def nb05() -> dict[str, Any]:
    return load_exercises("05_openai_files", byte_to_char=bytes_to_unicode(), base64=base64)


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


TIKTOKEN_LINE_WRONG = [  # check_tiktoken_line: (wrong answer, what its hint must say)
        (lambda token, rank: f"{base64.b64encode(token)} {rank}", "returns bytes"),
        (lambda token, rank: f"{base64.urlsafe_b64encode(token).decode()} {rank}", "URL-safe"),
        (lambda token, rank: f"{base64.b64encode(token).decode()} {rank}\n", "newline"),
        (lambda token, rank: f"{token.hex()} {rank}", "in base64, one space"),
        (lambda token, rank: f"{base64.b64encode(token).decode()} {rank + 1}", "in base64"),
]


# Every checker against every wrong answer above, and against its solution -------------------

REJECTIONS = [
    *[("check_spell", wrong, hint) for wrong, hint in SPELL_WRONG],
    *[("check_byte_id", wrong, hint) for wrong, hint in BYTE_ID_WRONG],
    *[("check_tiktoken_line", wrong, hint) for wrong, hint in TIKTOKEN_LINE_WRONG],
]


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
    ("check_tiktoken_line", "solution_tiktoken_line"),
]


@pytest.mark.parametrize(("check", "solution"), SOLUTIONS)
def test_check_accepts_the_solution(nb05, capsys, check, solution):
    assert_accepted(capsys, nb05[check], (nb05[solution],))
