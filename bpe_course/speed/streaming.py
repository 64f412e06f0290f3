"""Encoding a stream of text as it arrives, with the ids ``encode`` gives the whole of it.

``encode_iterable`` reads a file line by line (or any stream of strings) and yields ids
without holding the file. The catch is that text read so far may not be final: the last
pretoken could go on in the next chunk (``" hel"`` + ``"lo"``), a special token could be
cut in two, and a high surrogate could pair with a low one. So the stream encodes only up
to the last place that no further text can change:

- a special token is final once the longest special token would fit after its start;
- ordinary text is final up to the last place where the split pattern provably never joins
  two neighbours (:func:`bpe_course.speed.cuts.last_safe_cut`), since both neighbours are
  read already.

Everything after that place is held and read again with the next chunk. A text with no
such place (one pretoken of megabytes, or a pattern with nothing proven about it) waits
for a special token or the end, and :class:`HeldTextWarning` says so once.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator

import regex

from ..safety.specials import SpecialTokens, refuse_disallowed
from ..utf8 import replace_lone_surrogates
from .cuts import CUT_REACH, last_safe_cut

#: The stream collects at least this many characters before encoding them.
STREAM_BUFFER = 1 << 16

#: The stream warns (once) when it holds more than this many characters that it cannot
#: encode yet because no place in them is safe to cut.
HELD_TEXT_WARNING = 1 << 22


class HeldTextWarning(UserWarning):
    """``encode_iterable`` holds a long stretch of text in memory: no place in it is safe to
    cut, so it waits for one (or for a special token, or the end of the stream)."""


def checked_chunks(
    iterable: Iterable[str], specials: SpecialTokens, disallowed: frozenset[str]
) -> Iterator[str]:
    """The chunks of a stream, checked for strings and disallowed special tokens (also
    those cut by a chunk boundary), with surrogates replaced as ``encode`` does."""
    finder = specials.finder(disallowed)
    longest = max(map(len, disallowed), default=0)
    seen, held = "", ""
    for chunk in iterable:
        if not isinstance(chunk, str):
            raise TypeError(f"encode_iterable expects strings, got {type(chunk).__name__}")
        if finder is not None:
            seen = refuse_disallowed(finder, seen + chunk, longest, final=False)
        text = held + chunk
        # A high surrogate at the end may pair with a low one at the start of the next.
        held = text[-1:] if text and "\ud800" <= text[-1] <= "\udbff" else ""
        yield replace_lone_surrogates(text[: len(text) - len(held)])
    if finder is not None:
        refuse_disallowed(finder, seen, longest, final=True)
    yield replace_lone_surrogates(held)


class StreamEncoder:
    """The ids of a stream of strings, each pretoken encoded once it is complete.

    ``encode`` encodes a whole text (special tokens included) and ``encode_ordinary_into``
    appends the ids of a text free of special tokens to a list: a tokenizer's two ways in.
    ``specials`` are the special tokens read as their id and ``safe_cuts`` the finder of
    the pattern's safe places (None: nothing is proven, so text waits).
    """

    def __init__(
        self,
        encode: Callable[[str], list[int]],
        encode_ordinary_into: Callable[[str, list[int]], None],
        specials: SpecialTokens,
        safe_cuts: regex.Pattern[str] | None,
    ) -> None:
        self.encode = encode
        self.encode_ordinary_into = encode_ordinary_into
        self.specials = specials
        self.safe_cuts = safe_cuts

    def ids(self, chunks: Iterable[str]) -> Iterator[int]:
        """Yield the ids of ``"".join(chunks)``, encoding as soon as text is final."""
        parts: list[str] = []
        size = 0
        wait_for = STREAM_BUFFER
        warned = False
        for chunk in chunks:
            parts.append(chunk)
            size += len(chunk)
            if size >= wait_for:
                ids, rest = self.stable_prefix("".join(parts))
                yield from ids
                parts, size = [rest], len(rest)
                if size > HELD_TEXT_WARNING and not warned:
                    warnings.warn(self.held_text_warning(size), stacklevel=2)
                    warned = True
                # What was held back is scanned again next time. Waiting until the buffer
                # is twice that long keeps the total scanning linear even when one pretoken
                # (a megabyte of newlines) stays unfinished for a thousand chunks. Until it
                # has warned, it also looks once just past the threshold: doubling alone
                # could step over it (from 4M - 1 to 8M) and hold 7M characters unannounced.
                wait_for = max(STREAM_BUFFER, 2 * size)
                if not warned and size <= HELD_TEXT_WARNING:
                    wait_for = min(wait_for, HELD_TEXT_WARNING + 1)
        yield from self.encode("".join(parts))

    def stable_prefix(self, text: str) -> tuple[list[int], str]:
        """Encode the part of ``text`` that no further text could change; return the rest."""
        ids: list[int] = []
        position = 0
        longest = self.specials.longest
        finder = self.specials.finder_of_all
        if finder is not None:
            for match in finder.finditer(text):
                if match.start() + longest > len(text):
                    break
                self.encode_ordinary_into(text[position : match.start()], ids)
                ids.append(self.specials.ids[match.group()])
                position = match.end()
        # A special token could still begin in the last ``longest - 1`` characters.
        region_end = max(position, len(text) - max(longest - 1, 0))
        end = position + last_safe_cut(text[position:region_end], self.safe_cuts, CUT_REACH)
        self.encode_ordinary_into(text[position:end], ids)
        return ids, text[end:]

    def held_text_warning(self, size: int) -> HeldTextWarning:
        """What the stream says when it holds ``size`` characters it cannot cut."""
        if self.safe_cuts is None:
            why = (
                "the split pattern has no proven place to cut (only GPT-2's, GPT-4's and "
                "o200k's have), so text waits for a special token or the end of the stream"
            )
        else:
            why = (
                f"in their last {CUT_REACH:,} the split pattern could join any two neighbours "
                "(one very long pretoken?), so they wait until it provably cannot"
            )
        return HeldTextWarning(f"encode_iterable is holding {size:,} characters in memory: {why}")
