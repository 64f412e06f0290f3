"""Store notebooks as JupyterLab saves them: remove what a batch run adds to cell metadata.

``jupyter nbconvert --execute`` writes four timestamps into every code cell's metadata
(``execution``: ``iopub.execute_input``, ``iopub.status.busy``, ``iopub.status.idle``,
``shell.execute_reply``). JupyterLab neither stores nor keeps them, so the first time a
learner saves a committed notebook, git shows hundreds of deleted lines that say nothing
about the course. The same goes for the ``ExecuteTime`` of the classic notebook's timing
extension, papermill's per-cell bookkeeping, and the classic notebook's ``trusted`` flag.

This tool removes those keys in place and leaves everything else as it was: sources,
outputs, execution counts, cell ids, tags and slide types. It writes the JSON the way
nbformat and JupyterLab do (one-space indent, sorted keys, non-ASCII kept, final newline),
so a notebook it has cleaned comes back byte for byte on a second run, and a notebook with
nothing to remove is not rewritten at all.

Usage: ``python -m tools.strip_run_metadata notebooks/*.ipynb``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Cell metadata keys that record a particular run, not the notebook.
RUN_KEYS = ("execution", "ExecuteTime", "papermill", "trusted")

#: Notebook metadata keys a batch runner adds (papermill); JupyterLab keeps the rest.
NOTEBOOK_RUN_KEYS = ("papermill",)


class NotebookFileError(ValueError):
    """A file that is not a notebook this tool can clean; the message names the file."""


def strip_notebook(notebook: dict[str, Any]) -> int:
    """Remove the run's metadata from ``notebook`` (in place); return how many keys went."""
    removed = 0
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        for key in NOTEBOOK_RUN_KEYS:
            removed += metadata.pop(key, None) is not None
    for cell in notebook.get("cells", []):
        cell_metadata = cell.get("metadata")
        if isinstance(cell_metadata, dict):
            for key in RUN_KEYS:
                removed += cell_metadata.pop(key, None) is not None
    return removed


def notebook_json(notebook: dict[str, Any]) -> str:
    """The text nbformat (and so JupyterLab) writes for ``notebook``."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def read_notebook(path: Path) -> dict[str, Any]:
    """The notebook's JSON, or a :class:`NotebookFileError` saying what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise NotebookFileError(f"{path}: cannot read it ({error})") from None
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookFileError(
            f"{path}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookFileError(f"{path}: not a notebook (no list of cells at the top level)")
    return notebook


def write_in_place(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: the file is the old one or the new one."""
    handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.chmod(partial, path.stat().st_mode & 0o777)
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def strip_file(path: Path) -> int:
    """Clean one notebook file in place; return how many keys were removed (0: untouched)."""
    notebook = read_notebook(path)
    removed = strip_notebook(notebook)
    if removed:
        write_in_place(path, notebook_json(notebook))
    return removed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOK")
    args = parser.parse_args(argv)
    # Read every file before writing any, so a bad one stops the run with nothing changed.
    try:
        for path in args.notebooks:
            read_notebook(path)
    except NotebookFileError as error:
        print(f"strip_run_metadata: {error}", file=sys.stderr)
        return 1
    for path in args.notebooks:
        removed = strip_file(path)
        print(f"{path}: removed {removed} run metadata keys" if removed else f"{path}: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
