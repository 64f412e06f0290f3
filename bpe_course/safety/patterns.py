"""Split patterns from anywhere: refused when they could lose text, stopped when they hang.

A tokenizer's split pattern can come from code or from a file (a tokenizer folder's
``config.json``), and three things can go wrong with one that is not this package's own:

- A capture group. ``findall`` then returns what the groups captured instead of the
  pieces: with ``(\\w)+|\\s``, ``"Hello"`` becomes ``"o"``. Refused as soon as the pattern
  is compiled (a group that does not capture, ``(?:...)``, is fine).
- Text that no piece covers. ``findall`` skips what no alternative matches: with
  ``[a-z]+``, ``"Hello world 42!"`` loses ``H``, the spaces and ``42!``. Whether a pattern
  matches every possible text cannot be read off the pattern in general, so it is checked
  where the pattern is used, at the cost of one sum: the pieces must add up to the text,
  else the encoder (or the trainer) stops and names the first character left out.
- Catastrophic backtracking. A pattern such as ``(?:a|a)+b`` tries every way to split a
  run of ``a`` before it gives up, so its time doubles with each character: 28 of them
  took half a minute. A split by a pattern that is not proven therefore runs under the
  ``regex`` module's time limit, :data:`PATTERN_SECONDS` plus
  :data:`PATTERN_SECONDS_PER_CHAR` for each character (of CPU time): far more than any
  reasonable pattern needs (a slow one splits a megabyte in a second), and a bound on any
  other. tiktoken bounds the same thing by counting backtracking steps, Hugging Face by
  Oniguruma's retry limit; ``regex`` offers time.

GPT-2's, GPT-4's and o200k's patterns need none of this (:data:`PROVEN_PATTERNS`): they
have no groups, every character of any text falls in a piece, and they run in linear
time, so they keep the fast path. The limit costs a pattern of your own more: ``regex``
reads the clock at every piece, and the standard library's faster ``re``, which has no
limit, is not used for it; encoding English prose took 2.5 times as long as with the same
pattern unguarded. To trust your own patterns, set :data:`PATTERN_SECONDS` to ``None``
before making the tokenizer: no time limit, and the fast path (text a pattern leaves out
is still refused).
"""

from __future__ import annotations

import re
import sys

import regex

from ..pretokens import compile_pattern
from .proven import PROVEN_PATTERNS, is_proven, vouch_for
from .quoting import quote

#: Kept in :mod:`.proven` (loading no ``regex``); their names stay importable from here.
__all__ = ["PATTERN_SECONDS", "PATTERN_SECONDS_PER_CHAR", "PROVEN_PATTERNS", "PatternError",
           "check_split_pattern", "is_proven", "split_bounded", "time_limited", "vouch_for"]

#: CPU seconds any split may take, plus :data:`PATTERN_SECONDS_PER_CHAR` per character;
#: ``None``: no limit (read when a tokenizer is made, or a trainer starts).
PATTERN_SECONDS: float | None = 1.0
#: 10 microseconds a character: 10 s for a megabyte, ten times what a slow pattern needs.
PATTERN_SECONDS_PER_CHAR = 1e-5


class PatternError(ValueError):
    """A split pattern that would lose text, or that took too long; the message says which."""


def check_split_pattern(pattern: str | regex.Pattern[str]) -> regex.Pattern[str]:
    """The compiled pattern, if it can cut text into pieces; :class:`PatternError` if it has a
    capture group or matches the empty string (``ValueError`` if it is not a pattern).

    >>> check_split_pattern(r"(\\w)+|\\s")
    Traceback (most recent call last):
    ...
    bpe_course.safety.patterns.PatternError: the split pattern '(\\\\w)+|\\\\s' has 1 capture \
group, so findall would return what the group captured instead of each piece, and lose \
the rest of the text; group with (?:...), which does not capture
    """
    compiled = compile_pattern(pattern)
    shown = quote(compiled.pattern)
    if compiled.groups:
        groups = f"{compiled.groups} capture group" + ("s" if compiled.groups > 1 else "")
        raise PatternError(
            f"the split pattern {shown} has {groups}, so findall would return what the "
            f"group captured instead of each piece, and lose the rest of the text; group "
            "with (?:...), which does not capture"
        )
    if compiled.match("") is not None:
        raise PatternError(
            f"the split pattern {shown} matches the empty string, so the text it skips "
            "would be lost"
        )
    return compiled


def time_limited() -> bool:
    """Do splits by patterns that are not proven run under a time limit?"""
    return PATTERN_SECONDS is not None


def split_bounded(
    compiled: regex.Pattern[str] | re.Pattern[str],
    text: str,
    pos: int = 0,
    endpos: int = sys.maxsize,
) -> list[str]:
    """``compiled.findall(text, pos, endpos)``, stopped after the time limit (for a
    ``regex`` pattern, unless there is none), and refused (:class:`PatternError`) when the
    pieces leave out a character.

    >>> split_bounded(regex.compile(r"[a-z]+| "), "hello world")
    ['hello', ' ', 'world']
    >>> split_bounded(regex.compile(r"[a-z]+| "), "Hello")
    Traceback (most recent call last):
    ...
    bpe_course.safety.patterns.PatternError: the split pattern '[a-z]+| ' leaves out 'H' \
(U+0048) in 'Hello': every character must be in some piece, or encoding would lose it; \
end the pattern with an alternative that takes any character, such as |[\\s\\S]
    """
    endpos = min(endpos, len(text))
    if PATTERN_SECONDS is None or not isinstance(compiled, regex.Pattern):
        pieces = compiled.findall(text, pos, endpos)
    else:
        pieces = _findall_in_time(compiled, text, pos, endpos, PATTERN_SECONDS)
    if sum(map(len, pieces)) != max(endpos - pos, 0):  # pieces never overlap: a gap is lost text
        raise _uncovered(compiled, text, pos, endpos)
    return pieces


def _findall_in_time(
    compiled: regex.Pattern[str], text: str, pos: int, endpos: int, base_seconds: float
) -> list[str]:
    seconds = base_seconds + PATTERN_SECONDS_PER_CHAR * max(endpos - pos, 0)
    try:
        return compiled.findall(text, pos, endpos, timeout=seconds)
    except TimeoutError:
        raise PatternError(
            f"the split pattern {quote(compiled.pattern)} took more than {seconds:.1f} s "
            f"(of CPU time) to split {endpos - pos:,} characters starting "
            f"{text[pos : min(endpos, pos + 40)]!r}: it backtracks too much on this text "
            "(as (?:a|a)+b does on a run of a); simplify it, or raise "
            "bpe_course.safety.patterns.PATTERN_SECONDS"
        ) from None


def _uncovered(
    compiled: regex.Pattern[str] | re.Pattern[str], text: str, pos: int, endpos: int
) -> PatternError:
    """The error naming the first character of ``text[pos:endpos]`` that no piece covers."""
    covered = pos
    for match in compiled.finditer(text, pos, endpos):
        if match.start() > covered:
            break
        covered = match.end()
    char = text[covered]
    context = text[max(pos, covered - 20) : min(endpos, covered + 20)]
    return PatternError(
        f"the split pattern {quote(compiled.pattern)} leaves out {char!r} "
        f"(U+{ord(char):04X}) in {quote(context)}: every character must be in some piece, "
        "or encoding would lose it; end the pattern with an alternative that takes any "
        "character, such as |[\\s\\S]"
    )
