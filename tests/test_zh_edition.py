"""The Chinese edition cannot drift from the English one (tools/zh_edition.py).

The first tests build a small English notebook and its translation in a temporary folder,
then break the pair in each way a busy author would, and check that each is caught.
"""

from __future__ import annotations

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
    built = nbformat.read(zh_edition.chinese_path(edition), as_version=4)
    assert built.cells[0].source.startswith("# 词元")
    assert 'print("词元数:", len(ids))' in built.cells[1].source


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
    built = zh_edition.build(edition)
    assert built.cells[1].source == CODE + "\nprint(ids)"


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
    assert shape("print(len(ids))") != shape("print(len(ids) + 1)")
    assert shape("%timeit f()") != shape("%timeit g()")


def test_a_notebook_with_a_letter_after_its_number_is_part_of_the_edition(edition):
    # 06b came out of splitting 06: it must be checked and built like the others
    split = edition.with_name("00b_more_tokens.ipynb")
    split.write_bytes(edition.read_bytes())
    assert split in zh_edition.english_notebooks()
