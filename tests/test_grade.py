"""The class grader: runs learners' notebooks and reads what each exercise check printed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.grade import exercise_name, grade_notebook, judge, main  # noqa: E402


def _check_exercise_source() -> str:
    """The course's own check_exercise helper, imported as the notebooks import it."""
    return "from bpe_course.course.checks.harness import check_exercise"


def check(source: str):
    cell = new_code_cell(source)
    cell.metadata["tags"] = ["exercise-check"]
    return cell


def learner_notebook(path: Path, setup: str | None = None) -> Path:
    """A learner's notebook: ``setup`` (the harness and a checker for ``double``), then the
    exercise unwritten, written wrong, written right, and a check of a name never defined."""
    if setup is None:
        setup = (
            _check_exercise_source() + "\n\n"
            "def solution_double(x):\n    return 2 * x\n\n"
            "def check_double(f):\n    ok = f(3) == 6\n"
            "    print('Correct!' if ok else f'double(3) should be 6, got {f(3)}')\n"
            "    return ok\n\n"
            "def double(x):\n    raise NotImplementedError('your turn')")
    nb = new_notebook(cells=[
        new_code_cell(setup),
        check("check_exercise(double, solution_double, check_double)"),
        new_code_cell("def double(x):\n    return x + 2"),
        check("check_exercise(double, solution_double, check_double)"),
        new_code_cell("def double(x):\n    return x * 2"),
        check("answer = check_exercise(double, solution_double, check_double)"),
        check("check_exercise(undefined_name, solution_double, check_double)"),
    ])
    nbformat.write(nb, path)
    return path


def test_grades_unwritten_wrong_correct_and_broken(tmp_path):
    grades = grade_notebook(learner_notebook(tmp_path / "learner.ipynb"))
    assert [g.status for g in grades] == ["not written", "wrong", "correct", "error"]
    assert grades[1].detail == "double(3) should be 6, got 5"
    assert grades[3].detail.startswith("NameError")
    assert {g.exercise for g in grades[:3]} == {"double"}


def test_the_command_prints_a_row_per_exercise(tmp_path, capsys):
    learner_notebook(tmp_path / "a.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    assert main([str(tmp_path)]) == 1  # one notebook could not be read
    out = capsys.readouterr().out
    assert len(re.findall(r"a\.ipynb\s+double\s+", out)) == 3
    assert "broken.ipynb: cannot be read as a notebook" in out
    assert "2 notebooks: 1 correct, 1 error, 1 not written, 1 wrong" in out


def test_judge_and_names():
    assert judge("Correct!\n", None) == ("correct", "")
    assert judge("`train` is not written yet: checking the reference solution instead.\n"
                 "Correct!\n", None) == ("not written", "")
    wrong = "ties must compare bytes\n(Until yours passes, later cells use `solution_train`.)\n"
    assert judge(wrong, None) == ("wrong", "ties must compare bytes")
    assert judge("", None) == ("wrong", "no output")
    assert exercise_name("use = check_exercise((four_fives, five_fives),\n  (a, b), c)") == (
        "four_fives, five_fives")
    assert exercise_name("x = check_exercise(train, solution_train, check_train)") == "train"


def chinese_learner_notebook(path: Path) -> Path:
    """A learner's notebook of the Chinese edition: the same checks, the harness in Chinese."""
    return learner_notebook(path, setup=(
        "from bpe_course.course.checks.harness import (\n"
        "    attempt, check_exercise, correct, not_yet, use_language)\n\n"
        "use_language('zh-CN')\n\n"
        "def solution_double(x):\n    return 2 * x\n\n"
        "def check_double(f):\n    got, error = attempt(f, 3)\n"
        "    if got == 6:\n        return correct()\n"
        "    return not_yet(error or f'double(3) should be 6, got {got}',\n"
        "                   zh=error or f'double(3) 应该是 6，却得到 {got}')\n\n"
        "def double(x):\n    raise NotImplementedError('your turn')"))


def test_a_chinese_notebook_is_graded_as_an_english_one(tmp_path):
    grades = grade_notebook(chinese_learner_notebook(tmp_path / "学员.ipynb"))
    assert [g.status for g in grades] == ["not written", "wrong", "correct", "error"]
    assert grades[1].detail == "还差一点：double(3) 应该是 6，却得到 5"
    assert grades[3].detail.startswith("NameError")
    assert {g.exercise for g in grades[:3]} == {"double"}


def test_judge_reads_the_chinese_verdicts():
    assert judge("正确！\n", None) == ("correct", "")
    assert judge("`train` 还没有写：先在上面写好它，再运行这个单元格。\n"
                 "（在那之前，后面的单元格用参考答案。）\n", None) == ("not written", "")
    wrong = ("还差一点：并列时要比较字节\n"
             "（在你的答案通过之前，后面的单元格用 `solution_train`。）\n")
    assert judge(wrong, None) == ("wrong", "还差一点：并列时要比较字节")
    assert judge("正确！\n（在你的答案通过之前，后面的单元格用 `x`。）\n", None)[0] == "wrong"


def test_every_language_has_every_line_the_grader_reads():
    from bpe_course.course.checks.harness import MESSAGES

    for language, table in MESSAGES.items():
        assert table.keys() == MESSAGES["en"].keys(), language
        assert table["not_written"] in table["stub"], language


def test_the_language_comes_from_the_environment_unless_a_notebook_chose(monkeypatch, capsys):
    from bpe_course.course.checks import harness

    monkeypatch.setattr(harness, "_chosen", None)
    monkeypatch.setenv(harness.LANGUAGE_VARIABLE, "zh-CN")
    harness.correct()
    monkeypatch.setenv(harness.LANGUAGE_VARIABLE, "klingon")  # never stops Run All
    harness.correct()
    harness.use_language("zh-CN")
    monkeypatch.setenv(harness.LANGUAGE_VARIABLE, "en")
    harness.not_yet("no", zh="不对")
    assert capsys.readouterr().out == "正确！\nCorrect!\n还差一点：不对\n"
