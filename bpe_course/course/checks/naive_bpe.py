"""The checks of notebook 02 (naive BPE): overlapping pairs, the tie-break, the training
loop, the encoder and encoding two words by hand.

Every checker compares the learner's answer with the package's naive trainer and reference
encoder (:mod:`bpe_course.naive`) on cases full of ties and overlaps, and when an answer is
wrong it replays the mistakes learners make (a tie broken by ids, pairs merged twice where
they overlap, the leftmost pair merged first, the longest token taken first...) to name the
one that explains every wrong result. Every hint has a Chinese version, said in the Chinese
edition (``not_yet(hint, zh=...)``): helpers return hints as (English, Chinese) pairs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from bpe_course.course.checks.harness import attempt, check_exercise, correct, not_yet
from bpe_course.naive import encode_naive, get_pair_counts, merge, train_from_counts_naive

__all__ = ["check_encode", "check_exercise", "check_fives", "check_pick_pair", "check_train",
           "check_words"]


def check_fives(four: Any, five: Any) -> bool:
    """The two predictions of ``merge`` on runs of 5s, with the hint for the usual slip."""
    for name, answer, length in [("four_fives", four, 4), ("five_fives", five, 5)]:
        expected = merge([5] * length, (5, 5), 9)
        if answer == expected:
            continue
        if not isinstance(answer, list):
            hint = ("write the answer as a list of ids, e.g. [9, 5].",
                    "把答案写成 id 的列表，例如 [9, 5]。")
        elif answer.count(9) > expected.count(9):
            hint = (f"(5, 5) occurs {length - 1} times, but the occurrences overlap: a 5 used "
                    "in one merge is gone, so scan left to right and skip past each merge.",
                    f"(5, 5) 出现了 {length - 1} 次，但这些出现互相重叠：一次合并用掉的 5 "
                    "就没有了，所以要从左往右扫，每合并一次就跳过这两个 id。")
        elif len(answer) < len(expected):
            hint = ("a 5 left without a partner stays in the list: nothing is dropped.",
                    "落单的 5 仍然留在列表里：什么都不会丢掉。")
        elif answer == expected[::-1]:
            hint = ("merge scans from the left, so the 5 left without a partner is the last one.",
                    "merge 从左边开始扫，所以落单的是最后一个 5。")
        else:
            hint = ("scan left to right; each merge joins two 5s into one 9.",
                    "从左往右扫；每次合并把两个 5 并成一个 9。")
        return not_yet(f"{name} = {answer!r}. Hint: {hint[0]}",
                       zh=f"{name} = {answer!r}。提示：{hint[1]}")
    return correct()


def best_pair(counts: dict, vocab: dict) -> tuple[int, int]:
    """The package's rule (as `bpe_course.naive` writes it): count, then the pair's bytes."""
    return max(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))


#: Wrong tie-breaks a learner may write, each with the hint that names the mistake (English,
#: Chinese).
TIE_MISTAKES = [
    (lambda counts, vocab: max(counts, key=lambda p: (counts[p], p)),
     "ties must compare the pairs' bytes, not their ids (an id only says when a token was "
     "made): for counts {(116, 97): 5, (256, 97): 5} with vocab[256] = b'st', the answer is "
     "(116, 97), because (b't', b'a') > (b'st', b'a').",
     "平局时要比较字节对的字节，而不是它们的 id（id 只说明词元是什么时候造出来的）："
     "counts 为 {(116, 97): 5, (256, 97): 5}、vocab[256] = b'st' 时，答案是 (116, 97)，"
     "因为 (b't', b'a') > (b'st', b'a')。"),
    (lambda counts, vocab: max(counts, key=lambda p: (counts[p], vocab[p[0]] + vocab[p[1]])),
     "compare (bytes of left, bytes of right) as a pair, not the two glued together: "
     "(b'st', b'a') beats (b's', b'z') because b'st' > b's', although b'sta' < b'sz'.",
     "要把（左边的字节, 右边的字节）当作一对来比较，而不是把两者拼在一起："
     "(b'st', b'a') 胜过 (b's', b'z')，因为 b'st' > b's'，尽管 b'sta' < b'sz'。"),
    (lambda counts, vocab: max(counts, key=counts.get),
     "max with key=counts.get returns the first most frequent pair the dict yields, so the "
     "answer depends on dict order. Break ties by the pair's bytes.",
     "key=counts.get 的 max 返回字典里排在最前的那个最频繁的字节对，答案就取决于字典的顺序了。"
     "平局要按字节对的字节来分。"),
    (lambda counts, vocab: min(counts, key=lambda p: (-counts[p], vocab[p[0]], vocab[p[1]])),
     "among the most frequent pairs take the greatest pair of bytes, not the smallest.",
     "在最频繁的几个字节对中，取字节最大的那一对，而不是最小的。"),
    (lambda counts, vocab: min(counts, key=lambda p: (-counts[p], p)),
     "ties go to the greatest pair of bytes; you took the smallest pair of ids.",
     "平局时取字节最大的那一对；你取的是 id 最小的那一对。"),
    (lambda counts, vocab: max(counts, key=lambda p: (vocab[p[0]], vocab[p[1]])),
     "the count decides first; the bytes only break ties between equally frequent pairs.",
     "先看计数；字节只用来在计数相同的字节对之间分出先后。"),
    (lambda counts, vocab: max(counts, key=lambda p: (counts[p], vocab[p[0]])),
     "when the left tokens are equal, the right tokens' bytes decide.",
     "左边的词元相同时，由右边词元的字节决定。"),
]


def random_vocab(rng: random.Random, num_merges: int) -> dict[int, bytes]:
    """Bytes, then tokens glued from earlier ones (so many are prefixes of others)."""
    vocab = {i: bytes([i]) for i in range(256)}
    small = [ord(c) for c in "aestz "]
    for new_id in range(256, 256 + num_merges):
        left, right = (rng.choice(small + list(range(256, new_id))) for _ in range(2))
        vocab[new_id] = vocab[left] + vocab[right]
    return vocab


def pick_pair_cases(seed: int = 4) -> list[tuple[dict, dict]]:
    """The traps from the text, then random count tables full of ties."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"st", 257: b"ow"}
    cases = [({(101, 115): 9, (115, 116): 9, (119, 101): 8}, vocab),
             ({(116, 97): 5, (256, 97): 5}, vocab), ({(115, 122): 5, (256, 97): 5}, vocab),
             ({(97, 98): 3, (97, 99): 3}, vocab), ({(101, 256): 9, (108, 257): 7}, vocab)]
    rng = random.Random(seed)
    for _ in range(300):
        vocab = random_vocab(rng, 12)
        ids = [i for i in vocab if i >= 256 or chr(i) in "aestz "]
        pairs = {(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(1, 8))}
        cases.append(({pair: rng.randint(1, 3) for pair in pairs}, vocab))
    return cases


def zero_count_cases() -> list[tuple[dict, dict]]:
    """Tables a trainer that updates its counts can leave: pairs at 0 among others, all at
    0, or none at all."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"st"}
    return [({(122, 122): 0, (97, 98): 2, (97, 99): 2}, vocab), ({}, vocab),
            ({(122, 122): 0}, vocab), ({(122, 122): 0, (256, 97): 0}, vocab)]


def pick_occurring(counts: dict, vocab: dict) -> tuple[int, int] | None:
    """The package's rule over the pairs that still occur; None when none does."""
    occurring = [pair for pair, count in counts.items() if count > 0]
    return best_pair({pair: counts[pair] for pair in occurring}, vocab) if occurring else None


def _zero_count_hint(candidate: Callable[[dict, dict], Any]) -> tuple[str, str] | None:
    """What goes wrong when pairs are at count 0 or missing; None if nothing does."""
    for counts, vocab in zero_count_cases():
        got, error = attempt(candidate, dict(counts), vocab)
        expected = pick_occurring(counts, vocab)
        if got == expected and not error:
            continue
        shown = f"pick_pair({counts}, vocab) gave {error or repr(got)}"
        zh = f"pick_pair({counts}, vocab) 得到的是 {error or repr(got)}"
        if not counts:
            return (f"{shown}. Hint: counts is empty: no pair occurs, so there is nothing to "
                    "merge; return None (max of nothing raises ValueError).",
                    f"{zh}。提示：counts 是空的：没有任何字节对出现，也就没有什么可合并的；"
                    "返回 None（对空序列取 max 会抛出 ValueError）。")
        if expected is None:
            return (f"{shown}. Hint: every count is 0: those pairs no longer occur, so there "
                    "is nothing to merge; return None.",
                    f"{zh}。提示：所有计数都是 0：这些字节对已经不再出现，没有什么可合并的；"
                    "返回 None。")
        return (f"{shown}, the answer is {expected}. Hint: a pair at count 0 no longer "
                "occurs: leave it out.",
                f"{zh}，答案是 {expected}。提示：计数为 0 的字节对已经不再出现：把它排除掉。")
    return None


def check_pick_pair(candidate: Callable[[dict, dict], Any]) -> bool:
    """``candidate(counts, vocab)`` must pick by count, then by the pair's bytes, and give
    None when no pair occurs (ties are checked first, then counts of 0)."""
    cases = pick_pair_cases()
    answers = []
    for counts, vocab in cases:
        got, error = attempt(candidate, dict(counts), vocab)
        answers.append(got)
        if error:
            return not_yet(f"pick_pair({counts}, vocab) raised {error}.",
                           zh=f"pick_pair({counts}, vocab) 抛出了 {error}。")
    wrong = [(case, got) for case, got in zip(cases, answers) if got != best_pair(*case)]
    if not wrong:
        zero_hint = _zero_count_hint(candidate)
        return correct() if zero_hint is None else not_yet(zero_hint[0], zh=zero_hint[1])
    (counts, vocab), got = wrong[0]
    expected = best_pair(counts, vocab)
    named = {pair: vocab[pair[0]] + b"|" + vocab[pair[1]] for pair in counts}
    hint = ("max over the pairs with the key (count, bytes of left, bytes of right).",
            "对所有字节对取 max，key 用（计数, 左边的字节, 右边的字节）。")
    for mistake, *said in TIE_MISTAKES:
        if all(mistake(dict(case[0]), case[1]) == got for case, got in zip(cases, answers)):
            hint = said
            break
    return not_yet(f"for counts {counts} (pairs of bytes: {named}) the answer is {expected}, "
                   f"you gave {got!r}.\nHint: {hint[0]}",
                   zh=f"counts 为 {counts}（对应的字节对：{named}）时答案是 {expected}，"
                   f"你给出的是 {got!r}。\n提示：{hint[1]}")


def train_cases(seed: int = 5) -> list[tuple[list[int], int]]:
    """Empty and tiny sequences, then random ones over a few letters (many ties)."""
    rng = random.Random(seed)
    cases = [([], 3), ([7], 3), ([1, 1, 1], 5), (list(b"the cat in the hat"), 10)]
    for _ in range(150):
        letters = rng.choice([b"ab", b"abc", b"st a", "sé牛".encode()])
        ids = [rng.choice(letters) for _ in range(rng.randint(2, 40))]
        cases.append((ids, rng.randint(1, 12)))
    return cases


def package_train(ids: list[int], num_merges: int) -> list[tuple[bytes, bytes]]:
    """The package's merges for one sequence: a "corpus" of one word that occurs once."""
    return train_from_counts_naive({bytes(ids): 1}, 256 + num_merges)[1]


def check_train(candidate: Callable[[list[int], int], Any]) -> bool:
    """``candidate(ids, num_merges)`` must learn the package's merges, in order."""
    failures = []  # ((message, 中文), wrong pick or None), one per case that went wrong
    for ids, num_merges in train_cases():
        expected = package_train(ids, num_merges)
        result, error = attempt(candidate, list(ids), num_merges)
        if error or not (isinstance(result, tuple) and len(result) == 2):
            gave = f"train({ids}, {num_merges}) gave {error or repr(result)[:80]}. Hint: "
            zh = f"train({ids}, {num_merges}) 得到的是 {error or repr(result)[:80]}。提示："
            if error and len(expected) < num_merges:
                return not_yet(gave + "stop when no pair is left (counts is empty).",
                               zh=zh + "没有字节对可合并时（counts 为空）就停下。")
            return not_yet(gave + "return (merges, vocab).", zh=zh + "请返回 (merges, vocab)。")
        merges, vocab = result
        if not (isinstance(merges, dict) and isinstance(vocab, dict)
                and all(isinstance(pair, tuple) for pair in merges)):
            return not_yet(f"train({ids}, {num_merges}) gave {repr(result)[:80]}. Hint: return "
                           "(merges, vocab): merges maps (id, id) pairs to new ids, vocab ids "
                           "to bytes.",
                           zh=f"train({ids}, {num_merges}) 得到的是 {repr(result)[:80]}。提示："
                           "请返回 (merges, vocab)：merges 把 (id, id) 字节对映射到新 id，"
                           "vocab 把 id 映射到字节。")
        found = first_difference(ids, expected, merges, vocab)
        if found:
            failures.append(found)
    if not failures:
        return correct()
    overlaps = [failure for failure in failures if "overlapping pairs" in failure[0][0]]
    (message, zh), pick = min(overlaps or failures, key=lambda failure: len(failure[0][0]))
    if pick:  # name the tie-break that explains every wrong pick
        picks = [pick for _, pick in failures if pick]
        hints = [said for mistake, *said in TIE_MISTAKES
                 if all(mistake(counts, vocab) == pair for counts, vocab, pair in picks)]
        hint = (hints or [("the most frequent pair, ties to the greatest pair of bytes.",
                           "取最频繁的字节对，平局时取字节最大的那一对。")])[0]
        message, zh = f"{message}\nHint: {hint[0]}", f"{zh}\n提示：{hint[1]}"
    return not_yet(message, zh=zh)


def _overlapped(ids: list[int], pair: tuple[int, int]) -> bool:
    """Whether two occurrences of ``pair`` share an id in ``ids`` (a run like ``a a a``)."""
    left, right = pair
    return left == right and any(ids[i] == ids[i + 1] == ids[i + 2] == left
                                 for i in range(len(ids) - 2))


def _overlap_message(where: str, step: int, pair: tuple[int, int]) -> tuple[str, str]:
    return (f"{where} after merge {step - 1}, {pair}, your merges go on as if both overlapping "
            f"pairs of a run like `a a a` had been merged. Overlapping pairs merge left to "
            "right: `a a a` becomes `aa a`, because an id used by one merge cannot be used "
            "again by the next (exercise 1: merge([5, 5, 5], (5, 5), 9) is [9, 5]). Use "
            "`merge`, or step past both ids of each merged pair.",
            f"{where} 第 {step - 1} 次合并 {pair} 之后，你的合并就像把 `a a a` 这样一串里"
            "互相重叠的两个字节对都合并了一样。重叠的字节对从左往右合并：`a a a` 变成 `aa a`，"
            "因为一次合并用掉的 id 不能再被下一次合并使用（练习 1：merge([5, 5, 5], (5, 5), 9) "
            "是 [9, 5]）。请用 `merge`，或者每合并一对就跳过这两个 id。")


def first_difference(ids: list[int], expected: list[tuple[bytes, bytes]],
                     merges: dict[tuple[int, int], int],
                     vocab: dict[int, bytes]) -> tuple[tuple[str, str], Any] | None:
    """Where `merges` first departs from the package's `expected` byte pairs:
    ((message, 中文), pick), pick = (counts, vocab, pair) when the wrong pair was picked; None
    if there is no difference.

    A merge that cannot happen right after a merge of ``(a, a)`` over a run ``a a a`` means
    the learner merged both overlapping pairs: the message says so, rather than what
    follows from it (a pair "not in ids", or "no pair is left")."""
    step_vocab = {i: bytes([i]) for i in range(256)}
    where = f"train({ids}, ...):"
    before: tuple[list[int], tuple[int, int]] | None = None  # the ids and pair of the last merge
    for step, (pair, new_id) in enumerate(merges.items()):
        left, right = vocab.get(pair[0], b"?"), vocab.get(pair[1], b"?")
        if new_id > 256 + step:  # a pair learned twice keeps one dict entry, its last id
            return ((f"{where} merge {step} has id {new_id}, not {256 + step}: was a pair "
                     "learned twice? Replace each merged pair everywhere (ids = merge(ids, ...)).",
                     f"{where} 第 {step} 次合并的 id 是 {new_id}，不是 {256 + step}：是不是"
                     "同一个字节对学了两次？每次合并都要把这个字节对在各处全部替换"
                     "（ids = merge(ids, ...)）。"), None)
        if new_id != 256 + step:
            return ((f"{where} merge {step} got id {new_id}; new ids go 256, 257, ...",
                     f"{where} 第 {step} 次合并得到的 id 是 {new_id}；新 id 依次是 256、257、……"),
                    None)
        if vocab.get(new_id) != left + right:
            return ((f"{where} vocab[{new_id}] should be {left + right!r}.",
                     f"{where} vocab[{new_id}] 应为 {left + right!r}。"), None)
        counts = dict(get_pair_counts(ids))
        impossible = step == len(expected) or pair not in counts
        if impossible and before and _overlapped(*before):
            return _overlap_message(where, step, before[1]), None
        if step == len(expected):
            return ((f"{where} after {step} merges no pair is left: stop there.",
                     f"{where} {step} 次合并之后已经没有字节对了：到这里就该停下。"), None)
        if pair not in counts:
            return ((f"{where} merge {step}, {pair}, is not in ids any more: replace each "
                     "merged pair everywhere (ids = merge(ids, ...)).",
                     f"{where} 第 {step} 次合并的 {pair} 已经不在 ids 里了：每次合并都要把"
                     "这个字节对在各处全部替换（ids = merge(ids, ...)）。"), None)
        if (left, right) != expected[step]:
            return ((f"{where} merge {step} is {(left, right)}, the package's is "
                     f"{expected[step]}.",
                     f"{where} 第 {step} 次合并是 {(left, right)}，本课程 Python 包的是 "
                     f"{expected[step]}。"), (counts, dict(step_vocab), pair))
        step_vocab[new_id] = left + right
        before = (ids, pair)
        ids = merge(ids, pair, new_id)
    if len(merges) < len(expected):
        return ((f"{where} you stopped after {len(merges)} merges, the package after "
                 f"{len(expected)}.",
                 f"{where} 你在 {len(merges)} 次合并后就停了，本课程 Python 包在 "
                 f"{len(expected)} 次之后才停。"), None)
    return None


def trained_merges(text: str, num_merges: int) -> tuple[dict, dict, list]:
    """The package's merges for `text`, as (id merges like `train`'s, vocab, byte pairs)."""
    vocab, byte_pairs = train_from_counts_naive({text: 1}, 256 + num_merges)
    id_of = {token: i for i, token in vocab.items()}
    id_merges = {(id_of[a], id_of[b]): id_of[a + b] for a, b in byte_pairs}
    return id_merges, vocab, byte_pairs


def encode_cases(seed: int = 6) -> Iterator[tuple[dict, dict, list, list[str]]]:
    """Merges learned from random texts, each with random new texts to encode."""
    rng = random.Random(seed)
    for _ in range(12):
        letters = rng.choice(["ab", "abc ", "aé牛 ", "the cat "])
        def sample(n: int, letters: str = letters) -> str:
            return "".join(rng.choice(letters) for _ in range(n))

        id_merges, vocab, byte_pairs = trained_merges(sample(80), rng.randint(3, 20))
        texts = ["", letters[0], sample(80)] + [sample(rng.randint(2, 30)) for _ in range(15)]
        yield id_merges, vocab, byte_pairs, texts


def replay(ids: list[int], merges: dict, choose: Callable[[list, dict], Any]) -> list[int]:
    """Merge until no pair of neighbours is in `merges`, picking with choose(candidates)."""
    while True:
        candidates = [pair for pair in zip(ids, ids[1:]) if pair in merges]
        if not candidates:
            return ids
        pair = choose(candidates, merges)
        ids = merge(ids, pair, merges[pair])


def longest_first(text: str, vocab: dict[int, bytes]) -> list[int]:
    """The mistake of encoding by greedy longest match: at each position the longest token
    of ``vocab`` that the bytes start with."""
    id_of = {token: i for i, token in vocab.items()}
    data, ids, start = text.encode("utf-8"), [], 0
    while start < len(data):
        end = max(e for e in range(start + 1, len(data) + 1) if data[start:e] in id_of)
        ids.append(id_of[data[start:end]])
        start = end
    return ids


#: Wrong orders a learner may merge in, each with the hint that names the mistake (English,
#: Chinese).
ORDER_MISTAKES = [
    (lambda pairs, merges: pairs[0],
     "you merged the leftmost pair that has a merge. Merge the pair learned earliest (the "
     "smallest new id) first, wherever it is in the text.",
     "你先合并了最左边那个有合并规则的字节对。应该先合并最早学到的那一对（新 id 最小的），"
     "不管它在文本的什么位置。"),
    (lambda pairs, merges: max(pairs, key=merges.get),
     "you merged the pair learned last first. The earliest (smallest new id) goes first.",
     "你先合并了最后学到的那一对。应该最早学到的（新 id 最小的）先合并。"),
    (lambda pairs, merges: max(pairs, key=lambda p: (pairs.count(p), -merges[p])),
     "you merged the most frequent pair, as training does. Encoding follows the order the "
     "merges were learned in (the smallest new id first), not counts in the new text.",
     "你像训练时那样先合并了最频繁的字节对。编码要按合并规则学到的先后顺序来"
     "（新 id 最小的先合并），而不是看新文本里的计数。"),
]

#: The hint for an encoder that takes the longest matching token (English, Chinese).
LONGEST_FIRST = (
    "you took the longest token that matches at each position, left to right (as WordPiece "
    "does). BPE does not look for long tokens: merge the pair learned earliest (the smallest "
    "new id) first, wherever it is, and repeat; the tokens that come out need not be the "
    "longest.",
    "你在每个位置从左往右取能匹配上的最长词元（WordPiece 就是这样做的）。BPE 不找长词元："
    "先合并最早学到的那一对（新 id 最小的），不管它在哪里，然后重复；得到的词元不一定是最长的。")


def check_encode(candidate: Callable[[str, dict], Any]) -> bool:
    """``candidate(text, merges)`` must give the reference encoder's ids."""
    failures = []  # (text, merges, your ids), for every text you encoded differently
    for id_merges, vocab, byte_pairs, texts in encode_cases():
        id_of = {token: i for i, token in vocab.items()}
        for text in texts:
            expected = [id_of[t] for t in encode_naive(text.encode("utf-8"), byte_pairs)]
            got, error = attempt(candidate, text, dict(id_merges))
            if error:
                en, zh = encode_hint(error) or ("", "")
                return not_yet(f"encode({text!r}, merges) raised {error}. {en}".rstrip(),
                               zh=f"encode({text!r}, merges) 抛出了 {error}。{zh}")
            if got != expected:
                hint = encode_hint(None, text, got, id_merges, vocab)
                if hint:
                    return not_yet(f"encode({text!r}, merges) gave {got!r}. Hint: {hint[0]}",
                                   zh=f"encode({text!r}, merges) 得到的是 {got!r}。"
                                   f"提示：{hint[1]}")
                failures.append((text, id_merges, got, expected, vocab))
    if not failures:
        return correct()
    text, id_merges, got, expected, _ = min(failures, key=lambda failure: len(failure[0]))
    hint = ("merge the pair learned earliest (the smallest new id) first, wherever it is: not "
            "the leftmost, the most frequent or the last learned.",
            "先合并最早学到的那一对（新 id 最小的），不管它在哪里：不是最左边的、"
            "不是最频繁的，也不是最后学到的。")
    if all(longest_first(t, v) == g for t, _, g, _, v in failures):
        hint = LONGEST_FIRST
    else:
        for choose, *said in ORDER_MISTAKES:
            if all(replay(list(t.encode("utf-8")), m, choose) == g
                   for t, m, g, _, _ in failures):
                hint = said
                break
    return not_yet(f"encode({text!r}, merges) gave {got}, the package gives {expected}.\n"
                   f"Hint: {hint[0]}",
                   zh=f"encode({text!r}, merges) 得到的是 {got}，本课程 Python 包给出的是 "
                   f"{expected}。\n提示：{hint[1]}")


def encode_hint(error: str | None, text: str = "", got: Any = None, merges: Any = None,
                vocab: Any = None) -> tuple[str, str] | None:
    """Name what is wrong with one answer (English, Chinese); None if only the order of
    merging can explain it."""
    if error:
        return (("Hint: a pair that is not in merges has no rank; give it float('inf'), "
                 "e.g. merges.get(pair, float('inf')).",
                 "提示：不在 merges 里的字节对没有合并次序；给它 float('inf')，"
                 "例如 merges.get(pair, float('inf'))。") if "NoneType" in error else None)
    if not isinstance(got, list) or not all(isinstance(i, int) for i in got):
        return "return a list of ids (ints).", "请返回 id（int）的列表。"
    if any(i not in vocab for i in got):
        return ("every id must be a byte (0-255) or a new id from merges.",
                "每个 id 都必须是一个字节（0-255）或 merges 里的新 id。")
    if b"".join(vocab[i] for i in got) != text.encode("utf-8"):
        return ("your ids do not spell the text: merge only neighbouring pairs, and keep every "
                "other id.",
                "你的 id 拼不回原文：只合并相邻的字节对，其余的 id 都要保留。")
    left_over = [pair for pair in zip(got, got[1:]) if pair in merges]
    if left_over:
        return (f"{left_over[0]} is still a pair of neighbours that merges joins: keep "
                "merging until no pair of neighbours is in merges.",
                f"{left_over[0]} 仍是一对 merges 会合并的相邻 id：继续合并，"
                "直到没有一对相邻 id 在 merges 里。")
    return None


TEXTBOOK_COUNTS = {"low": 5, "lower": 2, "widest": 3, "newest": 6}


def check_words(lowest: Any, newer: Any) -> bool:
    """The tokens of two unseen words under the six textbook merges, worked out by hand."""
    vocab, six = train_from_counts_naive(TEXTBOOK_COUNTS, 256 + 6)
    for word, answer in [("lowest", lowest), ("newer", newer)]:
        expected = encode_naive(word.encode("utf-8"), six)
        if answer == expected:
            continue
        tokens = set(vocab.values())
        if not isinstance(answer, list) or not all(isinstance(t, bytes) for t in answer):
            hint = ('write a list of bytes, e.g. [b"lo", b"w"].',
                    '写成 bytes 的列表，例如 [b"lo", b"w"]。')
        elif b"".join(answer) != word.encode("utf-8"):
            hint = "the tokens must join back into the word.", "这些词元连起来必须正好是这个词。"
        elif any(token not in tokens for token in answer):
            made = ", ".join((a + b).decode() for a, b in six)
            stray = next(t for t in answer if t not in tokens)
            hint = (f"{stray!r} is not a token: the merges make {made}.",
                    f"{stray!r} 不是词元：这些合并造出的是 {made}。")
        elif any(pair in six for pair in zip(answer, answer[1:])):
            pair = next(pair for pair in zip(answer, answer[1:]) if pair in six)
            hint = (f"the merge {pair} still applies to your answer.",
                    f"合并 {pair} 仍然适用于你的答案。")
        else:
            hint = ("replay the merges in the order learned: at each step the earliest merge "
                    "that applies anywhere in the word goes first.",
                    "按学到的先后顺序重放合并：每一步都先用在词里任何位置能用上的、最早学到的那条合并。")
        return not_yet(f"{word!r} is not {answer!r}. Hint: {hint[0]}",
                       zh=f"{word!r} 不是 {answer!r}。提示：{hint[1]}")
    return correct()
