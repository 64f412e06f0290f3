"""Notebooks 00-03 show and say only what a learner's own run shows.

Stored outputs and prose must hold on a learner's machine: a timing sentence is computed
from the run (the word printed agrees with the ratio printed beside it), a claim about GPT-2's
lone space holds outside English too, a slide is never one sentence pointing at the next, and
a tangent is marked as optional (heading and cell tag) so the course minutes can count it
apart.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from notebook_cells import NOTEBOOKS, load_notebook

EARLY = ["00_why_tokenization_matters", "01_bytes_and_utf8", "02_naive_bpe",
         "03_gpt2_pretokenization"]


def slides(notebook: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The cells of each slide and subslide, in order (skipped cells left out)."""
    shown: list[list[dict[str, Any]]] = []
    for cell in notebook["cells"]:
        kind = cell["metadata"].get("slideshow", {}).get("slide_type", "-")
        if kind in ("skip", "notes"):
            continue
        if kind in ("slide", "subslide") or not shown:
            shown.append([])
        shown[-1].append(cell)
    return shown


@pytest.mark.parametrize("name", EARLY)
def test_no_slide_is_a_lone_sentence_pointing_at_the_next(name):
    for cells in slides(load_notebook(name)):
        if len(cells) == 1 and cells[0]["cell_type"] == "markdown":
            text = "".join(cells[0]["source"]).strip()
            assert not (text.endswith(":") and not text.startswith("#")), text


def output_text(notebook: dict[str, Any], cell_id: str) -> str:
    cell = next(c for c in notebook["cells"] if c.get("id") == cell_id)
    return "".join("".join(o.get("text", "")) for o in cell["outputs"])


def test_timing_words_agree_with_the_ratios_printed_beside_them():
    printed = output_text(load_notebook("03_gpt2_pretokenization"), "fastre26")
    ratio = float(re.search(r"re takes ([0-9.]+)x the time regex takes", printed)[1])
    assert ("re is faster" in printed) == (ratio < 1), printed
    printed = output_text(load_notebook("02_naive_bpe"), "a566b5c4")
    spread = float(re.search(r"varies by a factor of ([0-9.]+)", printed)[1])
    assert ("roughly proportional" in printed) == (spread < 1.5), printed


@pytest.mark.parametrize("name", EARLY)
def test_no_prose_states_a_speed_direction_the_run_may_reverse(name):
    """Which engine is faster is printed by the timing cells, never asserted in prose."""
    for cell in load_notebook(name)["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            for claim in ("in less time", "has lost its lead", "Python's faster `re`",
                          "runs this kind of pattern faster", "close to straight lines"):
                assert claim not in text, (claim, text)


def test_the_lone_space_is_not_said_to_never_precede_a_word():
    """GPT-2 encodes " утро" as 220 + letters: the claim holds for English prose only."""
    from bpe_course.openai import gpt2

    assert gpt2().encode(" утро")[0] == 220
    texts = ["".join(c["source"]) for c in load_notebook(EARLY[0])["cells"]]
    texts.append((NOTEBOOKS / "INSTRUCTORS.md").read_text(encoding="utf-8"))
    for text in texts:
        assert "never puts before a word in ordinary text" not in text
        assert "token 220 (a lone space) is followed only by more whitespace" not in text
        assert "and token 220 is only ever followed by more whitespace" not in text


def test_the_re_tangent_of_03_is_an_optional_section():
    cells = load_notebook("03_gpt2_pretokenization")["cells"]
    headings = [i for i, c in enumerate(cells)
                if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## ")]
    optional = [i for i in headings if "".join(cells[i]["source"]).startswith("## Optional")]
    assert optional, "no optional section"
    for start in optional:
        end = next((i for i in headings if i > start), len(cells))
        assert "Optional section" in "".join(cells[start]["source"])  # the note at its start
        for cell in cells[start:end]:
            assert "optional" in cell["metadata"].get("tags", []), cell["source"][:1]
    tagged = [i for i, c in enumerate(cells) if "optional" in c["metadata"].get("tags", [])]
    assert all(any(s <= i for s in optional) for i in tagged)
