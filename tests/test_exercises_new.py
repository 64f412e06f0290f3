"""The exercise checks of notebooks 00 and 07 reject plausible wrong answers.

Each checker lives in its notebook (cells tagged ``exercise-checker``); these tests load it,
run it on the collapsed solution (it must pass) and on the mistakes a learner is likely to
make (each must fail, with a hint that names the mistake).
"""

from __future__ import annotations

import pytest
from test_exercises_early import assert_accepted, assert_rejected, load_exercises

NOTEBOOK_00 = "00_why_tokenization_matters"
NOTEBOOK_07 = "07_tokenizers_in_the_wild"

#: Each exercise: its notebook, its checker's name and its solution's name.
EXERCISES = {
    "reverse_ids": (NOTEBOOK_00, "check_reverse_ids", "solution_reverse_ids"),
    "group_from_right": (NOTEBOOK_00, "check_group_from_right", "solution_group_from_right"),
    "o200k_word_pieces": (NOTEBOOK_07, "check_o200k_word_pieces", "solution_o200k_word_pieces"),
    "decode_pieces": (NOTEBOOK_07, "check_decode_pieces", "solution_decode_pieces"),
}


@pytest.fixture(scope="module")
def notebooks():
    """The checkers and solutions of notebooks 00 and 07, one namespace each."""
    return {name: load_exercises(name) for name in (NOTEBOOK_00, NOTEBOOK_07)}


def checker_of(notebooks, exercise):
    notebook, checker, _ = EXERCISES[exercise]
    return notebooks[notebook][checker]


@pytest.mark.parametrize("exercise", EXERCISES)
def test_each_check_accepts_its_solution(notebooks, capsys, exercise):
    notebook, _, solution = EXERCISES[exercise]
    assert_accepted(capsys, checker_of(notebooks, exercise), (notebooks[notebook][solution],))


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
def test_reverse_ids_check_rejects(notebooks, capsys, wrong, hint):
    assert_rejected(capsys, checker_of(notebooks, "reverse_ids"), (wrong,), hint)



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
def test_group_from_right_check_rejects(notebooks, capsys, wrong, hint):
    assert_rejected(capsys, checker_of(notebooks, "group_from_right"), (wrong,), hint)



def test_check_exercise_checks_the_solution_while_the_stub_is_unwritten(notebooks, capsys):
    def group_from_right(digits):
        raise NotImplementedError("your turn")

    check = notebooks[NOTEBOOK_00]["check_exercise"]
    checker = checker_of(notebooks, "group_from_right")
    solution = notebooks[NOTEBOOK_00]["solution_group_from_right"]
    assert check(group_from_right, solution, checker) is solution
    out = capsys.readouterr().out
    assert "`group_from_right` is not written yet" in out and "Correct!" in out
    assert check(group_from_left, solution, checker) is solution  # wrong: later cells use ours
    assert "grouped from the left" in capsys.readouterr().out
    assert check(solution, solution, checker) is solution


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


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (pieces_as_written, "stands for the byte"),
        (bytes_as_characters, "joined as bytes"),
        (bytes_decoded_one_by_one, "decode them together"),
        (keeps_dummy_prefix, "drop the space the dummy prefix added"),
        (strips_every_leading_space, "only the one space"),
        (drops_meta_symbol, "each '▁' is one space"),
        (keeps_meta_symbol, "'▁' stands for a space"),
        (returns_bytes, "return a str"),
    ],
)
def test_decode_pieces_check_rejects(notebooks, capsys, wrong, hint):
    assert_rejected(capsys, checker_of(notebooks, "decode_pieces"), (wrong,), hint)



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


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (whole_word, "as cl100k_base's pattern would"),
        (split_before_every_capital, "do not cut between capitals"),
        (camel_case_humps, "a run of capitals stays together"),
        (ascii_only_cases, "letters outside them have case too"),
        (joined_with_spaces, "return a list of strings"),
        (loses_trailing_capitals, "not to the word"),
    ],
)
def test_o200k_word_pieces_check_rejects(notebooks, capsys, wrong, hint):
    assert_rejected(capsys, checker_of(notebooks, "o200k_word_pieces"), (wrong,), hint)



# Both notebooks: an unwritten stub reaches check_exercise; a right answer is kept -------------


def unwritten(*args):
    raise NotImplementedError("your turn")


@pytest.mark.parametrize("exercise", EXERCISES)
def test_check_exercise_keeps_a_right_answer_and_sees_an_unwritten_one(
    notebooks, capsys, exercise
):
    notebook, checker, solution = EXERCISES[exercise]
    namespace = notebooks[notebook]
    with pytest.raises(NotImplementedError):
        namespace[checker](unwritten)  # the checker must not swallow "not written yet"
    reference = namespace[solution]

    def learners_answer(*args):
        return reference(*args)

    check_exercise = namespace["check_exercise"]
    assert check_exercise(learners_answer, reference, namespace[checker]) is learners_answer
    assert check_exercise(unwritten, reference, namespace[checker]) is reference
    assert "not written yet" in capsys.readouterr().out
