"""A split pattern's ``re`` translation, kept in a cache file: a later process reads it
instead of spelling the classes out and checking them on the sample again, and a file that
is damaged, foreign, from another ``regex`` or turned off only means translating again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpe_course.pretokens import NAMED_PATTERNS
from bpe_course.speed import cachefiles, fastsplit
from bpe_course.speed.cachefiles import CACHE_ENV
from bpe_course.speed.fastsplit import Splitter, fast_engine

PATTERN = NAMED_PATTERNS["gpt4"]
#: Accents, CJK, an emoji, a bold mathematical letter (which sends a text back to ``regex``).
TEXT = "Hello, world's 42 naïve CAFÉS\n\t東京タワー 😀 𝐀𝐁 x  \r\n ΑΘΗΝΑ's"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    fast_engine.cache_clear()
    yield folder
    fast_engine.cache_clear()


@pytest.fixture
def translations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The patterns :func:`~bpe_course.speed.fastsplit.bmp_translation` is asked to spell."""
    asked: list[str] = []
    real = fastsplit.bmp_translation

    def counted(pattern: str):
        asked.append(pattern)
        return real(pattern)

    monkeypatch.setattr(fastsplit, "bmp_translation", counted)
    return asked


def fresh_engine(pattern: str = PATTERN):
    """``fast_engine`` as a new process finds it: nothing remembered in memory."""
    fast_engine.cache_clear()
    return fast_engine(pattern)


def test_a_second_process_reads_the_translation(cache, translations):
    first = fresh_engine()
    assert translations == [PATTERN] and len(list(cache.iterdir())) == 1
    script = (
        "import json, sys\nfrom bpe_course.speed import fastsplit\n"
        "def refuse(pattern):\n    raise AssertionError('translated again')\n"
        "fastsplit.bmp_translation = refuse\n"
        "pattern, text = json.loads(sys.stdin.read())\n"
        "splitter = fastsplit.Splitter(pattern)\n"
        "print(json.dumps([splitter.fast is not None, splitter.fast.pattern,"
        " splitter.findall(text), splitter.findall(text.replace('𝐀𝐁', ''))]))\n"
    )
    root = Path(fastsplit.__file__).resolve().parents[2]
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps([PATTERN, TEXT]),
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    fast, spelled, pieces, bmp_pieces = json.loads(done.stdout)
    exact = Splitter(PATTERN).exact
    assert fast and spelled == first[0].pattern
    assert pieces == exact.findall(TEXT)
    assert bmp_pieces == exact.findall(TEXT.replace("𝐀𝐁", ""))


def test_a_read_translation_splits_as_the_original(cache, translations):
    fresh_engine()
    fast, astral = fresh_engine()
    assert translations == [PATTERN]  # the second came from the file
    splitter = Splitter(PATTERN)
    assert splitter.fast.pattern == fast.pattern and astral is not None
    every = "".join(f"{chr(c)}a{chr(c)} 1'{chr(c)}s\n" for c in range(0, 0x30000, 13))
    for text in (TEXT, every):
        assert splitter.findall(text) == splitter.exact.findall(text)


def entry(cache: Path) -> Path:
    (path,) = cache.iterdir()
    return path


@pytest.mark.parametrize("damage", ["flip", "cut", "empty", "garbage"])
def test_a_damaged_entry_is_ignored_and_written_again(cache, translations, damage):
    first = fresh_engine()
    path = entry(cache)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-100] ^= 0x04  # inside the spelled pattern: \u0041 becomes \u0045, or so
    elif damage == "cut":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"not a cache file at all")
    path.write_bytes(data)
    again = fresh_engine()
    assert translations == [PATTERN, PATTERN]
    assert again[0].pattern == first[0].pattern
    fresh_engine()
    assert translations == [PATTERN, PATTERN]  # the rewritten file is read


def test_a_foreign_entry_is_ignored_and_written_again(cache, translations):
    other = NAMED_PATTERNS["gpt2"]
    fresh_engine(other)
    foreign = entry(cache).read_bytes()
    entry(cache).unlink()
    fresh_engine()
    path = next(p for p in cache.iterdir())
    path.write_bytes(foreign)  # gpt2's translation under gpt4's name
    fast, _ = fresh_engine()
    assert translations == [other, PATTERN, PATTERN]
    assert fast.pattern != fresh_engine(other)[0].pattern
    assert fresh_engine()[0].pattern == fast.pattern and translations.count(PATTERN) == 2


@pytest.mark.parametrize("stored", [b"[1, 2, 3]", b'[1, ["x"]]', b'["x", [2]]', b"{}", b"[x"])
def test_a_checked_entry_that_does_not_fit_is_translated_again(cache, translations, stored):
    label, settings = "split-pattern", fastsplit.translation_settings(PATTERN)
    key = cachefiles.cache_key(label, *settings)
    assert cachefiles.write_sections(label, key, {}, {"translation": stored})
    assert fresh_engine()[0].pattern == Splitter(PATTERN).fast.pattern
    assert translations == [PATTERN]
    assert cachefiles.read_sections(label, key)[1]["translation"] != stored  # written again


@pytest.mark.parametrize("part", ["regex", "unicodedata", "python"])
def test_another_regex_unicode_or_python_means_another_entry(cache, translations, monkeypatch,
                                                             part):
    fresh_engine()
    if part == "regex":
        monkeypatch.setattr(fastsplit.regex, "__version__", "0.0.1")
    elif part == "unicodedata":
        monkeypatch.setattr(fastsplit.unicodedata, "unidata_version", "1.1.0")
    else:
        monkeypatch.setattr(fastsplit.sys, "version", "3.0.0 (elsewhere)")
    fresh_engine()
    assert translations == [PATTERN, PATTERN] and len(list(cache.iterdir())) == 2


def test_a_pattern_that_does_not_translate_is_remembered_too(cache, translations):
    assert fresh_engine(r"\p{L}+(?i:\p{Lu})") is None
    assert fresh_engine(r"\p{L}+(?i:\p{Lu})") is None
    assert translations == [r"\p{L}+(?i:\p{Lu})"]


@pytest.mark.parametrize("setting", ["off", "unwritable"])
def test_off_or_unwritable_means_translating_every_time(tmp_path, monkeypatch, translations,
                                                        setting):
    blocker = tmp_path / "a file"  # a folder that cannot be made, even by root
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, "off" if setting == "off" else str(blocker / "cache"))
    try:
        first, second = fresh_engine(), fresh_engine()
    finally:
        fast_engine.cache_clear()
    assert translations == [PATTERN, PATTERN]
    assert first[0].pattern == second[0].pattern
    assert blocker.read_text() == "not a folder" and len(list(tmp_path.iterdir())) == 1
