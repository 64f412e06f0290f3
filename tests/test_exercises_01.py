"""Notebook 01 (bytes and UTF-8): its exercise checks reject wrong answers and accept right ones.

Each checker (from :mod:`bpe_course.course.checks.bytes_utf8`) and collapsed solution (the
notebook's cells tagged ``solution``) is called on answers a learner could plausibly write.
A wrong answer must be rejected with a hint that names the mistake; the solution, and other
correct ways to write it, must pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from notebook_cells import assert_accepted, assert_rejected, assert_rejected_in_chinese, run_cells

from bpe_course.course.checks import bytes_utf8


@pytest.fixture(scope="module")
def nb01() -> dict[str, Any]:
    """The checks module's names, and the notebook's solutions run beside them."""
    return run_cells("01_bytes_and_utf8", "solution", dict(vars(bytes_utf8)))


def length_edge_off_by_one(cp: int) -> int:
    return 1 if cp <= 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def length_forgets_four_bytes(cp: int) -> int:
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3


UTF8_LENGTH_WRONG = [
    (length_edge_off_by_one, "U+0080 is in the table's row U+0080 to U+07FF"),
    (lambda cp: (cp.bit_length() + 7) // 8, "should be 1, got 0"),  # bytes of the integer
    (lambda cp: len(chr(cp).encode("utf-16-le")), "you gave its length in UTF-16"),
    (length_forgets_four_bytes, "U+10000 is in the table's row U+10000 to U+10FFFF"),
    (lambda cp: None, "got None"),
]


@pytest.mark.parametrize(("answer", "hint"), UTF8_LENGTH_WRONG)
def test_01_utf8_length_check_rejects(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_utf8_length"], (answer,), hint)


def cut_without_stepping_back(data: bytes, limit: int) -> bytes:
    return data[:limit]


def cut_looking_at_the_byte_before(data: bytes, limit: int) -> bytes:
    end = min(limit, len(data))
    while end > 0 and data[end - 1] & 0b11000000 == 0b10000000:
        end -= 1
    return data[:end]


def cut_without_bounds(data: bytes, limit: int) -> bytes:
    end = limit
    while data[end] & 0b11000000 == 0b10000000:
        end -= 1
    return data[:end]


def cut_stepping_forward(data: bytes, limit: int) -> bytes:
    end = min(limit, len(data))
    while end < len(data) and data[end] & 0b11000000 == 0b10000000:
        end += 1
    return data[:end]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (cut_without_stepping_back, "Your cut splits a character"),
        (cut_looking_at_the_byte_before, "is a continuation byte"),
        (cut_without_bounds, "data[limit] does not exist when limit >= len(data)"),
        (cut_stepping_forward, "at most `limit` bytes"),
    ],
)
def test_01_cut_at_boundary_check_rejects(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_cut_at_boundary"], (answer,), hint)


def test_01_cut_at_boundary_check_accepts_another_right_answer(nb01, capsys):
    def decode_and_drop(data: bytes, limit: int) -> bytes:
        return data[:limit].decode("utf-8", errors="ignore").encode("utf-8")

    assert_accepted(capsys, nb01["check_cut_at_boundary"], (decode_and_drop,))


def encode_with(change: Callable[[bytes], bytes]) -> Callable[[int], bytes]:
    """A UTF-8 encoder with one mistake, made by changing the right bytes."""
    return lambda cp: change(chr(cp).encode("utf-8"))


def lead_marker_always_two_bytes(cp: int) -> bytes:
    right = chr(cp).encode("utf-8")
    if len(right) == 1:
        return right
    return bytes([0b11000000 | cp >> 6 * (len(right) - 1)]) + right[1:]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (encode_with(lambda b: b[:1] + b[:0:-1]), "continuation bytes are in reverse"),
        (encode_with(lambda b: b[:1] + bytes(x & 63 for x in b[1:])), "start with the bits 10"),
        (lead_marker_always_two_bytes, "starts with 3 ones and a zero"),
        (lambda cp: chr(cp).encode("utf-16-be"), "This code point takes 1 byte(s)"),
        (lambda cp: chr(min(cp, 0x7FF) if cp < 0x1000 else cp).encode("utf-8"), "takes 3 byte(s)"),
    ],
)
def test_01_utf8_encode_check_rejects(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_utf8_encode"], (answer,), hint)


@pytest.mark.parametrize("exercise", ["utf8_length", "cut_at_boundary", "utf8_encode"])
def test_01_checks_accept_the_solutions(nb01, capsys, exercise):
    assert_accepted(capsys, nb01[f"check_{exercise}"], (nb01[f"solution_{exercise}"],))


# The shortcut the exercises forbid: Python's own UTF-8 encoder, in any of its disguises.


def encode_through_a_helper(cp: int) -> bytes:
    return _to_bytes(chr(cp))


def _to_bytes(text: str) -> bytes:
    return text.encode()


def encode_with_codecs(cp: int) -> bytes:
    import codecs

    return codecs.encode(chr(cp), "utf-8")


def encode_bytes_constructor(cp: int) -> bytes:
    return bytes(chr(cp), "UTF-8")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda cp: chr(cp).encode(), "it uses `.encode`"),
        (lambda cp: chr(cp).encode("utf-8"), "it uses `.encode`"),
        (encode_through_a_helper, "it uses `.encode` (inside `_to_bytes`)"),
        (encode_with_codecs, "it uses the `codecs` module"),
        (encode_bytes_constructor, "UTF-8 codec (`bytes(..., \"utf-8\")`)"),
        (lambda cp: bytearray(chr(cp), "utf8"), "UTF-8 codec"),
    ],
)
def test_01_utf8_encode_check_rejects_pythons_own_encoder(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_utf8_encode"], (answer,), hint)


def test_01_utf8_length_check_rejects_pythons_own_encoder(nb01, capsys):
    answer = lambda cp: len(chr(cp).encode())  # noqa: E731
    assert_rejected(capsys, nb01["check_utf8_length"], (answer,), "uses `.encode`")


def test_01_utf8_encode_check_accepts_bit_arithmetic_with_a_helper(nb01, capsys):
    """Calling one's own helpers is fine when they build the bytes themselves."""

    def encode_via_length(cp: int) -> bytes:
        length = nb01["solution_utf8_length"](cp)
        if length == 1:
            return bytes([cp])
        tail = [0x80 | (cp >> 6 * k) & 0x3F for k in range(length - 2, -1, -1)]
        return bytes([(0xF00 >> length) & 0xFF | cp >> 6 * (length - 1)] + tail)

    assert_accepted(capsys, nb01["check_utf8_encode"], (encode_via_length,))


# The Chinese edition: each checker's hints in Chinese.


@pytest.mark.parametrize(
    ("checker", "answer", "hint"),
    [
        ("utf8_length", length_edge_off_by_one, "U+0080 位于表格中 U+0080 到 U+07FF 的那一行"),
        ("utf8_length", lambda cp: len(chr(cp).encode("utf-16-le")), "它在 UTF-16 中的长度"),
        ("utf8_length", lambda cp: None, "实际得到 None"),
        ("utf8_length", lambda cp: len(chr(cp).encode()), "用了 `.encode`"),
        ("cut_at_boundary", cut_without_stepping_back, "你的切分把一个字符切开了"),
        ("cut_at_boundary", cut_without_bounds, "data[limit] 不存在"),
        ("cut_at_boundary", cut_stepping_forward, "最多只能有 `limit` 个字节"),
        ("utf8_encode", encode_with(lambda b: b[:1] + b[:0:-1]), "延续字节的顺序反了"),
        ("utf8_encode", lead_marker_always_two_bytes, "首字节以 3 个 1 和一个 0 开头"),
        ("utf8_encode", lambda cp: chr(cp).encode("utf-16-be"), "这个码位要占 1 个字节"),
        ("utf8_encode", encode_through_a_helper, "用了 `.encode`（在 `_to_bytes` 里面）"),
        ("utf8_encode", encode_with_codecs, "用了 `codecs` 模块"),
        ("utf8_encode", encode_bytes_constructor, "Python 自带的 UTF-8 编解码器"),
    ],
)
def test_01_checks_hint_in_chinese(nb01, capsys, checker, answer, hint):
    assert_rejected_in_chinese(capsys, nb01[f"check_{checker}"], (answer,), hint)
