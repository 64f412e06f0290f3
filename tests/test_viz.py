"""Token pictures (HTML and terminal) for every script, and the plot helpers."""

from __future__ import annotations

import functools
import html
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import FRAGMENTS, special_text  # noqa: E402

from bpe_course.course import COURSE_STYLE  # noqa: E402
from bpe_course.course.data import course_text  # noqa: E402
from bpe_course.course.viz import (  # noqa: E402
    VISIBLE_WHITESPACE,
    TokenizerLike,
    ansi_tokens,
    bytes_per_token,
    characters_of,
    html_tokens,
    merged_token_ranks,
    plot_bytes_per_token,
    plot_merge_rank_histogram,
    plot_tokens_per_language,
    show_tokens,
    token_groups,
    token_spans,
)
from bpe_course.openai import gpt2, tiktoken_encoding  # noqa: E402
from bpe_course.pretokens import count_pretokens  # noqa: E402
from bpe_course.tokenizer import Tokenizer  # noqa: E402
from bpe_course.train import train_from_counts  # noqa: E402

ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")
SAMPLE = "if a < b && c > d:\n    print('héllo')  # 你好 🙂<|endoftext|>done"
LANGUAGES = dict(
    line.split("\t") for line in course_text("one_sentence_many_languages.txt").splitlines()
)
HINDI = LANGUAGES["Hindi"]
HARD = [HINDI, LANGUAGES["Chinese"], LANGUAGES["Japanese"], LANGUAGES["Arabic"],
        "I ❤ ☕ 🙂 👩\u200d👩\u200d👧 🇫🇷 👍🏽 1\ufe0f\u20e3", "e\u0301 naïve", SAMPLE]


@pytest.fixture(scope="module")
def small() -> Tokenizer:
    corpus = "the cat sat on the mat. the dog sat on the log. " * 20
    vocab, merges = train_from_counts(count_pretokens(corpus), 300, ["<|endoftext|>"])
    return Tokenizer(vocab, merges, ["<|endoftext|>"])


def _encodings() -> list[str]:
    names = ["gpt2", "cl100k_base"]
    try:
        tiktoken_encoding("o200k_base")
    except (KeyError, ValueError, FileNotFoundError, ModuleNotFoundError):
        pass  # o200k_base is tested here whenever its file loads offline
    else:
        names.append("o200k_base")
    return names


ENCODINGS = _encodings()


@functools.cache
def encoding_named(name: str):
    """tiktoken's encoding, built once per test session (building one takes a second)."""
    return tiktoken_encoding(name)


@pytest.fixture(scope="module", params=ENCODINGS)
def encoding(request):
    return encoding_named(request.param)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


class Picture(HTMLParser):
    """Reads back an ``html_tokens`` picture: what a reader sees, and each token's box."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.seen: list[str] = []  # characters as drawn (token text or glyph row)
        self.byte_boxes: list[str] = []  # hex labels under shared characters
        self.titles: list[str] = []  # hover text of every token (not of characters)
        self.feed(page.split('<div style="font-size')[0])

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        kind = attributes.get("class", "")
        self.stack.append(kind)
        if kind in ("bpe-token", "bpe-bytes"):
            self.titles.append(attributes.get("title", ""))

    def handle_endtag(self, tag):
        self.stack.pop()

    def handle_data(self, data):
        kinds = [kind for kind in self.stack if kind.startswith("bpe-") and kind != "bpe-tokens"]
        if "bpe-bytes" in kinds:
            self.byte_boxes.append(data)
        elif kinds:
            self.seen.append(data)


def drawn(text: str) -> str:
    """``text`` as the picture draws it: whitespace as faint marks."""
    return "".join(VISIBLE_WHITESPACE.get(char, char) for char in text)


def undrawn(seen: str) -> str:
    marks = {mark.rstrip("\n"): char for char, mark in VISIBLE_WHITESPACE.items()}
    return "".join(marks.get(char, char) for char in seen.replace("↵\n", "↵"))


# Groups: the shortest runs of tokens that start and end between characters --------------


def check_groups(text: str, tokenizer: TokenizerLike) -> None:
    groups = token_groups(text, tokenizer)
    data = text.encode("utf-8")
    assert b"".join(t.data for g in groups for t in g.tokens) == data
    assert "".join(c.text for g in groups for c in g.characters) == text
    assert [t.token_id for g in groups for t in g.tokens] == tokenizer.encode(
        text, allowed_special="all")
    for group in groups:
        first, last = group.tokens[0], group.tokens[-1]
        assert group.characters[0].start == first.start
        assert group.characters[-1].end == last.end
        # Inside a group, no token edge falls between two characters (else: two groups).
        inner_edges = {t.end for t in group.tokens[:-1]}
        assert not inner_edges & {c.end for c in group.characters}
        assert group.shared == (len(group.tokens) > 1)


@pytest.mark.parametrize("text", HARD)
def test_groups_cover_text_and_tokens(encoding, text):
    check_groups(text, encoding)


@given(text=special_text)
def test_groups_on_generated_text(text):
    for name in ENCODINGS:
        check_groups(text, encoding_named(name))


def test_characters_are_grapheme_clusters():
    text = "नमस्ते 👩\u200d👧 e\u0301"
    assert [c.text for c in characters_of(text.encode())] == [
        "न", "म", "स्ते", " ", "👩\u200d👧", " ", "e\u0301"]
    broken = characters_of(b"a\xe4\xbdb")  # bytes cut inside 你: each shown, none lost
    assert [(c.text, c.start, c.size) for c in broken] == [
        ("a", 0, 1), ("\ufffd", 1, 1), ("\ufffd", 2, 1), ("b", 3, 1)]


# HTML ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", HARD)
def test_html_draws_each_character_once(encoding, text):
    page = html_tokens(text, encoding)
    picture = Picture(page)
    assert undrawn("".join(picture.seen)) == text
    assert "\ufffd" not in page  # no replacement boxes for text that has none
    # Under shared characters, the boxes hold exactly the bytes of the tokens there.
    shared = [t for g in token_groups(text, encoding) if g.shared for t in g.tokens]
    assert picture.byte_boxes == [t.data.hex(" ") for t in shared]
    assert len(picture.titles) == len(encoding.encode(text, allowed_special="all"))


def test_hindi_with_gpt2_is_readable_not_replacement_boxes():
    # Regression: each of GPT-2's 87 tokens for this sentence used to be drawn as U+FFFD.
    encoding = tiktoken_encoding("gpt2")
    page = show_tokens(HINDI, encoding)._repr_html_()
    assert "\ufffd" not in page
    assert "सु" in page and "ब" in page  # letters drawn whole, with their vowel signs
    assert Picture(page).byte_boxes[:2] == ["e0 a4", "b9"]  # ह = e0 a4 | b9
    assert "87 tokens, 147 bytes" in page


def test_html_marks_shared_characters_and_keeps_whole_tokens_plain(small):
    page = html_tokens("the 你", small)  # the small tokenizer never merged CJK bytes
    picture = Picture(page)
    assert picture.byte_boxes == ["e4", "bd", "a0"]  # 你 is three one-byte tokens
    assert picture.seen == ["the", "·", "你"]
    assert page.count('class="bpe-shared"') == 1
    assert "part of a UTF-8 character" in page  # hover on the partial tokens
    assert "U+4F60 CJK UNIFIED IDEOGRAPH-4F60" in page  # hover on the character


def test_html_escapes_and_marks_special_tokens(small):
    page = show_tokens(SAMPLE, small)._repr_html_()
    body = re.sub(r"<[^>]*>", "", page.split('<div style="font-size')[0])
    assert "<" not in body and ">" not in body
    assert undrawn("".join(Picture(page).seen)) == SAMPLE
    assert "special token id" in page  # <|endoftext|> is marked as special
    assert "↵" in page and "·" in page  # whitespace is visible
    assert page == show_tokens(SAMPLE, small)._repr_html_()  # deterministic
    titles = Picture(page).titles
    for (token_id, data), title in zip(token_spans(SAMPLE, small), titles):
        assert html.unescape(title).startswith(("id ", "special token id "))
        assert f"id {token_id}: {data!r}" in html.unescape(title)


def test_right_to_left_text_keeps_its_direction(encoding):
    page = html_tokens(LANGUAGES["Arabic"], encoding)
    assert 'dir="auto"' in page  # an Arabic sentence flows right to left
    # Whole tokens are plain spans, so a word cut into tokens keeps the text's own order;
    # hex labels are left to right inside a right-to-left line.
    assert "unicode-bidi" not in page
    assert page.count('class="bpe-bytes" dir="ltr"') == page.count('class="bpe-bytes"')


#: What JupyterLab's HTML sanitizer keeps of a style attribute (an untrusted notebook: a fresh
#: clone, and RISE). Found by opening such outputs in JupyterLab in Chromium: it drops
#: ``grid-row``, ``grid-column`` and ``grid-template-columns``, ``unicode-bidi: isolate``,
#: ``outline-offset``, ``row-gap``/``column-gap`` and ``calc()``; it keeps these.
SANITIZER_KEEPS = {
    "display": {"inline-block", "block"}, "width": None, "box-sizing": {"border-box"},
    "text-align": {"center"}, "background": None, "border": None, "border-radius": None,
    "font-size": None, "line-height": None, "white-space": {"nowrap", "pre-wrap"},
    "vertical-align": {"top"}, "margin": None, "opacity": None, "font-family": None,
    "color": None,
}


def sanitized(page: str) -> str:
    """``page`` with every style declaration JupyterLab would drop removed."""
    def keep(match: re.Match) -> str:
        kept = []
        for declaration in match.group(1).split(";"):
            name, _, value = (part.strip() for part in declaration.partition(":"))
            allowed = SANITIZER_KEEPS.get(name, set())
            if name in SANITIZER_KEEPS and (allowed is None or value in allowed) \
                    and "calc(" not in value:
                kept.append(f"{name}:{value}")
        return f'style="{";".join(kept)}"'
    return re.sub(r'style="([^"]*)"', keep, page)


@pytest.mark.parametrize("text", HARD)
def test_pictures_use_only_styles_jupyterlab_keeps(encoding, text):
    # Regression: the grid placement of a shared group was dropped in RISE, and the byte
    # boxes of 06's Hindi sentence stacked into a column.
    page = html_tokens(text, encoding)
    assert sanitized(page) == page


# Drawn in a browser --------------------------------------------------------------------------

MIXED = "I said مرحبا today"  # GPT-2: " م" | "ر" | ح (two tokens) | "ب" | "ا"


@pytest.fixture(scope="module")
def browser():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tools.chromium import find_chromium, launch

    if find_chromium() is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    with launch() as running:
        yield running


def measure_pictures(browser, tmp_path: Path, pictures: list[str], sanitize: bool = True) -> dict:
    """Open the pictures as JupyterLab shows them (sanitized) or as the slide decks do (as
    they are), and measure them with the slide checker."""
    from tools.check_slides import DRAWN_JS

    page = tmp_path / "pictures.html"
    body = "".join(sanitized(picture) if sanitize else picture for picture in pictures)
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head>'
                    f'<body style="width:1000px;font-size:19px">{body}</body></html>',
                    encoding="utf-8")
    tab = browser.new_page(1280, 720)
    tab.goto(page.as_uri())
    tab.screenshot(tmp_path / "pictures.png")
    return tab.evaluate(DRAWN_JS + "\nmeasureDrawn(document.body, 1, 1280, 720)")


def test_pictures_hold_together_in_a_browser(browser, tmp_path):
    encoding = encoding_named("gpt2")
    drawn = measure_pictures(browser, tmp_path, [html_tokens(text, encoding) for text in HARD])
    assert drawn["groups"] > 60  # Hindi alone has 29 groups of tokens that cut characters
    assert drawn["stacked"] == 0
    assert drawn["hexPx"] >= 16  # 0.85 of 19 px; it was 0.62 (11.8 px)


def test_an_arabic_word_cut_into_tokens_reads_right_to_left(browser, tmp_path):
    encoding = encoding_named("gpt2")
    assert [data for _, data in token_spans(MIXED, encoding)][2:4] == [
        " م".encode(), "ر".encode()]
    for sanitize in (True, False):  # in JupyterLab and on the offline slides
        drawn = measure_pictures(browser, tmp_path, [html_tokens(MIXED, encoding)], sanitize)
        assert drawn["rtlSwapped"] == [], sanitize
    # The checker sees the fault when tokens are isolated from each other (as they were).
    isolated = html_tokens(MIXED, encoding).replace(
        'class="bpe-token" style="', 'class="bpe-token" style="unicode-bidi:isolate;')
    swapped = measure_pictures(browser, tmp_path, [isolated], sanitize=False)
    assert swapped["rtlSwapped"] == ["·مر", "با"]


def test_empty_text_and_long_runs(encoding):
    assert "0 tokens, 0 bytes" in html_tokens("", encoding)
    assert ansi_tokens("", encoding) == ""
    run = "a" * 5000 + "你" * 2000
    check_groups(run, encoding)
    assert undrawn("".join(Picture(html_tokens(run, encoding)).seen)) == run


def test_lone_surrogates_are_drawn_as_the_tokenizer_encoded_them():
    encoding = tiktoken_encoding("gpt2")  # tiktoken replaces a lone surrogate by U+FFFD
    page = html_tokens("a\ud800b", encoding)
    assert undrawn("".join(Picture(page).seen)) == "a\ufffdb"


# Terminal -----------------------------------------------------------------------------------


def test_terminal_shows_each_character_once_with_its_bytes():
    # Regression: `bpe-course show --tokenizer gpt2 --text "你好"` printed "����".
    plain = ANSI_CODE.sub("", ansi_tokens("你好", tiktoken_encoding("gpt2")))
    assert plain == "你[e4 bd|a0]好[e5 a5|bd]"


@pytest.mark.parametrize("text", HARD)
def test_terminal_text_is_the_text_plus_byte_brackets(encoding, text):
    coloured = ansi_tokens(text, encoding)
    plain = ANSI_CODE.sub("", coloured)
    assert "\ufffd" not in plain
    assert re.sub(r"\[[0-9a-f |]+\]", "", plain) == text
    brackets = re.findall(r"\[([0-9a-f |]+)\]", plain)
    shared = [g for g in token_groups(text, encoding) if g.shared]
    assert brackets == ["|".join(t.data.hex(" ") for t in g.tokens) for g in shared]


def test_terminal_whole_tokens_print_as_text(small):
    text = "the cat\nsat on <the> mat  <|endoftext|>"
    coloured = ansi_tokens(text, small)
    assert "\x1b[" in coloured
    assert ANSI_CODE.sub("", coloured) == text
    assert str(show_tokens(text, small)) == coloured
    assert "\x1b[0m\n" in coloured  # colour is reset before a newline


def test_gpt2_keeps_whole_characters():
    text = "Hello, world!\n  naïve café 🙂"
    assert ANSI_CODE.sub("", ansi_tokens(text, gpt2())) == text


# Both kinds of tokenizer, one argument order -----------------------------------------------


def test_our_tokenizer_and_tiktoken_satisfy_the_protocol(small):
    assert isinstance(small, TokenizerLike)
    assert isinstance(gpt2(), TokenizerLike)
    assert isinstance(tiktoken_encoding("gpt2"), TokenizerLike)


def test_our_tokenizer_and_tiktoken_draw_the_same_picture():
    ours, theirs = gpt2(), tiktoken_encoding("gpt2")
    for text in HARD:
        assert html_tokens(text, ours) == html_tokens(text, theirs)
        assert ansi_tokens(text, ours) == ansi_tokens(text, theirs)


def test_special_tokens_with_tiktoken():
    encoding = tiktoken_encoding("gpt2")
    spans = token_spans("hello<|endoftext|>", encoding)
    assert spans[-1] == (50256, b"<|endoftext|>")
    assert "special token id 50256" in show_tokens("hello<|endoftext|>", encoding)._repr_html_()


@pytest.mark.parametrize("function", [bytes_per_token, token_spans, show_tokens,
                                      plot_merge_rank_histogram, html_tokens, ansi_tokens])
def test_text_comes_first(small, function):
    with pytest.raises(TypeError, match=r"\(text, tokenizer\) takes the text first"):
        function(small, "the cat")


# Numbers and plots -------------------------------------------------------------------------


def test_bytes_per_token(small):
    assert bytes_per_token("the cat", small) == len("the cat") / len(small.encode("the cat"))
    with pytest.raises(ValueError):
        bytes_per_token("", small)


def test_merged_token_ranks(small):
    ranks = merged_token_ranks(small)
    assert sorted(ranks.values()) == list(range(len(small.merges)))
    first = small.merges[0]
    assert ranks[first[0] + first[1]] == 0
    # Two merges that make the same bytes: the earlier rank counts.
    same = Tokenizer({**{i: bytes([i]) for i in range(256)}, 256: b"ab", 257: b"bc",
                      258: b"abc"}, [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")])
    assert merged_token_ranks(same) == {b"ab": 0, b"bc": 1, b"abc": 2}


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join))
def test_merge_rank_histogram_counts_every_token(text):
    tokenizer = tiny_tokenizer()
    ax = plot_merge_rank_histogram(text, tokenizer)
    ids = tokenizer.encode(text)
    merged = sum(patch.get_height() for patch in ax.patches)
    assert f"{len(ids)} tokens" in ax.get_title()
    other = int(re.search(r"; (\d+) are single", ax.get_title()).group(1))
    assert merged + other == len(ids)
    plt.close("all")


_SMALL: list[Tokenizer] = []


def tiny_tokenizer() -> Tokenizer:
    if not _SMALL:
        corpus = "the cat sat on the mat. 你好 नमस्ते " * 20
        vocab, merges = train_from_counts(count_pretokens(corpus), 320, ["<|endoftext|>"])
        _SMALL.append(Tokenizer(vocab, merges, ["<|endoftext|>"]))
    return _SMALL[0]


def test_plots_return_axes(small):
    ax = plot_bytes_per_token([256, 300, 400], [1.0, 1.5, 2.0], label="small")
    assert isinstance(ax, matplotlib.axes.Axes)
    assert plot_bytes_per_token([256, 300], [1.0, 1.2], label="other", ax=ax) is ax
    assert len(ax.lines) == 2

    table = {"English": {"gpt2": 10, "ours": 12}, "Chinese": {"gpt2": 30, "ours": 40}}
    ax = plot_tokens_per_language(table)
    assert len(ax.patches) == 4
    assert [label.get_text() for label in ax.get_xticklabels()] == ["English", "Chinese"]

    ax = plot_merge_rank_histogram("the cat sat on the mat 你<|endoftext|>", small)
    assert isinstance(ax, matplotlib.axes.Axes)
    assert "5 are single bytes" in ax.get_title()  # " " + the 3 bytes of 你 + the special

    with pytest.raises(ValueError):
        plot_bytes_per_token([1, 2], [1.0])


# The course's plot style ---------------------------------------------------------------------


def run_python(code: str) -> str:
    root = Path(__file__).resolve().parent.parent
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=root, env={"PYTHONPATH": str(root), "PATH": ""}
                          ).stdout.strip()


def test_a_notebook_kernel_gets_the_course_style_on_import():
    # In a Jupyter kernel (ipykernel loaded), importing anything of bpe_course.course applies
    # the larger fonts; the command line never loads matplotlib for it.
    shown = run_python("import ipykernel, bpe_course.course.data, matplotlib; "
                       "print(matplotlib.rcParams['xtick.labelsize'])")
    assert float(shown) == COURSE_STYLE["xtick.labelsize"] > 10  # matplotlib's default: 10
    assert run_python("import sys, bpe_course.app.cli; print('matplotlib' in sys.modules)") \
        == "False"


def test_the_course_style_draws_plots_as_svg_text_in_ipython():
    shown = run_python(
        "from IPython.core.interactiveshell import InteractiveShell; "
        "shell = InteractiveShell.instance(); "
        "from bpe_course.course import use_course_style; use_course_style(); "
        "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; "
        "fig, ax = plt.subplots(); ax.set_title('x'); "
        "data, _ = shell.display_formatter.format(fig); "
        "svg = data.get('image/svg+xml', ''); "
        "print(sorted(data), 'dc:date' in svg, 'font-size: 13px' in svg or 'font: 13px' in svg)")
    assert shown == "['image/svg+xml', 'text/plain'] False True"
