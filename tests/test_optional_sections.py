"""A learner who skips every optional section still runs each notebook top to bottom.

The guide's main path leaves out the sections whose heading starts with "Optional" (their
cells tagged ``optional``), so nothing on the main path may use a name that only an optional
cell defines, and an optional section is marked in full: its heading says so and every cell
up to the next heading of the same or a higher level carries the tag.
"""

from __future__ import annotations

import ast
import re

import pytest

from tests.notebook_cells import NOTEBOOKS, load_notebook

OPTIONAL = "optional"
ALL_NOTEBOOKS = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.M)
#: "Optional: ...", also after a section number ("3. Optional: ..."), or the Chinese "可选".
OPTIONAL_HEADING = re.compile(r"(\d+\.\s*)?(Optional|可选)")


def tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def defined_and_used(source: str) -> tuple[set[str], set[str]]:
    """Names a cell binds, and names it reads (magics and shell lines left out)."""
    lines = source.splitlines()
    code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set()
    defined, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else used).add(node.id)
        elif isinstance(node, ast.arg):  # a parameter is the function's own name
            defined.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return defined, used


def main_path_names_from_optional_cells(notebook: dict) -> list[str]:
    """Names a main-path cell reads that no main cell before it defines, but an optional cell does.

    The optional cell may come before the main cell or after it (a definition left behind in a
    section moved to the end of the notebook): either way a learner who skips it gets a NameError.
    """
    main_defined: set[str] = set()
    optional_only: dict[str, int] = {}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code" and OPTIONAL in tags(cell):
            for name in defined_and_used("".join(cell["source"]))[0]:
                optional_only.setdefault(name, index)
    found = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        defined, used = defined_and_used("".join(cell["source"]))
        if OPTIONAL in tags(cell):
            continue
        for name in sorted(used & optional_only.keys() - main_defined - defined):
            found.append(f"cell {index} uses {name!r}, defined only in optional cell "
                         f"{optional_only[name]}")
        main_defined |= defined
    return found


def optional_section_problems(notebook: dict) -> list[str]:
    """Optional headings whose section is not tagged in full, and tags outside such sections."""
    problems = []
    level = None  # the level of the optional heading we are under, if any
    for index, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        heading = HEADING.search(source) if cell["cell_type"] == "markdown" else None
        if heading and source.lstrip().startswith("#"):
            depth = len(heading.group(1))
            if level is not None and depth <= level:
                level = None
            if OPTIONAL_HEADING.match(heading.group(2)):
                level = depth
        inside = level is not None
        if inside and OPTIONAL not in tags(cell):
            problems.append(f"cell {index} is in an optional section but not tagged {OPTIONAL!r}")
        if not inside and OPTIONAL in tags(cell):
            problems.append(f"cell {index} is tagged {OPTIONAL!r} outside an optional section")
    return problems


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_the_main_path_needs_no_optional_cell(name):
    assert main_path_names_from_optional_cells(load_notebook(name)) == []


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_optional_sections_are_marked_in_full(name):
    assert optional_section_problems(load_notebook(name)) == []


def cell(kind: str, source: str, *cell_tags: str) -> dict:
    return {"cell_type": kind, "source": source, "metadata": {"tags": list(cell_tags)}}


def test_a_name_from_an_optional_cell_used_later_is_found():
    notebook = {"cells": [
        cell("code", "x = 1"),
        cell("markdown", "## Optional: faster", OPTIONAL),
        cell("code", "fast = 2\nx = 3", OPTIONAL),
        cell("markdown", "## Back"),
        cell("code", "print(x, fast)"),
    ]}
    assert main_path_names_from_optional_cells(notebook) == [
        "cell 4 uses 'fast', defined only in optional cell 2"]


def test_a_name_the_main_path_needs_from_a_later_optional_cell_is_found():
    notebook = {"cells": [
        cell("code", "print(Counter('ab'))"),
        cell("markdown", "## Optional: aside", OPTIONAL),
        cell("code", "from collections import Counter\nCounter('a')", OPTIONAL),
    ]}
    assert main_path_names_from_optional_cells(notebook) == [
        "cell 0 uses 'Counter', defined only in optional cell 2"]


def test_an_untagged_cell_in_an_optional_section_and_a_stray_tag_are_found():
    notebook = {"cells": [
        cell("markdown", "## Optional: aside", OPTIONAL),
        cell("markdown", "### detail"),
        cell("markdown", "## Main again"),
        cell("code", "y = 1", OPTIONAL),
    ]}
    assert optional_section_problems(notebook) == [
        "cell 1 is in an optional section but not tagged 'optional'",
        "cell 3 is tagged 'optional' outside an optional section"]
