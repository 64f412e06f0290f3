"""Offline corpora: English prose, Python source and the course's own texts."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bpe_course.course import data
from bpe_course.course.data import (
    ENDOFTEXT,
    chinese_texts,
    course_text,
    course_text_path,
    course_texts,
    english_prose,
    python_source,
    write_python_source,
)


def test_english_prose_is_substantial_english():
    text = english_prose()
    assert len(text) > 400_000
    words = text.split()
    assert words.count("the") > 1000
    assert english_prose() == text  # always the same text, in the same order


def test_english_prose_respects_max_chars():
    assert english_prose(1000) == english_prose()[:1000]
    assert english_prose(0) == ""


@pytest.mark.parametrize("max_bytes", [0, 1, 100, 4097, 50_000, 300_000])
def test_python_source_is_at_most_max_bytes_of_utf8(max_bytes):
    text = python_source(max_bytes)
    size = len(text.encode("utf-8"))
    assert size <= max_bytes
    assert size >= max_bytes - 3  # cut at a character boundary, so at most 3 bytes short


def test_python_source_joins_files_with_the_separator():
    text = python_source(300_000)
    assert text.count(ENDOFTEXT) >= 2
    assert "def " in text and "import " in text
    custom = python_source(300_000, separator="\n# ---\n")
    assert custom.count("\n# ---\n") >= 2


def test_python_source_is_a_prefix_of_a_longer_one():
    longer = python_source(200_000).encode("utf-8")
    assert python_source(10_000) == longer[:10_000].decode("utf-8", errors="ignore")


def test_python_source_files_are_the_standard_library():
    files = data.python_source_files()
    assert len(files) > 500
    assert any(path.name == "os.py" for path in files)
    assert not any("site-packages" in path.parts for path in files)


def test_listing_the_standard_library_skips_site_packages_and_is_done_once(monkeypatch):
    """The installed packages (often several times the standard library's files) used to be
    walked and then thrown away, on every call: most of a second each, in every test and
    notebook that takes some Python source."""
    data._stdlib_python_files.cache_clear()
    scanned: list[Path] = []
    real_scandir = os.scandir

    def spy(path="."):
        scanned.append(Path(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    first = data.python_source_files()
    assert scanned and not any("site-packages" in path.parts for path in scanned)
    walked = len(scanned)
    first.clear()  # a caller changing its list changes no later answer
    second = data.python_source_files()
    assert len(second) > 500 and sorted(second) == second
    assert len(scanned) == walked


def test_python_source_refuses_negative_sizes():
    with pytest.raises(ValueError, match="max_bytes must be >= 0"):
        python_source(-1)


def test_write_python_source(tmp_path):
    path = write_python_source(tmp_path / "code.txt", 20_000)
    assert path.read_text(encoding="utf-8") == python_source(20_000)


def test_unknown_course_text_lists_the_available_ones(tmp_path, monkeypatch):
    # Use a data folder of our own so the test does not depend on which texts exist.
    (tmp_path / "alpha.txt").write_text("first text", encoding="utf-8")
    (tmp_path / "beta.txt").write_text("second text", encoding="utf-8")
    (tmp_path / "notes.md").write_text("not a text", encoding="utf-8")
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    assert course_texts() == ["alpha.txt", "beta.txt"]
    assert course_text("beta.txt") == "second text"
    assert course_text_path("alpha.txt") == tmp_path / "alpha.txt"
    with pytest.raises(FileNotFoundError, match="no course text 'gamma.txt'") as caught:
        course_text("gamma.txt")
    assert "alpha.txt, beta.txt" in str(caught.value)


def test_chinese_texts_are_listed_apart_from_the_others(tmp_path, monkeypatch):
    """Code that reads every course text (notebooks 01 and 03 do) must not see the Chinese
    edition's texts, so its stored output does not change; course_text still reads them."""
    (tmp_path / "alpha.txt").write_text("first text", encoding="utf-8")
    (tmp_path / "zh_beta.txt").write_text("第二篇", encoding="utf-8")
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    assert course_texts() == ["alpha.txt"]
    assert chinese_texts() == ["zh_beta.txt"]
    assert course_text("zh_beta.txt") == "第二篇"
    with pytest.raises(FileNotFoundError, match="there are: alpha.txt, zh_beta.txt"):
        course_text("gamma.txt")


def test_the_shipped_chinese_texts_are_clean_utf8_documents():
    """UTF-8 without a byte order mark, LF line ends, documents ended by a line
    ``<|endoftext|>`` with none empty, and more Chinese letters than Latin ones (the
    programmers' notes mix in code)."""
    names = chinese_texts()
    assert names and not set(names) & set(course_texts())
    for name in names:
        raw = course_text_path(name).read_bytes()
        text = raw.decode("utf-8")  # raises on invalid UTF-8
        assert not text.startswith("\ufeff"), f"{name} starts with a byte order mark"
        assert "\r" not in text, f"{name} has CR line ends"
        assert text.endswith("\n") and not text.endswith("\n\n"), f"{name}: one final newline"
        documents = text.split(f"\n{ENDOFTEXT}\n")
        assert ENDOFTEXT not in "".join(documents), f"{name}: {ENDOFTEXT} not on its own line"
        assert all(document.strip() for document in documents), f"{name}: an empty document"
        letters = [char for char in text if char.isalpha()]
        han = sum(1 for char in letters if "\u4e00" <= char <= "\u9fff")
        assert han / len(letters) > 0.5, f"{name}: {han / len(letters):.0%} Chinese letters"


def test_the_shipped_course_texts_can_be_read():
    for name in course_texts() + chinese_texts():
        assert course_text(name) == course_text_path(name).read_text(encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="there are: "):
        course_text("surely-not-a-course-text.txt")


# Names and sizes that are refused -----------------------------------------------------------


def test_course_text_reads_only_the_course_texts():
    for name in ["../README.md", "/etc/hostname", "", "."]:
        with pytest.raises(FileNotFoundError, match="there are: dog_park.txt"):
            course_text(name)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: english_prose(-5), ValueError, "max_chars must be >= 0, got -5"),
        (lambda: english_prose(2.5), TypeError, "max_chars must be an int"),
        (lambda: python_source(2.5), TypeError, "max_bytes must be an int"),
    ],
    ids=["negative", "float-chars", "float-bytes"],
)
def test_corpus_sizes_are_checked(call, error, message):
    # english_prose(-5) used to return all but the last 5 characters.
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_corpus_head_takes_one_path_as_well_as_a_list(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("héllo wörld", encoding="utf-8")
    assert data.corpus_head(str(path), 6) == "héllo"  # was read as the files 'c', '.', 't', ...
    assert data.corpus_head([path, path], 100) == "héllo wörld" * 2
