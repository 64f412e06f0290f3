"""The notebooks' stored outputs stay true on a learner's machine, checked without running.

nbval re-executes the notebooks; these tests only read the committed JSON, so they take a
second and name the cell to fix. What a learner must never see in a stored output:

- a progress bar stopped below 100% (a widget saved before it finished, or a bar's first
  state): the finished bar is what a run ends with;
- a timing direction ("faster", "slower") typed into the code: a learner's 2-core machine
  may reverse it. A cell whose output states a direction carries the tag
  ``computed-claim``, and chooses each such word by a condition on what it measured
  (``"faster" if ours < theirs else "slower"``);
- an absolute path of the machine that ran it (``/work``, ``/root``, ``/home/...``,
  ``/tmp/...``), or a result read from outside the repository, which a fresh clone lacks;
- a matplotlib object's repr (``Text(0.5, 1.0, '...')``, ``[<matplotlib.lines.Line2D ...>]``)
  above a plot, from a cell whose last line returned an artist;
- a batch run's per-cell metadata (nbconvert's ``execution`` timestamps), which JupyterLab
  drops on the first save: ``python -m tools.strip_run_metadata notebooks/*.ipynb``.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# tools/ sits beside bpe_course/ but is not installed; make it importable from any cwd.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools import strip_run_metadata  # noqa: E402
from tools.strip_run_metadata import RUN_KEYS  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK_NAMES = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))

#: The tag of a cell whose output states a timing direction chosen from its own numbers.
COMPUTED_CLAIM = "computed-claim"

#: Words that state which of two timed things won.
DIRECTION = re.compile(r"\b(faster|slower|quicker|speed-?ups?|slow-?downs?)\b", re.IGNORECASE)

#: A tqdm bar's percentage: ``pretokenize:  37%|███▋      | ...``.
BAR = re.compile(r"(\d{1,3})%\|")

#: Absolute paths that exist only on the machine that ran the notebook.
MACHINE_PATH = re.compile(
    r"(?<![\w.~-])(?:/(?:work|root|home|Users|tmp|var/folders|private/var|mnt|opt)(?=/|\b)"
    r"|[A-Za-z]:\\(?:Users|Temp)\\)"
)

#: Code that reads from outside the repository (a notebook runs in notebooks/, so two
#: levels up is beside the clone) or from the home folder.
OUTSIDE_REPOSITORY = re.compile(
    r"\.parent\s*\.parent|\.parents\[\s*[1-9]\s*\]|\.\./\.\.|Path\.home\(\)|expanduser\("
    r"|environ\[\s*['\"]HOME['\"]\s*\]"
)

#: What a cell prints when its last line returns a matplotlib artist instead of None.
ARTIST_REPR = re.compile(
    r"^\[?(?:Text\(|<matplotlib\.|<(?:BarContainer|ErrorbarContainer|StemContainer|Figure"
    r"|Axes|AxesSubplot|Legend|Line2D)\b|\(<Figure)"
)

CHECKS = ("progress", "timing", "paths", "reprs", "run-metadata")


@dataclass(frozen=True)
class Finding:
    """One stored output (or metadata entry) that a fresh run on a learner's machine belies."""

    check: str
    cell: int
    cell_id: str
    message: str

    def __str__(self) -> str:
        return f"cell {self.cell} (id {self.cell_id}) [{self.check}]: {self.message}"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def output_texts(cell: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each output of a code cell with the text a reader sees (stream, plain, HTML, error)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            yield output, _text(output.get("text"))
        elif output.get("output_type") == "error":
            yield output, "\n".join(output.get("traceback", []))
        else:
            data = output.get("data", {})
            for kind in ("text/plain", "text/html", "text/markdown"):
                if kind in data:
                    yield output, _text(data[kind])


def shown_lines(text: str) -> list[str]:
    """The lines a terminal or notebook shows: after a carriage return, only the last part."""
    return [line.split("\r")[-1] for line in text.split("\n")]


def _tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _python(source: str) -> ast.Module | None:
    """The cell's code without IPython magics and shell lines; None if it does not parse."""
    lines = [line for line in source.split("\n") if not line.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def chosen_by_a_condition(source: str, word: str) -> bool:
    """True when every string literal holding ``word`` is a branch of an ``if`` on a comparison.

    ``"faster" if ours < theirs else "slower"`` and ``if ratio > 1: word = "faster"`` qualify;
    ``f"{ratio:.0f}x faster"`` on its own does not, because it reads "faster" whatever
    the numbers are. A cell that holds no such literal (the word comes from a helper) must
    still compare something.
    """
    tree = _python(source)
    if tree is None:
        return False
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    guarded: set[int] = set()
    compares = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.IfExp, ast.If)) and any(
            isinstance(part, ast.Compare) for part in ast.walk(node.test)
        ):
            compares = True
            branches = [node.body, node.orelse]
            for branch in branches:
                for stmt in branch if isinstance(branch, list) else [branch]:
                    guarded |= {id(part) for part in ast.walk(stmt)}
    literals = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and pattern.search(node.value)
    ]
    return compares and all(id(literal) in guarded for literal in literals)


def findings(notebook: dict[str, Any]) -> list[Finding]:
    """Everything in ``notebook``'s stored outputs and cell metadata that a fresh run belies."""
    found: list[Finding] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        def add(check: str, message: str, index: int = index, cell: dict = cell) -> None:
            found.append(Finding(check, index, str(cell.get("id", "?")), message))

        stamps = [key for key in RUN_KEYS if key in cell.get("metadata", {})]
        if stamps:
            add("run-metadata", f"cell metadata holds {', '.join(stamps)} from a batch run")
        if cell.get("cell_type") != "code":
            continue
        source = _text(cell.get("source"))
        words: set[str] = set()
        for output, text in output_texts(cell):
            for line in shown_lines(text):
                for match in BAR.finditer(line):
                    if int(match.group(1)) < 100:
                        add("progress", f"a progress bar stored at {match.group(1)}%: "
                                        f"{line.strip()[:70]!r}")
            for match in MACHINE_PATH.finditer(text):
                end = text.find("\n", match.start())
                add("paths", "a path of the machine that ran it: "
                             f"{text[match.start():end if end >= 0 else None][:70]!r}")
            if output.get("output_type") == "execute_result" and ARTIST_REPR.match(text.strip()):
                add("reprs", f"a matplotlib repr {text.strip()[:60]!r}: end the cell with "
                             "plt.show() or a semicolon")
            words |= {match.group(1).lower() for match in DIRECTION.finditer(text)}
        if cell.get("outputs") and OUTSIDE_REPOSITORY.search(source):
            add("paths", "reads from outside the repository "
                         f"({OUTSIDE_REPOSITORY.search(source).group()}): a fresh clone lacks "
                         "it, so its stored output is not what a learner sees")
        if words:
            if COMPUTED_CLAIM not in _tags(cell):
                add("timing", f"its output says {', '.join(sorted(words))} but the cell is not "
                              f"tagged {COMPUTED_CLAIM} (the word must come from the run)")
            else:
                for word in sorted(words):
                    if not chosen_by_a_condition(source, word):
                        add("timing", f"says {word!r} whatever its numbers are: choose the "
                                      "word by comparing the measured times")
    return found


def load(name: str) -> dict[str, Any]:
    return json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))


# The detectors, on small notebooks ----------------------------------------------------------


def code(source: str, *outputs: dict[str, Any], tags: tuple[str, ...] = (),
         **metadata: Any) -> dict[str, Any]:
    meta = dict(metadata, **({"tags": list(tags)} if tags else {}))
    return {"cell_type": "code", "id": "c0ffee", "source": source, "metadata": meta,
            "outputs": list(outputs), "execution_count": 1}


def stdout(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def result(text: str) -> dict[str, Any]:
    return {"output_type": "execute_result", "data": {"text/plain": text}, "metadata": {},
            "execution_count": 1}


def checks_of(*cells: dict[str, Any]) -> list[str]:
    return [finding.check for finding in findings({"cells": list(cells)})]


def test_a_frozen_progress_bar_is_found_and_a_finished_one_passes():
    widget = {"output_type": "display_data", "metadata": {}, "data": {
        "application/vnd.jupyter.widget-view+json": {"model_id": "x"},
        "text/plain": "pretokenize :   0%|          | 0.00/4.00M [00:00<?, ?B/s]"}}
    assert checks_of(code("train(progress=True)", widget)) == ["progress"]
    done = "merges: 100%|██████████| 1743/1743 [00:03<00:00, 550merge/s]"
    assert checks_of(code("train(progress=True)", stdout(done))) == []
    # A bar redrawn with carriage returns shows only its last state.
    redrawn = "merges:  10%|█ | 1/10\rmerges:  50%|█████ | 5/10\r" + done.replace("1743", "10")
    assert checks_of(code("train(progress=True)", stdout(redrawn + "\n"))) == []
    assert checks_of(code("train(progress=True)", stdout("merges:  50%|█████ | 5/10\n"))) \
        == ["progress"]


def test_a_timing_word_must_be_tagged_and_chosen_by_the_numbers():
    fixed = 'print(f"{slow / fast:.0f}x faster")'
    assert checks_of(code(fixed, stdout("5x faster\n"))) == ["timing"]
    assert checks_of(code(fixed, stdout("5x faster\n"), tags=(COMPUTED_CLAIM,))) == ["timing"]
    chosen = ('word = "faster" if fast < slow else "slower"\n'
              'print(f"{max(slow, fast) / min(slow, fast):.1f}x {word}")')
    assert checks_of(code(chosen, stdout("1.4x faster\n"), tags=(COMPUTED_CLAIM,))) == []
    assert checks_of(code(chosen, stdout("1.4x faster\n"))) == ["timing"]  # untagged
    statement = ("if fast < slow:\n    print('faster')\nelse:\n    print('slower')")
    assert checks_of(code(statement, stdout("faster\n"), tags=(COMPUTED_CLAIM,))) == []
    # A condition that is there, but does not choose the word, is not enough.
    half = ('print("faster" if True else "")\nprint(f"{r:.1f}x slower")')
    assert checks_of(code(half, stdout("faster\n2.0x slower\n"), tags=(COMPUTED_CLAIM,))) \
        == ["timing", "timing"]
    assert checks_of(code("print(len(x))", stdout("12\n"))) == []


def test_machine_paths_and_reads_from_outside_the_clone_are_found():
    assert checks_of(code("print(path)", stdout("saved /work/main/build/x.json\n"))) == ["paths"]
    assert checks_of(code("print(path)", stdout("wrote /tmp/tmpab12/x.model\n"))) == ["paths"]
    assert checks_of(code("print(path)", result("PosixPath('/home/ann/x')"))) == ["paths"]
    assert checks_of(code("print(path)", stdout("see data/corpus.txt and a/tmp/b\n"))) == []
    outside = code('ref = Path.cwd().parent.parent / "shared"\nprint(ref.exists())',
                   stdout("True\n"))
    assert checks_of(outside) == ["paths"]
    assert checks_of(code('here = Path.cwd().parent / "data"', stdout("ok\n"))) == []


def test_matplotlib_reprs_are_found_and_a_figures_plain_text_is_not():
    assert checks_of(code("ax.set_title('x')", result("Text(0.5, 1.0, 'x')"))) == ["reprs"]
    assert checks_of(code("plt.plot(xs)", result("[<matplotlib.lines.Line2D at 0x7f>]"))) \
        == ["reprs"]
    figure = {"output_type": "display_data", "metadata": {}, "data": {
        "image/png": "iVBORw0KGgo=", "text/plain": "<Figure size 700x350 with 1 Axes>"}}
    assert checks_of(code("plt.show()", figure)) == []
    assert checks_of(code("x", result("'Text(...) in a string'"))) == []


def test_run_metadata_is_found_in_any_cell():
    stamp = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    markdown = {"cell_type": "markdown", "id": "m", "source": "hi", "metadata": {}}
    assert checks_of(code("x = 1", execution=stamp), markdown) == ["run-metadata"]


# The course's notebooks ----------------------------------------------------------------------

def notebook_checks() -> list[Any]:
    params = []
    for name in NOTEBOOK_NAMES:
        for check in CHECKS:
            params.append(pytest.param(name, check, id=f"{name[:2]}-{check}"))
    return params


@pytest.mark.parametrize(("name", "check"), notebook_checks())
def test_stored_outputs_are_true_on_a_fresh_clone(name, check):
    found = [str(finding) for finding in findings(load(name)) if finding.check == check]
    assert not found, f"{name}.ipynb:\n" + "\n".join(found[:20]) + (
        f"\n... and {len(found) - 20} more" if len(found) > 20 else "")


def test_every_notebook_is_checked():
    assert len(NOTEBOOK_NAMES) == 11  # 00-09 and 06b


# The tool that strips a run's metadata -------------------------------------------------------


def write_notebook(path: Path, cells: list[dict[str, Any]]) -> None:
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")


def test_strip_removes_timestamps_keeps_ids_and_is_idempotent(tmp_path):
    stamp = {"iopub.execute_input": "2026-01-01T00:00:00Z", "shell.execute_reply": "x"}
    path = tmp_path / "n.ipynb"
    write_notebook(path, [
        code("print('é')", stdout("é\n"), execution=stamp, tags=("keep",),
             slideshow={"slide_type": "slide"}),
        {"cell_type": "markdown", "id": "md-1", "source": "# T", "metadata": {"ExecuteTime": 1}},
    ])
    assert strip_run_metadata.main([str(path)]) == 0
    once = path.read_bytes()
    cleaned = json.loads(once)
    assert [cell["id"] for cell in cleaned["cells"]] == ["c0ffee", "md-1"]
    assert cleaned["cells"][0]["metadata"] == {"tags": ["keep"],
                                               "slideshow": {"slide_type": "slide"}}
    assert cleaned["cells"][0]["outputs"] == [stdout("é\n")]
    assert cleaned["cells"][1]["metadata"] == {}
    assert "é" in once.decode("utf-8") and once.endswith(b"}\n")
    assert findings(cleaned) == []
    mtime = path.stat().st_mtime_ns
    assert strip_run_metadata.main([str(path)]) == 0
    assert path.read_bytes() == once and path.stat().st_mtime_ns == mtime  # not rewritten


def test_strip_writes_what_nbformat_writes(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    cell = new_code_cell("x = 'ü'\nprint(x)", outputs=[new_output("stream", text="ü\n")])
    notebook = new_notebook(cells=[cell])
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    clean = path.read_text(encoding="utf-8")
    cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    nbformat.write(notebook, path)
    assert strip_run_metadata.main([str(path)]) == 0
    assert path.read_text(encoding="utf-8") == clean


def test_strip_refuses_a_bad_file_and_changes_nothing(tmp_path, capsys):
    good = tmp_path / "good.ipynb"
    write_notebook(good, [code("x = 1", execution={"iopub.status.busy": "t"})])
    before = good.read_bytes()
    broken = tmp_path / "broken.ipynb"
    broken.write_text('{"cells": [', encoding="utf-8")
    assert strip_run_metadata.main([str(good), str(broken)]) == 1
    assert f"{broken}: not JSON (line 1" in capsys.readouterr().err
    assert good.read_bytes() == before
    not_a_notebook = tmp_path / "list.ipynb"
    not_a_notebook.write_text("[1, 2]", encoding="utf-8")
    assert strip_run_metadata.main([str(not_a_notebook)]) == 1
    assert "not a notebook" in capsys.readouterr().err
