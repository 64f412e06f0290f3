"""Measure each notebook's content, and turn it into minutes for the instructor guide.

The numbers come from the notebooks themselves: slides (cells starting a slide or subslide
that are shown), words of prose and lines of code on the slides, exercises and the length
of their reference solutions, and how long the cells took the last time the notebook was
executed (the timing nbconvert records in each cell's metadata).

Minutes are an estimate from a stated rule, so they can be recomputed when a notebook
changes: 1 minute per 120 words of prose (read and explained), 1 minute per 6 lines of code
walked through or typed, half a minute per slide for the change and a question, and for
each exercise 4 minutes plus 1 per line of the reference solution (at most 15). Measured
run time is added (it is short: every notebook runs in well under a minute).

Usage: ``python -m tools.course_stats [NOTEBOOK ...]``
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat

from tools.build_slides import HIDE_INPUT_TAG, NOTEBOOKS, SKIP_TAG

WORDS_PER_MINUTE = 120
CODE_LINES_PER_MINUTE = 6
MINUTES_PER_SLIDE = 0.5
EXERCISE_BASE_MINUTES = 4
EXERCISE_MAX_MINUTES = 15


@dataclass
class Content:
    notebook: str
    slides: int = 0
    words: int = 0
    code_lines: int = 0
    exercises: int = 0
    exercise_minutes: float = 0.0
    run_seconds: float = 0.0

    @property
    def talk_minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
                + self.slides * MINUTES_PER_SLIDE)

    @property
    def total_minutes(self) -> float:
        return self.talk_minutes + self.exercise_minutes + self.run_seconds / 60


def _shown(cell) -> bool:
    slide_type = cell.metadata.get("slideshow", {}).get("slide_type", "-")
    return slide_type not in ("skip", "notes") and SKIP_TAG not in cell.metadata.get("tags", [])


def _seconds(cell) -> float:
    timing = cell.metadata.get("execution", {})
    try:
        start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return 0.0
    return max((end - start).total_seconds(), 0.0)


def measure(path: Path) -> Content:
    nb = nbformat.read(path, as_version=4)
    content = Content(path.stem)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        content.run_seconds += _seconds(cell)
        if "solution" in tags:
            lines = [line for line in cell.source.splitlines() if line.strip()]
            content.exercises += 1
            content.exercise_minutes += min(EXERCISE_BASE_MINUTES + len(lines),
                                            EXERCISE_MAX_MINUTES)
        if not _shown(cell):
            continue
        slide_type = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        content.slides += slide_type in ("slide", "subslide")
        if cell.cell_type == "markdown":
            content.words += len(re.findall(r"\w+", re.sub(r"`[^`]*`", "x", cell.source)))
        elif cell.cell_type == "code" and HIDE_INPUT_TAG not in tags:
            content.code_lines += sum(1 for line in cell.source.splitlines() if line.strip())
    return content


def table(contents: Sequence[Content]) -> str:
    rows = ["| notebook | slides | words | code lines | exercises | run (s) | talk (min) "
            "| exercises (min) | total (min) |", "|" + " --- |" * 9]
    for c in contents:
        rows.append(f"| {c.notebook} | {c.slides} | {c.words:,} | {c.code_lines} | "
                    f"{c.exercises} | {c.run_seconds:.0f} | {c.talk_minutes:.0f} | "
                    f"{c.exercise_minutes:.0f} | {c.total_minutes:.0f} |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    print(table([measure(path) for path in notebooks]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
