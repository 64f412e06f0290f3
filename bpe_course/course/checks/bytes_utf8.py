"""The checks of notebook 01 (bytes and UTF-8): ``utf8_length``, ``cut_at_boundary`` and
``utf8_encode``.

The two exercises that must be written from the table of bit patterns, ``utf8_length`` and
``utf8_encode``, forbid the shortcut ``chr(cp).encode()``. Right bytes prove nothing about
how they were made, so once an answer gives the right bytes, :func:`encoder_calls` reads its
compiled code (and that of the functions it calls by name): a ``.encode`` attribute, the
``codecs`` module, or a string such as ``"utf-8"`` handed to ``bytes(...)`` is the shortcut.
Reading the code, not monkeypatching ``str.encode``, keeps the check side-effect free (a
builtin type's method cannot be replaced anyway). Every hint has a Chinese version, said in
the Chinese edition (``not_yet(hint, zh=...)``).

>>> encoder_calls(lambda cp: chr(cp).encode())
'`.encode`'
>>> encoder_calls(lambda cp: bytes([cp])) is None
True
"""

from __future__ import annotations

import random
import re
import types
from collections.abc import Callable
from typing import Any

from bpe_course.course.checks.harness import attempt, check_exercise, correct, not_yet

__all__ = ["check_cut_at_boundary", "check_exercise", "check_utf8_encode", "check_utf8_length",
           "code_point_cases", "encoder_calls"]

#: The rows of the table "Reading UTF-8 by eye": (first code point, last, bytes).
UTF8_ROWS = [(0x0, 0x7F, 1), (0x80, 0x7FF, 2), (0x800, 0xFFFF, 3), (0x10000, 0x10FFFF, 4)]

#: Names of encodings a learner could hand to ``bytes(text, ...)`` or ``codecs``.
_ENCODING_NAMES = {"utf-8", "utf8", "utf_8", "u8"}


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in it (lambdas, comprehensions, inner defs)."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes(const)
    return found


def encoder_calls(function: Callable[..., Any], _seen: set[int] | None = None) -> str | None:
    """The way ``function`` lets Python do the UTF-8 encoding, or None if it builds the bytes
    itself. Functions of the learner's that it calls by name are read too."""
    seen = set() if _seen is None else _seen
    code = getattr(function, "__code__", None)
    if code is None or id(code) in seen:
        return None
    seen.add(id(code))
    global_names = getattr(function, "__globals__", {})
    for part in _codes(code):
        if "codecs" in part.co_names:
            return "the `codecs` module"
        if "encode" in part.co_names:
            return "`.encode`"
        if any(isinstance(c, str) and c.lower() in _ENCODING_NAMES for c in part.co_consts):
            return "Python's own UTF-8 codec (`bytes(..., \"utf-8\")`)"
        for name in part.co_names:
            helper = global_names.get(name)
            if isinstance(helper, types.FunctionType):
                found = encoder_calls(helper, seen)
                if found:
                    return f"{found} (inside `{name}`)"
    return None


def _in_chinese(used: str) -> str:
    """What :func:`encoder_calls` found, said in Chinese (the code in it stays as it is).

    >>> _in_chinese("the `codecs` module (inside `_to_bytes`)")
    '`codecs` 模块（在 `_to_bytes` 里面）'
    """
    said = used.replace("the `codecs` module", "`codecs` 模块")
    said = said.replace("Python's own UTF-8 codec", "Python 自带的 UTF-8 编解码器")
    return re.sub(r" \(inside (`[^`]*`)\)", r"（在 \1 里面）", said)


def _forbidden(name: str, candidate: Callable[..., Any]) -> bool | None:
    """A hint, and False, when ``candidate`` gets its right answers from Python's codec."""
    used = encoder_calls(candidate)
    if used is None:
        return None
    return not_yet(f"your {name} gives the right answers, but it uses {used}: the exercise is "
                   "to build them from the table's bit patterns yourself, without Python's "
                   "UTF-8 encoder.",
                   zh=f"你的 {name} 答案都对，但它用了 {_in_chinese(used)}："
                   "这个练习要你自己按表格里的位模式把结果算出来，"
                   "不能借助 Python 自带的 UTF-8 编码器。")


def code_point_cases(how_many: int = 500, seed: int = 1) -> list[int]:
    """Both ends of every row of the table, then random code points (no surrogates)."""
    rng = random.Random(seed)
    cases = [end for first, last, _ in UTF8_ROWS for end in (first, last)]
    cases += [rng.randrange(0x110000) for _ in range(how_many)]
    return [cp for cp in cases if not 0xD800 <= cp <= 0xDFFF]


def check_utf8_length(candidate: Callable[[int], int]) -> bool:
    """``candidate(cp)`` must give UTF-8's length for every code point, without ``.encode``."""
    for cp in code_point_cases():
        expected = len(chr(cp).encode("utf-8"))
        got, error = attempt(candidate, cp)
        if got != expected:
            first, last, _ = next(row for row in UTF8_ROWS if row[0] <= cp <= row[1])
            hint = f"U+{cp:04X} is in the table's row U+{first:04X} to U+{last:04X}"
            zh = f"U+{cp:04X} 位于表格中 U+{first:04X} 到 U+{last:04X} 的那一行"
            if got == len(chr(cp).encode("utf-16-le")):
                hint += " (you gave its length in UTF-16)"
                zh += "（你给出的是它在 UTF-16 中的长度）"
            return not_yet(f"utf8_length(0x{cp:X}) should be {expected}, got "
                           f"{error or repr(got)}. {hint}.",
                           zh=f"utf8_length(0x{cp:X}) 应为 {expected}，实际得到 "
                           f"{error or repr(got)}。{zh}。")
    forbidden = _forbidden("utf8_length", candidate)
    return correct() if forbidden is None else forbidden


def _random_text(rng: random.Random, length: int) -> str:
    """Characters of 1, 2, 3 and 4 UTF-8 bytes, mixed."""
    return "".join(rng.choice("ab é ж 牛 € 🐂 ☕ \n") for _ in range(length))


def _cut_hint(data: bytes, limit: int, got: Any, error: str | None,
              expected: bytes) -> tuple[str, str]:
    """Name the mistake behind a wrong cut, in English and in Chinese."""
    if error and limit >= len(data):
        return ("data[limit] does not exist when limit >= len(data).",
                "当 limit >= len(data) 时，data[limit] 不存在。")
    if not isinstance(got, bytes):
        return "Return bytes: a prefix data[:end].", "请返回 bytes：一个前缀 data[:end]。"
    if not data.startswith(got):
        return "Return a prefix of data: data[:end].", "请返回 data 的一个前缀：data[:end]。"
    if len(got) > limit:
        return "The prefix may be at most `limit` bytes long.", "前缀最多只能有 `limit` 个字节。"
    if len(got) > len(expected):
        dropped = f"data[{len(got)}] = {data[len(got)]:#010b}"
        return (f"Your cut splits a character: the first byte you drop, {dropped}, is a "
                "continuation byte (0b10xxxxxx). Step back while it is.",
                f"你的切分把一个字符切开了：你丢掉的第一个字节 {dropped} 是一个延续字节"
                "（0b10xxxxxx）。只要它是延续字节，就往回退一步。")
    if len(expected) == len(data):
        return ("When limit >= len(data), all of data fits.",
                "当 limit >= len(data) 时，整个 data 都放得下。")
    return ("You cut off a whole character: a cut is fine when the first byte you drop, "
            "data[end], starts a character. Look at data[end], not data[end - 1].",
            "你切掉了一个完整的字符：只要丢掉的第一个字节 data[end] 是一个字符的开头，"
            "这一刀就没问题。要看的是 data[end]，而不是 data[end - 1]。")


def check_cut_at_boundary(candidate: Callable[[bytes, int], bytes]) -> bool:
    """``candidate(data, limit)`` must give the longest prefix of at most ``limit`` bytes
    that ends between characters, for every limit up to past the end."""
    rng = random.Random(2)
    for text in ["", "ox 牛 🐂 é!"] + [_random_text(rng, n) for n in range(1, 30)]:
        data = text.encode("utf-8")
        ends = [len(text[:k].encode("utf-8")) for k in range(len(text) + 1)]
        for limit in range(len(data) + 3):
            expected = data[:max(end for end in ends if end <= limit)]
            got, error = attempt(candidate, data, limit)
            if got != expected:
                hint, zh = _cut_hint(data, limit, got, error, expected)
                return not_yet(f"cut_at_boundary({data!r}, {limit}) should be {expected!r}, "
                               f"got {error or repr(got)}. {hint}",
                               zh=f"cut_at_boundary({data!r}, {limit}) 应为 {expected!r}，"
                               f"实际得到 {error or repr(got)}。{zh}")
    return correct()


def _encode_hint(got: Any, expected: bytes) -> tuple[str, str]:
    """Name the mistake behind wrong UTF-8 bytes, in English and in Chinese."""
    if not isinstance(got, bytes):
        return ("Return bytes, e.g. bytes([lead, ...]).",
                "请返回 bytes，例如 bytes([lead, ...])。")
    if len(got) != len(expected):
        return (f"This code point takes {len(expected)} byte(s): see the table's rows.",
                f"这个码位要占 {len(expected)} 个字节：请看表格的各行。")
    if len(got) > 2 and got[0] == expected[0] and got[1:] == expected[:0:-1]:
        return ("The continuation bytes are in reverse: the highest bits come first.",
                "延续字节的顺序反了：最高位的那组应该在前面。")
    if any(byte >> 6 != 0b10 for byte in got[1:]):
        return ("Every byte after the first must start with the bits 10 (0b10xxxxxx).",
                "第一个字节之后的每个字节都必须以 10 这两位开头（0b10xxxxxx）。")
    if len(got) > 1 and got[0] >> (7 - len(got)) != expected[0] >> (7 - len(got)):
        lead = f"0b{'1' * len(got)}0{'x' * (7 - len(got))}"
        return (f"The lead byte of a {len(got)}-byte character starts with {len(got)} ones "
                f"and a zero: {lead}.",
                f"{len(got)} 字节字符的首字节以 {len(got)} 个 1 和一个 0 开头：{lead}。")
    return ("The bits are in the wrong places: the last byte holds the lowest 6 bits.",
            "各位放错了位置：最后一个字节存放的是最低的 6 位。")


def check_utf8_encode(candidate: Callable[[int], bytes]) -> bool:
    """``candidate(cp)`` must give UTF-8's bytes, built by hand (no ``.encode``)."""
    for cp in code_point_cases(2_000, seed=3):
        expected = chr(cp).encode("utf-8")
        got, error = attempt(candidate, cp)
        if got != expected:
            shown = got.hex(" ") if isinstance(got, bytes) else repr(got)
            hint, zh = _encode_hint(got, expected)
            return not_yet(f"utf8_encode(0x{cp:X}) should be {expected.hex(' ')}, got "
                           f"{error or shown}. {hint}",
                           zh=f"utf8_encode(0x{cp:X}) 应为 {expected.hex(' ')}，实际得到 "
                           f"{error or shown}。{zh}")
    forbidden = _forbidden("utf8_encode", candidate)
    return correct() if forbidden is None else forbidden
