"""Build one reveal.js deck per notebook that works with no network: ``make slides``.

``jupyter nbconvert --to slides`` writes decks that load reveal.js, require.js, jQuery and
MathJax from CDNs, so in a lecture hall without network they fall apart into one long page.
This builder points every one of those URLs at copies in the deck folder (``lib/``), taken
from the npm packages that ``slides/package.json`` pins, so the folder can be copied to a
USB stick and opened from ``file://``.

It also gives two cell tags their meaning on slides (see notebooks/INSTRUCTORS.md):

- ``skip-on-slides``: the cell is left out of the deck. When it started a slide, the next
  cell that is shown starts that slide instead, so the slide structure survives.
- ``hide-input-on-slides``: only the cell's output is shown (plotting code, checkers).

Progress bars drawn as Jupyter widgets would need the widget manager from a CDN; the deck
shows their text form instead (``pretokenize: 100%|██████████| ...``).

Usage: ``python -m tools.build_slides [--out build/slides] [--lang zh-CN] [NOTEBOOK ...]``
(``make slides`` builds the Chinese edition's decks into ``build/slides/zh-CN/`` when
``notebooks/zh-CN/`` holds built notebooks.)
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbconvert.exporters import SlidesExporter
from nbconvert.preprocessors import Preprocessor
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SLIDES_SOURCE = ROOT / "slides"
NODE_MODULES = SLIDES_SOURCE / "node_modules"
DEFAULT_OUT = ROOT / "build" / "slides"

SKIP_TAG = "skip-on-slides"
HIDE_INPUT_TAG = "hide-input-on-slides"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: reveal.js's "white" theme loads its fonts from its own folder ("simple", nbconvert's
#: default, imports them from a web font service).
SLIDE_THEME = "white"

#: The deck's size in CSS pixels. reveal.js scales it to the screen; 16:9 like a projector.
SLIDE_WIDTH = 1280
SLIDE_HEIGHT = 720

#: What the decks load, as (path under slides/node_modules, path under the deck's lib/).
#: MathJax 2 (what nbconvert's template configures) is 73 MB; the decks need only the
#: combined TeX/CommonHTML configuration, the pieces it loads and the woff fonts.
ASSETS: tuple[tuple[str, str], ...] = (
    ("reveal.js/dist", "reveal.js/dist"),
    ("reveal.js/plugin/notes", "reveal.js/plugin/notes"),
    ("reveal.js/LICENSE", "reveal.js/LICENSE"),
    ("requirejs/require.js", "require.js"),
    ("jquery/dist/jquery.min.js", "jquery.min.js"),
    ("mathjax/MathJax.js", "mathjax/MathJax.js"),
    ("mathjax/LICENSE", "mathjax/LICENSE"),
    ("mathjax/config/TeX-AMS_CHTML-full.js", "mathjax/config/TeX-AMS_CHTML-full.js"),
    ("mathjax/config/Safe.js", "mathjax/config/Safe.js"),
    ("mathjax/extensions", "mathjax/extensions"),
    ("mathjax/jax/input/TeX", "mathjax/jax/input/TeX"),
    ("mathjax/jax/output/CommonHTML", "mathjax/jax/output/CommonHTML"),
    ("mathjax/jax/element", "mathjax/jax/element"),
    ("mathjax/localization/en", "mathjax/localization/en"),
    ("mathjax/fonts/HTML-CSS/TeX/woff", "mathjax/fonts/HTML-CSS/TeX/woff"),
)

#: The URLs nbconvert's template would fetch from CDNs, relative to a deck in the folder.
LOCAL_URLS = {
    "reveal_url_prefix": "lib/reveal.js",
    "require_js_url": "lib/require.js",
    "jquery_url": "lib/jquery.min.js",
    "mathjax_url": "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
}


class SlidesSetupError(RuntimeError):
    """Something the build needs is missing; the message says what to run."""


def _slide_type(cell) -> str:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-") or "-"


def _set_slide_type(cell, slide_type: str) -> None:
    cell.metadata.setdefault("slideshow", {})["slide_type"] = slide_type


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


class CourseSlidesPreprocessor(Preprocessor):
    """Apply the course's slide tags and replace widget progress bars by their text form."""

    def preprocess(self, nb, resources):
        check_no_mermaid(nb)
        kept = []
        pending = None  # "slide" or "subslide" started by a cell that was left out
        for cell in nb.cells:
            slide_type = _slide_type(cell)
            if SKIP_TAG in _tags(cell):
                if slide_type == "slide" or (slide_type == "subslide" and pending is None):
                    pending = slide_type
                continue
            if pending and slide_type not in ("skip", "notes"):
                if slide_type in ("-", "fragment") or (
                    slide_type == "subslide" and pending == "slide"
                ):
                    _set_slide_type(cell, pending)
                pending = None
            if HIDE_INPUT_TAG in _tags(cell) and cell.cell_type == "code":
                cell.metadata["transient"] = {"remove_source": True}
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if WIDGET_VIEW in data and "text/plain" in data:
                    del data[WIDGET_VIEW]
            kept.append(cell)
        nb.cells = kept
        # Without widget state, the template does not load the widget manager from a CDN.
        nb.metadata.pop("widgets", None)
        return nb, resources


def check_no_mermaid(nb) -> None:
    """Refuse a notebook with Mermaid diagrams: browsers cannot load Mermaid from file://."""
    for index, cell in enumerate(nb.cells):
        in_markdown = cell.cell_type == "markdown" and "```mermaid" in cell.source
        in_output = any("text/vnd.mermaid" in o.get("data", {}) for o in cell.get("outputs", []))
        if in_markdown or in_output:
            raise ValueError(
                f"cell {index} has a Mermaid diagram, which the offline decks cannot draw "
                "(Mermaid loads as an ES module, which browsers refuse from file://); "
                "use a picture or a matplotlib plot instead"
            )


def exporter() -> SlidesExporter:
    """nbconvert's slides exporter, configured for offline decks and the course's tags."""
    config = Config()
    config.SlidesExporter.reveal_url_prefix = LOCAL_URLS["reveal_url_prefix"]
    config.SlidesExporter.reveal_theme = SLIDE_THEME
    config.SlidesExporter.reveal_width = str(SLIDE_WIDTH)
    config.SlidesExporter.reveal_height = str(SLIDE_HEIGHT)
    config.SlidesExporter.require_js_url = LOCAL_URLS["require_js_url"]
    config.SlidesExporter.jquery_url = LOCAL_URLS["jquery_url"]
    config.SlidesExporter.mathjax_url = LOCAL_URLS["mathjax_url"]
    # Prompts ("In [3]:") cost 110 px of every line of code on a 1280 px slide.
    config.SlidesExporter.exclude_input_prompt = True
    config.SlidesExporter.exclude_output_prompt = True
    config.SlidesExporter.preprocessors = [CourseSlidesPreprocessor]
    # Consecutive prints arrive as separate outputs; one block each would waste height.
    config.CoalesceStreamsPreprocessor.enabled = True
    return SlidesExporter(
        config=config,
        extra_template_basedirs=[str(SLIDES_SOURCE)],
        template_name="course-reveal",
    )


def copy_assets(out_dir: Path, node_modules: Path = NODE_MODULES) -> None:
    """Copy the scripts and stylesheets the decks load into ``out_dir/lib``."""
    missing = [source for source, _ in ASSETS if not (node_modules / source).exists()]
    if missing:
        raise SlidesSetupError(
            f"{node_modules / missing[0]} is missing: the decks' reveal.js, require.js, "
            "jQuery and MathJax come from npm. Run `make slides` (it runs `npm ci` in "
            "slides/ first), or `cd slides && npm ci`."
        )
    lib = out_dir / "lib"
    for source, target in ASSETS:
        src, dst = node_modules / source, lib / target
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def build_deck(notebook: Path, out_dir: Path, language: str = "en") -> Path:
    """Write ``out_dir/NAME.slides.html`` for ``notebook``; return its path.

    ``language`` is the deck's ``<html lang>``: a browser picks a font's Simplified Chinese
    glyphs for Han characters only when told the text is ``zh-CN``."""
    nb = nbformat.read(notebook, as_version=4)
    try:
        body, _ = exporter().from_notebook_node(nb, resources={"metadata": {"name": notebook.stem}})
    except ValueError as error:
        raise ValueError(f"{notebook}: {error}") from None
    if language != "en":
        body = body.replace('<html lang="en">', f'<html lang="{html.escape(language)}">', 1)
    target = out_dir / f"{notebook.stem}.slides.html"
    partial = target.with_name(target.name + ".partial")
    partial.write_text(body, encoding="utf-8")
    partial.replace(target)  # a deck is either the old one or the new one, never half
    return target


def write_index(out_dir: Path, decks: Sequence[Path]) -> Path:
    """An ``index.html`` linking every deck, to open first."""
    items = "\n".join(
        f'<li><a href="{html.escape(deck.name)}">{html.escape(deck.name.split(".")[0])}</a></li>'
        for deck in decks
    )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>bpe-course slides</title></head>\n<body style=\"font-family:sans-serif\">\n"
        "<h1>bpe-course slides</h1>\n<p>Arrow keys move; <kbd>s</kbd> opens the speaker "
        "view; <kbd>Esc</kbd> shows every slide.</p>\n"
        f"<ul>\n{items}\n</ul>\n</body></html>\n"
    )
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def build(notebooks: Sequence[Path], out_dir: Path, language: str = "en") -> list[Path]:
    """Copy the assets, then build a deck per notebook and the index page."""
    out_dir.mkdir(parents=True, exist_ok=True)
    copy_assets(out_dir)
    decks = [build_deck(notebook, out_dir, language) for notebook in notebooks]
    write_index(out_dir, decks)
    return decks


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, metavar="NOTEBOOK",
                        help="default: every notebook in notebooks/")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="the deck folder (default: build/slides)")
    parser.add_argument("--lang", default="en", metavar="CODE",
                        help="the decks' language, e.g. zh-CN for the Chinese edition (en)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", args.lang):
        parser.error(f"--lang {args.lang!r}: not a language code such as en or zh-CN")
    notebooks = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    for notebook in notebooks:
        if not notebook.is_file():
            parser.error(f"{notebook}: no such notebook")
    try:
        decks = build(notebooks, args.out, args.lang)
    except (SlidesSetupError, ValueError) as error:
        print(f"build_slides: {error}", file=sys.stderr)
        return 1
    for deck in decks:
        print(deck)
    print(f"{len(decks)} decks in {args.out}; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
