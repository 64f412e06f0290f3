"""GPT-2's file format for a vocabulary and its merges.

Tokens are bytes, but ``vocab.json`` and ``merges.txt`` are text files, and many bytes (a
space, a newline, half of a UTF-8 character) would be invisible or invalid there. GPT-2
therefore writes every byte as one printable character: the printable Latin-1 bytes stand
for themselves and the other 68 bytes are shifted to characters from U+0100 upward. That
is why a space shows up as ``Ġ`` (U+0120) and a newline as ``Ċ`` (U+010A).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from functools import lru_cache

from ..safety.files import atomic_write
from ..safety.quoting import quote
from ..safety.reading import read_bytes


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to a printable character (``32 -> "Ġ"``)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {byte: chr(byte) for byte in printable}
    shifted = 0
    for byte in range(256):
        if byte not in mapping:
            mapping[byte] = chr(256 + shifted)
            shifted += 1
    return mapping


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of :func:`bytes_to_unicode` (``"Ġ" -> 32``)."""
    return {char: byte for byte, char in bytes_to_unicode().items()}


def token_to_str(token: bytes) -> str:
    """Write a token the way GPT-2's files do: ``b" the"`` -> ``"Ġthe"``.

    A decoding table does it in C: a token learned from a long run of one character can be
    megabytes, and a Python step per byte took seconds.
    """
    return codecs.charmap_decode(token, "strict", _byte_chars())[0]


@lru_cache(maxsize=1)
def _byte_chars() -> str:
    """:func:`bytes_to_unicode` as a decoding table: the character of byte ``b`` at ``b``."""
    return "".join(bytes_to_unicode()[byte] for byte in range(256))


@lru_cache(maxsize=1)
def _to_latin1() -> tuple[frozenset[str], dict[int, str]]:
    """GPT-2's characters, and the table that turns each into the Latin-1 character of its
    byte: ``str.translate`` then ``encode("latin-1")`` reads a token in C, not per character
    in Python (a vocabulary of 128,000 tokens loads about 0.5 s faster)."""
    table = unicode_to_bytes()
    return frozenset(table), {ord(char): chr(byte) for char, byte in table.items()}


def str_to_token(text: str, where: str = "") -> bytes:
    """Read a token written by :func:`token_to_str`; ``where`` names the place for errors."""
    alphabet, latin1 = _to_latin1()
    if alphabet.issuperset(text):
        return text.translate(latin1).encode("latin-1")
    stray = next(char for char in text if char not in alphabet)
    raise ValueError(
        f"{where}: token {quote(text)} has character {stray!r}, which is not in "
        "GPT-2's byte-to-unicode mapping"
    )


#: Ids and ranks must fit in 32 bits: tiktoken and Hugging Face store them that way, and a
#: larger number in a hand-edited file is a typo, not a vocabulary.
MAX_ID = 2**32 - 1


def check_id(value: object, what: str) -> int:
    """``value`` if it is a whole number from 0 to :data:`MAX_ID`; else a ValueError
    that starts with ``what`` (which names the file and the token).

    >>> check_id(10**5000, "v.json: token 'a'")
    Traceback (most recent call last):
    ...
    ValueError: v.json: token 'a' has id (a number of 16,610 bits), too large (ids must be \
below 2**32)
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} has id {_shown_number(value)}, not an id >= 0")
    if value > MAX_ID:
        shown = _shown_number(value)
        raise ValueError(f"{what} has id {shown}, too large (ids must be below 2**32)")
    return value


def _shown_number(value: object) -> str:
    """A number as a message shows it (Python will not write one of 4,300 digits or more)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 64:
        return f"{'-' if value < 0 else ''}(a number of {abs(value).bit_length():,} bits)"
    return quote(value)


def write_vocab_json(path: str | os.PathLike[str], vocab: dict[int, bytes]) -> None:
    """Write ``{token: id}`` with tokens in GPT-2's byte-to-unicode spelling."""
    for token_id, token in vocab.items():  # never write what read_vocab_json would refuse
        check_id(token_id, f"cannot write {path}: token {quote(token)}")
        if not token:
            raise ValueError(f"cannot write {path}: id {token_id} is the empty token")
    entries = {token_to_str(token): token_id for token_id, token in sorted(vocab.items())}
    if len(entries) != len(vocab):
        raise ValueError(
            f"cannot write {path}: the vocabulary has the same bytes under two ids, "
            "which vocab.json ({token: id}) cannot express"
        )
    with atomic_write(path) as file:
        json.dump(entries, file, ensure_ascii=False, indent=0)
        file.write("\n")


def write_merges_txt(path: str | os.PathLike[str], merges: list[tuple[bytes, bytes]]) -> None:
    """Write one merge a line, ``first second``, after GPT-2's ``#version`` header."""
    with atomic_write(path) as file:
        file.write("#version: 0.2\n")
        for first, second in merges:
            file.write(f"{token_to_str(first)} {token_to_str(second)}\n")


def read_vocab_json(path: str | os.PathLike[str]) -> dict[int, bytes]:
    """Read ``{token: id}`` written with GPT-2's byte-to-unicode mapping."""
    path = os.fspath(path)

    def refuse_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
        seen: dict[str, object] = {}
        for key, value in pairs:
            if key in seen:
                raise ValueError(
                    f"{path}: token {quote(key)} appears twice (ids {quote(seen[key])} and "
                    f"{quote(value)})"
                )
            seen[key] = value
        return seen

    data = read_bytes(path, "vocab file")
    try:
        # utf-8-sig: a byte order mark at the start (Windows Notepad writes one) is skipped.
        raw = json.loads(data.decode("utf-8-sig"), object_pairs_hook=refuse_repeats)
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not UTF-8 at byte offset {error.start} ({error.reason})"
        ) from None
    except RecursionError:
        raise ValueError(f"{path}: not a JSON vocabulary (lists nested too deeply)") from None
    except ValueError as error:  # also a number too long for Python's int() to read
        if str(error).startswith(f"{path}:"):
            raise
        raise ValueError(f"{path}: not a valid JSON vocabulary ({error})") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a JSON object {{token: id}}, got {type(raw).__name__}")
    vocab: dict[int, bytes] = {}
    for text, token_id in raw.items():
        check_id(token_id, f"{path}: token {quote(text)}")
        if not text:
            raise ValueError(f"{path}: the empty token has id {token_id}; a token is 1+ bytes")
        if token_id in vocab:
            raise ValueError(f"{path}: id {token_id} is given to two tokens")
        vocab[token_id] = str_to_token(text, where=path)
    return vocab


def read_merges_txt(path: str | os.PathLike[str]) -> list[tuple[bytes, bytes]]:
    """Read ``first second`` lines; a ``#version`` header and blank lines are skipped."""
    return [(left, right) for _, left, right in read_merge_lines(path)]


def read_merge_lines(path: str | os.PathLike[str]) -> list[tuple[int, bytes, bytes]]:
    """Like :func:`read_merges_txt`, with each merge's line number (for error messages).

    Lines may end in LF, CRLF or a lone CR (no token holds a raw CR: GPT-2 writes byte 13
    as ``č``). A merge may only join single bytes and tokens made by earlier lines, and
    may appear once: a file that breaks either rule was not written by BPE training, and
    encoding with it would quietly skip merges.
    """
    path = os.fspath(path)
    merges: list[tuple[int, bytes, bytes]] = []
    raw_lines = re.split(rb"\r\n|\r|\n", read_bytes(path, "merges file"))
    if raw_lines and raw_lines[0].startswith(b"\xef\xbb\xbf"):
        raw_lines[0] = raw_lines[0][3:]  # a byte order mark, as Notepad writes
    made: set[bytes] = set()
    lines_of: dict[str, int] = {}
    for number, raw_line in enumerate(raw_lines, start=1):
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"{path}:{number}: not UTF-8 at byte {error.start + 1} of the line ({error.reason})"
            ) from None
        if not line or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(
                f"{path}:{number}: expected two tokens separated by one space, got {quote(line)}"
            )
        where = f"{path}:{number}"
        if line in lines_of:
            raise ValueError(f"{where}: merge {quote(line)} repeats line {lines_of[line]}")
        lines_of[line] = number
        left, right = str_to_token(parts[0], where), str_to_token(parts[1], where)
        for text, token in zip(parts, (left, right)):
            if len(token) > 1 and token not in made:
                raise ValueError(
                    f"{where}: merge uses {quote(text)}, which no earlier line makes (merges "
                    "must be in the order they were learned)"
                )
        made.add(left + right)
        merges.append((number, left, right))
    return merges
