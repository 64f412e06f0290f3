"""Notebook 09 (tokens for models): its exercise checks reject plausible wrong answers.

The checkers live in :mod:`bpe_course.course.checks.tokens_for_models`, imported by the
notebook's cell tagged ``exercise-checker``; each must accept the notebook's collapsed
solution and reject each likely mistake with a hint that names it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    hinted_in_chinese,
    load_exercises,
)


@pytest.fixture(scope="module")
def nb09() -> dict[str, Any]:
    return load_exercises("09_tokens_for_models", np=np)


@pytest.mark.parametrize("exercise", ["vocab_parameters", "token_dtype", "chat_prompt"])
def test_each_check_accepts_its_solution(nb09, capsys, exercise):
    assert_accepted(capsys, nb09[f"check_{exercise}"], (nb09[f"solution_{exercise}"],))


def test_an_unwritten_answer_is_not_claimed_as_solved(nb09, capsys):
    def token_dtype(n_vocab):
        raise NotImplementedError("your turn")

    answer = nb09["check_exercise"](token_dtype, nb09["solution_token_dtype"],
                                    nb09["check_token_dtype"])
    printed = capsys.readouterr().out
    assert answer is nb09["solution_token_dtype"]
    assert "not written yet" in printed and "Correct!" not in printed


# vocab_parameters -----------------------------------------------------------------------------

def rounded(n_vocab, multiple):
    return -(-n_vocab // multiple) * multiple


def always_two_matrices(n_vocab, d_model, tied, multiple):
    return rounded(n_vocab, multiple) * d_model * 2


def always_one_matrix(n_vocab, d_model, tied, multiple):
    return rounded(n_vocab, multiple) * d_model


def no_rounding(n_vocab, d_model, tied, multiple):
    return n_vocab * d_model * (1 if tied else 2)


def rounds_down(n_vocab, d_model, tied, multiple):
    return n_vocab // multiple * multiple * d_model * (1 if tied else 2)


def always_adds_a_multiple(n_vocab, d_model, tied, multiple):
    return (n_vocab // multiple + 1) * multiple * d_model * (1 if tied else 2)


def float_division(n_vocab, d_model, tied, multiple):
    return -(-n_vocab / multiple // 1) * multiple * d_model * (1 if tied else 2)


def forgets_return(n_vocab, d_model, tied, multiple):
    rounded(n_vocab, multiple) * d_model


VOCAB_PARAMETERS_WRONG = [  # check_vocab_parameters: (wrong answer, what its hint must say)
        (always_two_matrices, "a tied model uses one matrix"),
        (always_one_matrix, "an untied model has two matrices"),
        (no_rounding, "round n_vocab up to a multiple of `multiple` first"),
        (rounds_down, "round up, not down"),
        (always_adds_a_multiple, "is already a multiple of 1 stays as it is"),
        (float_division, "return an int"),
        (forgets_return, "gave None"),
]


@pytest.mark.parametrize(("wrong", "hint"), VOCAB_PARAMETERS_WRONG)
def test_vocab_parameters_check_rejects(nb09, capsys, wrong, hint):
    assert_rejected(capsys, nb09["check_vocab_parameters"], (wrong,), hint)


# token_dtype ----------------------------------------------------------------------------------

def n_vocab_taken_for_the_largest_id(n_vocab):
    if n_vocab <= 65_535:
        return "uint16"
    if n_vocab <= 2**32 - 1:
        return "uint32"
    raise ValueError("too big")


def signed_types(n_vocab):
    return "int16" if n_vocab <= 32_768 else "int32"


def signed_int32_always(n_vocab):
    return np.int32


def always_uint32(n_vocab):
    if n_vocab > 2**32:
        raise ValueError("too big")
    return "uint32"


def always_uint16(n_vocab):
    return "uint16"


def uint64_beyond(n_vocab):
    return "uint16" if n_vocab <= 65_536 else "uint32" if n_vocab <= 2**32 else "uint64"


def overflow_error_beyond(n_vocab):
    if n_vocab > 2**32:
        raise OverflowError("too big")
    return "uint16" if n_vocab <= 65_536 else "uint32"


def returns_a_python_type(n_vocab):
    return int


def numpy_types_are_fine(n_vocab):
    if n_vocab > 2**32:
        raise ValueError("too big")
    return np.uint16 if n_vocab <= 65_536 else np.dtype("uint32")


TOKEN_DTYPE_WRONG = [  # check_token_dtype: (wrong answer, what its hint must say)
        (n_vocab_taken_for_the_largest_id, "the ids go from 0 to n_vocab - 1 = 65,535"),
        (signed_types, "ids are never negative"),
        (signed_int32_always, "use unsigned types"),
        (always_uint32, "uint16 holds every id below 65,536 in half the bytes"),
        (always_uint16, "id 65,536 would wrap around"),
        (uint64_beyond, "raise ValueError saying so"),
        (overflow_error_beyond, "OverflowError: too big: no dtype here holds ids above"),
        (returns_a_python_type, "gave int64"),
]


@pytest.mark.parametrize(("wrong", "hint"), TOKEN_DTYPE_WRONG)
def test_token_dtype_check_rejects(nb09, capsys, wrong, hint):
    assert_rejected(capsys, nb09["check_token_dtype"], (wrong,), hint)


def test_token_dtype_check_takes_numpy_types(nb09, capsys):
    assert_accepted(capsys, nb09["check_token_dtype"], (numpy_types_are_fine,))


# chat_prompt ----------------------------------------------------------------------------------

def as_one_string(messages):
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def formats_then_encodes(tokenizer, messages):
    """The injection: the package's encode reads the user's <|im_end|> as the marker."""
    return tokenizer.encode(as_one_string(messages))


def formats_then_encodes_ordinary(tokenizer, messages):
    return tokenizer.encode_ordinary(as_one_string(messages))


def refuses_special_text(tokenizer, messages):
    """tiktoken's default on the user's text: a message with a marker in it raises."""
    start, end = tokenizer.special_tokens["<|im_start|>"], tokenizer.special_tokens["<|im_end|>"]
    ids = []
    for m in messages:
        ids += [start, *tokenizer.encode(f"{m['role']}\n{m['content']}", allowed_special=set()),
                end, *tokenizer.encode_ordinary("\n")]
    return ids + [start, *tokenizer.encode_ordinary("assistant\n")]


def no_assistant_opening(tokenizer, messages):
    start, end = tokenizer.special_tokens["<|im_start|>"], tokenizer.special_tokens["<|im_end|>"]
    ids = []
    for m in messages:
        ids += [start, *tokenizer.encode_ordinary(f"{m['role']}\n{m['content']}"), end,
                *tokenizer.encode_ordinary("\n")]
    return ids


def no_newline_after_the_end(tokenizer, messages):
    start, end = tokenizer.special_tokens["<|im_start|>"], tokenizer.special_tokens["<|im_end|>"]
    ids = []
    for m in messages:
        ids += [start, *tokenizer.encode_ordinary(f"{m['role']}\n{m['content']}"), end]
    return ids + [start, *tokenizer.encode_ordinary("assistant\n")]


def roles_swapped_for_names(tokenizer, messages):
    start, end = tokenizer.special_tokens["<|im_start|>"], tokenizer.special_tokens["<|im_end|>"]
    ids = []
    for m in messages:
        ids += [start, *tokenizer.encode_ordinary(f"{m['role'].upper()}\n{m['content']}"), end,
                *tokenizer.encode_ordinary("\n")]
    return ids + [start, *tokenizer.encode_ordinary("assistant\n")]


def returns_text(tokenizer, messages):
    return as_one_string(messages)


CHAT_PROMPT_WRONG = [  # check_chat_prompt: (wrong answer, what its hint must say)
        (formats_then_encodes, "text the user wrote became special tokens"),
        (formats_then_encodes_ordinary, "the markers must be the ids 50257 and 50258"),
        (refuses_special_text, "refusing the user's text is no fix either"),
        (no_assistant_opening, "stops before the assistant's opening"),
        (no_newline_after_the_end, "after <|im_end|> too"),
        (roles_swapped_for_names, "part from the template's at position 1"),
        (returns_text, "return a list of ids"),
]


@pytest.mark.parametrize(("wrong", "hint"), CHAT_PROMPT_WRONG)
def test_chat_prompt_check_rejects(nb09, capsys, wrong, hint):
    assert_rejected(capsys, nb09["check_chat_prompt"], (wrong,), hint)


# The Chinese edition: every wrong answer above gets its hint in Chinese, in the same order ---

WRONG = {
    "check_vocab_parameters": VOCAB_PARAMETERS_WRONG,
    "check_token_dtype": TOKEN_DTYPE_WRONG,
    "check_chat_prompt": CHAT_PROMPT_WRONG,
}
ZH_HINTS = {
    "check_vocab_parameters": ["绑定的模型里，嵌入层和输出层共用一个矩阵", "不绑定的模型有两个矩阵",
                               "先把 n_vocab 向上取整到 `multiple` 的倍数", "要向上取整，不是向下",
                               "已经是 1 的倍数时就保持不变", "要返回 int", "得到的是 None"],
    "check_token_dtype": ["id 从 0 到 n_vocab - 1 = 65,535", "id 从来不是负数", "要用无符号类型",
                          "65,536 以下的 id 用 uint16 都装得下", "id 65,536 会溢出回绕",
                          "要抛出 ValueError 说明这一点",
                          "OverflowError: too big：这里没有哪个 dtype 装得下", "得到的是 int64"],
    "check_chat_prompt": ["用户写的文字变成了特殊词元", "轮次的起止符必须是 id 50257 和 50258",
                          "拒绝用户的文本也不是办法", "轮次的开头之前就结束了",
                          "<|im_end|> 后面也要有", "你的 id 从第 1 个位置起和模板的不一样",
                          "要返回 id 列表"],
}


@hinted_in_chinese(WRONG, ZH_HINTS)
def test_09_checks_hint_in_chinese(nb09, capsys, check, wrong, hint, english):
    assert_rejected_in_chinese(capsys, nb09[check], (wrong,), hint, english)

