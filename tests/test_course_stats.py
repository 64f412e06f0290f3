"""The course's minutes: optional sections counted apart, build-it exercises weighed more."""

from __future__ import annotations

import nbformat

from tools import course_stats


def cell(kind, source, tags=(), slide="-"):
    made = (nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell)(source)
    made.metadata = {"slideshow": {"slide_type": slide}, "tags": list(tags)}
    return made


def test_optional_cells_are_counted_apart(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell("md", "## Main " + "word " * 119, slide="slide"),
        cell("code", "def solution_f(x):\n    return x", ["solution"]),
        cell("md", "## Optional: a tangent " + "word " * 236, ["optional"], slide="slide"),
        cell("code", "a = 1\nb = 2", ["optional"]),
        cell("code", "answer = 1", ["solution", "optional"]),
    ]
    path = tmp_path / "00_x.ipynb"
    nbformat.write(nb, path)
    content = course_stats.measure(path)
    assert (content.main.words, content.main.slides, content.main.exercises) == (120, 1, 1)
    assert (content.optional.words, content.optional.code_lines) == (239, 3)
    assert content.optional.exercises == 1 and content.optional.exercise_minutes == 5
    assert content.main.total_minutes == 1 + 2 / 6 + 0.5 + 8
    assert content.optional.total_minutes == 239 / 120 + 3 / 6 + 0.5 + 5
    printed = course_stats.table([content])
    assert "Main path: 10 min (0.2 h), 1 exercises" in printed
    assert "Optional sections: 8 min (0.1 h), 1 exercises" in printed


def test_a_build_it_exercise_takes_longer_than_a_one_liner():
    one_liner = course_stats.exercise_minutes("def f(x):\n    return x + 1")
    build_it = course_stats.exercise_minutes(
        "class T:\n" + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(4)))
    assert one_liner == 8 and build_it == 8 + 1.5 * 5 + 8 * 3
    assert course_stats.exercise_minutes("def f():\n" + "    pass\n" * 60) == 45
