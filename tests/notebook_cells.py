"""Run chosen cells of a course notebook inside a test, to test the notebook's own code.

The exercise checks live in the notebooks (the package holds no notebook-only code), so a
test that wants to prove a check rejects a wrong answer loads the check's cells by tag,
runs them in a fresh namespace, then calls the checker on the wrong answer
(:func:`load_exercises`, :func:`assert_rejected`, :func:`assert_accepted`; the tests of
notebook ``NN`` are in ``test_exercises_NN.py``).

>>> cell = {"cell_type": "code", "metadata": {"tags": ["t"]}, "source": ["x = 1\\n", "y = x + 1"]}
>>> run_cells({"cells": [cell]}, "t")["y"]
2
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def load_notebook(name: str) -> dict[str, Any]:
    """The notebook ``notebooks/NAME`` (with or without ``.ipynb``) as parsed JSON."""
    path = NOTEBOOKS / (name if name.endswith(".ipynb") else name + ".ipynb")
    return json.loads(path.read_text(encoding="utf-8"))


def cells_tagged(notebook: dict[str, Any], tag: str) -> list[str]:
    """The sources of the code cells carrying ``tag``, in notebook order."""
    return [
        "".join(cell["source"])
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and tag in cell.get("metadata", {}).get("tags", [])
    ]


def run_cells(
    notebook: dict[str, Any] | str, tag: str, namespace: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Execute every code cell tagged ``tag`` in ``namespace``; return the namespace.

    Raises ``LookupError`` when no cell has the tag, so a renamed tag cannot turn a test
    into one that checks nothing.
    """
    if isinstance(notebook, str):
        notebook = load_notebook(notebook)
    sources = cells_tagged(notebook, tag)
    if not sources:
        raise LookupError(f"no code cell is tagged {tag!r}")
    namespace = {"__name__": "notebook_cells"} if namespace is None else namespace
    for source in sources:
        exec(compile(source, f"<cell tagged {tag}>", "exec"), namespace)
    return namespace


def run_cell_starting(notebook: str, start: str, namespace: dict[str, Any]) -> None:
    """Run the one code cell whose source starts with ``start`` (a lesson cell a solution
    needs); fail when no cell or several do, so an edited notebook cannot go unnoticed."""
    sources = [
        "".join(cell["source"])
        for cell in load_notebook(notebook)["cells"]
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith(start)
    ]
    assert len(sources) == 1, f"{len(sources)} cells start with {start!r}"
    exec(compile(sources[0], f"<cell {start}>", "exec"), namespace)


def load_exercises(name: str, **given: Any) -> dict[str, Any]:
    """The namespace of a notebook's checkers (tag ``exercise-checker``) and solutions (tag
    ``solution``).

    ``given`` stands in for names the solutions take from earlier cells of the notebook.
    """
    notebook = load_notebook(name)
    namespace = run_cells(notebook, "exercise-checker", {"__name__": "exercises", **given})
    return run_cells(notebook, "solution", namespace)


def verdict(capsys: Any, checker: Callable[..., bool], *answer: Any) -> tuple[bool, str]:
    """Run ``checker`` on ``answer``; return its verdict and what it printed."""
    capsys.readouterr()
    result = checker(*answer)
    return result, capsys.readouterr().out


def assert_rejected(capsys: Any, checker: Callable[..., bool], answer: tuple, hint: str) -> None:
    """The checker refuses ``answer``, says "Not yet: " and gives a hint containing ``hint``."""
    passed, printed = verdict(capsys, checker, *answer)
    assert passed is False, printed
    assert printed.startswith("Not yet: "), printed
    assert "Correct!" not in printed
    assert hint in printed, printed


def assert_accepted(capsys: Any, checker: Callable[..., bool], answer: tuple) -> None:
    """The checker accepts ``answer`` and says only "Correct!"."""
    passed, printed = verdict(capsys, checker, *answer)
    assert passed is True, printed
    assert printed == "Correct!\n", printed


def assert_rejected_in_chinese(capsys: Any, checker: Callable[..., bool], answer: tuple,
                               hint: str, english: str | None = None) -> None:
    """In the Chinese edition (``use_language("zh-CN")``) the checker refuses ``answer`` with
    its own Chinese hint, which contains ``hint`` and not the English hint's words
    ``english``; the language is put back afterwards."""
    from bpe_course.course.checks import harness

    before = harness._chosen
    harness.use_language("zh-CN")
    try:
        passed, printed = verdict(capsys, checker, *answer)
    finally:
        harness._chosen = before
    assert passed is False, printed
    assert printed.startswith("还差一点："), printed
    assert hint in printed, printed
    assert english is None or english not in printed, f"English left in: {english!r}\n{printed}"


def hinted_in_chinese(tables: dict[str, list[tuple[Any, str]]],
                      chinese: dict[str, list[str]]) -> pytest.MarkDecorator:
    """Parametrize a test with ``check, wrong, hint, english`` for every wrong answer of
    ``tables`` (``{check: [(wrong answer, English hint), ...]}``), its Chinese hint taken
    from ``chinese[check]`` in the same order, each case named by its check and Chinese hint.
    A wrong answer added to a table without its Chinese hint, or a check left out, is an
    error, not a case silently skipped."""
    assert tables.keys() == chinese.keys(), set(tables) ^ set(chinese)
    cases = [
        (check, wrong, zh, english)
        for check, wrongs in tables.items()
        for (wrong, english), zh in zip(wrongs, chinese[check], strict=True)
    ]
    return pytest.mark.parametrize(("check", "wrong", "hint", "english"), cases,
                                   ids=[f"{check}: {hint}" for check, _, hint, _ in cases])
