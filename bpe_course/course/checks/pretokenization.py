"""The checks of notebook 03 (GPT-2 pretokenization): predicting GPT-2's pieces, numbers in
groups of three, splitting on special tokens, and (in the optional section on ``re``) spelling
a set of code points out as ranges.

Each checker compares with the package (:func:`~bpe_course.pretokens.pretokenize`,
:func:`~bpe_course.pretokens.split_on_special_tokens`,
:func:`~bpe_course.speed.fastsplit.bmp_members`) on many texts, and its hint names the cause
of a difference: which alternative took the piece, an empty match that ``findall`` returned
because an alternative can match nothing, a special token that was not escaped... Every
hint has a Chinese version, said in the Chinese edition (``not_yet(hint, zh=...)``): helpers
return hints as (English, Chinese) pairs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import regex

from bpe_course.course.checks.harness import attempt, check_exercise, correct, not_yet
from bpe_course.pretokens import GPT2_PATTERN, pretokenize, split_on_special_tokens
from bpe_course.speed.fastsplit import bmp_members

__all__ = ["check_exercise", "check_pattern", "check_pieces", "check_spell_out",
           "check_split_on_specials"]

EXERCISE_TEXT = "We'll pay $100 for 2 dogs!!"
GPT2_ALTERNATIVES = {"a contraction": r"'(?:[sdmt]|ll|ve|re)", "letters": r" ?\p{L}+",
                     "a number": r" ?\p{N}+", "other symbols": r" ?[^\s\p{L}\p{N}]+",
                     "whitespace": r"\s+"}
#: The alternatives' names in Chinese.
IN_CHINESE = {"a contraction": "缩约形式分支", "letters": "字母分支", "a number": "数字分支",
              "other symbols": "其他符号分支", "whitespace": "空白字符分支",
              "no alternative": "没有哪个分支"}


def alternative_of(piece: str) -> str:
    """Which of GPT-2's alternatives matches the whole piece."""
    return next((name for name, alt in GPT2_ALTERNATIVES.items()
                 if regex.fullmatch(alt, piece)), "no alternative")


def check_pieces(answer: Any) -> bool:
    """The learner's predicted pieces of the exercise sentence, against GPT-2's."""
    expected = pretokenize(EXERCISE_TEXT, GPT2_PATTERN)
    if answer == expected:
        return correct()
    if not isinstance(answer, list) or not all(isinstance(p, str) for p in answer):
        hint = ('write a list of strings, e.g. ["We", ...].',
                '写成字符串的列表，例如 ["We", ...]。')
    elif "" in answer:
        at = answer.index("")
        hint = (f"piece {at} is an empty string: no alternative matches nothing, so every "
                "piece has at least one character. Remove it.",
                f"第 {at} 个片段是空字符串：没有哪个分支会匹配空串，所以每个片段至少有一个字符。"
                "把它删掉。")
    elif "".join(answer) != EXERCISE_TEXT:
        hint = ("your pieces should join back into the sentence exactly (spaces included).",
                "你的片段连起来应该和原句一模一样（空格也算）。")
    else:
        i = next(i for i, (a, e) in enumerate(zip(answer, expected)) if a != e)
        mine, gpt2 = answer[i], expected[i]
        kind = alternative_of(gpt2)
        if gpt2.startswith(mine):
            hint = (f"{mine!r} is too short: {kind} takes more there.",
                    f"{mine!r} 太短了：{IN_CHINESE[kind]}在那里会取更多字符。")
        elif mine.startswith(gpt2):
            hint = (f"{mine!r} is more than one piece: {gpt2!r} is {kind}, and an alternative "
                    "stops where its kind of character ends.",
                    f"{mine!r} 不止一个片段：{gpt2!r} 由{IN_CHINESE[kind]}匹配，"
                    "而一个分支在它那类字符结束的地方就停下。")
        else:
            hint = (f"{mine!r} is not how GPT-2 cuts there. Which alternative matches first, "
                    "and does it take the space in front?",
                    "GPT-2 在那里不是这样切的。哪个分支先匹配上？它会带上前面的空格吗？")
        hint = (f"piece {i} is {mine!r}. " + hint[0], f"第 {i} 个片段是 {mine!r}。" + hint[1])
    return not_yet(hint[0], zh=hint[1])


def in_groups_of_three(pieces: list[str]) -> list[str]:
    """GPT-2's pieces with every number piece cut into groups of at most three digits,
    from the left (the space, if any, stays with the first group)."""
    out = []
    for piece in pieces:
        if regex.fullmatch(r" ?\p{N}+", piece):
            digits = piece.lstrip(" ")
            groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
            out += [piece[:len(piece) - len(digits)] + groups[0]] + groups[1:]
        else:
            out.append(piece)
    return out


def pattern_samples(seed: int = 7) -> list[str]:
    """The sentences above, then random strings of digits, letters, spaces and symbols."""
    rng = random.Random(seed)
    parts = ["1", "12", "1234", "1234567", " ", "  ", "x", "dog", "'s", "$", ".", "\n",
             "²", "½", "٣٤٥٦", "७"]
    samples = ["In 2024 it cost $1234567.89", "it's 12 o'clock", "x² ½ 1000000"]
    return samples + ["".join(rng.choices(parts, k=rng.randint(1, 12))) for _ in range(300)]


def check_pattern(pattern: Any) -> bool:
    """GPT-2's pattern with numbers in groups of at most three, on a few hundred samples."""
    try:
        compiled = regex.compile(pattern)
    except (regex.error, TypeError) as error:
        return not_yet(f"my_pattern is not a pattern ({error}).",
                       zh=f"my_pattern 不是一个正则模式（{error}）。")
    for sample in pattern_samples():
        expected = in_groups_of_three(pretokenize(sample, GPT2_PATTERN))
        got = compiled.findall(sample)
        if got != expected:
            hint, zh = pattern_hint(sample, got, expected)
            return not_yet(f"{sample!r} gives {got}, expected {expected}. Hint: {hint}",
                           zh=f"{sample!r} 切出的是 {got}，应为 {expected}。提示：{zh}")
    return correct()


#: The cause of an empty piece from ``findall``, in either exercise that runs a pattern
#: (English, Chinese).
EMPTY_MATCH = ("findall returned an empty piece '': an alternative can match nothing (a `*` or "
               "{0,...} where a `+` or {1,...} is needed, or a lone \\s*), and findall "
               "reports that empty match wherever it is the first alternative to match: at "
               "the end of the text at least, where nothing else is left. Make every "
               "alternative take at least one character.",
               "findall 返回了一个空片段 ''：有个分支可以什么都不匹配（该用 `+` 或 {1,...} 的地方"
               "用了 `*` 或 {0,...}，或者单独一个 \\s*）。只要它是第一个匹配上的分支，findall 就会"
               "报告这个空匹配：至少在文本末尾、别的都不剩的地方会这样。让每个分支至少取一个字符。")


def pattern_hint(sample: str, got: list[str], expected: list[str]) -> tuple[str, str]:
    """Name the mistake behind pieces that differ from GPT-2's regrouped ones."""
    if "" in got:
        return EMPTY_MATCH
    lost = "".join(expected) != "".join(got)
    if lost and any(regex.fullmatch(r"\p{N}", c) and not regex.fullmatch(r"\d", c) for c in sample):
        return (r"\d misses number characters such as ² and ½; \p{N} matches them all.",
                r"\d 匹配不到 ² 和 ½ 这样的数字字符；\p{N} 全都能匹配。")
    if lost:
        if any(c.isdigit() for c in sample):
            return ("characters were lost: {3} means exactly three; {1,3} means one to three.",
                    "有字符丢了：{3} 表示正好三个；{1,3} 表示一到三个。")
        return "characters were lost.", "有字符丢了。"
    if any(len(regex.sub(r"\D", "", piece)) > 3 for piece in got):
        return ("a piece has more than three digits: {1,3} repeats one to three times.",
                "有个片段超过了三位数字：{1,3} 重复一到三次。")
    if any(" " + piece in expected for piece in got if piece[:1].isdigit()):
        return ("keep the optional space in front of a number: ` ?` before the digits.",
                "保留数字前面那个可有可无的空格：在数字前写 ` ?`。")
    if any(regex.search(r"\p{N}", piece) and " " in piece.lstrip(" ") for piece in got):
        return ("a number piece may start with one space, but has no space inside it.",
                "数字片段可以以一个空格开头，但中间不能有空格。")
    return ("only the numbers alternative should change; the others stay as in GPT-2's.",
            "只有数字分支需要改；其他分支保持和 GPT-2 的一样。")


SPECIAL_POOL = ["<|endoftext|>", "<|endoftext|><|endoftext|>", "<pad>", "<pad><pad>", "<",
                "<<", "[SEP]", "a.b", "x*", "|", "(?)", "\\d"]


def split_cases(seed: int = 8) -> list[tuple[str, list[str]]]:
    """Texts glued from special tokens, pieces of them and ordinary characters."""
    rng = random.Random(seed)
    cases = [("", []), ("no specials here", []), ("", ["<pad>"]),
             ("a<|endoftext|><|endoftext|>b", ["<|endoftext|>", "<|endoftext|><|endoftext|>"])]
    for _ in range(300):
        specials = rng.sample(SPECIAL_POOL, rng.randint(1, 4))
        parts = SPECIAL_POOL + ["a", "b", " ", "<|", "end", ".", "\n", "ab"]
        cases.append(("".join(rng.choices(parts, k=rng.randint(0, 12))), specials))
    return cases


def check_split_on_specials(candidate: Callable[[str, list[str]], Any]) -> bool:
    """``candidate(text, specials)`` must cut as the package's ``split_on_special_tokens``."""
    for text, specials in split_cases():
        expected = split_on_special_tokens(text, specials)
        got, error = attempt(candidate, text, list(specials))
        if got != expected:
            hint, zh = split_hint(text, specials, got, error, expected)
            call = f"split_on_specials({text!r}, {specials})"
            return not_yet(f"{call} gave {error or got!r}, expected {expected}. Hint: {hint}",
                           zh=f"{call} 得到的是 {error or got!r}，应为 {expected}。提示：{zh}")
    return correct()


def split_hint(text: str, specials: list[str], got: Any, error: str | None,
               expected: list[str]) -> tuple[str, str]:
    """Name the mistake behind a wrong split."""
    if error:
        if "regex" in error or "error" in error:
            return ("special tokens can hold characters that mean something in a pattern, "
                    "such as * ( ) ? \\: regex.escape each one.",
                    "特殊词元里可能有在正则模式中有含义的字符，比如 * ( ) ? \\："
                    "每个都要用 regex.escape 转义。")
        return "see the error above.", "看看上面的报错。"
    if isinstance(got, list) and got[-1:] == [""] and got[:-1] == expected:
        return EMPTY_MATCH
    if not specials and got != [text]:
        return ("with no special tokens, return [text]: joining no tokens gives an empty "
                "pattern, and an empty pattern splits between every two characters.",
                "没有特殊词元时返回 [text]：把零个词元连起来得到的是空的正则模式，"
                "而空的正则模式会在每两个字符之间都切一刀。")
    if not isinstance(got, list):
        return "return a list of strings.", "请返回字符串的列表。"
    if "".join(got) != text:
        return ("the pieces must join back into the text; a capturing group (...) makes "
                "regex.split keep the special tokens.",
                "各个片段连起来必须正好是原文；用捕获分组 (...) 能让 regex.split 保留特殊词元。")
    strays = [piece for piece in got[1::2] if piece not in specials]
    if strays:
        return (f"{strays[0]!r} sits at an odd position but is not a special token: escape "
                "the tokens (regex.escape), or `|` and `.` keep their pattern meaning.",
                f"{strays[0]!r} 在奇数位置上，却不是特殊词元：要把特殊词元转义（regex.escape），"
                "否则 `|` 和 `.` 仍保留它们在正则模式里的含义。")
    if len(got) > len(expected):
        return ("a special token was cut into shorter ones: try the longest special tokens "
                "first (sorted by length, longest first).",
                "有个特殊词元被切成了更短的几个：先试最长的特殊词元（按长度排序，最长的在前）。")
    return "compare with the package's answer above.", "和上面本课程 Python 包给出的答案比一比。"


BMP = "".join(map(chr, range(0x10000)))
PROPERTIES = [r"\p{N}", r"\p{L}", r"\s", r"\p{Lu}", r"\p{Nd}", r"\p{M}", r"\p{Zs}", r"\p{Cs}"]
SMALL_CASES = [[], [65], [0], [0xFFFF], [65, 67], [65, 66], [65, 66, 67], [65, 67, 69, 70],
               [0x2B, 0x2D, 0x2F], [0x2D], [0x5C], [0x5D], [0x5E], [0x0A, 0x0D], [0xD800]]


def spell_out_cases(seed: int = 3) -> list[tuple[str, list[int], str | None]]:
    """(what the codes are, the codes, the package's spelling or None): the members of
    properties (as bmp_members spells them), small cases, then random runs and gaps."""
    cases = []
    for escape in PROPERTIES:
        members = bmp_members(escape)
        codes = [ord(c) for c in re.findall(f"[{members}]", BMP)]
        cases.append((f"<the {len(codes):,} members of {escape}>", codes, members))
    cases += [(str(codes), codes, None) for codes in SMALL_CASES]
    rng = random.Random(seed)
    for _ in range(300):
        codes, code = [], rng.randrange(0x10000)
        while code < 0x10000 and len(codes) < 30:
            codes += range(code, min(code + rng.choice([1, 1, 2, 3, 6]), 0x10000))
            code = codes[-1] + rng.choice([2, 2, 3, 10, 500])  # 2: a gap of one code point
        cases.append((str(codes), codes, None))
    return cases


def members_of(compiled: re.Pattern[str], codes: list[int], everywhere: bool) -> set[int]:
    """The code points the class matches: all of the BMP, or those near `codes`."""
    if everywhere:
        return {ord(hit) for hit in compiled.findall(BMP) if len(hit) == 1}
    near = {code + step for code in codes for step in (-2, -1, 0, 1, 2)}
    probes = near | {0x20, 0x2C, 0x2D, 0x5C, 0x5D, 0x5E}
    return {code for code in probes if 0 <= code < 0x10000 and compiled.fullmatch(chr(code))}


def unreadable_hint(answer: str) -> tuple[str, str]:
    """Why ``re`` cannot read the class, or reads other characters than meant."""
    if "\\" not in answer:
        return ("write every code point as an escape, \\u and four hex digits: written as "
                "itself, a character such as ] \\ ^ or - changes the class.",
                "每个码位都写成转义形式，即 \\u 加四位十六进制数字：直接写出来的话，"
                "] \\ ^ 或 - 这样的字符会改变字符类的含义。")
    if regex.search(r"\\u(?![0-9a-fA-F]{4})", answer):
        return ("\\u needs exactly four hex digits: f'\\u{code:04x}' pads with zeros.",
                "\\u 后面必须正好是四位十六进制数字：f'\\u{code:04x}' 会用 0 补齐。")
    if "\\U" in answer:
        return ("\\U takes eight hex digits; \\u (small u) takes four.",
                "\\U 后面是八位十六进制数字；\\u（小写 u）后面是四位。")
    return ("look at the escapes and ranges of your string.",
            "检查一下你的字符串里的转义和范围。")


def wrong_character_hint(answer: str, compiled: re.Pattern[str], wanted: set[int],
                         missed: list[int], extra: list[int]) -> tuple[str, str]:
    """Why the class misses or adds characters, from the shape of the mistake."""
    decimal = [c for c in sorted(wanted)[:5]
               if f"\\u{c:04d}" in answer and f"\\u{c:04x}" not in answer]
    literal = [c for c in extra if chr(c) in answer and chr(c) not in "-\\u0123456789abcdef"]
    if "\\" not in answer:
        return unreadable_hint(answer)
    if decimal:
        right, wrong = f"\\u{decimal[0]:04x}", f"\\u{decimal[0]:04d}"
        return (f"\\u reads hexadecimal digits: {decimal[0]} is {right} "
                f"(f'\\u{{code:04x}}'), not {wrong}.",
                f"\\u 后面读的是十六进制数字：{decimal[0]} 是 {right}"
                f"（f'\\u{{code:04x}}'），不是 {wrong}。")
    if literal:
        return (f"only escapes and - belong inside the class; your string holds "
                f"{chr(literal[0])!r}, so the class matches it.",
                f"字符类里只该有转义和 -；你的字符串里有 {chr(literal[0])!r}，"
                "所以字符类也会匹配它。")
    if extra and extra[0] + 1 in wanted and extra[0] - 1 in wanted:
        return ("a range matches every code point between its ends: a gap of one code "
                "point ends the run ([65, 67] is \\u0041\\u0043, not \\u0041-\\u0043).",
                "范围会匹配两端之间的每一个码位：哪怕只隔开一个码位，这一段也就结束了"
                "（[65, 67] 是 \\u0041\\u0043，不是 \\u0041-\\u0043）。")
    if extra and extra[0] - 1 in wanted:
        return ("a range ends at the last code point of its run, not the one after it.",
                "范围止于这一段的最后一个码位，而不是它后面那一个。")
    if missed and not extra and min(missed) > max(wanted - set(missed), default=-1):
        return ("the last run is missing: write the run you were building when the loop ends.",
                "少了最后一段：循环结束时，把正在拼的那一段也写出来。")
    if missed and missed[0] - 1 in wanted and missed[0] + 1 in wanted:
        return ("a range needs a - between its ends: \\u0030-\\u0039 is 0 to 9, "
                "\\u0030\\u0039 only 0 and 9.",
                "范围的两端之间要有 -：\\u0030-\\u0039 是 0 到 9，\\u0030\\u0039 只有 0 和 9。")
    if missed and missed[0] - 1 in wanted:
        return ("a range first-last includes last: end it at the run's last code point.",
                "范围 first-last 包含 last：让它止于这一段的最后一个码位。")
    return ("try a short list by hand: [65, 66, 67, 70] gives \\u0041-\\u0043\\u0046.",
            "先手算一个短列表：[65, 66, 67, 70] 得到 \\u0041-\\u0043\\u0046。")


def class_mistake(answer: Any, codes: list[int], everywhere: bool) -> tuple[str, str] | None:
    """None if `[answer]` matches exactly `codes`, else what is wrong, naming a character."""
    if not isinstance(answer, str):
        kind = "None" if answer is None else f"a {type(answer).__name__}"
        return (f"return one string (the escapes joined), not {kind}.",
                f"请返回一个字符串（把转义连起来），不是 {kind}。")
    if not codes:
        return None if answer == "" else ('an empty list has nothing to match: return "".',
                                          '空列表没有要匹配的东西：返回 ""。')
    if answer == "":
        return ("the list is not empty: write the run you were building when the loop ends.",
                "列表不是空的：循环结束时，把正在拼的那一段也写出来。")
    if answer.startswith("[") and answer.endswith("]"):
        return ("leave out the brackets: your string goes between [ and ] for re.",
                "不要写方括号：检查会把你的字符串放进 [ 和 ] 之间交给 re。")
    try:
        compiled = re.compile(f"[{answer}]")
    except re.error as error:
        hint = unreadable_hint(answer)
        return (f"re cannot read it ({error}): " + hint[0], f"re 读不懂它（{error}）：" + hint[1])
    wanted = set(codes)
    matched = members_of(compiled, codes, everywhere)
    missed, extra = sorted(wanted - matched), sorted(matched - wanted)
    if not missed and not extra:
        return None
    first = min(missed + extra)
    character = f"U+{first:04X} {chr(first)!r}"
    said = ((f"your class misses {character}", f"你的字符类漏掉了 {character}")
            if first in wanted else
            (f"your class also matches {character}, which is not in the list",
             f"你的字符类还匹配了 {character}，它不在列表里"))
    hint = wrong_character_hint(answer, compiled, wanted, missed, extra)
    return f"{said[0]}. {hint[0][0].upper()}{hint[0][1:]}", f"{said[1]}。{hint[1]}"


def code_point_runs(codes: list[int]) -> list[tuple[int, int]]:
    """``(first, last)`` of each run of consecutive code points."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return [(first, last) for first, last in runs]


def shortest_spelling(codes: list[int]) -> str:
    """The shortest class inside made of escapes: a lone code point as one escape (6
    characters), a run of two as two escapes (12, where a range takes 13), a longer run as a
    range."""
    def run(first: int, last: int) -> str:
        if last - first < 2:
            return "".join(f"\\u{code:04x}" for code in range(first, last + 1))
        return f"\\u{first:04x}-\\u{last:04x}"
    return "".join(run(first, last) for first, last in code_point_runs(codes))


def length_hint(answer: str, codes: list[int]) -> tuple[str, str] | None:
    """None if ``answer`` is as short as the shortest spelling, else why it is longer."""
    shortest = shortest_spelling(codes)
    if len(answer) <= len(shortest):
        return None
    ranges = [(int(a, 16), int(b, 16))
              for a, b in regex.findall(r"\\u([0-9a-fA-F]{4})-\\u([0-9a-fA-F]{4})", answer)]
    if any(first == last for first, last in ranges):
        return ("a code point on its own is one escape, not a range from itself to itself: "
                "\\u0041, not \\u0041-\\u0041.",
                "单独的码位写成一个转义，而不是从自己到自己的范围：\\u0041，不是 \\u0041-\\u0041。")
    if any(last == first + 1 for first, last in ranges):
        return ("a run of two is shorter as two escapes: \\u0041\\u0042 has 12 characters, "
                "the range \\u0041-\\u0042 has 13.",
                "两个连续码位写成两个转义更短：\\u0041\\u0042 有 12 个字符，"
                "范围 \\u0041-\\u0042 有 13 个。")
    long_run = any(last - first >= 2 for first, last in code_point_runs(codes))
    if long_run and len(ranges) < shortest.count("-"):
        return ("a run of three or more is shorter as a range: \\u0041-\\u0043 has 13 "
                "characters, three escapes have 18.",
                "三个或更多连续码位写成范围更短：\\u0041-\\u0043 有 13 个字符，三个转义有 18 个。")
    return (f"your class has {len(answer)} characters, the shortest has {len(shortest)}: "
            "write each run the shorter way.",
            f"你的字符类有 {len(answer)} 个字符，最短的写法只要 {len(shortest)} 个："
            "每一段都用更短的写法。")


def check_spell_out(candidate: Callable[[list[int]], Any]) -> bool:
    """``candidate(codes)`` must spell the inside of a class ``re`` reads as exactly ``codes``,
    no longer than :func:`shortest_spelling` (any class that short is right)."""
    for what, codes, members in spell_out_cases():
        answer, error = attempt(candidate, list(codes))
        if error:
            hint = (('an empty list has no runs: return "".', '空列表没有任何一段：返回 ""。')
                    if not codes else ("see the error.", "看看报错。"))
            return not_yet(f"spell_out({what}) raised {error}. Hint: {hint[0]}",
                           zh=f"spell_out({what}) 抛出了 {error}。提示：{hint[1]}")
        mistake = class_mistake(answer, codes, members is not None)
        mistake = mistake or length_hint(answer, codes)
        if mistake:
            plain = isinstance(answer, str) and answer.isprintable()
            shown = f"'{answer}'" if plain else repr(answer)  # backslashes shown once
            shown = shown if len(shown) < 70 else shown[:66] + ("...'" if plain else "...")
            return not_yet(f"spell_out({what}) gave {shown}. Hint: {mistake[0]}",
                           zh=f"spell_out({what}) 得到的是 {shown}。提示：{mistake[1]}")
    return correct()
