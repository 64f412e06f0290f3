"""The checks of notebook 00 (why tokenization matters): reversing a text given only its
ids, and grouping digits from the right.

Each ``check_*`` runs a learner's function on many cases and prints ``Correct!`` or a hint
that names the mistake it sees (reversed tokens instead of characters, bytes cut apart,
digits grouped from the left, leading zeros lost by ``int``...). Every hint has a Chinese
version, said in the Chinese edition (``not_yet(hint, zh=...)``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bpe_course.course.checks.harness import attempt, check_exercise, correct, not_yet
from bpe_course.openai import cl100k_base, gpt2

__all__ = ["check_exercise", "check_group_from_right", "check_reverse_ids", "group_cases",
           "reverse_ids_cases"]


def reverse_ids_cases(seed: int = 0, count: int = 40) -> list[str]:
    """Texts mixing words, spaces, digits and characters of one to four bytes."""
    rng = random.Random(seed)
    alphabet = [*"abcdefghijklmnopqrstuvwxyz     ,.", "é", "ß", "я", "奶", "茶", "ह", "🙂", "\n"]
    texts = [" strawberry", "Hello world", "我奶奶", "हर सुबह", "a 🙂 b", "", "x"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
              for _ in range(count)]
    return texts


def _reverse_hint(tokenizer: Any, name: str, text: str, ids: list[int], got: list[int],
                  expected: list[int]) -> tuple[str, str]:
    """Why ``got`` is not the ids of the reversed text, in English and in Chinese."""
    if got == ids[::-1]:
        return (f"you reversed the order of the tokens, but each token keeps its letters in "
                f"order: {text!r} is {ids} in {name}, and the reversed text {text[::-1]!r} is "
                f"{expected}. Decode, reverse the characters, encode.",
                f"你把词元的顺序倒过来了，但每个词元内部的字母仍是原来的顺序：{text!r} 的 id "
                f"是 {ids}（{name}），而倒序文本 {text[::-1]!r} 是 {expected}。"
                "先解码，再倒序字符，再编码。")
    if not all(i in tokenizer.vocab for i in got):
        return (f"for {text!r} ({name}) you returned {got}, which are not all ids",
                f"对 {text!r}（{name}）你返回了 {got}，其中有的不是 id")
    decoded = tokenizer.decode(got)
    if "\ufffd" in decoded:
        return (f"for {text!r} ({name}) your ids decode to {decoded!r}: a character was cut "
                "apart. Reverse characters (a str), not bytes or tokens.",
                f"对 {text!r}（{name}）你的 id 解码为 {decoded!r}：有字符被切开了。"
                "要倒序的是字符（一个 str），不是字节或词元。")
    if decoded == text[::-1]:
        return (f"your ids spell the reversed text {text[::-1]!r} ({name}), but they are "
                f"{got}, not what encode gives ({expected}): encode the whole reversed text "
                "at once.",
                f"你的 id 拼出了倒序文本 {text[::-1]!r}（{name}），但它们是 {got}，不是 encode "
                f"给出的结果（{expected}）：要把整段倒序文本一次编码。")
    return (f"for {text!r} ({name}) expected the ids of {text[::-1]!r}, {expected}; yours "
            f"decode to {decoded!r}",
            f"对 {text!r}（{name}）应得到 {text[::-1]!r} 的 id，即 {expected}；"
            f"你的 id 解码为 {decoded!r}")


def check_reverse_ids(candidate: Callable[[Any, list[int]], list[int]]) -> bool:
    """``candidate(tokenizer, ids)`` must give the ids of the text reversed by characters,
    with GPT-2 and with cl100k_base (so a fixed tokenizer inside is caught too)."""
    for name, tokenizer in [("gpt2", gpt2()), ("cl100k_base", cl100k_base())]:
        for text in reverse_ids_cases():
            ids = tokenizer.encode(text)
            expected = tokenizer.encode(text[::-1])
            got, raised = attempt(candidate, tokenizer, list(ids))
            if raised is not None:
                why = f"for {text!r} ({name}) it raised {raised}"
                zh = f"对 {text!r}（{name}）它抛出了 {raised}"
                if raised.startswith("UnicodeDecodeError:"):
                    why += ("\nReversed bytes are not UTF-8: reverse the characters (a str), "
                            "not bytes.")
                    zh += "\n倒过来的字节不是 UTF-8：要倒序的是字符（一个 str），不是字节。"
                elif name != "gpt2":
                    why += ("\nIt worked for gpt2: use the `tokenizer` you are given, not a "
                            "fixed one.")
                    zh += "\n它对 gpt2 没问题：请用传给你的 `tokenizer`，不要用固定的某一个。"
                return not_yet(why, zh=zh)
            if got is None or isinstance(got, str):
                return not_yet(f"reverse_ids returned {got!r}; return the list of ids (encode "
                               "the text)",
                               zh=f"reverse_ids 返回了 {got!r}；应返回 id 列表（把文本编码）")
            got = list(got)
            if got != expected:
                hint, zh = _reverse_hint(tokenizer, name, text, ids, got, expected)
                return not_yet(hint, zh=zh)
    return correct()


def group_cases(seed: int = 0, count: int = 200) -> list[str]:
    """Digit strings of every length up to 20, some with leading zeros."""
    rng = random.Random(seed)
    cases = ["0", "7", "42", "123", "1234", "007", "000000", "0012", "1234567", ""]
    cases += ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20)))
              for _ in range(count)]
    return cases


def _group_mistake(digits: str, groups: Any) -> tuple[str, str] | None:
    """What is wrong with ``groups`` for ``digits``, in English and in Chinese; None if they
    are right."""
    if not isinstance(groups, (list, tuple)):
        return (f"for {digits!r} you returned {groups!r}; return a list of strings",
                f"对 {digits!r} 你返回了 {groups!r}；应返回字符串列表")
    if not all(isinstance(group, str) for group in groups):
        return (f"for {digits!r} you returned {groups}; each group must be a str",
                f"对 {digits!r} 你返回了 {groups}；每一组都必须是 str")
    joined = "".join(groups)
    if joined != digits:
        lost = joined == (digits.lstrip("0") or "0")  # what str(int(digits)) would keep
        why = " (int() drops leading zeros: keep the digits as a string)" if lost else ""
        zh = "（int() 会丢掉开头的 0：请把数字当作字符串处理）" if lost else ""
        if "".join(reversed(groups)) == digits:
            why = ": list the groups left to right, in the order they appear in the number"
            zh = "：请按从左到右、即数字中出现的顺序列出各组"
        return (f"for {digits!r} your groups {groups} join to {joined!r}, not to the digits{why}",
                f"对 {digits!r} 你的分组 {groups} 连起来是 {joined!r}，不等于原来的数字{zh}")
    if any(group == "" for group in groups):
        why = ("an empty string has no groups" if digits == "" else
               "when the length is a multiple of three, the first group is a full one")
        zh = ("空字符串没有任何分组" if digits == "" else
              "长度是 3 的倍数时，第一组也是完整的三位")
        return (f"for {digits!r} you returned {groups}: no empty groups ({why})",
                f"对 {digits!r} 你返回了 {groups}：不能有空的分组（{zh}）")
    if any(len(group) != 3 for group in groups[1:]) or (groups and len(groups[0]) > 3):
        hint = zh = ""
        if all(len(group) == 3 for group in groups[:-1]):
            hint = " You grouped from the left, as cl100k_base does; count from the right."
            zh = "你是从左往右分组的，和 cl100k_base 一样；要从右往左数。"
        return (f"for {digits!r} you returned {groups}; every group after the first must have "
                f"three digits.{hint}",
                f"对 {digits!r} 你返回了 {groups}；第一组之后的每一组都必须是三位数字。{zh}")
    return None


def check_group_from_right(candidate: Callable[[str], list[str]]) -> bool:
    """``candidate(digits)`` must cut a digit string into threes from the right."""
    for digits in group_cases():
        groups, raised = attempt(candidate, digits)
        if raised is not None:
            return not_yet(f"for {digits!r} it raised {raised}",
                           zh=f"对 {digits!r} 它抛出了 {raised}")
        mistake = _group_mistake(digits, groups)
        if mistake:
            hint, zh = mistake
            return not_yet(hint, zh=zh)
    return correct()
