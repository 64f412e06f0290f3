"""Measure each notebook's content, and turn it into minutes for the instructor guide.

The numbers come from the notebooks themselves: slides (cells starting a slide or subslide
that are shown), words of prose and lines of code on the slides, and the exercises, each
weighed by its reference solution. Cells tagged ``optional`` (the sections whose heading
starts with "Optional") are counted apart: the main path is what every learner does, the
optional part what a group may add.

Minutes are an estimate from a stated rule, so they can be recomputed when a notebook
changes:

- talk: 1 minute per 120 words of prose (read and explained), 1 minute per 6 lines of code
  walked through or typed, half a minute per slide for the change and a question;
- an exercise that writes a value (a line or two, no ``def``): 4 minutes plus 1 per line;
- an exercise that writes a function: 8 minutes (read the task, think, write, run the
  check, read a hint, fix), plus 1.5 per line of the reference solution beyond 4, plus 8 for
  each further function or method it builds (a build-it exercise: a class, or a pair such as
  save and load), at most 45 minutes.

Notebooks run in well under a minute each, so running them adds nothing measurable.

Usage: ``python -m tools.course_stats [NOTEBOOK ...]``
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools.build_slides import HIDE_INPUT_TAG, NOTEBOOKS, SKIP_TAG

WORDS_PER_MINUTE = 120
CODE_LINES_PER_MINUTE = 6
MINUTES_PER_SLIDE = 0.5
VALUE_EXERCISE_MINUTES = 4
FUNCTION_EXERCISE_MINUTES = 8
FREE_SOLUTION_LINES = 4
MINUTES_PER_SOLUTION_LINE = 1.5
MINUTES_PER_FURTHER_FUNCTION = 8
EXERCISE_MAX_MINUTES = 45
OPTIONAL_TAG = "optional"


@dataclass
class Part:
    """The content of one part of a notebook: its main path, or its optional sections."""

    slides: int = 0
    words: int = 0
    code_lines: int = 0
    exercises: int = 0
    exercise_minutes: float = 0.0

    @property
    def talk_minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
                + self.slides * MINUTES_PER_SLIDE)

    @property
    def total_minutes(self) -> float:
        return self.talk_minutes + self.exercise_minutes


@dataclass
class Content:
    notebook: str
    main: Part = field(default_factory=Part)
    optional: Part = field(default_factory=Part)


def _shown(cell) -> bool:
    slide_type = cell.metadata.get("slideshow", {}).get("slide_type", "-")
    return slide_type not in ("skip", "notes") and SKIP_TAG not in cell.metadata.get("tags", [])


def functions_built(source: str) -> int:
    """Functions and methods a solution defines (a class counts its methods).

    >>> source = "def a():\\n    pass\\nclass B:\\n    def c(self): ...\\n    def d(self): ..."
    >>> functions_built(source)
    3
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 1
    count = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            count += 1
        elif isinstance(node, ast.ClassDef):
            count += max(1, sum(isinstance(n, ast.FunctionDef) for n in node.body))
    return count


def exercise_minutes(source: str) -> float:
    """Minutes for an exercise whose reference solution is ``source`` (see the module's rule).

    >>> exercise_minutes("answer = 42")
    5.0
    >>> exercise_minutes("def f(x):\\n    return x + 1")
    8.0
    >>> exercise_minutes("def f(x):\\n" + "    x += 1\\n" * 11 + "    return x")
    21.5
    """
    lines = [line for line in source.splitlines()
             if line.strip() and not line.strip().startswith("#")]
    functions = functions_built(source)
    if functions == 0:
        return float(VALUE_EXERCISE_MINUTES + len(lines))
    minutes = (FUNCTION_EXERCISE_MINUTES
               + MINUTES_PER_SOLUTION_LINE * max(0, len(lines) - FREE_SOLUTION_LINES)
               + MINUTES_PER_FURTHER_FUNCTION * (functions - 1))
    return float(min(minutes, EXERCISE_MAX_MINUTES))


def measure(path: Path) -> Content:
    nb = nbformat.read(path, as_version=4)
    content = Content(path.stem)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        part = content.optional if OPTIONAL_TAG in tags else content.main
        if "solution" in tags:
            part.exercises += 1
            part.exercise_minutes += exercise_minutes(cell.source)
        if not _shown(cell):
            continue
        slide_type = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        part.slides += slide_type in ("slide", "subslide")
        if cell.cell_type == "markdown":
            part.words += len(re.findall(r"\w+", re.sub(r"`[^`]*`", "x", cell.source)))
        elif cell.cell_type == "code" and HIDE_INPUT_TAG not in tags:
            part.code_lines += sum(1 for line in cell.source.splitlines() if line.strip())
    return content


def hours(minutes: float) -> str:
    return f"{minutes:.0f} min ({minutes / 60:.1f} h)"


def table(contents: Sequence[Content]) -> str:
    rows = ["| notebook | slides | words | code lines | exercises | talk (min) "
            "| exercises (min) | main path (min) | optional (min) |", "|" + " --- |" * 9]
    for c in contents:
        m, o = c.main, c.optional
        optional = f"{o.total_minutes:.0f} ({o.exercises} ex.)" if o.total_minutes else "-"
        rows.append(f"| {c.notebook} | {m.slides} | {m.words:,} | {m.code_lines} | "
                    f"{m.exercises} | {m.talk_minutes:.0f} | {m.exercise_minutes:.0f} | "
                    f"{m.total_minutes:.0f} | {optional} |")
    main = sum(c.main.total_minutes for c in contents)
    optional = sum(c.optional.total_minutes for c in contents)
    exercises = sum(c.main.exercises for c in contents)
    rows.append(f"\nMain path: {hours(main)}, {exercises} exercises. "
                f"Optional sections: {hours(optional)}, "
                f"{sum(c.optional.exercises for c in contents)} exercises.")
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
