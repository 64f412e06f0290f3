"""The same pretokens, found about twice as fast, by the standard library's ``re``.

The split patterns are written for the ``regex`` package because they name Unicode
properties: ``\\p{L}`` is "any letter", ``\\p{N}`` "any number". The standard library's
``re`` knows no such names, but it scans GPT-2's pattern about twice as fast, and on
ordinary text that scan is most of an encoder's time. A property is only a set of
characters, so we can spell the set out as a character class and hand the pattern to ``re``.

One catch decides the design. ``re`` stores the part of a class below U+10000 (the Basic
Multilingual Plane) as a bitmap, one lookup per character, but keeps every range above it in
a list that each test walks through; \\p{L} alone has hundreds of such ranges, and with them
``re`` is slower than ``regex``. So the classes spelled out here hold the BMP only, and a
text with a character above U+FFFF that belongs to one of the pattern's properties (a
Gothic letter, a mathematical bold digit) goes to ``regex``. Emoji belong to none of GPT-2's
properties, so emoji text stays on the fast path, and there the answer is the same: an
emoji is outside \\p{L} and \\p{N} whether the class lists it as such or ignores it.

Only patterns made of constructs that mean the same in both engines are translated (see
:func:`bmp_translation`); anything else, and any pattern whose translation splits a sample
text differently, simply stays on ``regex``. The tests compare both engines on every
character of Unicode.

Spelling the classes out and checking the result on the sample takes 80 to 300 ms per
pattern, the same on every start, so a translation that passed the check is kept in a
cache file (:mod:`.cachefiles`) whose key holds the pattern, Python's version, the Unicode
version of :mod:`unicodedata`, ``regex``'s version and the package's code: a later process
reuses it only where the same check passed before, and anything wrong with the file means
translating again. Compiling the spelled pattern with ``re`` (30 to 130 ms for the long
classes) is still done on every start: ``re`` has no way to store a compiled pattern.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import regex

from ..pretokens import O200K_PATTERN, compile_pattern
from ..safety import patterns
from . import cachefiles

#: Runs of characters above U+FFFF: the only ones a translated class can get wrong. Found by
#: ``regex``, which scans 16k characters for them in 0.12 ms where ``re`` takes 0.58 ms.
_ASTRAL_RUN = regex.compile("[\U00010000-\U0010ffff]+")
#: :func:`holds_astral` looks at this many characters at a time, to bound its memory.
ASTRAL_CHECK_BLOCK = 1 << 20
#: Escapes that stand for a set of characters, in or out of a class.
_CLASS_ESCAPE = regex.compile(r"\\(?:[pP]\{[^}]*\}|[dDsSwW])")
#: Groups that mean the same in both engines: (?: (?= (?! (?<= (?<! (?> and (?i: .
_SAME_GROUPS = ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>")
#: Escapes of one character that mean the same in both engines.
_SAME_ESCAPES = set("rntfv0") | {chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum()}


#: Whitespace but line breaks, as ``regex``'s ``\s`` has it: ``\s*[\r\n]+`` is the
#: run up to its last line break, which ``re`` found by taking the whole run and giving it
#: back a character at a time (an indented line's spaces each time); ``(?:this*+[\r\n])++``
#: goes there directly. Should Unicode add a space, the sample check refuses this spelling and
#: the plain translation is used.
_SPACE_NOT_BREAK = "[\t\x0b\x0c \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
#: o200k_base's letter alternatives as ``re`` runs them faster: the same pieces, fewer steps
#: back. The original tries ``P? U* L+`` and then ``P? U+ L*`` (P a non-letter prefix, U and
#: L the upper- and lower-case classes, which share Lm, Lo and marks). A word in capitals
#: made the first take all of it, give it back letter by letter and fail, and the second read
#: it again (C headers are full of them). Here the second is ``[Lu Lt]++``: it runs only when
#: the first failed, which means no shared letter in the run and no lower-case letter after
#: it, so the run is all Lu/Lt. ``L+`` may keep what it took, as the match is complete once it
#: stops. The prefix may keep its character too, once marks are left out of it: a mark is a
#: letter of both classes, and ``U* L+`` from the mark itself matches exactly what the
#: original makes of it (the mark and ``U* L+`` after it when that matches, else the mark up
#: to the run's last shared letter), where keeping the mark as a prefix would then match the
#: capitals after it instead. The contraction's apostrophe comes first and the group keeps
#: what it took: ``re`` ran the optional group of seven through its slow general repeat after
#: every word (13% of the split of C headers). The checked translation is compared with the
#: original pattern, like any other.
_O200K_LETTERS = (
    r"[^\r\n\p{L}\p{N}\p{M}]?+"
    r"(?:[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]++|[\p{Lu}\p{Lt}]++)"
    r"(?:'(?i:[st]|re|ve|m|ll|d))?+"
)
#: Patterns spelled another way for ``re`` (the same pieces, found faster), by the original.
FASTER_SPELLING = {
    O200K_PATTERN: _O200K_LETTERS
    + O200K_PATTERN[O200K_PATTERN.index(r"|\p{N}{1,3}|") :].replace(
        r"\s*[\r\n]+", f"(?:{_SPACE_NOT_BREAK}*+[\\r\\n])++"
    ),
}


@lru_cache(maxsize=64)
def bmp_members(escape: str) -> str:
    """The BMP characters ``regex`` matches with ``escape``, as the inside of an ``re`` class.

    >>> print(bmp_members(r"\\s"))
    \\u0009-\\u000d\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028-\\u2029\\u202f\\u205f\\u3000
    >>> upper = re.compile("[" + bmp_members(r"\\p{Lu}") + "]+")
    >>> upper.findall("ÉLAN vital, ΑΘΗΝΑ")
    ['ÉLAN', 'ΑΘΗΝΑ']
    """
    bmp = "".join(map(chr, range(0x10000)))  # lone surrogates included
    codes = [ord(char) for char in regex.findall(f"[{escape}]", bmp)]
    ranges = []
    start = previous = codes[0] if codes else 0
    for code in codes[1:] + [-1]:
        if code != previous + 1:
            ranges.append(f"\\u{start:04x}" + (f"-\\u{previous:04x}" if previous > start else ""))
            start = code
        previous = code
    return "".join(ranges) if codes else ""


def _translate_escape(positive: str, negated: bool, in_class: bool) -> str | None:
    """``\\p{L}``, ``\\s``, ``\\S``... spelled as BMP characters; None if ``re`` cannot say it.
    ``positive`` is the escape without its negation (``\\s`` for ``\\S``)."""
    members = bmp_members(positive)
    if in_class:
        return None if negated else members  # a negated set inside a class needs set algebra
    return f"[{'^' if negated else ''}{members}]"


def bmp_translation(pattern: str) -> tuple[str, list[str]] | None:
    """``pattern`` for ``re``, exact on text whose characters above U+FFFF are in none of the
    returned escapes' sets; ``None`` when some construct might not mean the same in ``re``.

    >>> spelled, used = bmp_translation(r"'s|\\s+(?!\\S)")
    >>> used
    ['\\\\s']
    >>> spelled.replace(bmp_members(r"\\s"), "SPACES")
    "'s|[SPACES]+(?![^SPACES])"
    """
    out: list[str] = []
    used: list[str] = []
    in_class = False
    case_insensitive_depth: list[bool] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            found = _CLASS_ESCAPE.match(pattern, i)
            if found:
                if any(case_insensitive_depth):
                    return None  # case-folding a property: the engines may differ
                escape = found.group()
                positive = "\\" + escape[1].lower() + escape[2:]  # \p{L} for \P{L}, \w for \W
                spelled = _translate_escape(positive, escape[1].isupper(), in_class)
                if spelled is None:
                    return None
                out.append(spelled)
                # The set to judge astral characters by is the positive one: the spelled-out
                # [^...] of a negated escape wrongly takes its members above U+FFFF.
                used.append(positive)
                i = found.end()
                continue
            if pattern[i + 1 : i + 2] not in _SAME_ESCAPES:
                return None  # \b, \w-like escapes, \N{...}, \Z...: not known to agree
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if char == "[" or pattern.startswith(("&&", "--", "||", "~~"), i):
                return None  # nested sets and set operations belong to regex's V1
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern.startswith(("[]", "[^]"), i):
                return None
        elif char == "(":
            if pattern.startswith("(?i:", i):
                case_insensitive_depth.append(True)
            elif pattern.startswith("(?", i) and not pattern.startswith(_SAME_GROUPS, i):
                return None  # named groups, flags, comments, conditionals...
            else:
                case_insensitive_depth.append(False)
        elif char == ")" and case_insensitive_depth:
            case_insensitive_depth.pop()
        elif char in "+*" and _ends_an_alternative(pattern, i, out, case_insensitive_depth):
            char += "+"  # possessive: the same matches, about 10% faster in re
        out.append(char)
        i += 1
    return "".join(out), sorted(set(used))


def _ends_an_alternative(pattern: str, i: int, out: list[str], groups: list[bool]) -> bool:
    """Is ``pattern[i]`` a ``+`` or ``*`` on a class that ends a top-level alternative?

    Then it may be possessive (never give back what it took), because nothing after it in
    the alternative could ask for anything back: the match is complete as soon as it stops.
    ``re`` then saves no backtracking points for the run. Possessive quantifiers are new in
    Python 3.11's ``re``; before that the pattern is left as it is.
    """
    return (
        sys.version_info >= (3, 11)
        and not groups
        and bool(out)
        and out[-1].endswith("]")
        and not out[-1].endswith("\\]")
        and pattern[i + 1 : i + 2] in ("|", "")
    )


def _sample_text() -> str:
    """Text on which a translation must split exactly as the original does: every Latin-1
    character, every BMP character with a case (the engines fold some differently, such as
    the dotless ``ı``), every space (o200k's spelling lists the spaces that are not line breaks)
    and a spread of the rest, each between letters, digits, spaces, quotes and capitals (a
    mark before a word in capitals is where o200k's spelling could go wrong).
    """
    chars = [chr(code) for code in range(0x100)] + [
        char
        for char in map(chr, range(0x100, 0xFFFF))
        if char.lower() != char or char.upper() != char or char.isspace() or ord(char) % 97 == 0
    ]
    return "".join(f"{c}a{c} {c}1'{c}s\n{c}{c}  {c}\r\n'LL{c}1{c}AB {c}Ab" for c in chars)


def checked_translation(pattern: str) -> tuple[str, list[str]] | None:
    """:func:`bmp_translation` of ``pattern`` (of its :data:`FASTER_SPELLING` first, if it has
    one) if ``re`` compiles it and it splits the sample text exactly as ``regex`` splits it
    with ``pattern``, else None. The slow part of :func:`fast_engine`."""
    sample, expected = None, None
    for spelling in dict.fromkeys([FASTER_SPELLING.get(pattern, pattern), pattern]):
        translated = bmp_translation(spelling)
        if translated is None:
            continue
        try:
            fast = re.compile(translated[0])
        except (re.error, OverflowError, RecursionError):
            continue  # e.g. possessive quantifiers before Python 3.11
        if sample is None:
            sample = _sample_text()
            expected = compile_pattern(pattern).findall(sample)
        if fast.findall(sample) == expected:
            return translated
    return None


def translation_settings(pattern: str) -> list[Any]:
    """All a checked translation depends on besides the package's own code (which
    :func:`~bpe_course.speed.cachefiles.cache_key` adds): the cache file's key."""
    return [pattern, sys.version, unicodedata.unidata_version, regex.__version__]


def pack_translation(translated: tuple[str, list[str]] | None) -> tuple[dict, dict]:
    """A checked translation (or None: none passed) as one section, under the payload's
    sha256, so a damaged character of the spelled pattern is caught."""
    return {}, {"translation": json.dumps(translated).encode("ascii")}


def unpack_translation(meta: dict, sections: dict[str, Any]) -> tuple[str, list[str]] | None:
    """What :func:`pack_translation` stored; ``ValueError`` for anything else."""
    stored = json.loads(sections["translation"])
    if stored is None:
        return None
    spelled, used = stored
    if not (isinstance(spelled, str) and isinstance(used, list)
            and all(isinstance(escape, str) for escape in used)):
        raise ValueError("not a translation")
    return spelled, used


@lru_cache(maxsize=64)
def fast_engine(pattern: str) -> tuple[re.Pattern[str], regex.Pattern[str] | None] | None:
    """``re``'s version of ``pattern`` and the ``regex`` class of characters above U+FFFF
    that send a text back to ``regex`` (``None``: no class, any text will do); ``None`` when
    the pattern does not translate, or its translation splits the sample text differently.
    Cached in memory, and the checked translation in a file for later processes: spelling
    out the classes and checking them takes tens of milliseconds, once per pattern."""
    translated = cachefiles.cached("split-pattern", translation_settings(pattern),
                                   lambda: checked_translation(pattern),
                                   pack_translation, unpack_translation)
    if translated is None:
        return None
    spelled, used = translated
    try:
        fast = re.compile(spelled)
    except (re.error, OverflowError, RecursionError):
        return None
    return fast, regex.compile("[" + "".join(used) + "]") if used else None


def holds_astral(text: str, start: int = 0, end: int = sys.maxsize) -> bool:
    """Whether ``text[start:end]`` has a character above U+FFFF.

    UTF-16 writes such a character as two code units and every other one (a lone surrogate
    too, with ``surrogatepass``) as one, so the length of the encoding tells. Encoding copies
    at close to memory speed, where a scan for them tests the characters one by one:
    on 466 kB of prose with some accents, 0.1 ms against 2.6 ms for ``_ASTRAL_RUN``.

    >>> holds_astral("naïve café"), holds_astral("emoji 😀"), holds_astral("😀 emoji", 1)
    (False, True, False)
    """
    end = min(end, len(text))
    for block_start in range(start, end, ASTRAL_CHECK_BLOCK):
        block = text[block_start : min(end, block_start + ASTRAL_CHECK_BLOCK)]
        if len(block.encode("utf-16-le", "surrogatepass")) != 2 * len(block):
            return True
    return False


class Splitter:
    """A split pattern's ``findall`` and ``finditer``, run by ``re`` whenever that is exact.

    Use it wherever a compiled pattern would go; ``exact`` is the ``regex`` original.
    ``guarded``: the tokenizer's and the trainer's splitter, for a pattern that may come
    from a file. Unless it is one of the package's own, it is refused if it has a capture
    group, and ``findall`` refuses text its pieces leave out and stops after a time limit
    (:mod:`bpe_course.safety.patterns`); with a limit it runs on ``regex``, which has one.

    >>> from bpe_course.pretokens import GPT2_PATTERN
    >>> Splitter(GPT2_PATTERN).findall("Hi, you're 42! 😀 𝐀")
    ['Hi', ',', ' you', "'re", ' 42', '!', ' 😀', ' 𝐀']
    """

    def __init__(self, pattern: str | regex.Pattern[str], guarded: bool = False) -> None:
        self.exact = compile_pattern(pattern)
        self.pattern: str = self.exact.pattern
        # A pattern compiled with flags of its own (IGNORECASE, VERBOSE...) stays on regex.
        plain = isinstance(pattern, str) or pattern.flags == regex.compile(self.pattern).flags
        self.guarded = guarded and not (plain and patterns.is_proven(self.pattern))
        if self.guarded:
            patterns.check_split_pattern(self.exact)
        bounded = self.guarded and patterns.time_limited()
        engine = fast_engine(self.pattern) if plain and not bounded else None
        self.fast, self._astral_members = engine if engine else (None, None)
        self._looks_behind = "(?<" in self.pattern

    def __reduce__(self):  # a Tokenizer travels to worker processes with its Splitter
        return Splitter, (self.exact, self.guarded)

    def __repr__(self) -> str:
        return f"Splitter({self.pattern!r}, fast={self.fast is not None})"

    def engine_for(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Pattern[str] | regex.Pattern[str]:
        """``re``'s pattern unless ``text[pos:endpos]`` holds a character above U+FFFF that
        the translated classes leave out. Lookahead stops at ``endpos`` in both engines;
        a lookbehind could read before ``pos``, so then the check starts at 0."""
        if self.fast is None:
            return self.exact
        if text.isascii() or self._astral_members is None:
            return self.fast
        start = 0 if self._looks_behind else pos
        if not holds_astral(text, start, endpos):
            return self.fast
        for run in _ASTRAL_RUN.finditer(text, start, endpos):
            if self._astral_members.search(run.group()):
                return self.exact
        return self.fast

    def slow_runs(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> list[tuple[int, int]]:
        """``(start, end)`` of each run of characters above U+FFFF in ``text[pos:endpos]``
        that holds one the translated classes leave out: the places ``re`` would get wrong.
        Empty when the fast engine is exact on all of it (or there is none).

        >>> from bpe_course.pretokens import GPT2_PATTERN
        >>> Splitter(GPT2_PATTERN).slow_runs("math 𝐀𝐁 and 😀 emoji")
        [(5, 7)]
        """
        if self.fast is None or self._astral_members is None:
            return []
        if not holds_astral(text, pos, endpos):
            return []
        members = self._astral_members.search
        return [
            run.span() for run in _ASTRAL_RUN.finditer(text, pos, endpos) if members(run.group())
        ]

    def findall(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> list[str]:
        """The pieces of ``text[pos:endpos]``, as ``regex``'s ``findall`` gives them."""
        engine = self.engine_for(text, pos, endpos)
        if self.guarded:
            return patterns.split_bounded(engine, text, pos, endpos)
        return engine.findall(text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match]:
        """Match objects of the pieces, as ``regex``'s ``finditer`` gives them."""
        return self.engine_for(text, pos, endpos).finditer(text, pos, endpos)
