"""Notebook 00 (why tokenization matters): its exercise checks reject plausible wrong answers.

The checkers live in :mod:`bpe_course.course.checks.why_tokenization`; the collapsed
solutions in the notebook (cells tagged ``solution``). These tests run each checker on the
solution (it must pass) and on the mistakes a learner is likely to make (each must fail, with
a hint that names the mistake).
"""

from __future__ import annotations

from typing import Any

import pytest
from notebook_cells import assert_accepted, assert_rejected, assert_rejected_in_chinese, run_cells

from bpe_course.course.checks import why_tokenization


@pytest.fixture(scope="module")
def nb00() -> dict[str, Any]:
    """The checks module's names, and the notebook's solutions run beside them."""
    return run_cells("00_why_tokenization_matters", "solution", dict(vars(why_tokenization)))


@pytest.mark.parametrize("exercise", ["reverse_ids", "group_from_right"])
def test_each_check_accepts_its_solution(nb00, capsys, exercise):
    assert_accepted(capsys, nb00[f"check_{exercise}"], (nb00[f"solution_{exercise}"],))


# 00: reverse_ids ----------------------------------------------------------------------------


def reverse_token_order(tokenizer, ids):
    return ids[::-1]


def reverse_bytes(tokenizer, ids):
    data = b"".join(tokenizer.vocab[i] for i in ids)
    return tokenizer.encode(data[::-1].decode("utf-8", errors="replace"))


def reverse_bytes_strict(tokenizer, ids):
    data = b"".join(tokenizer.vocab[i] for i in ids)
    return tokenizer.encode(data[::-1].decode("utf-8"))


def reverse_each_token(tokenizer, ids):
    return [j for i in reversed(ids) for j in tokenizer.encode(tokenizer.decode([i])[::-1])]


def reverse_words(tokenizer, ids):
    return tokenizer.encode(" ".join(tokenizer.decode(ids).split(" ")[::-1]))


def reversed_text_not_ids(tokenizer, ids):
    return tokenizer.decode(ids)[::-1]


def gpt2_only(tokenizer, ids):
    from bpe_course.openai import gpt2

    return gpt2().encode(gpt2().decode(ids)[::-1])


def returns_none(tokenizer, ids):
    return None


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (reverse_token_order, "order of the tokens"),
        (reverse_bytes, "cut apart"),
        (reverse_bytes_strict, "Reversed bytes are not UTF-8"),
        (reverse_each_token, "encode the whole reversed text"),
        (reverse_words, "expected the ids of"),
        (reversed_text_not_ids, "return the list of ids"),
        (gpt2_only, "use the `tokenizer` you are given"),
        (returns_none, "returned None"),
    ],
)
def test_reverse_ids_check_rejects(nb00, capsys, wrong, hint):
    assert_rejected(capsys, nb00["check_reverse_ids"], (wrong,), hint)


# 00: group_from_right -----------------------------------------------------------------------


def group_from_left(digits):
    return [digits[i : i + 3] for i in range(0, len(digits), 3)]


def group_with_empty_head(digits):
    head = len(digits) % 3
    return [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]


def group_with_int_format(digits):
    return f"{int(digits or 0):,}".split(",")


def group_with_empty_string_group(digits):
    head = len(digits) % 3 or 3
    return [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]


def groups_in_reverse_order(digits):
    backwards = digits[::-1]
    return [backwards[i : i + 3][::-1] for i in range(0, len(digits), 3)]


def groups_as_one_string(digits):
    return ",".join(group_from_left(digits))


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (group_from_left, "grouped from the left"),
        (group_with_empty_head, "no empty groups"),
        (group_with_int_format, "int() drops leading zeros"),
        (group_with_empty_string_group, "no empty groups"),
        (groups_in_reverse_order, "left to right"),
        (groups_as_one_string, "return a list of strings"),
    ],
)
def test_group_from_right_check_rejects(nb00, capsys, wrong, hint):
    assert_rejected(capsys, nb00["check_group_from_right"], (wrong,), hint)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (reverse_token_order, "你把词元的顺序倒过来了"),
        (reverse_bytes, "有字符被切开了"),
        (reverse_bytes_strict, "倒过来的字节不是 UTF-8"),
        (reverse_each_token, "要把整段倒序文本一次编码"),
        (reverse_words, "的 id，即"),
        (reversed_text_not_ids, "应返回 id 列表"),
        (gpt2_only, "请用传给你的 `tokenizer`"),
        (returns_none, "reverse_ids 返回了 None"),
    ],
)
def test_reverse_ids_check_hints_in_chinese(nb00, capsys, wrong, hint):
    assert_rejected_in_chinese(capsys, nb00["check_reverse_ids"], (wrong,), hint)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (group_from_left, "你是从左往右分组的"),
        (group_with_empty_head, "不能有空的分组"),
        (group_with_int_format, "int() 会丢掉开头的 0"),
        (group_with_empty_string_group, "不能有空的分组"),
        (groups_in_reverse_order, "从左到右"),
        (groups_as_one_string, "应返回字符串列表"),
    ],
)
def test_group_from_right_check_hints_in_chinese(nb00, capsys, wrong, hint):
    assert_rejected_in_chinese(capsys, nb00["check_group_from_right"], (wrong,), hint)


def test_check_exercise_checks_the_solution_while_the_stub_is_unwritten(nb00, capsys):
    def group_from_right(digits):
        raise NotImplementedError("your turn")

    check = nb00["check_exercise"]
    checker = nb00["check_group_from_right"]
    solution = nb00["solution_group_from_right"]
    assert check(group_from_right, solution, checker) is solution
    out = capsys.readouterr().out
    assert "`group_from_right` is not written yet" in out and "Correct!" not in out
    assert check(group_from_left, solution, checker) is solution  # wrong: later cells use ours
    assert "grouped from the left" in capsys.readouterr().out
    assert check(solution, solution, checker) is solution
