"""Corpora that work offline: the course's own texts, English prose and Python source.

Every Python installation carries two useful corpora. ``pydoc_data.topics`` holds about
half a megabyte of English prose (the text behind ``help("if")``), and the standard library
is about 30 MB of real code. The course's own small texts live in the repository's
``data/`` folder. TinyStories, the corpus CS336 trains on, needs the internet, so it is
only an optional download and nothing in the course depends on it.

Every text in ``data/`` is original to this course: written for it, not copied or translated
from anywhere. The English stories are listed by :func:`course_texts`; the Simplified
Chinese ones (``zh_*.txt``, about 270 kB of stories, dialogue, letters, recipes, a
popular-science piece on how computers store text, classical-flavoured sketches and
programmers' notes) by :func:`chinese_texts`, so that code reading "every course text"
reads what it read before they were added. A Chinese file holds several documents separated
by a line ``<|endoftext|>`` (none before the first or after the last), so training with that
special token keeps them apart.
"""

from __future__ import annotations

import functools
import os
import sysconfig
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from ..base import ENDOFTEXT, PathLike, check_int
from ..safety.files import atomic_write
from ..speed.counting import corpus_paths
from ..utf8 import decode_text

#: The course's own texts, beside the package in the repository.
DATA_DIR = Path(__file__).resolve().parents[2] / "data"

TINYSTORIES_URLS = {
    "valid": "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
    "TinyStoriesV2-GPT4-valid.txt",
    "train": "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
    "TinyStoriesV2-GPT4-train.txt",
}


#: The names of the Simplified Chinese texts in ``data/`` start with this.
CHINESE_PREFIX = "zh_"


def _all_texts() -> list[str]:
    """Names of every text in ``data/``, Chinese or not, sorted."""
    return sorted(path.name for path in DATA_DIR.glob("*.txt"))


def course_texts() -> list[str]:
    """Names of the course's texts in ``data/`` (e.g. ``"dog_park.txt"``), but not the
    Chinese edition's (see :func:`chinese_texts`)."""
    return [name for name in _all_texts() if not name.startswith(CHINESE_PREFIX)]


def chinese_texts() -> list[str]:
    """Names of the Simplified Chinese texts in ``data/`` (``zh_*.txt``), for the Chinese
    edition; :func:`course_text` reads them like the others.

    >>> names = chinese_texts()
    >>> "zh_bakery.txt" in names and all(name.startswith("zh_") for name in names)
    True
    >>> course_text("zh_bakery.txt").splitlines()[0]
    '青石镇的面包店'
    """
    return [name for name in _all_texts() if name.startswith(CHINESE_PREFIX)]


def course_text_path(name: str) -> Path:
    """The path of one of the course's texts (English or Chinese); the error lists the ones
    there are.

    Only those names are accepted, so ``"../README.md"`` or an absolute path is not read.
    """
    path = DATA_DIR / name
    if name not in _all_texts():
        known = ", ".join(_all_texts())
        raise FileNotFoundError(f"no course text {name!r} in {DATA_DIR}; there are: {known}")
    return path


def course_text(name: str) -> str:
    """The contents of one of the course's texts in ``data/``."""
    return course_text_path(name).read_text(encoding="utf-8")


def english_prose(max_chars: int | None = None) -> str:
    """English prose from ``pydoc_data.topics`` (about 0.47 MB), topics in sorted order."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[name] for name in sorted(topics))
    return text if max_chars is None else text[: check_int(max_chars, "max_chars")]


def python_source_files() -> list[Path]:
    """The standard library's ``.py`` files (not site-packages), in a fixed order.

    Listed once per process (the standard library does not change under it): the course
    takes Python source in many places, in tests and notebooks alike.
    """
    return list(_stdlib_python_files())


@functools.lru_cache(maxsize=1)
def _stdlib_python_files() -> tuple[Path, ...]:
    # site-packages is left unwalked: it often holds several times the standard library.
    found = []
    for folder, subfolders, files in os.walk(sysconfig.get_paths()["stdlib"]):
        subfolders[:] = [name for name in subfolders if name != "site-packages"]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return tuple(sorted(found))


def python_source(max_bytes: int, separator: str = ENDOFTEXT) -> str:
    """The first ``max_bytes`` of the standard library's source, files joined by ``separator``.

    Files that are not valid UTF-8 (a few test files are, on purpose) are skipped. The
    result is cut at a character boundary, so it is at most ``max_bytes`` of UTF-8.
    """
    check_int(max_bytes, "max_bytes")
    documents: list[str] = []
    total = 0
    for path in python_source_files():
        if total >= max_bytes:
            break
        try:
            document = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        documents.append(document)
        total += len(document.encode("utf-8")) + len(separator.encode("utf-8"))
    joined = separator.join(documents).encode("utf-8")[:max_bytes]
    return joined.decode("utf-8", errors="ignore")


def corpus_head(paths: PathLike | Sequence[PathLike], max_bytes: int) -> str:
    """The first ``max_bytes`` of the files in ``paths`` (or one path), as text.

    Invalid UTF-8 becomes U+FFFD: this is a sample to measure, not the corpus to train on.
    """
    parts: list[str] = []
    for path in corpus_paths(paths):
        if max_bytes <= 0:
            break
        with open(path, "rb") as file:
            data = file.read(max_bytes)
        max_bytes -= len(data)
        parts.append(decode_text(data, path, errors="replace"))
    return "".join(parts)


def write_python_source(path: str | os.PathLike[str], max_bytes: int) -> Path:
    """Write :func:`python_source` to ``path`` (atomically) and return the path."""
    with atomic_write(path) as file:
        file.write(python_source(max_bytes))
    return Path(path)


def download_tinystories(
    folder: str | os.PathLike[str], split: str = "valid", progress: bool = True
) -> Path:
    """Download TinyStories (``"valid"``: 22 MB, ``"train"``: 2.2 GB) into ``folder``.

    Optional and online only: nothing in the course or its tests calls this. An existing
    file is kept; a download is written to a temporary name and renamed when complete.
    """
    if split not in TINYSTORIES_URLS:
        raise ValueError(f"split must be one of {sorted(TINYSTORIES_URLS)}, not {split!r}")
    url = TINYSTORIES_URLS[split]
    target = Path(folder) / url.rsplit("/", 1)[1]
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    from tqdm.auto import tqdm

    with urllib.request.urlopen(url) as response:
        total = int(response.headers.get("Content-Length") or 0) or None
        with (
            atomic_write(target, "wb") as file,
            tqdm(total=total, unit="B", unit_scale=True, disable=not progress) as bar,
        ):
            for block in iter(lambda: response.read(1 << 20), b""):
                file.write(block)
                bar.update(len(block))
    return target
