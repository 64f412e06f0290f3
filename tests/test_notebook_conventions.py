"""What every notebook with exercises promises: Run All keeps the learner's answer, the
committed notebook starts from blank answers, and it is clean for JupyterLab and slides.

Each notebook carries its own ``check_exercise`` (a notebook must run on its own): it checks
the learner's answer and hands later cells either that answer, when it is right, or the
reference solution, so the rest of the notebook still runs. Those helpers are tested here;
what each exercise's checker accepts and rejects is in ``test_exercises_NN.py``.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest
from notebook_cells import NOTEBOOKS, cells_tagged, load_exercises, load_notebook
from test_exercises_02 import GIVEN_02
from test_exercises_03 import GPT2_PARTS

#: Every notebook of the course; each has exercises.
ALL_NOTEBOOKS = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))


def test_every_notebook_has_its_exercise_tests():
    tests = NOTEBOOKS.parent / "tests"
    assert len(ALL_NOTEBOOKS) == 11  # 00-09 and 06b
    for name in ALL_NOTEBOOKS:
        assert (tests / f"test_exercises_{name[:2]}.py").exists(), name


def assigned_names(source: str) -> set[str]:
    """Names a cell defines at top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def learners_names(notebook: dict[str, Any]) -> set[str]:
    """The names the learner's cells (tag ``exercise``) define."""
    return set().union(*map(assigned_names, cells_tagged(notebook, "exercise")))


# Run All keeps the learner's answer -----------------------------------------------------------


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_solutions_and_checks_never_assign_the_learners_names(name):
    notebook = load_notebook(name)
    learners = learners_names(notebook)
    assert learners, "no exercise cells"
    for tag in ("solution", "exercise-checker", "exercise-check"):
        for source in cells_tagged(notebook, tag):
            assert not assigned_names(source) & learners, (tag, source)


def checked_names(source: str) -> set[str]:
    """The names in the first argument of each ``check_exercise(...)`` call (the learner's
    answer, or a tuple of answers checked together)."""
    return {
        name.id
        for call in ast.walk(ast.parse(source))
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "check_exercise"
        for name in ast.walk(call.args[0])
        if isinstance(name, ast.Name)
    }


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_every_learners_answer_goes_through_check_exercise(name):
    notebook = load_notebook(name)
    checked = set().union(*map(checked_names, cells_tagged(notebook, "exercise-check")))
    for learners in learners_names(notebook):
        assert learners in checked, f"{learners} is never checked"


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_learner_stubs_are_unwritten_in_the_committed_notebook(name):
    """nbval then verifies the solutions, and a learner starts from a blank answer."""
    for source in cells_tagged(load_notebook(name), "exercise"):
        unwritten = source.rstrip().endswith("\n    ...")  # a body of only a TODO and ``...``
        assert "raise NotImplementedError(" in source or "= ...  #" in source or unwritten, source


# Clean for JupyterLab and slides ------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_notebook_is_clean_for_jupyterlab_and_slides(name):
    notebook = load_notebook(name)
    assert notebook["metadata"]["kernelspec"] == {
        "display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"
    }
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        assert "NBVAL_" not in source, source
        assert "slide_type" in cell["metadata"].get("slideshow", {}), source
        tags = cell["metadata"].get("tags", [])
        if "solution" in tags:
            assert cell["metadata"]["jupyter"]["source_hidden"] is True, source
        if "plt.subplots" in source or "exercise-checker" in tags:
            assert "hide-input-on-slides" in tags, source


# check_exercise: a wrong or unwritten answer falls back to the solution, a right one is kept --


@pytest.mark.parametrize(
    ("name", "given"),
    [("01_bytes_and_utf8", {}),
     ("02_naive_bpe", GIVEN_02),
     ("03_gpt2_pretokenization", GPT2_PARTS)],
)
def test_check_exercise_keeps_a_wrong_answer_and_says_only_what_is_wrong(name, given, capsys):
    namespace = load_exercises(name, **given)
    check_exercise = namespace["check_exercise"]

    def wrong(*args):
        return None

    solutions = [v for k, v in namespace.items() if k.startswith("solution_") and callable(v)]
    assert solutions
    solution = solutions[-1]  # the last function exercise of the notebook
    checker = namespace["check_" + solution.__name__.removeprefix("solution_")]
    assert check_exercise(wrong, solution, checker) is solution
    printed = capsys.readouterr().out
    assert printed.startswith("Not yet") and "Correct!" not in printed

    def stub(*args):
        raise NotImplementedError("your turn")

    assert check_exercise(stub, solution, checker) is solution
    printed = capsys.readouterr().out  # the solution is checked quietly: no "Correct!"
    assert printed.startswith("`stub` is not written yet") and "Correct!" not in printed
    assert check_exercise(solution, solution, checker) is solution
    assert capsys.readouterr().out == "Correct!\n"


def unwritten(*args):
    raise NotImplementedError("your turn")


#: Exercises of notebooks 00 and 07: (notebook, the exercise's name).
EXERCISES_00_07 = [
    ("00_why_tokenization_matters", "reverse_ids"),
    ("00_why_tokenization_matters", "group_from_right"),
    ("07_tokenizers_in_the_wild", "o200k_word_pieces"),
    ("07_tokenizers_in_the_wild", "decode_pieces"),
]


@pytest.mark.parametrize(
    ("notebook", "exercise"), EXERCISES_00_07, ids=[exercise for _, exercise in EXERCISES_00_07]
)
def test_check_exercise_keeps_a_right_answer_and_sees_an_unwritten_one(
    capsys, notebook, exercise
):
    namespace = load_exercises(notebook)
    checker = namespace[f"check_{exercise}"]
    with pytest.raises(NotImplementedError):
        checker(unwritten)  # the checker must not swallow "not written yet"
    reference = namespace[f"solution_{exercise}"]

    def learners_answer(*args):
        return reference(*args)

    check_exercise = namespace["check_exercise"]
    assert check_exercise(learners_answer, reference, checker) is learners_answer
    assert check_exercise(unwritten, reference, checker) is reference
    assert "not written yet" in capsys.readouterr().out
