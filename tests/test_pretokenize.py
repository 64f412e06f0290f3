"""Split patterns and special tokens: the cuts that merges are never allowed to cross."""

from __future__ import annotations

from collections import Counter

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from strategies import ENDOFTEXT, any_text, special_text

from bpe_course.pretokens import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    NAMED_PATTERNS,
    O200K_PATTERN,
    compile_pattern,
    count_pretokens,
    pretokenize,
    special_token_regex,
    split_on_special_tokens,
)


@pytest.mark.parametrize(
    ("text", "gpt2", "gpt4"),
    [
        ("Hi, you!", ["Hi", ",", " you", "!"], ["Hi", ",", " you", "!"]),
        # GPT-2 knows lower-case contractions only; GPT-4 any case.
        ("WE'LL it's", ["WE", "'", "LL", " it", "'s"], ["WE", "'LL", " it", "'s"]),
        # GPT-2 keeps a digit run whole; GPT-4 cuts it into groups of three.
        ("x 1234567", ["x", " 1234567"], ["x", " ", "123", "456", "7"]),
        # The last space of a run sticks to the next word.
        ("a   b", ["a", "  ", " b"], ["a", "  ", " b"]),
        ("end  ", ["end", "  "], ["end", "  "]),
        # GPT-4 keeps punctuation with the newlines after it.
        ("a.\nb", ["a", ".", "\n", "b"], ["a", ".\n", "b"]),
        ("hello\r\nworld", ["hello", "\r", "\n", "world"], ["hello", "\r\n", "world"]),
        # GPT-4 lets a letter run take one leading symbol.
        ("$abc", ["$", "abc"], ["$abc"]),
        ("", [], []),
    ],
)
def test_pretokenize_examples(text, gpt2, gpt4):
    assert pretokenize(text, GPT2_PATTERN) == gpt2
    assert pretokenize(text, GPT4_PATTERN) == gpt4


def test_named_patterns():
    assert NAMED_PATTERNS == {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN, "o200k": O200K_PATTERN}


@given(text=any_text, pattern=st.sampled_from([GPT2_PATTERN, GPT4_PATTERN]))
def test_pretokens_cover_the_text_exactly(text, pattern):
    # No character is lost or duplicated, and no piece is empty.
    pieces = pretokenize(text, pattern)
    assert "".join(pieces) == text
    assert all(pieces)


@given(text=any_text)
def test_gpt2_pattern_splits_like_tiktokens_spelling_of_it(text):
    # tiktoken writes GPT-2's pattern with possessive quantifiers and \s++$; same cuts.
    tiktoken_ext = pytest.importorskip("tiktoken_ext.openai_public")
    assert pretokenize(text, GPT2_PATTERN) == regex.findall(tiktoken_ext.r50k_pat_str, text)


def test_compile_pattern_accepts_compiled_patterns():
    compiled = regex.compile(r"\w+")
    assert compile_pattern(compiled) is compiled
    assert pretokenize("a b", r"\w+") == ["a", "b"]


def test_special_token_regex_prefers_the_longest_token():
    finder = special_token_regex([ENDOFTEXT, ENDOFTEXT * 2])
    assert finder.findall(ENDOFTEXT * 3) == [ENDOFTEXT * 2, ENDOFTEXT]


def test_special_token_regex_escapes_metacharacters():
    finder = special_token_regex(["a.b", "[x]"])
    assert finder.findall("axb a.b [x] x") == ["a.b", "[x]"]


def test_special_token_regex_without_tokens_is_none():
    assert special_token_regex([]) is None


def test_split_on_special_tokens_puts_specials_at_odd_positions():
    parts = split_on_special_tokens(f"a{ENDOFTEXT}b{ENDOFTEXT}", [ENDOFTEXT])
    assert parts == ["a", ENDOFTEXT, "b", ENDOFTEXT, ""]
    assert split_on_special_tokens("no specials", []) == ["no specials"]


@given(text=special_text)
def test_split_on_special_tokens_round_trips(text):
    tokens = [ENDOFTEXT, ENDOFTEXT * 2, "<pad>"]
    parts = split_on_special_tokens(text, tokens)
    assert "".join(parts) == text
    assert all(part in tokens for part in parts[1::2])
    assert not any(token in part for part in parts[::2] for token in tokens)


def test_count_pretokens_drops_special_tokens():
    text = f"the cat{ENDOFTEXT} the cat{ENDOFTEXT}{ENDOFTEXT}the"
    counts = count_pretokens(text, [ENDOFTEXT])
    assert counts == Counter({"the": 2, " cat": 2, " the": 1})


def test_count_pretokens_without_special_tokens_counts_them_as_text():
    counts = count_pretokens(f"a{ENDOFTEXT}", [])
    assert counts == Counter({"a": 1, "<|": 1, "endoftext": 1, "|>": 1})
