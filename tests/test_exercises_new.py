"""The exercise checks of notebooks 00 and 07 reject plausible wrong answers.

Each checker lives in its notebook (cells tagged ``exercise-checker``); these tests load it,
run it on the collapsed solution (it must pass) and on the mistakes a learner is likely to
make (each must fail, with a hint that names the mistake).
"""

from __future__ import annotations

import pytest
from notebook_cells import load_notebook, run_cells

NOTEBOOK_00 = "00_why_tokenization_matters"


@pytest.fixture(scope="module")
def notebook_00():
    """The checkers and solutions of notebook 00, in one namespace."""
    namespace = run_cells(load_notebook(NOTEBOOK_00), "exercise-checker")
    return run_cells(load_notebook(NOTEBOOK_00), "solution", namespace)


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
def test_reverse_ids_check_rejects(notebook_00, capsys, wrong, hint):
    assert notebook_00["check_reverse_ids"](wrong) is False
    assert hint in capsys.readouterr().out


def test_reverse_ids_check_accepts_the_solution(notebook_00, capsys):
    assert notebook_00["check_reverse_ids"](notebook_00["solution_reverse_ids"]) is True
    assert "Correct!" in capsys.readouterr().out


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
def test_group_from_right_check_rejects(notebook_00, capsys, wrong, hint):
    assert notebook_00["check_group_from_right"](wrong) is False
    assert hint in capsys.readouterr().out


def test_group_from_right_check_accepts_the_solution(notebook_00, capsys):
    check = notebook_00["check_group_from_right"]
    assert check(notebook_00["solution_group_from_right"]) is True
    assert "Correct!" in capsys.readouterr().out


def test_check_exercise_checks_the_solution_while_the_stub_is_unwritten(notebook_00, capsys):
    def stub(digits):
        raise NotImplementedError("your turn")

    stub.__name__ = "group_from_right"
    check = notebook_00["check_exercise"]
    solution = notebook_00["solution_group_from_right"]
    assert check(stub, solution, notebook_00["check_group_from_right"], "1234") is True
    assert "`group_from_right` is not written yet" in capsys.readouterr().out
    assert check(group_from_left, solution, notebook_00["check_group_from_right"], "1234") is False
