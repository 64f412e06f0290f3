"""The Chinese edition: notebooks/zh-CN/ made from the English notebooks and a translation file.

The two editions must run the same program, so nobody keeps two copies of a notebook. Each
English notebook ``notebooks/NN_name.ipynb`` has a translation file
``notebooks/zh-CN/translations/NN_name.md`` that holds, for each cell by its id, the Chinese
text of that cell and a short fingerprint of the English source it was translated from::

    <!-- cell 1f2e3d4c from 9a8b7c6d -->
    # 00 · 为什么分词很重要

    <!-- cell 5a6b7c8d from 0f1e2d3c -->
    ```python
    print("每个词元都是一个整数")  # 注释也译成中文
    ```

``python -m tools.zh_edition build`` writes ``notebooks/zh-CN/NN_name.ipynb``: the English
notebook with each translated cell's source replaced (markdown wholly; code cells only where
they print or explain something in words), outputs cleared, and one cell added before the
first code cell that switches the exercise checks to Chinese (``use_language("zh-CN")``);
``run`` (``make zh``) also runs
them, so their outputs are stored as the English ones are. ``python -m tools.zh_edition
check`` lists everything that has drifted:

- a markdown cell with no translation, or one whose English source changed since (its
  fingerprint no longer matches): the English edition moved on, the Chinese must follow;
- a translated code cell that is another program than the English one (only comments and
  string literals may differ);
- a translation for a cell that no longer exists;
- a Chinese notebook that is not what ``build`` would write now;
- a rendering the glossary rules out in a translation, ``README.zh-CN.md`` or the Chinese
  instructor guide (``notebooks/zh-CN/INSTRUCTORS.md``), and READMEs that do not link each
  other in their first lines.

``tests/test_zh_edition.py`` runs the same check, so ``make test`` fails on any drift.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
ENGLISH = ROOT / "notebooks"
CHINESE = ENGLISH / "zh-CN"
TRANSLATIONS = CHINESE / "translations"

#: The line that starts each cell's entry in a translation file.
ENTRY = re.compile(r"^<!-- cell (?P<id>[\w-]+) from (?P<fingerprint>[0-9a-f]{8}) -->$", re.M)

#: A translated code cell is written inside one fence of this language.
CODE_FENCE = re.compile(r"\A```python\n(?P<code>.*)\n```\Z", re.S)

#: The glossary: one row per term, ``| English | 中文 | 不用 |``.
GLOSSARY = CHINESE / "GLOSSARY.md"

#: The one cell of a Chinese notebook with no English counterpart: it makes the exercise
#: checks (bpe_course.course.checks.harness) print their verdicts in Chinese, and gives the
#: plots' Chinese labels a Chinese font (matplotlib's default has no Han characters, so they
#: would be boxes). ``build`` puts it before the first code cell; it is not shown on slides.
LANGUAGE_CELL_ID = "zh-language"
LANGUAGE_CELL = """\
# 中文版独有的单元格：练习检查用中文给出结论（正确！/ 还差一点：…），
# 图里的中文用本机装有的中文字体（一个都没有的话，中文会显示成方框）。
import matplotlib.pyplot as plt
from matplotlib import font_manager

from bpe_course.course.checks.harness import use_language

use_language("zh-CN")
CHINESE_FONTS = ["Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei",
                 "SimHei", "WenQuanYi Zen Hei"]
installed = {font.name for font in font_manager.fontManager.ttflist}
plt.rcParams["font.family"] = ["DejaVu Sans"] + [f for f in CHINESE_FONTS if f in installed]"""

#: Chinese characters (CJK Unified Ideographs and Extension A).
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True)
class Entry:
    """One cell's translation: the Chinese source, and the fingerprint of its English source."""

    cell_id: str
    fingerprint: str
    source: str
    line: int


def fingerprint(source: str) -> str:
    """Eight hex digits that change whenever the English source does."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:8]


def english_notebooks() -> list[Path]:
    return sorted(ENGLISH.glob("[0-9][0-9]*_*.ipynb"))


def translation_path(notebook: Path) -> Path:
    return TRANSLATIONS / f"{notebook.stem}.md"


def chinese_path(notebook: Path) -> Path:
    return CHINESE / notebook.name


def read_entries(path: Path) -> dict[str, Entry]:
    """The entries of a translation file, by cell id (a missing file has none)."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    matches = list(ENTRY.finditer(text))
    entries: dict[str, Entry] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        source = text[match.end() : end].strip("\n")
        line = text.count("\n", 0, match.start()) + 1
        if match["id"] in entries:
            raise ValueError(f"{path}:{line}: cell {match['id']} is translated twice")
        entries[match["id"]] = Entry(match["id"], match["fingerprint"], source, line)
    return entries


def code_of(entry: Entry) -> str | None:
    """The code inside a translated code cell's fence, or None if it has no fence."""
    match = CODE_FENCE.match(entry.source)
    return match["code"] if match else None


def program_shape(source: str) -> list[tuple[int, str]]:
    """The tokens of ``source`` with comments left out and every string literal blanked: two
    cells with the same shape are the same program, whatever their words say.

    IPython's ``%`` and ``!`` lines are compared as they are.

    >>> program_shape('x = "hello"  # say it') == program_shape("x = '你好'")
    True
    >>> program_shape("x = 1") == program_shape("x = 2")
    False
    """
    shape: list[tuple[int, str]] = []
    lines = [line for line in source.splitlines() if line.lstrip()[:1] in ("%", "!")]
    code = "\n".join(
        "pass" if line.lstrip()[:1] in ("%", "!") else line for line in source.splitlines()
    )
    try:
        for token in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
                continue
            if token.type == tokenize.STRING:
                shape.append((token.type, string_shape(token.string)))
            elif token.type == getattr(tokenize, "FSTRING_MIDDLE", None):  # Python 3.12+
                shape.append((token.type, "<string>"))
            else:
                shape.append((token.type, token.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        shape.append((-1, code))  # not Python: only the very same text is the same
    return shape + [(-2, line.strip()) for line in lines]


def string_shape(literal: str) -> str:
    """A string literal with its words blanked; an f-string keeps the code in its braces.

    >>> string_shape('f"{len(ids):,} tokens"') == string_shape("f'{len(ids):,} 个词元'")
    True
    >>> string_shape('''f"{'tokens':>12}"''') == string_shape('''f"{'词元':>12}"''')
    True
    """
    prefix = re.match(r"[A-Za-z]*", literal).group().lower()
    if "f" not in prefix:
        return prefix + "<string>"
    try:
        node = ast.parse(literal, mode="eval").body
    except SyntaxError:
        return literal
    fields = []
    for part in [part for part in ast.walk(node) if isinstance(part, ast.FormattedValue)]:
        for inner in ast.walk(part.value):  # a string inside the braces is words too
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                inner.value = "<string>"
        fields.append(ast.dump(part))
    return prefix + "<string>" + "|".join(fields)


def chinese_share(text: str) -> float:
    """The share of Chinese characters among the letters of ``text`` (Latin words in code
    spans, formulas and names count against it)."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return 1.0
    return sum(1 for char in letters if HAN.match(char)) / len(letters)


def prose_of(markdown: str) -> str:
    """Markdown without code spans, code blocks, links' targets and HTML tags: the words."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\$[^$]*\$", " ", text)
    return text


def avoided_terms(glossary: Path | None = None) -> dict[str, str]:
    """The renderings the glossary rules out, each mapped to the term to use instead."""
    avoided: dict[str, str] = {}
    for line in (glossary or GLOSSARY).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and HAN.search(cells[1]) and cells[0] != "English":  # not the header
            for variant in re.split(r"[、,，]", re.sub(r"（[^）]*）", "", cells[2])):
                if variant.strip():
                    avoided[variant.strip()] = cells[1]
    return avoided


def glossary_problems(path: Path) -> Iterator[str]:
    """Each place in a Chinese text that uses a rendering the glossary rules out."""
    avoided = avoided_terms()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for variant, term in avoided.items():
            if variant in line:
                yield f"{path.relative_to(ROOT)}:{number}: {variant!r}: the glossary says {term!r}"


def chinese_documents() -> list[Path]:
    """The Chinese texts beside the notebooks' translations: the README and the guide."""
    return [ROOT / "README.zh-CN.md", CHINESE / "INSTRUCTORS.md"]


def minutes_rows(guide: Path) -> list[str]:
    """The rows of an instructor guide's minutes table (one per notebook, as
    ``python -m tools.course_stats`` prints them); both guides hold the same rows."""
    text = guide.read_text(encoding="utf-8")
    return re.findall(r"^\| \d\d\w*_\w+ \|.*$", text, re.M)


def document_problems() -> Iterator[str]:
    """A Chinese document that is missing or breaks the glossary, a Chinese guide whose
    minutes table is not the English one's, and READMEs that do not link each other in their
    first lines."""
    for path in chinese_documents():
        if not path.exists():
            yield f"{path.relative_to(ROOT)} is missing"
        elif GLOSSARY.exists():
            yield from glossary_problems(path)
    english, chinese = ENGLISH / "INSTRUCTORS.md", CHINESE / "INSTRUCTORS.md"
    if english.exists() and chinese.exists() and minutes_rows(english) != minutes_rows(chinese):
        yield (f"{chinese.relative_to(ROOT)}: its minutes table is not the English guide's: "
               f"copy the rows of {english.relative_to(ROOT)}'s table (only the header differs)")
    pair = [(ROOT / "README.md", "README.zh-CN.md"), (ROOT / "README.zh-CN.md", "README.md")]
    for readme, other in pair:
        if readme.exists():
            head = "\n".join(readme.read_text(encoding="utf-8").splitlines()[:5])
            if f"]({other})" not in head:
                yield f"{readme.relative_to(ROOT)}: its first 5 lines do not link {other}"


def problems(notebook: Path) -> Iterator[str]:
    """Every way the Chinese edition of ``notebook`` has drifted from the English one."""
    path = translation_path(notebook)
    where = path.relative_to(ROOT)
    entries = read_entries(path)
    english = nbformat.read(notebook, as_version=4)
    ids = {cell.id for cell in english.cells}
    for cell in english.cells:
        entry = entries.get(cell.id)
        if entry is None:
            if cell.cell_type == "markdown":
                yield f"{where}: markdown cell {cell.id} is not translated"
            continue
        at = f"{where}:{entry.line}: cell {cell.id}"
        if entry.fingerprint != fingerprint(cell.source):
            yield (
                f"{at} was translated from another English text (fingerprint "
                f"{entry.fingerprint}, now {fingerprint(cell.source)}): translate it again"
            )
        if cell.cell_type == "code":
            code = code_of(entry)
            if code is None:
                yield f"{at} is a code cell: put its translation in one ```python fence"
            elif program_shape(code) != program_shape(cell.source):
                yield f"{at} is another program than the English cell (only comments and " \
                    "string literals may differ)"
        elif cell.cell_type == "markdown" and prose_of(entry.source).strip():
            if chinese_share(prose_of(entry.source)) < 0.3:
                yield f"{at} looks untranslated (few Chinese characters in its prose)"
    if path.exists() and GLOSSARY.exists():
        yield from glossary_problems(path)
    for cell_id, entry in entries.items():
        if cell_id not in ids:
            yield f"{where}:{entry.line}: cell {cell_id} is not in {notebook.name} any more"
    target = chinese_path(notebook)
    if not target.exists():
        yield f"{target.relative_to(ROOT)} is missing: run make zh"
    else:
        built, stored = build(notebook), nbformat.read(target, as_version=4)
        if [(c.id, c.cell_type, c.source) for c in built.cells] != [
            (c.id, c.cell_type, c.source) for c in stored.cells
        ]:
            yield f"{target.relative_to(ROOT)} is not what the translations make: run make zh"


def build(notebook: Path) -> nbformat.NotebookNode:
    """The Chinese notebook's cells: the English ones, translated where a current translation
    exists, and :data:`LANGUAGE_CELL` before the first code cell.

    A translation made from another English text than today's is not used (the cell stays
    English until it is translated again, and ``check`` says so): a stale code cell would run
    yesterday's program. Outputs are cleared (``make zh`` runs the notebook to store its
    own); everything else (ids, tags, slide types) is the English cell's.
    """
    entries = read_entries(translation_path(notebook))
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        entry = entries.get(cell.id)
        if entry is not None and entry.fingerprint == fingerprint(cell.source):
            cell.source = (code_of(entry) if cell.cell_type == "code" else None) or entry.source
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    first_code = next((i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"), None)
    if first_code is not None:
        switch = nbformat.v4.new_code_cell(LANGUAGE_CELL)
        switch.id = LANGUAGE_CELL_ID
        switch.metadata = {"slideshow": {"slide_type": "skip"}, "tags": ["zh-edition"]}
        nb.cells.insert(first_code, switch)
    return nb


def write_built(notebook: Path, out: Path | None = None) -> Path:
    """Write the Chinese notebook of ``notebook`` (into ``out``, else ``notebooks/zh-CN/``),
    keeping the outputs of cells whose source is unchanged (so rebuilding after a wording
    change does not lose every output)."""
    target = chinese_path(notebook) if out is None else out / notebook.name
    built = build(notebook)
    if target.exists():
        old = {cell.id: cell for cell in nbformat.read(target, as_version=4).cells}
        for cell in built.cells:
            previous = old.get(cell.id)
            if cell.cell_type == "code" and previous is not None and previous.source == cell.source:
                cell.outputs = previous.outputs
                cell.execution_count = previous.execution_count
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(built, target)
    return target


def execute(path: Path, timeout: int = 600) -> None:
    """Run a built Chinese notebook top to bottom in its own folder and store its outputs,
    as JupyterLab saves a notebook (no per-cell execution timestamps)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    where = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=timeout, resources=where).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.zh_edition", description=__doc__)
    parser.add_argument("command", choices=["build", "run", "check"])
    parser.add_argument("notebooks", nargs="*", help="stems to build or run (default: all)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="build or run into DIR instead of notebooks/zh-CN/ (for a look at "
                        "the Chinese notebooks or their slides without touching the committed "
                        "ones); check ignores it")
    args = parser.parse_intermixed_args(argv)  # `run --out DIR 00_x 01_y` as well
    known = {nb.stem for nb in english_notebooks()}
    unknown = [stem for stem in args.notebooks if stem not in known]
    if unknown:
        parser.error(f"{unknown[0]}: no such notebook in {ENGLISH.relative_to(ROOT)}/ "
                     f"(one of {', '.join(sorted(known))})")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: not a folder")
    chosen = [nb for nb in english_notebooks() if not args.notebooks or nb.stem in args.notebooks]
    if args.command in ("build", "run"):
        for notebook in chosen:
            target = write_built(notebook, args.out)
            if args.command == "run":
                execute(target)
            print(target)
        return 0
    found = [problem for notebook in english_notebooks() for problem in problems(notebook)]
    found += document_problems()
    print("\n".join(found) or "the Chinese edition matches the English one")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
