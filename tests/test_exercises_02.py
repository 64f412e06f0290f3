"""Notebook 02 (naive BPE): its exercise checks reject wrong answers and accept right ones.

Each checker (from :mod:`bpe_course.course.checks.naive_bpe`) and collapsed solution (the
notebook's cells tagged ``solution``) is called on answers a learner could plausibly write.
A wrong answer must be rejected with a hint that names the mistake; the solution, and other
correct ways to write it, must pass.
"""

from __future__ import annotations

from typing import Any

import pytest
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    run_cells,
    verdict,
)

import bpe_course
from bpe_course.course.checks import naive_bpe

#: What the solutions of notebook 02 take from the notebook's earlier cells.
GIVEN_02 = {"get_pair_counts": bpe_course.get_pair_counts, "merge": bpe_course.merge}


@pytest.fixture(scope="module")
def nb02() -> dict[str, Any]:
    """The checks module's names, and the notebook's solutions run beside them."""
    return run_cells("02_naive_bpe", "solution", {**vars(naive_bpe), **GIVEN_02})


@pytest.mark.parametrize(
    ("four", "five", "hint"),
    [
        ([9, 9, 9], [9, 9, 5], "the occurrences overlap"),  # counted (5, 5) three times
        ([9, 9], [9, 9], "a 5 left without a partner stays"),
        ([9, 9], [5, 9, 9], "the 5 left without a partner is the last one"),
        ([9, 9], [9, 9, 9, 9], "the occurrences overlap"),
        ([9, 9], "995", "write the answer as a list"),
    ],
)
def test_02_fives_check_rejects(nb02, capsys, four, five, hint):
    assert_rejected(capsys, nb02["check_fives"], (four, five), hint)


def pick_by_ids(counts, vocab):
    return max(counts, key=lambda p: (counts[p], p))


def pick_by_joined_bytes(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]] + vocab[p[1]]))


def pick_first_met(counts, vocab):
    return max(counts, key=counts.get)


def pick_smallest(counts, vocab):
    return min(counts, key=lambda p: (-counts[p], vocab[p[0]], vocab[p[1]]))


def pick_by_left_only(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]]))


def pick_by_bytes_only(counts, vocab):
    return max(counts, key=lambda p: (vocab[p[0]], vocab[p[1]]))


PICK_WRONG = [
    # {(116, 97): 5, (256, 97): 5} with vocab[256] = b"st": bytes pick (t, a), ids (256, 97)
    (pick_by_ids, "not their ids"),
    (pick_by_joined_bytes, "not the two glued together"),
    (pick_first_met, "depends on dict order"),
    (pick_smallest, "not the smallest"),
    (pick_by_left_only, "the right tokens' bytes decide"),
    (pick_by_bytes_only, "the count decides first"),
]


@pytest.mark.parametrize(("answer", "hint"), PICK_WRONG)
def test_02_pick_pair_check_rejects(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_pick_pair"], (answer,), hint)


def test_02_pick_pair_check_shows_an_example_where_ids_and_bytes_disagree(nb02, capsys):
    _, printed = verdict(capsys, nb02["check_pick_pair"], pick_by_ids)
    assert "{(116, 97): 5, (256, 97): 5}" in printed


def merge_overlapping(ids, pair, new_id):
    """A merge that also merges the second of two overlapping pairs: in a run of three equal
    ids the middle one is used twice, [1, 1, 1] -> [256, 256] (which spells four)."""
    merged, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            overlaps = i + 2 < len(ids) and (ids[i + 1], ids[i + 2]) == pair
            i += 1 if overlaps else 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def trainer(pick, *, stop: bool = True, replace: bool = True, join: bool = True,
            merge=bpe_course.merge):
    """The training loop of notebook 02, with one of the mistakes a learner can make."""

    def train(ids, num_merges):
        vocab = {i: bytes([i]) for i in range(256)}
        merges = {}
        for new_id in range(256, 256 + num_merges):
            counts = bpe_course.get_pair_counts(ids)
            if stop and not counts:
                break
            best = pick(counts, vocab)
            if replace:
                ids = merge(ids, best, new_id)
            merges[best] = new_id
            vocab[new_id] = vocab[best[0]] + vocab[best[1]] if join else vocab[best[0]]
        return merges, vocab

    return train


def pick_rightly(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))


def pick_least_frequent(counts, vocab):
    return min(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (trainer(pick_by_ids), "not their ids"),
        (trainer(pick_by_joined_bytes), "not the two glued together"),
        (trainer(pick_first_met), "depends on dict order"),
        (trainer(pick_rightly, stop=False), "stop when no pair is left"),
        (trainer(pick_rightly, replace=False), "Replace each merged pair everywhere"),
        (trainer(pick_rightly, join=False), "vocab[256] should be"),
        (trainer(pick_least_frequent), "the package's is"),
        (lambda ids, n: trainer(pick_rightly)(ids, n)[::-1], "return (merges, vocab)"),
        (trainer(pick_rightly, merge=merge_overlapping), "overlapping pairs"),
    ],
)
def test_02_train_check_rejects(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_train"], (answer,), hint)


def encoder(choose):
    """An encoder that merges until nothing applies, picking the pair with ``choose``."""

    def encode(text, merges):
        ids = list(text.encode("utf-8"))
        while candidates := [pair for pair in zip(ids, ids[1:]) if pair in merges]:
            pair = choose(candidates, merges)
            ids = bpe_course.merge(ids, pair, merges[pair])
        return ids

    return encode


def encode_one_step(text, merges):
    ids = list(text.encode("utf-8"))
    candidates = [pair for pair in zip(ids, ids[1:]) if pair in merges]
    if candidates:
        pair = min(candidates, key=merges.get)
        ids = bpe_course.merge(ids, pair, merges[pair])
    return ids


def encode_without_default_rank(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=merges.get)  # None for unknown pairs
        if pair not in merges:
            break
        ids = bpe_course.merge(ids, pair, merges[pair])
    return ids


def encode_longest_match(text, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (left, right), new_id in merges.items():
        vocab[new_id] = vocab[left] + vocab[right]
    return naive_bpe.longest_first(text, vocab)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (encoder(lambda pairs, merges: pairs[0]), "you merged the leftmost pair"),
        (encoder(lambda pairs, merges: max(pairs, key=merges.get)), "the pair learned last"),
        (encoder(lambda pairs, merges: max(pairs, key=pairs.count)), "not the leftmost, the most"),
        (encode_one_step, "keep merging until no pair of neighbours is in merges"),
        (encode_without_default_rank, "give it float('inf')"),
        (encode_longest_match, "the longest token that matches"),
        (lambda text, merges: list(text.encode("utf-16-le")), "do not spell the text"),
    ],
)
def test_02_encode_check_rejects(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_encode"], (answer,), hint)


def test_02_encode_check_accepts_replaying_every_merge_in_order(nb02, capsys):
    def replay_all(text, merges):
        ids = list(text.encode("utf-8"))
        for pair, new_id in merges.items():
            ids = bpe_course.merge(ids, pair, new_id)
        return ids

    assert_accepted(capsys, nb02["check_encode"], (replay_all,))


NEWER = [b"ne", b"w", b"e", b"r"]


@pytest.mark.parametrize(
    ("lowest", "newer", "hint"),
    [
        ([b"lo", b"west"], NEWER, "b'lo' is not a token"),
        ([b"l", b"o", b"west"], NEWER, "the earliest merge that applies anywhere"),
        ([b"low", b"e", b"st"], NEWER, "(b'e', b'st') still applies"),
        ([b"low", b"est"], [b"n", b"e", b"w", b"e", b"r"], "(b'n', b'e') still applies"),
        ([b"low", b"est"], [b"new", b"er"], "b'new' is not a token"),
        (["low", "est"], NEWER, "write a list of bytes"),
        ([b"low", b"es"], NEWER, "join back into the word"),
    ],
)
def test_02_words_check_rejects(nb02, capsys, lowest, newer, hint):
    assert_rejected(capsys, nb02["check_words"], (lowest, newer), hint)


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        ("check_fives", ("solution_four_fives", "solution_five_fives")),
        ("check_pick_pair", ("solution_pick_pair",)),
        ("check_train", ("solution_train",)),
        ("check_encode", ("solution_encode",)),
        ("check_words", ("solution_lowest_tokens", "solution_newer_tokens")),
    ],
)
def test_02_checks_accept_the_solutions(nb02, capsys, checker, solution):
    assert_accepted(capsys, nb02[checker], tuple(nb02[name] for name in solution))


def test_02_pick_pair_check_accepts_another_right_answer(nb02, capsys):
    def sort_and_take_last(counts, vocab):
        occurring = sorted((p for p in counts if counts[p]),
                           key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))
        return occurring[-1] if occurring else None

    assert_accepted(capsys, nb02["check_pick_pair"], (sort_and_take_last,))


def test_02_train_check_names_overlaps_not_stopping(nb02, capsys):
    """`a a a` merged as two overlapping pairs goes wrong after the merge, not at the end."""
    wrong = trainer(pick_rightly, merge=merge_overlapping)
    _, printed = verdict(capsys, nb02["check_train"], wrong)
    assert "no pair is left" not in printed and "left to right" in printed, printed


def test_02_encode_check_gives_longest_match_and_leftmost_their_own_hints(nb02, capsys):
    _, longest = verdict(capsys, nb02["check_encode"], encode_longest_match)
    _, leftmost = verdict(capsys, nb02["check_encode"], encoder(lambda pairs, merges: pairs[0]))
    assert "longest" in longest and "longest" not in leftmost
    assert "leftmost" in leftmost and "leftmost" not in longest


# pick_pair's twist: pairs left at count 0 by a trainer that updates its counts ------------


def pick_without_none(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))  # the rule only


def pick_none_only_when_empty(counts, vocab):
    return pick_without_none(counts, vocab) if counts else None


def pick_occurring_but_crash_when_none(counts, vocab):
    occurring = {pair: n for pair, n in counts.items() if n > 0}
    return pick_without_none(occurring, vocab)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (pick_without_none, "counts is empty"),
        (pick_none_only_when_empty, "every count is 0"),
        (pick_occurring_but_crash_when_none, "return None"),
        (lambda counts, vocab: (0, 0) if not counts else pick_rightly(counts, vocab), "None"),
    ],
)
def test_02_pick_pair_check_rejects_a_pick_when_no_pair_occurs(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_pick_pair"], (answer,), hint)


# The Chinese edition: each checker's hints in Chinese, the most common mistakes first.


@pytest.mark.parametrize(
    ("checker", "answer", "hint"),
    [
        ("check_fives", ([9, 9, 9], [9, 9, 5]), "这些出现互相重叠"),
        ("check_fives", ([9, 9], [5, 9, 9]), "落单的是最后一个 5"),
        ("check_pick_pair", (pick_by_ids,), "而不是它们的 id"),
        ("check_pick_pair", (pick_by_joined_bytes,), "而不是把两者拼在一起"),
        ("check_pick_pair", (pick_first_met,), "取决于字典的顺序"),
        ("check_pick_pair", (pick_smallest,), "而不是最小的"),
        ("check_pick_pair", (pick_without_none,), "counts 是空的"),
        ("check_pick_pair", (pick_none_only_when_empty,), "所有计数都是 0"),
        ("check_train", (trainer(pick_by_ids),), "而不是它们的 id"),
        ("check_train", (trainer(pick_rightly, stop=False),), "就停下"),
        ("check_train", (trainer(pick_rightly, replace=False),), "在各处全部替换"),
        ("check_train", (trainer(pick_rightly, merge=merge_overlapping),), "重叠的字节对从左往右"),
        ("check_encode", (encoder(lambda pairs, merges: pairs[0]),), "你先合并了最左边"),
        ("check_encode", (encode_one_step,), "继续合并"),
        ("check_encode", (encode_without_default_rank,), "给它 float('inf')"),
        ("check_encode", (encode_longest_match,), "能匹配上的最长词元"),
        ("check_words", ([b"lo", b"west"], NEWER), "b'lo' 不是词元"),
        ("check_words", ([b"low", b"e", b"st"], NEWER), "仍然适用于你的答案"),
    ],
)
def test_02_checks_hint_in_chinese(nb02, capsys, checker, answer, hint):
    assert_rejected_in_chinese(capsys, nb02[checker], answer, hint)


def test_02_checks_say_correct_in_chinese(nb02, capsys):
    """The verdict goes through the harness, so the Chinese edition says 正确！, not Correct!."""
    from bpe_course.course.checks import harness

    before = harness._chosen
    harness.use_language("zh-CN")
    try:
        for checker, solution in [("check_fives", ("solution_four_fives", "solution_five_fives")),
                                  ("check_pick_pair", ("solution_pick_pair",))]:
            passed, printed = verdict(capsys, nb02[checker], *(nb02[name] for name in solution))
            assert passed is True and printed == "正确！\n", printed
    finally:
        harness._chosen = before
