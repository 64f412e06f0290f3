"""Quoting what a file or a user sent, in an error message, at a bounded length.

A message quotes the token, line or pattern it is about, so the reader can find it. But
the thing quoted comes from outside: a rank file can hold a token of 100 MB, and quoting
it whole made an error message of 300 MB that took half a minute to build and print.
Every message therefore quotes through :func:`quote`, which shows the start and says how
long the rest is. Forty items are enough to recognise a token (the longest in OpenAI's
vocabularies are runs of spaces or dashes, and 40 show what they are made of).
"""

from __future__ import annotations

#: How many bytes (of a ``bytes``) or characters (of a ``str``) a message shows.
QUOTE_ITEMS = 40


def quote(value: object, limit: int = QUOTE_ITEMS) -> str:
    """``repr(value)`` for a short ``bytes`` or ``str``; for a longer one, the repr of its
    first ``limit`` items and how long the whole is. A tuple or list (a merge, a pair of
    parts) is quoted item by item; anything else is its repr, cut to a few hundred
    characters (a dict from a config file).

    >>> quote(b"low")
    "b'low'"
    >>> quote("x" * 100, limit=5)
    "'xxxxx'... (100 characters)"
    >>> quote(b"\\xff" * 10**6, limit=2)
    "b'\\\\xff\\\\xff'... (1,000,000 bytes)"
    >>> quote((b"a", b"b" * 50))
    "(b'a', b'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'... (50 bytes))"
    """
    if isinstance(value, (bytes, bytearray, str)):
        if len(value) <= limit:
            return repr(value)
        unit = "characters" if isinstance(value, str) else "bytes"
        return f"{value[:limit]!r}... ({len(value):,} {unit})"
    if isinstance(value, (tuple, list)):
        items = [quote(item, limit) for item in value[:4]] + (["..."] if len(value) > 4 else [])
        inside = ", ".join(items) + ("," if isinstance(value, tuple) and len(value) == 1 else "")
        return f"({inside})" if isinstance(value, tuple) else f"[{inside}]"
    text = repr(value)
    cut = 8 * limit
    return text if len(text) <= cut else f"{text[:cut]}... ({len(text):,} characters)"
