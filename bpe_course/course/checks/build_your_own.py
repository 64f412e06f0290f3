"""The checks of notebook 06b (build your own tokenizer): encoding one pretoken by merge rank,
cutting out special tokens, GPT-2's two files, the stream hold-back pasted from notebook 06,
and the class that puts them together.

The expected answers come from the package (:func:`bpe_course.naive.encode_naive`,
:func:`bpe_course.pretokens.split_on_special_tokens`, :mod:`bpe_course.formats.gpt2`,
:class:`bpe_course.Tokenizer`), never from the notebook's solutions. Every hint is written in
English and in Chinese (``zh=``), for the Chinese edition.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...formats.gpt2 import read_merges_txt, read_vocab_json, write_merges_txt, write_vocab_json
from ...naive import encode_naive, merge_ranks
from ...openai import openai_file
from ...pretokens import GPT2_PATTERN, pretokenize, split_on_special_tokens
from ..data import course_text
from .encoding_in_practice import check_encode_stream as check_encode_stream
from .encoding_in_practice import checker_tokenizers
from .harness import Hint, correct, not_yet, say


def pretoken_cases() -> list[tuple[bytes, dict]]:
    """(data, ranks): hand-made traps, then pretokens of real text under the checker tokenizers."""
    cases = [
        (b"abc", merge_ranks([(b"b", b"c"), (b"a", b"b")])),  # the lowest rank is not leftmost
        (b"aaaa", merge_ranks([(b"a", b"a"), (b"aa", b"aa")])),  # leftmost first: aa aa, then aaaa
        (b"aaa", merge_ranks([(b"a", b"a")])),
        (b"", {}),
        (b"x", {}),
        (b"lower", merge_ranks([(b"l", b"o"), (b"lo", b"w"), (b"e", b"r")])),
    ]
    text = course_text("dog_park.txt")[:3000] + " naïve 奶奶 🙂  \n\n 12345"
    for tokenizer in checker_tokenizers():
        ranks = merge_ranks(tokenizer.merges)
        pretokens = dict.fromkeys(pretokenize(text, tokenizer.pattern))  # each once, in order
        cases += [(pretoken.encode("utf-8"), ranks) for pretoken in pretokens]
    return cases


def check_encode_pretoken(candidate: Callable[..., Any]) -> bool:
    """``encode_pretoken(data, ranks)``: the lowest rank first, the leftmost on a tie."""
    for data, ranks in pretoken_cases():
        expected = encode_naive(data, ranks)
        try:
            got = candidate(data, dict(ranks))
        except NotImplementedError:
            raise
        except Exception as error:
            return not_yet(f"encode_pretoken({data!r}, ...) raised {error!r}",
                           zh=f"encode_pretoken({data!r}, ...) 抛出了 {error!r}")
        if got == expected:
            continue
        merges = sorted((r, pair) for pair, r in ranks.items() if pair[0] + pair[1] in data)[:6]
        hint = (f"encode_pretoken({data!r}) gave {got!r}, expected {expected!r} (merges by "
                f"rank: {merges})")
        zh = (f"encode_pretoken({data!r}) 得到的是 {got!r}，应该是 {expected!r}（按合并次序"
              f"排列的合并规则：{merges}）")
        if isinstance(got, list) and got and not isinstance(got[0], bytes):
            hint += "; return the tokens as bytes"
            zh += "；词元要以 bytes 返回"
        elif isinstance(got, list) and b"".join(got) != data:
            hint += "; the tokens must join back to the pretoken's bytes"
            zh += "；这些词元拼起来必须还原出预分词片段的字节"
        else:
            hint += (
                "; at every step join the adjacent pair with the lowest rank anywhere in the "
                "pretoken (the leftmost if it occurs twice), then look again"
            )
            zh += ("；每一步都要在整个预分词片段里找合并次序最小的相邻字节对（出现不止一次时取"
                   "最左边那个）把它合并，然后再重新找")
        return not_yet(hint, zh=zh)
    return correct()


def split_cases() -> list[tuple[str, list[str]]]:
    """(text, special tokens): look-alikes, overlaps, regex characters, no special tokens at all."""
    specials = ["<|endoftext|>", "<|endoftext|><|endoftext|>", "[MASK]", "a.b", "<pad>"]
    cases = [
        ("a<|endoftext|>b", ["<|endoftext|>"]),
        ("no specials", []),
        ("<|endoftext|>", specials),
        ("x<|endoftext|><|endoftext|>y", specials),
        ("x<|endoftext|><|endoftext|>y", specials[::-1]),
        ("<|end|>|endoftext", ["<|endoftext|>"]),
        ("a.b axb [MASK] M", specials),
    ]
    parts = [
        "<|endoftext|>",
        "<|endof",
        "|>",
        "[MASK]",
        "MASK",
        "a.b",
        "axb",
        "<pad>",
        "pad",
        " ",
        "x",
        "é",
    ]
    rng = random.Random(2)
    for _ in range(150):
        chosen = rng.sample(specials, rng.randint(0, len(specials)))
        cases.append(("".join(rng.choices(parts, k=rng.randint(0, 10))), chosen))
    return cases


def check_split_on_specials(candidate: Callable[..., Any]) -> bool:
    """``split_on_specials(text, special_tokens)``: ordinary text at even places, tokens at odd."""
    for text, specials in split_cases():
        expected = split_on_special_tokens(text, specials)
        try:
            got = candidate(text, list(specials))
        except NotImplementedError:
            raise
        except Exception as error:
            return not_yet(f"split_on_specials({text!r}, {specials}) raised {error!r}",
                           zh=f"split_on_specials({text!r}, {specials}) 抛出了 {error!r}")
        if got == expected:
            continue
        hint = f"split_on_specials({text!r}, {specials}) gave {got!r}, expected {expected!r}"
        zh = f"split_on_specials({text!r}, {specials}) 得到的是 {got!r}，应该是 {expected!r}"
        why = split_problem(text, specials, got, expected)
        return not_yet(f"{hint}; {why[0]}", zh=f"{zh}；{why[1]}")
    return correct()


def split_problem(text: str, specials: list[str], got: Any, expected: list[str]) -> Hint:
    """What is wrong with ``got``, the parts of ``text`` that ``expected`` lists."""
    if isinstance(got, list) and "".join(got) != text:
        return ("joined, the parts must give back the text (keep the special tokens as items)",
                "这些部分拼起来必须还原出原文（特殊词元本身也要作为列表里的一项保留）")
    if isinstance(got, list) and any(len(g) == 1 and g in "<>|" for g in got[1::2]):
        return ("escape the tokens (regex.escape) before building a pattern: | means 'or'",
                "拼正则模式之前先把特殊词元转义（regex.escape）：| 在正则里表示“或”")
    if isinstance(got, list) and got == expected[:-1] and expected[-1] == "":
        return ("the text ends with a special token, so the ordinary text after it is '', and "
                "it must still be an item: the list starts and ends with ordinary text (add the "
                "rest of the text after the last special token even when it is empty)",
                "文本以特殊词元结尾，所以它后面的普通文本是 ''，这一项也必须保留：列表总是以"
                "普通文本开头、以普通文本结尾（最后一个特殊词元之后剩下的文本，即使为空也要加上）")
    if isinstance(got, list) and got == [*expected, ""]:
        return ("there is one '' too many at the end: the list ends with the ordinary text "
                "after the last special token, once",
                "末尾多了一个 ''：列表以最后一个特殊词元之后的普通文本结尾，只出现一次")
    if isinstance(got, list) and [g for g in got if g] == [e for e in expected if e]:
        return ("keep the empty strings between special tokens and at the ends, so that "
                "special tokens are always at odd positions",
                "特殊词元之间和两端的空字符串都要保留，这样特殊词元才总是在奇数位置上")
    if any(s in text for s in specials if any(s != t and s in t for t in specials)):
        return ("try longer special tokens first: one may contain another",
                "先试更长的特殊词元：一个特殊词元可能包含另一个")
    return ("ordinary text at even positions (empty strings included), special tokens at odd "
            "ones",
            "普通文本放在偶数位置（空字符串也算），特殊词元放在奇数位置")


def file_cases() -> list[tuple[dict, list]]:
    """(vocab, merges) of the checker tokenizers, and a hand-made one full of awkward bytes."""
    odd = {i: bytes([i]) for i in range(256)} | {
        256: b"<|endoftext|>",
        257: b" \n",
        258: b" \n\x00",
        259: b"\xff\xfe",
        260: b'"\\',
    }
    cases = [(odd, [(b" ", b"\n"), (b" \n", b"\x00"), (b"\xff", b"\xfe"), (b'"', b"\\")])]
    trained = checker_tokenizers()[1]  # GPT-2's own files come in check_load_gpt2
    return cases + [(trained.vocab, trained.merges)]


def file_hint(error: Exception, side: str) -> Hint:
    """What a failure to read or write GPT-2's files says about the answer (``side`` is
    "write" or "read")."""
    if "not an id" in str(error):
        return ("vocab.json maps each spelled token to its id, {token: id}, not {id: token}",
                "vocab.json 把每个拼写好的词元映射到它的 id，是 {token: id}，而不是 {id: token}")
    if "byte-to-unicode" in str(error):
        return ("spell every byte with bytes_to_unicode (a space is 'Ġ'), as encoder.json does",
                "要像 encoder.json 那样，用 bytes_to_unicode 拼写每一个字节（空格写作 'Ġ'）")
    if isinstance(error, UnicodeDecodeError):
        return (f"{side} the files as UTF-8 text (encoding='utf-8')",
                f"{'写' if side == 'write' else '读'}文件时要当作 UTF-8 文本"
                "（encoding='utf-8'）")
    if isinstance(error, json.JSONDecodeError):
        return ("vocab.json must be one JSON object (json.dump the dict {spelled token: id})",
                "vocab.json 必须是一个 JSON 对象（用 json.dump 写出 {拼写好的词元: id} 这个 dict）")
    return f"{error!r}", f"{error!r}"


def check_save_gpt2(candidate: Callable[..., Any]) -> bool:
    """``save_gpt2``: what it writes reads back with the package's readers."""
    for vocab, merges in file_cases():
        with tempfile.TemporaryDirectory() as folder:
            paths = Path(folder) / "vocab.json", Path(folder) / "merges.txt"
            try:
                candidate(dict(vocab), list(merges), *paths)
                first_line = paths[1].read_text(encoding="utf-8").split("\n")[0]
                vocab_back, merges_back = read_vocab_json(paths[0]), read_merges_txt(paths[1])
            except NotImplementedError:
                raise
            except Exception as error:
                why = file_hint(error, "write")
                return not_yet("reading what save_gpt2 wrote failed: " + why[0],
                               zh="读取 save_gpt2 写出的文件失败了：" + why[1])
        if first_line != "#version: 0.2":
            return not_yet(
                f"merges.txt starts with {first_line!r}; GPT-2's files start with '#version: 0.2'",
                zh=f"merges.txt 的第一行是 {first_line!r}；GPT-2 的文件以 '#version: 0.2' 开头")
        if vocab_back != vocab:
            wrong = next(i for i in sorted(vocab) if vocab_back.get(i) != vocab[i])
            return not_yet(
                f"vocab.json gives id {wrong} the bytes {vocab_back.get(wrong)!r}, not "
                f"{vocab[wrong]!r}; write {{spelled token: id}}, spelling every byte",
                zh=f"vocab.json 里 id {wrong} 对应的字节是 {vocab_back.get(wrong)!r}，而不是 "
                   f"{vocab[wrong]!r}；要写成 {{拼写好的词元: id}}，每个字节都要拼写")
        if merges_back != merges:
            return not_yet(
                f"merges.txt reads back as {merges_back[:3]}..., not {merges[:3]}...; "
                "one merge per line, both tokens spelled, one space between",
                zh=f"merges.txt 读回来是 {merges_back[:3]}...，而不是 {merges[:3]}...；每行一条"
                   "合并规则，两个词元都要拼写，中间隔一个空格")
    return correct()


def check_load_gpt2(candidate: Callable[..., Any]) -> bool:
    """``load_gpt2``: the package's files and OpenAI's own GPT-2 files read right."""
    cases = [(p, None) for p in file_cases()] + [
        (None, (openai_file("encoder.json"), openai_file("vocab.bpe")))
    ]
    for tables, gpt2_files in cases:
        with tempfile.TemporaryDirectory() as folder:
            paths = gpt2_files or (Path(folder) / "vocab.json", Path(folder) / "merges.txt")
            if tables:
                write_vocab_json(paths[0], tables[0])
                write_merges_txt(paths[1], tables[1])
            expected = read_vocab_json(paths[0]), read_merges_txt(paths[1])
            try:
                got = candidate(*paths)
            except NotImplementedError:
                raise
            except Exception as error:
                why = file_hint(error, "read")
                return not_yet(f"load_gpt2 on {paths[0].name} raised: " + why[0],
                               zh=f"load_gpt2 读 {paths[0].name} 时抛出了异常：" + why[1])
        name = paths[0].name
        if not (isinstance(got, tuple) and len(got) == 2):
            kind = type(got).__name__
            return not_yet(f"load_gpt2 returned {kind}; return (vocab, merges)",
                           zh=f"load_gpt2 返回了 {kind}；要返回 (vocab, merges)")
        if got[0] != expected[0]:
            first_two = dict(list(expected[0].items())[:2])
            return not_yet(f"{name}: the vocab should map ids to bytes, like {first_two}",
                           zh=f"{name}：词表应该把 id 映射到字节，例如 {first_two}")
        if got[1] != expected[1]:
            skipped = got[1][1:] == expected[1]
            return not_yet(
                f"{paths[1].name}: merges start {got[1][:2]}, expected {expected[1][:2]}"
                + ("; the '#version' line is not a merge" if skipped else ""),
                zh=f"{paths[1].name}：合并规则开头是 {got[1][:2]}，应该是 {expected[1][:2]}"
                   + ("；'#version' 这一行不是合并规则" if skipped else ""))
    return correct()


def class_texts() -> list[str]:
    """Texts for the class: special tokens, look-alikes, several scripts, real prose."""
    texts = [
        "Hello, world!",
        "",
        "a<|endoftext|>b<|endoftext|><|endoftext|>c<pad>",
        "we'll  see\r\n\n  x",
        "naïve 奶奶 🙂 हर सुबह",
        "<|endoftext",
        "3.14159, 2**64",
        course_text("dog_park.txt")[:1500],
    ]
    parts = ["the", " cat", "'s", " ", "\n", "é", "🙂", "12", "<|endoftext|>", "<pad>", "<|", "!"]
    rng = random.Random(11)
    return texts + ["".join(rng.choices(parts, k=rng.randint(1, 12))) for _ in range(60)]


def id_lists(tokenizer: Any) -> list[list[int]]:
    """Random lists of ids, many ending inside a character."""
    rng = random.Random(12)
    return [[]] + [rng.choices(sorted(tokenizer.vocab), k=rng.randint(1, 6)) for _ in range(60)]


def encode_hint(mine: Any, reference: Any, text: str) -> Hint:
    """Why `mine` encodes `text` differently from the package: special tokens, pattern, or
    pieces.
    """
    got, expected = mine.encode(text)[:12], reference.encode(text)[:12]
    hint = f"encode({text[:60]!r}) gave {got}, expected {expected}"
    zh = f"encode({text[:60]!r}) 得到的是 {got}，应该是 {expected}"
    plain = [t for t in class_texts() if not any(s in t for s in reference.special_tokens)]
    if all(mine.encode(t) == reference.encode(t) for t in plain):
        return (hint + "; cut out the special tokens first (pieces.split_on_specials) and give "
                "each its id",
                zh + "；要先把特殊词元切出来（pieces.split_on_specials），再给每个特殊词元"
                "它自己的 id")
    if reference.pattern != GPT2_PATTERN:
        return (hint + "; this tokenizer pretokenizes with GPT-4's pattern: use self.pattern",
                zh + "；这个分词器用 GPT-4 的正则模式做预分词：要用 self.pattern")
    return (hint + "; encode each pretoken's UTF-8 bytes with pieces.encode_pretoken, then "
            "self.id_of",
            zh + "；每个预分词片段的 UTF-8 字节要用 pieces.encode_pretoken 编码，再查 self.id_of")


def check_my_tokenizer(candidate: Callable[..., Any]) -> bool:
    """``MyTokenizer``: the same ids as the package's Tokenizer, and the same decoded text."""
    for reference in checker_tokenizers():
        specials = list(reference.special_tokens)
        try:
            mine = candidate(reference.vocab, reference.merges, specials, reference.pattern)
            for text in class_texts():
                if mine.encode(text) != reference.encode(text):
                    return say(encode_hint(mine, reference, text))
            for ids in id_lists(reference):
                got, expected = mine.decode(ids), reference.decode(ids)
                if got != expected:
                    return not_yet(f"decode({ids}) gave {got!r}, expected {expected!r}",
                                   zh=f"decode({ids}) 得到的是 {got!r}，应该是 {expected!r}")
        except NotImplementedError:
            raise
        except UnicodeDecodeError as error:
            return not_yet(
                f"decode raised {error!r}: ids can end inside a character; use errors='replace'",
                zh=f"decode 抛出了 {error!r}：id 序列可能在一个字符的中间结束；要用 "
                   "errors='replace'")
        except Exception as error:
            return not_yet(f"raised {error!r}", zh=f"抛出了 {error!r}")
    return correct()
