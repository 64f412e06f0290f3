"""The split patterns the package vouches for: its own, and the open models' it ships.

They need no guard (:mod:`.patterns` says why): no capture groups, pieces that cover any
text, linear time. The set lives apart from :mod:`.patterns`, which loads ``regex``, so
that a module naming such a pattern (:mod:`bpe_course.models`) loads nothing to vouch for
it: a SentencePiece model, which has no split pattern, starts 10 ms sooner.
"""

from __future__ import annotations

from ..pretokens import NAMED_PATTERNS

#: The package's own patterns; the open models' patterns join them (:func:`vouch_for`).
PROVEN_PATTERNS: set[str] = set(NAMED_PATTERNS.values())

#: The open models' patterns that have proven safe cuts, and the name of their rules in
#: :data:`bpe_course.speed.cuts.RULE_SETS` (named, so that vouching loads no ``regex``).
CUT_RULES: dict[str, str] = {}


def is_proven(pattern: str) -> bool:
    """Is ``pattern`` one of the package's own, which need no guard?

    >>> is_proven(NAMED_PATTERNS["gpt4"]), is_proven(r"\\w+|\\W")
    (True, False)
    """
    return pattern in PROVEN_PATTERNS


def vouch_for(pattern: str, cuts: str | None = None) -> str:
    """Count ``pattern``, one the package ships, among its own, and return it. Unguarded, it
    keeps the fast path: guarded, Llama 3's pattern encoded prose in 2.5 times the time.
    The tests check that each covers any text and keeps the fast path, as the named ones.
    ``cuts`` names the safe-cut rules proven for it in :mod:`bpe_course.speed.cuts`."""
    PROVEN_PATTERNS.add(pattern)
    if cuts is not None:
        CUT_RULES[pattern] = cuts
    return pattern
