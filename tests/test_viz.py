"""Token pictures (HTML/ANSI) and the plot helpers."""

from __future__ import annotations

import html
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from bpe_course.openai import gpt2, tiktoken_encoding  # noqa: E402
from bpe_course.pretokenize import count_pretokens  # noqa: E402
from bpe_course.tokenizer import Tokenizer  # noqa: E402
from bpe_course.train import train_from_counts  # noqa: E402
from bpe_course.viz import (  # noqa: E402
    ansi_tokens,
    bytes_per_token,
    merge_ranks,
    plot_bytes_per_token,
    plot_merge_rank_histogram,
    plot_tokens_per_language,
    show_tokens,
    token_spans,
)

ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")
SAMPLE = "if a < b && c > d:\n    print('héllo')  # 你好 🙂<|endoftext|>done"


@pytest.fixture(scope="module")
def small() -> Tokenizer:
    corpus = "the cat sat on the mat. the dog sat on the log. " * 20
    vocab, merges = train_from_counts(count_pretokens(corpus), 300, ["<|endoftext|>"])
    return Tokenizer(vocab, merges, ["<|endoftext|>"])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_token_spans_cover_the_bytes(small):
    spans = token_spans(SAMPLE, small)
    assert b"".join(data for _, data in spans) == SAMPLE.encode("utf-8")
    assert [token_id for token_id, _ in spans] == small.encode(SAMPLE)


def test_html_escapes_and_shows_every_token(small):
    view = show_tokens(SAMPLE, small)
    page = view._repr_html_()
    body = re.sub(r"<[^>]*>", "", page.split('<div style="font-size')[0])
    assert "<" not in body and ">" not in body
    assert re.fullmatch(r"([^&]|&(lt|gt|amp|quot|#x27);)*", body, flags=re.S)
    marks = {" ": "·", "\t": "→", "\n": "↵\n"}
    # Characters the small tokenizer splits across tokens (é, 你, 🙂) show as U+FFFD.
    pieces = "".join(data.decode("utf-8", "replace") for _, data in token_spans(SAMPLE, small))
    assert pieces == SAMPLE.replace("é", "\ufffd" * 2).replace("你好", "\ufffd" * 6).replace(
        "🙂", "\ufffd" * 4
    )
    assert html.unescape(body) == "".join(marks.get(c, c) for c in pieces)
    titles = re.findall(r'title="([^"]*)"', page)
    assert len(titles) == len(view) == len(small.encode(SAMPLE))
    for (token_id, data), title in zip(token_spans(SAMPLE, small), titles):
        assert html.unescape(title).endswith(
            (f"id {token_id}: {data!r}", f"id {token_id}: {data!r} (part of a UTF-8 character)")
        )
    assert "special token id" in page  # <|endoftext|> is marked as special
    assert "↵" in page and "·" in page  # whitespace is visible
    assert page == show_tokens(SAMPLE, small)._repr_html_()  # deterministic


def test_partial_characters_are_shown_honestly(small):
    # The small tokenizer never merged CJK bytes: each byte is its own, partial, token.
    page = show_tokens("你", small)._repr_html_()
    assert page.count("\ufffd") == 3
    assert page.count("part of a UTF-8 character") == 3
    assert "\\xe4" in page


def test_ansi_contains_the_text(small):
    text = "the cat\nsat on <the> mat  🙂<|endoftext|>"
    coloured = ansi_tokens(text, small)
    assert "\x1b[" in coloured
    assert ANSI_CODE.sub("", coloured) == text.replace("🙂", "\ufffd" * 4)
    assert str(show_tokens(text, small)) == coloured


def test_ansi_with_gpt2_keeps_whole_characters():
    text = "Hello, world!\n  naïve café 🙂"
    assert ANSI_CODE.sub("", ansi_tokens(text, gpt2())) == text


def test_works_with_a_tiktoken_encoding():
    encoding = tiktoken_encoding("gpt2")
    spans = token_spans("hello<|endoftext|>", encoding)
    assert spans[-1] == (50256, b"<|endoftext|>")
    assert "special token id 50256" in show_tokens("hello<|endoftext|>", encoding)._repr_html_()


def test_bytes_per_token(small):
    assert bytes_per_token(small, "the cat") == len("the cat") / len(small.encode("the cat"))
    with pytest.raises(ValueError):
        bytes_per_token(small, "")


def test_merge_ranks(small):
    ranks = merge_ranks(small)
    assert sorted(ranks.values()) == list(range(len(small.merges)))
    first = small.merges[0]
    assert small.vocab[min(ranks, key=ranks.get)] == first[0] + first[1]


def test_plots_return_axes(small):
    ax = plot_bytes_per_token([256, 300, 400], [1.0, 1.5, 2.0], label="small")
    assert isinstance(ax, matplotlib.axes.Axes)
    assert plot_bytes_per_token([256, 300], [1.0, 1.2], label="other", ax=ax) is ax
    assert len(ax.lines) == 2

    table = {"English": {"gpt2": 10, "ours": 12}, "Chinese": {"gpt2": 30, "ours": 40}}
    ax = plot_tokens_per_language(table)
    assert len(ax.patches) == 4
    assert [label.get_text() for label in ax.get_xticklabels()] == ["English", "Chinese"]

    ax = plot_merge_rank_histogram(small, "the cat sat on the mat 你")
    assert isinstance(ax, matplotlib.axes.Axes)
    assert "4 are single bytes" in ax.get_title()  # " " + the 3 bytes of 你

    with pytest.raises(ValueError):
        plot_bytes_per_token([1, 2], [1.0])
