"""Grade learners' notebooks: which exercises each learner has right, wrong, or not written.

Every exercise ends with a check cell (tag ``exercise-check``) that calls
``check_exercise(learner's answer, reference solution, checker)``. The checker prints
``Correct!`` or a hint naming the mistake; when the answer is still the stub, the cell says
"not written yet" and checks the reference solution instead. The Chinese edition's checks
say the same in Chinese (``正确！``, ``还没有写``) and are graded the same way. This script
runs each notebook top to bottom (a copy, in the notebook's own folder, so nothing is
written back), reads what each check cell printed, and prints one row per exercise:

    learner/02_naive_bpe.ipynb  train   wrong: ties must compare the pairs' bytes ...

Usage: ``python -m tools.grade NOTEBOOK_OR_FOLDER ...`` (``make grade SUBMISSIONS=dir``).
It exits with 1 when a notebook could not be run at all, else 0: wrong answers are the
learners' business, not a failure of the grading.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from bpe_course.course.checks.harness import words

CHECK_TAG = "exercise-check"

#: What a check prints, in every language the harness speaks.
CORRECT, NOT_WRITTEN = words("correct"), words("not_written")
#: The line under a wrong answer: "(Until yours passes, ...)" and its translations.
UNTIL_YOURS = tuple(line.split("{")[0].lstrip("(（") for line in words("until_yours"))


@dataclass(frozen=True)
class Grade:
    notebook: Path
    exercise: str
    status: str  # "correct", "wrong", "not written" or "error"
    detail: str = ""

    def row(self) -> str:
        detail = f": {self.detail}" if self.detail else ""
        return f"{str(self.notebook):40} {self.exercise:28} {self.status}{detail}"


def exercise_name(source: str) -> str:
    """The learner's name(s) a check cell checks, e.g. ``train`` or ``four_fives, five_fives``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check_exercise"
                and node.args):
            answer = node.args[0]
            parts = answer.elts if isinstance(answer, ast.Tuple) else [answer]
            return ", ".join(ast.unparse(part) for part in parts)
    return source.strip().splitlines()[0][:28] if source.strip() else "?"


def _printed(cell) -> tuple[str, str | None]:
    """What a cell printed, and the error it raised (if any)."""
    text, error = [], None
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            text.append(output.get("text", ""))
        elif output.get("output_type") == "error":
            error = f"{output.get('ename')}: {output.get('evalue')}"
        elif "text/plain" in output.get("data", {}):
            text.append(output["data"]["text/plain"])
    return "".join(text), error


def judge(printed: str, error: str | None) -> tuple[str, str]:
    """The status and detail for what one check cell printed."""
    if error:
        return "error", error
    if any(words in printed for words in NOT_WRITTEN):
        return "not written", ""
    lines = [line for line in printed.splitlines() if line.strip()]
    hints = [line for line in lines if not any(until in line for until in UNTIL_YOURS)]
    if lines and lines[-1].strip() in CORRECT and hints == lines:
        return "correct", ""
    hint = hints[0] if hints else "no output"
    return "wrong", hint.strip()


def grade_notebook(path: Path, timeout: int = 300) -> list[Grade]:
    """Run ``path`` (a copy in memory) and grade each of its check cells."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except (CellTimeoutError, DeadKernelError) as error:
        return [Grade(path, "(whole notebook)", "error", f"{type(error).__name__}: {error}")]
    grades = []
    for cell in nb.cells:
        if cell.cell_type == "code" and CHECK_TAG in cell.metadata.get("tags", []):
            status, detail = judge(*_printed(cell))
            grades.append(Grade(path, exercise_name(cell.source), status, detail))
    return grades


def notebooks_in(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(path)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, metavar="NOTEBOOK_OR_FOLDER")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (300)")
    args = parser.parse_args(argv)
    missing = [path for path in args.paths if not path.exists()]
    if missing:
        parser.error(f"{missing[0]}: no such notebook or folder")
    notebooks = notebooks_in(args.paths)
    if not notebooks:
        parser.error("no .ipynb files found")
    failed = False
    totals: dict[str, int] = {}
    for notebook in notebooks:
        try:
            grades = grade_notebook(notebook, args.timeout)
        except (nbformat.reader.NotJSONError, nbformat.ValidationError, OSError) as error:
            print(f"{notebook}: cannot be read as a notebook ({error})")
            failed = True
            continue
        for grade in grades:
            print(grade.row())
            totals[grade.status] = totals.get(grade.status, 0) + 1
        failed = failed or any(g.exercise == "(whole notebook)" for g in grades)
    summary = ", ".join(f"{count} {status}" for status, count in sorted(totals.items()))
    print(f"{len(notebooks)} notebooks: {summary or 'no exercise checks found'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
