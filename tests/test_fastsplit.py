"""The ``re`` translation of a split pattern must find exactly the pieces ``regex`` finds.

The classes are spelled out from ``regex`` itself, so the risks are elsewhere: a construct
that means something else in ``re`` (case folding, ``$``, possessive quantifiers), a
character above U+FFFF, lone surrogates, positions. Every character of Unicode is tried here,
in the company of letters, digits, spaces, newlines and apostrophes.
"""

from __future__ import annotations

import functools
import pickle
import sys

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_course.pretokens import NAMED_PATTERNS, count_pretokens
from bpe_course.speed import fastsplit
from bpe_course.speed.cachefiles import CACHE_ENV
from bpe_course.speed.counting import count_text_pretokens
from bpe_course.speed.fastsplit import (
    Splitter,
    bmp_members,
    bmp_translation,
    fast_engine,
    holds_astral,
)

PATTERNS = sorted(NAMED_PATTERNS.items())
CONTEXT = "{c}a{c} {c}1'{c}'{c}{c}\n{c}{c}  {c}\r\nA{c}b{c}\t'S{c}"
#: Characters each pattern's classes judge: above U+FFFF, a BMP-only class cannot.
JUDGED = {"gpt2": r"[\p{L}\p{N}]", "gpt4": r"[\p{L}\p{N}]", "o200k": r"[\p{L}\p{N}\p{M}]"}


def in_context(chars) -> str:
    return "".join(CONTEXT.format(c=c) for c in chars)


@pytest.mark.parametrize(("name", "pattern"), PATTERNS)
def test_every_bmp_character_splits_alike(name, pattern):
    splitter = Splitter(pattern)
    assert splitter.fast is not None, f"{name} should run on re"
    text = in_context(map(chr, range(0x10000)))  # lone surrogates included
    assert splitter.fast.findall(text) == splitter.exact.findall(text)


@functools.cache
def astral_characters(judged: str) -> tuple[str, str]:
    """Characters above U+FFFF: (those outside ``judged``, those inside). Unassigned code
    points all behave alike, so one in 97 of them is enough; every assigned one is kept."""
    astral = "".join(map(chr, range(0x10000, sys.maxunicode + 1)))
    unassigned = "".join(regex.findall(r"\p{Cn}", astral)[::97])
    assigned = regex.sub(r"\p{Cn}", "", astral)
    return regex.sub(judged, "", assigned) + unassigned, "".join(regex.findall(judged, assigned))


@pytest.mark.parametrize(("name", "pattern"), PATTERNS)
def test_characters_above_the_bmp_split_alike_or_go_to_regex(name, pattern):
    splitter = Splitter(pattern)
    outside, judged = astral_characters(JUDGED[name])
    text = "".join(f"{c}a{c} {c}1" for c in outside)
    assert splitter.engine_for(text) is splitter.fast
    assert splitter.findall(text) == splitter.exact.findall(text)
    assert all(splitter.engine_for(f"a{c}b") is splitter.exact for c in judged)
    text = in_context(judged[::29])
    assert splitter.findall(text) == splitter.exact.findall(text)


ALPHABET = st.sampled_from(
    list("aZ1 \t\r\n'sStTlLvVeEdDmMrR/.,-_")
    + ["ſ", "K", "é", "ǅ", "ß", "中", "١", "½", "\u0301", "\u00a0", "\u2028", "\u3000", "\x85"]
    + ["😀", "𝐀", "𝟘", "\U00020000", "\ud800", "\udfff", "ʕ", "Ⅻ", "\u200d"]
)


@pytest.mark.parametrize(("name", "pattern"), PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=st.lists(ALPHABET, max_size=40).map("".join), data=st.data())
def test_findall_and_finditer_agree_with_regex_anywhere(name, pattern, text, data):
    splitter = Splitter(pattern)
    pos = data.draw(st.integers(0, len(text)))
    endpos = data.draw(st.integers(pos, len(text)))
    assert splitter.findall(text, pos, endpos) == splitter.exact.findall(text, pos, endpos)
    spans = [m.span() for m in splitter.finditer(text, pos, endpos)]
    assert spans == [m.span() for m in splitter.exact.finditer(text, pos, endpos)]


def test_an_astral_letter_outside_the_window_does_not_matter():
    splitter = Splitter(NAMED_PATTERNS["gpt2"])
    text = "𝐀bc hello world"
    assert splitter.engine_for(text, 4) is splitter.fast
    assert splitter.engine_for(text, 0) is splitter.exact
    assert splitter.findall(text, 4) == ["hello", " world"]


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b\w+\b",  # word boundaries: re and regex define them differently
        r"(?P<word>\p{L}+)",  # a named group
        r"(?i)\p{Lu}+",  # case folding a property
        r"(?i:\p{Lu}+)",
        r"[[a-z]--[aeiou]]+",  # regex's set operations
        r"\X",  # grapheme clusters
        r"[\S\d]+",  # a negated escape inside a class
        r"\N{BULLET}",
    ],
)
def test_constructs_that_might_differ_stay_on_regex(pattern):
    assert bmp_translation(pattern) is None
    assert Splitter(pattern).fast is None
    text = "Ab c1 • ÉTÉ"
    assert Splitter(pattern).findall(text) == regex.findall(pattern, text)


def test_a_pattern_compiled_with_flags_stays_on_regex():
    compiled = regex.compile(r"\p{Lu}+", regex.IGNORECASE)
    splitter = Splitter(compiled)
    assert splitter.fast is None
    assert splitter.findall("abc DEF") == ["abc", "DEF"]


def test_plain_escapes_and_classes_translate():
    spelled, used = bmp_translation(r"\d+|\w+|[\r\n]+|\.")
    assert used == ["\\d", "\\w"]
    assert spelled.endswith(r"|[\r\n]++|\.")  # possessive: nothing after it could want some back
    splitter = Splitter(r"\d+|\w+|[\r\n]+|\.")
    text = in_context(chr(code) for code in range(0, 0x10000, 7))
    assert splitter.findall(text) == splitter.exact.findall(text)


def test_members_are_ranges_of_the_bmp():
    assert bmp_members(r"\p{Nd}").startswith(r"\u0030-\u0039\u0660-\u0669")
    assert bmp_members(r"\p{Cs}") == r"\ud800-\udfff"


def test_a_translation_that_splits_differently_is_not_used(monkeypatch):
    import bpe_course.speed.fastsplit as fastsplit

    monkeypatch.setenv(CACHE_ENV, "off")  # neither read a real translation nor store this one
    fast_engine.cache_clear()
    monkeypatch.setattr(fastsplit, "bmp_translation", lambda pattern: (r"\w", []))
    try:
        assert fast_engine(r"\p{L}+") is None
    finally:
        fast_engine.cache_clear()


def test_a_splitter_survives_pickling():
    splitter = pickle.loads(pickle.dumps(Splitter(NAMED_PATTERNS["o200k"])))
    assert splitter.fast is not None
    assert splitter.findall("HTTPServer's") == ["HTTPServer's"]


def test_counting_uses_it_and_agrees_with_the_plain_count():
    text = in_context(map(chr, range(0x20, 0x3000, 3))) + "<|endoftext|>" + "𝐀𝐁 x"
    for pattern in NAMED_PATTERNS.values():
        chunked = count_text_pretokens(text, ["<|endoftext|>"], pattern)
        assert chunked == count_pretokens(text, ["<|endoftext|>"], pattern)


def test_a_pattern_whose_case_folding_differs_in_re_stays_on_regex():
    # re lets (?i:i) match the dotless ı (U+0131); regex does not. The sample text that
    # vets each translation must hold such characters, or the difference slips through.
    pattern = r"(?i:i)+|[a-z]+"
    assert bmp_translation(pattern) is not None
    assert Splitter(pattern).fast is None
    assert Splitter(pattern).findall("ıi") == regex.findall(pattern, "ıi")


@pytest.mark.parametrize("pattern", [r"\W+", r"\D+", r"[a-z]+|\W", r"\P{L}+", r"\S+"])
def test_a_negated_escape_sends_text_with_its_astral_members_to_regex(pattern):
    # \W is recorded as \w, \P{L} as \p{L}: it is the positive set whose members above
    # U+FFFF the spelled-out class cannot see.
    splitter = Splitter(pattern)
    assert splitter.fast is not None
    for text in ["a𝐀b c", "1𝟘2 x", "x\U00020000y", "😀 a", "x 𐐀y"]:
        assert splitter.findall(text) == regex.findall(pattern, text), text


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers need Python 3.11")
def test_only_a_run_that_ends_a_top_level_alternative_turns_possessive():
    spelled, _ = bmp_translation(r"(a[bc]+)|x[yz]*|[ab]+c|[ab]+?|\]+|[ab]++")
    assert spelled == r"(a[bc]+)|x[yz]*+|[ab]+c|[ab]+?|\]+|[ab]++"


@pytest.mark.parametrize(
    "text, start, end, expected",
    [
        ("", 0, sys.maxsize, False),
        ("plain ASCII", 0, sys.maxsize, False),
        ("accents é and CJK 中 stay in the BMP", 0, sys.maxsize, False),
        ("\ud83d\ude00 a lone pair of surrogates is two BMP code points", 0, sys.maxsize, False),
        ("\U0001d400", 0, sys.maxsize, True),
        ("ab\U0001d400", 2, 3, True),
        ("ab\U0001d400", 0, 2, False),
        ("ab\U0001d400cd", 3, sys.maxsize, False),
        ("ab\U0001d400cd", 5, 3, False),  # an empty window
    ],
)
def test_holds_astral(text, start, end, expected):
    assert holds_astral(text, start, end) is expected


def test_holds_astral_looks_past_its_first_block(monkeypatch):
    monkeypatch.setattr(fastsplit, "ASTRAL_CHECK_BLOCK", 4)
    text = "é" * 9 + "\U0001d400" + "é" * 3
    starts = [holds_astral(text, start) for start in range(len(text) + 1)]
    assert starts == [True] * 10 + [False] * 4
    ends = [holds_astral(text, 0, end) for end in range(len(text) + 1)]
    assert ends == [False] * 10 + [True] * 4
    splitter = Splitter(NAMED_PATTERNS["gpt2"])
    assert splitter.engine_for(text) is splitter.exact
    assert splitter.engine_for(text, 10) is splitter.fast


#: Where o200k's letter alternatives turn on the order they try things: a mark (a letter of
#: both case classes) or a non-letter before capitals, mixed cases, title case, CJK; and
#: every character after a word's apostrophe (a contraction in any case: ſ folds to s) and
#: among spaces and line breaks.
O200K_CONTEXTS = ["{c}AB {c}Ab{c}ab {c}", "{c}{c}A{c}\u0301AB {c}ǅ{c}",
                  "'{c}AB'S {c}中A {c}\u0301{c}A\u0301a ", "ab'{c}{c}AB'{c}l 中'{c}e ",
                  "{c} \n {c}\t\r\n  \n{c}  \n\u3000{c}\n{c}\n\n"]


def wrong_o200k_spelling() -> str:
    """o200k's faster spelling with the plausible slip it avoids: a prefix that keeps a mark."""
    spelled = fastsplit.FASTER_SPELLING[NAMED_PATTERNS["o200k"]]
    assert spelled.startswith(r"[^\r\n\p{L}\p{N}\p{M}]?+")
    return spelled.replace(r"\p{M}]?+", "]?+", 1)


@pytest.mark.parametrize("context", O200K_CONTEXTS)
def test_o200k_faster_spelling_finds_the_same_pieces(context):
    pattern = NAMED_PATTERNS["o200k"]
    text = "".join(context.format(c=chr(code)) for code in range(0x10000))
    expected = regex.findall(pattern, text)
    assert regex.findall(fastsplit.FASTER_SPELLING[pattern], text) == expected
    assert Splitter(pattern).fast.findall(text) == expected


def test_the_o200k_contexts_can_tell_a_wrong_spelling():
    # A prefix that keeps a mark splits "\u0301AB " differently.
    text = "".join(O200K_CONTEXTS[0].format(c=chr(code)) for code in range(0x10000))
    expected = regex.findall(NAMED_PATTERNS["o200k"], text)
    assert regex.findall(wrong_o200k_spelling(), text) != expected


def test_the_sample_check_refuses_a_wrong_faster_spelling(monkeypatch):
    pattern = NAMED_PATTERNS["o200k"]
    monkeypatch.setitem(fastsplit.FASTER_SPELLING, pattern, wrong_o200k_spelling())
    assert fastsplit.checked_translation(pattern) == bmp_translation(pattern)  # the plain one


def test_the_sample_check_refuses_a_space_list_missing_a_space(monkeypatch):
    # U+3000 has no case and 12288 is no multiple of 97: the sample holds it as a space.
    pattern = NAMED_PATTERNS["o200k"]
    spelled = fastsplit.FASTER_SPELLING[pattern]
    monkeypatch.setitem(fastsplit.FASTER_SPELLING, pattern, spelled.replace("\u3000", "", 1))
    assert fastsplit.checked_translation(pattern) == bmp_translation(pattern)  # the plain one
