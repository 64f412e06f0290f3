"""Hypothesis strategies shared by the property tests: text that tokenizers find hard.

Uniformly random unicode almost never contains the things that break tokenizers: a run of
spaces before a word, punctuation right before a newline, ``'S`` in capitals, a digit run
longer than three, an emoji joined with ZWJ, a special token cut in half. So most text here
is glued together from such fragments, mixed with arbitrary characters.
"""

from __future__ import annotations

from hypothesis import strategies as st

from bpe_course.base import ENDOFTEXT

# fmt: off
#: Pieces that sit on the edges of GPT-2's and GPT-4's split patterns.
FRAGMENTS = [
    # whitespace: runs, newlines, tabs, Windows line ends, unusual spaces
    " ", "  ", "    ", "\n", "\n\n", "\r\n", "\r", "\t", " \n", "\n ", " \t\n",
    "\u00a0", "\u3000", "\u2028", "\x0b", "\x0c", "\x85",
    # letters and words, with and without a leading space
    "a", "b", "ab", "the", " the", "The", " THE", "x", "hello", " world",
    # contractions in every case, and lone apostrophes
    "'s", "'S", "'t", "'ll", "'LL", "'ve", "'Ve", "'re", "'d", "'M", "'", "''",
    # numbers of many lengths
    "0", "7", "42", "123", "1234", "12345", "3.14", "1,000",
    # punctuation, also right before a newline
    ".", ",", "!", "?!", "...", "-", "(", ")", '"', "#", "$", "@", ".\n", "!\n\n", ":\r\n",
    # other scripts and combining marks
    "é", "e\u0301", "ß", "中", "文字", "日本語", "한국어", "ا", "مرحبا", "ש", "שלום",
    "क", "नमस्ते", "Ж",
    # emoji: plain, skin tone, ZWJ family, flag, keycap
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "1\ufe0f\u20e3",
    # control characters, NUL, zero-width space, replacement character
    "\x00", "\x01", "\x1f", "\x7f", "\u200b", "\ufffd",
]

#: Pieces of special tokens: whole, doubled, cut in half, and near misses.
SPECIAL_FRAGMENTS = [
    ENDOFTEXT, ENDOFTEXT + ENDOFTEXT, "<|", "|>", "<|endof", "text|>", "<|endoftext", "<pad>",
    "<pa", "<|fim_prefix|>", "<|fim_middle|>", "<|endofprompt|>", "<|endofprompt",
]
# fmt: on

fragment = st.sampled_from(FRAGMENTS)

#: Any character UTF-8 can carry (every code point but the surrogates).
any_char = st.characters(codec="utf-8")

#: Characters that Python's Unicode database (14.0 in Python 3.11) knows as assigned.
#: The ``regex`` module in use knows Unicode 17.0 and tiktoken's Rust regex 16.0, so the
#: two disagree on whether a letter new in 17.0 is a letter; comparisons with tiktoken use
#: these characters, and test_openai.py checks the disagreement on its own.
assigned_char = st.characters(codec="utf-8", exclude_categories=["Cn"])


def nasty(chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Short text glued from fragments, with an occasional character from ``chars``."""
    return st.lists(fragment | st.text(chars, max_size=2), max_size=30).map("".join)


def with_specials(chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Like :func:`nasty`, plus special tokens (whole or broken) and long whitespace runs."""
    return st.lists(
        fragment
        | st.sampled_from(SPECIAL_FRAGMENTS)
        | st.integers(5, 70).map(lambda n: " " * n)
        | st.integers(2, 20).map(lambda n: "\n" * n)
        | st.text(chars, max_size=2),
        max_size=40,
    ).map("".join)


nasty_text = nasty(any_char)
special_text = with_specials(any_char)

#: Anything tokenizers could be asked to encode: fragments or plain random unicode.
any_text = nasty_text | st.text(any_char, max_size=40)

#: The same kinds of text, with characters tiktoken's Unicode tables know.
tiktoken_text = nasty(assigned_char) | with_specials(assigned_char) | st.text(assigned_char)


#: Surrogates as a Python string can hold them (JSON escapes and ``surrogateescape`` make
#: them): lone, paired, and in the wrong order. UTF-8 cannot carry one, so a tokenizer must
#: say what it encodes instead; tiktoken joins pairs, then reads a lone one as U+FFFD.
SURROGATE_FRAGMENTS = ["\ud83d", "\ude00", "\ud83d\ude00", "\udc80", "\udbff\udfff", "\ude00\ud83d"]

surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)

#: Control and format characters, line and paragraph separators.
control = st.characters(categories=["Cc", "Cf", "Zl", "Zp"])

#: Hard fragments and special tokens mixed with surrogates and control characters.
raw_text = st.lists(
    fragment
    | st.sampled_from(SPECIAL_FRAGMENTS + SURROGATE_FRAGMENTS)
    | surrogate
    | control
    | st.text(assigned_char, max_size=2),
    max_size=30,
).map("".join)


# fmt: off
#: Text that sits on the edges of the cut rules: every class of character the rules name, on
#: both sides of every kind of line break and whitespace run.
CUT_FRAGMENTS = [
    # whitespace: runs, every line break, Unicode spaces the regex module counts as \s, and
    # U+001C-U+001F, which str.isspace() counts but \s does not
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r\n\r\n", "\r", "\r\r\n", " \n", "\n ",
    " \r\n ", "\t\n", "\u00a0", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\u3000", "\u1680",
    "\u202f", "\x1c", "\x1f",
    # letters of every category: Ll, Lu, Lt, Lm, Lo, and ones that case-fold to s and k
    "a", "Z", "ab", "AB", "Ab", "aB", "é", "ß", "ǅ", "ʰ", "中", "Ж", "ж", "ſ", "\u212a",
    # combining marks (Mn, Mc, Me), alone and on a letter
    "\u0301", "e\u0301", "\u0903", "\u20dd",
    # numbers: digit runs of every length, and No, Nl and non-ASCII digits
    "1", "12", "123", "1234", "½", "٣", "Ⅻ", "²",
    # apostrophes and contractions in every case, and a look-alike
    "'", "'s", "'S", "'t", "'ll", "'LL", "'lL", "'ve", "'Re", "'rE", "'d", "'M", "\u2019", "n't",
    # punctuation, slashes and line breaks together (GPT-4 and o200k glue these)
    ".", "-", "!", "/", "//", "-\n/", ".\r\n", "\n/", "/\n", "#", "\ufffd", "😀", "\x00",
    "\u200b", "\x7f",
]
# fmt: on

#: Whole, doubled, half and overlapping special tokens, for the cuts a file gets.
CUT_SPECIAL_FRAGMENTS = [ENDOFTEXT, ENDOFTEXT * 2, "<|", "|>", "<|endof", "text|>", "<s>", "<s"]

#: Text made of :data:`CUT_FRAGMENTS`, and the same with pieces of special tokens in it.
cut_text = st.lists(st.sampled_from(CUT_FRAGMENTS), max_size=30).map("".join)
cut_text_with_specials = st.lists(
    st.sampled_from(CUT_FRAGMENTS + CUT_SPECIAL_FRAGMENTS), max_size=40
).map("".join)


def word_counts(alphabet: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, int]]:
    """Pretoken counts over ``alphabet`` (a small one makes many pairs tie)."""
    return st.dictionaries(
        st.text(alphabet=alphabet, min_size=1, max_size=12), st.integers(1, 9), max_size=12
    )



#: Words made of a short unit repeated (``abab...``, ``aaaa...``, ``ab ab ...``) plus a tail:
#: merges that touch, overlap and chain inside one word.
repetitive_word = st.builds(
    lambda unit, times, tail: unit * times + tail,
    st.text(st.sampled_from("ab "), min_size=1, max_size=3),
    st.integers(1, 80),
    st.text(st.sampled_from("abc"), max_size=3),
)

#: Counts of 1 (every pair ties with many others), small counts, and huge ones.
word_count = st.just(1) | st.integers(1, 4) | st.integers(2**62, 2**70)

#: The special tokens a generated corpus is split on: none, one, two, and one inside another.
SPECIAL_SETS = [[], [ENDOFTEXT], [ENDOFTEXT, "<pad>"], [ENDOFTEXT, ENDOFTEXT * 2]]


@st.composite
def corpora(draw) -> tuple[list[str], str]:
    """(special tokens, corpus text): documents with special tokens (or newlines) between."""
    special_tokens = draw(st.sampled_from(SPECIAL_SETS))
    documents = draw(st.lists(nasty_text, max_size=6))
    if special_tokens:
        separator = st.lists(st.sampled_from(special_tokens), max_size=2).map("".join)
    else:
        separator = st.sampled_from(["", "\n", "a\nb", ".\nx", " \n "])
    text = draw(separator)
    for document in documents:
        text += document + draw(separator)
    return special_tokens, text


@st.composite
def split_points(draw, text: str) -> list[str]:
    """``text`` cut into consecutive chunks at arbitrary places (empty chunks allowed)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in zip(bounds, bounds[1:])]
