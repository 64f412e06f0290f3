"""Safe cuts: each rule never changes the pieces of the named split patterns and the open
models' (Llama 3, Qwen), and the spans and stream ends cut at them cover the text exactly.

The rules are the proofs of :mod:`bpe_course.speed.cuts` put to the test: a cut at any place a
rule allows must give the same pretokens, in order, as no cut. Where the cuts are used: a
corpus file in chunks (``test_counting.py``), ``encode`` a span at a time and
``encode_iterable`` up to the last safe cut (``test_tokenizer.py``).
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import find, given, settings
from hypothesis import strategies as st
from strategies import cut_text

from bpe_course.models import LLAMA3_PATTERN, QWEN3_6_PATTERN, QWEN_PATTERN
from bpe_course.pretokens import GPT2_PATTERN, NAMED_PATTERNS
from bpe_course.speed.cuts import (
    LETTER_CUT,
    CutRule,
    cut_rules_of,
    cut_rules_regex,
    last_safe_cut,
    safe_cut_regex,
    span_splitter,
    spans_between_safe_cuts,
)

#: The package's patterns with proven rules: the three named ones and the open models'.
PATTERNS = NAMED_PATTERNS | {
    "llama3": LLAMA3_PATTERN, "qwen2.5": QWEN_PATTERN, "qwen3.6": QWEN3_6_PATTERN,
}


def named_rules() -> list[tuple[str, CutRule]]:
    return [(name, rule) for name, pattern in PATTERNS.items() for rule in cut_rules_of(pattern)]


def unsafe_cuts(text: str, pattern: str, rule: CutRule) -> list[int]:
    """The places ``rule`` cuts ``text`` where the two sides pretokenize differently from the
    whole. Comparing the pieces, in order, is stricter than comparing their counts."""
    compiled = regex.compile(pattern)
    whole = compiled.findall(text)
    return [
        match.start()
        for match in cut_rules_regex([rule]).finditer(text)
        if compiled.findall(text[: match.start()]) + compiled.findall(text[match.start() :])
        != whole
    ]


# The rules, one at a time ------------------------------------------------------------------


@pytest.mark.parametrize(("name", "rule"), named_rules(), ids=lambda x: getattr(x, "name", x))
@given(text=cut_text)
def test_a_rule_never_changes_the_pieces(name, rule, text):
    assert unsafe_cuts(text, PATTERNS[name], rule) == []


#: Every rule cuts this text somewhere, so the test above is never vacuous.
EVERY_CLASS = "ab 12,x.3\u0301 é\r\n-\n\tz'1' 'q /a\u00a05"


@pytest.mark.parametrize(("name", "rule"), named_rules(), ids=lambda x: getattr(x, "name", x))
def test_every_rule_finds_cuts_in_ordinary_text(name, rule):
    assert cut_rules_regex([rule]).search(EVERY_CLASS)
    assert unsafe_cuts(EVERY_CLASS, PATTERNS[name], rule) == []


#: Rules that look safe and are not: the test above must catch each.
TEMPTING_RULES = [
    ("gpt2", CutRule("after a newline", r"\n", r"\S")),  # "a\n\nb" has "\n", "\n"; "a\n\n" "\n\n"
    ("gpt2", CutRule("whitespace | visible", r"\s", r"\S")),  # " b" is one piece
    ("gpt2", CutRule("' | letter", r"'", r"\p{L}")),  # "'s"
    ("gpt4", CutRule("symbol | line break", r"[^\s\p{L}\p{N}]", r"[\r\n]")),  # ".\r\n"
    ("gpt4", CutRule("space | letter", r"[^\S\r\n]", r"\p{L}")),  # "\tword", "\u2028word"
    ("gpt4", CutRule("digit | digit", r"\p{N}", r"\p{N}")),  # digits in threes
    ("gpt4", CutRule("any line break | visible", r"[\r\n\x85\u2028]", r"\S")),  # "\x85word"
    ("o200k", CutRule("line break | visible", r"[\r\n]", r"\S")),  # "-\n/"
    ("o200k", CutRule("letter | '", r"\p{L}", r"'")),  # "don't"
    ("o200k", CutRule("mark | symbol", r"\p{M}", r"[^\s\p{L}\p{N}]")),
    ("o200k", CutRule("lower | upper", r"\p{Ll}", r"\p{Lu}")),  # "'rE" is a contraction
    ("qwen3.6", LETTER_CUT),  # "e\u0301": a mark stays with its letter
    ("llama3", CutRule("line break | space", r"\n", r" ")),  # "\n \n" is one piece
]


@pytest.mark.parametrize(("name", "rule"), TEMPTING_RULES, ids=lambda x: getattr(x, "name", x))
def test_the_rule_test_catches_tempting_wrong_rules(name, rule):
    counterexample = find(
        cut_text,
        lambda text: unsafe_cuts(text, PATTERNS[name], rule) != [],
        settings=settings(max_examples=20_000, database=None),
    )
    assert unsafe_cuts(counterexample, PATTERNS[name], rule)


def test_an_unknown_pattern_has_no_rules():
    assert safe_cut_regex(r"\S+|\s+") is None and cut_rules_of(r"\S+|\s+") == ()
    assert all(cut_rules_of(pattern) for pattern in PATTERNS.values())


# Spans and stream ends cut at the rules -----------------------------------------------------


@pytest.mark.parametrize("name", PATTERNS)
@given(text=cut_text, span=st.integers(1, 40), reach=st.none() | st.integers(0, 20))
def test_spans_cover_the_text_in_order_and_cut_only_at_safe_places(name, text, span, reach):
    rule = safe_cut_regex(PATTERNS[name])
    spans = list(spans_between_safe_cuts(text, rule, span, reach))
    starts, ends = [start for start, _ in spans], [end for _, end in spans]
    assert starts == [0, *ends[:-1]] and ends[-1] == len(text)
    for start, end in spans[:-1]:
        assert end - start >= span  # a cut comes at least a span after the one before
        assert rule.match(text, end)  # and only where a rule allows it
    pieces = [p for start, end in spans for p in regex.findall(PATTERNS[name], text[start:end])]
    assert pieces == regex.findall(PATTERNS[name], text)


def test_without_a_rule_or_a_cut_in_reach_the_rest_is_one_span():
    text = "word " * 10 + "x" * 100 + " end"
    assert list(spans_between_safe_cuts(text, None, 5)) == [(0, len(text))]
    rule = safe_cut_regex(GPT2_PATTERN)
    spans = list(spans_between_safe_cuts(text, rule, 5, reach=10))
    assert spans[-1] == (spans[-1][0], len(text))
    assert "x" * 100 in text[spans[-1][0] :]  # the run of x has no cut within reach
    assert len(list(spans_between_safe_cuts(text, rule, 5))) > len(spans)  # unbounded: found


@pytest.mark.parametrize("name", PATTERNS)
@given(text=cut_text, reach=st.integers(0, 50))
def test_the_last_safe_cut_is_the_last_place_a_rule_allows_within_reach(name, text, reach):
    rule = safe_cut_regex(PATTERNS[name])
    cut = last_safe_cut(text, rule, reach)
    allowed = [m.start() for m in rule.finditer(text) if m.start() >= len(text) - reach]
    assert cut == (allowed[-1] if allowed else 0)
    pieces = regex.compile(PATTERNS[name]).findall
    assert pieces(text[:cut]) + pieces(text[cut:]) == pieces(text)


# Characters above U+FFFF: only their neighbourhood goes to regex -----------------------------


class CountingPattern:
    """A compiled pattern that counts the characters its ``findall`` is asked to scan."""

    def __init__(self, pattern: regex.Pattern[str]) -> None:
        self.pattern = pattern
        self.scanned = 0

    def findall(self, text: str, pos: int = 0, endpos: int = 1 << 62) -> list[str]:
        self.scanned += min(endpos, len(text)) - pos
        return self.pattern.findall(text, pos, endpos)


ASTRAL_CASES = [
    ("prose", "𝐀"),  # a mathematical letter: in \p{L}, which the fast classes spell BMP only
    ("prose", "𝟏𝟐"),  # mathematical digits: \p{N}
    ("prose", "x𝐀𝐁y"),  # glued to letters on both sides
    ("code", " 𝐀 "),
]


@pytest.mark.parametrize("pattern", list(PATTERNS.values()), ids=list(PATTERNS))
@pytest.mark.parametrize(("kind", "astral"), ASTRAL_CASES)
def test_scattered_astral_letters_keep_the_rest_on_the_fast_engine(pattern, kind, astral):
    from bpe_course.course.data import english_prose, python_source
    from bpe_course.speed.fastsplit import Splitter

    source = english_prose(60_000) if kind == "prose" else python_source(60_000)
    text = astral.join(source[i : i + 3000] for i in range(0, len(source), 3000))
    splitter = Splitter(pattern)
    counting = splitter.exact = CountingPattern(splitter.exact)
    split = span_splitter(splitter, safe_cut_regex(pattern))
    assert split(text, 0, len(text)) == regex.findall(pattern, text)
    assert 0 < counting.scanned < len(text) / 20  # a few words around each, not the spans


@settings(deadline=None, max_examples=200)
@given(
    text=st.text(st.sampled_from("ab 1\n'.,\U0001d400\U0001d7cf😀é中"), max_size=60),
    start=st.integers(0, 60),
    end=st.integers(0, 60),
)
def test_splitting_around_astral_runs_gives_the_pieces_of_one_go(text, start, end):
    from bpe_course.speed.fastsplit import Splitter

    for pattern in PATTERNS.values():
        splitter = Splitter(pattern)
        split = span_splitter(splitter, safe_cut_regex(pattern))
        end = min(end, len(text))
        start = min(start, end)
        assert split(text, start, end) == regex.findall(pattern, text[start:end])


def test_tokenizers_encode_text_with_scattered_astral_letters_exactly(
    gpt2_tokenizer, o200k_tokenizer, tiktoken_o200k
):
    from bpe_course.course.data import python_source

    text = "\U0001d400".join(python_source(40_000)[i : i + 999] for i in range(0, 40_000, 999))
    assert gpt2_tokenizer.encode(text) == gpt2_tokenizer.encode_naive(text)
    assert o200k_tokenizer.encode(text) == tiktoken_o200k.encode(text, allowed_special="all")
