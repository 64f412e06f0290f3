"""Notebook 03 (GPT-2 pretokenization): its exercise checks reject wrong answers and accept
right ones.

Each checker (from :mod:`bpe_course.course.checks.pretokenization`) and collapsed solution
(the notebook's cells tagged ``solution``) is called on answers a learner could plausibly
write. A wrong answer
must be rejected with a hint that names the mistake; the solution, and other correct ways to
write it, must pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import regex
from notebook_cells import assert_accepted, assert_rejected, assert_rejected_in_chinese, run_cells

import bpe_course
from bpe_course import GPT2_PATTERN, GPT4_PATTERN
from bpe_course.course.checks import pretokenization

#: What notebook 03 builds GPT-2's pattern from, before its exercise cells run.
GPT2_PARTS = {
    "CONTRACTIONS": r"'s|'t|'re|'ve|'m|'ll|'d",
    "LETTERS": r" ?\p{L}+",
    "NUMBERS": r" ?\p{N}+",
    "OTHER": r" ?[^\s\p{L}\p{N}]+",
    "SPACES": r"\s+(?!\S)|\s+",
}


@pytest.fixture(scope="module")
def nb03() -> dict[str, Any]:
    return load_checks_03()


def load_checks_03() -> dict[str, Any]:
    """The checks module's names, and the notebook's solutions run beside them."""
    namespace = {**vars(pretokenization), **GPT2_PARTS}
    return run_cells("03_gpt2_pretokenization", "solution", namespace)


PIECES = ["We", "'ll", " pay", " $", "100", " for", " 2", " dogs", "!!"]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (PIECES + [""], "piece 9 is an empty string"),  # once crashed the check (StopIteration)
        (["", *PIECES], "piece 0 is an empty string"),
        (["We'll", *PIECES[2:]], "\"We'll\" is more than one piece"),
        (["We", "'", "ll", *PIECES[2:]], "\"'\" is too short"),
        ([*PIECES[:3], " $100", *PIECES[5:]], "' $100' is more than one piece"),
        ([*PIECES[:3], " ", "$", *PIECES[4:]], "' ' is too short"),
        (PIECES[:-1], "join back into the sentence"),
        ("We'll pay", "write a list of strings"),
    ],
)
def test_03_pieces_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_pieces"], (answer,), hint)


def with_numbers(alternative: str) -> str:
    """GPT-2's pattern as notebook 03 builds it, with another numbers alternative."""
    parts = GPT2_PARTS
    return "|".join([parts["CONTRACTIONS"], parts["LETTERS"], alternative, parts["OTHER"],
                     parts["SPACES"]])


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (with_numbers(r" ?\p{N}{3}"), "{3} means exactly three"),
        (with_numbers(r"\p{N}{1,3}"), "keep the optional space in front of a number"),
        (with_numbers(r" ?\d{1,3}"), r"\d misses number characters"),
        (with_numbers(r" ?\p{N}+"), "more than three digits"),
        (with_numbers(r"(?: ?\p{N}){1,3}"), "no space inside it"),
        (GPT4_PATTERN, "keep the optional space"),
        ("(", "not a pattern"),
        (None, "not a pattern"),
        # an alternative that can match nothing: findall returns "" at the end of the text
        (with_numbers(r" ?\p{N}+").replace(r"\s+(?!\S)|\s+", r"\s+(?!\S)|\s*"),
         "an alternative can match nothing"),
        (with_numbers(r" ?\p{N}{0,3}"), "an alternative can match nothing"),
        (with_numbers(r" ?\p{N}{1,3}") + r"|\s*", "an alternative can match nothing"),
    ],
)
def test_03_pattern_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_pattern"], (answer,), hint)


def test_03_pattern_check_expects_what_the_solution_pattern_does():
    """The checker's expected pieces (GPT-2's, regrouped) are what the solution's pattern
    gives, on text where GPT-2's space handling and number characters interact."""
    namespace = load_checks_03()
    texts = namespace["pattern_samples"](seed=99) + ["  1234  56789\n 1", "x1234567890y ½²³"]
    for text in texts:
        regrouped = namespace["in_groups_of_three"](bpe_course.pretokenize(text, GPT2_PATTERN))
        assert regrouped == regex.findall(namespace["solution_pattern"], text), text


def split_unescaped(text, specials):
    if not specials:
        return [text]
    return regex.split("(" + "|".join(sorted(specials, key=len, reverse=True)) + ")", text)


def split_in_given_order(text, specials):
    if not specials:
        return [text]
    return regex.split("(" + "|".join(map(regex.escape, specials)) + ")", text)


def split_shortest_first(text, specials):
    if not specials:
        return [text]
    return regex.split("(" + "|".join(map(regex.escape, sorted(specials, key=len))) + ")", text)


def split_without_group(text, specials):
    if not specials:
        return [text]
    return regex.split("|".join(map(regex.escape, sorted(specials, key=len, reverse=True))), text)


def split_even_without_specials(text, specials):
    ordered = sorted(specials, key=len, reverse=True)
    return regex.split("(" + "|".join(map(regex.escape, ordered)) + ")", text)


def split_by_findall(text, specials):
    """Ordinary text as runs that may be empty: findall then ends with an empty match."""
    if not specials:
        return regex.findall(r".*", text, flags=regex.DOTALL)
    return split_in_given_order(text, sorted(specials, key=len, reverse=True))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (split_unescaped, "escape the tokens"),
        (split_in_given_order, "try the longest special tokens first"),
        (split_shortest_first, "try the longest special tokens first"),
        (split_without_group, "a capturing group (...)"),
        (split_even_without_specials, "with no special tokens, return [text]"),
        (split_by_findall, "an alternative can match nothing"),
    ],
)
def test_03_split_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_split_on_specials"], (answer,), hint)


def test_03_split_check_accepts_reverse_sorted_tokens(nb03, capsys):
    """Reverse lexicographic order also puts every token before its prefixes: right too."""

    def reverse_sorted(text, specials):
        if not specials:
            return [text]
        return regex.split("(" + "|".join(map(regex.escape, sorted(specials, reverse=True)))
                           + ")", text)

    assert_accepted(capsys, nb03["check_split_on_specials"], (reverse_sorted,))


def spelled_runs(codes: list[int], write: Callable[[int, int], str], joiner: str = "") -> str:
    """``codes`` cut into runs of consecutive code points, each written by ``write(a, b)``."""
    return joiner.join(write(a, b) for a, b in pretokenization.code_point_runs(codes))


def spelling(escape: Callable[[int], str], dash: str = "-", joiner: str = "", shift: int = 0):
    """An answer to notebook 03's `spell_out`: runs as ``first`` or ``first-last``, each code
    point written by ``escape``; ``shift`` moves every range's end (off by one)."""

    def spell(codes: list[int]) -> str:
        return spelled_runs(
            codes, lambda a, b: escape(a) + (dash + escape(b + shift) if b > a else ""), joiner)

    return spell


def hex_escape(code: int) -> str:
    return f"\\u{code:04x}"


def spell_two_as_singles(codes):
    return spelled_runs(codes, lambda a, b: hex_escape(a) + hex_escape(b) if b == a + 1
                        else spelling(hex_escape)(list(range(a, b + 1))))


def spell_without_the_last_run(codes):
    out, start = [], None
    for previous, code in zip([None, *codes], codes):
        if start is not None and code != previous + 1:
            out.append(spelling(hex_escape)(list(range(start, previous + 1))))
            start = None
        start = code if start is None else start
    return "".join(out)


def spell_merging_gaps_of_one(codes):
    given = set(codes)  # a gap of one between two runs is filled in, joining them
    filled = [c for c in range(0x10000) if c in given or {c - 1, c + 1} <= given]
    return spelling(hex_escape)(filled)


def spell_crashing_on_empty(codes):
    codes[0]  # IndexError on []
    return spell_two_as_singles(codes)


SPELL_OUT_WRONG = [
    (spell_without_the_last_run, "The last run is missing"),
    (spelling(hex_escape, shift=1), "not the one after it"),
    (spelling(hex_escape, shift=-1), "your class misses U+0039 '9'. A range first-last includes"),
    (spell_merging_gaps_of_one, "a gap of one code point ends the run"),
    (spelling(lambda c: f"\\u{c:04d}"), "\\u reads hexadecimal digits: 48 is \\u0030"),
    (spelling(chr), "spell_out([43, 45, 47]) gave '+-/'. Hint: your class also matches U+002C ','"),
    (lambda codes: f"[{spelling(hex_escape)(codes)}]" if codes else "", "leave out the brackets"),
    (lambda codes: spelling(hex_escape)(codes).split("\\u0"), "not a list"),
    (lambda codes: None, "not None"),
    (spell_crashing_on_empty, "raised IndexError"),
    (spelling(lambda c: f"\\u{c:x}"), "\\u needs exactly four hex digits"),
    (spelling(hex_escape, joiner=", "), "your string holds ' '"),
    (spelling(lambda c: f"\\U{c:04x}"), "\\U takes eight hex digits"),
    (spelling(hex_escape, dash=""), "A range needs a - between its ends"),
]


@pytest.mark.parametrize(("answer", "hint"), SPELL_OUT_WRONG)
def test_03_spell_out_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_spell_out"], (answer,), hint)


@pytest.mark.parametrize(
    "answer",
    [
        spell_two_as_singles,  # the shortest spelling with escapes
        lambda codes: spelled_runs(  # upper-case hex digits are as short
            codes, lambda a, b: f"\\u{a:04X}" + (f"\\u{b:04X}" if b == a + 1
                                                 else f"-\\u{b:04X}" if b > a else "")),
        spelling(lambda c: re.escape(chr(c))),  # the characters themselves: shorter still
    ],
)
def test_03_spell_out_check_accepts_any_class_as_short_with_the_same_characters(
    nb03, capsys, answer
):
    assert_accepted(capsys, nb03["check_spell_out"], (answer,))


#: The exercise asks for the shortest spelling: right characters, too many of them.
SPELL_OUT_TOO_LONG = [
    (spelling(hex_escape), "a run of two is shorter as two escapes"),  # ranges everywhere
    (lambda codes: "".join(map(hex_escape, codes)), "a run of three or more is shorter as a range"),
    (lambda codes: spelled_runs(codes, lambda a, b: f"\\u{a:04x}-\\u{b:04x}"),
     "a code point on its own is one escape"),  # A-A for a lone code point
]


@pytest.mark.parametrize(("answer", "hint"), SPELL_OUT_TOO_LONG)
def test_03_spell_out_check_rejects_a_longer_class(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_spell_out"], (answer,), hint)


def test_03_spell_out_cases_hold_the_package_properties_and_the_edge_cases(nb03):
    cases = nb03["spell_out_cases"]()
    assert {"[]", "[65]", "[65, 67]", "[65, 66]"} <= {what for what, _, _ in cases}
    assert len(cases) > 300 and sum(spelled is not None for _, _, spelled in cases) == 8
    for what, codes, spelled in cases:
        assert codes == sorted(set(codes)) and all(0 <= c < 0x10000 for c in codes), what
        if spelled is not None:  # the package's class, spelled shorter by the solution
            shortest = nb03["solution_spell_out"](codes)
            assert shortest == nb03["shortest_spelling"](codes), what
            bmp = "".join(map(chr, range(0x10000)))
            assert re.findall(f"[{shortest}]", bmp) == re.findall(f"[{spelled}]", bmp), what
            assert len(shortest) <= len(spelled), what


@pytest.mark.parametrize(
    ("checker", "solution"),
    [("check_pieces", "solution_pieces"), ("check_pattern", "solution_pattern"),
     ("check_split_on_specials", "solution_split_on_specials"),
     ("check_spell_out", "solution_spell_out")],
)
def test_03_checks_accept_the_solutions(nb03, capsys, checker, solution):
    assert_accepted(capsys, nb03[checker], (nb03[solution],))


def test_03_trailing_empty_piece_is_not_blamed_on_an_empty_split_pattern(nb03, capsys):
    from notebook_cells import verdict

    _, printed = verdict(capsys, nb03["check_split_on_specials"], split_by_findall)
    assert "empty pattern splits everywhere" not in printed and "findall" in printed, printed


# The Chinese edition: each checker's hints in Chinese, the most common mistakes first.


@pytest.mark.parametrize(
    ("checker", "answer", "hint"),
    [
        ("check_pieces", ["We'll", *PIECES[2:]], "\"We'll\" 不止一个片段"),
        ("check_pieces", ["We", "'", "ll", *PIECES[2:]], "太短了：缩约形式分支"),
        ("check_pieces", [*PIECES[:3], " ", "$", *PIECES[4:]], "太短了：其他符号分支"),
        ("check_pieces", PIECES + [""], "第 9 个片段是空字符串"),
        ("check_pattern", with_numbers(r" ?\p{N}{3}"), "{3} 表示正好三个"),
        ("check_pattern", with_numbers(r"\p{N}{1,3}"), "保留数字前面那个可有可无的空格"),
        ("check_pattern", with_numbers(r" ?\d{1,3}"), r"\d 匹配不到"),
        ("check_pattern", with_numbers(r" ?\p{N}{0,3}"), "有个分支可以什么都不匹配"),
        ("check_split_on_specials", split_unescaped, "要把特殊词元转义"),
        ("check_split_on_specials", split_in_given_order, "先试最长的特殊词元"),
        ("check_split_on_specials", split_without_group, "捕获分组 (...)"),
        ("check_split_on_specials", split_even_without_specials, "没有特殊词元时返回 [text]"),
        ("check_spell_out", spell_without_the_last_run, "少了最后一段"),
        ("check_spell_out", spell_merging_gaps_of_one, "哪怕只隔开一个码位"),
        ("check_spell_out", spelling(lambda c: f"\\u{c:04d}"), "48 是 \\u0030"),
        ("check_spell_out", spelling(hex_escape), "两个连续码位写成两个转义更短"),
        ("check_spell_out", lambda codes: "".join(map(hex_escape, codes)), "写成范围更短"),
    ],
)
def test_03_checks_hint_in_chinese(nb03, capsys, checker, answer, hint):
    assert_rejected_in_chinese(capsys, nb03[checker], (answer,), hint)
