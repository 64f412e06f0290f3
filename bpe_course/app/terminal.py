"""Text at the terminal: arguments in, ids parsed, output written whatever the locale.

A command line meets text in the forms the operating system hands it over: arguments
decoded with the locale's encoding, streams that claim ASCII, a standard output that is
closed or a disk that is full. These helpers make each of those an exact answer or a clear
message, never a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO, TextIO

from ..course.viz import draw_controls


def argument_text(value: str) -> str:
    """A command-line argument as a UTF-8 locale would give it, whatever the locale is.

    Python decodes arguments with the locale's encoding and keeps the bytes it cannot
    decode as lone surrogates; in the C locale with UTF-8 mode off that turns a typed
    ``«eos»`` into four surrogates. ``os.fsencode`` gives back the exact bytes, read here
    as UTF-8; bytes that are not UTF-8 stay lone surrogates, as a UTF-8 locale leaves
    them (the tokenizer reads each as U+FFFD, as tiktoken does).

    >>> argument_text("\\udcc2\\udcabeos\\udcc2\\udcbb")   # «eos» as the C locale passes it
    '«eos»'
    """
    try:
        data = os.fsencode(value)
    except UnicodeEncodeError:  # surrogates no OS argument holds: a caller's own string
        return value
    return data.decode("utf-8", errors="surrogateescape")


def printable(message: str) -> str:
    """``message`` as it can always be printed, and printed safely.

    Lone surrogates are written as ``\\udcff``: arguments that are not valid UTF-8 reach
    Python as lone surrogates (a file name with a Latin-1 byte, say), and echoing them in
    an error must not itself fail. Control characters are written as ``\\x1b``
    (:func:`~bpe_course.course.viz.draw_controls`): a file name or a word echoed from the
    input must not set the terminal's title or repaint the screen.

    >>> printable("no such file: a\\x1b]0;pwned\\x07\\udcff")
    'no such file: a\\\\x1b]0;pwned\\\\x07\\\\udcff'
    """
    return draw_controls(message).encode("utf-8", errors="backslashreplace").decode("utf-8")


class OutputError(OSError):
    """Output that cannot be written: the stream is closed, or the disk under it is full."""


def write_utf8(stream: TextIO | None, text: str) -> None:
    """Write ``text`` to a text stream's bytes as UTF-8, whatever encoding the stream claims.

    Tokenizer output is UTF-8 by nature, and an ASCII-only ``PYTHONIOENCODING`` or locale
    must not turn it into an error after the work is done. A stream with no bytes under it
    (``io.StringIO``, as ``contextlib.redirect_stdout`` installs) gets the text. One that is closed
    (``None``, as Python makes ``sys.stdout`` when started without one) or that fails
    raises :class:`OutputError` saying so; a reader that went away (``BrokenPipeError``)
    is passed on, since a command line stops quietly then.
    """
    if stream is None:
        raise OutputError("cannot write the output: standard output is closed")
    try:
        stream.flush()
        if not hasattr(stream, "buffer"):  # io.StringIO, redirect_stdout: text is fine there
            stream.write(text)
            return
        stream.buffer.write(text.encode("utf-8", errors="replace"))
        stream.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(f"cannot write the output: {error.strerror or error}") from None


#: A token id written as text: ASCII digits only (``int()`` would also take ``١٢`` or ``1_0``).
TOKEN_ID = re.compile(r"[0-9]+")

#: A text of ids and nothing else (``\\s`` is the whitespace ``str.split`` splits at).
ONLY_DIGITS_AND_SPACE = re.compile(r"[0-9\s]*")

#: The most digits a word may have and still be read as an id (leading zeros included):
#: a word from an endless input without whitespace is refused at once, not held.
MAX_ID_DIGITS = 100


def iter_token_ids(texts: Iterable[str], where: str) -> Iterator[list[int]]:
    """The token ids of each text of ``texts``, as a list per text, read as they come.

    Ids are ASCII digits separated by any whitespace, and a text may end inside one (blocks
    of a stream; arguments are joined with a space). Anything else is refused with a
    ``ValueError`` naming the word, its number and ``where``, as soon as the text holding
    its first wrong character is read.

    >>> list(iter_token_ids(["15496 1", "1\\t995\\r\\n", "0"], "<stdin>"))
    [[15496], [11, 995], [0]]
    >>> list(iter_token_ids(["15496 1", "x"], "<stdin>"))
    Traceback (most recent call last):
    ValueError: <stdin>: '1x' is not a token id (word 2; digits 0-9 only)
    """
    count, tail = 0, ""
    for text in texts:
        text = tail + text
        words = text.split()
        tail = words.pop() if words and not text[-1].isspace() else ""
        ids: list[int] = []
        try:
            if ONLY_DIGITS_AND_SPACE.fullmatch(text) and max(map(len, words), default=0) <= 20:
                ids = list(map(int, words))  # the usual case, at C speed
            else:
                for word in words:
                    ids.append(_token_id(word, count + len(ids) + 1, where))
            if tail:
                _token_id(tail, count + len(ids) + 1, where, complete=False)  # refuse it now
        except ValueError:
            if ids:
                yield ids  # the ids before the bad word still count
            raise
        count += len(ids)
        if ids:
            yield ids
    if tail:
        yield [_token_id(tail, count + 1, where)]


def _token_id(word: str, number: int, where: str, complete: bool = True) -> int:
    """The id ``word`` writes, or a ``ValueError``; the start of a word (``complete`` false)
    is only checked for what no more digits could mend."""
    if not TOKEN_ID.fullmatch(word):
        shown = repr(word[:20]) + ("..." if len(word) > 20 else "")
        raise ValueError(f"{where}: {shown} is not a token id (word {number}; digits 0-9 only)")
    if len(word.lstrip("0")) > 20:  # beyond any tokenizer, and too long for int() maybe
        digits = f"{len(word)} digits" if complete else "more than 20 digits"
        raise ValueError(f"unknown token id {word[:20]}... ({digits})")
    if len(word) > MAX_ID_DIGITS:
        raise ValueError(f"{where}: word {number} has over {MAX_ID_DIGITS} digits, too many "
                         "for a token id")
    return int(word) if complete else 0


class MeteredReader:
    """A binary stream that counts the bytes read from it, for messages ("after 3 GB")."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.bytes_read = 0

    def read1(self, size: int = -1) -> bytes:
        """At most ``size`` bytes, from one system read where the stream allows it."""
        return self._counted(getattr(self.stream, "read1", self.stream.read)(size))

    def read(self, size: int = -1) -> bytes:
        return self._counted(self.stream.read(size))

    def _counted(self, data: bytes) -> bytes:
        self.bytes_read += len(data)
        return data
