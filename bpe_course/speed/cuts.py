"""Safe cuts: places where a split pattern provably never joins two neighbours.

A long text can be pretokenized in pieces, and a stream encoded as it arrives, only if
cutting it somewhere gives the same pretokens as not cutting it. That holds at a place
where the pattern never puts the two neighbouring characters in one piece, such as a
letter followed by a space. This module states those places as rules, one per kind of
neighbour, each with its proof, for GPT-2's, GPT-4's and o200k's patterns; for any other
pattern nothing is proven and no place is safe.

Three users share the rules: the trainer cuts a big file into chunks at them
(:mod:`bpe_course.speed.counting`), :meth:`bpe_course.Tokenizer.encode` pretokenizes a long
text a span at a time (:func:`spans_between_safe_cuts`), and ``encode_iterable`` encodes a
stream up to the last safe place it has read (:func:`last_safe_cut`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache, partial
from typing import NamedTuple

import regex

from ..pretokens import GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN
from ..safety import proven
from .fastsplit import Splitter

# Why a cut is safe. Let T be the text between two special tokens, c a position in it,
# x = T[c-1] and y = T[c]. Pretokenizing T gives the pieces of T[:c] followed by the pieces
# of T[c:] when two things hold:
#
#   (A) no piece of T contains both x and y, so some piece of T ends at c; and
#   (B) scanning T[:c] finds the same pieces as scanning T does up to c.
#
# A cut is also never made inside an occurrence of a special token (any occurrence, see
# counting._straddled): then splitting the two sides on special tokens splits the whole, and a cut
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

# Open models' patterns (bpe_course.models names their rules: vouch_for(..., cuts=...)).
#
# Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d) |[^\r\n\p{L}\p{N}]?\p{L}+ |\p{N}{1,3}
#   | ?[^\s\p{L}\p{N}]+[\r\n]* |\s*[\r\n]+ |\s+(?!\S) |\s+
#   GPT-4's alternatives without possessive quantifiers (none of them could give anything
#   back that a later part takes: a letter run ends at a non-letter, the optional leading
#   character is no letter, symbols exclude \r \n), and \s*[\r\n]+ |\s+(?!\S) |\s+ for
#   GPT-4's \s++$ |\s*[\r\n] |\s+(?!\S) |\s. (A) A piece holds GPT-4's pairs of neighbours:
#   the whitespace alternatives hold only whitespace. (B) Only \s+(?!\S) looks past its
#   match, so the rules with a visible x carry over. For GPT4_LINE_BREAK_CUT, the run R of
#   whitespace that ends at c with x: a P before R may take R's leading line breaks, in T
#   and T[:c] alike; what is left of R starts a piece, and \s*[\r\n]+ takes all of it in
#   both (its \s* stops at c, before y or the end, and gives back x); the alternatives
#   before it fail inside R as in GPT-4's proof. So GPT4_CUTS hold.
# Qwen 1 to 3: Llama 3's with \p{N} for \p{N}{1,3}. A digit is a piece of its own, so an N
#   is followed inside a piece by nothing: NUMBER_CUT's (A) holds, the rest is Llama 3's.
# Qwen 3.5 and 3.6: Qwen's with [\p{L}\p{M}]+ for \p{L}+ and M left out of the symbols.
#   (A) an L is followed inside a piece only by an L or an M: O200K_LETTER_CUT. An M, a P
#   to SYMBOL_CUT, is followed inside a piece only by an L or an M (in a word, or as the
#   leading character of one), never by an N or whitespace. A line break is never the
#   leading character of a word, so GPT4_LINE_BREAK_CUT's (A) stands, and its (B) is Llama
#   3's. The test file runs every rule on each pattern with generated text.

#: Qwen 3.5 and 3.6's rules: marks stay with letters.
QWEN3_6_CUTS = (O200K_LETTER_CUT, NUMBER_CUT, SYMBOL_CUT, GPT4_LINE_BREAK_CUT)

#: The proven cut rules of each named pattern. A pattern not listed has none (unless
#: :func:`cut_rules_of` finds it among the open models'): only special tokens are safe
#: places to cut it.
SAFE_CUTS: dict[str, tuple[CutRule, ...]] = {
    GPT2_PATTERN: GPT2_CUTS,
    GPT4_PATTERN: GPT4_CUTS,
    O200K_PATTERN: O200K_CUTS,
}

#: The rule sets by the names :func:`bpe_course.safety.proven.vouch_for` gives them.
RULE_SETS: dict[str, tuple[CutRule, ...]] = {
    "gpt2": GPT2_CUTS, "gpt4": GPT4_CUTS, "o200k": O200K_CUTS, "qwen3.6": QWEN3_6_CUTS,
}


def cut_rules_of(pattern: str) -> tuple[CutRule, ...]:
    """The rules proven for ``pattern``: a named pattern's, or those an open model's pattern
    was vouched for with (:data:`bpe_course.safety.proven.CUT_RULES`); none for any other.

    >>> cut_rules_of(GPT4_PATTERN) == GPT4_CUTS, cut_rules_of(r"\\S+|\\s+")
    (True, ())
    """
    rules = SAFE_CUTS.get(pattern)
    if rules is None:
        rules = RULE_SETS.get(proven.CUT_RULES.get(pattern, ""), ())
    return rules


#: ``encode`` pretokenizes a longer text about this many characters at a time (cut where the
#: pattern provably never joins two neighbours), so only one span's pieces exist at once:
#: all the pieces of a text take about 15 bytes per character. It is a little faster too
#: (5% on English prose), since the next span reuses that memory while it is still in the
#: processor's cache. Spans from 4k to 64k characters measured alike.
ENCODE_SPAN = 1 << 14

#: How far a safe cut is looked for: past the end of a span of ``encode``, and back from the
#: end of what ``encode_iterable`` has read. In ordinary text one comes within a few
#: characters (after every word); a long run of one class of character has none, and
#: searching all of it would cost more than encoding it (about 0.2 microseconds a
#: character), so ``encode`` takes the rest of such a text in one go and a stream waits.
CUT_REACH = 1 << 10


def cut_rules_regex(rules: Sequence[CutRule]) -> regex.Pattern[str] | None:
    """One regex whose (empty) matches are the places any of ``rules`` allows a cut."""
    if not rules:
        return None
    return regex.compile("|".join(f"(?<={rule.before})(?={rule.after})" for rule in rules))


def safe_cut_regex(pattern: str) -> regex.Pattern[str] | None:
    """The cut finder for ``pattern``, or ``None`` when nothing is proven about it."""
    return _rules_regex(cut_rules_of(pattern))


@lru_cache(maxsize=16)
def _rules_regex(rules: tuple[CutRule, ...]) -> regex.Pattern[str] | None:
    return cut_rules_regex(rules)


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


#: How far back :func:`split_around_astral` looks for a safe place, nearest first: trying
#: every place in :data:`CUT_REACH` characters took 0.3 ms a character above U+FFFF.
NEAR_REACHES = (32, 256, CUT_REACH)


def span_splitter(
    splitter: Splitter, rule: regex.Pattern[str] | None
) -> Callable[[str, int, int], list[str]]:
    """``splitter.findall`` for spans of a text, kept on the fast engine around characters
    above U+FFFF that send ``splitter`` back to ``regex`` (:func:`split_around_astral`),
    when ``rule`` proves places safe to cut and nothing else stands in the way."""
    if rule is None or splitter.fast is None or splitter.guarded or splitter._looks_behind:
        return splitter.findall
    return partial(split_around_astral, splitter, rule)


def split_around_astral(
    splitter: Splitter, rule: regex.Pattern[str], text: str, start: int, end: int
) -> list[str]:
    """The pieces of ``text[start:end]``, as ``splitter.findall`` gives them, with only the
    neighbourhood of each troublesome character above U+FFFF scanned by ``regex``.

    One mathematical letter in a span made ``findall`` take all of it to ``regex``, at
    about twice the time (a text with one every 8k characters took 1.8x as long). Here the
    span is cut at the last safe place before such a run of characters and the first one
    after it (within :data:`CUT_REACH`; else at the span's ends), ``regex`` scans between
    those, and ``re`` the rest. Safe places are where :func:`spans_between_safe_cuts` cuts
    too, so the pieces are the same as in one go.

    >>> splitter = Splitter(GPT2_PATTERN)
    >>> text = "one 𝐀two three"
    >>> split_around_astral(splitter, safe_cut_regex(GPT2_PATTERN), text, 0, len(text))
    ['one', ' 𝐀two', ' three']
    """
    runs = splitter.slow_runs(text, start, end)
    fast = splitter.fast
    if not runs or fast is None:
        return splitter.findall(text, start, end)
    pieces: list[str] = []
    done = start
    for run_start, run_end in runs:
        if run_end <= done:
            continue  # inside the last stretch given to regex
        before = done
        for reach in NEAR_REACHES:  # the nearest first: each place tried costs a match
            for cut in rule_cuts(text, rule, max(done, run_start - reach), run_start + 1):
                before = cut
            if before > done or run_start - reach <= done:
                break
        after = next(rule_cuts(text, rule, run_end, min(end, run_end + CUT_REACH)), end)
        if before > done:
            pieces += fast.findall(text, done, before)
        pieces += splitter.exact.findall(text, before, after)
        done = after
    if done < end:
        pieces += fast.findall(text, done, end)
    return pieces
