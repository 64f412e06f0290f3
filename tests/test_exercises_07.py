"""Notebook 07 (tokenizers in the wild): its exercise checks reject plausible wrong answers.

Each checker lives in :mod:`bpe_course.course.checks.wild`, imported by the notebook's cell
tagged ``exercise-checker``; these tests load that cell and the collapsed solutions, run each
checker on its solution (it must pass) and on the mistakes a learner is likely to make (each
must fail, with a hint that names the mistake).
"""

from __future__ import annotations

from typing import Any

import pytest
import regex
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    hinted_in_chinese,
    load_exercises,
)


@pytest.fixture(scope="module")
def nb07() -> dict[str, Any]:
    return load_exercises("07_tokenizers_in_the_wild")


@pytest.mark.parametrize("exercise", ["o200k_word_pieces", "decode_pieces"])
def test_each_check_accepts_its_solution(nb07, capsys, exercise):
    assert_accepted(capsys, nb07[f"check_{exercise}"], (nb07[f"solution_{exercise}"],))


# 07: decode_pieces --------------------------------------------------------------------------

def byte_value(piece):
    """The byte a piece like '<0xE6>' stands for, or None for other pieces."""
    is_byte = len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")
    return int(piece[3:5], 16) if is_byte else None


def pieces_as_written(pieces):
    return "".join(pieces).replace("▁", " ")[1:]


def bytes_as_characters(pieces):
    parts = [piece.replace("▁", " ") if byte_value(piece) is None else chr(byte_value(piece))
             for piece in pieces]
    return "".join(parts)[1:]


def bytes_decoded_one_by_one(pieces):
    parts = [piece.replace("▁", " ") if byte_value(piece) is None
             else bytes([byte_value(piece)]).decode("utf-8") for piece in pieces]
    return "".join(parts)[1:]


def join_bytes(pieces):
    data = bytearray()
    for piece in pieces:
        value = byte_value(piece)
        data += bytes([value]) if value is not None else piece.replace("▁", " ").encode("utf-8")
    return data.decode("utf-8", errors="replace")


def keeps_dummy_prefix(pieces):
    return join_bytes(pieces)


def strips_every_leading_space(pieces):
    return join_bytes(pieces).lstrip(" ")


def drops_meta_symbol(pieces):
    return join_bytes([piece.replace("▁", "") for piece in pieces])


def keeps_meta_symbol(pieces):
    data = bytearray()
    for piece in pieces:
        value = byte_value(piece)
        data += bytes([value]) if value is not None else piece.encode("utf-8")
    return data.decode("utf-8", errors="replace").removeprefix("▁")


def returns_bytes(pieces):
    return join_bytes(pieces)[1:].encode("utf-8")


def always_drops_first_character(pieces):
    """Right whenever the pieces start with '▁' (a whole text), wrong for pieces from the
    middle of one (``['ell', 'o']`` is ``'ello'``)."""
    return join_bytes(pieces)[1:]


DECODE_PIECES_WRONG = [  # check_decode_pieces: (wrong answer, what its hint must say)
        (pieces_as_written, "stands for the byte"),
        (bytes_as_characters, "joined as bytes"),
        (bytes_decoded_one_by_one, "decode them together"),
        (keeps_dummy_prefix, "drop the space the dummy prefix added"),
        (strips_every_leading_space, "only the one space"),
        (drops_meta_symbol, "each '▁' is one space"),
        (keeps_meta_symbol, "'▁' stands for a space"),
        (returns_bytes, "return a str"),
        (always_drops_first_character, "the first piece does not start with '▁'"),
]


@pytest.mark.parametrize(("wrong", "hint"), DECODE_PIECES_WRONG)
def test_decode_pieces_check_rejects(nb07, capsys, wrong, hint):
    assert_rejected(capsys, nb07["check_decode_pieces"], (wrong,), hint)


# 07: o200k_word_pieces ----------------------------------------------------------------------


def whole_word(word):
    return [word]


def split_before_every_capital(word):
    pieces = []
    for char in word:
        if char.isupper() or not pieces:
            pieces.append(char)
        else:
            pieces[-1] += char
    return pieces


def camel_case_humps(word):
    """The usual camel-case splitter: HTTPServer -> HTTP, Server (not o200k_base's rule)."""
    pieces, start = [], 0
    for index in range(1, len(word)):
        lower_to_upper = word[index - 1].islower() and word[index].isupper()
        end_of_capitals = (word[index - 1].isupper() and word[index].isupper()
                           and index + 1 < len(word) and word[index + 1].islower())
        if lower_to_upper or end_of_capitals:
            pieces.append(word[start:index])
            start = index
    return pieces + [word[start:]] if word else pieces


def ascii_only_cases(word):
    """Treats only A-Z as capitals, so accented capitals (É) count as lower case."""
    pieces, start = [], 0
    while start < len(word):
        end = start
        while end < len(word) and "A" <= word[end] <= "Z":
            end += 1
        while end < len(word) and not "A" <= word[end] <= "Z":
            end += 1
        pieces.append(word[start:end])
        start = end
    return pieces


def joined_with_spaces(word):
    return " ".join(camel_case_humps(word))


def loses_trailing_capitals(word):
    pieces, start = [], 0
    while start < len(word):
        end = start
        while end < len(word) and word[end].isupper():
            end += 1
        while end < len(word) and word[end].islower():
            end += 1
        if end > start and word[end - 1].islower():
            pieces.append(word[start:end])
        start = max(end, start + 1)
    return pieces


def capitals_apart_from_lowers(word):
    """A capital joins the lower-case letters after it, but a run of capitals does not:
    HTTPServer -> HTTPS, erver."""
    return regex.findall(r"\p{Lu}\p{Ll}+|\p{Lu}+|\p{Ll}+", word)


WORD_PIECES_WRONG = [  # check_o200k_word_pieces: (wrong answer, what its hint must say)
        (whole_word, "as cl100k_base's pattern would"),
        (capitals_apart_from_lowers, "lower-case letters after a run of capitals stay with it"),
        (split_before_every_capital, "do not cut between capitals"),
        (camel_case_humps, "a run of capitals stays together"),
        (ascii_only_cases, "letters outside them have case too"),
        (joined_with_spaces, "return a list of strings"),
        (loses_trailing_capitals, "not to the word"),
]


@pytest.mark.parametrize(("wrong", "hint"), WORD_PIECES_WRONG)
def test_o200k_word_pieces_check_rejects(nb07, capsys, wrong, hint):
    assert_rejected(capsys, nb07["check_o200k_word_pieces"], (wrong,), hint)


# The Chinese edition: every wrong answer above gets its hint in Chinese, in the same order ---

WRONG = {"check_decode_pieces": DECODE_PIECES_WRONG, "check_o200k_word_pieces": WORD_PIECES_WRONG}
ZH_HINTS = {
    "check_decode_pieces": ["这样的片段代表字节 0xE6", "字节片段要先按字节拼起来",
                            "先把所有片段的字节收集起来再一起解码", "开头那个空格是虚拟前缀加上的",
                            "只去掉虚拟前缀加的那一个空格", "每个 '▁' 都是一个空格",
                            "'▁' 代表一个空格", "要返回 str", "第一个片段不是以 '▁' 开头的"],
    "check_o200k_word_pieces": ["这是 cl100k_base 的正则模式的做法",
                                "跟在一串大写字母后面的小写字母要和它连在一起",
                                "大写字母之间不要切开",
                                "一串大写字母要和紧跟其后的小写字母连在一起",
                                "这两组以外的字母也分大小写", "要返回字符串列表", "不是原来的词"],
}


@hinted_in_chinese(WRONG, ZH_HINTS)
def test_07_checks_hint_in_chinese(nb07, capsys, check, wrong, hint, english):
    assert_rejected_in_chinese(capsys, nb07[check], (wrong,), hint, english)

