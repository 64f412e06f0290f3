"""Counting the pretokens of a large corpus, in chunks and in parallel.

Training needs only one thing from the corpus: how often each pretoken occurs. That table
stays small (hundreds of thousands of entries) while the corpus grows to gigabytes, so we
read the file a chunk at a time, count each chunk in a worker, and add the counts. Counting
is a map-reduce: what goes to a worker is a file name and two byte offsets, what comes back
is a ``Counter``. Any :class:`concurrent.futures.Executor` can run the map (the default is a
local process pool), so a cluster's executor can count a corpus too big for one machine.

The one subtle part is where to cut. A cut must fall where pretokenization would cut
anyway, or a piece like ``" hello"`` could be counted as ``" hel"`` and ``"lo"``. Two kinds
of place are safe:

- the start of a special token: text is split on special tokens before it is pretokenized,
  so nothing is ever joined across one. We prefer these when one is near.
- a place where the split pattern provably never joins the two neighbouring characters,
  such as a letter followed by a space. Each rule below carries its proof; they exist for
  GPT-2's, GPT-4's and o200k's patterns. For any other pattern only special tokens are safe.

A stretch of text with neither (a long run of digits or letters, or any text under a custom
pattern without special tokens) is counted as one chunk, whatever its size: the counts stay
exact, but one worker holds the whole stretch. We say so with a :class:`LongChunkWarning`
rather than silently counting it in one process.

The tokenizer uses the same safe places: :meth:`bpe_course.Tokenizer.encode` pretokenizes a
long text a span at a time, and ``encode_iterable`` encodes a stream up to the last safe
place it has read (:func:`last_safe_cut`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, as_completed
from functools import lru_cache
from typing import NamedTuple

import regex

from .base import process_count, progress_bar
from .fastsplit import Splitter
from .interrupts import worker_ignores_ctrl_c
from .pretokenize import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    O200K_PATTERN,
    split_on_special_tokens,
)
from .utf8 import check_errors, decode_text

#: Files smaller than this are counted in the calling process: starting workers would cost
#: more than it saves.
PARALLEL_THRESHOLD = 2 * 1024 * 1024

#: A chunk holds this many bytes, and then runs on to the next safe cut (or to a special token
#: up to a quarter as many bytes further). This, not the file size, bounds a worker's memory.
CHUNK_BYTES = 4 * 1024 * 1024

#: The fewest bytes per task: smaller tasks would cost more in start-up than they save.
MIN_CHUNK_BYTES = 256 * 1024

#: A chunk runs on this fraction of its size further to end at a special token (a document
#: boundary) rather than at another safe cut: any more would make chunks uneven.
SPECIAL_TOKEN_REACH = 0.25

#: Bytes read at a time while looking for a cut.
SEARCH_BLOCK = 64 * 1024

#: A UTF-8 character is at most this many bytes: the context a cut rule needs on each side.
MAX_CHAR_BYTES = 4

#: A worker pretokenizes text between special tokens this many characters at a time (cut at
#: safe places), so the list of pieces one ``findall`` builds stays small: about 15 bytes
#: of list and string objects per character of text.
SPAN_CHARS = 64 * 1024


class LongChunkWarning(UserWarning):
    """A stretch of the corpus has no safe cut, so one worker counts all of it at once."""


# Safe cuts inside the text ---------------------------------------------------------------
#
# Why a cut is safe. Let T be the text between two special tokens, c a position in it,
# x = T[c-1] and y = T[c]. Pretokenizing T gives the pieces of T[:c] followed by the pieces
# of T[c:] when two things hold:
#
#   (A) no piece of T contains both x and y, so some piece of T ends at c; and
#   (B) scanning T[:c] finds the same pieces as scanning T does up to c.
#
# A cut is also never made inside an occurrence of a special token (any occurrence, see
# _straddled): then splitting the two sides on special tokens splits the whole, and a cut
# between two special tokens leaves only one text T to think about.
#
# T[c:] needs no condition: no alternative of the three patterns looks behind (no
# lookbehind, ^ or \b), so matching from c reads only T[c:], and with (A) the scan of T
# arrives at c just as the scan of T[c:] starts there.
#
# (B) holds for an alternative that tests only the characters it consumes: a match of it
# that ends at or before c is found in T[:c] too, since every other way to match it that
# it prefers failed in T and fails in T[:c] as well (a shorter text only fails sooner), and
# an alternative that fails in T fails in T[:c]. GPT-4's three possessive alternatives
# (?+ ++ {1,3}+ never give back what they took) keep this, by inspection: each matches
# when its first one or two characters are right (a letter, or one non-letter then a
# letter; a digit; a symbol, or a space then a symbol) and then ends where runs of one
# class end (letters; up to three digits; symbols, then \r and \n). T and T[:c] agree on
# those characters and on where those runs end, up to c.
# Two alternatives look past their match: \s+(?!\S) (all three patterns) and \s++$ (GPT-4).
# Both succeed at the end of a text, so a run of whitespace that reaches c can be matched
# differently in T[:c] (GPT-2 pieces "  \n\n" before a letter as "  \n" + "\n", but the same
# run at the end of a text as one piece). When x is not whitespace, no run of whitespace
# reaches c (so neither can $ match before a final \n there), both alternatives see the same
# characters in T and T[:c], and (B) holds. So every rule with a visible x needs only a
# proof of (A): which pairs of neighbours can a piece hold? Every character of T is in
# some piece (each pattern has an alternative for letters, numbers, whitespace and the
# rest), so (A) means a piece ends at c. The rules with a line break as x (GPT-4 and o200k)
# prove (B) on their own.
#
# Classes below: L letters (\p{L}), N numbers (\p{N}), S whitespace (the regex module's \s:
# also U+0085, U+00A0, U+2028 and the other Unicode spaces, but not U+001C-U+001F), M marks
# (\p{M}), P anything else (GPT-2 and GPT-4 count marks as P). Lone surrogates (a window of
# bytes decoded with surrogateescape turns invalid or cut-off bytes into them) never sit on
# either side of a cut, so a cut never splits an invalid byte sequence.


class CutRule(NamedTuple):
    """A place between two characters that a split pattern never joins.

    ``before`` and ``after`` are regular expressions for one character each; the cut falls
    between a character matching ``before`` and one matching ``after``.
    """

    name: str
    before: str
    after: str


# The neighbours a piece can hold, pattern by pattern (read off the alternatives):
#
# GPT-2: '(?:[sdmt]|ll|ve|re) | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ |\s+(?!\S) |\s+
#   ' then one of s d m t l v r (a contraction), L L, N N, P P, S S, and a space (U+0020)
#   before an L, N or P. No piece holds a visible character before whitespace, and only a
#   contraction holds a P before an L.
#
# GPT-4 (cl100k_base): '(?i:[sdmt]|ll|ve|re) |[^\r\n\p{L}\p{N}]?+\p{L}++ |\p{N}{1,3}+
#   | ?[^\s\p{L}\p{N}]++[\r\n]*+ |\s++$ |\s*[\r\n] |\s+(?!\S) |\s
#   ' then a contraction letter (an L), L L, N N (in threes, so where depends on the start
#   of the run), any P or S but \r and \n before an L (the one leading character of a word:
#   "!word", "\tword"), a space before a P, P P, a P before \r or \n (punctuation keeps its
#   line breaks: ".\r\n"), \r or \n before \r or \n, and S S.
#
# o200k_base: [^\r\n\p{L}\p{N}]?[UPPER]*[LOWER]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
#   |[^\r\n\p{L}\p{N}]?[UPPER]+[LOWER]*(?i:'s|...)? |\p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]*
#   |\s*[\r\n]+ |\s+(?!\S) |\s+       with UPPER = Lu Lt Lm Lo M and LOWER = Ll Lm Lo M.
#   Only \s+(?!\S) looks past its match. (L or M) (L or M), (L or M) then ' (a contraction
#   stays on its word: "don't"), ' then a contraction letter, any P, M or S but \r and \n
#   before an L or M (the leading character of a word), N N, a space before a P or M,
#   (P or M) (P or M), a P or M before \r, \n or /, then \r, \n and / among themselves
#   ("-\n/"), and S S.
#
# Each rule below is (A) for every pattern that uses it, plus (B) where x is a line break.

#: GPT-2, GPT-4: (A) an L is followed inside a piece only by another L (the letters of a
#: contraction are L too; o200k differs, as a mark or ' may follow there).
LETTER_CUT = CutRule("letter | not a letter", r"\p{L}", r"[^\p{L}\p{Cs}]")

#: All three: (A) an N is followed inside a piece only by another N (a word's leading
#: character is never an N, and N is no P).
NUMBER_CUT = CutRule("number | not a number", r"\p{N}", r"[^\p{N}\p{Cs}]")

#: GPT-4, o200k: (A) a P (or, in o200k, an M) is followed inside a piece by an L or M (as a
#: word's leading character, or an M in a word), by a P (symbols run on), or by \r, \n and,
#: in o200k, / (punctuation keeps them); never by an N or by whitespace but \r and \n.
SYMBOL_CUT = CutRule(
    "symbol | number or space but \\r \\n", r"[^\s\p{L}\p{N}\p{Cs}]", r"(?:\p{N}|[^\S\r\n])"
)

#: GPT-2: (A) a P other than ' is followed inside a piece only by another P; ' is left out,
#: since "'s" is a piece. The space that starts " word" is whitespace, not a P.
GPT2_SYMBOL_CUT = CutRule(
    "symbol but ' | space, letter or number", r"[^\s\p{L}\p{N}'\p{Cs}]", r"[\s\p{L}\p{N}]"
)

#: GPT-2: (A) ' is followed inside a piece by a P or a contraction letter, never by S or N.
GPT2_APOSTROPHE_CUT = CutRule("' | space or number", r"'", r"[\s\p{N}]")

#: GPT-4: a line break before a visible character. (A) a line break is followed inside a
#: piece only by another line break, or by whitespace (S S); y is neither. (B) whitespace
#: reaches c here, so look at the run R of whitespace that ends at c with x. A P before R
#: may take R's leading line breaks ("-\r\n"), in T and T[:c] alike (all of R, if R is only
#: line breaks: its [\r\n]*+ stops at c in both). What is left of R starts a piece in
#: both: in T[:c], \s++$ takes all of it; in T, \s++$ fails, and \s*[\r\n] takes all of it
#: too, its \s* giving back only x. No alternative before \s++$ matches at a position of R
#: (the word prefix needs a letter after it, excludes \r and \n; the " ?" before
#: punctuation needs a P after it), and \s+(?!\S) comes after \s*[\r\n], which matches at
#: every position of R. Both scans then stand at c.
GPT4_LINE_BREAK_CUT = CutRule("line break | visible", r"[\r\n]", r"[^\s\p{Cs}]")

#: o200k: (A) an L is followed inside a piece by an L, an M or a contraction's '; y is none.
O200K_LETTER_CUT = CutRule("letter | not a letter, mark or '", r"\p{L}", r"[^\p{L}\p{M}'\p{Cs}]")

#: o200k: a line break before a visible character other than /. (A) a line break is
#: followed inside a piece only by whitespace or, after punctuation, by \r, \n or /
#: ("-\n/"). (B) the run R of whitespace that ends at c with x: a P before R may take R's
#: leading line breaks, in T and T[:c] alike; what is left of R starts a piece, and
#: \s*[\r\n]+ (which tests only what it consumes) takes all of it in T and in T[:c], since
#: R ends in a line break and y is none. The alternatives before it fail inside R, and
#: \s+(?!\S) comes after it, so it never gets to look at the end of T[:c].
O200K_LINE_BREAK_CUT = CutRule("line break | visible but /", r"[\r\n]", r"[^\s/\p{Cs}]")

GPT2_CUTS = (LETTER_CUT, NUMBER_CUT, GPT2_SYMBOL_CUT, GPT2_APOSTROPHE_CUT)
GPT4_CUTS = (LETTER_CUT, NUMBER_CUT, SYMBOL_CUT, GPT4_LINE_BREAK_CUT)
O200K_CUTS = (O200K_LETTER_CUT, NUMBER_CUT, SYMBOL_CUT, O200K_LINE_BREAK_CUT)

#: The proven cut rules of each named pattern. A pattern not listed has none: only special
#: tokens are safe places to cut it.
SAFE_CUTS: dict[str, tuple[CutRule, ...]] = {
    GPT2_PATTERN: GPT2_CUTS,
    GPT4_PATTERN: GPT4_CUTS,
    O200K_PATTERN: O200K_CUTS,
}


def cut_rules_regex(rules: Sequence[CutRule]) -> regex.Pattern[str] | None:
    """One regex whose (empty) matches are the places any of ``rules`` allows a cut."""
    if not rules:
        return None
    return regex.compile("|".join(f"(?<={rule.before})(?={rule.after})" for rule in rules))


@lru_cache(maxsize=16)
def safe_cut_regex(pattern: str) -> regex.Pattern[str] | None:
    """The cut finder for ``pattern``, or ``None`` when nothing is proven about it."""
    return cut_rules_regex(SAFE_CUTS.get(pattern, ()))


#: A run of characters of one class: letters, numbers, whitespace, or anything else. Every
#: rule above puts characters of two different classes on its two sides (a letter before a
#: non-letter, a number before a non-number, a symbol before whitespace, a letter or a
#: number, a line break before a visible character), so no cut lies inside such a run.
CLASS_RUN = regex.compile(r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+")


def rule_cuts(
    text: str, rule: regex.Pattern[str], pos: int = 0, endpos: int | None = None
) -> Iterator[int]:
    """The places in ``text[pos:endpos]`` where ``rule`` (a :func:`cut_rules_regex`) allows
    a cut, in order: ``match.start()`` of ``rule.finditer(text, pos, endpos)``, found faster.

    A cut lies where one run of :data:`CLASS_RUN` ends and the next begins, so only those
    places are tried: the search leaps over a run, however long, at the speed of one simple
    character class, where ``rule`` itself costs a few hundred nanoseconds a character (a
    run of 10 million letters took seconds).

    >>> list(rule_cuts("one two, 3", safe_cut_regex(GPT2_PATTERN)))
    [3, 7, 8]
    """
    endpos = len(text) if endpos is None else min(endpos, len(text))
    position = max(pos, 1)  # a cut has a character on each side
    while position < endpos:
        # The run that starts at position - 1 (every character is in one of the four classes).
        cut = CLASS_RUN.match(text, position - 1, endpos).end()
        if cut >= endpos:
            return
        if rule.match(text, cut, endpos):
            yield cut
        position = cut + 1


# Finding the cuts in a file ----------------------------------------------------------------


def _rule_cuts(window: bytes, rule: regex.Pattern[str]) -> Iterator[int]:
    """Byte offsets in ``window`` where ``rule`` allows a cut, in order.

    The window may start or end inside a character; ``surrogateescape`` turns those bytes
    (and any invalid UTF-8) into lone surrogates, which no rule accepts on either side.
    """
    if window.isascii():
        yield from rule_cuts(window.decode("ascii"), rule)
        return
    text = window.decode("utf-8", "surrogateescape")
    chars = offset = 0
    for cut in rule_cuts(text, rule):
        offset += len(text[chars:cut].encode("utf-8", "surrogateescape"))
        chars = cut
        yield offset


def _straddled(window: bytes, cut: int, tokens: Sequence[bytes]) -> bool:
    """Does some special token occur in ``window`` starting before ``cut`` and ending after it?

    Any occurrence counts, even one the splitter would not pick (``"<|endoftext|>"`` inside
    ``"[<|endoftext|>]"``, or ``"bc"`` overlapping ``"ab"``): with none across the cut, the
    split on special tokens of the two sides is the split of the whole.
    """
    return any(
        window.find(token, max(0, cut - len(token) + 1), cut + len(token) - 1) != -1
        for token in tokens
        if len(token) > 1
    )


def _first_cut_in(
    window: bytes, low: int, high: int, tokens: Sequence[bytes], rule: regex.Pattern[str] | None
) -> int | None:
    """The first safe cut ``c`` in ``window`` with ``low <= c < high``, or None.

    The caller makes sure the window holds enough bytes on both sides of that range to see
    any special token across a cut and the characters a rule looks at.
    """
    best: int | None = None
    for token in tokens:
        found = window.find(token, low, high + len(token) - 1)
        while found != -1 and (best is None or found < best):
            if not _straddled(window, found, tokens):
                best = found
                break
            found = window.find(token, found + 1, high + len(token) - 1)
    if rule is not None:
        for cut in _rule_cuts(window, rule):
            if cut >= (high if best is None else best):
                break
            if cut >= low and not _straddled(window, cut, tokens):
                return cut
    return best


def _first_cut(
    file, position: int, stop: int | None, tokens: Sequence[bytes], rule: regex.Pattern[str] | None
) -> int | None:
    """The first safe cut at or after ``position`` (and before ``stop``, if given).

    The file is read in blocks; the window keeps ``context`` bytes before the range still
    to search, so a special token across a block boundary, or a character cut by it, is seen.
    """
    context = max([len(token) for token in tokens] + [MAX_CHAR_BYTES])
    window_start = max(0, position - context)
    file.seek(window_start)
    window = b""
    low = position
    while True:
        block = file.read(SEARCH_BLOCK)
        window += block
        end = window_start + len(window)
        high = end - context if block else end
        if stop is not None:
            high = min(high, stop)
        if high > low:
            cut = _first_cut_in(window, low - window_start, high - window_start, tokens, rule)
            if cut is not None:
                return window_start + cut
            low = high
        if not block or (stop is not None and low >= stop):
            return None
        drop = low - context - window_start
        if drop > 0:
            window = window[drop:]
            window_start += drop


def find_chunk_boundaries(
    path: str | os.PathLike[str],
    chunk_bytes: int,
    special_tokens: Sequence[str] = (),
    pattern: str = GPT2_PATTERN,
) -> list[int]:
    """Byte offsets ``[0, ..., file_size]`` that cut the file into chunks of about
    ``chunk_bytes`` where pretokenization would cut anyway.

    After each ``chunk_bytes``, the chunk ends at the next special token if one starts
    within another quarter of ``chunk_bytes``, else at the first place a rule of :data:`SAFE_CUTS`
    allows. A chunk is longer only where there is no safe cut at all (with a pattern that
    has no rules and no special tokens, the whole file is one chunk).
    """
    size = os.path.getsize(path)
    tokens = [token.encode("utf-8") for token in special_tokens]
    rule = safe_cut_regex(pattern)
    if not tokens and rule is None:
        return [0, size]
    boundaries = [0]
    with open(path, "rb") as file:
        while boundaries[-1] + chunk_bytes < size:
            target = boundaries[-1] + chunk_bytes
            reach = target + max(1, int(chunk_bytes * SPECIAL_TOKEN_REACH))
            cut = _first_cut(file, target, reach, tokens, None) if tokens else None
            if cut is None:
                cut = _first_cut(file, target, None, tokens, rule)
            if cut is None:
                break
            boundaries.append(cut)
    boundaries.append(size)
    return boundaries


def warn_about_long_chunks(
    chunks: Sequence[tuple[str, int, int]], chunk_bytes: int, special_tokens: Sequence[str],
    pattern: str,
) -> None:
    """One :class:`LongChunkWarning` for all chunks over twice ``chunk_bytes`` (and over
    ``MIN_CHUNK_BYTES``: a short stretch costs no memory worth a word), if any.

    Such a chunk holds a stretch without a safe cut. We count it whole (exact, but one worker
    then holds all of it) rather than cut it where a piece might be split.
    """
    too_long = max(2 * chunk_bytes, MIN_CHUNK_BYTES)
    long = [(path, start, end) for path, start, end in chunks if end - start > too_long]
    if not long:
        return
    path, start, end = max(long, key=lambda chunk: chunk[2] - chunk[1])
    if pattern not in SAFE_CUTS:
        why = "the pattern is not one of GPT-2's, GPT-4's or o200k's, so only special "
        why += "tokens are safe cuts" + ("" if special_tokens else ", and none were given")
    else:
        why = "no special token and no place the pattern provably never joins (such as "
        why += "a letter before a space) occurs there"
    more = f" ({len(long)} such stretches in all)" if len(long) > 1 else ""
    # The corpus, not a line of our code, is where the problem is: naming it as the warning's
    # file gives one line, "corpus.txt:0: LongChunkWarning: ...", with no source line under it.
    warnings.warn_explicit(
        f"the {end - start:,} bytes from byte {start:,} on have no safe place to cut{more}: "
        f"{why}. One worker counts each such stretch whole, so its memory grows with it.",
        LongChunkWarning,
        filename=path,
        lineno=0,
        module=__name__,
    )


# Counting the chunks ------------------------------------------------------------------------


def spans_between_safe_cuts(
    text: str, rule: regex.Pattern[str] | None, span_chars: int, reach: int | None = None
) -> Iterator[tuple[int, int]]:
    """``(start, end)`` pairs that cover ``text`` (free of special tokens) in spans of about
    ``span_chars``, cut where ``rule`` allows; one span if there is no rule.

    Each cut is the first one ``span_chars`` or more characters after the last. With a
    ``reach``, one is looked for only that many characters further, and if none is there
    (a long run of one class of character), the rest of the text is a single span: this
    bounds the search, which on such a run would otherwise read all of it once more.

    >>> text = "one two three four"
    >>> [text[a:b] for a, b in spans_between_safe_cuts(text, safe_cut_regex(GPT2_PATTERN), 5)]
    ['one two', ' three', ' four']
    """
    start = 0
    while rule is not None and len(text) - start > span_chars:
        search_end = len(text) if reach is None else start + span_chars + reach
        cut = next(rule_cuts(text, rule, start + span_chars, search_end), None)
        if cut is None:
            break
        yield start, cut
        start = cut
    yield start, len(text)


def last_safe_cut(text: str, rule: regex.Pattern[str] | None, reach: int) -> int:
    """The last place in the last ``reach`` characters of ``text`` where ``rule`` allows a
    cut; 0 if there is none there.

    Both neighbours of such a place are in ``text``, so no text that comes after can change
    the pieces before it: a stream may be encoded up to there. Looking only near the end
    keeps the cost small when a long stretch has no such place; the stream then waits.

    >>> rule = safe_cut_regex(GPT2_PATTERN)
    >>> last_safe_cut("one two three", rule, 100), last_safe_cut("one two three", rule, 4)
    (7, 0)
    >>> last_safe_cut("onetwothree", rule, 100), last_safe_cut("a b", None, 100)
    (0, 0)
    """
    last = 0
    if rule is not None:
        for match in rule.finditer(text, max(0, len(text) - reach)):
            last = match.start()
    return last


def count_text_pretokens(
    text: str, special_tokens: Sequence[str] = (), pattern: str = GPT2_PATTERN
) -> Counter[str]:
    """:func:`~bpe_course.pretokenize.count_pretokens`, with memory that does not grow with
    the text between two special tokens: that text is pretokenized a span at a time.

    ``findall`` with an end position reads the text as if it ended there, which is what the
    proofs of the cut rules assume, and it copies nothing.
    """
    compiled = Splitter(pattern)
    rule = safe_cut_regex(pattern)
    counts: Counter[str] = Counter()
    for segment in split_on_special_tokens(text, special_tokens)[::2]:
        for start, end in spans_between_safe_cuts(segment, rule, SPAN_CHARS):
            counts.update(compiled.findall(segment, start, end))
    return counts


def count_chunk(
    path: str, start: int, end: int, special_tokens: Sequence[str], pattern: str, errors: str
) -> Counter[str]:
    """Pretoken counts of bytes ``start:end`` of ``path`` (runs in a worker)."""
    with open(path, "rb") as file:
        file.seek(start)
        data = file.read(end - start)
    if len(data) != end - start:
        raise ValueError(
            f"{path} changed while it was being read: bytes {start}..{end} were planned, "
            f"the file now ends at {start + len(data)}; train again on a file that stays put"
        )
    return count_text_pretokens(decode_text(data, path, errors, start), special_tokens, pattern)


def count_chunk_task(task: tuple) -> tuple[int, Counter[str]]:
    """:func:`count_chunk` for one task tuple; returns the bytes done (for progress) too."""
    path, start, end, special_tokens, pattern, errors = task
    return end - start, count_chunk(path, start, end, special_tokens, pattern, errors)


def check_executor(executor: object) -> Executor | None:
    """``None`` (a local process pool) or something with an Executor's ``submit``."""
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            "executor must be a concurrent.futures.Executor (anything with submit(), such as "
            f"Dask's Client.get_executor()), got {type(executor).__name__}"
        )
    return executor  # type: ignore[return-value]


def _results_from(executor: Executor, tasks: list[tuple]) -> Iterator[tuple[int, Counter[str]]]:
    """Run ``tasks`` on ``executor``, yielding results as they finish.

    A finished future is dropped at once, so the counts of only one chunk wait in memory.
    If we stop early (an error, Ctrl-C), the tasks not yet started are cancelled; the
    executor itself belongs to the caller and stays up.
    """
    pending = {executor.submit(count_chunk_task, task) for task in tasks}
    try:
        for future in as_completed(pending):
            pending.discard(future)
            yield future.result()
    finally:
        for future in pending:
            future.cancel()


def _results(
    tasks: list[tuple], num_processes: int, executor: Executor | None
) -> Iterator[tuple[int, Counter[str]]]:
    """The results of ``tasks``: on ``executor``, in this process, or on a local pool."""
    if executor is not None:
        yield from _results_from(executor, tasks)
        return
    total_bytes = sum(task[2] - task[1] for task in tasks)
    if num_processes == 1 or total_bytes < PARALLEL_THRESHOLD or len(tasks) == 1:
        yield from map(count_chunk_task, tasks)
        return
    workers = min(num_processes, len(tasks))
    # A Pool, not a ProcessPoolExecutor: leaving the block terminates the workers at once,
    # which is what Ctrl-C needs (an executor would first finish the running chunks).
    with multiprocessing.get_context().Pool(workers, initializer=worker_ignores_ctrl_c) as pool:
        yield from pool.imap_unordered(count_chunk_task, tasks)


def count_file_pretokens(
    paths: Sequence[str],
    special_tokens: Sequence[str] = (),
    pattern: str = GPT2_PATTERN,
    *,
    num_processes: int | None = None,
    progress: bool = False,
    errors: str = "strict",
    chunk_bytes: int | None = None,
    executor: Executor | None = None,
) -> Counter[str]:
    """Pretoken counts of every file in ``paths``, counted by ``num_processes`` workers.

    ``num_processes=None`` uses every core; ``1`` counts in this process. Small inputs
    are counted here, since starting workers would cost more than it saves.
    ``chunk_bytes=None`` picks about four tasks per worker (so no worker idles while
    another finishes a big last chunk), between ``MIN_CHUNK_BYTES`` and ``CHUNK_BYTES``.

    ``executor`` runs the tasks instead of a local pool: any
    :class:`concurrent.futures.Executor`, such as a ``ProcessPoolExecutor`` or the executor
    of a cluster (Dask's ``Client.get_executor()``). A task is a file name and two byte
    offsets and its result a ``Counter``, never text, so every worker must see the files
    under the same absolute path (a shared file system). ``num_processes`` then only sizes
    the chunks: give the number of workers the executor has.
    """
    check_errors(errors)
    executor = check_executor(executor)
    num_processes = process_count(num_processes)
    if executor is not None:  # a worker elsewhere has another working directory
        paths = [os.path.abspath(path) for path in paths]
    if chunk_bytes is None:
        total_size = sum(os.path.getsize(path) for path in paths)
        chunk_bytes = min(CHUNK_BYTES, max(MIN_CHUNK_BYTES, total_size // (4 * num_processes)))
    tasks = []
    for path in paths:
        bounds = find_chunk_boundaries(path, chunk_bytes, special_tokens, pattern)
        tasks += [
            (path, start, end, list(special_tokens), pattern, errors)
            for start, end in zip(bounds, bounds[1:])
        ]
    warn_about_long_chunks(
        [(path, start, end) for path, start, end, *_ in tasks], chunk_bytes, special_tokens, pattern
    )
    total_bytes = sum(task[2] - task[1] for task in tasks)
    counts: Counter[str] = Counter()
    # The bar closes on the way out of an error too, so that a message printed after it
    # (such as "interrupted") is not followed by the bar's last redraw.
    with (
        progress_bar(progress, total_bytes, unit="B", unit_scale=True, desc="pretokenize") as bar,
        contextlib.closing(_results(tasks, num_processes, executor)) as results,
    ):
        bar.refresh()  # drawn only now that the block will close it (see progress_bar)
        for done, chunk_counts in results:
            counts.update(chunk_counts)
            bar.update(done)
    return counts
