"""Notebook 04 (fast training): its exercise checks reject wrong answers and accept the
solutions.

Each checker cell (tag ``exercise-checker``) is run in a fresh namespace together with the
notebook's solution cells (tag ``solution``); the few notebook globals a solution uses are
supplied here. Every wrong answer below is one a learner could plausibly write; each must make
its checker return False with a hint that names the mistake.
"""

from __future__ import annotations

from typing import Any

import pytest
from notebook_cells import assert_accepted, assert_rejected, load_exercises

from bpe_course import merge
from bpe_course.train import descending_key

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def nb04() -> dict[str, Any]:
    return load_exercises(
        "04_fast_training", merge_ids=merge, descending_key=descending_key, EOT=EOT
    )


def count_pair_non_overlapping(counts, left, right):
    """bytes.count misses overlapping runs such as four spaces."""
    return sum(n * word.encode("utf-8").count(left + right) for word, n in counts.items())


def count_pair_unweighted(counts, left, right):
    total = 0
    for word in counts:
        data = word.encode("utf-8")
        total += sum(1 for pair in zip(data, data[1:]) if pair == (left[0], right[0]))
    return total


def count_pair_in_characters(counts, left, right):
    target = left.decode("utf-8") + right.decode("utf-8")
    return sum(n * sum(1 for pair in zip(word, word[1:]) if "".join(pair) == target)
               for word, n in counts.items())


COUNT_PAIR_WRONG = [  # check_count_pair: (wrong answer, what its hint must say)
        (count_pair_non_overlapping, "overlapping"),
        (count_pair_unweighted, "multiply by its count"),
        (count_pair_in_characters, "count bytes, not characters"),
]


def apply_merge_neighbours_only(pair, new_id, words, freqs, pair_counts, where):
    """Fixes up only the pairs next to each occurrence: wrong when occurrences overlap or touch."""
    changed, touched = set(), where.pop(pair)

    def add(p, amount, index):
        pair_counts[p] += amount
        changed.add(p)
        if amount > 0:
            where[p].add(index)

    for index in touched:
        old, weight = words[index], freqs[index]
        i = 0
        while i < len(old) - 1:
            if (old[i], old[i + 1]) == pair:
                add(pair, -weight, index)
                if i > 0:
                    add((old[i - 1], old[i]), -weight, index)
                    add((old[i - 1], new_id), weight, index)
                if i + 2 < len(old):
                    add((old[i + 1], old[i + 2]), -weight, index)
                    add((new_id, old[i + 2]), weight, index)
                i += 2
            else:
                i += 1
        words[index] = merge(old, pair, new_id)
    for p in changed:
        if pair_counts[p] <= 0:
            del pair_counts[p]
    return changed, len(touched)


def apply_merge_variant(remove_old=True, weighted=True, drop_zeros=True, note_where=True,
                        report_changed=True, store=True):
    """The solution with one step left out or done wrong."""

    def apply_merge(pair, new_id, words, freqs, pair_counts, where):
        changed, touched = set(), where.pop(pair)
        for index in touched:
            old = words[index]
            new = merge(old, pair, new_id)
            weight = freqs[index] if weighted else 1
            if remove_old:
                for p in zip(old, old[1:]):
                    pair_counts[p] -= weight
                    changed.add(p)
            for p in zip(new, new[1:]):
                pair_counts[p] += weight
                if report_changed:
                    changed.add(p)
                if note_where:
                    where[p].add(index)
            if store:
                words[index] = new
        if drop_zeros:
            for p in changed:
                if pair_counts[p] <= 0:
                    del pair_counts[p]
        return changed, len(touched)

    return apply_merge


APPLY_MERGE_WRONG = [  # check_apply_merge: (wrong answer, what its hint must say)
        (apply_merge_neighbours_only, "overlap or touch"),
        (apply_merge_variant(remove_old=False), "take each old word's pairs out"),
        (apply_merge_variant(weighted=False), "holds each of its pairs"),
        (apply_merge_variant(drop_zeros=False), "with count 0"),
        (apply_merge_variant(note_where=False), "does not list word"),
        (apply_merge_variant(report_changed=False), "not in `changed`"),
        (apply_merge_variant(store=False), "store the merged word"),
]


def flip(token: bytes) -> bytes:
    return bytes(255 - x for x in token)


HEAP_KEY_WRONG = [  # check_heap_key: (wrong answer, what its hint must say)
        (lambda count, left, right: (-count, flip(left) + flip(right)), "same key"),
        (lambda count, left, right: (-count, flip(left), flip(right)), "own prefix"),
        (lambda count, left, right: (-count, descending_key(left + right)), "same key"),
        (lambda n, left, right: (n, descending_key(left) + descending_key(right)), "-count"),
        (lambda count, left, right: (-count, left, right), "greater (left, right)"),
        (lambda count, left, right: None, "same key"),
]


SAFE_CUT_WRONG = [  # check_safe_cut: (wrong answer, what its hint must say)
        (lambda data, position: data.find(EOT.encode(), position), "not -1"),
        (lambda data, position: data.index(EOT.encode(), position), "raised"),
        (lambda data, position: max(data.find(EOT.encode()), 0), "search from `position`"),
        (
            lambda data, position: (
                len(data) if (found := data[position:].find(EOT.encode())) < 0 else found
            ),
            "add `position`",
        ),
        (
            lambda data, position: (
                len(data) if (found := data.find(EOT.encode(), position)) < 0 else found + len(EOT)
            ),
            "where the token starts",
        ),
]


def test_check_exercise_falls_back_to_the_solution_until_the_learner_passes(nb04, capsys):
    check_exercise = nb04["check_exercise"]
    solution = nb04["solution_safe_cut"]

    def safe_cut(data, position):
        raise NotImplementedError("your turn")

    assert check_exercise(safe_cut, solution, nb04["check_safe_cut"]) is solution
    assert "`safe_cut` is not written yet" in capsys.readouterr().out

    def wrong(data, position):
        return data.find(EOT.encode(), position)

    assert check_exercise(wrong, solution, nb04["check_safe_cut"]) is solution
    assert "Not yet" in capsys.readouterr().out

    def right(data, position):
        found = data.find(EOT.encode(), position)
        return len(data) if found < 0 else found

    assert check_exercise(right, solution, nb04["check_safe_cut"]) is right
    assert capsys.readouterr().out == "Correct!\n"


# Every checker against every wrong answer above, and against its solution -------------------

REJECTIONS = [
    *[("check_count_pair", wrong, hint) for wrong, hint in COUNT_PAIR_WRONG],
    *[("check_apply_merge", wrong, hint) for wrong, hint in APPLY_MERGE_WRONG],
    *[("check_heap_key", wrong, hint) for wrong, hint in HEAP_KEY_WRONG],
    *[("check_safe_cut", wrong, hint) for wrong, hint in SAFE_CUT_WRONG],
]


@pytest.mark.parametrize(
    ("check", "wrong", "hint"),
    REJECTIONS,
    ids=[f"{check}: {hint}" for check, _, hint in REJECTIONS],
)
def test_check_rejects_the_wrong_answer(nb04, capsys, check, wrong, hint):
    assert_rejected(capsys, nb04[check], (wrong,), hint)


SOLUTIONS = [
    ("check_count_pair", "solution_count_pair"),
    ("check_apply_merge", "solution_apply_merge"),
    ("check_heap_key", "solution_heap_key"),
    ("check_safe_cut", "solution_safe_cut"),
]


@pytest.mark.parametrize(("check", "solution"), SOLUTIONS)
def test_check_accepts_the_solution(nb04, capsys, check, solution):
    assert_accepted(capsys, nb04[check], (nb04[solution],))
