"""A corpus encoded for training: one NumPy array of token ids in a ``.npy`` file.

Training loops in the style of nanoGPT and CS336 read a corpus as one long array of ids,
opened with ``np.load(path, mmap_mode="r")`` (or ``np.memmap``) so that a batch is a slice
of the file and the corpus never has to fit in memory. :func:`encode_to_array` writes that
file:

- the ids are exactly ``encode_ordinary`` of the text: the files' concatenation, or each
  file followed by the end-of-text id when documents are separated;
- the dtype is the smallest that holds every id of the tokenizer: ``uint16`` (2 bytes a
  token) when the largest id is below 65,536 (GPT-2's 50,257), else ``uint32`` (cl100k_base,
  o200k_base, the open models); a dtype too small for the vocabulary is refused, never
  wrapped around;
- memory stays bounded: the files are read in blocks, cut where the split pattern provably
  never joins two neighbours (:mod:`bpe_course.speed.cuts`), encoded a batch at a time on
  every core (:mod:`bpe_course.speed.batches`) and written as they come. The ``.npy`` header,
  which holds the array's length, is written last, over a placeholder of the same size;
- the file appears whole or not at all (:func:`bpe_course.safety.files.atomic_write`): an
  error or Ctrl-C half-way leaves no half file, and a file already at the path stays as it
  was.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from ..safety.files import atomic_write
from ..speed.batches import map_texts
from ..speed.cuts import CUT_REACH, last_safe_cut, safe_cut_regex
from ..speed.workers import progress_bar
from ..utf8 import iter_utf8
from .rankbpe import normalized_chunks

__all__ = ["EncodedArray", "choose_dtype", "encode_to_array", "largest_id"]

#: The dtypes a token file may use, and the largest id each holds.
DTYPE_LIMITS = {"uint16": (1 << 16) - 1, "uint32": (1 << 32) - 1}

#: Text is encoded in pieces of about this many characters, cut at a safe place.
PIECE_CHARS = 1 << 20

#: A batch of pieces of about this many characters goes to the worker processes at once
#: (at least ``speed.batches.BATCH_PARALLEL_CHARS``, or it would stay in this process).
BATCH_CHARS = 8 << 20


class EncodedArray(NamedTuple):
    """What :func:`encode_to_array` wrote."""

    path: str  #: the ``.npy`` file
    tokens: int  #: the array's length
    dtype: str  #: ``"uint16"`` or ``"uint32"``
    documents: int  #: the files read
    text_bytes: int  #: the bytes of UTF-8 read
    seconds: float  #: the time it took, reading and writing included


def largest_id(tokenizer: Any) -> int:
    """The largest id ``tokenizer`` can produce, special tokens included.

    >>> from bpe_course.openai import gpt2
    >>> largest_id(gpt2())
    50256
    """
    value = getattr(tokenizer, "max_token_value", None)
    if value is None and hasattr(tokenizer, "vocab"):
        value = max(tokenizer.vocab)
    if not isinstance(value, int):
        raise TypeError(
            f"cannot tell the largest id of {type(tokenizer).__name__}: give a tokenizer with "
            "max_token_value (any of this package's, or tiktoken's)"
        )
    return value


def choose_dtype(max_id: int, dtype: str | None = None) -> str:
    """The dtype for ids up to ``max_id``: ``dtype`` if given and wide enough, else the
    smallest that holds them.

    >>> choose_dtype(50_256), choose_dtype(65_535), choose_dtype(100_276)
    ('uint16', 'uint16', 'uint32')
    >>> choose_dtype(100_276, "uint16")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: uint16 holds ids up to 65,535, but this tokenizer's go up to 100,276: use uint32...
    """
    if dtype is not None:
        name = getattr(dtype, "__name__", None) or str(dtype)
        if name not in DTYPE_LIMITS:
            raise ValueError(f"dtype must be one of {', '.join(DTYPE_LIMITS)}, got {dtype!r}")
        if max_id > DTYPE_LIMITS[name]:
            wider = next(n for n, limit in DTYPE_LIMITS.items() if max_id <= limit)
            raise ValueError(
                f"{name} holds ids up to {DTYPE_LIMITS[name]:,}, but this tokenizer's go up to "
                f"{max_id:,}: use {wider} (or leave the dtype to be chosen)"
            )
        return name
    for name, limit in DTYPE_LIMITS.items():
        if max_id <= limit:
            return name
    raise ValueError(f"ids up to {max_id:,} do not fit in uint32: no token file can hold them")


def npy_header(dtype: str, length: int) -> bytes:
    """The ``.npy`` header (format 1.0) of a 1-D little-endian array of ``length`` ids.

    Its size does not depend on ``length`` up to 10**18, so a placeholder written first can
    be overwritten at the end.

    >>> len(npy_header("uint16", 0)) == len(npy_header("uint32", 10**18)) == 128
    True
    """
    import numpy as np

    buffer = io.BytesIO()
    descr = np.lib.format.dtype_to_descr(np.dtype(dtype).newbyteorder("<"))
    header = {"descr": descr, "fortran_order": False, "shape": (length,)}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def text_pieces(blocks: Iterable[str], rule: Any, piece_chars: int = PIECE_CHARS) -> Iterator[str]:
    """The text of ``blocks`` in pieces of about ``piece_chars``, each ending where ``rule``
    allows a cut, so that encoding the pieces one by one gives the ids of the whole text.

    Without a rule (a pattern nothing is proven about) the text is one piece. Text with no
    safe place near its end (one long run of letters) is held until there is one; the text
    held is joined again only once it has doubled, so holding stays linear in its length.

    >>> from bpe_course import GPT2_PATTERN
    >>> list(text_pieces(["one two", " three four"], safe_cut_regex(GPT2_PATTERN), 5))
    ['one', ' two three', ' four']
    >>> blocks = ["x" * 4] * 5 + [" y"]  # no safe place until the end: one piece
    >>> [len(piece) for piece in text_pieces(blocks, safe_cut_regex(GPT2_PATTERN), 3)]
    [22]
    """
    parts: list[str] = []
    size = 0
    wait_for = piece_chars
    for block in blocks:
        parts.append(block)
        size += len(block)
        if rule is not None and size >= wait_for:
            text = "".join(parts)
            cut = last_safe_cut(text, rule, CUT_REACH)
            if cut:
                yield text[:cut]
                text = text[cut:]
            parts, size = [text], len(text)
            wait_for = max(piece_chars, 2 * size)
    text = "".join(parts)
    if text:
        yield text


def check_paths(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The input files as strings; a missing file or a folder is refused by name, up front."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found = [os.fspath(path) for path in paths]
    if not found:
        raise ValueError("no input files given to encode")
    for path in found:
        if not os.path.exists(path):
            raise FileNotFoundError(f"input file not found: {path}")
        if os.path.isdir(path):
            raise IsADirectoryError(f"{path} is a folder, not a text file")
    return found


def encode_to_array(
    tokenizer: Any,
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    dtype: str | None = None,
    separate_documents: bool | None = None,
    num_processes: int | None = None,
    progress: bool = False,
) -> EncodedArray:
    """Encode text files into one ``.npy`` array of ids that ``np.load`` (or
    ``np.load(output, mmap_mode="r")``) reads back.

    Each file is a document. ``separate_documents=None`` puts the tokenizer's end-of-text
    id after each one when it has one, ``True`` demands it, ``False`` writes the ids of the
    files' concatenation. Special tokens spelled in the text are read as text
    (``encode_ordinary``). ``num_processes=None`` uses every core.

    >>> import os, tempfile, numpy as np
    >>> from bpe_course.openai import gpt2
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "a.txt"), "w") as f:
    ...     _ = f.write("Hello world")
    >>> out = os.path.join(folder, "tokens.npy")
    >>> result = encode_to_array(gpt2(), [os.path.join(folder, "a.txt")], out)
    >>> np.load(out).tolist(), result.dtype
    ([15496, 995, 50256], 'uint16')
    """
    import numpy as np

    started = time.perf_counter()
    files = check_paths(paths)
    name = check_dtype_for(tokenizer, dtype)
    limit = DTYPE_LIMITS[name]
    eot = getattr(tokenizer, "eot_token", None)
    if separate_documents and eot is None:
        raise ValueError("separate_documents=True, but the tokenizer has no end-of-text token")
    separator = eot if separate_documents is not False else None
    rule = safe_cut_regex(getattr(tokenizer, "pattern", None) or "")
    normalization = getattr(tokenizer, "normalization", None)
    total = sum(os.path.getsize(path) for path in files if os.path.isfile(path))
    header = npy_header(name, 0)
    tokens = 0
    read_bytes = 0

    def write(ids: list[int], out: Any) -> None:
        nonlocal tokens
        array = np.asarray(ids, dtype=np.int64)
        if array.size and int(array.max()) > limit:  # the tokenizer claimed a smaller vocabulary
            raise ValueError(f"{os.fspath(output)}: id {int(array.max()):,} does not fit in {name}")
        out.write(array.astype(np.dtype(name).newbyteorder("<")).tobytes())
        tokens += array.size

    def blocks(path: str, bar: Any) -> Iterator[str]:
        nonlocal read_bytes
        done = 0  # bytes of this file read so far
        with open(path, "rb") as file:
            texts = iter_utf8(file, path)
            for text in normalized_chunks(texts, normalization) if normalization else texts:
                yield text
                position = file.tell() if file.seekable() else done + len(text.encode())
                bar.update(position - done)
                read_bytes += position - done
                done = position

    def items(bar: Any) -> Iterator[str | int]:
        if separator is None:  # one text: the concatenation of every file
            yield from text_pieces((b for path in files for b in blocks(path, bar)), rule)
            return
        for path in files:
            yield from text_pieces(blocks(path, bar), rule)
            yield separator

    with atomic_write(output, "wb") as out, progress_bar(
        progress, total, "encode", unit="B", unit_scale=True
    ) as bar:
        bar.refresh()
        out.write(header)
        batch: list[str | int] = []
        size = 0
        for item in items(bar):
            batch.append(item)
            size += len(item) if isinstance(item, str) else 0
            if size >= BATCH_CHARS:
                write(encode_items(tokenizer, batch, num_processes), out)
                batch, size = [], 0
        write(encode_items(tokenizer, batch, num_processes), out)
        out.seek(0)
        out.write(npy_header(name, tokens))
    return EncodedArray(os.fspath(output), tokens, name, len(files), read_bytes,
                        time.perf_counter() - started)


def check_dtype_for(tokenizer: Any, dtype: str | None) -> str:
    """The dtype to write ``tokenizer``'s ids in (see :func:`choose_dtype`)."""
    return choose_dtype(largest_id(tokenizer), dtype)


def encode_items(tokenizer: Any, items: list[str | int], num_processes: int | None) -> list[int]:
    """The ids of ``items`` in order: each text encoded (on every core when the batch is big
    enough to pay for it), each id as it is."""
    texts = [item for item in items if isinstance(item, str)]
    encoded = iter(map_texts(tokenizer, "encode_ordinary", texts, {}, num_processes))
    ids: list[int] = []
    for item in items:
        if isinstance(item, str):
            ids.extend(next(encoded))
        else:
            ids.append(item)
    return ids
