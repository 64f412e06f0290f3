"""Exports to Hugging Face ``tokenizers`` and ``tiktoken`` give exactly our ids."""

from __future__ import annotations

import itertools
import json
import unicodedata

import pytest
import regex
import tiktoken
from hypothesis import given, settings
from strategies import special_text
from tiktoken.load import load_tiktoken_bpe
from tokenizers import Regex, decoders, models, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer

from bpe_course import GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN, Tokenizer, pretokenize
from bpe_course.course.data import english_prose, python_source
from bpe_course.formats.export import (
    GPT4_ONIG_PATTERN,
    O200K_ONIG_PATTERN,
    check_exportable,
    hf_json,
    onig_pattern,
)
from bpe_course.openai import load_tiktoken_file
from bpe_course.pretokens import count_pretokens
from bpe_course.train import train_from_counts
from bpe_course.utf8 import byte_vocab

#: The split patterns the exports are tested with, by the names the command line uses.
PATTERNS = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN, "o200k": O200K_PATTERN}

SPECIALS = ["<|endoftext|>", "<|endoftext|><|endoftext|>", "<|user turn|>"]

VARIED = [
    "",
    "Hello, world!",
    "   leading spaces and trailing   ",
    "tabs\tand\t\tmore\n\n\n  newlines \r\n\r\nwindows\r\n",
    "I'm, you're, he's, THEY'LL, we'VE, it'd, I'M",
    "numbers 1 12 123 1234 12345 3.14159 1,000,000 ٣٤٥٦ ½",
    "emoji 😀👍🏽 👨\u200d👩\u200d👧 🇫🇷 1\ufe0f\u20e3",
    "中文字符和日本語のテキスト、한국어 텍스트",
    "Ünïcödé naïve café ß ſ Ǆ e\u0301",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\n",
    "if (a < b && c > d) { x = y; } // <tag attr='v'>",
    "<|endoftext|>starts<|endoftext|><|endoftext|>and<|user turn|>ends<|endoftext|>",
    "<|endoftext broken <| |> <|endoftext|",
    "\x00\x01\x1f\x7f \u200b\ufffd \u00a0\u3000\u2028",
]


#: Text on the edges of o200k_base's case-aware classes.
O200K_VARIED = [
    "HTTPServer iPhone XMLHttpRequest camelCase IPHONE iOS DON'T don'T we'LL x'ſ",
    "ǅemal ǈubljana ᾈ ʰello ˡ ᵃbc Aʰ ʕA ʕAa Aʕb A\u0301B e\u0301x 1\u0301 한\u0301",
    "a/b//c :// ./\n\n /// path/to/file.txt GPT-4o是OpenAI的模型",
]


def assigned_only(text: str) -> str:
    """Drop code points this Python's Unicode tables do not assign (see test_classes_agree)."""
    return "".join(char for char in text if unicodedata.category(char) != "Cn")


hard_text = special_text.map(assigned_only)


def train(pattern: str) -> Tokenizer:
    text = english_prose(150_000) + "<|endoftext|>" + python_source(60_000)
    counts = count_pretokens(text, SPECIALS, pattern)
    vocab, merges = train_from_counts(counts, 256 + len(SPECIALS) + 800, SPECIALS)
    return Tokenizer(vocab, merges, SPECIALS, pattern)


@pytest.fixture(scope="module", params=list(PATTERNS))
def trained(request) -> Tokenizer:
    return train(PATTERNS[request.param])


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    return [english_prose(), python_source(300_000)]


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory):
    """The trained tokenizer saved to disk and loaded back by HF and by tiktoken."""
    folder = tmp_path_factory.mktemp("export")
    trained.save_hf(folder / "tokenizer.json")
    hf = HFTokenizer.from_file(str(folder / "tokenizer.json"))
    encoding = tiktoken.Encoding(**trained.to_tiktoken_params("trained"))
    return trained, hf, encoding


def check_same_ids(ours: Tokenizer, hf, encoding, text: str) -> None:
    ids = ours.encode(text)
    assert hf.encode(text).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == text
    if encoding is not None:
        assert encoding.encode(text, allowed_special="all") == ids
        assert encoding.decode(ids) == text


# The regex ---------------------------------------------------------------------------------


def hf_split(pattern: str, text: str) -> list[str]:
    splitter = pre_tokenizers.Split(Regex(onig_pattern(pattern)), behavior="isolated")
    return [piece for piece, _ in splitter.pre_tokenize_str(text)]


def test_gpt4_pattern_needs_the_onig_spelling():
    # Oniguruma reads {1,3}+ as "{1,3}, repeated": numbers would not be cut in threes.
    raw = pre_tokenizers.Split(Regex(GPT4_PATTERN), behavior="isolated")
    assert [piece for piece, _ in raw.pre_tokenize_str("12345678")] == ["12345678"]
    assert hf_split(GPT4_PATTERN, "12345678") == ["123", "456", "78"]
    assert onig_pattern(GPT2_PATTERN) == GPT2_PATTERN
    assert GPT4_ONIG_PATTERN != GPT4_PATTERN
    with pytest.raises(ValueError, match="possessive counted repeat"):
        onig_pattern(r"\d{1,3}+|\p{L}+")


def test_classes_agree_on_every_code_point():
    """``\\p{L}``, ``\\p{N}`` and ``\\s`` mean the same in both engines, code point by code point.

    Planes 0-3 and 14 hold every assigned character. The only disagreements are characters
    newer than Oniguruma's Unicode tables, which this Python does not assign either; the
    property tests leave those out.
    """
    code_points = [c for c in range(0x40000) if not 0xD800 <= c < 0xE000]
    text = "".join(map(chr, code_points + list(range(0xE0000, 0xF0000))))
    disagree: set[str] = set()
    for cls in (r"\p{L}+", r"\p{N}+", r"\s+"):
        kept = pre_tokenizers.Split(Regex(cls), behavior="removed").pre_tokenize_str(text)
        disagree |= set().union(*(piece for piece, _ in kept)) ^ set(regex.sub(cls, "", text))
    assert len(disagree) < 20_000
    if tuple(map(int, unicodedata.unidata_version.split("."))) < (17,):
        assert all(unicodedata.category(char) == "Cn" for char in disagree)


#: o200k_base's two letter classes, each as ``regex`` reads it and as spelled for Oniguruma.
O200K_CLASSES = [
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}\u0295]"),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
]


def test_o200k_classes_agree_on_every_code_point():
    """o200k_base's upper- and lower-case classes hold the same code points in both engines,
    as spelled in :data:`O200K_ONIG_PATTERN`, except characters Oniguruma does not know yet."""
    code_points = [c for c in range(0x40000) if not 0xD800 <= c < 0xE000]
    text = "".join(map(chr, code_points + list(range(0xE0000, 0xF0000))))
    for ours, theirs in O200K_CLASSES:
        assert ours in O200K_PATTERN and theirs in O200K_ONIG_PATTERN
        kept = pre_tokenizers.Split(Regex(theirs + "+"), behavior="removed").pre_tokenize_str(text)
        outside_onig = set().union(*(piece for piece, _ in kept))
        disagree = outside_onig ^ set(regex.sub(ours + "+", "", text))
        assert len(disagree) < 20_000
        if tuple(map(int, unicodedata.unidata_version.split("."))) < (17,):
            assert all(unicodedata.category(char) == "Cn" for char in disagree), ours


def test_o200k_pattern_names_the_letter_whose_category_changed():
    # U+0295 became Lo (upper and lower case to o200k) after Oniguruma's tables were made:
    # with the pattern as tiktoken ships it, HF would cut "ʕAa" where regex and tiktoken do not.
    raw = pre_tokenizers.Split(Regex(O200K_PATTERN), behavior="isolated")
    assert [piece for piece, _ in raw.pre_tokenize_str("ʕAa")] == ["ʕ", "Aa"]
    assert pretokenize("ʕAa", O200K_PATTERN) == hf_split(O200K_PATTERN, "ʕAa") == ["ʕAa"]
    spelled = pre_tokenizers.Split(Regex(onig_pattern(O200K_PATTERN)), behavior="isolated")
    letters = ["ʕ", "A", "a", "'", "s", " ", "1", ".", "\u0301"]
    for size in (1, 2, 3, 4):
        for text in map("".join, itertools.product(letters, repeat=size)):
            pieces = [piece for piece, _ in spelled.pre_tokenize_str(text)]
            assert pieces == pretokenize(text, O200K_PATTERN), text


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=PATTERNS.keys())
def test_splits_agree_on_varied_and_real_text(pattern, real_texts):
    for text in VARIED + O200K_VARIED + real_texts:
        assert hf_split(pattern, text) == pretokenize(text, pattern)


@given(text=hard_text)
def test_splits_agree_on_generated_text(text):
    for pattern in PATTERNS.values():
        assert hf_split(pattern, text) == pretokenize(text, pattern)


# Hugging Face and tiktoken round trips ------------------------------------------------------


def test_trained_round_trips(exported, real_texts):
    ours, hf, encoding = exported
    for text in VARIED + O200K_VARIED + real_texts:
        check_same_ids(ours, hf, encoding, text)


@given(text=hard_text)
def test_trained_round_trips_generated(exported, text):
    check_same_ids(*exported, text)


def test_partial_characters_decode_like_ours(exported):
    ours, hf, encoding = exported
    ids = ours.encode("😀中文 naïve 👍🏽")
    for end in range(len(ids) + 1):
        assert hf.decode(ids[:end]) == ours.decode(ids[:end])
        assert encoding.decode(ids[:end]) == ours.decode(ids[:end])


def test_special_tokens_are_added_special_tokens(exported):
    ours, hf, _ = exported
    document = json.loads(hf.to_str())
    added = {token["content"]: token["id"] for token in document["added_tokens"]}
    assert added == ours.special_tokens
    assert all(token["special"] and not token["normalized"] for token in document["added_tokens"])
    # Off: a piece spelled like a token still goes through the merges, as in our encoder.
    assert document["model"]["ignore_merges"] is False


def test_json_matches_what_the_library_builds(trained):
    """Our hand-written document has the same shape as one built with the tokenizers API."""
    ours = hf_json(trained)
    model = models.BPE(vocab={"a": 0}, merges=[], ignore_merges=False)
    built = HFTokenizer(model)
    built.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex("a"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    built.decoder = decoders.ByteLevel()
    reference = json.loads(built.to_str())

    def shape(node):
        if isinstance(node, dict):
            return {key: shape(value) for key, value in node.items() if key not in ("vocab",)}
        if isinstance(node, list):
            return [shape(node[0])] if node else []
        return type(node).__name__

    for key in ("pre_tokenizer", "model"):
        assert set(ours[key]) == set(reference[key])
    assert shape(ours["pre_tokenizer"]) == shape(reference["pre_tokenizer"])
    assert set(ours) == set(reference)


def test_tiktoken_file_round_trip(trained, tmp_path):
    path = tmp_path / "trained.tiktoken"
    trained.save_tiktoken(path)
    ranks = load_tiktoken_bpe(str(path))
    assert ranks == trained.to_tiktoken_params("x")["mergeable_ranks"]
    assert all(rank == trained._ids_of[token] for token, rank in ranks.items())
    again = load_tiktoken_file(path, trained.pattern, trained.special_tokens)
    assert again.vocab == trained.vocab
    assert again.merges == trained.merges
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


# OpenAI's tokenizers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_hf(gpt2_tokenizer):
    return gpt2_tokenizer.to_hf()


def test_gpt2_export_equals_tiktoken(gpt2_tokenizer, gpt2_hf, tiktoken_gpt2, real_texts):
    for text in VARIED + real_texts:
        expected = tiktoken_gpt2.encode(text, allowed_special="all")
        assert gpt2_hf.encode(text).ids == expected
        assert gpt2_tokenizer.encode(text) == expected
        assert gpt2_hf.decode(expected, skip_special_tokens=False) == text


@given(text=hard_text)
def test_gpt2_export_equals_tiktoken_generated(gpt2_hf, tiktoken_gpt2, text):
    assert gpt2_hf.encode(text).ids == tiktoken_gpt2.encode(text, allowed_special="all")


def test_gpt2_tiktoken_params_equal_tiktoken(gpt2_tokenizer, tiktoken_gpt2):
    params = gpt2_tokenizer.to_tiktoken_params("gpt2-again")
    assert params["mergeable_ranks"] == tiktoken_gpt2._mergeable_ranks
    assert params["special_tokens"] == {"<|endoftext|>": 50256}


def test_cl100k_export_equals_tiktoken(cl100k_tokenizer, tiktoken_cl100k):
    hf = cl100k_tokenizer.to_hf()
    for text in [*VARIED, english_prose(100_000), python_source(100_000)]:
        assert hf.encode(text).ids == tiktoken_cl100k.encode(text, allowed_special="all")


@pytest.fixture(scope="module")
def o200k_hf(o200k_tokenizer, tmp_path_factory):
    """o200k_base written by ``save_hf`` (200,000 tokens: seconds) and read back by HF."""
    path = tmp_path_factory.mktemp("o200k") / "tokenizer.json"
    o200k_tokenizer.save_hf(path)
    return HFTokenizer.from_file(str(path))


def test_o200k_export_equals_tiktoken(o200k_tokenizer, o200k_hf, tiktoken_o200k):
    # A sample of real text; the generated test below covers the edges.
    for text in [*VARIED, *O200K_VARIED, english_prose(60_000), python_source(60_000)]:
        expected = tiktoken_o200k.encode(text, allowed_special="all")
        assert o200k_hf.encode(text).ids == o200k_tokenizer.encode(text) == expected
        assert o200k_hf.decode(expected, skip_special_tokens=False) == text


@settings(max_examples=20)
@given(text=hard_text)
def test_o200k_export_equals_tiktoken_generated(o200k_hf, tiktoken_o200k, text):
    assert o200k_hf.encode(text).ids == tiktoken_o200k.encode(text, allowed_special="all")


# Refusals -----------------------------------------------------------------------------------


def hand_made(merges: list[tuple[bytes, bytes]], ids: list[int]) -> Tokenizer:
    vocab = byte_vocab()
    for (left, right), token_id in zip(merges, ids):
        vocab[token_id] = left + right
    return Tokenizer(vocab, merges)


def test_a_token_the_merges_never_build_is_not_a_shortcut():
    # "abc" is a token, but the merges never build it from "abc": b+c comes first and
    # (a, bc) is not a merge. Ours and HF (ignore_merges off) both give what the merges give.
    ours = hand_made([(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], [256, 257, 258])
    hf = ours.to_hf()
    assert hf_json(ours)["model"]["ignore_merges"] is False
    assert ours.encode("abc") == hf.encode("abc").ids == [97, 256]
    assert ours.encode("xabc") == hf.encode("xabc").ids == [120, 97, 256]
    # tiktoken would answer "abc" with rank 258, so the export is refused.
    with pytest.raises(ValueError, match="tiktoken would"):
        ours.to_tiktoken_params("x")


def test_tiktoken_refuses_ids_out_of_merge_order():
    ours = hand_made([(b"a", b"b"), (b"ab", b"c")], [300, 299])
    assert ours.to_hf().encode("abc").ids == ours.encode("abc") == [299]
    with pytest.raises(ValueError, match="follow the order merges were learned"):
        ours.to_tiktoken_params("x")


def test_exports_refuse_duplicate_bytes():
    vocab = byte_vocab()
    vocab[256] = b"a"
    ours = Tokenizer(vocab, [])
    with pytest.raises(ValueError, match="share the bytes"):
        ours.to_tiktoken_params("x")
    with pytest.raises(ValueError, match="same bytes"):
        hf_json(ours)


@pytest.mark.parametrize("special", ["<|é|>", "«eos»", "<ä|ö>", "[é]", "é^$.*+?()", "»»"])
def test_hf_carries_special_tokens_that_bytelevel_would_garble(special):
    ours = Tokenizer(byte_vocab(), [], ["<|endoftext|>", special])
    hf = ours.to_hf()
    for text in [special, f"a{special}b", f"{special}{special} é", f" {special}\n<|endoftext|>"]:
        ids = hf.encode(text).ids
        assert ids == ours.encode(text)
        assert hf.decode(ids, skip_special_tokens=False) == text


def test_hf_refuses_a_special_token_spelled_like_an_ordinary_token():
    # "»" is how the vocabulary spells the byte 0xBB; HF would give the special token id 187.
    with pytest.raises(ValueError, match="same spelling as ordinary token id 187"):
        hf_json(Tokenizer(byte_vocab(), [], ["»"]))


def test_tiktoken_export_refuses_special_tokens_it_would_match_in_another_order():
    """tiktoken tries special tokens in an order of its own, not longest first: with
    "<|end" beside "<|endoftext|>" it read "<|endoftext|>" as "<|end" + text, silently."""
    nested = Tokenizer(byte_vocab(), [], ["<|endoftext|>", "<|end"])
    with pytest.raises(ValueError, match=r"tiktoken would read special token '<\|endoftext\|>'"):
        nested.to_tiktoken_params("x")
    fine = Tokenizer(byte_vocab(), [], ["<|endoftext|>", "<|endoftext|><|endoftext|>"])
    encoding = tiktoken.Encoding(**fine.to_tiktoken_params("x"))  # this order works: allowed
    text = "<|endoftext|><|endoftext|><|endoftext|>"
    assert encoding.encode(text, allowed_special="all") == fine.encode(text)


def test_a_special_token_of_one_byte_is_refused_for_export_with_a_reason():
    with pytest.raises(ValueError, match=r"special token '\[' is the single byte 0x5b"):
        check_exportable(["["], GPT2_PATTERN)
