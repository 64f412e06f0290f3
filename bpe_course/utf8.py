"""Bytes and UTF-8: the alphabet every byte-level tokenizer starts from.

A byte-level BPE tokenizer never sees characters. It sees the UTF-8 bytes of the text, so
its 256 base tokens can spell any string in any language, and no input is "unknown".
The price is that a token may end in the middle of a character, so decoding must be
done on the joined bytes of all tokens, never token by token.
"""

from __future__ import annotations

import os

#: How many base tokens a byte-level vocabulary starts with: one per possible byte.
NUM_BYTES = 256


def byte_vocab() -> dict[int, bytes]:
    """The starting vocabulary: id ``i`` is the single byte ``i``, for ``i`` in 0..255."""
    return {i: bytes([i]) for i in range(NUM_BYTES)}


def decode_utf8(data: bytes) -> str:
    """Decode bytes to text, replacing any invalid UTF-8 with U+FFFD.

    Token ids can stop in the middle of a multi-byte character (think of a model that
    was cut off), so a decoder must not crash on them; the replacement character shows
    the reader where the bytes were incomplete.
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
