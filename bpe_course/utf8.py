"""Bytes and UTF-8: the alphabet every byte-level tokenizer starts from.

A byte-level BPE tokenizer never sees characters. It sees the UTF-8 bytes of the text, so
its 256 base tokens can spell any string in any language, and no input is "unknown".
The price is that a token may end in the middle of a character, so decoding must be
done on the joined bytes of all tokens, never token by token.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from typing import BinaryIO

#: How many base tokens a byte-level vocabulary starts with: one per possible byte.
NUM_BYTES = 256


#: Corpus bytes are read and decoded in blocks of this many bytes.
READ_BLOCK = 1 << 20


def byte_vocab() -> dict[int, bytes]:
    """The starting vocabulary: id ``i`` is the single byte ``i``, for ``i`` in 0..255.

    >>> vocab = byte_vocab()
    >>> len(vocab), vocab[104] + vocab[105]
    (256, b'hi')
    """
    return {i: bytes([i]) for i in range(NUM_BYTES)}


def decode_utf8(data: bytes) -> str:
    """Decode bytes to text, replacing any invalid UTF-8 with U+FFFD.

    Token ids can stop in the middle of a multi-byte character (think of a model that
    was cut off), so a decoder must not crash on them; the replacement character shows
    the reader where the bytes were incomplete.

    >>> "牛".encode("utf-8")
    b'\\xe7\\x89\\x9b'
    >>> decode_utf8(b"\\xe7\\x89")   # the first two of the three bytes
    '\\ufffd'
    """
    return data.decode("utf-8", errors="replace")


class InvalidUtf8Error(ValueError):
    """Raised when a corpus file is not valid UTF-8; the message names the file and offset."""

    def __init__(self, source: str | os.PathLike[str], offset: int, reason: str) -> None:
        self.source = os.fspath(source)
        self.offset = offset
        self.reason = reason
        super().__init__(
            f"{self.source}: not valid UTF-8 at byte offset {offset} ({reason}); "
            "fix the file, or pass errors='replace' to read invalid bytes as U+FFFD"
        )

    def __reduce__(self):  # so the error survives the trip back from a worker process
        return (type(self), (self.source, self.offset, self.reason))


def decode_strict(data: bytes, source: str | os.PathLike[str], start_offset: int = 0) -> str:
    """Decode ``data`` as UTF-8, or raise :class:`InvalidUtf8Error` naming ``source``.

    ``start_offset`` is where ``data`` begins inside the file, so the offset in the
    error is the one a hex editor would show.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidUtf8Error(source, start_offset + error.start, error.reason) from None


#: The ``errors`` values a corpus may be read with: stop at invalid UTF-8, or read it as U+FFFD.
CORPUS_ERRORS = ("strict", "replace")


def check_errors(errors: str) -> str:
    """Refuse an ``errors`` mode before any file is read, not when the first bad byte appears."""
    if errors not in CORPUS_ERRORS:
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    return errors


def decode_text(
    data: bytes, source: str | os.PathLike[str], errors: str = "strict", start_offset: int = 0
) -> str:
    """Decode corpus bytes: strictly (an error names ``source`` and the offset) or with U+FFFD.

    This is the one place the package turns corpus bytes into text, so every reader (whole
    files, chunks in worker processes, the command line) reports bad bytes the same way.
    """
    if check_errors(errors) == "strict":
        return decode_strict(data, source, start_offset)
    return data.decode("utf-8", errors="replace")


def iter_utf8(stream: BinaryIO, source: str, errors: str = "strict") -> Iterator[str]:
    """Decode a byte stream block by block, keeping memory flat however long it is.

    A character cut by a block boundary is held back until its last byte arrives (that is
    what an incremental decoder does), and an invalid byte raises
    :class:`InvalidUtf8Error` with its offset in the whole stream. Reading bytes, not text
    mode, keeps ``\\r\\n`` as it is: a tokenizer must see exactly the characters in the file.

    >>> import io
    >>> list(iter_utf8(io.BytesIO("añb".encode()), "<example>"))
    ['añb']
    """
    decoder = codecs.getincrementaldecoder("utf-8")(check_errors(errors))
    # One system read per block where the stream allows it: ``read`` would wait for a full
    # block, so at a terminal the user would have to press Ctrl-D twice to end the input.
    read = getattr(stream, "read1", stream.read)
    consumed = 0
    while True:
        try:
            block = read(READ_BLOCK)
        except OSError as error:  # the error of a failed read does not name the file
            raise OSError(f"cannot read {source}: {error.strerror or error}") from None
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as error:
            raise InvalidUtf8Error(source, consumed - pending + error.start, error.reason) from None
        consumed += len(block)
        if text:
            yield text
        if not block:
            return


def replace_lone_surrogates(text: str) -> str:
    """Make ``text`` encodable as UTF-8: join surrogate pairs, lone surrogates become U+FFFD.

    Python strings can hold surrogates (``json.loads('"\\\\ud83d"')``, file names decoded with
    ``surrogateescape``), and UTF-8 cannot encode them. tiktoken encodes such text as if
    each lone surrogate were U+FFFD, so we do the same; text without surrogates is returned
    as it is, at no cost beyond one scan.

    >>> replace_lone_surrogates("a\\ud83d\\ude00b\\udc00")
    'a😀b\\ufffd'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text
