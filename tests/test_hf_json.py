"""``from_tokenizer_json``: Hugging Face's byte-level BPE files, read with Hugging Face's ids.

Each stage the loader implements is switched on in a small document and run beside
Hugging Face ``tokenizers`` reading the same document; what it does not implement is
refused with the field named. Our own exports load back with the ids they were made from.
"""

from __future__ import annotations

import copy
import json

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from strategies import FRAGMENTS, tiktoken_text
from tokenizers import Tokenizer as HFTokenizer

from bpe_course import GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN, Tokenizer
from bpe_course.course.data import english_prose
from bpe_course.formats.export import hf_json, onig_pattern
from bpe_course.formats.hf_json import (
    UnsupportedTokenizerJson,
    from_tokenizer_document,
    from_tokenizer_json,
    split_segments,
)
from bpe_course.pretokens import count_pretokens
from bpe_course.train import train_from_counts

SPECIALS = ["<|endoftext|>", "<|user turn|>", "«eos»"]


def trained(pattern: str, special_tokens=SPECIALS) -> Tokenizer:
    text = english_prose(30_000) + " 中文字符 日本語 한국어 1234567 naïve e\u0301 😀"
    vocab, merges = train_from_counts(count_pretokens(text, pattern=pattern), 600, special_tokens)
    return Tokenizer(vocab, merges, special_tokens, pattern)


@pytest.fixture(scope="module")
def base() -> Tokenizer:
    return trained(GPT4_PATTERN)


def both(document: dict) -> tuple:
    """(ours, Hugging Face's) for one document."""
    ours = from_tokenizer_document(copy.deepcopy(document), "test.json", name="test")
    return ours, HFTokenizer.from_str(json.dumps(document))


def same_ids(document: dict, texts) -> None:
    ours, hf = both(document)
    for text in texts:
        assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("pattern", [GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN])
def test_our_exports_load_back_with_the_same_ids(pattern, tmp_path):
    original = trained(pattern)
    original.save_hf(tmp_path / "tokenizer.json")
    loaded = from_tokenizer_json(tmp_path / "tokenizer.json")
    text = english_prose(5_000) + "".join(FRAGMENTS) + "".join(SPECIALS) + "«eos»x"
    assert loaded.encode(text) == original.encode(text)
    assert loaded.encode_ordinary(text) == original.encode_ordinary(text)
    assert loaded.decode(original.encode(text)) == original.decode(original.encode(text))
    assert loaded.special_tokens == original.special_tokens
    assert loaded.pattern == onig_pattern(pattern)


@given(text=tiktoken_text)
def test_an_export_loads_back_on_any_text(base, text):
    loaded = from_tokenizer_document(hf_json(base), "t.json", name="t")
    assert loaded.encode(text) == base.encode(text)


# Each stage beside Hugging Face ------------------------------------------------------------


def with_pre_tokenizer(base: Tokenizer, *steps: dict) -> dict:
    document = hf_json(base)
    document["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": list(steps)}
    return document


def split(pattern: str, behavior: str = "Isolated", invert: bool = False) -> dict:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
            "invert": invert}


BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
              "use_regex": False}

TEXTS = ["Hello, world! it's 12345 now", "  lots   of  space\n\n\n x", "中文123abc 日本", "",
         "a-b--c---d", "I'M 3.14 😀 e\u0301"]


@pytest.mark.parametrize("behavior", ["Isolated", "Removed", "MergedWithPrevious",
                                      "MergedWithNext", "Contiguous"])
@pytest.mark.parametrize("invert", [False, True])
def test_split_behaviours(base, behavior, invert):
    document = with_pre_tokenizer(base, split(r"\s+|-", behavior, invert), split(GPT2_PATTERN),
                                  BYTE_LEVEL)
    same_ids(document, TEXTS)


@pytest.mark.parametrize("prefix", [False, True])
@pytest.mark.parametrize("use_regex", [False, True])
def test_byte_level_options(base, prefix, use_regex):
    step = dict(BYTE_LEVEL, add_prefix_space=prefix, use_regex=use_regex)
    same_ids(with_pre_tokenizer(base, split(r"\p{N}{1,3}"), step), TEXTS)
    same_ids(with_pre_tokenizer(base, step), TEXTS)


@pytest.mark.parametrize("individual", [False, True])
def test_digits(base, individual):
    document = with_pre_tokenizer(base, {"type": "Digits", "individual_digits": individual},
                                  split(GPT2_PATTERN), BYTE_LEVEL)
    same_ids(document, TEXTS + ["١٢٣ ½ 4²"])


def test_a_literal_string_split(base):
    document = with_pre_tokenizer(base, {"type": "Split", "pattern": {"String": " "},
                                         "behavior": "MergedWithNext", "invert": False},
                                  BYTE_LEVEL)
    same_ids(document, TEXTS)


@pytest.mark.parametrize("normalizer", [
    {"type": "NFC"}, {"type": "NFKC"}, {"type": "NFD"},
    {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "NFKC"}]},
    {"type": "Sequence", "normalizers": []},
])
def test_normalizers(base, normalizer):
    document = hf_json(base)
    document["normalizer"] = normalizer
    same_ids(document, TEXTS + ["ﬁ ｆｕｌｌ ① Å A\u030a ñ n\u0303"])


@pytest.mark.parametrize("ignore", [False, True])
def test_ignore_merges_both_ways(ignore):
    # With merges b+c, a+b, ab+c, the merges make "a" + "bc" of "abc"; with ignore_merges,
    # "abc" is in the vocabulary, so it is one token.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    tokenizer = Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], [], r"\S+|\s+")
    document = hf_json(tokenizer)
    document["model"]["ignore_merges"] = ignore
    same_ids(document, ["abc", "abc abcabc", "xabc"])
    ours, _ = both(document)
    assert ours.encode("abc") == ([258] if ignore else [97, 256])
    assert ours.encode_naive("abc abcabc") == ours.encode("abc abcabc")


def added(content: str, token_id: int, special: bool, **flags) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": not special, "special": special} | flags


@pytest.mark.parametrize("flags", [{}, {"lstrip": True}, {"rstrip": True},
                                   {"lstrip": True, "rstrip": True}, {"single_word": True},
                                   {"normalized": True}, {"normalized": False}])
@pytest.mark.parametrize("special", [False, True])
def test_added_tokens(base, flags, special):
    document = hf_json(base)
    next_id = max(base.vocab) + 1
    document["added_tokens"] += [added("[MASK]", next_id, special, **flags),
                                 added("ﬁx", next_id + 1, special, **flags),
                                 added("[MASK]er", next_id + 2, special, **flags)]
    document["normalizer"] = {"type": "NFKC"}
    texts = ["a [MASK] b", "a  [MASK]  b", "x[MASK]y", "[MASK]", " [MASK]er [MASK]ers",
             "fix ﬁx ﬁxing", "<|endoftext|> [MASK]<|user turn|>", "\t[MASK]\n"]
    same_ids(document, texts)


@given(text=st.lists(st.sampled_from(["[MASK]", " ", "  ", "a", "\n", "ﬁx", "x", "é"]),
                     max_size=12).map("".join))
def test_added_tokens_on_generated_text(base, text):
    document = hf_json(base)
    next_id = max(base.vocab) + 1
    document["added_tokens"] += [added("[MASK]", next_id, False, lstrip=True, rstrip=True),
                                 added("ﬁx", next_id + 1, False, single_word=True)]
    document["normalizer"] = {"type": "NFKC"}
    ours, hf = both(document)
    assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_special_tokens_read_as_text_are_not_looked_into(base):
    """Hugging Face's split_special_tokens: a special token taken as text hides the shorter
    added tokens inside it, exactly as the policy's encode_ordinary does here."""
    document = hf_json(base)
    next_id = max(base.vocab) + 1
    document["added_tokens"] += [added("user", next_id, False)]
    ours, hf = both(document)
    text = "a <|user turn|> user"
    hf.encode_special_tokens = True
    assert ours.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids
    hf.encode_special_tokens = False
    assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_split_segments_keeps_every_character():
    finder = regex.compile(r"\d+").finditer
    for behavior in ["Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]:
        for invert in (False, True):
            assert "".join(split_segments(finder, "a12b3cc45", behavior, invert)) == "a12b3cc45"


# Refusals -------------------------------------------------------------------------------


def refused(document: dict, field: str) -> str:
    with pytest.raises(UnsupportedTokenizerJson) as caught:
        from_tokenizer_document(document, "tok.json", name="x")
    message = str(caught.value)
    assert message.startswith(f"tok.json: {field} = "), message
    return message


def test_what_is_refused(base):
    good = hf_json(base)
    cases = {
        "model.type": ("model", dict(good["model"], type="WordPiece")),
        "model.type ": ("model", {"type": "Unigram", "vocab": [["a", 0.0]]}),
        "model.byte_fallback": ("model", dict(good["model"], byte_fallback=True)),
        "model.dropout": ("model", dict(good["model"], dropout=0.1)),
        "model.continuing_subword_prefix": ("model", dict(good["model"],
                                                          continuing_subword_prefix="##")),
        "pre_tokenizer.type": ("pre_tokenizer", {"type": "Metaspace", "replacement": "▁"}),
        "pre_tokenizer.pretokenizers[0].type": ("pre_tokenizer", {
            "type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, BYTE_LEVEL]}),
        "pre_tokenizer.pretokenizers[0].type ": ("pre_tokenizer", {
            "type": "Sequence", "pretokenizers": [BYTE_LEVEL, split("a")]}),
        "pre_tokenizer": ("pre_tokenizer", None),
        "pre_tokenizer.pretokenizers[0].behavior": ("pre_tokenizer", {
            "type": "Sequence", "pretokenizers": [split("a", "Sideways"), BYTE_LEVEL]}),
        "normalizer.type": ("normalizer", {"type": "Lowercase"}),
        "normalizer.normalizers[1].type": ("normalizer", {
            "type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Replace"}]}),
        "decoder.type": ("decoder", {"type": "WordPiece"}),
    }
    messages = {}
    for field, (key, value) in cases.items():
        document = copy.deepcopy(good)
        document[key] = value
        messages[field] = refused(document, field.strip())
    assert "Metaspace marks spaces" in messages["pre_tokenizer.type"]
    assert "only BPE models" in messages["model.type"]
    assert "Lowercase" in messages["normalizer.type"]


def test_a_broken_file_names_itself(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": ', encoding="utf-8")
    with pytest.raises(ValueError, match=r"tokenizer.json:1: not valid JSON"):
        from_tokenizer_json(path)


@pytest.mark.parametrize("merge", ["a", "a b c", 7, ["a"], ["a", 1]])
def test_a_malformed_merge_is_named(base, merge):
    document = hf_json(base)
    document["model"]["merges"][3] = merge
    refused(document, "model.merges[3]")


def test_a_negative_id_is_named(base):
    document = hf_json(base)
    document["model"]["vocab"]["Ġthe"] = -1
    refused(document, "model.vocab['Ġthe']")
