"""The checks of notebook 04 (fast training): counting pairs from pretoken counts, training
with special tokens, updating the pair counts after a merge, a heap key, a safe cut.

Each ``check_*`` runs the learner's function on traps first (weights, overlapping runs,
prefixes, tokens split across chunks) and then on random cases, and prints ``Correct!`` or a
hint that names the mistake it recognises (in Chinese too, for the Chinese edition: helpers
return hints as (English, Chinese) pairs). The expected answers come from the package
(:func:`bpe_course.naive.get_pair_counts`, :func:`bpe_course.train.train_from_counts`), never
from the notebook's own solution cells.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from ...naive import get_pair_counts, merge
from ...pretokens import count_pretokens, pretokenize, split_on_special_tokens
from ...train import train_from_counts
from .harness import attempt, correct, not_yet, short

Pair = tuple[int, int]
EOT = "<|endoftext|>"
#: A hint in both editions: (English, Chinese).
Hint = tuple[str, str]


def say(hint: Hint) -> bool:
    """Fail with ``hint``, in the Chinese edition's words there."""
    return not_yet(hint[0], zh=hint[1])


# count_pair ---------------------------------------------------------------------------------


def count_pair_cases() -> list[tuple[Counter[str], bytes, bytes]]:
    """(counts, left, right): hand-picked traps first, then 300 random corpora."""
    cases = [
        (Counter({" self": 40, "self": 2, " see": 1}), b"s", b"e"),  # weights
        (Counter({"    ": 3, "  ": 5, " x": 1}), b" ", b" "),  # runs overlap
        (Counter({"café": 2, "été": 3}), b"\xc3", b"\xa9"),  # bytes inside a character
    ]
    rng = random.Random(12)
    for _ in range(300):
        words = ["".join(rng.choices(" es\né", k=rng.randint(1, 8))) for _ in range(4)]
        counts = Counter({word: rng.randint(1, 50) for word in words})
        data = rng.choice(words).encode("utf-8") * 2
        start = rng.randrange(len(data) - 1)
        cases.append((counts, data[start : start + 1], data[start + 1 : start + 2]))
    return cases


def pair_total(counts: Counter[str], left: bytes, right: bytes, weighted: bool = True) -> int:
    """The right answer (weighted=False: what forgetting the counts gives), via the package."""
    return sum(
        get_pair_counts(list(word.encode("utf-8")), weight=n if weighted else 1).get(
            (left[0], right[0]), 0
        )
        for word, n in counts.items()
    )


def check_count_pair(candidate: Callable[..., Any]) -> bool:
    """``count_pair(counts, left, right)``: weighted, overlapping, on bytes."""
    for counts, left, right in count_pair_cases():
        call = f"count_pair({dict(counts)}, {left!r}, {right!r})"
        got, error = attempt(candidate, Counter(counts), left, right)
        if error and error.startswith("UnicodeDecodeError"):
            return not_yet(
                f"{call} raised {error}: count bytes, not characters; a pair can sit inside one "
                "character (é is b'\\xc3\\xa9'), so work on word.encode('utf-8')",
                zh=f"{call} 抛出了 {error}：要数的是字节，不是字符；一个字节对可以落在一个字符内部"
                "（é 是 b'\\xc3\\xa9'），所以要在 word.encode('utf-8') 上数")
        if error:
            return not_yet(f"{call} raised {error}", zh=f"{call} 抛出了 {error}")
        expected = pair_total(counts, left, right)
        if got == expected:
            continue
        hint = f"{call} gave {got!r}, expected {expected}"
        zh = f"{call} 得到的是 {got!r}，应该是 {expected}"
        if got is None:
            hint += ": the function computes nothing it returns; a `return` is missing"
            zh += "：函数没有返回任何计算结果，漏了 `return`"
        elif got == sum(n * word.encode("utf-8").count(left + right) for word, n in counts.items()):
            hint += (": bytes.count skips overlapping matches (b'    '.count(b'  ') is 2, but four "
                     "spaces hold the pair 3 times); look at every position, e.g. zip(data, "
                     "data[1:])")
            zh += ("：bytes.count 会跳过重叠的匹配（b'    '.count(b'  ') 是 2，但四个空格里这个"
                   "字节对出现了 3 次）；要看每一个位置，例如 zip(data, data[1:])")
        elif got == pair_total(counts, left, right, weighted=False):
            hint += (": a pretoken that occurs n times holds its pairs n times; multiply by its "
                     "count")
            zh += "：一个出现 n 次的预分词片段，它的字节对也出现 n 次；要乘上它的计数"
        return not_yet(hint, zh=zh)
    return correct()


# train_with_specials -------------------------------------------------------------------------

SPECIALS = [EOT, "<pad>"]


def specials_cases() -> list[tuple[str, int, list[str]]]:
    """(text, number of merges, special tokens): texts whose most frequent byte pairs straddle
    a space or sit inside a special token, so that both slips change the merges."""
    cases = [
        ("a b a b a b<|endoftext|>a b", 3, [EOT]),  # 'a'+' ' is frequent, but crosses pretokens
        ("low lower<|endoftext|><|endoftext|>lowest<|endoftext|>", 5, [EOT]),
        ("<pad><pad>x<pad>y<|endoftext|>xy", 2, SPECIALS),
        ("no special tokens at all, all at all", 4, []),
    ]
    rng = random.Random(40)
    parts = ["the", " the", " cat", "s", " ", "\n", "é", EOT, "<pad>", "<|", "end"]
    for _ in range(40):
        text = "".join(rng.choices(parts, k=rng.randint(2, 14)))
        cases.append((text, rng.randint(1, 6), rng.sample(SPECIALS, rng.randint(0, 2))))
    return cases


def reference_training(text: str, num_merges: int, specials: list[str]) -> tuple[dict, list]:
    """What a correct trainer learns (the package's trainer, given the right vocabulary size)."""
    counts = count_pretokens(text, specials)
    return train_from_counts(counts, 256 + len(specials) + num_merges, specials)


def inside_a_pretoken(merged: bytes, text: str, specials: list[str]) -> bool:
    """Whether the bytes ``merged`` occur inside some pretoken of the ordinary text."""
    documents = split_on_special_tokens(text, specials)[::2] if specials else [text]
    return any(merged in word.encode("utf-8") for doc in documents for word in pretokenize(doc))


def specials_problem(got: Any, text: str, num_merges: int, specials: list[str]) -> Hint | None:
    """What is wrong with one answer of train_with_specials, or None."""
    call = f"train_with_specials({short(text, 80)}, {num_merges}, {specials})"
    vocab, merges = reference_training(text, num_merges, specials)
    if got is None:
        return (f"{call} returned None: a `return` is missing; return (vocab, merges)",
                f"{call} 返回了 None：漏了 `return`；要返回 (vocab, merges)")
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], dict)):
        return (f"{call} returned {short(got)}; return (vocab, merges) as train_bpe does",
                f"{call} 返回了 {short(got)}；要像 train_bpe 那样返回 (vocab, merges)")
    got_vocab, got_merges = got[0], list(got[1])
    for rank, (left, right) in enumerate(got_merges):
        if not inside_a_pretoken(left + right, text, specials):
            at = f"{call}: merge {rank} is {(left, right)}"
            zh_at = f"{call}：第 {rank} 条合并规则是 {(left, right)}"
            if any((left + right) in s.encode("utf-8") for s in specials):
                return (f"{at}, which occurs only inside a special token; cut the special tokens "
                        "out of the text before counting pairs (they are never merged, they get "
                        "an id of their own)",
                        f"{zh_at}，它只出现在特殊词元内部；统计字节对之前，先把特殊词元从文本里"
                        "切出去（特殊词元从不参与合并，它们有自己的 id）")
            return (f"{at}, a pair that joins the end of one pretoken to the start of the next; "
                    "merges never cross a pretoken boundary, so pretokenize each document and "
                    "count pairs inside each pretoken only",
                    f"{zh_at}，这个字节对把一个预分词片段的结尾和下一个片段的开头连在了一起；"
                    "合并从不跨越预分词片段的边界，所以要对每篇文档做预分词，只在每个片段内部"
                    "统计字节对")
    for index, token in enumerate(specials):
        wanted = 256 + index
        data = token.encode("utf-8")
        if got_vocab.get(wanted) != data:
            where = [i for i, t in got_vocab.items() if t == data]
            if where:
                return (f"{call}: {token!r} has id {where[0]}, but special tokens take the ids "
                        f"right after the 256 bytes ({wanted} here), before any merge; give them "
                        "their ids when the vocabulary starts, as start_vocab does",
                        f"{call}：{token!r} 的 id 是 {where[0]}，但特殊词元的 id 紧跟在 256 个"
                        f"字节之后（这里是 {wanted}），排在所有合并之前；要像 start_vocab 那样，"
                        "在词表一开始就给它们编号")
            return (f"{call}: the vocabulary has no {token!r}; special tokens get ids from 256 on",
                    f"{call}：词表里没有 {token!r}；特殊词元的 id 从 256 开始")
    if got_merges != merges:
        k = next((i for i, (a, b) in enumerate(zip(got_merges, merges)) if a != b),
                 min(len(got_merges), len(merges)))
        if len(got_merges) != len(merges) and got_merges == merges[: len(got_merges)]:
            return (f"{call}: {len(got_merges)} merges, expected {len(merges)}: the special "
                    "tokens take places in the vocabulary, but they do not use up merges",
                    f"{call}：得到 {len(got_merges)} 条合并规则，应该是 {len(merges)} 条：特殊"
                    "词元占用词表里的位置，但不占用合并的次数")
        got_k = got_merges[k] if k < len(got_merges) else None
        want_k = merges[k] if k < len(merges) else None
        return (f"{call}: merge {k} is {got_k or 'missing'}, expected {want_k or 'none'}; pick "
                "the most frequent pair (weighted by the pretoken counts), the greater pair of "
                "bytes on a tie",
                f"{call}：第 {k} 条合并规则是 {got_k or '（缺失）'}，"
                f"应该是 {want_k or '（没有）'}；"
                "要选出最频繁的字节对（按预分词片段的计数加权），计数相同时选字节更大的那一对")
    if got_vocab != vocab:
        wrong = next(
            i for i in sorted(vocab.keys() | got_vocab.keys()) if vocab.get(i) != got_vocab.get(i)
        )
        return (f"{call}: id {wrong} is {got_vocab.get(wrong)!r}, expected "
                f"{vocab.get(wrong)!r}; bytes 0-255, then the special tokens, then one token "
                "per merge",
                f"{call}：id {wrong} 是 {got_vocab.get(wrong)!r}，应该是 {vocab.get(wrong)!r}；"
                "先是字节 0-255，然后是特殊词元，再是每条合并规则一个词元")
    return None


def check_train_with_specials(candidate: Callable[..., Any]) -> bool:
    """``train_with_specials(text, num_merges, special_tokens)`` against the package's trainer."""
    for text, num_merges, specials in specials_cases():
        got, error = attempt(candidate, text, num_merges, list(specials))
        if error:
            call = f"train_with_specials({short(text, 80)}, {num_merges}, {specials})"
            return not_yet(f"{call} raised {error}", zh=f"{call} 抛出了 {error}")
        problem = specials_problem(got, text, num_merges, list(specials))
        if problem:
            return say(problem)
    return correct()


# apply_merge ---------------------------------------------------------------------------------


def apply_merge_cases() -> list[list[tuple[list[int], int]]]:
    """Corpora of (ids, how often): hand-picked overlaps first, then 150 random ones."""
    corpora = [
        [([97, 98, 99], 2), ([120, 97, 98, 121], 1)],  # a b c, x a b y: no overlap
        [([97, 97, 97], 1)],  # a a a: (a, a) twice, one merge
        [([32, 32, 32, 32], 5), ([32, 32, 115], 2)],  # runs of spaces
        [([97, 98, 97, 98, 97], 3)],  # a b a b a: occurrences touch
    ]
    rng = random.Random(7)
    for _ in range(150):
        corpora.append(
            [
                ([rng.choice((32, 97, 98)) for _ in range(rng.randint(1, 9))], rng.randint(1, 9))
                for _ in range(rng.randint(1, 6))
            ]
        )
    return corpora


def fresh_tables(words: list[list[int]], freqs: list[int]) -> tuple[dict, defaultdict]:
    """What pair_counts and where must hold for these words, counted from scratch."""
    counts: dict[Pair, int] = {}
    where: defaultdict[Pair, set[int]] = defaultdict(set)
    for index, ids in enumerate(words):
        get_pair_counts(ids, counts, freqs[index])
        for pair in zip(ids, ids[1:]):
            where[pair].add(index)
    return counts, where


def sketch(
    before: list[list[int]],
    freqs: list[int],
    pair: Pair,
    new_id: int,
    before_counts: dict,
    remove_old: bool = True,
    weighted: bool = True,
) -> dict:
    """The table two common slips produce (old pairs not removed, or counts not weighted)."""
    counts = Counter(before_counts)
    for ids, n in zip(before, freqs):
        if pair in zip(ids, ids[1:]):
            n = n if weighted else 1
            new = merge(ids, pair, new_id)
            if remove_old:
                counts.subtract({p: n * k for p, k in Counter(zip(ids, ids[1:])).items()})
            counts.update({p: n * k for p, k in Counter(zip(new, new[1:])).items()})
    return {p: n for p, n in counts.items() if n > 0}


def neighbour_pairs(before: list[list[int]], pair: Pair) -> set[Pair]:
    """The pairs just left and right of each occurrence of ``pair``: ``(x, a)`` and ``(b, y)``
    in ``x a b y``. A merge destroys them, so they must lose their count."""
    found = set()
    for ids in before:
        for i in range(len(ids) - 1):
            if (ids[i], ids[i + 1]) == pair:
                if i > 0:
                    found.add((ids[i - 1], ids[i]))
                if i + 2 < len(ids):
                    found.add((ids[i + 1], ids[i + 2]))
    return found


def merge_problem(
    pair: Pair,
    new_id: int,
    before: list[list[int]],
    freqs: list[int],
    words: list[list[int]],
    pair_counts: dict,
    where: dict,
    before_counts: dict,
    result: Any,
) -> Hint | None:
    """What is wrong after one call of apply_merge, or None."""
    expected = [merge(ids, pair, new_id) for ids in before]
    step = f"merging {pair} into {new_id} in the words {before} (how often: {freqs})"
    zh_step = f"在词 {before}（出现次数：{freqs}）中把 {pair} 合并成 {new_id}"
    for old, new, got in zip(before, expected, words):
        if got != new:
            return (f"{step}: {old} should become {new}, but the word is now {got}; store the "
                    "merged word",
                    f"{zh_step}：{old} 应该变成 {new}，但这个词现在是 {got}；要把合并后的词存回去")
    counts, _ = fresh_tables(expected, freqs)
    zeros = sorted(p for p, n in pair_counts.items() if n == 0)
    if zeros:
        return (f"{step}: pair_counts still holds {zeros[0]} with count 0; delete pairs whose "
                "count fell to 0, or the trainer will go on merging a pair that no longer occurs",
                f"{zh_step}：pair_counts 里还留着计数为 0 的 {zeros[0]}；计数降到 0 的字节对要"
                "删掉，否则训练器会接着合并一个已经不存在的字节对")
    wrong = sorted(
        p for p in counts.keys() | pair_counts.keys() if counts.get(p) != pair_counts.get(p)
    )
    if wrong:
        p = wrong[0]
        hint = f"{step}: pair_counts[{p}] is {pair_counts.get(p, 0)}, should be {counts.get(p, 0)}"
        zh = f"{zh_step}：pair_counts[{p}] 是 {pair_counts.get(p, 0)}，应该是 {counts.get(p, 0)}"
        too_high = all(pair_counts.get(q, 0) > counts.get(q, 0) for q in wrong)
        if pair_counts == sketch(before, freqs, pair, new_id, before_counts, remove_old=False):
            hint += (": take each old word's pairs out of pair_counts before putting the merged "
                     "word's in")
            zh += "：先把每个旧词的字节对从 pair_counts 里减掉，再把合并后的词的字节对加进去"
        elif pair_counts == sketch(before, freqs, pair, new_id, before_counts, weighted=False):
            hint += (": a word that occurs freqs[index] times holds each of its pairs that many "
                     "times")
            zh += "：一个出现 freqs[index] 次的词，它的每个字节对也出现这么多次"
        elif too_high and set(wrong) <= neighbour_pairs(before, pair):
            hint = (f"{step}: the neighbours' pairs kept their counts. The rule: merging (a, b) in "
                    "x a b y destroys (x, a) and (b, y) as well as (a, b), so each loses the "
                    "word's count, while (x, Z) and (Z, y) gain it. Simplest: take out all of the "
                    "old word's pairs, put in all of the merged word's pairs")
            zh = (f"{zh_step}：两边相邻的字节对还保留着原来的计数。规则是：在 x a b y 中合并 "
                  "(a, b)，除了 (a, b)，(x, a) 和 (b, y) 也被破坏了，它们各自要减去这个词的计数，"
                  "而 (x, Z) 和 (Z, y) 要加上它。最简单的做法：把旧词的字节对全部减掉，再把合并后"
                  "的词的字节对全部加上")
        elif any(len(merge(ids, pair, new_id)) < len(ids) - 1 for ids in before):
            hint += (". Here occurrences of the pair overlap or touch, and fixing up only the "
                     "neighbours of each one miscounts them: take out all of the old word's pairs, "
                     "put in all of the merged word's pairs")
            zh += ("。这里字节对的出现位置重叠或相邻，只修补每次出现两边的字节对会数错：把旧词的"
                   "字节对全部减掉，再把合并后的词的字节对全部加上")
        return hint, zh
    for index, ids in enumerate(words):
        for p in zip(ids, ids[1:]):
            if index not in where.get(p, ()):
                return (f"{step}: where[{p}] does not list word {index} ({ids}); note each new "
                        "pair's word",
                        f"{zh_step}：where[{p}] 里没有第 {index} 个词（{ids}）；每个新字节对都要"
                        "记下它所在的词")
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], set)):
        return (f"apply_merge returned {result!r}; return (the set of changed pairs, words "
                "visited)",
                f"apply_merge 返回了 {result!r}；要返回 (计数变了的字节对的集合, 访问过的词数)")
    for p in sorted(before_counts.keys() | counts.keys()):
        if before_counts.get(p) != counts.get(p) and p not in result[0]:
            change = f"{before_counts.get(p, 0)} -> {counts.get(p, 0)}"
            return (f"{step}: the count of {p} changed ({change}) but it is not in `changed`, so "
                    "the heap would never hear of it",
                    f"{zh_step}：{p} 的计数变了（{change}），却不在 `changed` 里，堆就永远不会"
                    "知道这件事")
    return None


def check_apply_merge(candidate: Callable[..., Any]) -> bool:
    """``apply_merge``: up to six merges in a row on each corpus, tables compared each time."""
    for corpus in apply_merge_cases():
        words, freqs = [list(ids) for ids, _ in corpus], [n for _, n in corpus]
        fresh, where = fresh_tables(words, freqs)
        pair_counts = Counter(fresh)
        for new_id in range(256, 262):  # most frequent pair first
            if not pair_counts:
                break
            pair = max(pair_counts, key=lambda p: (pair_counts[p], p))
            before, before_counts = [list(ids) for ids in words], dict(pair_counts)
            result, error = attempt(candidate, pair, new_id, words, freqs, pair_counts, where)
            if error:
                return not_yet(f"merging {pair} in {before} raised {error}",
                               zh=f"在 {before} 中合并 {pair} 时抛出了 {error}")
            problem = merge_problem(
                pair, new_id, before, freqs, words, pair_counts, where, before_counts, result
            )
            if problem:
                return say(problem)
    return correct()


# heap_key: ties broken by the merged token ---------------------------------------------------


def heap_key_cases() -> list[list[tuple[int, bytes, bytes]]]:
    """Lists of (count, left, right): the notebook's example, then 200 random lists full of
    prefixes and pairs that join to the same bytes."""
    cases = [
        [
            (5, b"a", b"b"),
            (7, b"x", b"y"),
            (5, b"ab", b"a"),
            (5, b"ab", b"c"),
            (5, b"a", b"bc"),
            (5, b"a", b"c"),
            (2, b"z", b"z"),
        ],
        [(5, b" t", b"he"), (5, b" th", b"e"), (5, b"b", b"a"), (5, b"a", b"b")],
    ]
    tokens = [b"a", b"ab", b"abc", b"b", b"ba", b"c", b"bc", b" ", b" t", b" th", b"he", b"e",
              b"\x00", b"\xff"]
    rng = random.Random(3)
    for _ in range(200):
        pairs = rng.sample([(a, b) for a in tokens for b in tokens], 8)
        cases.append([(rng.randint(1, 3), a, b) for a, b in pairs])
    return cases


def merge_order(item: tuple[int, bytes, bytes]) -> tuple[int, bytes, int]:
    """The order the notebook asks for, as a key for ``sorted(..., reverse=True)``."""
    count, left, right = item
    return count, left + right, len(left)


def check_heap_key(candidate: Callable[..., Any]) -> bool:
    """``heap_key(count, left, right)``: heapq pops the highest count first, then the greater
    merged token ``left + right``, then the longer ``left``."""
    rng = random.Random(5)
    for items in heap_key_cases():
        keys = []
        for item in items:
            key, error = attempt(candidate, *item)
            if error:
                return not_yet(f"heap_key{item} raised {error}",
                               zh=f"heap_key{item} 抛出了 {error}")
            if key is None:
                return not_yet(f"heap_key{item} returned None: a `return` is missing",
                               zh=f"heap_key{item} 返回了 None：漏了 `return`")
            keys.append(key)
        same = [
            (a, b)
            for i, a in enumerate(items)
            for j, b in enumerate(items)
            if i < j and keys[i] == keys[j]
        ]
        if same:
            (_, la, ra), (_, lb, rb) = same[0]
            if la + ra == lb + rb:
                why = ("they join to the same bytes, so the key needs the rule's last part: the "
                       "longer `left` first", "它们合并后是同样的字节，所以键还需要规则的最后一条："
                       "`left` 更长的优先")
            else:
                why = ("each pair needs its own key", "每个字节对都要有自己的键")
            return not_yet(f"{same[0][0]} and {same[0][1]} get the same key; {why[0]}",
                           zh=f"{same[0][0]} 和 {same[0][1]} 得到了同一个键；{why[1]}")
        heap = [(key, rng.random(), item) for key, item in zip(keys, items)]
        try:
            heapq.heapify(heap)
        except TypeError as error:
            return not_yet(
                f"heapq cannot compare the keys ({error}); use tuples of numbers and strings",
                zh=f"heapq 没法比较这些键（{error}）；请用由数字和字符串组成的元组")
        popped = [heapq.heappop(heap)[2] for _ in items]
        wanted = sorted(items, key=merge_order, reverse=True)
        if popped == wanted:
            continue
        first = next(i for i, (a, b) in enumerate(zip(popped, wanted)) if a != b)
        early, due = popped[first], wanted[first]
        hint, zh = f"{early} came out before {due}", f"{early} 比 {due} 先弹出来了"
        joined_early, joined_due = early[1] + early[2], due[1] + due[2]
        if early[0] < due[0]:
            hint += ("; heapq pops the smallest key first, so the largest count needs the "
                     "smallest key (-count)")
            zh += "；heapq 先弹出最小的键，所以计数最大的要有最小的键（-count）"
        elif joined_early == joined_due:
            hint += ("; both join to the same bytes, and then the longer `left` must come first "
                     "(-len(left) in the key)")
            zh += "；两者合并后是同样的字节，这时 `left` 更长的必须先出来（在键里放 -len(left)）"
        elif joined_due.startswith(joined_early):
            hint += ("; a token is greater than its own prefix, and flipping the bytes (255 - x) "
                     "keeps the shorter one first: descending_key adds an end mark")
            zh += ("；一个词元比它自己的前缀大，而把字节翻转（255 - x）仍会让较短的排在前面："
                   "descending_key 加了一个结束标志")
        elif (early[1], early[2]) > (due[1], due[2]):
            hint += ("; that is the trainer's usual rule (the greater pair); this one compares the "
                     "merged token left + right, so key on descending_key(left + right)")
            zh += ("；那是训练器通常的规则（字节对更大者优先）；这里比较的是合并后的词元 "
                   "left + right，所以键要用 descending_key(left + right)")
        else:
            hint += "; on equal counts the greater merged token left + right must come out first"
            zh += "；计数相同时，合并后的词元 left + right 更大的必须先出来"
        return not_yet(hint, zh=zh)
    return correct()


# safe_cut: the first of several special tokens ----------------------------------------------

CUT_SPECIALS = [EOT, "<|im_end|>"]


def safe_cut_cases() -> list[bytes]:
    """Byte strings with whole, partial and back-to-back tokens; every position is tried."""
    eot, end = (token.encode("utf-8") for token in CUT_SPECIALS)
    cases = [
        b"def f():\n    pass\n<|endoftext|>x = 1<|endoftext|>y",
        b"",
        b"no token here",
        eot,
        eot + eot,
        b"x<|endof" + eot,
        b"chat<|im_end|>more<|endoftext|>",
        b"a<|endoftext|>b<|im_end|>c",
        b"<|im_end|><|endoftext|>",
    ]
    rng = random.Random(8)
    parts = [b"x", b"\n", eot, end, b"<|endof", b"text|>", b"<|im_", "—".encode()]
    cases += [b"".join(rng.choices(parts, k=rng.randint(1, 8))) for _ in range(100)]
    return cases


def expected_cut(data: bytes, position: int, specials: list[str]) -> int:
    """The earliest start of any special token at or after ``position``, else ``len(data)``."""
    found = [data.find(token.encode("utf-8"), position) for token in specials]
    return min([f for f in found if f >= 0], default=len(data))


def check_safe_cut(candidate: Callable[..., Any]) -> bool:
    """``safe_cut(data, position, special_tokens)`` at every position of each case."""
    eot = EOT.encode("utf-8")
    for data in safe_cut_cases():
        for position in range(len(data) + 1):
            specials = list(CUT_SPECIALS)
            call = f"safe_cut({data!r}, {position}, {specials})"
            got, error = attempt(candidate, data, position, specials)
            if error:
                hint, zh = f"{call} raised {error}", f"{call} 抛出了 {error}"
                if "bytes-like" in error or "str" in error:
                    hint += (": `data` is bytes, the special tokens are str: encode them "
                             "('utf-8') first")
                    zh += "：`data` 是字节串，特殊词元是 str：先把它们编码（'utf-8'）"
                return not_yet(hint, zh=zh)
            expected = expected_cut(data, position, specials)
            if got == expected:
                continue
            hint = f"{call} gave {got!r}, expected {expected}"
            zh = f"{call} 得到的是 {got!r}，应该是 {expected}"
            found = data.find(eot, position)
            only_first = len(data) if found < 0 else found
            if got is None:
                hint += (": safe_cut returned None, so the cut it found is lost: a `return` is "
                         "missing (every path must return a position)")
                zh += ("：safe_cut 返回了 None，找到的切点丢掉了：漏了 `return`"
                       "（每条路径都要返回一个位置）")
            elif not isinstance(got, int):
                hint += ": return a byte offset (an int)"
                zh += "：要返回一个字节偏移（int）"
            elif got == -1:
                hint += (": a token that does not occur gives find() == -1, which is not a cut: "
                         "leave it out before taking the smallest, and with none left return "
                         "len(data)")
                zh += ("：没有出现的词元让 find() 返回 -1，这不是切点：取最小值之前先把它去掉，"
                       "一个都不剩时返回 len(data)")
            elif got == only_first and expected < got:
                hint += (": that is the first <|endoftext|>, but an earlier <|im_end|> is also a "
                         "special token: take the earliest start over all of them")
                zh += ("：那是第一个 <|endoftext|>，但更早出现的 <|im_end|> 也是特殊词元：要在"
                       "所有特殊词元中取最早的起始位置")
            elif got > expected and any(
                data.find(t.encode(), position) + len(t.encode()) == got for t in specials
            ):
                hint += ": return where the token starts, so that it opens the next chunk"
                zh += "：要返回词元开始的位置，让它成为下一块的开头"
            elif got + position == expected:
                hint += ": that offset counts from `position`; add `position` back"
                zh += "：这个偏移是从 `position` 算起的；要把 `position` 加回去"
            elif got < position:
                hint += ": search from `position`, not from the start: data.find(token, position)"
                zh += "：要从 `position` 开始找，而不是从头：data.find(token, position)"
            return not_yet(hint, zh=zh)
    return correct()
