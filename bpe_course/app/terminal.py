"""Text at the terminal: arguments in, ids parsed, output written whatever the locale.

A command line meets text in the forms the operating system hands it over: arguments
decoded with the locale's encoding, streams that claim ASCII, a standard output that is
closed or a disk that is full. These helpers make each of those an exact answer or a clear
message, never a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TextIO


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
    """``message`` with lone surrogates written as ``\\udcff``, so it can always be printed.

    Arguments that are not valid UTF-8 reach Python as lone surrogates (a file name with a
    Latin-1 byte, say); echoing them in an error must not itself fail.
    """
    return message.encode("utf-8", errors="backslashreplace").decode("utf-8")


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


def parse_token_ids(texts: Iterable[str], where: str) -> list[int]:
    """Token ids written as ASCII digits and separated by any whitespace (also inside one
    text, as a shell's ``"$(cat ids.txt)"`` gives); anything else names the word and where.

    >>> parse_token_ids(["15496 11", "995\\t0\\r\\n"], "arguments")
    [15496, 11, 995, 0]
    """
    ids = []
    for word in " ".join(texts).split():
        if not TOKEN_ID.fullmatch(word):
            raise ValueError(f"{where}: {word!r} is not a token id (digits 0-9 only)")
        if len(word.lstrip("0")) > 20:  # beyond any tokenizer, and too long for int() maybe
            raise ValueError(f"unknown token id {word[:20]}... ({len(word)} digits)")
        ids.append(int(word))
    return ids
