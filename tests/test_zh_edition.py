"""The Chinese edition cannot drift from the English one (tools/zh_edition.py).

The first tests build a small English notebook and its translation in a temporary folder,
then break the pair in each way a busy author would, and check that each is caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from tools import zh_edition

CODE = 'ids = tokenizer.encode("hello")  # one id per token\nprint("tokens:", len(ids))'
MARKDOWN = "# Tokens\n\nA token is an integer the model reads."


@pytest.fixture
def edition(tmp_path, monkeypatch):
    """An English notebook with one markdown and one code cell, translated, in ``tmp_path``."""
    english = tmp_path / "notebooks"
    chinese = english / "zh-CN"
    translations = chinese / "translations"
    translations.mkdir(parents=True)
    monkeypatch.setattr(zh_edition, "ROOT", tmp_path)
    monkeypatch.setattr(zh_edition, "ENGLISH", english)
    monkeypatch.setattr(zh_edition, "CHINESE", chinese)
    monkeypatch.setattr(zh_edition, "TRANSLATIONS", translations)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(MARKDOWN), nbformat.v4.new_code_cell(CODE)]
    nb.cells[0].id, nb.cells[1].id = "intro", "count"
    notebook = english / "00_tokens.ipynb"
    nbformat.write(nb, notebook)
    write_translation(notebook, {
        "intro": (MARKDOWN, "# 词元\n\n词元是模型读入的一个整数。"),
        "count": (CODE, '```python\nids = tokenizer.encode("hello")  # 每个词元一个 id\n'
                        'print("词元数:", len(ids))\n```'),
    })
    zh_edition.write_built(notebook)
    return notebook


def write_translation(notebook: Path, cells: dict[str, tuple[str, str]]) -> None:
    text = "".join(
        f"<!-- cell {cell_id} from {zh_edition.fingerprint(english)} -->\n{chinese}\n\n"
        for cell_id, (english, chinese) in cells.items()
    )
    zh_edition.translation_path(notebook).write_text(text, encoding="utf-8")


def change_english_cell(notebook: Path, cell_id: str, source: str) -> None:
    nb = nbformat.read(notebook, as_version=4)
    next(cell for cell in nb.cells if cell.id == cell_id).source = source
    nbformat.write(nb, notebook)


def test_a_translated_pair_has_no_problems(edition):
    assert list(zh_edition.problems(edition)) == []
    built = {cell.id: cell for cell in
             nbformat.read(zh_edition.chinese_path(edition), as_version=4).cells}
    assert built["intro"].source.startswith("# 词元")
    assert 'print("词元数:", len(ids))' in built["count"].source


def test_the_chinese_notebook_switches_the_checks_to_chinese_before_any_code(edition):
    """One cell of the Chinese edition has no English counterpart: the one that makes the
    exercise checks speak Chinese. It runs before the first code cell, never on a slide."""
    cells = zh_edition.build(edition).cells
    assert [cell.id for cell in cells] == ["intro", zh_edition.LANGUAGE_CELL_ID, "count"]
    switch = cells[1]
    assert switch.cell_type == "code" and 'use_language("zh-CN")' in switch.source
    assert switch.metadata["slideshow"]["slide_type"] == "skip"
    import matplotlib

    from bpe_course.course.checks import harness

    with matplotlib.rc_context():  # the cell also sets the plots' fonts
        exec(switch.source, {})
    try:
        assert harness.language() == "zh-CN"
    finally:
        harness.use_language("en")
    english = nbformat.read(edition, as_version=4)
    assert zh_edition.LANGUAGE_CELL_ID not in [cell.id for cell in english.cells]


def test_a_changed_code_cell_in_one_edition_is_caught(edition):
    """The Chinese code cell computes something else: another program, not a translation."""
    write_translation(edition, {
        "intro": (MARKDOWN, "# 词元\n\n词元是模型读入的一个整数。"),
        "count": (CODE, '```python\nids = tokenizer.encode("hello")  # 每个词元一个 id\n'
                        'print("词元数:", len(ids) + 1)\n```'),
    })
    assert any("another program" in problem for problem in zh_edition.problems(edition))


def test_a_changed_english_cell_asks_for_a_new_translation(edition):
    change_english_cell(edition, "intro", MARKDOWN + " Every text becomes a list of them.")
    found = list(zh_edition.problems(edition))
    assert any("translated from another English text" in problem for problem in found)


def test_a_stale_code_translation_is_not_built(edition):
    """The English program changed: the Chinese notebook runs the new one, in English, until
    the cell is translated again (never yesterday's program)."""
    change_english_cell(edition, "count", CODE + "\nprint(ids)")
    built = {cell.id: cell for cell in zh_edition.build(edition).cells}
    assert built["count"].source == CODE + "\nprint(ids)"


def test_a_new_markdown_cell_without_translation_is_caught(edition):
    nb = nbformat.read(edition, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("A new paragraph."))
    nb.cells[-1].id = "new"
    nbformat.write(nb, edition)
    assert any("markdown cell new is not translated" in p for p in zh_edition.problems(edition))


def test_an_untranslated_copy_is_caught(edition):
    write_translation(edition, {"intro": (MARKDOWN, MARKDOWN)})
    zh_edition.write_built(edition)
    assert any("looks untranslated" in problem for problem in zh_edition.problems(edition))


def test_a_translation_of_a_removed_cell_is_caught(edition):
    write_translation(edition, {
        "intro": (MARKDOWN, "# 词元\n\n词元是模型读入的一个整数。"),
        "gone": ("old", "旧的段落。"),
    })
    zh_edition.write_built(edition)
    assert any("cell gone is not in" in problem for problem in zh_edition.problems(edition))


def test_an_edited_chinese_notebook_is_caught(edition):
    """The generated notebook is edited by hand instead of its translation file."""
    change_english_cell(zh_edition.chinese_path(edition), "count", CODE + "\nprint(ids)")
    assert any("run make zh" in problem for problem in zh_edition.problems(edition))


def test_a_rendering_the_glossary_rules_out_is_caught(edition, monkeypatch):
    glossary = Path(__file__).parent.parent / "notebooks" / "zh-CN" / "GLOSSARY.md"
    monkeypatch.setattr(zh_edition, "GLOSSARY", glossary)
    write_translation(edition, {
        "intro": (MARKDOWN, "# 令牌\n\n令牌是模型读入的一个整数。"),
        "count": (CODE, '```python\nids = tokenizer.encode("hello")\n'
                        'print("词元数:", len(ids))\n```'),
    })
    found = list(zh_edition.problems(edition))
    assert any("'令牌': the glossary says '词元'" in problem for problem in found), found


def test_the_glossary_rules_out_the_usual_other_renderings():
    avoided = zh_edition.avoided_terms()
    assert avoided["令牌"] == "词元" and avoided["标记器"] == "分词器"
    assert "语料库" in avoided  # the note in brackets is not part of the term
    assert "不用" not in avoided  # the header row's words are no rendering


def test_comments_and_strings_may_differ_but_nothing_else():
    shape = zh_edition.program_shape
    assert shape('print("a")  # b') == shape("print('甲')  # 乙")
    assert shape('f"{x} tokens"') == shape('f"{x} 个词元"')
    assert shape('f"{x} tokens"') != shape('f"{y} 个词元"')
    assert shape("""f"{'tokens':12}" """) == shape("""f"{'词元数':12}" """)  # a literal inside
    assert shape("""f"{'tokens':12}" """) != shape("""f"{'词元数':9}" """)  # the width is code
    assert shape("print(len(ids))") != shape("print(len(ids) + 1)")
    assert shape("%timeit f()") != shape("%timeit g()")


REPO = Path(__file__).resolve().parent.parent


def test_the_chinese_readme_and_guide_are_checked_against_the_glossary(tmp_path, monkeypatch):
    monkeypatch.setattr(zh_edition, "ROOT", tmp_path)
    monkeypatch.setattr(zh_edition, "ENGLISH", tmp_path / "notebooks")
    monkeypatch.setattr(zh_edition, "CHINESE", tmp_path / "notebooks" / "zh-CN")
    monkeypatch.setattr(zh_edition, "GLOSSARY", REPO / "notebooks" / "zh-CN" / "GLOSSARY.md")
    (tmp_path / "notebooks" / "zh-CN").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# x\n\nEnglish | [简体中文](README.zh-CN.md)\n")
    (tmp_path / "README.zh-CN.md").write_text("# x\n\n[English](README.md)\n\n分词器切出词元。\n")
    guide = tmp_path / "notebooks" / "zh-CN" / "INSTRUCTORS.md"
    guide.write_text("# 讲师指南\n\n每个令牌都是一个整数。\n")
    found = list(zh_edition.document_problems())
    assert found == ["notebooks/zh-CN/INSTRUCTORS.md:3: '令牌': the glossary says '词元'"], found
    (tmp_path / "README.md").write_text("# x\n\n" + "\n" * 5 + "[简体中文](README.zh-CN.md)\n")
    guide.unlink()
    found = list(zh_edition.document_problems())
    assert "notebooks/zh-CN/INSTRUCTORS.md is missing" in found
    assert "README.md: its first 5 lines do not link README.zh-CN.md" in found


def test_the_chinese_guide_keeps_the_english_guides_minutes(tmp_path, monkeypatch):
    """The English guide's table gets new minutes: the Chinese one must follow (rows copied)."""
    monkeypatch.setattr(zh_edition, "ROOT", tmp_path)
    monkeypatch.setattr(zh_edition, "ENGLISH", tmp_path / "notebooks")
    monkeypatch.setattr(zh_edition, "CHINESE", tmp_path / "notebooks" / "zh-CN")
    (tmp_path / "notebooks" / "zh-CN").mkdir(parents=True)
    english = (REPO / "notebooks" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    chinese = (REPO / "notebooks" / "zh-CN" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    (tmp_path / "notebooks" / "INSTRUCTORS.md").write_text(english, encoding="utf-8")
    (tmp_path / "notebooks" / "zh-CN" / "INSTRUCTORS.md").write_text(chinese, encoding="utf-8")
    assert not [p for p in zh_edition.document_problems() if "minutes table" in p]
    assert len(zh_edition.minutes_rows(tmp_path / "notebooks" / "INSTRUCTORS.md")) >= 9
    row = next(line for line in english.splitlines() if line.startswith("| 02_naive_bpe | "))
    changed = row.replace("| 02_naive_bpe | ", "| 02_naive_bpe | 1", 1)  # one more slide digit
    (tmp_path / "notebooks" / "INSTRUCTORS.md").write_text(
        english.replace(row, changed), encoding="utf-8")
    found = [p for p in zh_edition.document_problems() if "minutes table" in p]
    assert found == ["notebooks/zh-CN/INSTRUCTORS.md: its minutes table is not the English "
                     "guide's: copy the rows of notebooks/INSTRUCTORS.md's table (only the "
                     "header differs)"]


def test_the_real_chinese_documents_follow_the_glossary_and_link_each_other():
    assert list(zh_edition.document_problems()) == []


def test_what_the_chinese_readme_names_exists():
    """Every make target, module, file and command the Chinese README names is real."""
    import importlib
    import re

    text = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    for target in re.findall(r"\bmake ([\w-]+)", text):
        assert target in targets, f"make {target}"
    for module in re.findall(r"python -m ([\w.]+)", text):
        assert importlib.util.find_spec(module), module
    for dotted in re.findall(r"`(bpe_course(?:\.\w+)+)", text):
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
            try:
                thing = importlib.import_module(".".join(parts[:cut]))
                break
            except ModuleNotFoundError:
                continue
        for name in parts[cut:]:
            thing = getattr(thing, name)
    for path in re.findall(r"`((?:bpe_course|tests|tools|data|notebooks)/[\w./*-]+)`", text):
        if "NN" not in path and "名字" not in path:
            assert list(REPO.glob(path)), path
    for link in re.findall(r"\]\(([^)#]+)", text):
        if not link.startswith("notebooks/zh-CN/") or not link.endswith(".ipynb"):
            assert (REPO / link).exists(), link
    harness = importlib.import_module("bpe_course.course.checks.harness")
    for name in re.findall(r"`(\w+)\(", text):
        if name in ("use_language", "not_yet"):
            assert hasattr(harness, name), name


def test_build_writes_into_another_folder_when_asked(edition, tmp_path, capsys):
    out = tmp_path / "elsewhere"
    assert zh_edition.main(["build", "--out", str(out), edition.stem]) == 0
    built = nbformat.read(out / edition.name, as_version=4)
    assert built.cells[0].source.startswith("# 词元")
    assert str(out / edition.name) in capsys.readouterr().out
    with pytest.raises(SystemExit):
        zh_edition.main(["build", "99_nothing"])
    assert "99_nothing: no such notebook" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(SystemExit):
        zh_edition.main(["build", "--out", str(tmp_path / "a_file")])
    assert "not a folder" in capsys.readouterr().err


def test_the_switch_cell_draws_chinese_plot_labels_in_a_chinese_font():
    """Matplotlib's default font has no Han characters: without the switch cell every Chinese
    label and title is a row of boxes (and a 'Glyph ... missing' warning)."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    if not installed & {"Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei"}:
        pytest.skip("no Chinese font installed (Debian: apt-get install fonts-noto-cjk)")
    with matplotlib.rc_context(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(zh_edition.LANGUAGE_CELL, {})
        fig, ax = plt.subplots()
        ax.set_ylabel("每个字符的字节数")
        fig.canvas.draw()
        plt.close(fig)
    from bpe_course.course.checks import harness
    harness.use_language("en")
    assert not [w for w in caught if "missing from font" in str(w.message)], caught

def test_a_notebook_with_a_letter_after_its_number_is_part_of_the_edition(edition):
    # 06b came out of splitting 06: it must be checked and built like the others
    split = edition.with_name("00b_more_tokens.ipynb")
    split.write_bytes(edition.read_bytes())
    assert split in zh_edition.english_notebooks()


# The exercise checks' hints: every one has its Chinese words ---------------------------------

CHECKS = REPO / "bpe_course" / "course" / "checks"


def hints_without_chinese(source: str) -> list[int]:
    """The lines where ``source`` calls ``not_yet`` without a Chinese hint (``zh=``)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and (node.func.id if isinstance(node.func, ast.Name) else
             node.func.attr if isinstance(node.func, ast.Attribute) else None) == "not_yet"
        and not any(keyword.arg == "zh" for keyword in node.keywords)
    )


def test_a_hint_without_chinese_is_found():
    source = ('def check(x):\n    if x:\n        return not_yet("wrong", zh="错了")\n'
              '    return harness.not_yet(f"wrong {x}")\n')
    assert hints_without_chinese(source) == [4]


def test_every_hint_of_the_exercise_checks_has_its_chinese_words():
    """A hint written only in English shows up in English in the Chinese edition: each
    ``not_yet(...)`` of every checks module passes ``zh=`` (helpers that name a mistake
    return an (English, Chinese) pair for ``harness.say``)."""
    modules = sorted(CHECKS.glob("*.py"))
    assert len(modules) >= 12, modules  # the harness and one module per notebook
    missing = [f"{path.relative_to(REPO)}:{line}" for path in modules
               for line in hints_without_chinese(path.read_text(encoding="utf-8"))]
    assert missing == [], "not_yet(...) without zh=: " + ", ".join(missing)

