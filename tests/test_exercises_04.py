"""Notebook 04 (fast training): its exercise checks reject wrong answers and accept the
solutions.

The checkers live in :mod:`bpe_course.course.checks.fast_training`; the solutions are the
notebook's hidden ``solution`` cells, run here in a namespace that holds the checks module's
names and the few notebook globals a solution uses. Every wrong answer below is one a learner
could plausibly write; each must make its checker return False with a hint that names the
mistake.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    hinted_in_chinese,
    run_cell_starting,
    run_cells,
)

from bpe_course import merge, pretokenize, split_on_special_tokens
from bpe_course.course.checks import fast_training
from bpe_course.course.checks.harness import check_exercise
from bpe_course.train import descending_key

EOT = "<|endoftext|>"
IM_END = "<|im_end|>"


@pytest.fixture(scope="module")
def nb04() -> dict[str, Any]:
    namespace = {"__name__": "exercises", **vars(fast_training), "merge_ids": merge,
                 "descending_key": descending_key, "EOT": EOT, "Counter": Counter,
                 "split_on_special_tokens": split_on_special_tokens, "pretokenize": pretokenize,
                 "check_exercise": check_exercise}
    namespace["python_source"] = lambda size: ""  # the cell defining count_words also reads 1 MB
    for start in ["text = python_source", "def start_vocab", "def train_recount"]:
        run_cell_starting("04_fast_training", start, namespace)
    return run_cells("04_fast_training", "solution", namespace)


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


def apply_merge_forgets_neighbours(pair, new_id, words, freqs, pair_counts, where):
    """Takes the merged pair out and puts (x, Z) and (Z, y) in, but leaves (x, a) and (b, y)."""
    changed, touched = set(), where.pop(pair)
    for index in touched:
        old, weight = words[index], freqs[index]
        new = merge(old, pair, new_id)
        pair_counts[pair] -= weight * sum(1 for p in zip(old, old[1:]) if p == pair)
        changed.add(pair)
        for i in range(len(new)):
            if new[i] == new_id:
                for p in ([(new[i - 1], new_id)] if i > 0 else []) + (
                        [(new_id, new[i + 1])] if i + 1 < len(new) else []):
                    pair_counts[p] += weight
                    changed.add(p)
                    where[p].add(index)
        words[index] = new
    for p in changed:
        if pair_counts[p] <= 0:
            del pair_counts[p]
    return changed, len(touched)


APPLY_MERGE_WRONG.append((apply_merge_forgets_neighbours, "destroys (x, a) and (b, y)"))


def heap_key_usual_rule(count, left, right):
    """The key shown earlier in the notebook, for the trainer's usual rule."""
    return (-count, descending_key(left) + descending_key(right))


HEAP_KEY_WRONG = [  # check_heap_key: (wrong answer, what its hint must say)
        (lambda count, left, right: (-count, flip(left) + flip(right)), "same key"),
        (lambda count, left, right: (-count, flip(left + right), -len(left)), "own prefix"),
        (lambda count, left, right: (-count, descending_key(left + right)), "longer `left`"),
        (lambda n, left, right: (n, descending_key(left + right), -len(left)),
         "the largest count needs the smallest key"),
        (lambda count, left, right: (-count, left + right, -len(left)), "greater merged token"),
        (lambda count, left, right: (-count, descending_key(left + right), len(left)),
         "the longer `left` must come first"),
        (heap_key_usual_rule, "usual rule"),
        (lambda count, left, right: None, "a `return` is missing"),
]


def safe_cut_forgot_return(data, position, special_tokens):
    found = [data.find(token.encode(), position) for token in special_tokens]
    min((start for start in found if start >= 0), default=len(data))  # computed, never returned


SAFE_CUT_WRONG = [  # check_safe_cut: (wrong answer, what its hint must say)
        (lambda data, position, specials: min(data.find(t.encode(), position) for t in specials),
         "not a cut"),
        (lambda data, position, specials: min(data.index(t.encode(), position) for t in specials),
         "raised"),
        (lambda data, position, specials: min(
            (f for t in specials if (f := data.find(t.encode())) >= 0), default=len(data)),
         "search from `position`"),
        (lambda data, position, specials: min(
            (f for t in specials if (f := data[position:].find(t.encode())) >= 0),
            default=len(data)),
         "add `position`"),
        (lambda data, position, specials: min(
            (f + len(t.encode()) for t in specials if (f := data.find(t.encode(), position)) >= 0),
            default=len(data)),
         "where the token starts"),
        (lambda data, position, specials: (
            len(data) if (found := data.find(specials[0].encode(), position)) < 0 else found),
         "take the earliest start over all of them"),
        (lambda data, position, specials: min(
            (f for t in specials if (f := data.find(t, position)) >= 0), default=len(data)),
         "encode them"),
        (safe_cut_forgot_return, "a `return` is missing"),
]


def test_a_forgotten_return_in_safe_cut_is_a_hint_not_a_crash(nb04, capsys):
    solution = nb04["solution_safe_cut"]
    assert check_exercise(safe_cut_forgot_return, solution, nb04["check_safe_cut"]) is solution
    printed = capsys.readouterr().out
    assert "safe_cut returned None" in printed and "Traceback" not in printed


# train_with_specials: the two slips the issue names, and two more ---------------------------

def trainer(count, specials_first=True, cut_specials=True, merges_for_specials=False):
    """A from-scratch trainer; ``count`` is "pretokens" (right) or "bytes" (pairs across
    pretoken boundaries). ``specials_first=False`` numbers the special tokens after the merges;
    ``cut_specials=False`` leaves the special tokens in the text; ``merges_for_specials`` lets
    the special tokens use up merges."""

    def train_with_specials(text, num_merges, special_tokens):
        documents = split_on_special_tokens(text, special_tokens)[::2] if cut_specials else [text]
        words = Counter()
        for document in documents:
            if count == "pretokens":
                words.update(pretokenize(document))
            else:
                words[document] += 1
        vocab = {i: bytes([i]) for i in range(256)}
        if specials_first:
            for token in special_tokens:
                vocab[len(vocab)] = token.encode()
        table = [(list(word.encode()), n) for word, n in words.items() if word]
        merges = []
        for _ in range(num_merges - (len(special_tokens) if merges_for_specials else 0)):
            pairs = Counter()
            for ids, n in table:
                for pair in zip(ids, ids[1:]):
                    pairs[pair] += n
            if not pairs:
                break
            best = max(pairs, key=lambda p: (pairs[p], vocab[p[0]], vocab[p[1]]))
            vocab[len(vocab)] = vocab[best[0]] + vocab[best[1]]
            merges.append((vocab[best[0]], vocab[best[1]]))
            table = [(merge(ids, best, len(vocab) - 1), n) for ids, n in table]
        if not specials_first:
            for token in special_tokens:
                vocab[len(vocab)] = token.encode()
        return vocab, merges

    return train_with_specials


TRAIN_WITH_SPECIALS_WRONG = [  # check_train_with_specials: (wrong answer, what its hint must say)
        (trainer("bytes"), "merges never cross a pretoken boundary"),
        (trainer("pretokens", specials_first=False), "special tokens take the ids right after"),
        (trainer("pretokens", cut_specials=False), "occurs only inside a special token"),
        (trainer("pretokens", merges_for_specials=True), "they do not use up merges"),
        (lambda text, n, specials: None, "a `return` is missing"),
]


def test_the_from_scratch_trainer_is_right_when_nothing_is_weakened(nb04, capsys):
    # the wrong answers above are this trainer with one rule broken, so it must pass as it is
    assert_accepted(capsys, nb04["check_train_with_specials"], (trainer("pretokens"),))


def test_check_exercise_falls_back_to_the_solution_until_the_learner_passes(nb04, capsys):
    solution = nb04["solution_safe_cut"]

    def safe_cut(data, position, special_tokens):
        raise NotImplementedError("your turn")

    assert check_exercise(safe_cut, solution, nb04["check_safe_cut"]) is solution
    assert "`safe_cut` is not written yet" in capsys.readouterr().out

    def wrong(data, position, special_tokens):
        return data.find(EOT.encode(), position)

    assert check_exercise(wrong, solution, nb04["check_safe_cut"]) is solution
    assert "Not yet" in capsys.readouterr().out

    def right(data, position, special_tokens):
        found = [data.find(token.encode(), position) for token in special_tokens]
        return min((start for start in found if start >= 0), default=len(data))

    assert check_exercise(right, solution, nb04["check_safe_cut"]) is right
    assert capsys.readouterr().out == "Correct!\n"


# Every checker against every wrong answer above, and against its solution -------------------

REJECTIONS = [
    *[("check_count_pair", wrong, hint) for wrong, hint in COUNT_PAIR_WRONG],
    *[("check_apply_merge", wrong, hint) for wrong, hint in APPLY_MERGE_WRONG],
    *[("check_heap_key", wrong, hint) for wrong, hint in HEAP_KEY_WRONG],
    *[("check_safe_cut", wrong, hint) for wrong, hint in SAFE_CUT_WRONG],
    *[("check_train_with_specials", wrong, hint) for wrong, hint in TRAIN_WITH_SPECIALS_WRONG],
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
    ("check_train_with_specials", "solution_train_with_specials"),
]


@pytest.mark.parametrize(("check", "solution"), SOLUTIONS)
def test_check_accepts_the_solution(nb04, capsys, check, solution):
    assert_accepted(capsys, nb04[check], (nb04[solution],))


# The Chinese edition: every wrong answer above gets its hint in Chinese, in the same order ---

ZH_HINTS = {
    "check_count_pair": ["会跳过重叠的匹配", "要乘上它的计数", "要数的是字节，不是字符"],
    "check_apply_merge": ["出现位置重叠或相邻", "先把每个旧词的字节对从 pair_counts 里减掉",
                          "它的每个字节对也出现这么多次", "计数为 0 的", "里没有第",
                          "却不在 `changed` 里", "要把合并后的词存回去",
                          "(x, a) 和 (b, y) 也被破坏了"],
    "check_heap_key": ["得到了同一个键", "一个词元比它自己的前缀大", "`left` 更长的优先",
                       "计数最大的要有最小的键", "合并后的词元 left + right 更大的必须先出来",
                       "`left` 更长的必须先出来", "训练器通常的规则", "漏了 `return`"],
    "check_safe_cut": ["这不是切点", "抛出了", "要从 `position` 开始找", "要把 `position` 加回去",
                       "要返回词元开始的位置", "要在所有特殊词元中取最早的起始位置",
                       "先把它们编码", "漏了 `return`"],
    "check_train_with_specials": ["合并从不跨越预分词片段的边界",
                                  "特殊词元的 id 紧跟在 256 个字节之后",
                                  "它只出现在特殊词元内部", "但不占用合并的次数", "漏了 `return`"],
}


@hinted_in_chinese(
    {"check_count_pair": COUNT_PAIR_WRONG, "check_apply_merge": APPLY_MERGE_WRONG,
     "check_heap_key": HEAP_KEY_WRONG, "check_safe_cut": SAFE_CUT_WRONG,
     "check_train_with_specials": TRAIN_WITH_SPECIALS_WRONG},
    ZH_HINTS,
)
def test_04_checks_hint_in_chinese(nb04, capsys, check, wrong, hint, english):
    assert_rejected_in_chinese(capsys, nb04[check], (wrong,), hint, english)
