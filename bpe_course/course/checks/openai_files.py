"""The checks of notebook 05 (OpenAI's files): spelling a token as GPT-2's files do, a byte's
id in GPT-2, and writing a ``.tiktoken`` file for a vocabulary of our own.

The expected answers come from OpenAI's files themselves (``encoder.json``) and from the
package's GPT-2 spelling (:mod:`bpe_course.formats.gpt2`), never from the notebook's
solutions. Every hint is written in English and in Chinese (``zh=``), for the Chinese edition.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

from ...formats.gpt2 import bytes_to_unicode, str_to_token, token_to_str
from ...openai import openai_file
from ...pretokens import count_pretokens
from ...train import train_from_counts
from ..data import course_text
from .harness import Hint, attempt, correct, not_yet, say, short


def spell_cases() -> list[tuple[bytes, str]]:
    """Every token of encoder.json (bytes, its spelling), then 300 random byte strings."""
    encoder = json.loads(openai_file("encoder.json").read_text(encoding="utf-8"))
    cases = [(str_to_token(token), token) for token in encoder]
    rng = random.Random(5)
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 6)))
        cases.append((data, token_to_str(data)))
    return cases


def check_spell(candidate: Callable[..., Any]) -> bool:
    """``spell(data)``: one character per byte, as encoder.json writes tokens."""
    for data, expected in spell_cases():
        got, error = attempt(candidate, data)
        if error:
            return not_yet(f"spell({data!r}) raised {error}; spell each byte on its own",
                           zh=f"spell({data!r}) 抛出了 {error}；要把每个字节单独拼写出来")
        if got == expected:
            continue
        hint = f"spell({data!r}) gave {short(got)}, expected {expected!r}"
        zh = f"spell({data!r}) 得到的是 {short(got)}，应该是 {expected!r}"
        if got is None:
            return not_yet(hint + ": a `return` is missing", zh=zh + "：漏了 `return`")
        if not isinstance(got, str):
            return not_yet(hint + ": return a str", zh=zh + "：要返回 str")
        if len(got) != len(data):
            return not_yet(hint + ": one character per byte (do not decode UTF-8 first)",
                           zh=zh + "：每个字节对应一个字符（不要先按 UTF-8 解码）")
        if "\ufffd" in got:
            return not_yet(
                hint + ": a token need not be valid UTF-8 (b'\\xa1' is not): spell each byte",
                zh=zh + "：词元不一定是合法的 UTF-8（b'\\xa1' 就不是），要逐个字节拼写")
        i = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        hint += f": byte {data[i]} is written {expected[i]!r} (U+{ord(expected[i]):04X})"
        zh += f"：字节 {data[i]} 写作 {expected[i]!r}（U+{ord(expected[i]):04X}）"
        if got[i] == chr(data[i]):
            hint += (
                ", not itself: invisible bytes are shifted, so look each byte up in byte_to_char"
            )
            zh += ("，而不是它自己：看不见的字节被挪到了别的字符上，所以每个字节都要去 "
                   "byte_to_char 里查")
        return not_yet(hint, zh=zh)
    return correct()


def check_byte_id(candidate: Callable[..., Any]) -> bool:
    """``byte_id(byte)``: GPT-2's id of each one-byte token, tried in id order."""
    encoder = json.loads(openai_file("encoder.json").read_text(encoding="utf-8"))
    table = bytes_to_unicode()
    for byte in sorted(range(256), key=lambda byte: encoder[table[byte]]):  # in id order
        expected = encoder[table[byte]]
        got, error = attempt(candidate, byte)
        if error:
            return not_yet(f"byte_id({byte}) raised {error}", zh=f"byte_id({byte}) 抛出了 {error}")
        if got == expected:
            continue
        hint = f"byte_id({byte}) gave {got!r}, but byte {byte} ({bytes([byte])!r}) is id {expected}"
        zh = (f"byte_id({byte}) 得到的是 {got!r}，但字节 {byte}（{bytes([byte])!r}）的 id 是 "
              f"{expected}")
        if got is None:
            hint += ": a `return` is missing"
            zh += "：漏了 `return`"
        elif got == byte:
            hint += (": that is its value, the id our own tokenizers use; GPT-2's ids follow "
                     "byte_to_char's characters")
            zh += ("：这是字节本身的值，也就是我们自己的分词器用的 id；GPT-2 的 id 是按 "
                   "byte_to_char 里的字符排的")
        elif table[byte] == chr(byte):
            hint += (": the 188 bytes that stand for themselves get ids 0 to 187, in byte "
                     "order, without gaps")
            zh += "：用自身字符表示的那 188 个字节按字节顺序占 id 0 到 187，中间没有空缺"
        else:
            hint += ": the 68 shifted bytes come after them, ids 188 to 255, in byte order"
            zh += "：被挪位的 68 个字节排在它们后面，按字节顺序占 id 188 到 255"
        return not_yet(hint, zh=zh)
    return correct()


# tiktoken_file: a vocabulary of our own, special tokens in it ------------------------------


def tiktoken_cases() -> list[tuple[dict[int, bytes], list[str]]]:
    """(vocab, special tokens): a trained vocabulary whose special tokens sit at ids 256 and
    257, listed in a shuffled order, and a hand-made one whose tokens need '+' and '/'."""
    specials = ["<|endoftext|>", "<|im_end|>"]
    counts = count_pretokens(course_text("dog_park.txt"), specials)
    vocab, _ = train_from_counts(counts, 400, specials)
    items = list(vocab.items())
    random.Random(1).shuffle(items)
    odd = {i: bytes([i]) for i in range(256)} | {
        256: b"<|endoftext|>",
        257: b"\xfb\xff",
        258: b"\xff\xfe\xfd",
        259: b" \n",
    }
    return [(dict(items), specials), (odd, ["<|endoftext|>"]), (odd, [])]


def tiktoken_text(vocab: dict[int, bytes], specials: list[str]) -> str:
    """The file's text: one line per ordinary token, in id order, base64 and the id."""
    special_bytes = {token.encode("utf-8") for token in specials}
    return "".join(
        f"{base64.b64encode(token).decode('ascii')} {token_id}\n"
        for token_id, token in sorted(vocab.items())
        if token not in special_bytes
    )


def tiktoken_hint(got: str, expected: str, vocab: dict[int, bytes], specials: list[str]) -> Hint:
    """Why the text differs, from the first line that differs."""
    got_lines, wanted = got.split("\n"), expected.split("\n")
    at = next((i for i, (a, b) in enumerate(zip(got_lines, wanted)) if a != b), None)
    if at is not None:
        where = (f"line {at + 1} is {short(got_lines[at], 60)}, expected {wanted[at]!r}",
                 f"第 {at + 1} 行是 {short(got_lines[at], 60)}，应该是 {wanted[at]!r}")
    else:
        where = (f"{len(got_lines)} lines, expected {len(wanted)}",
                 f"共 {len(got_lines)} 行，应该是 {len(wanted)} 行")
    special_lines = {base64.b64encode(s.encode("utf-8")).decode("ascii") for s in specials}
    firsts = [line.split(" ")[0] for line in got_lines]
    ranks = [line.rsplit(" ", 1)[-1] for line in got.splitlines()]
    if got.startswith("b'") or "b'" in got:
        why = ("base64.b64encode returns bytes; .decode('ascii') them before formatting",
               "base64.b64encode 返回的是 bytes，先 .decode('ascii') 再拼进字符串")
    elif any(first in special_lines for first in firsts):
        why = ("special tokens are not in a .tiktoken file (tiktoken is given them "
               "separately, as cl100k_base's are): leave them out",
               ".tiktoken 文件里没有特殊词元（它们是另外交给 tiktoken 的，cl100k_base 的特殊"
               "词元就是这样）：把它们去掉")
    elif got.rstrip("\n") == expected.rstrip("\n"):
        why = ("end every line with a newline, the last one too, as OpenAI's files do",
               "每一行都要以换行符结尾，最后一行也不例外，OpenAI 的文件就是这样")
    elif got.translate(str.maketrans("-_", "+/")) == expected:
        why = ("the file uses standard base64 (+ and /), not the URL-safe alphabet (- and _)",
               "文件用的是标准 base64（+ 和 /），不是给网址用的那套字母表（- 和 _）")
    elif sorted(got.splitlines()) == sorted(expected.splitlines()):
        why = ("list the tokens in rank order (by id), whatever order the dict is in",
               "不管 dict 里是什么顺序，都要按合并次序（即 id）列出词元")
    elif ranks == [str(i) for i in range(len(ranks))] and len(ranks) < len(vocab):
        why = ("the rank is the token's id, not its line number; after a special token "
               "the ids have a gap, and the file keeps it",
               "每行的数字是词元的 id，不是行号；特殊词元之后 id 会空出一段，文件里要保留这个空缺")
    else:
        why = ("each line is the token in base64, one space, its id",
               "每一行应是词元的 base64 编码，接一个空格，再接它的 id")
    return f"{where[0]}: {why[0]}", f"{where[1]}：{why[1]}"


def check_tiktoken_file(candidate: Callable[..., Any]) -> bool:
    """``tiktoken_file(vocab, special_tokens)``: the text of a .tiktoken file."""
    for vocab, specials in tiktoken_cases():
        call = f"tiktoken_file(<{len(vocab)} tokens>, {specials})"
        zh_call = f"tiktoken_file(<{len(vocab)} 个词元>, {specials})"
        got, error = attempt(candidate, dict(vocab), list(specials))
        if error:
            return not_yet(f"{call} raised {error}", zh=f"{zh_call} 抛出了 {error}")
        expected = tiktoken_text(vocab, specials)
        if got == expected:
            continue
        if got is None:
            return not_yet(f"{call} returned None: a `return` is missing; return the file's text",
                           zh=f"{zh_call} 返回了 None：漏了 `return`；要返回文件的文本")
        if isinstance(got, bytes):
            return not_yet(
                f"{call} returned bytes; return the text (a str), as it would be written",
                zh=f"{zh_call} 返回了 bytes；要返回写进文件的那段文本（str）")
        if not isinstance(got, str):
            return not_yet(f"{call} returned {type(got).__name__}; return the file's text (a str)",
                           zh=f"{zh_call} 返回了 {type(got).__name__}；要返回文件的文本（str）")
        hint = tiktoken_hint(got, expected, vocab, specials)
        return say((f"{call}: {hint[0]}", f"{zh_call}：{hint[1]}"))
    return correct()
