"""Texts of the encoding benchmark that are built from files on this machine, not shipped.

Each builder returns at most ``max_bytes`` of UTF-8 (cut at a character boundary), the same
text on every run of one machine (files in sorted order), or ``""`` when the machine has none
of the files, and the row is then skipped with a note. Nothing is downloaded.

- :func:`c_headers`: the C headers under ``/usr/include``: code with long identifiers and
  comments, many distinct pretokens (about 33k in 5 MB), so a bounded cache is put to work.
- :func:`many_scripts`: translated manual pages (``/usr/share/man/<language>/``), taken a
  page per language in turn, plus the course's Chinese texts: Cyrillic, CJK, Latin with
  accents, where a quarter to a third of the pretokens are not whole tokens.
- :func:`json_and_logs`: JSON files of the Python installation and the system's logs, in
  turn: punctuation, numbers and keys.
- :func:`with_astral`: a text with one letter above U+FFFF (Mathematical Bold) every so many
  characters, which the fast splitter cannot classify by itself.
"""

from __future__ import annotations

import gzip
import sysconfig
from collections.abc import Iterable, Iterator
from itertools import chain, zip_longest
from pathlib import Path

from bpe_course.course.data import chinese_texts, course_text_path

MAN = Path("/usr/share/man")


def _read(path: Path) -> str:
    """A file's text (gunzipped if it ends in ``.gz``); ``""`` when it cannot be read."""
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return ""


def _head(documents: Iterable[str], max_bytes: int) -> str:
    """The documents joined by newlines, cut to ``max_bytes`` of UTF-8 at a character."""
    parts, total = [], 0
    for document in documents:
        if total >= max_bytes:
            break
        if document:
            parts.append(document)
            total += len(document.encode("utf-8")) + 1
    return "\n".join(parts).encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def _in_turn(*sources: Iterable[Path]) -> Iterator[str]:
    """The texts of one file from each source in turn, until every source is used up."""
    for group in zip_longest(*sources):
        for path in group:
            if path is not None:
                yield _read(path)


def _files(folder: Path, pattern: str) -> list[Path]:
    """Regular files under ``folder`` matching ``pattern``, sorted; none if it is missing."""
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.rglob(pattern) if path.is_file())


def c_headers(max_bytes: int) -> str:
    """The first ``max_bytes`` of ``/usr/include``'s ``.h`` files, in sorted order."""
    return _head(map(_read, _files(Path("/usr/include"), "*.h")), max_bytes)


def man_languages() -> list[Path]:
    """The folders of translated manual pages (``de``, ``ja``, ``zh_CN``...), sorted."""
    if not MAN.is_dir():
        return []
    folders = (path for path in MAN.iterdir() if path.is_dir())
    return sorted(path for path in folders if not path.name.startswith("man"))


def many_scripts(max_bytes: int) -> str:
    """Translated manual pages, one page per language in turn, and the Chinese texts."""
    languages = [_files(folder, "*.gz") for folder in man_languages()]
    chinese = [course_text_path(name) for name in chinese_texts()]
    return _head(_in_turn(*languages, chinese), max_bytes)


def json_and_logs(max_bytes: int) -> str:
    """JSON files of the Python installation and ``/var/log``'s logs, one of each in turn."""
    places = {sysconfig.get_paths()[key] for key in ("stdlib", "purelib")}
    json_files = sorted(chain.from_iterable(_files(Path(place), "*.json") for place in places))
    logs = _files(Path("/var/log"), "*.log")
    return _head(_in_turn(json_files, logs), max_bytes)


def with_astral(text: str, every: int = 8192) -> str:
    """``text`` with the letter U+1D400 (bold A) put after every ``every`` characters."""
    return "\U0001d400".join(text[i : i + every] for i in range(0, len(text), every))
