"""The offline slide decks: the course's slide tags, no CDN, and every slide fitting.

The first tests need only nbconvert. The ones that open decks in a browser need Debian's
``chromium`` and the npm packages ``make slides`` installs; they skip, saying which is
missing, when a machine has neither (a fresh clone without npm, or no Chromium).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

# tools/ sits beside bpe_course/ but is not installed; make it importable from any cwd.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools import build_slides  # noqa: E402
from tools.chromium import find_chromium  # noqa: E402

NOTEBOOKS = sorted(build_slides.NOTEBOOKS.glob("*.ipynb"))


def cell(kind: str, source: str, slide_type: str = "-", tags: tuple[str, ...] = (), **extra):
    make = new_markdown_cell if kind == "markdown" else new_code_cell
    made = make(source, **extra)
    made.metadata["slideshow"] = {"slide_type": slide_type}
    if tags:
        made.metadata["tags"] = list(tags)
    return made


def export(nb) -> str:
    body, _ = build_slides.exporter().from_notebook_node(nb, resources={"metadata": {"name": "t"}})
    return body


def sections(page: str) -> int:
    return page.count("<section")


def test_skip_on_slides_drops_the_cell_and_keeps_its_slide():
    nb = new_notebook(cells=[
        cell("markdown", "# Title", "slide"),
        cell("code", "left_out = 1", "slide", tags=("skip-on-slides",)),
        cell("code", "shown_on_the_new_slide = 2"),
        cell("code", "also_left_out = 3", "subslide", tags=("skip-on-slides",)),
        cell("markdown", "a fragment that now starts a subslide", "fragment"),
    ])
    page = export(nb)
    assert "left_out" not in page
    assert "shown_on_the_new_slide" in page and "a fragment that now starts" in page
    # Title | new slide (with its own vertical stack) | the subslide: 2 stacks, 3 slides.
    assert sections(page) == 5
    assert len(re.findall(r'<div class="fragment"', page)) == 0


def test_hide_input_on_slides_keeps_the_output_only():
    plotting = cell("code", "secret_plotting_code()", tags=("hide-input-on-slides",))
    plotting.outputs = [new_output("stream", name="stdout", text="the plot's caption\n")]
    nb = new_notebook(cells=[cell("markdown", "# T", "slide"), plotting])
    page = export(nb)
    assert "secret_plotting_code" not in page
    assert "the plot&#39;s caption" in page or "the plot's caption" in page


def test_consecutive_prints_are_one_block():
    printing = cell("code", "print(1); print(2)")
    printing.outputs = [new_output("stream", name="stdout", text="first line\n"),
                        new_output("stream", name="stdout", text="second line\n")]
    page = export(new_notebook(cells=[cell("markdown", "# T", "slide"), printing]))
    assert re.search(r"<pre>first line\nsecond line\n</pre>", page), page[-3000:]


def test_widgets_are_drawn_from_their_text_and_need_no_cdn():
    bar = cell("code", "for _ in tqdm(range(3)): pass")
    bar.outputs = [new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2},
        "text/plain": "pretokenize: 100%|██████████| 3/3",
    })]
    nb = new_notebook(cells=[cell("markdown", "# T", "slide"), bar])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    page = export(nb)
    assert "pretokenize: 100%" in page
    assert "html-manager" not in page  # the widget manager would come from a CDN


def test_every_script_and_stylesheet_is_local():
    nb = new_notebook(cells=[cell("markdown", "# T\n\n$x^2$", "slide")])
    page = export(nb)
    urls = re.findall(r'<(?:script|link)[^>]*(?:src|href)="([^"]+)"', page)
    urls += re.findall(r"""import \w+ from ['"]([^'"]+)""", page)
    urls += re.findall(r'"(\S*reveal\.js\S*?)"', page)
    assert urls, "the template changed: no script or stylesheet URLs found"
    assert all(url.startswith("lib/") for url in urls), urls
    assert "https://" not in "".join(re.findall(r"<script[^>]*>", page))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_rise_uses_a_theme_whose_fonts_ship_with_it(notebook):
    # RISE's default theme ("simple") imports web fonts; offline they never arrive.
    assert nbformat.read(notebook, as_version=4).metadata.get("rise", {}).get("theme") == "white"


def test_a_mermaid_diagram_is_refused_with_the_cell_number():
    nb = new_notebook(cells=[
        cell("markdown", "# T", "slide"),
        cell("markdown", "```mermaid\ngraph TD; A-->B\n```"),
    ])
    with pytest.raises(ValueError, match="cell 1 has a Mermaid diagram"):
        export(nb)


def test_missing_npm_packages_say_how_to_install(tmp_path):
    with pytest.raises(build_slides.SlidesSetupError, match="make slides"):
        build_slides.copy_assets(tmp_path / "out", node_modules=tmp_path / "nothing")


def test_every_notebook_converts(tmp_path):
    for notebook in NOTEBOOKS:
        deck = build_slides.build_deck(notebook, tmp_path)
        page = deck.read_text(encoding="utf-8")
        assert sections(page) > 3, notebook
        assert "NBVAL_" not in page, f"{notebook.name}: nbval markers belong in cell tags"


# In a browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> None:
    if find_chromium() is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); "
                    "the slide checks need a real browser")


@pytest.fixture(scope="module")
def browser_ready(chromium) -> None:
    if not (build_slides.NODE_MODULES / "reveal.js" / "dist" / "reveal.js").is_file():
        pytest.skip(f"reveal.js is not installed in {build_slides.NODE_MODULES}: "
                    "run `make slides` (it runs npm ci in slides/)")


@pytest.fixture(scope="module")
def built_decks(browser_ready, tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("slides")
    return build_slides.build(NOTEBOOKS, out)


def test_every_deck_is_slides_and_every_slide_fits(built_decks):
    from tools.check_slides import check_decks

    reports = check_decks(built_decks)
    assert len(reports) == len(NOTEBOOKS)
    failures = "\n\n".join(report.table() for report in reports if not report.ok)
    assert not failures, failures
    for report in reports:
        assert len(report.slides) > 3


def test_the_checker_catches_a_tall_slide_a_wide_line_and_a_cdn(browser_ready, tmp_path):
    from tools.check_slides import check_decks

    tall = "\n".join(f"line_{n} = {n}" for n in range(60))
    wide = "x = " + " + ".join(["1"] * 120)
    nb = new_notebook(cells=[
        cell("markdown", "# Fits", "slide"),
        cell("code", tall, "slide"),
        cell("code", wide, "slide"),
        cell("markdown", '<img src="https://cdn.invalid/pixel.png">', "slide"),
    ])
    notebook = tmp_path / "bad.ipynb"
    nbformat.write(nb, notebook)
    decks = build_slides.build([notebook], tmp_path / "out")
    (report,) = check_decks(decks)
    by_place = {slide.where: slide for slide in report.slides}
    assert by_place["#/0/0"].fits
    assert by_place["#/1/0"].overflow_y > 300  # 60 lines of code
    assert by_place["#/2/0"].overflow_x > 100  # a line of ~480 characters
    assert any("requested from the network: https://cdn.invalid" in p for p in report.problems)
    assert not report.ok
    assert "<-- overflows" in report.table()


def test_rise_presents_a_notebook_live_and_offline(chromium):
    pytest.importorskip("jupyterlab_rise", reason="jupyterlab-rise is not installed")
    from tools.check_rise import DEFAULT_NOTEBOOK, check_rise

    report = check_rise(DEFAULT_NOTEBOOK)
    assert report.slides > 10
    assert report.ran_cell
    assert not report.problems, report.problems  # e.g. a theme that imports web fonts


# The Chinese edition -----------------------------------------------------------------------


def test_make_slides_builds_chinese_decks_only_when_chinese_notebooks_exist(tmp_path):
    """``make slides`` and ``make check-slides`` (dry run, in a copy of the Makefile)."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parent.parent
    shutil.copy(root / "Makefile", tmp_path / "Makefile")
    (tmp_path / "notebooks" / "zh-CN" / "translations").mkdir(parents=True)
    (tmp_path / "notebooks" / "zh-CN" / "translations" / "00_x.md").write_text("")

    def commands() -> str:
        done = ["-o", ".venv/.installed", "-o", "slides/node_modules/.installed"]
        return subprocess.run(["make", "-n", *done, "check-slides"], cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout

    assert "zh-CN" not in commands()
    (tmp_path / "notebooks" / "zh-CN" / "00_x.ipynb").write_text("{}")
    made = commands()
    assert ("tools.build_slides --lang zh-CN --out build/slides/zh-CN "
            "notebooks/zh-CN/00_x.ipynb") in made
    assert "build/slides/zh-CN/*.slides.html" in made


def test_a_chinese_deck_says_it_is_chinese(tmp_path):
    nb = new_notebook(cells=[cell("markdown", "# 词元\n\n分词器把文本切成词元。", "slide")])
    nbformat.write(nb, tmp_path / "00_zh.ipynb")
    deck = build_slides.build_deck(tmp_path / "00_zh.ipynb", tmp_path, "zh-CN")
    page = deck.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page and "分词器把文本切成词元" in page
    english = build_slides.build_deck(tmp_path / "00_zh.ipynb", tmp_path / "..", "en")
    assert '<html lang="en">' in english.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def chinese_decks(browser_ready, tmp_path_factory) -> list[Path]:
    """The Chinese notebooks as ``make zh`` builds them, each code cell with its English
    counterpart's outputs (running them all would take minutes), as decks."""
    from tools import zh_edition

    folder = tmp_path_factory.mktemp("zh")
    notebooks = []
    for english in zh_edition.english_notebooks():
        outputs = {c.id: c.get("outputs", []) for c in nbformat.read(english, as_version=4).cells}
        built = zh_edition.build(english)
        for chinese in built.cells:
            if chinese.cell_type == "code":
                chinese.outputs = outputs.get(chinese.id, [])
        nbformat.write(built, folder / english.name)
        notebooks.append(folder / english.name)
    return build_slides.build(notebooks, folder / "slides", "zh-CN")


def test_every_chinese_slide_fits(chinese_decks):
    from tools.check_slides import check_decks

    reports = check_decks(chinese_decks)
    assert len(reports) == len(NOTEBOOKS)
    failures = "\n\n".join(report.table() for report in reports if not report.ok)
    assert not failures, failures


def html_output(html: str):
    return new_output("display_data", data={"text/html": html, "text/plain": "x"})


#: A one-pixel PNG: drawn 200 px wide, it stands for a plot at a sixth of the slide.
PIXEL_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAA"
             "AABJRU5ErkJggg==")

#: A token group whose byte boxes are blocks: they stack in a column, as in RISE before.
STACKED_GROUP = (
    '<div class="bpe-tokens"><span class="bpe-shared" style="display:inline-block">'
    '<span class="bpe-char">ह</span>'
    '<span class="bpe-bytes" style="display:block;font-size:0.5em">e0 a4</span>'
    '<span class="bpe-bytes" style="display:block;font-size:0.5em">b9</span></span></div>'
)


def test_the_checker_finds_what_the_back_of_the_room_cannot_read(browser_ready, tmp_path):
    from bpe_course.course.viz import html_tokens
    from bpe_course.openai import tiktoken_encoding
    from tools.check_slides import check_decks

    small_plot = cell("code", "plot()", "slide")
    small_plot.outputs = [html_output(
        f'<img src="data:image/png;base64,{PIXEL_PNG}" style="width:200px">'
        '<svg viewBox="0 0 100 50" style="width:300px"><text x="0" y="20" '
        'style="font-size: 3px">tiny label</text></svg>')]
    stacked = cell("code", "show_tokens(hindi, gpt2)", "slide")
    stacked.outputs = [html_output(STACKED_GROUP)]
    drawn_now = cell("code", "show_tokens(hindi, gpt2)", "slide")
    today = html_tokens("हर सुबह, I said مرحبا", tiktoken_encoding("gpt2"))
    drawn_now.outputs = [html_output(today)]
    words = " ".join(["tokenization"] * 60)
    wrapped = cell("code", "print(words)", "slide")
    wrapped.outputs = [new_output("stream", name="stdout", text=words + "\n")]
    cut = cell("code", "cut()", "slide")
    cut.outputs = [html_output(f'<pre style="word-break:break-all">{words}</pre>')]
    corner = cell("code", "corner()", "slide")
    corner.outputs = [html_output(
        '<div style="position:fixed;right:-60px;bottom:-40px;font-size:40px;'
        'white-space:nowrap">text under the arrows</div>')]
    nb = new_notebook(cells=[cell("markdown", "# Fits", "slide"), small_plot, stacked,
                             drawn_now, wrapped, cut, corner])
    notebook = tmp_path / "unreadable.ipynb"
    nbformat.write(nb, notebook)
    (report,) = check_decks(build_slides.build([notebook], tmp_path / "out"))
    issues = {slide.where: " | ".join(slide.issues) for slide in report.slides}
    assert issues["#/0/0"] == ""
    assert "a plot fills 16% of the width" in issues["#/1/0"]
    assert "plot text of 9.0 px" in issues["#/1/0"]
    assert "1 of 1 token groups fell apart" in issues["#/2/0"]
    assert "hex bytes of 10.1 px" in issues["#/2/0"]
    assert issues["#/3/0"] == ""  # the course's own picture: Hindi and Arabic, as drawn today
    assert issues["#/4/0"] == ""  # the deck's stylesheet wraps output between words
    assert "output wrapped inside a word" in issues["#/5/0"]
    assert "navigation arrows cover text: ['text under the arrows']" in issues["#/6/0"]
    assert not report.ok and "<-- " in report.table()


def test_rise_measures_every_slide_with_a_token_picture(chromium, tmp_path):
    pytest.importorskip("jupyterlab_rise", reason="jupyterlab-rise is not installed")
    from bpe_course.course.viz import html_tokens
    from bpe_course.openai import tiktoken_encoding
    from tools.check_rise import check_rise

    hindi = html_tokens("हर सुबह मेरी दादी", tiktoken_encoding("gpt2"))
    first = cell("code", "x = 1", "slide")
    now = cell("code", "show_tokens(hindi, gpt2)", "slide")
    now.outputs = [html_output(hindi)]
    before = cell("code", "show_tokens(hindi, gpt2)", "slide")
    before.outputs = [html_output(STACKED_GROUP)]
    nb = new_notebook(cells=[cell("markdown", "# Pictures", "slide"), first, now, before])
    nb.metadata["rise"] = {"theme": "white"}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    notebook = tmp_path / "pictures.ipynb"
    nbformat.write(nb, notebook)
    (tmp_path / "rise.css").write_bytes((build_slides.NOTEBOOKS / "rise.css").read_bytes())
    report = check_rise(notebook, run_a_cell=False)  # running a cell is the test above's
    assert [where for where, _ in report.pictures] == ["2/0", "3/0"]
    assert report.pictures[0][1]["groups"] > 5 and report.pictures[0][1]["stacked"] == 0
    on_pictures = [problem for problem in report.problems if problem.startswith("slide ")]
    assert all(problem.startswith("slide 3/0: ") for problem in on_pictures), on_pictures
    assert any("1 of 1 token groups fell apart" in problem for problem in on_pictures)
    assert any("hex bytes of" in problem for problem in on_pictures)


def test_jupyterlab_moves_to_a_new_port_when_its_port_is_taken_meanwhile(tmp_path, monkeypatch):
    """Two tests presenting at once can be handed one free port; the one that loses must
    start on another port, not answer where nobody looks (or fail the run)."""
    import socket
    import urllib.request

    from tools import check_rise

    taken = socket.socket()
    taken.bind((check_rise.LOOPBACK, 0))
    taken.listen()
    ports = [taken.getsockname()[1]]
    free_port = check_rise._free_port
    monkeypatch.setattr(check_rise, "_free_port", lambda: ports.pop() if ports else free_port())
    with taken, check_rise.jupyter_server(tmp_path) as (base, token):
        assert f":{taken.getsockname()[1]}" not in base
        with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=10) as answer:
            assert answer.status == 200
