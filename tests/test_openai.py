"""OpenAI's GPT-2, cl100k_base and o200k_base: our encoder must give exactly tiktoken's ids."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from strategies import ENDOFTEXT, assigned_char, tiktoken_text

from bpe_course.course.data import english_prose, python_source
from bpe_course.formats.ranks import merges_from_ranks
from bpe_course.openai import (
    CL100K_SPECIAL_TOKENS,
    GPT2_SPECIAL_TOKENS,
    O200K_SPECIAL_TOKENS,
    load_gpt2_files,
    load_tiktoken_file,
    openai_file,
    read_tiktoken_ranks,
    sha256_of,
    tiktoken_encoding,
)
from bpe_course.pretokens import GPT4_PATTERN, O200K_PATTERN, pretokenize

#: Strings chosen to sit on the edges of the split patterns and the merge tables.
HAND_PICKED = [
    "",
    "Hello, world!",
    "hello world",
    " ",
    "  ",
    "   leading spaces",
    "trailing spaces   ",
    "trailing newline\n",
    "a  b   c    d     e",
    "\n",
    "\n\n\n",
    " \n \n ",
    "\t\ttabs\tand\tspaces \t \t",
    "windows\r\nline\r\nends\r\n",
    "lone\rcarriage\rreturns",
    "  \n\n  \t\r\n   x",
    "word.\nword!\n\nword?\r\n",
    # contractions in every case
    "it's I'll we've they're I'd I'm can't",
    "IT'S I'LL WE'VE THEY'RE I'D I'M CAN'T",
    "It'S i'Ll We'Ve 'S 'LL 've 'Re",
    "'s 'S '''' rock'n'roll",
    # numbers
    "0 1 12 123 1234 12345 123456 1234567 12345678901234567890",
    "3.14159 1,000,000 -42 +7 1e10 0x1F 1_000",
    "٣٤٥ ೧೨೩ ½ ² Ⅻ",  # numbers that are not ASCII digits
    # emoji
    "😀😃😄 👍👍🏻👍🏼👍🏽👍🏾👍🏿",
    "👨\u200d👩\u200d👧\u200d👦 👩🏽\u200d💻 🏳️\u200d🌈",
    "🇫🇷🇯🇵🇺🇸 1️⃣ #️⃣",
    # scripts
    "中文分词没有空格。日本語のテキスト、カタカナ。한국어 텍스트",
    "مرحبا بالعالم، كيف حالك؟",
    "שלום עולם! מה שלומך?",
    "नमस्ते दुनिया। यह हिन्दी है।",
    "Привет, мир! Ελληνικά. Ünïcödé café naïve",
    "e\u0301 combining accents a\u0308\u0304",
    # control characters and odd spaces
    "nul\x00byte and \x01\x02\x03 controls \x7f\x1b[31mred\x1b[0m",
    "\x00",
    "\u00a0non-breaking\u2009thin\u3000ideographic\u200bzero-width\ufeffbom",
    "\u2028line\u2029paragraph\x0bvertical\x0cform\x85next",
    "\ufffd replacement \U0010ffff \ue000 private",
    # code
    "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; ++i) { a[i] += b[i]; }",
    '{"key": [1, 2, 3], "nested": {"a": null}}',
    "<html><body class='x'>&amp;</body></html>",
    "https://example.com/path?q=1&r=two#frag",
    "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$",
    # special tokens
    f"{ENDOFTEXT}",
    f"Hello{ENDOFTEXT}world",
    f"{ENDOFTEXT}{ENDOFTEXT} doubled",
    f" {ENDOFTEXT} spaced {ENDOFTEXT}\n",
    "<|endoftext almost <|endof|> <| |>",
    "<|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>c<|endofprompt|>",
    # long runs
    " " * 100,
    "\n" * 50,
    "a" * 300,
    "!" * 50,
    "1" * 50,
    "😀" * 20,
    # o200k_base's case-aware words: upper-case runs, then lower-case letters
    "HTTPServer iPhone XMLHttpRequest getElementById McDonald's IPHONE iOS macOS ABCdef",
    "camelCase PascalCase snake_case SCREAMING_CASE kebab-case Title Case aBcDeF",
    # contractions glued to the word in any case (o200k), and the long s that folds to s
    "don't DON'T Don'T dOn't we'LL WE'll they'Re I'M i'm x'ſ X'ſ 'ſ",
    # titlecase (Lt) and modifier (Lm) letters, which o200k counts as upper and lower case
    "ǅemal ǈubljana ǋ ǲ ᾈ ᾏ ʰello ˡ ᵃbc Aʰ ʕA Aʕb ꜰ ꟸ",
    # combining marks (M), also on upper-case letters and after digits
    "A\u0301B e\u0301x Ä\u0304 1\u0301 x\u20dd 한\u0301",
    # punctuation keeps trailing slashes and newlines (o200k), numbers in threes
    "a/b//c :// ./\n\n /// path/to/file.txt 12345/678",
    # CJK runs mixed with Latin and digits
    "GPT-4o是OpenAI的模型。東京2024年オリンピック、한국어ABC텍스트",
]

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module")
def pair(openai_pairs):
    """(ours, tiktoken's) for an encoding name."""
    return openai_pairs


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("text", HAND_PICKED)
def test_hand_picked_strings_match_tiktoken(pair, name, text):
    ours, theirs = pair[name]
    ids = ours.encode(text)
    assert ids == theirs.encode(text, allowed_special="all")
    as_text = {"allowed_special": set(), "disallowed_special": ()}
    assert ours.encode(text, **as_text) == theirs.encode(text, **as_text)
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.decode(ids) == theirs.decode(ids) == text


@pytest.mark.parametrize("name", ENCODINGS)
def test_english_prose_matches_tiktoken(pair, name):
    ours, theirs = pair[name]
    text = english_prose()
    ids = ours.encode(text)
    assert ids == theirs.encode(text, allowed_special="all")
    assert ours.decode(ids) == text


@pytest.mark.parametrize("name", ENCODINGS)
def test_python_source_matches_tiktoken(pair, name):
    # A megabyte of code, documents joined by <|endoftext|>.
    ours, theirs = pair[name]
    text = python_source(1_000_000)
    ids = ours.encode(text)
    assert ids == theirs.encode(text, allowed_special="all")
    assert ids.count(ours.special_tokens[ENDOFTEXT]) == text.count(ENDOFTEXT) > 10
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


@given(text=tiktoken_text, name=st.sampled_from(ENCODINGS))
def test_generated_text_matches_tiktoken(pair, text, name):
    ours, theirs = pair[name]
    assert ours.encode(text) == theirs.encode(text, allowed_special="all")
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


@given(text=st.text(assigned_char, max_size=60), name=st.sampled_from(ENCODINGS))
def test_random_unicode_matches_tiktoken(pair, text, name):
    ours, theirs = pair[name]
    assert ours.encode(text) == theirs.encode(text, allowed_special="all")


#: Letters that Unicode 17.0 (September 2025) added: CJK Extension J, Sidetic, Tai Yo.
UNICODE_17_LETTERS = ["\U000323b0", "\U00010940", "\U0001e6c0"]


def unicode_17_skew(tiktoken_cl100k) -> bool:
    """Whether ``regex`` calls Unicode 17 letters letters while tiktoken does not.

    cl100k_base's pattern lets one symbol lead a run of letters, so ``"/A"`` is one token
    exactly when the character before the slash is *not* taken as a symbol as well.
    """
    slash_a = tiktoken_cl100k.encode_single_token(b"/A")
    regex_says_letter = all(regex.fullmatch(r"\p{L}", c) for c in UNICODE_17_LETTERS)
    tiktoken_says_letter = all(
        slash_a in tiktoken_cl100k.encode_ordinary(f"{c}/A") for c in UNICODE_17_LETTERS
    )
    return regex_says_letter != tiktoken_says_letter


@pytest.mark.parametrize("name", ENCODINGS)
def test_letters_new_in_unicode_17_match_tiktoken(request, pair, tiktoken_cl100k, name):
    """The Unicode-version caveat (README, "Known differences"), watched for each encoding.

    Every pattern gives letters and other symbols pieces of their own, so a letter that one
    engine calls a symbol is cut differently (``X/A`` is ``X`` + ``/`` + ``A`` to one and
    ``X/`` + ``A`` to the other). Under GPT-2 these texts still get the same ids, because no
    GPT-2 merge joins the bytes on either side of those cuts; under cl100k_base and
    o200k_base, whose patterns let one symbol lead a word, they do not. Strict: once
    tiktoken learns Unicode 17 this passes, and the mark must go.
    """
    request.applymarker(
        pytest.mark.xfail(
            name != "gpt2" and unicode_17_skew(tiktoken_cl100k),
            strict=True,
            reason="environment skew, not fixable in bpe_course alone: the regex module "
            "installed knows Unicode 17.0, tiktoken's Rust regex only 16.0, so the two "
            "pretokenize letters new in 17.0 differently (about 17,000 code points)",
        )
    )
    ours, theirs = pair[name]
    for letter in UNICODE_17_LETTERS:
        text = f"{letter}/A {letter}{letter}x 1{letter}"
        assert ours.encode(text) == theirs.encode(text), (name, hex(ord(letter)))


@given(data=st.data(), name=st.sampled_from(ENCODINGS))
def test_decode_matches_tiktoken(pair, data, name):
    # Arbitrary id sequences: tokens cut characters in half, so U+FFFD shows up too.
    ours, theirs = pair[name]
    valid_ids = st.integers(0, theirs.max_token_value).filter(lambda i: i in ours.vocab)
    ids = data.draw(st.lists(valid_ids, max_size=20))
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.decode(ids) == theirs.decode(ids)


def test_vocab_sizes_and_special_ids(gpt2_tokenizer, cl100k_tokenizer, o200k_tokenizer):
    assert gpt2_tokenizer.vocab_size == 50257
    assert len(gpt2_tokenizer.merges) == 50000
    assert gpt2_tokenizer.special_tokens == GPT2_SPECIAL_TOKENS
    assert cl100k_tokenizer.special_tokens == CL100K_SPECIAL_TOKENS
    assert cl100k_tokenizer.vocab_size == 100256 + len(CL100K_SPECIAL_TOKENS)
    # o200k_base: 199,998 ranks, <|endoftext|> 199999 and <|endofprompt|> 200018.
    assert o200k_tokenizer.special_tokens == O200K_SPECIAL_TOKENS
    assert o200k_tokenizer.special_tokens == {ENDOFTEXT: 199999, "<|endofprompt|>": 200018}
    assert o200k_tokenizer.vocab_size == 199998 + 2
    assert len(o200k_tokenizer.merges) == 199998 - 256


def test_famous_ids(gpt2_tokenizer, cl100k_tokenizer, o200k_tokenizer):
    assert gpt2_tokenizer.encode("Hello world") == [15496, 995]
    assert cl100k_tokenizer.encode("hello world") == [15339, 1917]
    assert o200k_tokenizer.encode("hello world") == [24912, 2375]


def test_o200k_splits_words_where_lower_case_turns_upper(o200k_tokenizer, tiktoken_o200k):
    # A word is upper-case letters then lower-case ones, so a cut comes where lower case
    # turns upper: camel|Case, i|Phone, XMLHttp|Request, but HTTPServer stays whole.
    # A contraction in any case stays glued to its word.
    text = "HTTPServer iPhone camelCase XMLHttpRequest DON'T don'T"
    pieces = ["HTTPServer", " i", "Phone", " camel", "Case", " XMLHttp", "Request", " DON'T",
              " don'T"]
    assert pretokenize(text, O200K_PATTERN) == pieces
    assert o200k_tokenizer.encode(text) == tiktoken_o200k.encode(text)


def test_patterns_are_the_ones_tiktoken_ships(monkeypatch):
    """Read tiktoken's own pattern strings offline: its constructors would download the
    ranks, so the loader is replaced by a stub before they run."""
    from tiktoken_ext import openai_public

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    o200k = openai_public.o200k_base()
    assert o200k["pat_str"] == O200K_PATTERN
    assert o200k["special_tokens"] == O200K_SPECIAL_TOKENS
    cl100k = openai_public.cl100k_base()
    assert cl100k["pat_str"] == GPT4_PATTERN
    assert cl100k["special_tokens"] == CL100K_SPECIAL_TOKENS


# The reference texts of CS336's tokenizer tests ---------------------------------------------


@pytest.mark.parametrize("name", ["tinystories_sample.txt", "address.txt", "german.txt"])
def test_cs336_sample_texts_match_tiktoken(cs336_dir, gpt2_tokenizer, tiktoken_gpt2, name):
    text = (cs336_dir / name).read_text(encoding="utf-8")
    ids = gpt2_tokenizer.encode(text)
    assert ids == tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2_tokenizer.decode(ids) == text
    with open(cs336_dir / name, encoding="utf-8") as stream:
        assert list(gpt2_tokenizer.encode_iterable(stream)) == ids


# The files and their loaders ---------------------------------------------------------------


#: The sha256 of each file as tiktoken's own loaders expect it (tiktoken_ext.openai_public).
TIKTOKEN_SHA256 = {
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


@pytest.mark.parametrize("name", sorted(TIKTOKEN_SHA256))
def test_openai_files_are_found_and_verified(name):
    path = openai_file(name)
    assert path.is_file()
    assert sha256_of(path) == TIKTOKEN_SHA256[name]


def test_load_gpt2_files_gives_the_same_tokenizer(gpt2_tokenizer):
    loaded = load_gpt2_files(openai_file("encoder.json"), openai_file("vocab.bpe"))
    assert loaded.vocab == gpt2_tokenizer.vocab
    assert loaded.merges == gpt2_tokenizer.merges


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_merges_recovered_from_ranks_rebuild_the_ranks(pair, name):
    # Replaying the recovered merges in order must create every token at its own rank.
    ranks = read_tiktoken_ranks(openai_file(f"{name}.tiktoken"))
    merges = pair[name][0].merges
    assert len(merges) == len(ranks) - 256
    ordered = sorted((rank, token) for token, rank in ranks.items() if len(token) > 1)
    assert [a + b for a, b in merges] == [token for _, token in ordered]
    assert all(ranks[a] < ranks[a + b] and ranks[b] < ranks[a + b] for a, b in merges[:5000])


def test_merges_from_ranks_on_a_small_table():
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"ab": 256, b"abc": 257, b"bc": 258, b"abcd": 259})
    assert merges_from_ranks(ranks) == [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"abc", b"d")]


def test_load_tiktoken_file_on_a_small_file(tmp_path: Path):
    lines = [base64.b64encode(bytes([i])) + b" %d" % i for i in range(256)]
    lines += [base64.b64encode(b"ab") + b" 256", base64.b64encode(b"abc") + b" 257"]
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    tokenizer = load_tiktoken_file(path, GPT4_PATTERN, {ENDOFTEXT: 300})
    assert tokenizer.merges == [(b"a", b"b"), (b"ab", b"c")]
    assert tokenizer.encode(f"abc{ENDOFTEXT}ab") == [257, 300, 256]


def test_tiktoken_encoding_rejects_unknown_names():
    with pytest.raises(ValueError, match="p50k_base"):
        tiktoken_encoding("p50k_base")
